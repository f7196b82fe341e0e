"""Landmark search shared by the low-rank selectors (RBSVM, Chapelle et al. 2002 on Nystroem).

The RBSVM, smoothed-span and radius-margin searches on a Nystroem kernel
(:class:`svmtune.methods.rbsvm_lowrank.RBSVMLowRank`,
:class:`svmtune.methods.span_lowrank.SpanSVMLowRank`,
:class:`svmtune.methods.radius_margin_lowrank.RMSVMLowRank`) differ only in the criterion;
their options, start rule, landmark/refresh loop and result are :class:`LowRankSearch`:

* rank rule: pivoted Cholesky of the RBF kernel at the start width until the trace residual is
  at most ``rank_tol * n`` or ``rank`` landmarks
  (:func:`svmtune.lowrank.pivoted_cholesky_landmarks`);
* the landmarks follow the search to narrower widths: while fewer than ``rank`` landmarks are
  in use, an evaluation whose trace residual *at its own width* exceeds
  ``REFRESH_FACTOR * rank_tol`` (twice the rule) ends the stage, the landmarks are re-chosen
  at that width, but at most a factor 2 below the narrower of their width and the best
  point's (at least as many landmarks as before), and the search goes on from the best point
  so far.  A fixed landmark set chosen at a wide width makes the Nystroem kernel coarse at
  narrower ones, and the criteria of the coarse kernel can keep the search away from them
  (the radius-margin bound on skin_nonskin: ``T`` overstated below the start width);
* if the learned width ends more than a factor 2 from the width the landmarks were chosen at,
  the landmarks are re-chosen at the learned width, at least as many as before, and the
  search continues from there;
* both kinds of re-choice together happen ``refresh`` times at most;
* the median-heuristic start uses a random subsample of ``start_sample`` points
  (``random_state``), since the full distance matrix is ``n x n``;
* a scipy sparse ``X`` is never densified: every squared distance (the subsample's, the
  pivoted-Cholesky columns, points to landmarks) comes from sparse dot products,
  ``||x||^2 + ||l||^2 - 2 x.l`` (:func:`svmtune.kernels.sparse_squared_distances`), and the
  rest works on the ``n x m`` factor and distances alone.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_random_state

from svmtune.kernels import _squared_distances, rbf_params, squared_distances
from svmtune.lowrank import pivoted_cholesky_landmarks
from svmtune.lowrank._nystroem import check_landmark_distances
from svmtune.lowrank._solver import LowRankInputs
from svmtune.methods._constraints import SEARCH_CONSTRAINTS, IntegerLike, Interval, Options
from svmtune.methods.base import Selection, SelectionContext, Selector, TrainingData, ovr_tasks
from svmtune.search.gradient import GradientSearchResult, minimize_log_params
from svmtune.search.start import initial_theta

__all__ = ["LowRankSearch", "landmark_search", "landmarks", "lowrank_start"]

_LOG2 = float(np.log(2.0))

#: an evaluated width whose trace residual / n exceeds ``REFRESH_FACTOR * rank_tol`` re-chooses
#: the landmarks there (the rule leaves at most ``rank_tol`` at the width it chose them at, so
#: the factor keeps small moves of sigma from re-choosing them at every step)
REFRESH_FACTOR = 2.0

#: the smallest L2-SVM ridge ``1 / (C w)`` a low-rank search is taken to resolve when its
#: ``jitter`` is 0 (the default jitter's order): below it, a search that finds no finite
#: criterion is reported as caused by large sample weights
LARGE_WEIGHT_RIDGE = 1e-8


def lowrank_start(
    X: np.ndarray, start, C0: float, start_sample: int, random_state, sample_weight=None
) -> np.ndarray:
    """Starting ``theta = (log sigma0, log C0)``; the median rule on a random subsample.

    ``start`` is a rule of :func:`svmtune.search.start.initial_sigma` or a ``(sigma, C)``
    pair; the median heuristic uses at most ``start_sample`` points of positive weight drawn
    with ``random_state`` (the full distance matrix is ``n x n``); a sparse ``X``'s
    subsample distances come from sparse dot products.
    """
    if isinstance(start, tuple):
        return initial_theta(None, start, C0, n_features=X.shape[1])
    if sample_weight is not None:
        X = X[np.asarray(sample_weight) > 0]
    rng = check_random_state(random_state)
    n = X.shape[0]
    sub = X if n <= start_sample else X[rng.choice(n, start_sample, replace=False)]
    D2 = squared_distances(sub) if start == "median" else None
    return initial_theta(D2, start, C0, n_features=X.shape[1], random_state=rng)


def _residual_guard(fun: Callable, limit: float) -> Callable:
    """``fun`` that asks :func:`minimize_log_params` to stop (``"stop_search"``) when an
    evaluation's ``rank_residual`` exceeds ``limit``, once an earlier one was finite."""
    seen_finite = False

    def guarded(theta, state):
        nonlocal seen_finite
        value, grad, new_state = fun(theta, state)
        resid = float(new_state.get("rank_residual", np.nan))
        if seen_finite and resid > limit:
            sigma = float(np.exp(theta[0]))
            new_state = {
                **new_state,
                "stop_search": (
                    f"trace residual / n {resid:.3g} > {limit:.3g} at sigma = {sigma:.4g}; "
                    "landmarks re-chosen"
                ),
            }
        elif np.isfinite(value):
            seen_finite = True
        return value, grad, new_state

    return guarded


