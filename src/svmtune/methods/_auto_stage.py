"""The pieces of ``auto``'s stages (:mod:`svmtune.methods.auto`): a stage's rows, its
candidates, the carried choice, the final libsvm fit's predicted cost and the bound warning."""

from __future__ import annotations

import contextlib
import dataclasses
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.svm import _libsvm, _libsvm_sparse

from svmtune._warnings import user_stacklevel
from svmtune.estimators import make_final_estimator
from svmtune.exceptions import BoundWarning, BudgetWarning, ConvergenceWarning
from svmtune.kernels import _squared_distances
from svmtune.loo.rbsvm_groups import group_codes
from svmtune.lowrank import pivoted_cholesky_landmarks
from svmtune.methods._fidelity import (
    D_EXP,
    PROBE_ROWS,
    carry_C,
    lowrank_eval_cost,
    stage_rows,
    sv_fraction_at,
    svc_fit_cost,
)
from svmtune.methods.base import SelectionContext, TrainingData, ovr_tasks

__all__ = [
    "Candidate",
    "PlanProgress",
    "Probe",
    "StageData",
    "lowest_estimate",
    "candidate",
    "carried",
    "libsvm_cost_ratio",
    "same_point",
    "svc_sv_fraction",
    "default_svc_fit",
    "on_bound",
    "better_outside",
    "final_rule",
    "cost_info",
    "exact_rule",
    "final_rule_text",
    "probe_svc",
    "warn_budget",
    "inner_advice_ignored",
]


@dataclass
class StageData:
    """The rows of one stage and what its referee and refinements share: the rows' ``X``,
    labels, weights, groups (and their codes, encoded once for the referee), one-vs-rest
    ``tasks``, squared distances ``D2`` (exact stages; None on low-rank ones), their number
    ``size``, the stage's ``index`` in the plan and its :class:`~svmtune.methods._fidelity.Stage`,
    the multiclass mode, the random state and the families the referee scores."""

    X: Any
    y: np.ndarray
    sw: np.ndarray | None
    groups: np.ndarray | None
    codes: np.ndarray | None
    tasks: list[np.ndarray]
    D2: np.ndarray | None
    size: int
    index: int
    stage: Any
    multiclass: str
    random_state: Any
    families: list[str]

    @property
    def data(self) -> TrainingData:
        """The stage's rows as a selector takes them, with their squared distances."""
        return TrainingData(self.X, self.y, self.sw, self.groups, sqdist=self.D2)

    @property
    def context(self) -> SelectionContext:
        return SelectionContext(random_state=self.random_state, multiclass=self.multiclass)

    @classmethod
    def of(cls, X, y, sw, groups, rows, index, stage, multiclass, random_state, families):
        Xs, ys = X[rows], y[rows]
        g = None if groups is None else groups[rows]
        exact = stage.path == "exact"
        fams = list(families) if exact else ["l2"]  # low rank: the L2-SVM's estimate
        return cls(
            X=Xs,
            y=ys,
            sw=None if sw is None else sw[rows],
            groups=g,
            codes=None if g is None else group_codes(g, int(rows.size)),
            tasks=ovr_tasks(ys),
            D2=_squared_distances(Xs) if exact else None,  # rows checked at the door
            size=int(rows.size),
            index=index,
            stage=stage,
            multiclass=multiclass,
            random_state=random_state,
            families=fams,
        )


