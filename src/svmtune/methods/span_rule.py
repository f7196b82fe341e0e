"""SpanRule: hyperparameter selection for the (weighted) L1-SVM by the span-rule.

Weighted span Section 5 (eq. (38)): train one weighted SVM per candidate on all the
training data, predict its leave-one-out error by the span-rule ``t_l`` (Corollary 1,
eq. (37)) from closed-form spans (no re-training), and keep the candidate with the smallest
``t_l``.  Three searches:

``search="sigma_C"`` (default)
    RBF width and penalty on the log2 grid ``[-8, 8]^2`` (step 1, as the RBSVM paper's grid
    search): 289 candidates, one libsvm fit each, against 2890 fits for 10-fold grid search.
``search="class_weights"`` (Weighted span Experiment #1)
    ``C+`` / ``C-`` over ``log2 in [-6, 10]`` step 0.5 (33 x 33 = 1089 models) with a fixed
    RBF width: the paper's heuristic ``gamma = 1/d`` on features scaled to ``[0, 1]``
    (see :func:`unit_range_sigma` for how it is carried over to the standardised features
    the selector receives), or ``sigma=`` / ``unit_gamma=``.
``search="instance_weights"`` (Experiment #2; chosen automatically when ``scores`` is given)
    Per-sample penalties ``C_i`` from importance scores ``q_i`` through the sigmoid family of
    eq. (39) (:mod:`svmtune.loo.weights`), ``A = 1..10``, ``B = 0..0.9``,
    ``log2 C = -6..10`` (1700 models), same fixed RBF width.

``criterion`` picks the rule that ranks the candidates: the span-rule (default), the span
bound of Theorem 1, the xi-alpha bound of eq. (21), or K-fold cross-validation through
:func:`svmtune.search.cv.cv_errors` (the paper's K = 5) -- the four columns of the
paper's Tables 2-3.  Whatever ranks them, ``Selection.estimate`` is the span-rule
leave-one-out error of the chosen model.

Multiclass problems are decomposed one-vs-rest; the span gives every task's leave-one-out
decision value of each sample (Theorem 2, eq. (35)), so the span-rule estimate is the
leave-one-out error of the one-vs-rest classifier (arg-max of the decision values).

A sample of weight 0 (user's ``sample_weight``, or a candidate's instance weight) is left out
of every fit and of every span-rule and bound value: they equal those of the data with its
row removed (the fixed RBF width of the weight searches too).  Every sample of positive
weight counts once in the leave-one-out error rates.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from numbers import Real
from typing import Any

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from threadpoolctl import threadpool_limits

from svmtune._option_values import check_float_values, check_log2_range
from svmtune._progress import current as current_progress
from svmtune._progress import describe
from svmtune._validation import check_dense_memory
from svmtune._warnings import recorded_warnings, user_stacklevel
from svmtune.kernels import _squared_distances, gamma_from_sigma, rbf_from_sqdist, rbf_params
from svmtune.loo._spans import SpanCache
from svmtune.loo.span_bounds import enclosing_diameter, xi_alpha_radius2
from svmtune.loo.weights import (
    DEFAULT_FLOOR,
    PAPER_A_VALUES,
    PAPER_B_VALUES,
    check_scores,
)
from svmtune.methods._constraints import Check, IntegerLike, Interval, Options
from svmtune.methods._span_rule_fit import (
    candidate_weights,
    class_weight_params,
    evaluate_candidate,
    unit_range_sigma,
)
from svmtune.methods.base import Selection, SelectionContext, Selector, TrainingData, ovr_tasks
from svmtune.methods.baselines import EXPLICIT_GRID, grid_values, log2_grid
from svmtune.search.cv import cv_errors, make_folds

#: lower estimate of the peak memory of the selection in dense n x n float64 matrices, below
#: the measured peak (``docs/notes/cost_measurements.md``);
#: :func:`~svmtune._validation.check_dense_memory` refuses to start when these exceed the
#: memory available
DENSE_MATRICES = 4

__all__ = ["SpanRule", "unit_range_sigma", "class_weight_params"]

SEARCHES = ("sigma_C", "class_weights", "instance_weights")
CRITERIA = ("span_rule", "span_bound", "xi_alpha", "cv")


# ---------------------------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------------------------
def _check_callable(name: str, fn: Any) -> Callable[..., np.ndarray]:
    if not callable(fn):
        raise ValueError(f"{name} must be a callable weight_fn(q, A, B, C) -> C_i")
    return fn


def _log2_grid_values(name: str, value: Any) -> np.ndarray:
    """The grid ``2^lo .. 2^hi`` of a log2 range option ``(lo, hi[, step])``."""
    return log2_grid(*check_log2_range(name, value, with_step=True))


def _values(name: str, v) -> np.ndarray:
    what = "a non-empty sequence of finite numbers"
    a = check_float_values(name, v, what=what)
    if a.size == 0 or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be a non-empty sequence of finite numbers, got {v!r}")
    return a


# ---------------------------------------------------------------------------------------------
# Candidate evaluation (runs in joblib workers)
# ---------------------------------------------------------------------------------------------
def _evaluate_block(
    D2: np.ndarray,
    sigma: float,
    items: list[tuple[int, dict[str, Any]]],
    ctx: dict[str, Any],
    with_bound: bool,
) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """Evaluate candidates sharing one RBF width; returns records and the warning count."""
    with recorded_warnings() as caught:  # safe when blocks run in threads of one process
        K = rbf_from_sqdist(D2, sigma)
        pos = ctx["w_user"] > 0
        Kp = K if pos.all() else K[np.ix_(pos, pos)]  # the training set: weight-0 rows out
        D = enclosing_diameter(Kp) if with_bound else None
        r2 = xi_alpha_radius2(Kp)
        spans = SpanCache()
        out = [
            (i, evaluate_candidate(K, spec, ctx, D=D, r2_delta=r2, spans=spans))
            for i, spec in items
        ]
    return out, len(caught)


# ---------------------------------------------------------------------------------------------
# The selector
# ---------------------------------------------------------------------------------------------
class SpanRule(Selector):
    """Span-rule selection for the weighted L1-SVM (Weighted span Section 5, eq. (38)).

    Parameters
    ----------
    search : {"sigma_C", "class_weights", "instance_weights"}, optional
        What is searched (see the module docstring); default ``"instance_weights"`` when
        ``scores`` is given, else ``"sigma_C"``.
    criterion : {"span_rule", "span_bound", "xi_alpha", "cv"}, default="span_rule"
        The rule candidates are ranked by: span-rule ``t_l`` (eq. (37)), span bound
        (Theorem 1; one QP per in-bound SV per candidate), xi-alpha bound (eq. (21)), or
        ``n_splits``-fold CV error (:func:`svmtune.search.cv.cv_errors`).  The two bounds are
        for binary problems.
    log2_sigma : (lo, hi, step), default=(-8, 8, 1)
        RBF widths of ``search="sigma_C"``.
    log2_C : (lo, hi, step), optional
        Penalties: default ``(-8, 8, 1)`` for ``"sigma_C"``, ``(-6, 10, 1)`` (the scale ``C``
        of eq. (39)) for ``"instance_weights"``.
    sigmas, Cs : sequences, optional
        Explicit grids overriding ``log2_sigma`` / ``log2_C``.
    log2_C_pos, log2_C_neg : (lo, hi, step), default=(-6, 10, 0.5)
        ``C+`` (class 1) and ``C-`` (class 0) of ``search="class_weights"``.
    scores : array of shape (n_samples,), optional
        Importance scores ``q_i`` of the training samples, in the order of ``X`` (the paper
        scales them to ``[0, 1]``: :func:`svmtune.loo.weights.minmax_scores`).
    weight_fn : callable, optional
        ``weight_fn(q, A, B, C) -> C_i`` replacing the sigmoid family of eq. (39).
    A_values, B_values : sequences, default 1..10 and 0..0.9
        Grids of the slope and centre of eq. (39).
    floor : float, default=0.01
        Smallest instance weight (the paper's sigma in eq. (39)).
    sigma : float, optional
        Fixed RBF width (on the features the selector receives) for the weight searches.
    unit_gamma : float, optional
        ``gamma`` on ``[0, 1]``-scaled features for the weight searches (default ``1/d``,
        the paper's heuristic; see :func:`unit_range_sigma`).  Exclusive with ``sigma``.
    n_splits : int, default=5
        Folds of ``criterion="cv"``.
    tol : float, default=1e-3
        libsvm's stopping tolerance (its default, as in the paper).

    Notes
    -----
    Ties (the span-rule counts errors, so ties are common) go to the candidate with the
    fewest support vectors -- the sparser model, with the smaller bound ``n_SV / l``
    (Weighted span eq. (20)) -- then to the first in grid order; with ``criterion="cv"``
    straight to the first in grid order.  ``Selection.sample_weight`` carries the
    chosen per-sample multipliers of an instance-weight search (the user's ``sample_weight``
    times ``C_i / C``); the final fit must use them instead of the user's weights.

    ``Selection.history`` has one entry per candidate (grid order) with its parameters
    (sigma, gamma, C and C_pos / C_neg with their ``class_weight``, or A / B), ``chosen``
    (True on the selected candidate's entry only), the span-rule ``t_l`` (``span_rule``), the
    xi-alpha bound (``xi_alpha``, binary), ``span_bound`` (criterion "span_bound"), ``cv``
    (criterion "cv"), the counts ``n_sv``, ``n_inbound``, ``n_bounded`` and ``n_empty`` (in-bound
    SVs failing Lemma 1, summed over one-vs-rest tasks) and the seconds ``time_fit`` (libsvm)
    and ``time_span`` (spans and estimates) -- what Tables 4-6 of the paper are made from.
    ``info["time_per_model"]`` is the mean seconds per candidate: fit plus spans, or the
    K-fold CV of one candidate with ``criterion="cv"``.
    """

    grid = True

    name = "span_rule"
    kernels = ("rbf",)
    _parameter_constraints = {
        "search": [Options(*SEARCHES), None],
        "criterion": [Options(*CRITERIA)],
        "weight_fn": [Check(_check_callable, "a callable"), None],
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        "unit_gamma": [Interval(Real, 0, None, closed="neither"), None],
        "floor": [Interval(Real, 0, None, closed="left")],
        "n_splits": [IntegerLike(2)],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "log2_C_pos": [Check(_log2_grid_values, "a tuple (lo, hi) or (lo, hi, step)")],
        "log2_C_neg": [Check(_log2_grid_values, "a tuple (lo, hi) or (lo, hi, step)")],
        "A_values": [Check(_values, "a non-empty sequence of finite numbers")],
        "B_values": [Check(_values, "a non-empty sequence of finite numbers")],
        "sigmas": [EXPLICIT_GRID, None],
        "Cs": [EXPLICIT_GRID, None],
    }

    def __init__(
        self,
        *,
        search: str | None = None,
        criterion: str = "span_rule",
        log2_sigma=(-8.0, 8.0, 1.0),
        log2_C=None,
        sigmas=None,
        Cs=None,
        log2_C_pos=(-6.0, 10.0, 0.5),
        log2_C_neg=(-6.0, 10.0, 0.5),
        scores=None,
        weight_fn: Callable[..., np.ndarray] | None = None,
        A_values=PAPER_A_VALUES,
        B_values=PAPER_B_VALUES,
        floor: float = DEFAULT_FLOOR,
        sigma: float | None = None,
        unit_gamma: float | None = None,
        n_splits: int = 5,
        tol: float = 1e-3,
    ):
        opts = self._validate_options(
            search=search,
            criterion=criterion,
            weight_fn=weight_fn,
            sigma=sigma,
            unit_gamma=unit_gamma,
            floor=floor,
            n_splits=n_splits,
            tol=tol,
            log2_C_pos=log2_C_pos,
            log2_C_neg=log2_C_neg,
            A_values=A_values,
            B_values=B_values,
            sigmas=sigmas,
            Cs=Cs,
        )
        if opts["search"] is None:
            opts["search"] = "instance_weights" if scores is not None else "sigma_C"
        search = opts["search"]
        self._check_combination(search, scores, opts["weight_fn"], sigma, unit_gamma)
        self.search = search
        self.criterion = criterion
        if search == "sigma_C":
            self.sigmas = grid_values("sigmas", sigmas, "log2_sigma", log2_sigma)
        else:
            if sigmas is not None:
                raise ValueError(f"sigmas= is a grid of search='sigma_C'; use sigma= for {search}")
            self.sigmas = None
        c_default = (-6.0, 10.0, 1.0) if search == "instance_weights" else (-8.0, 8.0, 1.0)
        self.Cs = grid_values("Cs", Cs, "log2_C", c_default if log2_C is None else log2_C)
        self.C_pos = opts["log2_C_pos"]
        self.C_neg = opts["log2_C_neg"]
        self.scores = None if scores is None else check_scores(scores)
        if self.scores is not None and self.scores.size == 0:
            raise ValueError("scores must hold one importance score per sample, got none")
        self.weight_fn = weight_fn
        self.A_values = opts["A_values"]
        self.B_values = opts["B_values"]
        self.floor = float(floor)
        self.sigma = None if sigma is None else float(sigma)
        self.unit_gamma = None if unit_gamma is None else float(unit_gamma)
        self.n_splits = opts["n_splits"]
        self.tol = float(tol)

    @staticmethod
    def _check_combination(search, scores, weight_fn, sigma, unit_gamma) -> None:
        """The rules between options: scores go with the instance-weight search, weight_fn
        with scores, one fixed width at most, and none for the (sigma, C) grid search."""
        if search == "instance_weights" and scores is None:
            raise ValueError(
                "search='instance_weights' needs scores=: one importance score per sample"
            )
        if scores is not None and search != "instance_weights":
            raise ValueError(f"scores are used by search='instance_weights', not {search!r}")
        if weight_fn is not None and scores is None:
            raise ValueError("weight_fn maps importance scores to weights: give scores= too")
        if sigma is not None and unit_gamma is not None:
            raise ValueError("give either sigma (on the input features) or unit_gamma, not both")
        if search == "sigma_C" and (sigma is not None or unit_gamma is not None):
            raise ValueError(
                "search='sigma_C' selects sigma on a grid (log2_sigma / sigmas); sigma= and "
                "unit_gamma= fix the width of the class- or instance-weight searches"
            )

    # ------------------------------------------------------------------ candidates
    def _candidates(
        self, X: np.ndarray, w_pos: np.ndarray | None = None
    ) -> list[tuple[float, dict[str, Any], dict[str, Any]]]:
        """``(sigma, spec, params)`` per candidate, in grid order.

        ``w_pos`` (boolean mask of the samples of positive weight, None for all) restricts
        the rows the fixed RBF width of the weight searches is computed from.
        """
        out = []
        if self.search == "sigma_C":
            for s in self.sigmas:
                for C in self.Cs:
                    out.append((float(s), {"kind": "plain", "C": float(C)}, rbf_params(s, C)))
            return out
        s = self.sigma
        if s is None:
            # the heuristic on the training set: rows of weight 0 are absent
            s = unit_range_sigma(X if w_pos is None else X[w_pos], self.unit_gamma)
        if self.search == "class_weights":
            for cp in self.C_pos:
                for cn in self.C_neg:
                    C, cw = class_weight_params(cp, cn)
                    spec = {"kind": "class", "C": C, "ratio": cw[1], "C_pos": cp, "C_neg": cn}
                    out.append((s, spec, rbf_params(s, C, class_weight=cw)))
            return out
        for A in self.A_values:
            for B in self.B_values:
                for C in self.Cs:
                    spec = {"kind": "scores", "A": float(A), "B": float(B), "C": float(C)}
                    out.append((s, spec, rbf_params(s, C)))
        return out

    @staticmethod
    def _history_entry(sigma: float, spec: dict[str, Any]) -> dict[str, Any]:
        h: dict[str, Any] = {
            "sigma": sigma,
            "gamma": float(gamma_from_sigma(sigma)),
            "C": spec["C"],
        }
        for key in ("C_pos", "C_neg", "A", "B"):
            if key in spec:
                h[key] = spec[key]
        if spec["kind"] == "class":  # the candidate's hyperparameters, as best_params_ has them
            h["class_weight"] = class_weight_params(spec["C_pos"], spec["C_neg"])[1]
        return h

    # ------------------------------------------------------------------ evaluation
    def _span_records(self, D2, cands, ctx, n_jobs) -> tuple[list[dict[str, Any]], int]:
        groups: dict[float, list[tuple[int, dict[str, Any]]]] = {}
        for i, (s, spec, _) in enumerate(cands):
            groups.setdefault(s, []).append((i, spec))
        blocks = []
        n_eff = effective_n_jobs(n_jobs)
        per_group = 1 if n_eff == 1 else max(1, math.ceil(4 * n_eff / len(groups)))
        for s, items in groups.items():
            size = math.ceil(len(items) / per_group)
            blocks += [(s, items[k : k + size]) for k in range(0, len(items), size)]
        with_bound = self.criterion == "span_bound"
        # BLAS single-threaded, as joblib makes it in its worker processes: the factorisations
        # are small (n* in-bound SVs) and the parallelism is across candidates.
        reporter = current_progress()
        if reporter is not None:
            reporter.cover(len(cands), "candidates")
        records: list[dict[str, Any]] = [{} for _ in cands]
        n_warn = 0
        with threadpool_limits(1, user_api="blas"):
            # with a progress reporter the blocks are counted as they come back
            as_done = {} if reporter is None else {"return_as": "generator"}
            out = Parallel(n_jobs=n_jobs, **as_done)(
                delayed(_evaluate_block)(D2, s, items, ctx, with_bound) for s, items in blocks
            )
            for recs, nw in out:  # consumed here: the sequential backend runs it here
                n_warn += nw
                for i, rec in recs:
                    records[i] = rec
                    if reporter is not None:
                        reporter.advance(1, "candidates")
                        value = rec.get(self.criterion)
                        shown = "" if value is None else f": {self.criterion} {value:.4f}"
                        reporter.line(f"{describe(cands[i][2])}{shown}")
        return records, n_warn

    def history_score(self, row: dict[str, Any], selection: Selection) -> float:
        """1 - the candidate's span-rule estimate or CV error, whichever ranked it."""
        criterion = selection.info.get("criterion")
        if criterion in ("span_rule", "cv") and criterion in row:
            return 1.0 - float(row[criterion])
        return float("nan")

    def holdout(self) -> str:
        return "folds" if self.criterion == "cv" else "rows"

    def _cv_losses(
        self, X, y, cands, ctx, random_state, n_jobs, groups=None
    ) -> tuple[np.ndarray, int]:
        folds = make_folds(y, self.n_splits, random_state, ctx["w_user"], groups)
        if self.search != "instance_weights":
            params = [p for _, _, p in cands]
            errs = cv_errors(
                X,
                y,
                params,
                folds=folds,
                sample_weight=ctx["w_user"],
                multiclass=ctx["multiclass"],
                n_jobs=n_jobs,
            )
        else:
            errs = np.array(
                [
                    cv_errors(
                        X,
                        y,
                        [p],
                        folds=folds,
                        sample_weight=candidate_weights(spec, ctx),
                        multiclass=ctx["multiclass"],
                        n_jobs=n_jobs,
                    )[0]
                    for _, spec, p in cands
                ]
            )
        return np.asarray(errs, dtype=float), len(cands) * len(folds)

    def _context(self, y, sample_weight, multiclass: str) -> dict[str, Any]:
        """Check that the search and criterion fit the number of classes; return what every
        candidate's evaluation needs (one-vs-rest tasks, user weights, scores, ...)."""
        n = y.shape[0]
        n_classes = int(y.max()) + 1
        if self.search == "class_weights" and n_classes > 2:
            raise ValueError(
                "search='class_weights' chooses C+ / C- of a binary problem; y has "
                f"{n_classes} classes (use search='sigma_C' or 'instance_weights')"
            )
        if self.criterion in ("span_bound", "xi_alpha") and n_classes > 2:
            raise ValueError(
                f"criterion={self.criterion!r} is a bound for binary problems; y has "
                f"{n_classes} classes (use 'span_rule' or 'cv')"
            )
        scores = None if self.scores is None else check_scores(self.scores, n)
        w_user = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        ctx = {
            "multiclass": multiclass,
            "tasks": ovr_tasks(y),
            "y": y,
            "w_user": w_user,
            "scores": scores,
            "weight_fn": self.weight_fn,
            "floor": self.floor,
            "tol": self.tol,
        }
        return ctx

    def _by_cv(self, X, y, D2, cands, ctx, random_state, n_jobs, groups):
        """The candidate of least K-fold CV error (``criterion="cv"``); its span-rule record
        is computed too (for ``estimate``).  Returns ``(best, values, chosen record,
        history, n_fits, n_warnings, seconds per candidate)``."""
        t0 = time.perf_counter()
        values, n_fits = self._cv_losses(X, y, cands, ctx, random_state, n_jobs, groups)
        time_per_model = (time.perf_counter() - t0) / len(cands)
        best = int(np.argmin(values))
        recs, n_warn = self._span_records(D2, [cands[best]], ctx, None)
        chosen = recs[0]
        n_fits += len(ctx["tasks"])
        history = [
            dict(self._history_entry(c[0], c[1]), cv=float(v)) for c, v in zip(cands, values)
        ]
        history[best].update(chosen)
        return best, values, chosen, history, n_fits, n_warn, time_per_model

    def _by_estimate(self, D2, cands, ctx, n_jobs):
        """The candidate of least span-rule estimate or bound (Weighted span eq. (38)); ties go
        to the fewest support vectors.  Returns as :meth:`_by_cv`."""
        records, n_warn = self._span_records(D2, cands, ctx, n_jobs)
        values = np.array([r[self.criterion] for r in records], dtype=float)
        n_sv = np.array([r["n_sv"] for r in records])
        ties = np.flatnonzero(values == values.min())
        best = int(ties[np.argmin(n_sv[ties])])
        chosen = records[best]
        n_fits = len(cands) * len(ctx["tasks"])
        history = [dict(self._history_entry(c[0], c[1]), **r) for c, r in zip(cands, records)]
        time_per_model = float(np.mean([r["time_fit"] + r["time_span"] for r in records]))
        return best, values, chosen, history, n_fits, n_warn, time_per_model

    # ------------------------------------------------------------------ select
    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """See :meth:`svmtune.methods.base.Selector.run`."""
        X, y, sample_weight, groups = data.X, data.y, data.sample_weight, data.groups
        random_state, n_jobs, multiclass = context.random_state, context.n_jobs, context.multiclass
        y = y.astype(int)
        ctx = self._context(y, sample_weight, multiclass)
        w_pos = ctx["w_user"] > 0
        cands = self._candidates(X, None if w_pos.all() else w_pos)
        D2 = data.sqdist
        if D2 is None:
            check_dense_memory(
                len(y),
                matrices=DENSE_MATRICES,
                method=self.name,
                alternative="use fewer samples, or a K-fold search ('grid', 'random', 'halving')",
            )
            D2 = _squared_distances(X)  # the rows come checked (the door, or select)

        if self.criterion == "cv":
            best, values, chosen, history, n_fits, n_warn, time_per_model = self._by_cv(
                X, y, D2, cands, ctx, random_state, n_jobs, groups
            )
        else:
            best, values, chosen, history, n_fits, n_warn, time_per_model = self._by_estimate(
                D2, cands, ctx, n_jobs
            )
        for i, h in enumerate(history):
            h["chosen"] = i == best
        if n_warn:
            warnings.warn(
                f"span-rule selection: {n_warn} numerical warnings while evaluating the "
                "candidates (typically nearly singular in-bound kernel matrices at large RBF "
                "widths, regularised by a tiny diagonal jitter)",
                RuntimeWarning,
                stacklevel=user_stacklevel(),
            )
        s, spec, params = cands[best]
        info: dict[str, Any] = {
            "search": self.search,
            "criterion": self.criterion,
            "n_candidates": len(cands),
            "n_sv": chosen["n_sv"],
            "n_inbound": chosen["n_inbound"],
            "n_empty_spans": chosen["n_empty"],
            "time_per_model": time_per_model,
        }
        info.update({k: float(spec[k]) for k in ("C_pos", "C_neg", "A", "B") if k in spec})
        if self.search != "sigma_C":
            info["sigma_rule"] = "fixed" if self.sigma is not None else "unit_range"
        chosen_weights = None
        if self.search == "instance_weights":
            chosen_weights = candidate_weights(spec, ctx)
        return Selection(
            params=dict(params),
            estimate=float(chosen["span_rule"]),
            criterion=float(values[best]),
            n_svm_fits=int(n_fits),
            history=history,
            final_model="l1",
            info=info,
            sample_weight=chosen_weights,
        )
