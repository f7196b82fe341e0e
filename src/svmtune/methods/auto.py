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
   per-row losses on the same rows (:class:`svmtune.methods._auto_stage.Referee`,
   :mod:`svmtune.loo.paired`): its 0/1 loss lower by more than ``noise_z`` standard errors,
   or (``smooth``) its cross-entropy (RBSVM eq. (28)) lower by as much with a 0/1 error no
   higher.  Of those that pass, the lowest error wins; ``history`` records each test.
3. **Refinement** -- from the referee's winner among the starts, a short exact-gradient
   descent of a leave-one-out criterion (RBSVM's cross-entropy, ``refine="rbsvm"``, or the
   smoothed span, ``"span"``; :func:`svmtune.search.gradient.minimize_log_params`) within
   ``max_eval`` SVM trainings; its end point joins the candidates before the referee
   decides again.

**Fidelities** (:mod:`svmtune.methods._fidelity`).  First ``SVC()`` is fitted on a probe
subsample of 1,000 rows: its share of support vectors tells the cost model what an ``SVC()``
fit on all rows costs on these data.  Steps 1-3 run on a stratified subsample whose size the
plan takes from the budget; up to 1,500 rows the default budget's floor in work puts every
row in it (:func:`svmtune.methods._fidelity.budget_floor`).  Then each larger subsample (4
times the rows, at most all of them) races the candidates the referee could not separate
from its winner (racing, as in successive halving and F-race, with closed-form
leave-one-out scores in place of folds): it scores ``SVC()``'s point and those candidates
(``C`` carried by :func:`svmtune.methods._fidelity.carry_C`), refines the winner with the
evaluations left and decides again, exact while the dense matrices are affordable and low
rank above; a stage never makes more evaluations than the plan gives it.  The plan is a
function of the rows, features, classes, memory and ``budget``; ``info["plan"]`` holds it
and ``history`` every candidate with its ``stage`` and ``rows``.  When the last stage holds
fewer rows than the data, ``C`` is carried to all rows.

**Final model.**  Where the last stage is exact on all rows, the referee's family (libsvm's
SVC or the exact L2-SVM), and ``estimate`` its leave-one-out error.  Otherwise libsvm's SVC,
unless its fit would cost more than the budget has left (at least the reserve for the final
model) and more than the low-rank L2-SVM (:class:`svmtune.estimators_lowrank.LowRankL2SVC`)
on as many landmarks as the last stage used at the chosen point, *and* the low-rank model's
error on held-out rows is within :data:`LOWRANK_TOLERANCE` of libsvm's at the same point
(both fitted on a subsample of an eighth of the rows, scored on as many others of the nested
order); ``estimate`` is then the held-out error of the model returned, and
``info["final_rule"]`` says which and why.  The libsvm fit's cost is predicted from the
support vectors and iterations of the chosen point's SVC and of ``SVC()`` on that subsample
(:func:`svmtune.methods._auto_stage.libsvm_cost_ratio`).

Ties of the referee go to the earlier candidate in the order above (``SVC()``'s point
first), and for one candidate to the family listed first in ``families``.

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

