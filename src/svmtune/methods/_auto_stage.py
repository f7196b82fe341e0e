"""The pieces of ``auto``'s stages (:mod:`svmtune.methods.auto`): a stage's rows, its
candidates, the carried choice, the bound warning and the progress bar's plan (the referee
is :mod:`svmtune.methods._auto_referee`, the final model's rule and costs
:mod:`svmtune.methods._auto_final`)."""

from __future__ import annotations

import contextlib
import dataclasses
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from svmtune._warnings import user_stacklevel
from svmtune.exceptions import BoundWarning, ConvergenceWarning
from svmtune.kernels import _squared_distances
from svmtune.loo.paired import PairedComparison
from svmtune.loo.rbsvm_groups import group_codes
from svmtune.methods._auto_rows import take_rows
from svmtune.methods._fidelity import (
    carry_C,
    carry_exponent,
)
from svmtune.methods.base import SelectionContext, TrainingData, get_selector, ovr_tasks
from svmtune.search.start import initial_sigma

__all__ = [
    "median_sigma",
    "Candidate",
    "PlanProgress",
    "StageData",
    "lowest_estimate",
    "candidate",
    "carried",
    "same_point",
    "at_point",
    "on_bound",
    "better_outside",
    "inner_advice_ignored",
    "refined_exponent",
    "takes_groups",
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
        Xs, ys = take_rows(X, rows), y[rows]  # a dask X's rows computed (_auto_rows)
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


#: the methods behind the starts that are methods (the others: ``SVC()``'s point, the median)
START_METHODS = {"ld": "ld_c1", "ss": "ss"}


def start_points(starts, st: StageData) -> list[Candidate]:
    """The data-only candidates ``starts`` of the stage ``st`` (unscored): the median width at
    ``C = 1``, or a start method's point (LD's pair statistics are ``O(n^2)``: skipped on a
    low-rank stage; LD and S&S need a dense ``X``)."""
    out = []
    for origin in starts:
        t0 = time.perf_counter()
        if origin == "median":
            sigma, C, fits = median_sigma(st), 1.0, 0
        else:
            start = get_selector(START_METHODS[origin])
            if (st.D2 is None and start.pairwise) or (
                sp.issparse(st.X) and not start.accepts_sparse
            ):
                continue
            with inner_advice_ignored():  # the starts hold nothing out: no groups
                sel = start.run(TrainingData(st.X, st.y, st.sw), st.context)
            sigma, C, fits = sel.params["sigma"], sel.params["C"], sel.n_svm_fits
        out.append(candidate(origin, sigma, C, fits, time.perf_counter() - t0))
    return out


def median_sigma(st: StageData) -> float:
    """The median heuristic width (RBSVM's start) on the stage's rows of positive weight: from
    its squared distances where it has them, else from those of at most 2,000 of its rows
    drawn with its random state."""
    keep = np.ones(st.X.shape[0], dtype=bool) if st.sw is None else st.sw > 0
    if st.D2 is not None:
        return initial_sigma(st.D2[np.ix_(keep, keep)], rule="median")
    rng = np.random.RandomState(st.random_state)
    idx = np.flatnonzero(keep)
    sub = rng.choice(idx, size=min(idx.size, 2000), replace=False)
    return initial_sigma(_squared_distances(st.X[sub]), rule="median")


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
    #: per family: the per-row leave-one-out 0/1 losses and cross-entropies of the referee
    losses: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)
    #: the referee's paired comparisons with the incumbent (0/1, cross-entropy) and its verdict
    tests: tuple[PairedComparison, ...] = ()
    decided: str | None = None

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
        for t in self.tests:
            key = "01" if t.loss == "0/1" else "xent"
            out.update({f"paired_{key}_diff": t.mean, f"paired_{key}_z": t.z})
        out.update(referee=self.decided, chosen_in_stage=self.chosen_in_stage, chosen=self.chosen)
        return out


def candidate(origin, sigma, C, fits, seconds) -> Candidate:
    return Candidate(origin, float(sigma), float(C), int(fits), float(seconds))


def carried(chosen: Candidate, size: int, exponent: float) -> Candidate:
    """The choice of the stage before as a candidate of a stage of ``size`` rows."""
    return candidate("carried", chosen.sigma, carry_C(chosen.C, chosen.rows, size, exponent), 0, 0)


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
    return any(at_point(o, c.sigma, c.C) for o in others)


def at_point(c: Candidate, sigma: float, C: float) -> bool:
    """``c`` is at ``(sigma, C)`` up to round-off."""
    return bool(np.isclose(c.sigma, sigma, rtol=1e-9) and np.isclose(c.C, C, rtol=1e-9))


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
        # the final fit's share: libsvm's SVC at about one SVC() fit, the final model unless
        # the rule finds the low-rank one cheaper and as accurate (the plan reserves the
        # cheaper of the two); the rule's own prediction replaces it (rule_done)
        self.final = max(plan.final_cost, 1.0)
        self.total = sum(s.cost for s in plan.stages) + plan.rule_cost + self.final
        # the bar's share of the stages and the rule, in whole units (the rest: the final fit)
        self.stages_pct = int(round(100.0 * (self.total - self.final) / self._denominator))
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

    def rule_done(self, final_cost: float | None = None) -> None:
        """The final-model rule's fits done (after the last stage): the bar at the plan's share
        before the final fit, whose share is then the predicted ``final_cost`` of the model
        the rule chose (in ``SVC()`` fits; None: the plan's reservation), at the pace of the
        work so far: the plan reserves the cheaper final model, and libsvm's fit chosen
        for accuracy can cost many times more."""
        self.spent = self._through(len(self.plan.stages) - 1) + self.plan.rule_cost
        self.stage = len(self.plan.stages)
        self._show()
        if self.reporter is not None and final_cost is not None and self.shown > 0:
            work = max(self.total - self.final, 1e-12)
            units = max(1, int(round(self.shown * float(final_cost) / work)))
            self.reporter.rescale_final(units, self.PLAN_UNIT)

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


def takes_groups(method: str) -> bool:
    """Whether the selector ``method`` holds out whole groups (a refinement with ``groups``)."""
    return get_selector(method).holdout() in ("folds", "groups")


def refined_exponent(refined: list[tuple[int, float]]) -> float:
    """The carry exponent of the rows and the refined ``C`` of each stage so far
    (:func:`~svmtune.methods._fidelity.carry_exponent`)."""
    return carry_exponent([r for r, _ in refined], [c for _, c in refined])
