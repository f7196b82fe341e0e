"""Paired comparison of two candidates' per-row leave-one-out losses: is one better beyond noise?

``auto``'s referee (:mod:`svmtune.methods.auto`) scores every candidate by closed-form
leave-one-out outputs on the same rows, so two candidates can be compared row by row.  With
``d_i = L_i(challenger) - L_i(incumbent)`` the per-row difference of a loss, the mean
difference has the standard error ``sd(d) / sqrt(n)`` (the paired t statistic's denominator;
e.g. Dietterich 1998, Neural Computation 10(7), on comparing classifiers on the same rows, and
Nadeau & Bengio 2003 for the variance of such estimates), and

    z = mean(d) / (sd(d) / sqrt(n))

is approximately standard normal when the two are equally good (the central limit theorem
over rows; for the 0/1 loss this is McNemar's test on the discordant rows in its normal
form).  A challenger replaces the incumbent when ``z < -threshold``: one-sided, so with
``threshold = 1.645`` a challenger as good as the incumbent switches in about 5 % of
comparisons (``tests/loo/test_paired.py`` measures the rate by simulation), where the
minimum of the point estimates switches in about half of them.

Weighted rows count as repeated rows (a weight is a multiplicity), with the effective number
of rows ``(sum w)^2 / sum w^2`` in the standard error; with ``groups`` the rows of a group are
not independent (a group's rows share their held-out model), so the differences are summed
per group and the standard error is taken over groups (a cluster-robust standard error).

Functions take arrays and return numbers; the orchestration is the method's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PairedComparison", "paired_comparison", "paired_z"]


@dataclass(frozen=True)
class PairedComparison:
    """The paired comparison of a challenger with an incumbent on one loss: the mean
    difference (negative: the challenger is better), its standard error, ``z = mean / se``,
    the number of independent units (rows, or groups) and the loss's name."""

    loss: str
    mean: float
    se: float
    z: float
    units: int

    def describe(self) -> str:
        return f"{self.loss} {self.mean:+.4f} (se {self.se:.4f}, z {self.z:+.2f})"


def paired_z(diff, sample_weight=None, groups=None) -> float:
    """``mean(d) / se(d)`` of the per-row differences ``diff`` (module docstring): 0 where every
    difference is 0 (no evidence either way), +-inf where all are equal and not 0."""
    return _paired(np.asarray(diff, dtype=float), sample_weight, groups)[2]


def paired_comparison(
    challenger, incumbent, loss: str = "0/1", sample_weight=None, groups=None
) -> PairedComparison:
    """Compare two candidates' per-row losses (arrays of the same rows).

    Parameters
    ----------
    challenger, incumbent : array (n,)
        Per-row losses of the two candidates on the same rows.
    loss : str
        The loss's name, for :meth:`PairedComparison.describe`.
    sample_weight : array (n,), optional
        Row weights (multiplicities).
    groups : array (n,), optional
        Group labels: differences summed per group, the standard error over groups.

    Returns
    -------
    PairedComparison
    """
    a = np.asarray(challenger, dtype=float)
    b = np.asarray(incumbent, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(
            f"challenger and incumbent must be 1-d losses of the same rows, got shapes "
            f"{a.shape} and {b.shape}"
        )
    mean, se, z, units = _paired(a - b, sample_weight, groups)
    return PairedComparison(loss, mean, se, z, units)


def _paired(d, sample_weight, groups) -> tuple[float, float, float, int]:
    """``(mean, se, z, units)`` of the differences ``d`` (unchecked kernel)."""
    w = np.ones(d.size) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    keep = w > 0
    d, w = d[keep], w[keep]
    if groups is not None:
        _, codes = np.unique(np.asarray(groups)[keep], return_inverse=True)
        # per group: its weighted sum of differences and its weight (a cluster's total)
        dw = np.bincount(codes, weights=w * d)
        w = np.bincount(codes, weights=w)
        d = dw / w
    total = w.sum()
    if d.size == 0 or total <= 0:
        return 0.0, 0.0, 0.0, 0
    mean = float(w @ d / total)
    n_eff = total**2 / float(w @ w)
    var = float(w @ (d - mean) ** 2 / total) * n_eff / max(n_eff - 1.0, 1.0)
    se = float(np.sqrt(var / n_eff))
    if se > 0:
        z = mean / se
    else:
        z = 0.0 if mean == 0 else float(np.copysign(np.inf, mean))
    return mean, se, float(z), int(d.size)
