"""``auto``'s referee (:mod:`svmtune.methods.auto`): a candidate's closed-form leave-one-out
outputs, row by row (:mod:`svmtune.loo.referee`), and the paired decision between a stage's
candidates and the race's survivors from them (:mod:`svmtune.loo.paired`)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from svmtune.kernels import rbf_from_sqdist, rbf_params
from svmtune.loo.paired import PairedComparison, paired_comparison
from svmtune.loo.referee import _l1_loo_outputs, _l2_loo_outputs, _ovo_loo_outputs, row_losses
from svmtune.methods._auto_stage import Candidate, lowest_estimate, same_point

__all__ = ["Referee", "best_family", "score_exact", "score_lowrank"]


def score_exact(cand: Candidate, st, families) -> None:
    """Closed-form leave-one-out outputs of each of ``families`` at ``cand`` on the exact stage
    ``st`` (:class:`~svmtune.methods._auto_stage.StageData`): their per-row losses
    (:func:`svmtune.loo.referee.row_losses`, for the paired tests) and error rates, added to
    ``cand`` in place.  The span-rule holds out single rows, so with groups only the
    L2-SVM's leave-one-group-out outputs are scored."""
    t0 = time.perf_counter()
    K = rbf_from_sqdist(st.D2, cand.sigma)
    C, fits, supports = cand.C, 0, None
    pairwise = st.multiclass == "ovo" and len(st.tasks) > 1
    cand.estimates["l1"] = cand.estimates["l2"] = None
    if "l1" in families and st.groups is None:
        if pairwise:
            outs = _ovo_loo_outputs(K, st.y, C, st.sw)
        else:  # its support vectors start the L2-SVM's solver
            outs, supports = _l1_loo_outputs(K, st.tasks, C, st.sw)
        _add_losses(cand, "l1", row_losses(st.y, outs, pairwise=pairwise), st.sw)
        fits = len(outs)
    if "l2" in families:
        outs = _l2_loo_outputs(K, st.tasks, C, st.sw, codes=st.codes, init_supports=supports)
        _add_losses(cand, "l2", row_losses(st.y, outs), st.sw)
        fits += len(st.tasks)
    cand.n_svm_fits += fits
    cand.time += time.perf_counter() - t0


def score_lowrank(cand: Candidate, st, search) -> None:
    """Low-rank closed-form leave-one-out outputs of the L2-SVM at ``cand`` on the stage
    ``st``: one objective evaluation of ``search`` (an
    :class:`~svmtune.methods.rbsvm_lowrank.RBSVMLowRank`) on its Nystroem kernel."""
    cand.estimates["l1"] = None
    t0 = time.perf_counter()
    sel = search.estimate_at(st.data, st.context, rbf_params(cand.sigma, cand.C))
    _add_losses(cand, "l2", row_losses(st.y, sel.info["loo"]), st.sw)
    cand.rank = sel.info["rank"]
    cand.n_svm_fits += sel.n_svm_fits
    cand.time += time.perf_counter() - t0


def _add_losses(cand: Candidate, family: str, losses, sw) -> None:
    """``cand``'s per-row losses of ``family`` and its error rate (weighted by the rows'
    weights, as :func:`svmtune.loo.referee.referee_error`)."""
    cand.losses[family] = losses
    err = losses[0]
    cand.estimates[family] = float(err.mean() if sw is None else sw @ err / sw.sum())


@dataclass(frozen=True)
class Referee:
    """The referee's rule: a candidate replaces the incumbent (``SVC()``'s point, the first
    candidate of every stage) only when it is better beyond noise, by the paired comparison
    of their per-row leave-one-out losses on the stage's rows (:mod:`svmtune.loo.paired`):
    its 0/1 loss lower by more than ``z`` standard errors, or (``smooth``) its
    cross-entropy lower by more than ``z`` standard errors with a 0/1 error no higher.  Of
    the candidates that pass, the lowest leave-one-out error wins (ties to the earlier).

    The same comparison, against the stage's winner at its own threshold ``race_z``, decides
    which candidates race on to the next, larger stage (:meth:`survivors`): every one not
    worse than the winner beyond noise.
    Where the closed forms are biased (pessimistic at large ``C`` where support sets move,
    ``tests/loo/test_referee.py``) the bias is shared by candidates at nearby points and
    largely cancels in the paired difference; where it does not, it errs against the move
    away from ``SVC()``'s point, the conservative side.
    """

    z: float
    smooth: bool
    race_z: float
    sample_weight: np.ndarray | None = None
    groups: np.ndarray | None = None

    def compare(self, a: Candidate, b: Candidate, families) -> tuple[PairedComparison, ...]:
        """Paired comparisons of ``a`` against ``b`` (``a - b``, negative: ``a`` is better):
        the 0/1 loss of each as the final model of its own best family (the errors of two
        final models, comparable whatever their families), and the cross-entropy of both as
        the final model of ``a``'s best family (the scales of two families' outputs differ,
        so their cross-entropies are compared within one)."""
        fa, fb = best_family(a, families), best_family(b, families)
        kw = {"sample_weight": self.sample_weight, "groups": self.groups}
        return (
            paired_comparison(a.losses[fa][0], b.losses[fb][0], "0/1", **kw),
            paired_comparison(a.losses[fa][1], b.losses[fa][1], "cross-entropy", **kw),
        )

    def beyond_noise(self, tests: tuple[PairedComparison, ...], z=None) -> str | None:
        """The test by which the first of a comparison is better by more than ``z`` (default
        the referee's ``z``) standard errors, or None."""
        z = self.z if z is None else z
        t01, txe = tests
        if t01.z < -z:
            return f"0/1 z {t01.z:+.2f}"
        if self.smooth and txe.z < -z and t01.mean <= 0:
            return f"cross-entropy z {txe.z:+.2f}"
        return None

    def decide(self, cands: list[Candidate], families) -> Candidate:
        """The winner among ``cands`` (the incumbent first); records each challenger's tests
        against the incumbent and the verdict on it (``Candidate.tests``, ``decided``)."""
        incumbent, passed = cands[0], []
        incumbent.decided = "incumbent"
        for c in cands[1:]:
            c.tests = self.compare(c, incumbent, families)
            why = self.beyond_noise(c.tests)
            c.decided = f"beyond noise: {why}" if why else "within noise of the incumbent"
            if why:
                passed.append(c)
        if not passed:
            return incumbent
        # the lowest error; equal errors to the earlier candidate (min keeps the first)
        return min(passed, key=lambda c: lowest_estimate(c, families)[0])

    def survivors(self, cands: list[Candidate], winner: Candidate, families) -> list[Candidate]:
        """The candidates the next stage races: the winner and every candidate it does not
        beat by more than ``race_z`` standard errors (the incumbent first when it survives).

        A candidate is dropped only when it is worse beyond noise (F-race's elimination,
        one-sided at ``race_z``); the others go on to more rows, where the standard errors
        are smaller, instead of being settled on the first subsample."""
        out = [winner]
        for c in cands:
            if c is winner or same_point(c, out):
                continue
            if self.beyond_noise(self.compare(winner, c, families), self.race_z) is None:
                out.append(c)
        return sorted(out, key=lambda c: c is not cands[0])


def best_family(c: Candidate, families) -> str:
    """The family of ``c``'s lowest estimate (:func:`lowest_estimate`)."""
    return lowest_estimate(c, families)[1]
