"""The multi-fidelity plan of ``method="auto"``: stage sizes from a cost model in ``SVC()`` fits.

``auto`` selects on nested stratified subsamples of growing size (successive halving's idea,
Jamieson & Talwalkar 2016, with the closed-form leave-one-out criteria and their gradients in
place of trained-and-scored candidates): the starts, the referee and most refinement steps on
a first subsample where exact closed forms are cheap, then a few steps at each larger size,
exact while its ``n x n`` matrices are affordable and on a Nystroem kernel above, until the
budget is spent or all rows are used.  Everything here is a pure function of the shape of
the data (rows, features, one-vs-rest tasks), the share of support vectors of a probe
``SVC()`` fit (a count, not a time), the memory and the budget, so a plan is the same on
every run.

**Cost model.**  The unit is one fit of scikit-learn's ``SVC()`` on all ``n`` rows; the work
of an ``SVC()`` fit, of an exact and of a low-rank evaluation and of the final-model rule is
counted in :mod:`svmtune.methods._cost_model`.

**The share of support vectors at ``n`` rows.**  ``SVC()``'s share of support vectors falls
as the rows grow (towards a floor of about twice the Bayes risk, Steinwart 2003): on
20,000 rows of ``make_classification`` it is 0.56 on 1,000 rows, 0.47 on 2,000 and 0.24 on
all 20,000.  Taken at the probe's 1,000 rows, the unit (an ``SVC()`` fit on all rows)
was overstated 2.4-fold there, and every stage's predicted cost in its fits understated as
much (issue 63: a plan of 2.1 fits took 8 to 11).  ``auto`` therefore fits ``SVC()`` on two
nested probes, :data:`PROBE_ROWS` rows and twice that (all rows where fewer), and
:func:`sv_fraction_at` extends the share to ``n`` rows along the power law through the two
(its exponent clipped to ``[-1, 0]``: the share does not grow, the support vectors do not
fall); on the data above it gives 0.27 at 20,000 rows.  The probes' own fits are counted in
the plan (:attr:`Plan.probe_cost`), as is the final-model rule's work, its libsvm fits at
the share of support vectors of their own rows (:attr:`Plan.rule_cost`,
:func:`svmtune.methods._cost_model.rule_work`).

**Carrying C between sizes.**  The L2-SVM minimises ``|v|^2 / 2 + C/2 sum_i w_i xi_i^2``: its
regularisation per row is ``lambda = 1 / (C sum w)``.  A subsample's optimum ``C_s`` carried
to ``t`` rows is ``C_t = C_s (t / s)^a`` (:func:`carry_C`): ``a = -1`` keeps ``lambda`` (exact
when the larger set repeats the smaller one), ``a = 0`` keeps ``C`` (libsvm's convention, and
what a halving search does with its candidates), ``a > 0`` lets ``lambda`` fall faster than
``1/n``, as the optimal regularisation of Gaussian-kernel SVMs can on low-noise data, where
the width shrinks too (Steinwart & Christmann 2008, ch. 8).  Which holds depends on the data
(RBSVM's optimum at 250 to 2,000 rows: C stays at the box bound on ijcnn1 and a9a, grows ten-
to a hundredfold on eeg_eye_state; ``docs/notes/auto_fidelity.md``), so ``auto`` measures it:
every stage refines ``C`` again from the carried value, and ``a`` is the slope of
``log C`` against ``log size`` over the stages refined so far (:func:`carry_exponent`),
clipped to ``[-1, 1]``; with one stage ``a = 0``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.utils.validation import check_random_state

from svmtune.methods._cost_model import (
    GROWTH,
    LARGE_ROWS,
    exact_eval_cost,
    lowrank_eval_cost,
    rule_cost,
    rule_rows,
    sv_fraction_at,
    svc_fit_cost,
)

__all__ = [
    "Plan",
    "Stage",
    "carry_C",
    "carry_exponent",
    "budget_floor",
    "default_budget",
    "exact_eval_cost",
    "lowrank_eval_cost",
    "nested_subsample",
    "plan_stages",
    "rule_rows",
    "stage_rows",
    "sv_fraction_at",
    "svc_fit_cost",
]

#: the smallest first stage: below about 200 rows a leave-one-out error moves in steps of
#: half a point and more, too coarse to rank candidates
MIN_FIRST = 200
#: share of the selection budget the first stage may use: it runs the starts, the referee
#: and the long refinement; the rest goes to the larger stages
FIRST_SHARE = 0.6
#: objective evaluations of the refinement at every stage after the first
LATER_STEPS = 3
#: referee scores per stage: the first scores its starts and its refinement's end (with the
#: median start and one refinement: 3; ``auto`` passes its own count to :func:`plan_stages`),
#: a later one at least ``SVC()``'s point and one racing candidate
FIRST_SCORES = 5
LATER_SCORES = 2
#: the last stage where the others end before all rows: ``C`` alone, refined on all rows at
#: the chosen width on the Nystroem kernel (:mod:`svmtune.methods._auto_allrows`)
ALL_ROWS_PATH = "lowrank_C"
#: its evaluations: the carried ``C`` and up to three steps of two octaves from it (a
#: factor of 64; measured on ijcnn1 only, ``docs/notes/auto_fidelity.md``: not chosen
#: across data sets, and the stage is off by default)
ALL_ROWS_EVALS = 4


#: the largest n of the small-data regime, where the budget is a fixed number of ``SVC()`` fits
SMALL_ROWS = 1500
#: the budget there, in ``SVC()`` fits
SMALL_BUDGET = 30.0


def default_budget(
    n: int,
    d: int | None = None,
    n_tasks: int = 1,
    *,
    sv_fraction: float | None = None,
    first_evals: int = 10 + FIRST_SCORES,
    rank: int = 500,
    probe_work: float = 0.0,
    all_rows_evals: int = 0,
) -> float:
    """The default budget in ``SVC()`` fits on all rows: up to 1,500 rows ``30`` or the floor
    in work of :func:`budget_floor` (given ``d``; with the probes' ``probe_work``, which the
    plan takes from the budget), whichever is more, so that every row is selected on; then
    ``30 * 1500 / n`` (22.5 at 2,000 rows, 2.25 at 20,000) for the subsamples (at least the
    final fit's reserve and the probes' work), and (given ``d``) the work of
    ``all_rows_evals`` low-rank evaluations on all rows for the last stage that refines ``C``
    there (:data:`ALL_ROWS_PATH`); above :data:`LARGE_ROWS` the selection's work at
    ``LARGE_ROWS`` rows and no all-rows stage (:func:`_large_budget`).

    Up to 1,500 rows (the small-data regime of ``benchmarks/auto_eval.md``) a fit of
    ``SVC()`` takes milliseconds and the closed forms' fixed overheads need a few dozen of
    them.  Beyond, the budget's wall time grows as ``n``, as the low-rank path does at a
    fixed rank (``O(n m^2)`` per step, :func:`lowrank_eval_cost`): with a fit of ``SVC()``
    costing ``n^2`` (:func:`svc_fit_cost`), the budget in its fits falls as ``1 / n``, so
    that on large data the selection runs on subsamples and ends on the cheaper final
    model.  The 30 is the issue's target for the small-data median; the break is where that
    regime ends; the power is the low-rank path's, none of them fitted to a data set.  The
    all-rows stage's work grows as ``n`` too (``O(n m^2)`` per evaluation).
    """
    if n > LARGE_ROWS:
        return _large_budget(n, d, n_tasks, sv_fraction, rank, probe_work)
    if n > SMALL_ROWS:
        count = SMALL_BUDGET * SMALL_ROWS / float(n)
        if d is None or not all_rows_evals:
            return count
        # the all-rows stage, where plan_stages plans it: from what the final fit and the
        # probes leave, after a first stage of at most n / GROWTH^2 rows
        unit = svc_fit_cost(n, d, sv_fraction)
        kept = _final_reserve(n, d, n_tasks, rank, unit) + probe_work / unit
        base = max(count, kept)
        first = _first_size(
            min(n, MIN_FIRST), n, "exact", first_evals, d, n_tasks, rank, unit, base - kept
        )
        if first * GROWTH**2 > n:
            return count
        return base + _stage_cost(n, "lowrank", all_rows_evals, d, n_tasks, rank, unit)
    if d is None:
        return SMALL_BUDGET
    count = SMALL_BUDGET
    floor = budget_floor(n, d, n_tasks, sv_fraction=sv_fraction, evals=first_evals, rank=rank)
    floor += probe_work / svc_fit_cost(n, d, sv_fraction)
    return max(count, floor)


def _large_budget(n, d, n_tasks, sv_fraction, rank, probe_work) -> float:
    """The default budget above :data:`LARGE_ROWS` rows: the selection's work (its stages and
    the final-model rule, the budget beyond the final fit's reserve and the probes) as at
    ``LARGE_ROWS`` rows, and the final fit's reserve and the probes' work at ``n``.

    Below, the budget's wall time grows as ``n`` (:func:`default_budget`); at ``10^6`` rows
    that is a first stage of 6,421 exact rows that took 139 s alone on this project's 2-core
    machine (issue 64, whose target is 2 minutes for the selection and the final model).
    Above ``LARGE_ROWS`` only the final fit (``O(n m^2)`` on the low-rank path) and the
    passes over all rows grow with ``n``; the subsamples the selection works on stop
    growing.  Without ``d`` (no cost model) the count at ``LARGE_ROWS`` scaled as ``SVC()``'s
    unit, ``(LARGE_ROWS / n)^2``."""
    count = SMALL_BUDGET * SMALL_ROWS / float(LARGE_ROWS)
    scale = (LARGE_ROWS / float(n)) ** 2  # an SVC() fit's work grows as the rows squared
    if d is None:
        return count * scale

    def kept(rows: int) -> float:
        unit = svc_fit_cost(rows, d, sv_fraction)
        return _final_reserve(rows, d, n_tasks, rank, unit) + probe_work / unit

    return max(count - kept(LARGE_ROWS), 0.0) * scale + kept(n)


def budget_floor(
    n: int,
    d: int,
    n_tasks: int = 1,
    *,
    sv_fraction: float | None = None,
    evals: int = 15,
    rank: int = 500,
) -> float:
    """The floor of the default budget up to :data:`SMALL_ROWS` rows, in ``SVC()`` fits on
    all ``n`` rows: the work of an exact first stage of ``evals`` evaluations on all ``n``
    rows, with the final fit's reserve, so that such data are selected on all their rows
    (issue #62).

    Where an ``SVC()`` fit takes milliseconds a budget counted in its fits buys too little:
    30 fits of ``SVC()`` on 1,000 rows are a fraction of a second, and made the plan
    subsample 180 of the 222 small cells of ``benchmarks/auto_eval.md``, at 0.16 points of
    mean accuracy.  The floor is a count of work (the cost model's units), so the plan stays
    a function of the data's shape; the seconds it buys are measured in
    ``benchmarks/auto_eval.md`` (up to 1,500 rows) and ``benchmarks/scaling_auto.md``.
    Above :data:`SMALL_ROWS` rows the count of :func:`default_budget` stays: a floor that
    kept a first stage of 1,500 rows would make ``auto`` costlier than scikit-learn's
    halving search at 2,000 rows (ijcnn1: a plan predicted at 170 ``SVC()`` fits, against
    the 128 the halving search took in ``benchmarks/scaling_auto.md``).
    """
    unit = svc_fit_cost(n, d, sv_fraction)
    final = _final_reserve(n, d, n_tasks, rank, unit)
    first = evals * exact_eval_cost(n, d, n_tasks) / unit
    # the first stage may take FIRST_SHARE of what is left after the final fit
    return final + first / FIRST_SHARE * (1.0 + 1e-9)


def _final_reserve(n: int, d: int, n_tasks: int, rank: int, unit: float) -> float:
    """The budget kept for the final fit, in ``SVC()`` fits (``unit``): one, or the low-rank
    L2-SVM's on ``rank`` landmarks where that is cheaper (:attr:`Plan.final_cost`)."""
    return min(1.0, lowrank_eval_cost(n, d, n_tasks, rank) / unit)


@dataclass(frozen=True)
class Stage:
    """One fidelity: ``size`` rows, the ``path`` of its closed forms ("exact" or
    "lowrank"), ``steps`` refinement evaluations and ``scores`` referee scores, and its
    predicted ``cost`` in ``SVC()`` fits on all rows."""

    size: int
    path: str
    steps: int
    scores: int
    cost: float


@dataclass(frozen=True)
class Plan:
    """The stages of one ``auto`` run and the budget they were planned for.

    ``final_cost`` is the cost reserved in the budget for the final model: one ``SVC()`` fit,
    or the low-rank L2-SVM's predicted fit where that is cheaper (the final-model rule of
    :mod:`svmtune.methods.auto` takes it where libsvm's fit would cost more than is left).
    ``probe_cost`` is the probes' ``SVC()`` fits, done before the plan, and ``rule_cost`` the
    final-model rule's work (:func:`svmtune.methods._cost_model.rule_work`: two libsvm fits
    on an eighth of the rows or more, its held-out predictions, the low-rank model's
    landmarks and fit where it runs them; 0 where the last stage is exact on all rows,
    which has no such rule).  ``min_budget`` is the least budget this plan keeps
    to: the probes, the smallest first stage (:data:`MIN_FIRST` rows, all where fewer), the
    rule and the final model; a smaller budget is overrun (``auto`` warns before the work,
    :class:`svmtune.exceptions.BudgetWarning`).
    """

    n: int
    d: int
    n_tasks: int
    budget: float
    stages: tuple[Stage, ...]
    final_cost: float = 1.0
    sv_fraction: float | None = None
    probe_cost: float = 0.0
    rule_cost: float = 0.0
    min_budget: float = 0.0

    @property
    def cost(self) -> float:
        """Predicted cost of the probes, the selection, the final-model rule and the final
        fit, in ``SVC()`` fits."""
        return float(
            self.probe_cost + sum(s.cost for s in self.stages) + self.rule_cost + self.final_cost
        )

    @property
    def left(self) -> float:
        """The budget left for the final model after the probes, the stages and the rule
        (negative where the plan overruns the budget: ``budget < min_budget``)."""
        return float(
            self.budget - self.probe_cost - sum(s.cost for s in self.stages) - self.rule_cost
        )

    def describe(self) -> str:
        """One line: the stages' sizes, paths and steps, and the budget."""
        parts = [f"{s.size:,} rows {s.path} ({s.steps} steps)" for s in self.stages]
        return (
            f"plan: {' -> '.join(parts)}; predicted {self.cost:.3g} of a budget of "
            f"{self.budget:.3g} SVC() fits"
        )


def _stage_cost(s, path, evals, d, n_tasks, rank, unit) -> float:
    per = (
        exact_eval_cost(s, d, n_tasks)
        if path == "exact"
        else lowrank_eval_cost(s, d, n_tasks, rank)
    )
    return evals * per / unit


def plan_stages(
    n: int,
    d: int,
    n_tasks: int,
    *,
    budget: float,
    max_eval: int,
    rank: int,
    max_exact: int,
    lowrank_only: bool = False,
    sv_fraction: float | None = None,
    refiners: int = 1,
    first_scores: int = FIRST_SCORES,
    probe_work: float = 0.0,
    all_rows_evals: int = 0,
    share_at: Callable[[int], float] | None = None,
) -> Plan:
    """The stages of ``auto`` on ``n`` rows of ``d`` features within ``budget`` ``SVC()`` fits.

    The first stage is exact on the largest subsample (at least :data:`MIN_FIRST` rows, at
    most ``max_exact``, the rows whose dense matrices fit in memory) whose starts, referee
    scores and ``refiners * max_eval`` refinement evaluations take at most
    :data:`FIRST_SHARE` of the budget left after the final fit.  Each later stage is
    :data:`GROWTH` times larger (all ``n`` rows once that leaves out less than a third of
    them), takes the cheaper of the exact and the low-rank path (exact only up to
    ``max_exact`` rows) and as many evaluations, up to :data:`LATER_STEPS` beyond its referee
    scores, as the rest of the budget pays for; stages stop when a stage's scores no longer
    fit or all rows are used.  ``lowrank_only`` (sparse ``X``) keeps every stage low rank.
    Where they end before all rows, a last stage of ``all_rows_evals`` low-rank
    evaluations on all rows refines ``C`` (:data:`ALL_ROWS_PATH`), its work kept first,
    where the budget pays for it and the first stage holds at most ``n / GROWTH^2`` rows
    (else its ``O(n m^2)`` evaluations cost more than they save, ``docs/notes/auto_fidelity``).

    Parameters
    ----------
    n, d, n_tasks : int
        Rows, features and one-vs-rest tasks (1 for two classes).
    budget : float
        ``SVC()`` fits on all ``n`` rows.
    max_eval, refiners, first_scores : int
        Refinement evaluations of each of the first stage's ``refiners``, and its referee
        scores (its starts and each refinement's end point).
    rank, max_exact : int
        Landmarks of the low-rank path; most rows the exact path may take (memory).
    sv_fraction : float, optional
        Share of support vectors of the probe ``SVC()`` (:func:`svc_fit_cost`).
    probe_work : float
        Work of the probes' ``SVC()`` fits (:func:`svc_fit_cost` of each at its own share),
        spent before the plan: counted in its cost and taken from the budget.
    share_at : callable, optional
        ``SVC()``'s share of support vectors on ``r`` rows (the probes'
        :meth:`~svmtune.methods._auto_final.Probe.fraction_at`), at which the final-model
        rule's fits are priced on their own rows (None: ``sv_fraction`` at every size).

    Returns
    -------
    Plan
    """
    unit = svc_fit_cost(n, d, sv_fraction)
    final = _final_reserve(n, d, n_tasks, rank, unit)
    probe = float(probe_work) / unit
    left = max(budget - final - probe, 0.0)
    share = share_at if share_at is not None else (lambda r: sv_fraction)
    first_path = "lowrank" if lowrank_only else "exact"
    evals0 = refiners * max_eval + first_scores
    cap = n if first_path == "lowrank" else min(n, max_exact)
    smallest = min(n, MIN_FIRST)
    least = _stage_cost(smallest, first_path, evals0, d, n_tasks, rank, unit)
    first = functools.partial(
        _first_size, smallest, cap, first_path, evals0, d, n_tasks, rank, unit
    )
    # the all-rows stage's work, kept first where the budget leaves room for it and the
    # first stage then leaves C to be carried over more than two growth steps
    c_all = _stage_cost(n, "lowrank", all_rows_evals, d, n_tasks, rank, unit)
    s0 = first(left - c_all) if 0 < c_all <= left else n
    if s0 * GROWTH**2 <= n:
        left -= c_all
    else:
        s0, c_all = first(left), 0.0
    c0 = _stage_cost(s0, first_path, evals0, d, n_tasks, rank, unit)
    stages = [Stage(int(s0), first_path, int(max_eval), FIRST_SCORES, c0)]
    # the final-model rule's work (_cost_model.rule_work) after a first stage of s0 rows (0
    # where the stages end exact on all rows), with its landmarks where the last is exact
    rule = functools.partial(rule_cost, n, d, n_tasks, rank=rank, unit=unit, share=share,
                             lowrank_fit=final < 1.0)  # fmt: skip
    curve = final >= 1.0  # the learning-curve test, where libsvm's fit is the final reserve
    left -= c0 + rule(s0, landmarks=first_path == "exact", curve=curve)
    stages += _later_stages(s0, n, left, max_exact, lowrank_only, d, n_tasks, rank, unit)
    if c_all and stages[-1].size < n:
        stages.append(Stage(n, ALL_ROWS_PATH, all_rows_evals - 1, 1, c_all))
    exact_last = stages[-1].path == "exact"
    # no rule where the stages end exact on all rows; the curve test where they end short
    c_rule = 0.0 if exact_last and stages[-1].size >= n else rule(
        s0, landmarks=exact_last, curve=curve and stages[-1].size < n)  # fmt: skip
    # the least budget kept to: the smallest first stage, and the rule where it runs then
    one_stage_exact = smallest >= n and first_path == "exact"
    c_min = 0.0 if one_stage_exact else rule(
        smallest, landmarks=first_path == "exact", curve=curve and smallest < n)  # fmt: skip
    return Plan(n, d, n_tasks, float(budget), tuple(stages), final, sv_fraction, probe,
                c_rule, probe + least + final + c_min)  # fmt: skip


def _later_stages(size, n, left, max_exact, lowrank_only, d, n_tasks, rank, unit) -> list:
    """The stages after a first of ``size`` rows within ``left`` of the budget: each
    :data:`GROWTH` times larger (all ``n`` rows once that leaves out less than a third of
    them) on the cheaper path, with as many refinement steps (up to :data:`LATER_STEPS`)
    beyond its :data:`LATER_SCORES` scores as the budget pays for."""
    out = []
    while size < n:
        size = n if 1.5 * GROWTH * size >= n else GROWTH * size
        exact_ok = not lowrank_only and size <= max_exact
        paths = ["exact", "lowrank"] if exact_ok else ["lowrank"]
        path = min(paths, key=lambda p: _stage_cost(size, p, 1, d, n_tasks, rank, unit))
        per = _stage_cost(size, path, 1, d, n_tasks, rank, unit)
        steps = min(LATER_STEPS, int(left // per) - LATER_SCORES)
        if steps < 0:
            break
        cost = per * (steps + LATER_SCORES)
        out.append(Stage(int(size), path, int(steps), LATER_SCORES, cost))
        left -= cost
    return out


def _first_size(smallest, cap, path, evals, d, n_tasks, rank, unit, left) -> int:
    """The largest first stage (at least ``smallest`` rows, at most ``cap``) whose ``evals``
    evaluations take at most :data:`FIRST_SHARE` of ``left`` (bisection on the monotone
    cost)."""

    def fits(s):
        return _stage_cost(s, path, evals, d, n_tasks, rank, unit) <= FIRST_SHARE * left

    if fits(cap):
        return int(cap)
    lo, hi = smallest, cap
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return int(lo)


def nested_subsample(y: np.ndarray, random_state, groups: np.ndarray | None = None) -> np.ndarray:
    """An order of the rows whose every prefix is a stratified random subsample.

    Each class is shuffled and its ``j``-th row gets the key ``(j + u) / n_class`` (``u``
    uniform): sorting by key interleaves the classes in proportion, so a prefix of any length
    holds every class within one row of its share (and two rows of every class lead, so a
    prefix of ``2 k`` rows or more has all ``k`` classes), and the stages' subsamples are
    nested.
    With ``groups`` whole groups are ordered the same way (stratified by the class of their
    first row) and their rows kept together; :func:`stage_rows` cuts at group boundaries.

    The random numbers belong to the rows, not to the classes: two uniforms are drawn per
    row, all at once, and a class's shuffle is the order of its rows' first uniforms
    (:func:`_class_keys`).  The order therefore depends on which rows share a class, never on
    the names or the sorted order of the classes: renaming the labels, or swapping the two
    classes of a binary problem, gives the same subsamples for the same ``random_state``.
    """
    rng = check_random_state(random_state)
    y = np.asarray(y)
    if groups is not None:
        labels, first, codes = np.unique(np.asarray(groups), return_index=True, return_inverse=True)
        rank = np.empty(labels.size, dtype=int)
        rank[nested_subsample(y[first], rng)] = np.arange(labels.size)
        return np.argsort(rank[codes.ravel()], kind="stable")
    shuffle, offset = rng.uniform(size=(2, y.size))
    return np.argsort(
        _class_keys(np.unique(y, return_inverse=True)[1].ravel(), shuffle, offset), kind="stable"
    )


def _class_keys(codes: np.ndarray, shuffle: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """The sort keys of :func:`nested_subsample`: row ``i`` of a class of ``m`` rows, ``j``-th
    of its class by ``shuffle``, gets ``(j + offset[i]) / m``, less 1 for the class's first
    two rows (they lead, so every prefix of ``2 k`` rows holds all ``k`` classes).

    A pure function of the partition of the rows into classes and of the rows' own random
    numbers: permuting the class codes leaves the keys unchanged.
    """
    key = np.empty(codes.size)
    for c in np.unique(codes):
        rows = np.flatnonzero(codes == c)
        j = np.empty(rows.size)
        j[np.argsort(shuffle[rows], kind="stable")] = np.arange(rows.size)
        key[rows] = (j + offset[rows]) / rows.size - (j < 2)
    return key


def stage_rows(order: np.ndarray, size: int, groups: np.ndarray | None = None) -> np.ndarray:
    """The first ``size`` rows of ``order`` (:func:`nested_subsample`), sorted; with
    ``groups`` extended to the end of the last group begun, so no group is split."""
    size = min(int(size), order.size)
    if groups is not None and size < order.size:
        g = np.asarray(groups)[order]
        while size < order.size and g[size] == g[size - 1]:
            size += 1
    return np.sort(order[:size])


def carry_exponent(sizes, Cs) -> float:
    """``a = d log C / d log n`` from the optima refined at two or more sizes (the slope of
    a least-squares line through ``(log size, log C)``), clipped to ``[-1, 1]`` (module
    docstring); 0 with fewer than two sizes."""
    sizes = np.asarray(sizes, dtype=float)
    Cs = np.asarray(Cs, dtype=float)
    if sizes.size < 2 or np.ptp(np.log(sizes)) == 0:
        return 0.0
    slope = np.polyfit(np.log(sizes), np.log(Cs), 1)[0]
    return float(np.clip(slope, -1.0, 1.0))


def carry_C(C: float, n_from: float, n_to: float, exponent: float) -> float:
    """``C`` chosen on ``n_from`` rows carried to ``n_to``: ``C (n_to / n_from)^exponent``.

    ``exponent = -1`` keeps the L2-SVM's regularisation per row ``1 / (C sum w)``: on a set
    that repeats each row of the smaller one ``k`` times, ``C / k`` gives the same model
    (the loss sum is ``k`` times larger); ``exponent = 0`` keeps ``C``.
    """
    if not -1.0 <= exponent <= 1.0:
        raise ValueError(f"exponent must be in [-1, 1], got {exponent}")
    return float(C) * (float(n_to) / float(n_from)) ** float(exponent)
