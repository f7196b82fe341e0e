"""SpanSVM and RMSVM: the gradient baselines of the RBSVM paper (Chapelle et al. 2002).

Both learn ``theta = (log sigma, log C)`` of the RBF L2-SVM (RBSVM eq. (5)-(7)) by
minimising a smooth estimate of its generalisation error with the exact gradient, through the
optimiser RBSVM uses (:func:`svmtune.search.gradient.minimize_log_params`: L-BFGS-B in the box
``log2 sigma, log2 C in [-8, 8]``, warm-started support sets, data-driven start):

* :class:`SpanSVM` (``method="span"``) minimises the smoothed span estimate of the
  leave-one-out error (:func:`svmtune.loo.span.smoothed_span`; RBSVM §II-D, eq. (14));
* :class:`RMSVM` (``method="radius_margin"``) minimises the radius-margin bound
  ``T = R^2 ||w||^2`` (:func:`svmtune.loo.radius_margin.radius_margin`; RBSVM §II-B, eq. (8)).

Chapelle, Vapnik, Bousquet & Mukherjee, "Choosing multiple parameters for support vector
machines", Machine Learning 46 (2002).  Multiclass problems are decomposed one-vs-rest
(:func:`svmtune.methods.base.ovr_tasks`) and the binary criteria summed, so that one
``(sigma, C)`` serves all classes, as in RBSVM.  Each binary criterion counts that task's
errors, not those of the one-vs-rest arg-max, so with many small classes a model that
answers "rest" everywhere scores about its class's share per task and can win: on 20
classes of 6 samples (5 Gaussian features, class means 0.5 apart along the diagonal)
``method="span"`` chose sigma = 26 on standardised features and reached 10 % test accuracy
against 30 % for ``SVC()`` and 31 % for RBSVM, whose cross-entropy scores the outputs'
values; with 210 samples per class (penbased, 10 classes) it was as good as the others.
"""

from __future__ import annotations

import warnings
from numbers import Real
from typing import Any

import numpy as np

from svmtune._warnings import user_stacklevel
from svmtune.kernels import rbf_dlogsigma, rbf_from_sqdist, rbf_params
from svmtune.loo.radius_margin import _radius_margin
from svmtune.loo.span import SPAN_A, SPAN_B, SPAN_ETA, _smoothed_span, span_rule_error_ovr
from svmtune.methods._constraints import SEARCH_CONSTRAINTS, Interval
from svmtune.methods.base import Selection, SelectionContext, Selector, TrainingData, ovr_tasks
from svmtune.search.gradient import minimize_log_params
from svmtune.search.start import exact_search_start
from svmtune.svm import DualSolution, _fit_l2_svm

__all__ = ["SpanSVM", "RMSVM", "radius_margin_step", "radius_margin_summary"]


def radius_margin_step(out) -> tuple[float, np.ndarray, dict[str, Any]]:
    """``(log T, dT / T, state entries)`` of one radius-margin evaluation.

    ``out`` is the result of :func:`svmtune.loo.radius_margin.radius_margin` or of its low-rank
    twin :func:`svmtune.loo.radius_margin_lowrank.lowrank_radius_margin_objective`; RMSVM and
    RMSVMLowRank both hand the optimiser ``log T``.  The state entries are the sphere's support
    (warm start of the next ball) and ``T``, ``R2``, ``w2 = sum_k ||w_k||^2``, ``n_ball``.
    """
    extra = {
        "ball_support": out.ball.support,
        "T": out.value,
        "R2": out.R2,
        "w2": float(out.w2.sum()),
        "n_ball": int(out.ball.support.sum()),
    }
    # T > 0: the ridge 1/(C w) keeps the points apart in feature space (R > 0), and an SVM with
    # both classes has ||w|| > 0
    T = max(out.value, np.finfo(float).tiny)
    return float(np.log(T)), out.grad / T, extra


