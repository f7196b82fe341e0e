"""``method="auto"``: data-only starts, gradient refinements and a closed-form referee, run
on nested subsamples of growing size within a budget counted in ``SVC()`` fits.

The published methods are complementary, and this method composes them:

1. **Starts** -- data-only candidates, each at about one SVM fit or less: scikit-learn's
   ``SVC()`` point (``gamma="scale"`` on all rows, ``C = 1``; always a candidate), the median
   heuristic width with ``C = 1`` (RBSVM's start), LD's width with ``C = 1`` (Menezes et al.
   2019, ``ld_c1``) and the S&S ratio's ``(sigma, C)`` (Shamsi & Beheshti, ``ss``).
2. **Referee** -- every candidate is scored by a closed-form leave-one-out estimate of each
   model it could become (:mod:`svmtune.loo.referee`): the span-rule for libsvm's hinge-loss
   SVC (Weighted span Corollary 1, eq. (37)) and RBSVM eq. (27) for the L2-SVM (on a Nystroem
   kernel, :class:`svmtune.methods.rbsvm_lowrank.RBSVMLowRank`, where the rows are too many
   for the exact closed forms).  The candidate and final model family with the lowest
   estimate win.
3. **Refinement** -- from the start the referee ranks first, a short exact-gradient descent of
   a leave-one-out criterion (RBSVM's cross-entropy, ``refine="rbsvm"``, or the smoothed
   span, ``"span"``; :func:`svmtune.search.gradient.minimize_log_params`) within
   ``max_eval`` SVM trainings; its end point joins the candidates before the referee decides.

**Fidelities** (:mod:`svmtune.methods._fidelity`).  First ``SVC()`` is fitted on a probe
subsample of 1,000 rows and on one of 2,000 (where the data have more): its share of support
vectors, extended to all rows along the power law through the two, tells the cost model what
an ``SVC()`` fit on all rows costs on these data (the probes' fits are counted in the plan).
Steps 1-3 run on a stratified subsample whose size the plan takes from the budget; then
each larger subsample (4 times the rows, at most all of them) carries the chosen point over
(``C`` by :func:`svmtune.methods._fidelity.carry_C`), scores it beside ``SVC()``'s point and
refines it by a few more steps, exact while the dense matrices are affordable and low rank
above.  On the smallest data the first stage holds every row and this is the single-stage
method (not on 180 of the 222 small cells of ``benchmarks/auto_criteria``,
``docs/notes/auto_fidelity.md``).  The plan is a function of the rows, features, classes,
memory and ``budget``; ``info["plan"]`` holds it and ``history`` every candidate with its
``stage`` and ``rows``.  When the last stage holds fewer rows than the data, ``C`` is carried
to all rows.

**Final model.**  Where the last stage is exact on all rows, the referee's family (libsvm's
SVC or the exact L2-SVM).  Otherwise libsvm's SVC, unless its fit would cost more than the budget
has left (at least the reserve for the final model) and more than the low-rank L2-SVM
on the same landmarks rule (:class:`svmtune.estimators_lowrank.LowRankL2SVC`), costed on as
many landmarks as the last stage used at the chosen point (after an exact last stage, as the
rule takes at the chosen width on a subsample of an eighth of the rows): the libsvm fit's cost
is predicted from the support vectors and iterations of the chosen point's SVC and of
``SVC()`` on that subsample (:func:`svmtune.methods._auto_stage.libsvm_cost_ratio`);
``info["final_rule"]`` says which and why.

Ties of the referee (leave-one-out errors are counts) go to the earlier candidate in the
order above (``SVC()``'s point first: a move away from it has to show fewer leave-one-out
errors), and for one candidate to the family listed first in ``families``.

The defaults -- the median start besides ``SVC()``'s point, one RBSVM refinement, both
families with ties to the L2-SVM -- were chosen on 43 bundled data sets by comparing every
combination of starts, refinements, families and tie order offline
(``benchmarks/auto_study.py``, ``benchmarks/auto_rules.py``; ``benchmarks/auto_rules.md``),
and the refinement's criterion and steps again with the subsampled first stage, by nested
leave-one-data-set-out over runs of ``auto`` itself (``benchmarks/auto_criteria_lodo.md``).

**Sparse X.**  A scipy sparse ``X`` (CSR/CSC) takes the low-rank path at every stage: its
Nystroem factor needs only kernel columns between the rows and the landmarks, from sparse dot
products (:mod:`svmtune.methods._lowrank_search`), so ``X`` is never densified.  Starts that
need a dense ``X`` (LD, S&S) are skipped there, and LD on every low-rank stage (its pair
statistics are ``O(n^2)``).

**Groups.**  With ``groups`` the subsamples keep groups whole, and the referee and the
refinement hold out whole groups: the leave-one-group-out outputs of the L2-SVM
(:func:`svmtune.loo.rbsvm_groups.closed_form_lgo`, and its low-rank form) and RBSVM with
groups; the span-rule holds out single rows, so the family is the L2-SVM.
"""

