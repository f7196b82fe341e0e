"""``auto``'s learning-curve test (:mod:`svmtune.methods.auto`): where the selection ran on
fewer rows than the data, is the chosen point still ahead of ``SVC()``'s on all of them?

The referee compares candidates on the rows of its stage; the point it chooses there is
then used on all ``n`` rows, and the best point moves with the rows (wider widths and larger
``C`` win on a few hundred rows of ijcnn1, ``SVC()``'s point on its 49,990:
``docs/notes/auto_fidelity.md``).  Rather than carry the stage's verdict to ``n``, the test
(where the plan keeps a libsvm fit for the final model, whose points it compares)
fits libsvm at both points on two nested subsamples of ``r / GROWTH`` and ``r`` rows (``r``
the final-model rule's rows, :func:`svmtune.methods._cost_model.rule_rows`) and scores both
on the same held-out rows (the next rows of the nested order).  Each held-out row's loss is
extended to ``n`` training rows along a line in ``log`` rows through its two losses
(:func:`extrapolated_losses`: a learning curve's local first-order form; Cortes, Jackel,
Solla, Vapnik & Denker 1994, "Learning curves: asymptotic values and rate of convergence",
NIPS 6, predict a classifier's error at a large training size from smaller ones), and the
two points' extended losses are compared row by row (:func:`svmtune.loo.paired.
paired_comparison`; the extension is linear in the losses, so the paired standard error
holds whatever the rows' correlation between the two sizes).  The chosen point is dropped
for ``SVC()``'s only where ``SVC()``'s extended loss is lower beyond noise, by more than
the race's threshold (``race_z`` standard errors, one-sided at 5 %: F-race's elimination
test, as the race drops a candidate before a larger stage).  Extending to ``n`` multiplies
the noise of the two differences (by up to ``1 + 2k``, ``k`` below), so the sign of the point
estimate alone would drop good choices: on ijcnn1's 5,000 rows an extended difference of
+0.5 points with a standard error of 2 would have returned ``SVC()``'s point, 2.2 points
of test accuracy below the choice (``docs/notes/auto_fidelity.md``).  The held-out rows were
used by no stage, so the test is free of the referee's selection bias (the lowest of several
noisy estimates).

Functions take arrays and return numbers or a :class:`CurveTest`; the orchestration is
:mod:`svmtune.methods.auto`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from svmtune._labels import first_seen_codes
from svmtune.kernels import rbf_params
from svmtune.loo.paired import PairedComparison, paired_comparison
from svmtune.methods._auto_final import fit_rule_svc, held_out_losses
from svmtune.methods._auto_rows import gather_refusal, take_rows
from svmtune.methods._auto_stage import Candidate, at_point
from svmtune.methods._cost_model import GROWTH, held_out_rows, rule_rows
from svmtune.methods._fidelity import stage_rows

__all__ = [
    "CurveTest",
    "curve_rows",
    "curve_test",
    "extrapolated_losses",
    "svc_point",
    "test_choice",
]


def extrapolated_losses(small, large, rows_small: int, rows_large: int, n: int) -> np.ndarray:
    """Per-row losses at ``n`` training rows on the line in ``log`` rows through the losses
    ``small`` (of a model fitted on ``rows_small`` rows) and ``large`` (on ``rows_large``):
    ``large + k (large - small)`` with ``k = log(n / rows_large) / log(rows_large /
    rows_small)``."""
    k = math.log(n / rows_large) / math.log(rows_large / rows_small)
    small, large = np.asarray(small, dtype=float), np.asarray(large, dtype=float)
    return large + k * (large - small)


@dataclass(frozen=True)
class CurveTest:
    """The chosen point against ``SVC()``'s on held-out rows (module docstring): their paired
    0/1 comparisons (chosen - ``SVC()``; negative: the chosen point is better) with models
    fitted on ``rows[0]`` and ``rows[1]`` rows, the comparison extended to ``n`` rows, the
    threshold ``z`` and the libsvm fits made."""

    rows: tuple[int, int]
    held: int
    n: int
    at_rows: tuple[PairedComparison, PairedComparison]
    at_n: PairedComparison
    z: float
    fits: int

    @property
    def keep(self) -> bool:
        """``SVC()``'s point is not ahead at ``n`` rows by more than ``z`` standard errors."""
        return self.at_n.z <= self.z

    def describe(self) -> str:
        small, large = self.at_rows
        return (
            f"learning-curve test on {self.held:,} held-out rows, chosen point - SVC()'s: "
            f"0/1 {small.mean:+.4f} fitted on {self.rows[0]:,} rows, {large.mean:+.4f} on "
            f"{self.rows[1]:,}, extended to {self.n:,} rows {self.at_n.mean:+.4f} (se "
            f"{self.at_n.se:.4f}, z {self.at_n.z:+.2f}): "
            + (
                "the chosen point is kept"
                if self.keep
                else f"SVC()'s point, ahead beyond noise (z > {self.z:g})"
            )
        )