@dataclass
class Candidate:
    """A point ``auto`` scores: where it came from (``origin``: a start, a refinement or
    the carried choice), the referee's leave-one-out error of each final-model family it
    scored there (``estimates``; None for a family it cannot score on that stage), what it
    cost (SVM fits, seconds), the stage and rows it was scored on, the landmarks of a
    low-rank score or refinement (``rank``) and whether it was chosen.  :meth:`row` is its
    ``history`` entry (the keys of :class:`svmtune.methods.auto.Auto`'s Notes)."""

    origin: str
    sigma: float
    C: float
    n_svm_fits: int = 0
    time: float = 0.0
    estimates: dict[str, float | None] = field(default_factory=dict)
    stage: int | None = None
    rows: int | None = None
    rank: int | None = None
    chosen_in_stage: bool = False
    chosen: bool = False

    @property
    def params(self) -> dict[str, float]:
        return {"sigma": self.sigma, "C": self.C}

    def row(self, families) -> dict[str, Any]:
        """The ``history`` entry: ``estimate_<family>`` for each family it was scored for."""
        out: dict[str, Any] = {"origin": self.origin, **self.params}
        out.update(n_svm_fits=self.n_svm_fits, time=self.time)
        out.update({f"estimate_{f}": self.estimates[f] for f in families if f in self.estimates})
        out.update(stage=self.stage, rows=self.rows)
        if self.rank is not None:
            out["rank"] = self.rank
        out.update(chosen_in_stage=self.chosen_in_stage, chosen=self.chosen)
        return out


def candidate(origin, sigma, C, fits, seconds) -> Candidate:
    return Candidate(origin, float(sigma), float(C), int(fits), float(seconds))


def carried(chosen: Candidate, size: int, exponent: float) -> Candidate:
    """The choice of the stage before as a candidate of a stage of ``size`` rows."""
    return candidate("carried", chosen.sigma, carry_C(chosen.C, chosen.rows, size, exponent), 0, 0)


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
            cache_size=200.0,
            coef0=0.0,
            gamma=gamma,
            epsilon=0.0,
            max_iter=-1,
            random_seed=0,
        )
        support, n_iter = out[0], out[8]
    return int(support.size), int(np.sum(n_iter))


def libsvm_cost_ratio(params, X, y, sw, multiclass) -> tuple[float, int]:
    """The final SVC's work at ``params`` over ``SVC()``'s on the same rows
    (:func:`_libsvm_work`), and the fits it took: the predicted cost of the final fit in
    ``SVC()`` fits (both grow alike with the rows).  Support vectors and iterations both
    count: a large C takes many more iterations than ``SVC()`` but keeps fewer columns, and
    iterations alone overstated the final fit three- to tenfold on the benchmark's cells
    (``docs/notes/auto_fidelity.md``)."""
    n_classes = int(np.unique(y).size)
    kw = {} if sw is None else {"sample_weight": sw}
    d = X.shape[1]
    with warnings.catch_warnings():  # the prediction's fit: the final fit warns of its own
        warnings.simplefilter("ignore", SklearnConvergenceWarning)
        final = make_final_estimator(params, multiclass=multiclass, n_classes=n_classes)
        a = _libsvm_work(final.fit(X, y, **kw), d)
    b = _work(*default_svc_fit(X, y, sw), d)
    return a / max(b, 1.0), 2


def svc_sv_fraction(X, y, sw) -> float:
    """Share of the rows that are support vectors of scikit-learn's ``SVC()`` on them (the
    probe of the cost model, :func:`svmtune.methods._fidelity.svc_fit_cost`); rows of
    weight 0 are left out."""
    keep = slice(None) if sw is None else np.asarray(sw) > 0
    X, y = X[keep], np.asarray(y)[keep]
    n_sv, _ = default_svc_fit(X, y, None if sw is None else np.asarray(sw)[keep])
    return n_sv / max(X.shape[0], 1)