def landmarks(X, sigma: float, *, rank: int, rank_tol: float, min_rank: int = 1):
    """``(indices, residual, D2_nm, D2_mm)``: the rank rule's landmarks at ``sigma``
    (:func:`svmtune.lowrank.pivoted_cholesky_landmarks`), their trace residual / n, and the
    squared distances of the points to them and among them, checked here once
    (:func:`svmtune.lowrank._nystroem.check_landmark_distances`) for all the evaluations on these
    landmarks, which take them unchecked (issue #55)."""
    idx, resid = pivoted_cholesky_landmarks(
        X, sigma, tol=rank_tol, max_rank=rank, min_rank=min_rank
    )
    # the rows are checked (the search's entry): no pairwise check of scikit-learn's
    D2_nm = squared_distances(X, X[idx]) if sp.issparse(X) else _squared_distances(X, X[idx])
    return (idx, resid, *check_landmark_distances(D2_nm, D2_nm[idx]))


def _stage(
    X,
    ref_sigma,
    theta,
    make_objective,
    *,
    rank,
    rank_tol,
    min_rank,
    may_refresh,
    restarts,
    rng,
    search_options,
):
    """One stage of :func:`landmark_search`: landmarks by pivoted Cholesky at ``ref_sigma``,
    then the gradient search from ``theta`` on them, stopped (when the landmarks may still be
    refreshed and are fewer than ``rank``) at a width whose trace residual exceeds
    ``REFRESH_FACTOR * rank_tol``.  Returns the landmark indices, their trace residual / n and
    the search's result."""
    idx, resid, D2_nm, D2_mm = landmarks(
        X, ref_sigma, rank=rank, rank_tol=rank_tol, min_rank=min_rank
    )
    fun = make_objective(D2_nm, D2_mm, int(idx.size))
    if may_refresh and idx.size < rank:
        fun = _residual_guard(fun, REFRESH_FACTOR * rank_tol)
    res = minimize_log_params(
        fun,
        theta,
        names=("sigma", "C"),
        restarts=restarts,
        random_state=rng,
        emit_warnings=False,  # the last stage's, by landmark_search
        **search_options,
    )
    return idx, resid, res