def curve_rows(n: int, first: int) -> tuple[int, int, int]:
    """The test's training rows, small and large, and its held-out rows on ``n`` rows after a
    first stage of ``first`` rows: the final-model rule's (:func:`~svmtune.methods.
    _cost_model.rule_rows`, :func:`~svmtune.methods._cost_model.held_out_rows`) and a
    :data:`~svmtune.methods._fidelity.GROWTH`-th of them."""
    large = rule_rows(n, first)
    return max(large // GROWTH, 1), large, held_out_rows(n, large)


def curve_test(chosen, default, X, y, sw, groups, order, first, multiclass, z) -> CurveTest | None:
    """The learning-curve test of the point ``chosen`` against ``SVC()``'s ``default`` (both
    ``rbf_params``) on the rows of ``order`` (the run's nested order) after a first stage of
    ``first`` rows; None where no row is held out or a subsample lacks a class.  With
    ``groups`` the training rows end at a group's end and the standard error is taken over
    the held-out rows' groups; ``sw`` weighs the held-out rows."""
    n = X.shape[0]
    small, large, n_held = curve_rows(n, first)
    fit_rows = [stage_rows(order, s, groups) for s in (small, large)]
    held = np.sort(order[fit_rows[1].size : fit_rows[1].size + n_held])
    n_classes = np.unique(y).size
    if not held.size or any(np.unique(y[r]).size < n_classes for r in fit_rows):
        return None
    Xh = take_rows(X, held)
    losses = [[_held_losses(p, X, y, sw, r, Xh, y[held], multiclass) for r in fit_rows]
              for p in (chosen, default)]  # fmt: skip
    kw = {"sample_weight": None if sw is None else sw[held],
          "groups": None if groups is None else np.asarray(groups)[held]}  # fmt: skip
    at_rows = tuple(paired_comparison(a, b, "0/1", **kw) for a, b in zip(*losses, strict=True))
    sizes = (fit_rows[0].size, fit_rows[1].size)
    ext = [extrapolated_losses(*pair, *sizes, n) for pair in losses]
    at_n = paired_comparison(ext[0], ext[1], "0/1 at n", **kw)
    return CurveTest(sizes, int(held.size), n, at_rows, at_n, float(z), 4)


def _held_losses(params, X, y, sw, rows, Xh, yh, multiclass) -> np.ndarray:
    """0/1 losses on the held-out rows ``(Xh, yh)`` of libsvm's SVC at ``params`` fitted on
    ``rows`` as the final-model rule fits it (:func:`~svmtune.methods._auto_final.
    fit_rule_svc`)."""
    yr, w = y[rows], None if sw is None else sw[rows]
    svc = fit_rule_svc(params, take_rows(X, rows), first_seen_codes(yr), w, multiclass)
    return held_out_losses(svc, yr, Xh, yh)


def test_choice(params, history, data, order, plan, multiclass, z) -> CurveTest | None:
    """The learning-curve test of the point ``params`` against ``SVC()``'s (the last
    ``default`` candidate of ``history``) on ``data`` (a :class:`~svmtune.methods.base.
    TrainingData`) after the ``plan``'s first stage.  None at ``SVC()``'s point itself, and
    where libsvm's SVC need not be the final model the test's libsvm fits stand for: where
    the plan keeps less than an ``SVC()`` fit for the final model (:attr:`~svmtune.methods.
    _fidelity.Plan.final_cost`: the low-rank L2-SVM is cheaper) or ``X`` cannot be gathered
    (:func:`~svmtune.methods._auto_rows.gather_refusal`: a dask ``X`` past memory)."""
    default = _last_default(history)
    if at_point(default, params["sigma"], params["C"]):
        return None
    if plan.final_cost < 1.0 or gather_refusal(data.X) is not None:
        return None
    X, y, sw, groups = data.X, data.y, data.sample_weight, data.groups
    svc = rbf_params(default.sigma, default.C)
    first = plan.stages[0].size
    return curve_test(params, svc, X, y, sw, groups, order, first, multiclass, z)


def svc_point(chosen: Candidate, history: list[Candidate], test: CurveTest) -> Candidate:
    """``SVC()``'s point (the last ``default`` candidate of ``history``), where ``test`` did
    not keep ``chosen``; the verdict goes to both candidates' ``history`` entries."""
    default = _last_default(history)
    chosen.decided = f"{chosen.decided}; not at all rows: {test.describe()}"
    default.decided = f"{default.decided}; at all rows: {test.describe()}"
    return default


def _last_default(history: list[Candidate]) -> Candidate:
    return next(c for c in reversed(history) if c.origin == "default")