@dataclass(frozen=True)
class Probe:
    """``SVC()`` fitted on nested probes of ``rows`` rows: its share of support vectors on
    each (``fractions``), their work (:func:`svmtune.methods._fidelity.svc_fit_cost` of each
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
    """``SVC()`` on the first :data:`~svmtune.methods._fidelity.PROBE_ROWS` rows of ``order``
    and, where the data have more, on twice as many (all where fewer): the shares of support
    vectors from which the cost model's unit is taken at all rows (the share falls as the
    rows grow; :mod:`svmtune.methods._fidelity`)."""
    t0 = time.perf_counter()
    n, d = X.shape
    sizes = [min(n, PROBE_ROWS)] + ([min(n, 2 * PROBE_ROWS)] if n > PROBE_ROWS else [])
    rows_used, fractions, work = [], [], 0.0
    for size in sizes:
        rows = stage_rows(order, size, groups)
        f = svc_sv_fraction(X[rows], y[rows], None if sw is None else sw[rows])
        rows_used.append(int(rows.size))
        fractions.append(f)
        work += svc_fit_cost(rows.size, d, f)
    return Probe(tuple(rows_used), tuple(fractions), work, time.perf_counter() - t0)


def on_bound(point: dict[str, float], log2_sigma, log2_C, better_outside=None) -> dict[str, float]:
    """``point`` (``sigma``, ``C``) with a value within round-off of its box's bound set to the
    bound itself (``exp(log(2^8))`` is ``255.99999999999994``), and a :class:`BoundWarning`
    for each where the bound bit: ``better_outside(params)`` (None: always) is True where
    the referee scores the point one octave outside that bound lower than ``point``.

    A refinement ends on the upper bound of C in ordinary use (breast cancer: RBSVM's
    criterion still falls, ever more slowly, as C grows on nearly separable rows, while the
    leave-one-out error no longer moves), so the bound alone says nothing of the choice: the
    warning says the optimum may lie outside the box only where the referee, which makes the
    choice, would choose a point beyond it (issue 63)."""
    out = dict(point)
    for name, box in (("sigma", log2_sigma), ("C", log2_C)):
        t = float(np.log2(out[name]))
        side = "lower" if abs(t - box[0]) <= 1e-6 else "upper" if abs(t - box[1]) <= 1e-6 else None
        if side is None:
            continue
        out[name] = 2.0 ** float(box[0] if side == "lower" else box[1])
        beyond = dict(out, **{name: out[name] * (0.5 if side == "lower" else 2.0)})
        if better_outside is not None and not better_outside(beyond):
            continue
        warnings.warn(
            f"auto chose {name} = {out[name]:g}, the {side} bound of its search range "
            f"[2^{box[0]:g}, 2^{box[1]:g}], and its referee scores {name} = "
            f"{beyond[name]:g} beyond it lower; the optimum may lie outside the range: widen "
            f"log2_{name} (method_params) or check the feature scaling",
            BoundWarning,
            stacklevel=user_stacklevel(),
        )
    return out


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


def final_rule_text(plan, ratio, lowrank, reserve, rows, rank, use_lowrank) -> str:
    """``final_rule`` after a subsampled or low-rank last stage: the model chosen and why,
    libsvm's predicted cost (``ratio``, from ``rows`` rows), the budget left (or, where the
    plan overran a budget below its least, that nothing is and the reserve was used), and
    the low-rank model's on ``rank`` landmarks."""
    left = plan.left
    budget = (
        f"{left:.2f} left of the budget"
        if left >= 0
        else f"nothing left of the budget of {plan.budget:.3g} (the plan's least is "
        f"{plan.min_budget:.3g}), its reserve of {reserve:.2f} for the final model"
    )
    if use_lowrank:
        chose = "the low-rank L2-SVM: libsvm's fit costs more than that and than the budget allows"
    elif ratio <= max(left, reserve):
        chose = "libsvm's SVC: its fit is within what the budget keeps for the final model"
    else:
        chose = "libsvm's SVC: the low-rank L2-SVM would cost more"
    return (
        f"{chose}; libsvm's fit predicted at {ratio:.2f} SVC() fits (its support vectors and "
        f"iterations against SVC()'s on {rows:,} rows), {budget}; the low-rank L2-SVM "
        f"predicted at {lowrank:.2f} ({rank} landmarks)"
    )


def exact_rule(family: str, estimate: float) -> str:
    """``final_rule`` where the last stage is exact on all rows: the referee's family."""
    name = {"l1": "libsvm's SVC", "l2": "the exact L2-SVM"}.get(family, family)
    return (
        f"{name}: the last stage is exact on all rows, and the referee's leave-one-out error "
        f"of this family at the chosen point is the lowest ({estimate:.4f})"
    )