from svmtune._labels import first_seen_codes
from svmtune._progress import current as current_progress
from svmtune._progress import describe
from svmtune._validation import available_memory
from svmtune.estimators_lowrank import LowRankL2SVC
from svmtune.kernels import _squared_distances, rbf_from_sqdist, rbf_params
from svmtune.loo.referee import (
    FAMILIES,
    _l1_loo_outputs,
    _l2_loo_outputs,
    _ovo_loo_outputs,
    row_losses,
)
from svmtune.lowrank import pivoted_cholesky_landmarks
from svmtune.methods._auto_stage import (
    Candidate,
    PlanProgress,
    Referee,
    StageData,
    candidate,
    inner_advice_ignored,
    libsvm_cost_ratio,
    lowest_estimate,
    on_bound,
    same_point,
    svc_sv_fraction,
)
from svmtune.methods._auto_stage import carried as carried_choice
from svmtune.methods._constraints import Boolean, Check, IntegerLike, Interval
from svmtune.methods._fidelity import (
    PROBE_ROWS,
    carry_C,
    carry_exponent,
    default_budget,
    lowrank_eval_cost,
    nested_subsample,
    plan_stages,
    stage_rows,
    svc_fit_cost,
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

#: the referee's threshold: a challenger replaces ``SVC()``'s point when its paired 0/1 loss
#: difference is below ``-NOISE_Z`` standard errors (:class:`~svmtune.methods._auto_stage.Referee`).
#: Chosen by nested leave-one-data-set-out over 43 small and 9 scaling bundled sets among
#: 0, 1 and 1.645 with and without the cross-entropy (``benchmarks/auto_referee_rules.md``):
#: 0, the lowest error with ties to ``SVC()``'s point, in every fold, also on the 23 small
#: sets where ``SVC()`` is at least as good as the 10-fold grid
NOISE_Z = 0.0
#: the race's threshold: a candidate is dropped before a larger stage only when the stage's
#: winner beats it by more than ``RACE_Z`` standard errors (a one-sided test at 5 %)
RACE_Z = 1.645
#: largest gap of the low-rank final model's held-out error over libsvm's at the same point
#: for it to be returned (half a point of accuracy)
LOWRANK_TOLERANCE = 0.005
#: most held-out rows of the final-model rule's comparison
HELD_OUT_ROWS = 20000

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
        rows, by the cost model of :mod:`svmtune.methods._fidelity`.  None (default): up to
        1,500 rows enough work to select on all of them (at least 30), then
        ``30 * 1500 / n`` (22.5 at 2,000 rows, 2.25 at 20,000: the budget's wall time grows
        as ``n``, :func:`svmtune.methods._fidelity.default_budget`).
    exact_rows : int or None
        Most rows an exact stage may take; None (default): as many as the dense ``n x n``
        matrices of the exact closed forms (``EXACT_DENSE_MATRICES`` of them) fit in the
        memory available now.  0 runs every stage low rank.
    rank : int
        Nystroem rank of the low-rank stages and of the low-rank final model
        (as :class:`~svmtune.methods.rbsvm_lowrank.RBSVMLowRank`).
    noise_z : float
        The referee's threshold in standard errors of the paired difference: a challenger
        replaces ``SVC()``'s point only when better by more (default :data:`NOISE_Z`); 0 takes
        the lowest leave-one-out error, ties to ``SVC()``'s point.
    smooth : bool
        Also let the cross-entropy of the leave-one-out outputs decide, where the 0/1 errors
        do not differ beyond noise (default False).
    race_z : float
        Candidates the stage's winner does not beat by more than ``race_z`` standard errors
        race on to the next stage (default :data:`RACE_Z`).

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
    ``family``, ``referee_test`` (the verdict on the chosen candidate), ``noise_z``,
    ``plan`` (the stages and their predicted costs), ``budget``, ``predicted_cost`` (in
    ``SVC()`` fits), ``carry_exponent`` and ``final_rule``.
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
        "noise_z": [Interval(Real, 0.0, None, closed="left", note="standard errors")],
        "smooth": [Boolean()],
        "race_z": [Interval(Real, 0.0, None, closed="left", note="standard errors")],
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
    def plan(self, n: int, d: int, n_tasks: int, *, sparse: bool = False, sv_fraction=None):
        """The stages of a run on ``n`` rows (:func:`svmtune.methods._fidelity.plan_stages`;
        ``sv_fraction``: the probe ``SVC()``'s share of support vectors)."""
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
            )
        else:
            budget = float(self.budget)
        return plan_stages(
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
        )

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
        """Closed-form leave-one-out outputs of each family at ``cand`` on the stage ``st``:
        their per-row losses (:func:`svmtune.loo.referee.row_losses`, for the paired tests)
        and error rates, added to ``cand`` in place."""
        t0 = time.perf_counter()
        K = rbf_from_sqdist(st.D2, cand.sigma)
        C, fits, supports = cand.C, 0, None
        pairwise = st.multiclass == "ovo" and len(st.tasks) > 1
        cand.estimates["l1"] = None
        if "l1" in self.families and st.groups is None:  # the span-rule holds out rows
            if pairwise:
                outs = _ovo_loo_outputs(K, st.y, C, st.sw)
            else:  # its support vectors start the L2-SVM's solver
                outs, supports = _l1_loo_outputs(K, st.tasks, C, st.sw)
            self._add_losses(cand, "l1", row_losses(st.y, outs, pairwise=pairwise), st)
            fits = len(outs)
        cand.estimates["l2"] = None
        if "l2" in self.families:
            outs = _l2_loo_outputs(K, st.tasks, C, st.sw, codes=st.codes, init_supports=supports)
            self._add_losses(cand, "l2", row_losses(st.y, outs), st)
            fits += len(st.tasks)
        cand.n_svm_fits += fits
        cand.time += time.perf_counter() - t0

    @staticmethod
    def _add_losses(cand, family, losses, st) -> None:
        """``cand``'s per-row losses of ``family`` and its error rate (weighted by the rows'
        weights, :func:`svmtune.loo.referee.referee_error`'s)."""
        cand.losses[family] = losses
        err = losses[0]
        cand.estimates[family] = float(err.mean() if st.sw is None else st.sw @ err / st.sw.sum())

    def _referee_lowrank(self, cand, st) -> None:
        """Low-rank closed-form LOO outputs of the L2-SVM at ``cand`` (one objective
        evaluation of RBSVM on a Nystroem kernel,
        :class:`~svmtune.methods.rbsvm_lowrank.RBSVMLowRank`)."""
        cand.estimates["l1"] = None
        t0 = time.perf_counter()
        point = (cand.sigma, cand.C)
        sel = self._lowrank_search(point, 1).estimate_at(st.data, st.context, rbf_params(*point))
        self._add_losses(cand, "l2", row_losses(st.y, sel.info["loo"]), st)
        cand.rank = sel.info["rank"]
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

    def _referee(self, st) -> Referee:
        return Referee(self.noise_z, self.smooth, self.race_z, st.sw, st.groups)

    def _run_stage(self, st, stage, racing, default, progress) -> tuple[list, Candidate, list]:
        """One stage: score ``SVC()``'s point (the incumbent) and the challengers (the
        first stage's starts, or the candidates ``racing`` from the stage before), refine
        the referee's winner with the evaluations left, and decide again.

        Returns the stage's candidates, its winner and the survivors that race on.  A stage
        makes at most ``stage.steps + stage.scores`` evaluations (a score or a refinement
        step each): racing candidates take a later stage's scores first, and its
        refinement the rest, less one for scoring its end point; a race wider than the
        stage's evaluations keeps the incumbent and the best of the others.
        """
        referee, fams = self._referee(st), st.families
        if racing is None:
            cands = [default, *self._start_points(st)]
            refiners = [r for r in self.refine if st.groups is None or _takes_groups(r)]
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
        probe = stage_rows(order, min(n, PROBE_ROWS), groups)
        sv_fraction = svc_sv_fraction(X[probe], y[probe], None if sw is None else sw[probe])
        plan = self.plan(n, d, n_tasks, sparse=sparse, sv_fraction=sv_fraction)
        progress = PlanProgress(current_progress(), plan)
        t_start = time.perf_counter()
        default = self._default_point(data)
        history: list[Candidate] = []
        racing, refined, winner = None, [], None
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
            if racing is not None:
                a = carry_exponent(*_sizes_and_Cs(refined))
                racing = [carried_choice(c, st.size, a) for c in racing]
            fresh = dataclasses.replace(default, n_svm_fits=0, time=0.0, estimates={}, losses={})
            cands, winner, survivors = self._run_stage(st, stage, racing, fresh, progress)
            history.extend(cands)
            for c in cands:
                c.chosen_in_stage = c is winner
            refined += [(st.size, c.C) for c in cands if c.origin in REFINERS][:1]
            # SVC()'s point enters every stage afresh: the others race on
            racing = [c for c in survivors if c is not cands[0]]
            progress.stage_done(
                i,
                f"stage {i}: {st.size:,} rows ({stage.path}), chose {winner.origin} "
                f"{describe(winner.params)}, {len(survivors)} racing on "
                f"({time.perf_counter() - t_start:.1f} s so far)",
            )
        return self._selection(plan, st, history, winner, refined, X, y, sw, order, multiclass)

    def _selection(self, plan, st, history, chosen, refined, X, y, sw, order, multiclass):
        """The :class:`Selection` of a run: ``chosen`` carried to all rows, its family and the
        final-model rule, and an estimate of the error of the model returned."""
        n = X.shape[0]
        exponent = carry_exponent(*_sizes_and_Cs(refined))
        exact_all = st.size == n and st.D2 is not None
        family = lowest_estimate(chosen, st.families)[1]
        point = on_bound(chosen.params, self.log2_sigma, self.log2_C)
        C = point["C"] if st.size == n else carry_C(point["C"], st.size, n, exponent)
        params = rbf_params(point["sigma"], C)
        if exact_all:
            rule = {
                "final_model": family,
                "estimate": chosen.estimates[family],
                "why": f"exact on all rows: the referee's family ({family}), its leave-one-out "
                "error the estimate",
            }
        else:
            rule = self._final_rule(plan, params, chosen.rank, X, y, sw, order, multiclass)
            if rule["estimate"] is None:  # no held-out rows: the last stage's own estimate
                rule["estimate"] = chosen.estimates[family]
        for c in history:
            c.chosen = c is chosen
        return Selection(
            params=params,
            estimate=rule["estimate"],
            criterion=chosen.estimates[family],
            # the probe SVC(), the candidates' fits and the final rule's
            n_svm_fits=1 + int(sum(c.n_svm_fits for c in history)) + rule.get("n_svm_fits", 0),
            history=[c.row(FAMILIES) for c in history],
            final_model=rule["final_model"],
            info={
                "path": "exact" if exact_all else ("lowrank" if st.D2 is None else "subsample"),
                "chosen": chosen.origin,
                "family": rule["final_model"],
                "referee": "span-rule / eq. (27)" if st.D2 is not None else "eq. (27), Nystroem",
                "referee_test": chosen.decided,
                "noise_z": self.noise_z,
                "plan": [vars(s) for s in plan.stages],
                "budget": plan.budget,
                "predicted_cost": plan.cost,
                "carry_exponent": exponent,
                "svc_sv_fraction": plan.sv_fraction,
                "rank": self.rank,
                "rank_tol": LANDMARK_TOL,
                "final_rule": rule["why"],
                **({} if st.groups is None else {"n_groups": int(np.unique(st.groups).size)}),
            },
        )

    def _final_rule(self, plan, params, rank, X, y, sw, order, multiclass) -> dict[str, Any]:
        """libsvm's SVC, or the low-rank L2-SVM where libsvm's fit would cost more than the
        budget has left (at least its reserve for the final model) and more than the
        low-rank model on ``rank`` landmarks, as many as the last stage used at the chosen
        point, or (``rank`` None: that stage was exact) as many as the trace rule takes at
        the chosen width on the rows the libsvm fit is predicted from (module docstring),
        and only where the low-rank model's error on held-out rows is within
        :data:`LOWRANK_TOLERANCE` of libsvm's at the same point, both fitted on those rows.

        The held-out rows are the next rows of the nested order (as many, at most
        :data:`HELD_OUT_ROWS`); the returned model's error on them is the selection's
        ``estimate`` (of a model fitted on fewer rows: somewhat pessimistic)."""
        n, d = X.shape
        left = plan.budget - sum(s.cost for s in plan.stages)
        unit = svc_fit_cost(n, d, plan.sv_fraction)
        rows = stage_rows(order, max(plan.stages[0].size, n // 8))
        held = np.sort(order[rows.size : rows.size + min(rows.size, HELD_OUT_ROWS)])
        w, wh = (None, None) if sw is None else (sw[rows], sw[held])
        if rank is None:
            idx, _ = pivoted_cholesky_landmarks(
                X[rows], params["sigma"], tol=LANDMARK_TOL, max_rank=self.rank, sample_weight=w
            )
            rank = int(idx.size)
        lowrank = lowrank_eval_cost(n, d, plan.n_tasks, rank) / unit
        ratio, fits, svc = libsvm_cost_ratio(params, X[rows], y[rows], w, multiclass)
        # the plan's reserve for the final model (Plan.final_cost), on the landmarks in use
        reserve = min(1.0, lowrank)
        cheaper = ratio > max(left, reserve) and lowrank < ratio
        why = (
            f"libsvm's fit predicted at {ratio:.2f} SVC() fits (its support vectors and "
            f"iterations against SVC()'s on {rows.size:,} rows), {max(left, 0.0):.2f} left of "
            f"the budget; the low-rank L2-SVM predicted at {lowrank:.2f} ({rank} landmarks)"
        )
        if held.size == 0:
            return {
                "final_model": "l1",
                "why": why + "; no rows held out to measure the low-rank model: libsvm",
                "n_svm_fits": fits,
                "estimate": None,
            }
        # the SVC was fitted on the first-seen codes of the rows' labels: code the held-out
        # labels alike (a class absent from the rows counts as an error)
        code = dict(zip(y[rows].tolist(), first_seen_codes(y[rows]).tolist()))
        err_l1 = _held_out_errors(
            svc, X[held], np.array([code.get(v, -1) for v in y[held].tolist()])
        )
        out = {"final_model": "l1", "n_svm_fits": fits, "estimate": _mean(err_l1, wh)}
        if cheaper:
            lr = LowRankL2SVC(
                C=params["C"], sigma=params["sigma"], rank=rank, rank_tol=LANDMARK_TOL
            )
            lr.fit(X[rows], y[rows], **({} if w is None else {"sample_weight": w}))
            err_lr = _held_out_errors(lr, X[held], y[held])
            gap = _mean(err_lr, wh) - out["estimate"]
            out["n_svm_fits"] += plan.n_tasks
            ok = gap <= LOWRANK_TOLERANCE
            why += (
                f"; on {held.size:,} held-out rows its error is {gap:+.4f} against libsvm's "
                f"({'within' if ok else 'beyond'} the tolerance {LOWRANK_TOLERANCE})"
            )
            if ok:
                out.update(final_model="lowrank", estimate=_mean(err_lr, wh))
        out["why"] = (
            why + f": {'the low-rank L2-SVM' if out['final_model'] == 'lowrank' else 'libsvm'}"
        )
        return out


def _held_out_errors(model, X, y) -> np.ndarray:
    """0/1 errors of a fitted model on rows it was not fitted on."""
    return (model.predict(X) != y).astype(float)


def _mean(err: np.ndarray, w: np.ndarray | None) -> float:
    return float(err.mean() if w is None else w @ err / w.sum())


def _takes_groups(method: str) -> bool:
    return get_selector(method).holdout() in ("folds", "groups")


def _sizes_and_Cs(refined: list[tuple[int, float]]) -> tuple[list[int], list[float]]:
    """The rows and the refined C of each stage so far (for the carry exponent)."""
    return [r for r, _ in refined], [c for _, c in refined]
