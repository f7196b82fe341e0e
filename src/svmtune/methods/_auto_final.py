"""``auto``'s final model and what it costs (:mod:`svmtune.methods.auto`): the probes of
``SVC()``'s share of support vectors, libsvm's predicted cost at the chosen point, the budget
warning, the plan's costs beside the seconds measured, and the final-model rule (libsvm's
SVC or the low-rank L2-SVM, by cost and by their errors on held-out rows)."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.svm import _libsvm, _libsvm_sparse

from svmtune._labels import first_seen_codes
from svmtune._memory import release_freed_memory
from svmtune._warnings import user_stacklevel
from svmtune.estimators import make_final_estimator
from svmtune.estimators_lowrank import LowRankL2SVC
from svmtune.exceptions import BudgetWarning
from svmtune.lowrank import pivoted_cholesky_landmarks
from svmtune.methods._auto_rows import gather_refusal, take_rows
from svmtune.methods._cost_model import (
    D_EXP,
    HELD_OUT_ROWS,
    PROBE_ROWS,
    held_out_rows,
    lowrank_eval_cost,
    rule_rows,
    sv_fraction_at,
    svc_fit_cost,
)
from svmtune.methods._fidelity import stage_rows

__all__ = [
    "HELD_OUT_ROWS",
    "LOWRANK_TOLERANCE",
    "Probe",
    "cost_info",
    "default_svc_fit",
    "exact_rule",
    "final_rule",
    "final_rule_text",
    "fit_rule_svc",
    "held_out_losses",
    "libsvm_cost_ratio",
    "probe_svc",
    "svc_sv_fraction",
    "warn_budget",
]


def _libsvm_work(model, d: int) -> float:
    """Work of a fitted libsvm model, counted: a kernel column of ``n`` entries (``d +
    D_EXP`` each) for every support vector, computed once and kept in libsvm's cache, and
    ``n`` gradient updates per iteration, over its binary models."""
    models = getattr(model, "estimators_", [model])  # OvRSVC: one SVC per class
    n_sv = sum(float(np.sum(m.n_support_)) for m in models)
    n_iter = sum(float(np.sum(m.n_iter_)) for m in models)
    return _work(n_sv, n_iter, d)


def _work(n_sv: float, n_iter: float, d: int) -> float:
    return n_sv * (d + D_EXP) + n_iter


def default_svc_fit(X, y, sw) -> tuple[int, int]:
    """``(support vectors, iterations)`` of scikit-learn's ``SVC()`` fitted on ``(X, y, sw)``
    (rows of positive weight, ``y`` any labels), through the libsvm bindings ``SVC.fit``
    calls (``sklearn.svm._libsvm.fit``, ``_libsvm_sparse.libsvm_sparse_train``) with the
    arguments ``SVC()`` passes them, without ``SVC.fit``'s checks of rows the tuner's door
    has checked (issue 55: ``auto``'s probe ran a fourth ``check_array`` pass over ``X``).

    ``tests/methods/test_auto_stage.py`` compares it with ``SVC().fit`` on dense and sparse,
    weighted and multiclass data, so a change of scikit-learn's bindings fails there.
    """
    _, codes = np.unique(np.asarray(y), return_inverse=True)  # SVC's own label encoding
    codes = codes.astype(np.float64)
    n_classes = int(codes.max()) + 1
    w = np.empty(0) if sw is None else np.ascontiguousarray(sw, dtype=np.float64)
    class_weight = np.ones(n_classes)
    d = X.shape[1]
    if sp.issparse(X):  # gamma="scale" from the entries, as SVC computes it on sparse X
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sort_indices()
        _libsvm_sparse.set_verbosity_wrap(0)  # libsvm's switch is global: SVC sets it too
        var = float(X.multiply(X).mean() - X.mean() ** 2)
        gamma = 1.0 / (d * var) if var != 0 else 1.0
        out = _libsvm_sparse.libsvm_sparse_train(
            d, X.data, X.indices, X.indptr, codes, 0, 2, 3, gamma, 0.0, 1e-3, 1.0,
            class_weight, w, 0.5, 200.0, 0.0, 1, 0, -1, 0,
        )  # fmt: skip
        support, n_iter = out[0], out[8]
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        _libsvm.set_verbosity_wrap(0)  # libsvm's switch is global: SVC sets it too
        var = float(X.var())
        gamma = 1.0 / (d * var) if var != 0 else 1.0
        out = _libsvm.fit(
            X,
            codes,
            svm_type=0,
            sample_weight=w,
            class_weight=class_weight,
            kernel="rbf",
            C=1.0,
            nu=0.5,
            probability=0,
            degree=3,
            shrinking=1,
            tol=1e-3,
            cache_size=RULE_CACHE_MB,
            coef0=0.0,
            gamma=gamma,
            epsilon=0.0,
            max_iter=-1,
            random_seed=0,
        )
        support, n_iter = out[0], out[8]
    return int(support.size), int(np.sum(n_iter))


#: libsvm's kernel cache (MB) in the final-model rule's fits, half scikit-learn's default:
#: the cache changes their speed, not their support vectors or iterations (on the 12,500
#: rows of the 10^6-row selection of ``benchmarks/scale_out.py``: peak 129 MB above the data
#: against 236 MB, 10.7 s against 9.6 s; ``benchmarks/memory_steps.md``)
RULE_CACHE_MB = 100.0


def libsvm_cost_ratio(params, X, y, sw, multiclass) -> tuple[float, int, Any]:
    """The final SVC's work at ``params`` over ``SVC()``'s on the same rows
    (:func:`_libsvm_work`), the fits it took and the fitted SVC (of the labels' first-seen
    codes, :func:`svmtune._labels.first_seen_codes`): the predicted cost of the
    final fit in ``SVC()`` fits (both grow alike with the rows).  Support vectors and
    iterations both count: a large C takes many more iterations than ``SVC()`` but keeps
    fewer columns, and iterations alone overstated the final fit three- to tenfold on the
    benchmark's cells (``docs/notes/auto_fidelity.md``)."""
    y = first_seen_codes(y)  # libsvm's counts whatever the classes are called (issue 63)
    final = fit_rule_svc(params, X, y, sw, multiclass)
    d = X.shape[1]
    a = _libsvm_work(final, d)
    b = _work(*default_svc_fit(X, y, sw), d)
    return a / max(b, 1.0), 2, final


def fit_rule_svc(params, X, codes, sw, multiclass):
    """libsvm's SVC at ``params`` as the final model would be (:func:`svmtune.estimators.
    make_final_estimator`) fitted on the rows ``(X, codes, sw)`` (``codes``: the labels'
    first-seen codes), with the rule's kernel cache :data:`RULE_CACHE_MB`; libsvm's
    convergence warnings are left to the final fit."""
    n_classes = int(np.unique(codes).size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SklearnConvergenceWarning)
        svc = make_final_estimator(params, multiclass=multiclass, n_classes=n_classes)
        svc.set_params(cache_size=RULE_CACHE_MB)
        return svc.fit(X, codes, **({} if sw is None else {"sample_weight": sw}))


def held_out_losses(svc, y_fit, Xh, yh) -> np.ndarray:
    """0/1 losses on the held-out rows ``(Xh, yh)`` of ``svc``, fitted on the first-seen codes
    of the labels ``y_fit`` (:func:`fit_rule_svc`): ``yh`` coded alike, a class absent from
    ``y_fit`` counted as an error."""
    code = dict(zip(y_fit.tolist(), first_seen_codes(y_fit).tolist(), strict=True))
    yh_codes = np.array([code.get(v, -1) for v in yh.tolist()])
    return (svc.predict(Xh) != yh_codes).astype(float)


def svc_sv_fraction(X, y, sw) -> float:
    """Share of the rows that are support vectors of scikit-learn's ``SVC()`` on them (the
    probe of the cost model, :func:`svmtune.methods._cost_model.svc_fit_cost`); rows of
    weight 0 are left out."""
    keep = slice(None) if sw is None else np.asarray(sw) > 0
    X, y = X[keep], first_seen_codes(np.asarray(y)[keep])  # whatever the names (issue 63)
    n_sv, _ = default_svc_fit(X, y, None if sw is None else np.asarray(sw)[keep])
    return n_sv / max(X.shape[0], 1)


@dataclass(frozen=True)
class Probe:
    """``SVC()`` fitted on nested probes of ``rows`` rows: its share of support vectors on
    each (``fractions``), their work (:func:`svmtune.methods._cost_model.svc_fit_cost` of each
    at its own share) and the seconds they took."""

    rows: tuple[int, ...]
    fractions: tuple[float, ...]
    work: float
    seconds: float

    def fraction_at(self, n: int) -> float:
        """The share of support vectors on ``n`` rows (:func:`svmtune.methods._fidelity.
        sv_fraction_at`)."""
        return sv_fraction_at(n, self.rows, self.fractions)


def probe_svc(X, y, sw, order, groups) -> Probe:
    """``SVC()`` on the first :data:`~svmtune.methods._cost_model.PROBE_ROWS` rows of ``order``
    and, where the data have more, on twice as many (all where fewer): the shares of support
    vectors from which the cost model's unit is taken at all rows (the share falls as the
    rows grow; :mod:`svmtune.methods._fidelity`)."""
    t0 = time.perf_counter()
    n, d = X.shape
    sizes = [min(n, PROBE_ROWS)] + ([min(n, 2 * PROBE_ROWS)] if n > PROBE_ROWS else [])
    rows_used, fractions, work = [], [], 0.0
    for size in sizes:
        rows = stage_rows(order, size, groups)
        f = svc_sv_fraction(take_rows(X, rows), y[rows], None if sw is None else sw[rows])
        rows_used.append(int(rows.size))
        fractions.append(f)
        work += svc_fit_cost(rows.size, d, f)
    return Probe(tuple(rows_used), tuple(fractions), work, time.perf_counter() - t0)


def warn_budget(plan) -> None:
    """A :class:`~svmtune.exceptions.BudgetWarning` where ``plan.budget`` is below the least
    the plan keeps to (:attr:`svmtune.methods._fidelity.Plan.min_budget`), naming it."""
    if plan.budget >= plan.min_budget:
        return
    warnings.warn(
        f"auto's budget of {plan.budget:.3g} SVC() fits is below the least its plan needs on "
        f"these data, {plan.min_budget:.3g} SVC() fits (the probes, a first stage of "
        f"{plan.stages[0].size:,} rows, the final model): the run is predicted to cost "
        f"{plan.cost:.3g}; pass a budget of at least {plan.min_budget:.3g} (method_params) "
        "or leave it at None",
        BudgetWarning,
        stacklevel=user_stacklevel(),
    )


def cost_info(plan, progress, rule_seconds: float) -> dict[str, Any]:
    """The plan's least budget, its predicted costs of the probes, each stage, the final
    rule and the final fit (``SVC()`` fits), and the seconds each took but the final fit
    (:class:`PlanProgress`; the tuner's ``final_fit_time_``), for ``info``."""
    return {
        "min_budget": plan.min_budget,
        "predicted_costs": {
            "probe": plan.probe_cost,
            "stages": [s.cost for s in plan.stages],
            "final_rule": plan.rule_cost,
            "final_fit": plan.final_cost,
        },
        "measured_seconds": {
            "probe": None
            if progress is None or progress.probe is None
            else progress.probe["seconds"],
            "stages": None if progress is None else list(progress.stage_seconds),
            "final_rule": rule_seconds,
        },
        "probe": None if progress is None else progress.probe,
    }


#: largest gap of the low-rank final model's held-out error over libsvm's at the same point
#: for it to be returned (half a point of accuracy)
LOWRANK_TOLERANCE = 0.005


def final_rule_text(plan, ratio, lowrank, reserve, rows, rank, final, gap=None, held=0) -> str:
    """``final_rule`` after a subsampled or low-rank last stage: the model chosen (``final``)
    and why, libsvm's predicted cost (``ratio``, from ``rows`` rows), the budget left (or,
    where the plan overran a budget below its least, that nothing is and the reserve was
    used), the low-rank model's on ``rank`` landmarks and, where it was measured, the gap of
    its error over libsvm's on ``held`` held-out rows."""
    left = plan.left
    budget = (
        f"{left:.2f} left of the budget"
        if left >= 0
        else f"nothing left of the budget of {plan.budget:.3g} (the plan's least is "
        f"{plan.min_budget:.3g}), its reserve of {reserve:.2f} for the final model"
    )
    measured = (
        ""
        if gap is None
        else f"on {held:,} held-out rows its error is {gap:+.4f} against libsvm's, "
        f"{'within' if gap <= LOWRANK_TOLERANCE else 'beyond'} the tolerance "
        f"{LOWRANK_TOLERANCE}"
    )
    if final == "lowrank" and gap is not None and gap > LOWRANK_TOLERANCE:
        chose = (
            f"the low-rank L2-SVM, though {measured}: libsvm's fit would cost more than the "
            f"whole budget of {plan.budget:.3g} SVC() fits (a BudgetWarning names the budget "
            "that buys it)"
        )
    elif final == "lowrank":
        chose = (
            "the low-rank L2-SVM: libsvm's fit costs more than that and than the budget "
            f"allows, and {measured}"
        )
    elif gap is not None:
        chose = f"libsvm's SVC: the low-rank L2-SVM would be cheaper, but {measured}"
    elif ratio <= max(left, reserve):
        chose = "libsvm's SVC: its fit is within what the budget keeps for the final model"
    elif lowrank < ratio:
        chose = "libsvm's SVC: no rows are left out to measure the low-rank L2-SVM's error"
    else:
        chose = "libsvm's SVC: the low-rank L2-SVM would cost more"
    return (
        f"{chose}; libsvm's fit predicted at {ratio:.3g} SVC() fits (its support vectors and "
        f"iterations against SVC()'s on {rows:,} rows), {budget}; the low-rank L2-SVM "
        f"predicted at {lowrank:.3g} ({rank} landmarks)"
    )


def exact_rule(family: str, estimate: float) -> str:
    """``final_rule`` where the last stage is exact on all rows: the referee's family."""
    name = {"l1": "libsvm's SVC", "l2": "the exact L2-SVM"}.get(family, family)
    return (
        f"{name}: the last stage is exact on all rows, and the referee's leave-one-out error "
        f"of this family at the chosen point is the lowest ({estimate:.4f})"
    )


def final_rule(
    plan, params, rank, landmarks, X, y, sw, order, multiclass, *, seed=None
) -> dict[str, Any]:
    """libsvm's SVC, or the low-rank L2-SVM where libsvm's fit would cost more than the
    budget has left (at least its reserve for the final model) and more than the
    low-rank model on ``rank`` landmarks, as many as the last stage used at the chosen
    point, or (``rank`` None: that stage was exact) as many as the trace rule takes at
    the chosen width on the rows the libsvm fit is predicted from (:mod:`svmtune.methods.auto`'s
    docstring; ``landmarks``: the trace rule's ``(max_rank, tol)``), and only where the
    low-rank model's error on held-out rows is within :data:`LOWRANK_TOLERANCE` of libsvm's
    at the same point, both fitted on those rows, or where libsvm's fit would cost more than
    the whole budget (then with a :class:`~svmtune.exceptions.BudgetWarning`).

    The held-out rows are the next rows of the nested order (as many, at most
    :data:`HELD_OUT_ROWS`); the returned model's error on them is the selection's
    ``estimate`` (of a model fitted on fewer rows: somewhat pessimistic), None where no row
    is left out.  Both sets of rows are drawn to memory
    (:func:`~svmtune.methods._auto_rows.take_rows`); where ``X`` is a dask array too large
    to gather (:func:`~svmtune.methods._auto_rows.gather_refusal`), the low-rank L2-SVM,
    which is fitted in ``X``'s row blocks, is the final model (:func:`_blocked_rule`).
    ``seed`` is the low-rank model's ``random_state`` (its landmark subsample)."""
    release_freed_memory()  # the last stage's matrices
    n, d = X.shape
    left = plan.left  # negative where the plan overran a budget below its least
    unit = svc_fit_cost(n, d, plan.sv_fraction)
    rows = stage_rows(order, rule_rows(n, plan.stages[0].size))
    held = np.sort(order[rows.size : rows.size + held_out_rows(n, rows.size)])
    Xr, Xh = take_rows(X, rows), take_rows(X, held)
    w, wh = (None, None) if sw is None else (sw[rows], sw[held])
    if rank is None:
        idx, _ = pivoted_cholesky_landmarks(
            Xr, params["sigma"], tol=landmarks[1], max_rank=landmarks[0], sample_weight=w
        )
        rank = int(idx.size)
    lowrank = lowrank_eval_cost(n, d, plan.n_tasks, rank) / unit
    refusal = gather_refusal(X)
    if refusal is not None:
        return _blocked_rule(params, rank, landmarks, Xr, y[rows], w, Xh, y[held], wh, seed) | {
            "final_cost": lowrank,
            "n_svm_fits": plan.n_tasks,
            "why": f"the low-rank L2-SVM, fitted in X's row blocks on dask's workers: "
            f"{refusal}, and libsvm's SVC needs every row in memory; predicted at "
            f"{lowrank:.3g} SVC() fits ({rank} landmarks)",
        }
    ratio, fits, svc = libsvm_cost_ratio(params, Xr, y[rows], w, multiclass)
    release_freed_memory()  # libsvm's kernel cache, before the low-rank model's fit
    # the plan's reserve for the final model (Plan.final_cost), on the landmarks in use
    reserve = min(1.0, lowrank)
    cheaper = ratio > max(left, reserve) and lowrank < ratio
    out: dict[str, Any] = {"final_model": "l1", "n_svm_fits": fits, "estimate": None}
    out["final_cost"] = ratio  # the chosen final fit's predicted cost, in SVC() fits
    gap = None
    if held.size:
        out["estimate"] = _mean(held_out_losses(svc, y[rows], Xh, y[held]), wh)
        if cheaper:
            lr = _blocked_rule(params, rank, landmarks, Xr, y[rows], w, Xh, y[held], wh, seed)
            gap = lr["estimate"] - out["estimate"]
            out["n_svm_fits"] += plan.n_tasks
            # beyond the tolerance libsvm's fit, but never one costing more than the whole
            # budget: at 10^5 rows and C = 256 it took longer than the whole selection
            if gap <= LOWRANK_TOLERANCE or ratio > plan.budget:
                out.update(final_model="lowrank", estimate=lr["estimate"], final_cost=lowrank)
            if gap > LOWRANK_TOLERANCE and ratio > plan.budget:
                _warn_lowrank_beyond(gap, held.size, ratio, plan.budget)
    out["why"] = final_rule_text(
        plan, ratio, lowrank, reserve, rows.size, rank, out["final_model"], gap, held.size
    )
    return out


def _warn_lowrank_beyond(gap: float, held: int, ratio: float, budget: float) -> None:
    """A :class:`~svmtune.exceptions.BudgetWarning` where the budget kept libsvm's final fit
    out though the low-rank model's held-out error is ``gap`` above libsvm's."""
    warnings.warn(
        f"auto's final model is the low-rank L2-SVM, whose error on {held:,} held-out rows "
        f"is {gap:+.4f} against libsvm's SVC at the same point (beyond the tolerance "
        f"{LOWRANK_TOLERANCE}): libsvm's fit on all rows is predicted at {ratio:.3g} SVC() "
        f"fits, more than the whole budget of {budget:.3g}; pass a budget of at least "
        f"{ratio:.3g} (method_params) for libsvm's, or final_model='l1'",
        BudgetWarning,
        stacklevel=user_stacklevel(),
    )


def _blocked_rule(params, rank, landmarks, Xr, yr, w, Xh, yh, wh, seed=None) -> dict[str, Any]:
    """The low-rank L2-SVM at ``params`` on ``rank`` landmarks (at most; the trace rule's
    ``landmarks[1]``) fitted on the rows ``(Xr, yr, w)``, and its error on the held-out rows
    ``(Xh, yh, wh)`` as ``estimate`` (None where none is held out); ``seed`` its
    ``random_state``."""
    lr = LowRankL2SVC(
        C=params["C"],
        sigma=params["sigma"],
        rank=rank,
        rank_tol=landmarks[1],
        random_state=seed,
    )
    lr.fit(Xr, yr, **({} if w is None else {"sample_weight": w}))
    err = _mean((lr.predict(Xh) != yh).astype(float), wh) if len(yh) else None
    return {"final_model": "lowrank", "estimate": err}


def _mean(err: np.ndarray, w: np.ndarray | None) -> float:
    return float(err.mean() if w is None else w @ err / w.sum())