from __future__ import annotations

import dataclasses
import time
from numbers import Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_random_state

from svmtune._progress import current as current_progress
from svmtune._progress import describe
from svmtune._validation import available_memory
from svmtune.kernels import _squared_distances, rbf_from_sqdist, rbf_params
from svmtune.loo.referee import (
    FAMILIES,
    _l1_loo_outputs,
    _l2_loo_outputs,
    _ovo_loo_outputs,
    referee_error,
)
from svmtune.methods._auto_stage import (
    Candidate,
    PlanProgress,
    StageData,
    better_outside,
    candidate,
    cost_info,
    exact_rule,
    final_rule,
    inner_advice_ignored,
    lowest_estimate,
    on_bound,
    probe_svc,
    same_point,
    warn_budget,
)
from svmtune.methods._auto_stage import carried as carried_choice
from svmtune.methods._constraints import Check, IntegerLike, Interval
from svmtune.methods._fidelity import (
    carry_C,
    carry_exponent,
    default_budget,
    nested_subsample,
    plan_stages,
    stage_rows,
)
from svmtune.methods.base import (
    Selection,
    SelectionContext,
    Selector,
    TrainingData,
    get_selector,
    ovr_tasks,
)
from svmtune.methods.baselines import LOG2_RANGE
from svmtune.search.start import EXACT_DENSE_MATRICES, initial_sigma

__all__ = ["Auto", "START_NAMES", "REFINERS"]

#: trace residual / n at which the landmarks of a low-rank stage stop before ``rank``: small,
#: so a stage takes its ``rank`` landmarks unless the kernel has lower rank
LANDMARK_TOL = 1e-4

#: the data-only starts, in the referee's tie order
START_NAMES = ("default", "median", "ld", "ss")
#: the methods behind the starts that are methods
START_METHODS = {"ld": "ld_c1", "ss": "ss"}
#: refinements: the exact gradient searches (the low-rank path refines with rbsvm_lowrank)
REFINERS = ("rbsvm", "span")


def _check_names(name: str, value, allowed, *, empty_ok: bool) -> tuple[str, ...]:
    vals = (value,) if isinstance(value, str) else value
    try:
        vals = tuple(vals)
    except TypeError:
        vals = (value,)
    bad = [v for v in vals if not isinstance(v, str) or v not in allowed]
    if bad or (not vals and not empty_ok) or len(set(vals)) != len(vals):
        raise ValueError(
            f"{name} must be {'a possibly empty' if empty_ok else 'a non-empty'} list of "
            f"distinct names among {tuple(allowed)}, got {value!r}"
        )
    return vals


def _names(allowed, *, empty_ok: bool) -> Check:
    """The constraint "a list of distinct names among ``allowed``" (:func:`_check_names`)."""
    return Check(
        lambda name, value: _check_names(name, value, allowed, empty_ok=empty_ok),
        f"a list of distinct names among {tuple(allowed)}",
    )