def final_rule(plan, params, rank, landmarks, X, y, sw, order, multiclass) -> dict[str, Any]:
    """libsvm's SVC, or the low-rank L2-SVM where libsvm's fit would cost more than the
    budget has left (at least its reserve for the final model) and more than the
    low-rank model on ``rank`` landmarks, as many as the last stage used at the chosen
    point, or (``rank`` None: that stage was exact) as many as the trace rule takes at
    the chosen width on the rows the libsvm fit is predicted from (:mod:`svmtune.methods.auto`'s
    docstring); ``landmarks``: the trace rule's ``(max_rank, tol)``."""
    n, d = X.shape
    left = plan.left  # negative where the plan overran a budget below its least
    unit = svc_fit_cost(n, d, plan.sv_fraction)
    rows = stage_rows(order, max(plan.stages[0].size, n // 8))
    w = None if sw is None else sw[rows]
    if rank is None:
        idx, _ = pivoted_cholesky_landmarks(
            X[rows], params["sigma"], tol=landmarks[1], max_rank=landmarks[0], sample_weight=w
        )
        rank = int(idx.size)
    lowrank = lowrank_eval_cost(n, d, plan.n_tasks, rank) / unit
    ratio, fits = libsvm_cost_ratio(params, X[rows], y[rows], w, multiclass)
    # the plan's reserve for the final model (Plan.final_cost), on the landmarks in use
    reserve = min(1.0, lowrank)
    use_lowrank = ratio > max(left, reserve) and lowrank < ratio
    why = final_rule_text(plan, ratio, lowrank, reserve, rows.size, rank, use_lowrank)
    return {"final_model": "lowrank" if use_lowrank else "l1", "why": why, "n_svm_fits": fits}


def better_outside(referee, chosen, params, st, scored) -> bool:
    """Whether ``referee(candidate, st)`` scores ``params`` (``chosen`` moved one octave past a
    bound of its box) lower than ``chosen`` on its stage ``st``: the bound bit
    (:func:`on_bound`).  The point scored joins ``scored`` (its SVM fits are counted)."""
    c = candidate("outside", params["sigma"], params["C"], 0, 0.0)
    referee(c, st)
    scored.append(c)
    mine = lowest_estimate(chosen, st.families)[0]
    scores = [c.estimates.get(f) for f in st.families if c.estimates.get(f) is not None]
    return bool(scores) and min(scores) < mine


def lowest_estimate(c: Candidate, families: list[str]) -> tuple[float, str]:
    """``c``'s lowest estimate and its family; equal estimates go to the family listed first
    (``min`` keeps the first of equal keys, and so does the ``min`` over candidates)."""
    scores = [(c.estimates[f], f) for f in families if c.estimates.get(f) is not None]
    return min(scores, key=lambda s: s[0])


def same_point(c: Candidate, others: list[Candidate]) -> bool:
    return any(
        np.isclose(c.sigma, o.sigma, rtol=1e-9) and np.isclose(c.C, o.C, rtol=1e-9) for o in others
    )


class PlanProgress:
    """The share of the plan's predicted cost done, as the progress bar's unit
    :data:`PLAN_UNIT`: the stages and the final fit, each weighed by its predicted cost
    (:attr:`svmtune.methods._fidelity.Plan.cost`), so that the bar's units are the planned
    work and its ETA (:meth:`svmtune._progress.Progress.eta`) the predicted work left at the
    pace of the finished part (issue 63).  Every evaluation advances it by its stage's
    predicted cost per evaluation, a refinement's as its gradient steps are reported, each
    stage ends at the share the plan gives the stages through it, and the final fit's share
    is reserved for the tuner's final fit (:meth:`svmtune._progress.Progress.final_step`).
    Candidates and gradient steps are counted beside it."""

    PLAN_UNIT = "% of the planned cost"

    def __init__(self, reporter, plan, probe=None, clock=time.perf_counter):
        self.reporter, self.plan = reporter, plan
        self.spent, self.shown = 0.0, 0
        self.stage = 0  # the stage running: the refinements' steps are its evaluations
        self._steps = 0  # gradient steps reported since the last evaluations counted
        # the work after the probes: the stages, then the final-model rule and the final fit
        self.total = sum(s.cost for s in plan.stages) + plan.rule_cost + plan.final_cost
        # the bar's share of the stages and the rule, in whole units (the rest: the final fit)
        self.stages_pct = int(round(100.0 * (self.total - plan.final_cost) / self._denominator))
        #: the probes (rows, shares of support vectors, seconds) and the measured seconds of
        #: each stage (``info["probe"]``, ``info["measured_seconds"]``)
        self.probe = None if probe is None else dataclasses.asdict(probe)
        self.stage_seconds: list[float] = []
        self.clock = clock
        self._mark = clock()
        if reporter is not None:
            reporter.note(plan.describe())
            reporter.expect(100, self.PLAN_UNIT)
            reporter.reserve_final(100 - self.stages_pct, self.PLAN_UNIT)
            reporter.listen("gradient steps", self._stepped)

    @property
    def _denominator(self) -> float:
        return max(self.total, 1e-12)

    def _through(self, index: int) -> float:
        """Predicted cost of the stages up to ``index`` included."""
        return sum(s.cost for s in self.plan.stages[: index + 1])

    def _show(self) -> None:
        pct = min(self.stages_pct, int(round(100.0 * self.spent / self._denominator)))
        if self.reporter is not None and pct > self.shown:
            self.reporter.advance(pct - self.shown, self.PLAN_UNIT)
            self.shown = pct

    def _add(self, stage, n_evals: int) -> None:
        per = stage.cost / max(stage.steps + stage.scores, 1)
        cap = self._through(min(self.stage, len(self.plan.stages) - 1))
        if self.stage >= len(self.plan.stages):  # after the stages: the rule's share too
            cap += self.plan.rule_cost
        self.spent = min(self.spent + n_evals * per, max(cap, self.spent))
        self._show()

    def _stepped(self, n: int) -> None:
        """``n`` gradient steps reported (a refinement of the running stage)."""
        if self.stage < len(self.plan.stages):
            self._steps += n
            self._add(self.plan.stages[self.stage], n)

    def evaluated(self, stage, n_evals: int = 1) -> None:
        """``n_evals`` evaluations of ``stage`` done (at most the stage's planned cost); the
        gradient steps already counted as they were reported are not counted again."""
        n = max(n_evals - self._steps, 0)
        self._steps = 0
        self._add(stage, n)

    def rule_done(self) -> None:
        """The final-model rule's fits done (after the last stage): the bar at the plan's share
        before the final fit."""
        self.spent = self._through(len(self.plan.stages) - 1) + self.plan.rule_cost
        self.stage = len(self.plan.stages)
        self._show()

    def stage_done(self, index: int, text: str) -> None:
        """Stage ``index`` finished: the bar at the plan's share through it, and a line."""
        self.spent = self._through(index)
        self.stage, self._steps = index + 1, 0
        now = self.clock()
        self.stage_seconds.append(now - self._mark)
        self._mark = now
        self._show()
        if self.reporter is not None:
            self.reporter.note(text)


@contextlib.contextmanager
def inner_advice_ignored():
    """Ignore the advice an inner selection gives its own user: that its point lies on its
    box (:class:`~svmtune.exceptions.BoundWarning`; auto warns of its own choice,
    :func:`~svmtune.methods._auto_stage.on_bound`), that a gradient search stopped at its
    evaluation budget (auto's refinements are short on purpose), and S&S's notes on its
    threshold.  A solver that did not converge, or a numerical warning, still reaches the
    user."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=BoundWarning)
        stop = "gradient search stopped before its tolerance"
        warnings.filterwarnings("ignore", message=stop, category=ConvergenceWarning)
        warnings.filterwarnings("ignore", message=".*S&S", category=UserWarning)
        yield
