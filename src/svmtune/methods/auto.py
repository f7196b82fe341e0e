"""``method="auto"``: data-only starts, gradient refinements and a closed-form referee, run
on nested subsamples of growing size within a budget counted in ``SVC()`` fits.

The published methods are complementary, and this method composes them:

1. **Starts** -- data-only candidates, each at about one SVM fit or less: scikit-learn's
   ``SVC()`` point (``gamma="scale"`` on all rows, ``C = 1``; always a candidate), the median
   heuristic width with ``C = 1`` (RBSVM's start), LD's width with ``C = 1`` (Menezes et al.
   2019, ``ld_c1``) and the S&S ratio's ``(sigma, C)`` (Shamsi & Beheshti, ``ss``).
2. **Referee** -- every candidate is scored by closed-form leave-one-out outputs of each
   model it could become, per row (:mod:`svmtune.loo.referee`): the span-rule for libsvm's
   hinge-loss SVC (Weighted span Corollary 1, eq. (37)) and RBSVM eq. (27) for the L2-SVM
   (on a Nystroem kernel, :class:`svmtune.methods.rbsvm_lowrank.RBSVMLowRank`, where the
   rows are too many for the exact closed forms).  ``SVC()``'s point is the incumbent: a
   challenger replaces it only when it is better beyond noise, by a paired test of their
   per-row losses on the same rows (:class:`svmtune.methods._auto_referee.Referee`,
   :mod:`svmtune.loo.paired`): its 0/1 loss lower by more than ``noise_z`` standard errors,
   or (``smooth``) its cross-entropy (RBSVM eq. (28)) lower by as much with a 0/1 error no
   higher.  Of those that pass, the lowest error wins; ``history`` records each test.
3. **Refinement** -- from the referee's winner among the starts, a short exact-gradient
   descent of a leave-one-out criterion (RBSVM's cross-entropy, ``refine="rbsvm"``, or the
   smoothed span, ``"span"``; :func:`svmtune.search.gradient.minimize_log_params`) within
   ``max_eval`` SVM trainings; its end point joins the candidates before the referee
   decides again.

**Fidelities** (:mod:`svmtune.methods._fidelity`).  ``SVC()`` fitted on probes of 1,000 and
2,000 rows gives the cost model its share of support vectors on all rows (a power law).
Steps 1-3 run on a stratified subsample whose size the plan takes from the budget; up to
1,500 rows the default budget's floor in work puts every row in it
(:func:`svmtune.methods._fidelity.budget_floor`).  Then each larger subsample (4 times the
rows, at most all of them) races the candidates the referee could not separate from its
winner (racing, as in successive halving and F-race, with closed-form leave-one-out scores in
place of folds): it scores ``SVC()``'s point and those candidates (``C`` carried by
:func:`svmtune.methods._fidelity.carry_C`), refines the winner with the evaluations left and
decides again, exact while the dense matrices are affordable and low rank above; a stage
never makes more evaluations than the plan gives it.  The plan is a function of the rows,
features, classes, memory and ``budget``; ``info["plan"]`` holds it and ``history`` every
candidate with its ``stage`` and ``rows``.  When the last stage holds fewer rows than the
data, ``C`` is carried to all rows (:func:`svmtune.methods._fidelity.carry_C`).

**All rows** (``all_rows_evals``, off by default).  Where the first stage holds at most
``n / 16`` rows (``C`` would be carried over more than two growth steps), a last stage
refines ``C`` on all rows at the chosen width on the Nystroem kernel
(:mod:`svmtune.methods._auto_allrows`), where its landmarks hold the kernel there.

**At all rows.**  Where the last stage holds fewer rows than the data and the final model is
libsvm's, ``SVC()``'s point replaces the chosen one where it is ahead beyond ``race_z`` on
held-out rows, both fitted on two nested subsamples and compared along the learning curve
extended to all rows (:mod:`svmtune.methods._auto_curve`).

**Final model** (:func:`svmtune.methods._auto_final.final_rule`; ``docs/methods/auto.md``).
Where the last stage is exact on all rows, the referee's family and ``estimate`` its
leave-one-out error; otherwise libsvm's SVC, or the low-rank L2-SVM where libsvm's fit would
cost more than the budget has left *and* the low-rank model's error on held-out rows is
within :data:`LOWRANK_TOLERANCE` of libsvm's; ``estimate`` is then the held-out error of
the model returned, and ``info["final_rule"]`` says which and why.
Ties of the referee go to the earlier candidate in the order above (``SVC()``'s point
first), and for one candidate to the family listed first in ``families``.

The defaults were chosen on 43 bundled data sets offline (``benchmarks/auto_rules.md``) and by
nested leave-one-data-set-out (``benchmarks/auto_criteria_lodo.md``, ``auto_referee_rules.md``).

**Sparse X.**  A scipy sparse ``X`` takes the low-rank path at every stage, never densified
(kernel columns to the landmarks from sparse dot products,
:mod:`svmtune.methods._lowrank_search`); the starts that need a dense ``X`` (LD, S&S) are skipped.

**Dask X.**  A dask ``X`` is never gathered whole where it does not fit in memory
(:mod:`svmtune.methods._auto_rows`): subsamples are drawn to memory, ``SVC()``'s width is a
reduction, and the final model is the low-rank L2-SVM fitted in ``X``'s row blocks.

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

from svmtune._memory import release_freed_memory
from svmtune._progress import current as current_progress
from svmtune._progress import describe
from svmtune._validation import available_memory
from svmtune.kernels import rbf_params
from svmtune.loo.referee import FAMILIES
from svmtune.methods._auto_allrows import all_rows_stage
from svmtune.methods._auto_curve import svc_point, test_choice
from svmtune.methods._auto_final import cost_info, exact_rule, final_rule, probe_svc, warn_budget
from svmtune.methods._auto_referee import Referee, score_exact, score_lowrank
from svmtune.methods._auto_rows import default_sigma, gather_refusal, in_memory_note, skip_all_rows
from svmtune.methods._auto_stage import (
    Candidate,
    PlanProgress,
    StageData,
    better_outside,
    candidate,
    inner_advice_ignored,
    lowest_estimate,
    on_bound,
    refined_exponent,
    same_point,
    start_points,
    takes_groups,
)
from svmtune.methods._auto_stage import carried as carried_choice
from svmtune.methods._constraints import Boolean, IntegerLike, Interval, Names
from svmtune.methods._fidelity import (
    ALL_ROWS_PATH,
    carry_C,
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
from svmtune.search.start import EXACT_DENSE_MATRICES

__all__ = ["Auto", "START_NAMES", "REFINERS"]

#: trace residual / n at which the landmarks of a low-rank stage stop before ``rank``: small,
#: so a stage takes its ``rank`` landmarks unless the kernel has lower rank
LANDMARK_TOL = 1e-4

#: the referee's threshold: a challenger replaces ``SVC()``'s point when its paired 0/1 loss
#: difference is below ``-NOISE_Z`` standard errors (:mod:`~svmtune.methods._auto_referee`).
#: Chosen by nested leave-one-data-set-out over 43 small and 9 scaling bundled sets among
#: 0, 1 and 1.645 with and without the cross-entropy (``benchmarks/auto_referee_rules.md``):
#: 0, the lowest error with ties to ``SVC()``'s point, in every fold, also on the 23 small
#: sets where ``SVC()`` is at least as good as the 10-fold grid
NOISE_Z = 0.0
#: the race's threshold: a candidate is dropped before a larger stage only when the stage's
#: winner beats it by more than ``RACE_Z`` standard errors (a one-sided test at 5 %); the
#: learning-curve test returns ``SVC()``'s point only where that is ahead by more
RACE_Z = 1.645
#: the data-only starts, in the referee's tie order
START_NAMES = ("default", "median", "ld", "ss")
#: refinements: the exact gradient searches (the low-rank path refines with rbsvm_lowrank)
REFINERS = ("rbsvm", "span")


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
        rows, by the cost model of :mod:`svmtune.methods._fidelity`.  None (default): up to
        1,500 rows enough work to select on all of them (at least 30), then
        ``30 * 1500 / n`` (22.5 at 2,000 rows, 2.25 at 20,000: the budget's wall time grows
        as ``n``, :func:`svmtune.methods._fidelity.default_budget`), and the all-rows
        stage's work where it is planned (``all_rows_evals``).
    exact_rows : int or None
        Most rows an exact stage may take; None (default): as many as the dense ``n x n``
        matrices of the exact closed forms (``EXACT_DENSE_MATRICES`` of them) fit in the
        memory available now.  0 runs every stage low rank.
    rank : int
        Nystroem rank of the low-rank stages and of the low-rank final model
        (as :class:`~svmtune.methods.rbsvm_lowrank.RBSVMLowRank`).
    noise_z : float
        The referee's threshold in standard errors of the paired difference: a challenger
        replaces ``SVC()``'s point only when better by more (default :data:`NOISE_Z`).
    smooth : bool
        Also let the cross-entropy of the leave-one-out outputs decide, where the 0/1 errors
        do not differ beyond noise (default False).
    race_z : float
        Candidates the stage's winner does not beat by more than ``race_z`` standard errors
        race on; the learning-curve test's threshold too (default :data:`RACE_Z`).
    all_rows_evals : int
        Where the first stage holds at most ``n / 16`` rows, low-rank evaluations on all rows
        that refine ``C`` at the chosen width instead of carrying it, paid for on top of
        the default budget (:mod:`~svmtune.methods._auto_allrows`; e.g.
        :data:`~svmtune.methods._fidelity.ALL_ROWS_EVALS`).  Default 0, ``C`` carried
        (its cost: ``docs/notes/auto_fidelity.md``).

    Notes
    -----
    ``history`` holds one entry per candidate: ``origin``, ``stage``, ``rows``, ``sigma``,
    ``C``, the referee's ``estimate_l1`` / ``estimate_l2`` (None where not scored), its
    paired tests against ``SVC()``'s point (``paired_01_diff``, ``paired_01_z``,
    ``paired_xent_diff``, ``paired_xent_z``) and verdict (``referee``),
    ``n_svm_fits`` and ``time`` (seconds) it cost, on low-rank stages ``rank`` (the landmarks
    it was scored or refined on), ``chosen_in_stage`` (the one carried to the next stage) and
    ``chosen``.  ``info`` holds ``path`` ("exact" when the
    last stage is exact on all rows, else "lowrank" or "subsample"), ``chosen`` (origin),
    ``family``, ``referee_test`` (the verdict on the chosen candidate), ``curve_test``
    (the learning-curve test's verdict, None where not run), ``noise_z``,
    ``plan`` (the stages and their predicted costs), ``budget``, ``predicted_cost`` (in
    ``SVC()`` fits), ``min_budget``, ``predicted_costs`` and ``measured_seconds``
    (:func:`~svmtune.methods._auto_final.cost_info`), ``probe``, ``carry_exponent`` and
    ``final_rule`` (which final model and why).
    """

    name = "auto"
    kernels = ("rbf",)
    accepts_sparse = True  # sparse X: the low-rank path (module docstring)
    accepts_lazy_rows = True  # its subsamples read to memory (module docstring, _auto_rows)
    held_out = "groups"
    _parameter_constraints = {
        "starts": [Names(START_NAMES[1:], empty_ok=True)],
        "refine": [Names(REFINERS, empty_ok=True)],
        "max_eval": [IntegerLike(1)],
        "families": [Names(FAMILIES, empty_ok=False)],
        "log2_sigma": [LOG2_RANGE],
        "log2_C": [LOG2_RANGE],
        "budget": [None, Interval(Real, 0.0, None, closed="neither", note="SVC() fits")],
        "exact_rows": [None, IntegerLike(0)],
        "rank": [IntegerLike(1)],
        "noise_z": [Interval(Real, 0.0, None, closed="left", note="standard errors")],
        "smooth": [Boolean()],
        "race_z": [Interval(Real, 0.0, None, closed="left", note="standard errors")],
        "all_rows_evals": [IntegerLike(0)],
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
        noise_z: float = NOISE_Z,
        smooth: bool = False,
        race_z: float = RACE_Z,
        all_rows_evals: int = 0,
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
            noise_z=noise_z,
            smooth=smooth,
            race_z=race_z,
            all_rows_evals=all_rows_evals,
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
        ``sv_fraction``: ``SVC()``'s share of support vectors on all rows, or ``probe``: the
        probes' :class:`~svmtune.methods._auto_final.Probe`).  A ``budget`` given below the
        plan's least warns before the work (:func:`~svmtune.methods._auto_final.warn_budget`)."""
        probe_work, share_at = 0.0, None
        if probe is not None:  # the shares of support vectors price the final rule's fits
            sv_fraction, probe_work, share_at = probe.fraction_at(n), probe.work, probe.fraction_at
        if self.exact_rows is not None:
            max_exact = int(self.exact_rows)
        else:
            avail = available_memory()
            max_exact = n if avail is None else int(np.sqrt(avail / (8.0 * EXACT_DENSE_MATRICES)))
        low_only = sparse or max_exact < min(n, 2)
        # a low-rank first stage refines with RBSVM alone (_run_stage)
        refiners = min(len(self.refine), 1) if low_only else len(self.refine)
        # the first stage scores SVC()'s point, the starts and each refinement's end
        first_scores = 1 + len(self.starts) + refiners
        if self.budget is None:
            budget = default_budget(
                n,
                d,
                n_tasks,
                sv_fraction=sv_fraction,
                first_evals=refiners * self.max_eval + first_scores,
                rank=self.rank,
                probe_work=probe_work,
                all_rows_evals=self.all_rows_evals,
            )
        else:
            budget = float(self.budget)
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
            refiners=refiners,
            first_scores=first_scores,
            probe_work=probe_work,
            all_rows_evals=self.all_rows_evals,
            share_at=share_at,
        )
        if self.budget is not None:
            warn_budget(plan)
        return plan

    # ------------------------------------------------------------------ starts
    @staticmethod
    def _default_point(data: TrainingData) -> Candidate:
        """``SVC()``'s own point, from all rows (``gamma="scale"``, ``C = 1``; a reduction
        over a dask ``X``, :func:`~svmtune.methods._auto_rows.default_sigma`)."""
        t0 = time.perf_counter()
        return candidate("default", default_sigma(data), 1.0, 0, time.perf_counter() - t0)

    # ------------------------------------------------------------------ referee
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
        if st.D2 is None:  # the landmarks in use at its end (the trace rule may stop early)
            cand.rank = int(sel.info["rank"])
        return cand

    # ------------------------------------------------------------------ stages
    def _score(self, cand, st, progress) -> None:
        self._referee_score(cand, st)
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

    def _referee(self, st) -> Referee:
        return Referee(self.noise_z, self.smooth, self.race_z, st.sw, st.groups)

    def _run_stage(self, st, stage, racing, default, progress) -> tuple[list, Candidate, list]:
        """One stage: score ``SVC()``'s point (the incumbent) and the challengers (the
        first stage's starts, or the candidates ``racing`` from the stage before), refine
        the referee's winner with the evaluations left, and decide again.

        Returns the stage's candidates, its winner and the survivors that race on.  A stage
        makes at most ``stage.steps + stage.scores`` evaluations (a score or a refinement
        step each): racing candidates take a later stage's scores first, and its
        refinement the rest, less one for scoring its end point; a wider race keeps the
        incumbent, the stage before's winner and the others in their order (``survivors``).
        """
        referee, fams = self._referee(st), st.families
        if racing is None:
            cands = [default, *start_points(self.starts, st)]
            refiners = [r for r in self.refine if st.groups is None or takes_groups(r)]
            if st.D2 is None:  # low rank: RBSVM on the Nystroem kernel
                refiners = refiners[:1]
            steps = stage.steps
        else:
            cands = [default, *racing]
            refiners, steps = ["rbsvm"], 0
        cands = [c for i, c in enumerate(cands) if not same_point(c, cands[:i])]
        if racing is not None:
            room = stage.steps + stage.scores
            cands = cands[: max(room, 1)]
            steps = room - len(cands) - 1  # the refinement's end point is scored too
            if steps < 1:
                refiners = []
        for c in cands:
            self._score(c, st, progress)
        best = referee.decide(cands, fams)
        for r in refiners:
            c = self._refine(r, best, st, steps)
            progress.evaluated(stage, steps)
            self._score(c, st, progress)
            cands.append(c)
        winner = referee.decide(cands, fams)
        return cands, winner, referee.survivors(cands, winner, fams)

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
        racing, refined, winner, st = None, [], None, None
        for i, stage in enumerate(plan.stages):
            rows = stage_rows(order, stage.size, groups)
            too_large = gather_refusal(X) if stage.path == ALL_ROWS_PATH else None
            if too_large is not None:  # a dask X too large to gather: C carried
                carried = carried_choice(winner, rows.size, refined_exponent(refined))
                skip_all_rows(carried, i, stage, too_large, history, progress)
                break
            # the stage before freed before this one is made (kept for the all-rows stage)
            last, st = (st if stage.path == ALL_ROWS_PATH else None), None
            release_freed_memory()
            args = (rows, i, stage, multiclass, random_state, self.families)
            st = StageData.of(X, y, sw, groups, *args)
            if stage.path == ALL_ROWS_PATH:  # C on all rows (module docstring)
                exponent = refined_exponent(refined)
                carried = carried_choice(winner, st.size, exponent)
                opts = {"rank": self.rank, "rank_tol": LANDMARK_TOL, "log2_C": self.log2_C}
                st, winner = all_rows_stage(st, last, winner, carried, self._referee(st),
                                            history, progress, **opts)  # fmt: skip
                break
            if racing is not None:
                a = refined_exponent(refined)
                racing = [carried_choice(c, st.size, a) for c in racing]
            fresh = dataclasses.replace(default, n_svm_fits=0, time=0.0, estimates={}, losses={})
            cands, winner, survivors = self._run_stage(st, stage, racing, fresh, progress)
            history.extend(cands)
            winner.chosen_in_stage = True
            refined += [(st.size, c.C) for c in cands if c.origin in REFINERS][:1]
            # SVC()'s point enters every stage afresh: the others race on
            racing = [c for c in survivors if c is not cands[0]]
            progress.stage_done(
                i,
                f"stage {i}: {st.size:,} rows ({stage.path}), chose {winner.origin} "
                f"{describe(winner.params)}"
                + (f", {len(survivors)} racing on" if i + 1 < len(plan.stages) else "")
                + f" ({time.perf_counter() - t_start:.1f} s so far)",
            )
        return self._selection(plan, st, history, winner, refined, data, order,
                               multiclass, progress, random_state)  # fmt: skip

    def _selection(self, plan, st, history, chosen, refined, data, order, multiclass,
                   progress=None, seed=None):  # fmt: skip
        """The :class:`Selection` of a run: ``chosen`` carried to all rows (or ``SVC()``'s
        point, by the learning-curve test), its family, the final-model rule, an estimate of
        the returned model's error, and the plan's costs beside the seconds of ``progress``
        (``seed``: the run's ``random_state``, for the low-rank model's landmark subsample)."""
        X, y, sw, n = data.X, data.y, data.sample_weight, data.X.shape[0]
        exponent = refined_exponent(refined)
        exact_all = st.size == n and st.D2 is not None
        carried = rbf_params(chosen.sigma, carry_C(chosen.C, st.size, n, exponent))
        t_rule = time.perf_counter()  # the learning-curve test is priced with the rule
        test = None if st.size == n else test_choice(carried, history, data, order, plan,
                                                     multiclass, self.race_z)  # fmt: skip
        if test is not None and not test.keep:  # SVC()'s point, not carried (module docstring)
            chosen, exponent = svc_point(chosen, history, test), 0.0
        family = lowest_estimate(chosen, st.families)[1]
        outside: list[Candidate] = []
        point = on_bound(
            chosen.params,
            self.log2_sigma,
            self.log2_C,
            better_outside=lambda p: better_outside(self._referee_score, chosen, p, st, outside),
        )
        C = point["C"] if st.size == n else carry_C(point["C"], st.size, n, exponent)
        params = rbf_params(point["sigma"], C)
        if exact_all and gather_refusal(X) is None:
            estimate = chosen.estimates[family]
            why = exact_rule(family, estimate)
            rule = {"final_model": family, "estimate": estimate, "why": why}
        else:
            rule = self._final_rule(plan, params, chosen.rank, X, y, sw, order, multiclass, seed)
            if rule["estimate"] is None:  # no held-out rows: the last stage's own estimate
                rule["estimate"] = chosen.estimates[family]
        rule["why"] += in_memory_note(X)
        t_rule = time.perf_counter() - t_rule
        if progress is not None:
            progress.rule_done(rule.get("final_cost"))
        for c in history:
            c.chosen = c is chosen
        return Selection(
            params=params,
            estimate=rule["estimate"],
            criterion=chosen.estimates[family],
            # the probe SVC(), the candidates' fits and the final rule's
            n_svm_fits=1
            + int(sum(c.n_svm_fits for c in history + outside))
            + rule.get("n_svm_fits", 0)
            + (0 if test is None else test.fits),
            history=[c.row(FAMILIES) for c in history],
            final_model=rule["final_model"],
            info={
                "path": "exact" if exact_all else ("lowrank" if st.D2 is None else "subsample"),
                "chosen": chosen.origin,
                "family": rule["final_model"],
                "referee": "span-rule / eq. (27)" if st.D2 is not None else "eq. (27), Nystroem",
                "referee_test": chosen.decided,
                "curve_test": None if test is None else test.describe(),
                "noise_z": self.noise_z,
                "plan": [vars(s) for s in plan.stages],
                "budget": plan.budget,
                "predicted_cost": plan.cost,
                **cost_info(plan, progress, t_rule),
                "carry_exponent": exponent,
                "svc_sv_fraction": plan.sv_fraction,
                "rank": self.rank,
                "rank_tol": LANDMARK_TOL,
                "final_rule": rule["why"],
                **({} if st.groups is None else {"n_groups": int(np.unique(st.groups).size)}),
            },
        )

    def _referee_score(self, cand, st) -> None:
        """Score ``cand`` on the stage ``st``: exact or low-rank closed forms."""
        if st.D2 is not None:
            score_exact(cand, st, self.families)
        else:
            score_lowrank(cand, st, self._lowrank_search((cand.sigma, cand.C), 1))

    def _final_rule(self, plan, params, rank, X, y, sw, order, multiclass,
                    seed=None) -> dict[str, Any]:  # fmt: skip
        """libsvm's SVC or the low-rank L2-SVM (:func:`~svmtune.methods._auto_stage.
        final_rule`: this method's ``rank``, :data:`LANDMARK_TOL`, ``seed``'s subsample)."""
        landmarks = (self.rank, LANDMARK_TOL)
        return final_rule(plan, params, rank, landmarks, X, y, sw, order, multiclass, seed=seed)