class Auto(Selector):
    """The default method: starts, refinements and a closed-form referee on growing subsamples.

    Parameters
    ----------
    starts : sequence of {"median", "ld", "ss"}
        Data-only starting candidates besides ``SVC()``'s point, which is always one.
    refine : sequence of {"rbsvm", "span"}
        Gradient refinements of the first stage, run from its best start (each adds one
        candidate); empty for none.  ``"span"`` holds out single rows and is skipped with
        ``groups``; later stages refine with RBSVM.
    max_eval : int
        SVM trainings of each refinement of the first stage (default 10).
    families : sequence of {"l1", "l2"}
        Final models the referee may choose where the last stage is exact on all rows:
        libsvm's hinge-loss SVC, the L2-SVM; equal estimates go to the one listed first
        (default ``("l2", "l1")``).
    log2_sigma, log2_C : (lo, hi)
        Box of the refinement in log2 units (default ``(-8, 8)``, the grid baselines').
    budget : float or None
        Cost of the selection and the final fit, in fits of scikit-learn's ``SVC()`` on all
        rows, by the cost model of :mod:`svmtune.methods._fidelity`.  None (default): 30 up to
        1,500 rows, then ``30 * 1500 / n`` (22.5 at 2,000 rows, 2.25 at 20,000: the
        budget's wall time grows as ``n``, :func:`svmtune.methods._fidelity.default_budget`).
    exact_rows : int or None
        Most rows an exact stage may take; None (default): as many as the dense ``n x n``
        matrices of the exact closed forms (``EXACT_DENSE_MATRICES`` of them) fit in the
        memory available now.  0 runs every stage low rank.
    rank : int
        Nystroem rank of the low-rank stages and of the low-rank final model
        (as :class:`~svmtune.methods.rbsvm_lowrank.RBSVMLowRank`).

    Notes
    -----
    ``history`` holds one entry per candidate: ``origin``, ``stage``, ``rows``, ``sigma``,
    ``C``, the referee's ``estimate_l1`` / ``estimate_l2`` (None where not scored),
    ``n_svm_fits`` and ``time`` (seconds) it cost, on low-rank stages ``rank`` (the landmarks
    it was scored or refined on), ``chosen_in_stage`` (the one carried to the next stage) and
    ``chosen``.  ``info`` holds ``path`` ("exact" when the
    last stage is exact on all rows, else "lowrank" or "subsample"), ``chosen`` (origin),
    ``family``, ``plan`` (the stages and their predicted costs), ``budget``,
    ``predicted_cost`` (in ``SVC()`` fits), ``min_budget``, ``predicted_costs`` and
    ``measured_seconds`` (:func:`~svmtune.methods._auto_stage.cost_info`), ``probe``,
    ``carry_exponent`` and ``final_rule`` (which final model and why).
    """

    name = "auto"
    kernels = ("rbf",)
    accepts_sparse = True  # sparse X: the low-rank path (module docstring)
    held_out = "groups"
    _parameter_constraints = {
        "starts": [_names(START_NAMES[1:], empty_ok=True)],
        "refine": [_names(REFINERS, empty_ok=True)],
        "max_eval": [IntegerLike(1)],
        "families": [_names(FAMILIES, empty_ok=False)],
        "log2_sigma": [LOG2_RANGE],
        "log2_C": [LOG2_RANGE],
        "budget": [None, Interval(Real, 0.0, None, closed="neither", note="SVC() fits")],
        "exact_rows": [None, IntegerLike(0)],
        "rank": [IntegerLike(1)],
    }

    def __init__(
        self,
        *,
        starts=("median",),
        refine=("rbsvm",),
        max_eval: int = 10,
        families=("l2", "l1"),
        log2_sigma=(-8.0, 8.0),
        log2_C=(-8.0, 8.0),
        budget: float | None = None,
        exact_rows: int | None = None,
        rank: int = 500,
    ):
        self._set_options(
            starts=starts,
            refine=refine,
            max_eval=max_eval,
            families=families,
            log2_sigma=log2_sigma,
            log2_C=log2_C,
            budget=budget,
            exact_rows=exact_rows,
            rank=rank,
        )

    def check_groups(self, groups) -> None:
        """Also raise where ``families`` leaves no family that can hold out groups."""
        super().check_groups(groups)
        if groups is not None and "l2" not in self.families:
            raise ValueError(
                f"families={self.families!r} cannot hold out groups: the span-rule of libsvm's "
                "SVC holds out single rows; include 'l2' (leave-one-group-out of the L2-SVM)"
            )

    def history_score(self, row: dict[str, Any], selection: Selection) -> float:
        """1 - the referee's estimate of the candidate's best family (NaN if unscored)."""
        errs = [row.get(f"estimate_{f}") for f in FAMILIES]
        errs = [float(e) for e in errs if e is not None and np.isfinite(e)]
        return 1.0 - min(errs) if errs else float("nan")

    def history_fit_time(self, row: dict[str, Any]) -> float:
        """A candidate's ``time``: its scores and refinement."""
        return float(row.get("time", float("nan")))

    # ------------------------------------------------------------------ plan
    def plan(
        self, n: int, d: int, n_tasks: int, *, sparse: bool = False, sv_fraction=None, probe=None
    ):
        """The stages of a run on ``n`` rows (:func:`svmtune.methods._fidelity.plan_stages`;
        ``sv_fraction``: ``SVC()``'s share of support vectors on all rows, or ``probe``:
        the probes' :class:`~svmtune.methods._auto_stage.Probe`).  A ``budget`` given below
        the plan's least warns before the work (:func:`~svmtune.methods._auto_stage.
        warn_budget`; the default is a target, kept where the data allow)."""
        probe_work = 0.0
        if probe is not None:
            sv_fraction, probe_work = probe.fraction_at(n), probe.work
        if self.exact_rows is not None:
            max_exact = int(self.exact_rows)
        else:
            avail = available_memory()
            max_exact = n if avail is None else int(np.sqrt(avail / (8.0 * EXACT_DENSE_MATRICES)))
        budget = default_budget(n) if self.budget is None else float(self.budget)
        low_only = sparse or max_exact < min(n, 2)
        plan = plan_stages(
            n,
            d,
            n_tasks,
            budget=budget,
            max_eval=self.max_eval,
            rank=self.rank,
            max_exact=max_exact,
            lowrank_only=low_only,
            sv_fraction=sv_fraction,
            # a low-rank first stage refines with RBSVM alone (_run_stage)
            refiners=min(len(self.refine), 1) if low_only else len(self.refine),
            probe_work=probe_work,
        )
        if self.budget is not None:
            warn_budget(plan)
        return plan

    # ------------------------------------------------------------------ starts
    def _start_points(self, st) -> list[Candidate]:
        """The data-only candidates of the stage ``st`` (unscored)."""
        out = []
        for origin in self.starts:
            t0 = time.perf_counter()
            if origin == "median":
                sigma, C, fits = self._median_sigma(st.X, st.sw, st.D2, st.random_state), 1.0, 0
            else:
                start = get_selector(START_METHODS[origin])
                if (st.D2 is None and start.pairwise) or (
                    sp.issparse(st.X) and not start.accepts_sparse
                ):
                    continue  # O(n^2) pair statistics on a low-rank stage; a dense X needed
                with inner_advice_ignored():  # the starts hold nothing out: no groups
                    sel = start.run(TrainingData(st.X, st.y, st.sw), st.context)
                sigma, C, fits = sel.params["sigma"], sel.params["C"], sel.n_svm_fits
            out.append(candidate(origin, sigma, C, fits, time.perf_counter() - t0))
        return out

    @staticmethod
    def _default_point(data: TrainingData) -> Candidate:
        """``SVC()``'s own point, from all rows (``gamma="scale"``, ``C = 1``)."""
        t0 = time.perf_counter()
        sel = get_selector("default").run(data, SelectionContext())
        return candidate("default", sel.params["sigma"], 1.0, 0, time.perf_counter() - t0)

    @staticmethod
    def _median_sigma(X, sw, D2, random_state) -> float:
        keep = np.ones(X.shape[0], dtype=bool) if sw is None else sw > 0
        if D2 is not None:
            return initial_sigma(D2[np.ix_(keep, keep)], rule="median")
        rng = np.random.RandomState(random_state)
        idx = np.flatnonzero(keep)
        sub = rng.choice(idx, size=min(idx.size, 2000), replace=False)
        return initial_sigma(_squared_distances(X[sub]), rule="median")

    # ------------------------------------------------------------------ referee
    def _referee_exact(self, cand, st) -> None:
        """Closed-form LOO error of each family at ``cand`` on the stage ``st`` (added to
        ``cand`` in place; a family whose estimate the refinement already gave is kept)."""
        t0 = time.perf_counter()
        K = rbf_from_sqdist(st.D2, cand.sigma)
        C, fits, supports = cand.C, 0, None
        pairwise = st.multiclass == "ovo" and len(st.tasks) > 1
        if "l1" not in cand.estimates:  # first: its support vectors start the L2-SVM's solver
            err = None
            if "l1" in self.families and st.groups is None:  # the span-rule holds out rows
                if pairwise:
                    outs = _ovo_loo_outputs(K, st.y, C, st.sw)
                else:
                    outs, supports = _l1_loo_outputs(K, st.tasks, C, st.sw)
                err, fits = referee_error(st.y, outs, st.sw, pairwise=pairwise), len(outs)
            cand.estimates["l1"] = err
        if "l2" not in cand.estimates:
            err = None
            if "l2" in self.families:
                outs = _l2_loo_outputs(
                    K, st.tasks, C, st.sw, codes=st.codes, init_supports=supports
                )
                err, fits = referee_error(st.y, outs, st.sw), fits + len(st.tasks)
            cand.estimates["l2"] = err
        cand.n_svm_fits += fits
        cand.time += time.perf_counter() - t0

    def _referee_lowrank(self, cand, st) -> None:
        """Low-rank closed-form LOO error of the L2-SVM at ``cand`` (one objective evaluation
        of RBSVM on a Nystroem kernel, :class:`~svmtune.methods.rbsvm_lowrank.RBSVMLowRank`)."""
        cand.estimates["l1"] = None
        if "l2" in cand.estimates:  # the refinement's own: the same closed form
            return
        t0 = time.perf_counter()
        point = (cand.sigma, cand.C)
        sel = self._lowrank_search(point, 1).estimate_at(st.data, st.context, rbf_params(*point))
        cand.estimates["l2"], cand.rank = sel.estimate, sel.info["rank"]
        cand.n_svm_fits += sel.n_svm_fits
        cand.time += time.perf_counter() - t0

    def _lowrank_search(self, start, max_eval: int):
        return get_selector(
            "rbsvm_lowrank",
            {
                "start": start,
                "max_eval": max_eval,
                "rank": self.rank,
                "jump_restarts": 0,
                "log2_sigma": self.log2_sigma,
                "log2_C": self.log2_C,
                # all ``rank`` landmarks (the cost model's ``m``): the trace rule alone stops
                # early at wide widths, too coarse for the large C chosen there
                "rank_tol": LANDMARK_TOL,
            },
        )

    # ------------------------------------------------------------------ refinement
    def _refine(self, refiner, best, st, max_eval: int) -> Candidate:
        """A gradient search from ``best`` on the stage ``st`` (exact: on its ``D2``; low rank
        when ``st.D2`` is None), as a candidate."""
        t0 = time.perf_counter()
        start = (best.sigma, best.C)
        if st.D2 is None:  # low rank: RBSVM on the Nystroem kernel
            search = self._lowrank_search(start, max_eval)
        else:  # exact: on the stage's squared distances (st.data.sqdist)
            opts = {"start": start, "max_eval": max_eval, "jump_restarts": 0}
            search = get_selector(
                refiner, dict(opts, log2_sigma=self.log2_sigma, log2_C=self.log2_C)
            )
        with inner_advice_ignored():
            sel = search.run(st.data, st.context)
        cand = candidate(
            refiner,
            sel.params["sigma"],
            sel.params["C"],
            sel.n_svm_fits,
            time.perf_counter() - t0,
        )
        if search.loo_family == "l2":  # eq. (27) at its end point: the referee's
            cand.estimates["l2"] = sel.estimate
        if st.D2 is None:  # the landmarks in use at its end (the trace rule may stop early)
            cand.rank = int(sel.info["rank"])
        return cand

    # ------------------------------------------------------------------ stages
    def _score(self, cand, st, progress) -> None:
        (self._referee_exact if st.D2 is not None else self._referee_lowrank)(cand, st)
        cand.stage, cand.rows = st.index, st.size
        progress.evaluated(st.stage)
        reporter = progress.reporter
        if reporter is not None:
            reporter.advance(1, "candidates")
            errs = ", ".join(
                f"{f} {cand.estimates[f]:.4f}"
                for f in FAMILIES
                if cand.estimates.get(f) is not None
            )
            reporter.line(
                f"stage {st.index} ({st.size:,} rows) {cand.origin} {describe(cand.params)}: "
                f"leave-one-out error {errs}"
            )

    def _run_stage(self, st, stage, carried, default, progress) -> list[Candidate]:
        """The candidates of one stage: the first scores ``SVC()``'s point and the starts and
        refines the best with every refiner; a later one scores ``SVC()``'s point and the
        ``carried`` choice of the stage before and refines the better with RBSVM."""
        if carried is None:
            cands = [
                default,
                *self._start_points(st),
            ]
            refiners = [r for r in self.refine if st.groups is None or _takes_groups(r)]
            if st.D2 is None:  # low rank: RBSVM on the Nystroem kernel
                refiners = refiners[:1]
        else:
            cands, refiners = [default, carried], ["rbsvm"] if stage.steps else []
        cands = [c for i, c in enumerate(cands) if not same_point(c, cands[:i])]
        for c in cands:
            self._score(c, st, progress)
        best = min(cands, key=lambda c: lowest_estimate(c, st.families)[0])
        for r in refiners:
            c = self._refine(r, best, st, stage.steps)
            progress.evaluated(stage, stage.steps)
            self._score(c, st, progress)
            cands.append(c)
        return cands

    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """See :meth:`svmtune.methods.base.Selector.run`."""
        X, y, sw, groups = data.X, data.y, data.sample_weight, data.groups
        random_state, multiclass = context.random_state, context.multiclass
        sparse = sp.issparse(X)  # the low-rank path, never densified (module docstring)
        n, d = X.shape
        n_tasks = len(ovr_tasks(y))
        order = nested_subsample(y, check_random_state(random_state), groups)
        probe = probe_svc(X, y, sw, order, groups)
        plan = self.plan(n, d, n_tasks, sparse=sparse, probe=probe)
        progress = PlanProgress(current_progress(), plan, probe)
        t_start = time.perf_counter()
        default = self._default_point(data)
        history: list[Candidate] = []
        carried, refined = None, []
        for i, stage in enumerate(plan.stages):
            st = StageData.of(
                X,
                y,
                sw,
                groups,
                stage_rows(order, stage.size, groups),
                i,
                stage,
                multiclass,
                random_state,
                self.families,
            )
            if carried is not None:
                carried = carried_choice(
                    carried,
                    st.size,
                    carry_exponent(*_sizes_and_Cs(refined)),
                )
            cands = self._run_stage(
                st,
                stage,
                carried,
                dataclasses.replace(default, n_svm_fits=0, time=0.0, estimates={}),
                progress,
            )
            history.extend(cands)
            carried = min(cands, key=lambda c: lowest_estimate(c, st.families)[0])
            for c in cands:
                c.chosen_in_stage = c is carried
            refined += [(st.size, c.C) for c in cands if c.origin in REFINERS][:1]
            progress.stage_done(
                i,
                f"stage {i}: {st.size:,} rows ({stage.path}), chose {carried.origin} "
                f"{describe(carried.params)} ({time.perf_counter() - t_start:.1f} s so far)",
            )
        return self._selection(
            plan, st, history, carried, refined, X, y, sw, order, multiclass, progress
        )

    def _selection(
        self, plan, st, history, chosen, refined, X, y, sw, order, multiclass, progress=None
    ):
        """The :class:`Selection` of a run: ``chosen`` carried to all rows, its family and the
        final-model rule, the plan's costs beside the seconds of the run's ``progress``."""
        n = X.shape[0]
        exponent = carry_exponent(*_sizes_and_Cs(refined))
        exact_all = st.size == n and st.D2 is not None
        family = lowest_estimate(chosen, st.families)[1]
        estimate = chosen.estimates[family]
        outside: list[Candidate] = []
        point = on_bound(
            chosen.params,
            self.log2_sigma,
            self.log2_C,
            better_outside=lambda p: better_outside(self._referee, chosen, p, st, outside),
        )
        C = point["C"] if st.size == n else carry_C(point["C"], st.size, n, exponent)
        params = rbf_params(point["sigma"], C)
        rule: dict[str, Any] = {"final_model": family if exact_all else "l1"}
        t_rule = time.perf_counter()
        if not exact_all:
            rule = self._final_rule(plan, params, chosen.rank, X, y, sw, order, multiclass)
        t_rule = time.perf_counter() - t_rule
        if progress is not None:
            progress.rule_done()
        for c in history:
            c.chosen = c is chosen
        return Selection(
            params=params,
            estimate=estimate,
            criterion=estimate,
            # the probe SVC(), the candidates' fits and the final rule's
            n_svm_fits=1
            + int(sum(c.n_svm_fits for c in history + outside))
            + rule.get("n_svm_fits", 0),
            history=[c.row(FAMILIES) for c in history],
            final_model=rule["final_model"],
            info={
                "path": "exact" if exact_all else ("lowrank" if st.D2 is None else "subsample"),
                "chosen": chosen.origin,
                "family": rule["final_model"],
                "referee": "span-rule / eq. (27)" if st.D2 is not None else "eq. (27), Nystroem",
                "plan": [vars(s) for s in plan.stages],
                "budget": plan.budget,
                "predicted_cost": plan.cost,
                **cost_info(plan, progress, t_rule),
                "carry_exponent": exponent,
                "svc_sv_fraction": plan.sv_fraction,
                "rank": self.rank,
                "rank_tol": LANDMARK_TOL,
                "final_rule": rule["why"] if "why" in rule else exact_rule(family, estimate),
                **({} if st.groups is None else {"n_groups": int(np.unique(st.groups).size)}),
            },
        )

    def _referee(self, cand, st) -> None:
        (self._referee_exact if st.D2 is not None else self._referee_lowrank)(cand, st)

    def _final_rule(self, plan, params, rank, X, y, sw, order, multiclass) -> dict[str, Any]:
        """libsvm's SVC or the low-rank L2-SVM (:func:`~svmtune.methods._auto_stage.
        final_rule`, the landmarks' rule of this method's ``rank`` and :data:`LANDMARK_TOL`)."""
        landmarks = (self.rank, LANDMARK_TOL)
        return final_rule(plan, params, rank, landmarks, X, y, sw, order, multiclass)


def _takes_groups(method: str) -> bool:
    return get_selector(method).holdout() in ("folds", "groups")


def _sizes_and_Cs(refined: list[tuple[int, float]]) -> tuple[list[int], list[float]]:
    """The rows and the refined C of each stage so far (for the carry exponent)."""
    return [r for r, _ in refined], [c for _, c in refined]