def _next_width(res: GradientSearchResult, ref_sigma: float, theta: np.ndarray) -> float:
    """The width of the next landmarks: where a stopped stage's evaluation needed finer ones,
    else the learned width."""
    if res.stopped is not None:  # an evaluated width needs finer landmarks
        # at most an octave below the landmarks' width or the best point's, whichever is
        # narrower: a line search's first trial point can lie at the bound (K ~ I there,
        # and pivoted Cholesky would pick arbitrary landmarks)
        floor = min(ref_sigma, float(np.exp(theta[0]))) / 2.0
        return max(float(res.history[-1]["sigma"]), floor)
    return float(np.exp(theta[0]))


def landmark_search(
    X: np.ndarray,
    theta0: np.ndarray,
    make_objective: Callable[[np.ndarray, np.ndarray, int], Callable],
    *,
    rank: int,
    rank_tol: float,
    refresh: int,
    random_state,
    **search_options,
) -> tuple[GradientSearchResult, dict[str, Any]]:
    """Minimise a criterion of the Nystroem kernel, re-choosing the landmarks if sigma moves.

    Landmarks by pivoted Cholesky (:func:`svmtune.lowrank.pivoted_cholesky_landmarks`) at the
    start width; :func:`svmtune.search.gradient.minimize_log_params` from ``theta0``.  The
    landmarks are re-chosen (at least as many as before; at most ``refresh`` times in all,
    extra random ``restarts`` only in the first stage that is not ended by a re-choice):

    * during a stage, at the width of an evaluation whose ``rank_residual`` exceeds
      ``REFRESH_FACTOR * rank_tol`` (but at most a factor 2 below the narrower of the
      landmarks' and the best point's width), if fewer than ``rank`` landmarks are in use;
      that evaluation is not used and the search continues from the best point before it;
    * after a stage, at the learned width if it is more than a factor 2 from the landmarks'.

    Parameters
    ----------
    X : ndarray (n, d)
    theta0 : (log sigma0, log C0)
    make_objective : callable
        ``make_objective(D2_nm, D2_mm, m)`` returns the objective
        ``fun(theta, state) -> (value, grad, new_state)`` of ``minimize_log_params`` on those
        landmarks; ``new_state["rank_residual"]`` is the landmarks' trace residual / n at the
        evaluated width (:attr:`svmtune.lowrank.NystroemFactor.trace_residual`).
    rank, rank_tol, refresh
        The rank rule and the number of landmark refreshes.
    random_state : RandomState or int
    **search_options
        ``bounds``, ``tol``, ``max_iter``, ``max_eval``, ``restarts``, ``jump_restarts`` of
        ``minimize_log_params``.

    Returns
    -------
    (result, extra)
        The last stage's :class:`svmtune.search.gradient.GradientSearchResult` (its
        ``history``, ``starts``, ``n_evals``, ``n_fits`` and ``n_iter`` over all the stages,
        each history record with its ``stage``) and ``{"rank", "rank_residual", "landmark_sigma",
        "n_refresh"}`` of the final landmarks.
    """
    rng = check_random_state(random_state)
    restarts = search_options.pop("restarts", 0)
    theta = np.asarray(theta0, dtype=float)
    stages: list[GradientSearchResult] = []
    n_refresh = 0
    ref_sigma = float(np.exp(theta[0]))
    min_rank = 1
    restarts_done = False
    while True:
        idx, resid, res = _stage(
            X,
            ref_sigma,
            theta,
            make_objective,
            rank=rank,
            rank_tol=rank_tol,
            min_rank=min_rank,
            may_refresh=n_refresh < refresh,
            restarts=0 if restarts_done else restarts,
            rng=rng,
            search_options=search_options,
        )
        for rec in res.history:
            rec["stage"] = n_refresh
        stages.append(res)
        theta = res.theta
        restarts_done = restarts_done or res.stopped is None
        new_sigma = _next_width(res, ref_sigma, theta)
        if res.stopped is None and (
            n_refresh >= refresh or abs(np.log(new_sigma / ref_sigma)) <= _LOG2
        ):
            break
        n_refresh += 1
        ref_sigma = new_sigma
        # a refresh keeps at least the previous rank: at a wider width the trace rule alone
        # can stop at a handful of landmarks, too coarse for the large-C L2-SVM found there
        min_rank = int(idx.size)
    # an earlier stage's bound hit or iteration limit says nothing of the point returned (the
    # next stage started from it on other landmarks), and each stage would repeat its warnings
    res.emit_warnings()
    res.history = [rec for r in stages for rec in r.history]
    res.starts = [start for r in stages for start in r.starts]
    res.n_fits, res.n_iter, res.n_evals = (
        sum(getattr(r, k) for r in stages) for k in ("n_fits", "n_iter", "n_evals")
    )
    extra = {
        "rank": int(idx.size),
        "rank_residual": float(resid),
        "landmark_sigma": ref_sigma,
        "n_refresh": n_refresh,
    }
    return res, extra