def radius_margin_summary(
    state: dict[str, Any], n: int, sample_weight: np.ndarray | None = None
) -> tuple[float, dict[str, Any]]:
    """``(T, info)`` at the chosen point from its :func:`radius_margin_step` state: ``info``
    holds ``R2``, ``w2``, ``n_ball``, ``bound = min(1, T / n)`` and ``weight_spread`` (the
    largest over the smallest positive sample weight, 1 without weights).

    Warns when the positive weights are unequal.  The bound is that of the hard-margin SVM on
    ``K + diag(1/(C w_i))``, the feature space where low-weight points lie far out along their
    own axes: the radius grows with the spread of ``1/(C w_i)``, which vanishes as ``C``
    grows, so unequal weights can pull the search to large ``C`` and, there, to the narrowest
    widths (a memorising model).  Chapelle et al. (2002) treat equal weights.  How far, on
    Gaussian data and bupa: ``benchmarks/rm_weight_spread.py``, ``docs/notes/radius_margin.md``.
    """
    T = float(state["T"])
    spread = 1.0
    if sample_weight is not None:
        pos = np.asarray(sample_weight, dtype=float)
        pos = pos[pos > 0]
        spread = float(pos.max() / pos.min())
    if spread > 1.0 + 1e-9:
        warnings.warn(
            f"the positive sample weights differ (by a factor of {spread:.3g}, class weights "
            "included): the radius-margin bound is taken on K + diag(1/(C w_i)), where "
            "low-weight points lie far out, so unequal weights can pull it to large C and "
            "narrow widths (a model that memorises the training set); check the choice, or "
            "use method='rbsvm' or 'span'",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    info = {
        "R2": float(state["R2"]),
        "w2": float(state["w2"]),
        "n_ball": int(state["n_ball"]),
        "bound": float(min(1.0, T / n)),
        "weight_spread": spread,
    }
    return T, info


class _GradientBaseline(Selector):
    """Shared orchestration: fit the L2-SVMs at ``theta``, hand them to a criterion, optimise.

    The search options are those of :class:`svmtune.methods.rbsvm.RBSVM`, with the same
    defaults, so that the three gradient methods search the same box from the same start.

    Parameters
    ----------
    log2_sigma, log2_C : (lo, hi)
        Search box in log2 units (default ``(-8, 8)``, RBSVM §IV-A).
    start : {"median", "sqrt_d"} or (sigma, C) or dict
        Starting point: a rule for ``sigma0`` (:func:`svmtune.search.start.initial_sigma`,
        on the training points of positive weight) with ``C0`` below, or the point itself as
        a pair or ``{"sigma": .., "C": ..}``.
    C0 : float
        Starting ``C`` of the rule-based starts (default 1, i.e. ``log C = 0``, RBSVM
        Algorithm 1).
    restarts : int
        Extra starts drawn uniformly in the box with the selector's ``random_state``.
    jump_restarts : int
        Continuations across a jump of the criterion after a stalled line search (default 3;
        :func:`svmtune.search.gradient.minimize_log_params`).
    tol : float
        Stop when the relative decrease of the criterion per iteration is below ``tol``.
    max_iter : int
        L-BFGS-B iterations per start.
    max_eval : int, optional
        Criterion evaluations (= warm-started L2-SVM trainings) per start; default
        ``5 * max_iter``.
    """

    kernels = ("rbf",)
    held_out = "rows"  # leave-one-out closed forms and bounds
    _parameter_constraints = SEARCH_CONSTRAINTS

    def __init__(
        self,
        *,
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
        self._set_options(
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

    # --- to be provided by the subclasses -----------------------------------------------------
    def _criterion(
        self,
        K: np.ndarray,
        solutions: list[DualSolution],
        directions: list[np.ndarray],
        state: dict[str, Any] | None,
        sample_weight: np.ndarray | None,
    ) -> tuple[float, np.ndarray, dict[str, Any]]:
        raise NotImplementedError

    def _summary(
        self,
        K: np.ndarray,
        y: np.ndarray,
        state: dict[str, Any],
        sample_weight: np.ndarray | None,
    ) -> tuple[float | None, dict[str, Any], float | None]:
        """``(estimate, info, criterion)``; criterion None means the optimised value."""
        raise NotImplementedError

    # --- orchestration ------------------------------------------------------------------------
    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """See :meth:`svmtune.methods.base.Selector.run`."""
        X, y, sample_weight = data.X, data.y, data.sample_weight
        random_state = context.random_state
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        D2, theta0 = exact_search_start(
            X,
            self.start,
            self.C0,
            method=self.name,
            random_state=random_state,
            sample_weight=w,
            sqdist=data.sqdist,
        )
        return self._search(D2, theta0, y, w, random_state=random_state)

    def _search(self, D2, theta0, y, sample_weight=None, *, random_state=None):
        """The search of :meth:`run` from the squared distances ``D2`` of the training
        points and the start ``theta0 = (log sigma, log C)``."""
        y = np.asarray(y)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        tasks = ovr_tasks(y)

        def fun(theta: np.ndarray, state: dict[str, Any] | None):
            sigma, C = float(np.exp(theta[0])), float(np.exp(theta[1]))
            K = rbf_from_sqdist(D2, sigma)
            inits = state["supports"] if state is not None else [None] * len(tasks)
            sols = [_fit_l2_svm(K, t, C, w, init) for t, init in zip(tasks, inits)]

            # dK/dlog sigma only on the blocks the criterion reads (support sets), and
            # dK~/dlog C = -diag(1/(C w))
            def dK_block(I: np.ndarray) -> np.ndarray:
                ix = np.ix_(I, I)
                return rbf_dlogsigma(K[ix], D2[ix], sigma)

            directions = [dK_block, -sols[0].H_diag]
            value, grad, extra = self._criterion(K, sols, directions, state, w)
            used = np.zeros(len(y), dtype=bool)
            for s in sols:
                used |= s.support
            # one evaluation = one (one-vs-rest) L2-SVM training, counted as one fit as in
            # RBSVM and the CV baselines
            new_state = {
                "supports": [s.support.copy() for s in sols],
                "solutions": sols,
                "n_sv": int(used.sum()),
            }
            new_state.update(extra)
            return value, grad, new_state

        res = minimize_log_params(
            fun,
            theta0,
            bounds=[self.log2_sigma, self.log2_C],
            names=("sigma", "C"),
            tol=self.tol,
            max_iter=self.max_iter,
            max_eval=self.max_eval,
            restarts=self.restarts,
            jump_restarts=self.jump_restarts,
            random_state=random_state,
        )
        sigma, C = res.params["sigma"], res.params["C"]
        K = rbf_from_sqdist(D2, sigma)
        estimate, info, criterion = self._summary(K, y, res.state, w)
        info.update(n_support=int(res.state["n_sv"]), **res.diagnostics())
        return Selection(
            params=rbf_params(sigma, C),
            estimate=estimate,
            criterion=float(res.value) if criterion is None else criterion,
            n_svm_fits=int(res.n_fits),
            history=res.history,
            final_model="l2",
            info=info,
        )


#: the span constants of SpanSVM and its low-rank version (Chapelle et al. 2002)
SPAN_CONSTRAINTS = {
    "eta": [Interval(Real, 0.0, None, closed="left", note="span regulariser")],
    "A": [Interval(Real, 0.0, None, closed="neither", note="sigmoid slope")],
    "B": [Interval(Real, None, None, note="sigmoid offset")],
}


class SpanSVM(_GradientBaseline):
    """Smoothed span estimate minimised by gradient descent (Chapelle et al. 2002; "SpanSVM").

    The criterion is the smoothed span estimate of the LOO error of the L2-SVM, summed over
    one-vs-rest tasks (:func:`svmtune.loo.span.smoothed_span`): sigmoid
    ``Psi(x) = 1 / (1 + exp(-A x + B))`` in place of the step and the span regularised by
    ``D = diag(eta / alpha_p)``.  ``estimate`` is the plain (step-function, ``eta = 0``)
    span-rule estimate of the LOO error at the chosen point
    (:func:`svmtune.loo.span.span_rule_error_ovr`); ``criterion`` the smoothed value.

    Parameters
    ----------
    eta : float
        Span regulariser (default :data:`svmtune.loo.span.SPAN_ETA` = 0.1; 0 disables it).
    A, B : float
        Sigmoid slope and offset (defaults 5 and 0, Chapelle et al. 2002).
    **options
        The search options of :class:`_GradientBaseline` (bounds, start, restarts, ...).
    """

    name = "span"
    _parameter_constraints = SPAN_CONSTRAINTS

    def __init__(self, *, eta: float = SPAN_ETA, A: float = SPAN_A, B: float = SPAN_B, **options):
        super().__init__(**options)
        opts = self._validate_options(eta=eta, A=A, B=B)
        self.eta, self.A, self.B = (float(opts[k]) for k in ("eta", "A", "B"))

    def _criterion(self, K, solutions, directions, state, sample_weight):
        value, grad = 0.0, np.zeros(len(directions))
        for sol in solutions:
            out = _smoothed_span(
                K, sol, directions, eta=self.eta, A=self.A, B=self.B, sample_weight=sample_weight
            )
            value += out.value
            grad += out.grad
        return value, grad, {}

    def _summary(self, K, y, state, sample_weight):
        est = span_rule_error_ovr(state["solutions"], K, y, sample_weight)
        info = {"span_rule_error": est, "eta": self.eta, "A": self.A, "B": self.B}
        return est, info, None


class RMSVM(_GradientBaseline):
    """Radius-margin bound minimised by gradient descent (Chapelle et al. 2002; "RMSVM").

    The criterion is ``T = R^2 sum_k ||w_k||^2`` of the L2-SVM in the feature space of
    ``K + diag(1/(C w))`` (:func:`svmtune.loo.radius_margin.radius_margin`), its gradient by
    the envelope theorem.  The optimiser is handed ``log T`` (gradient ``dT / T``): the same
    minimiser, but a scale-free gradient, so that L-BFGS-B's first step does not jump to a
    corner of the box because ``T`` happens to be in the hundreds (RBSVM divides its
    objective by ``n`` for the same reason); the history's ``value`` is ``log T`` and its
    ``T`` column ``T``.

    ``T / n`` (RBSVM eq. (8)) bounds the LOO error of a binary SVM but is no estimate of it
    (it is often far above 1), so ``estimate`` is None; ``criterion`` is ``T`` at the chosen
    point and ``info`` holds ``R2``, ``w2`` (``sum_k ||w_k||^2``), ``n_ball`` (points on the
    sphere) and ``bound = min(1, T/n)``.

    Parameters
    ----------
    **options
        The search options of :class:`_GradientBaseline` (bounds, start, restarts, ...).
    """

    name = "radius_margin"

    def _criterion(self, K, solutions, directions, state, sample_weight):
        ball_init = state.get("ball_support") if state is not None else None
        return radius_margin_step(_radius_margin(K, solutions, directions, ball_init))

    def _summary(self, K, y, state, sample_weight):
        T, info = radius_margin_summary(state, len(y), sample_weight)
        return None, info, T