class LowRankSearch(Selector):
    """Base of the gradient searches on a Nystroem kernel (options, start, landmarks, result).

    Parameters
    ----------
    rank : int
        Largest number of landmarks ``m`` (default 500).
    rank_tol : float
        Relative trace residual at which pivoted Cholesky stops (default 0.01).
    jitter : float
        Added to the landmark kernel matrix before factorisation (default 1e-8).
    refresh : int
        How many times the landmarks may be re-chosen (default 8): at a narrower evaluated
        width where they leave more than ``REFRESH_FACTOR * rank_tol`` of the trace, or at a
        learned width more than a factor 2 from theirs (module docstring).
    start_sample : int
        Points used by the median-heuristic start (default 2000).
    final_model : {"l1", "l2"}
        Default "l1": libsvm's SVC.  "l2": the exact L2-SVM the criterion approximates
        (:class:`svmtune.estimators.L2SVC`; at large ``n`` it computes the kernel by columns,
        ``n`` values per support vector, so its cost grows with the support set).
    log2_sigma, log2_C, start, C0, restarts, jump_restarts, tol, max_iter, max_eval
        The search options of the exact gradient methods
        (:data:`svmtune.search.start.SEARCH_OPTION_RULES`), same defaults.

    Subclasses provide ``_evaluate`` (the criterion, its gradient, its result and any further
    search state on given landmarks) and ``_summary`` (estimate, criterion and method-specific
    info at the chosen point); ``info`` adds ``rank``, ``rank_residual`` (trace residual / n),
    ``landmark_sigma``, ``n_refresh``, ``rank_residual_at_choice`` (trace residual / n of the
    final landmarks at the chosen width), the start and the optimiser's diagnostics, and with
    ``groups`` (methods whose :meth:`holdout` is ``"groups"``) ``n_groups``.
    """

    kernels = ("rbf",)
    held_out = "rows"  # leave-one-out closed forms and bounds
    _parameter_constraints = {
        **SEARCH_CONSTRAINTS,
        "rank": [IntegerLike(2, note="number of landmarks")],
        "rank_tol": [Interval(Real, 0.0, 1.0, closed="neither", note="e.g. 0.01")],
        "jitter": [Interval(Real, 0.0, None, closed="left")],
        "refresh": [IntegerLike(0)],
        "start_sample": [IntegerLike(2)],
        "final_model": [Options("l1", "l2")],
    }

    def __init__(
        self,
        *,
        rank: int = 500,
        rank_tol: float = 1e-2,
        jitter: float = 1e-8,
        refresh: int = 8,
        start_sample: int = 2000,
        final_model: str = "l1",
        log2_sigma=(-8.0, 8.0),
        log2_C=(-8.0, 8.0),
        start="median",
        C0: float = 1.0,
        restarts: int = 0,
        jump_restarts: int = 3,
        tol: float = 1e-6,
        max_iter: int = 100,
        max_eval: int | None = None,
    ):
        opts = self._validate_options(
            log2_sigma=log2_sigma,
            log2_C=log2_C,
            start=start,
            C0=C0,
            restarts=restarts,
            jump_restarts=jump_restarts,
            tol=tol,
            max_iter=max_iter,
            max_eval=max_eval,
        )
        opts.update(
            self._validate_options(
                rank=rank,
                rank_tol=rank_tol,
                jitter=jitter,
                refresh=refresh,
                start_sample=start_sample,
                final_model=final_model,
            )
        )
        opts["rank_tol"], opts["jitter"] = float(opts["rank_tol"]), float(opts["jitter"])
        for key, value in opts.items():
            setattr(self, key, value)

    def _evaluate(
        self, D2_nm, D2_mm, tasks, theta, sample_weight, state
    ) -> tuple[float, np.ndarray, Any, dict[str, Any]]:
        """``(value, grad, obj, extra)`` on the landmarks ``D2_nm``, ``D2_mm``, warm-started
        from ``state`` (``state["supports"]``: the previous support set of every task; None
        on a first call).  ``obj`` is the criterion's result (``supports``, ``n_support``,
        ``rank_residual``); ``extra`` holds further state entries of the method.  A method
        whose :meth:`holdout` is ``"groups"`` also takes a keyword ``codes``
        (:meth:`_group_codes`).  The inputs are those :meth:`_prepare` and
        :func:`landmarks` checked: the criteria's unchecked kernels take them."""
        raise NotImplementedError

    @staticmethod
    def _inputs(D2_nm, D2_mm, tasks, theta, sample_weight, state) -> LowRankInputs:
        """The criteria's checked inputs at ``theta``
        (:class:`svmtune.lowrank._solver.LowRankInputs`): the landmarks' distances of
        :func:`landmarks`, the ``tasks`` and ``sample_weight`` of :meth:`_prepare`, and the
        warm starts of ``state`` (the previous evaluation's support
        masks; none on a first call), which the unchecked kernels take (issue #55)."""
        init = [None] * len(tasks) if state is None else state["supports"]
        return LowRankInputs(D2_nm, D2_mm, tasks, theta, sample_weight, init)

    def _summary(self, y, tasks, state, sample_weight) -> tuple[float | None, float, dict]:
        """``(estimate, criterion, method-specific info)`` from the chosen point's state."""
        raise NotImplementedError

    def _explain_weight_breakdown(self, sw: np.ndarray | None, exc: BaseException) -> None:
        """Raise a ``ValueError`` naming ``sample_weight`` when the search broke down
        (``exc``: no finite criterion anywhere, or a failed factorisation) where large
        weights are the likely cause: the L2-SVM's ridge ``1 / (C w)`` fell below the
        Nystroem jitter (:data:`LARGE_WEIGHT_RIDGE` when the jitter is 0) somewhere in the C
        range, so the low-rank system is singular to float64.  Returns otherwise."""
        if sw is None:
            return
        c_max = 2.0 ** self.log2_C[1]
        reach = float(np.max(sw)) * c_max
        if reach * max(self.jitter, LARGE_WEIGHT_RIDGE) < 1.0:
            return
        raise ValueError(
            f"method {self.name!r} found no finite criterion ({type(exc).__name__}): "
            "sample_weight "
            f"up to {float(np.max(sw)):.3g} times C up to {c_max:.3g} (log2_C upper bound "
            f"{self.log2_C[1]:g}) gives C * sample_weight up to {reach:.3g}, whose ridge "
            f"1 / (C w) is below the Nystroem kernel's resolution "
            f"({max(self.jitter, LARGE_WEIGHT_RIDGE):g}), so the low-rank L2-SVM is singular. "
            "Only C * sample_weight matters: divide sample_weight by its mean (or another "
            "large constant), lower log2_C, or use the exact method (without '_lowrank')"
        ) from None

    def _group_codes(self, groups: np.ndarray) -> np.ndarray:
        """The group codes the criterion takes at each evaluation, encoded once by
        :meth:`_prepare`: methods whose :meth:`holdout` is ``"groups"`` implement it."""
        raise NotImplementedError(f"method {self.name!r} takes no groups")

    def _prepare(self, X, y, sample_weight, groups):
        """``(X, y, sw, tasks, by_group)`` of the search: a sparse ``X`` stays sparse (the
        landmarks, the factor's distances and the start's subsample come from sparse dot
        products, :func:`svmtune.kernels.sparse_squared_distances`), and the rows of weight 0
        are dropped after the tasks are taken.

        The inputs come checked (:meth:`run`'s contract: the tuner's door or
        :meth:`~svmtune.methods.base.Selector.select`); this builds what the criteria's
        unchecked kernels take at each evaluation (issue #55): ``tasks`` float {-1, +1}
        vectors (:func:`svmtune._labels.ovr_tasks`) and ``by_group`` ``{"codes": ...}``
        (:meth:`_group_codes`) with ``groups``."""
        sw = sample_weight
        tasks = ovr_tasks(y)
        if sw is not None and not np.all(sw > 0):
            # a sample of weight 0 enters no fit and no criterion, and must not be a landmark
            # nor count in the trace residual of the rank rule and the refresh test either:
            # the search runs on the samples of positive weight, as if the others were removed
            # (the tasks are taken before, so a class of weight 0 keeps its task)
            keep = sw > 0
            X, y, sw = X[keep], y[keep], sw[keep]
            tasks = [t[keep] for t in tasks]
            groups = None if groups is None else np.asarray(groups)[keep]
        by_group = {} if groups is None else {"codes": self._group_codes(groups)}
        return X, y, sw, tasks, by_group

    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """See :meth:`svmtune.methods.base.Selector.run`."""
        X, y, sample_weight, groups = data.X, data.y, data.sample_weight, data.groups
        random_state = context.random_state
        X, y, sw, tasks, by_group = self._prepare(X, y, sample_weight, groups)
        codes = by_group.get("codes")
        rng = check_random_state(random_state)
        theta0 = lowrank_start(X, self.start, self.C0, self.start_sample, rng, sw)

        def make_objective(D2_nm, D2_mm, m):
            def fun(theta, state):
                value, grad, obj, extra = self._evaluate(
                    D2_nm, D2_mm, tasks, theta, sw, state, **by_group
                )
                new_state = {
                    "obj": obj,
                    "supports": obj.supports,
                    "n_sv": obj.n_support,
                    "rank": m,
                    "rank_residual": obj.rank_residual,
                    **extra,
                }
                return value, grad, new_state

            return fun

        try:
            res, extra = landmark_search(
                X,
                theta0,
                make_objective,
                rank=self.rank,
                rank_tol=self.rank_tol,
                refresh=self.refresh,
                random_state=rng,
                bounds=[self.log2_sigma, self.log2_C],
                tol=self.tol,
                max_iter=self.max_iter,
                max_eval=self.max_eval,
                restarts=self.restarts,
                jump_restarts=self.jump_restarts,
            )
        except (FloatingPointError, np.linalg.LinAlgError) as exc:
            self._explain_weight_breakdown(sw, exc)
            raise
        estimate, criterion, info = self._summary(y, tasks, res.state, sw)
        info.update(
            {
                **({} if codes is None else {"n_groups": int(np.unique(codes).size)}),
                **extra,
                "rank_residual_at_choice": float(res.state["rank_residual"]),
                "n_support": int(res.state["n_sv"]),
                **res.diagnostics(),
            }
        )
        sigma, C = (float(v) for v in np.exp(res.theta))
        return Selection(
            params=rbf_params(sigma, C),
            estimate=estimate,
            criterion=criterion,
            n_svm_fits=int(res.n_fits),
            history=res.history,
            final_model=self.final_model,
            info=info,
        )
