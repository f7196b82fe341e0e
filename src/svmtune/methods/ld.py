"""LD-CV, LD-C1 and CV-CV (Menezes, Torres & Braga, Neurocomputing 2019, Sec. 5).

* ``ld_c1`` (:class:`LDC1`): sigma maximising the likelihood-space distance
  ``D = ||V_1 - V_2|| cos(V_1, V_2)`` (LD eq. (12)-(14)), C = 1: no user choice and no CV
  (estimate None).
* ``ld`` (:class:`LDCV`): sigma by LD, then C by 10-fold CV over the grid ``2^-5, ..., 2^8``.
* ``cv_cv`` (:class:`CVCV`): the paper's CV grid over sigma in ``2^-6, ..., 2^4`` and C in
  ``2^-5, ..., 2^8`` (steps of 1 in log2), i.e. :class:`~svmtune.methods.grid.GridSearch`
  with those ranges.

The width search is the paper's golden section on log sigma (Sec. 5.3), preceded by a coarse
scan of log2 sigma over ``[-8, 9]`` (step 1) so that a local maximum at tiny sigma cannot
capture it (:func:`svmtune.search.scalar.grid_then_refine_max`); ``Selection.info`` reports
the number of objective evaluations.  The objective is computed from the class-block kernel
means (:mod:`svmtune.criteria.likelihood`), exact for small n and from a pair-distance
histogram (O(bins) per evaluation) otherwise.

Multiclass: one-vs-rest as in the paper (glass, segmentation); one sigma for all tasks
maximises the **mean** of the one-vs-rest objectives (``multiclass="mean"``, or ``"min"``).
When the final SVM is libsvm's one-vs-one (``SVMTuner(multiclass="ovo")``) the binary tasks
are the class pairs instead, and C is cross-validated on one-vs-one SVMs.

LD-CV and LD-C1 share :class:`~svmtune.methods.esdr.WidthIndexSelector` with ESDR-CV, DBTC-CV
and J4-CV; every option documented there applies (LD-C1 fixes ``c_search="fixed"``, ``C=1``).
"""

from __future__ import annotations

from svmtune.criteria._common import BlockStats
from svmtune.criteria.likelihood import ld_objective
from svmtune.methods.esdr import WidthIndexSelector
from svmtune.methods.grid import GridSearch

__all__ = ["LDCV", "LDC1", "CVCV"]

#: LD width search: coarse scan of log2 sigma, then golden section (LD Sec. 5.3)
LD_DEFAULTS = {
    "log2_sigma": (-8.0, 9.0, 1.0),
    "refine": "golden",
    "plateau": "argmax",
    "multiclass": "mean",
    "log2_C": (-5.0, 8.0, 1.0),
}


class _LDWidth(WidthIndexSelector):
    """The LD objective (LD eq. (13)), mean over the final SVM's binary tasks for multiclass."""

    index = "ld"
    pairwise = True  # the class statistics of every pair of rows

    def objective(self, stats: BlockStats, scheme: str = "ovr"):
        return ld_objective(stats, reduce=self.multiclass, scheme=scheme)


class LDCV(_LDWidth):
    """LD-CV: sigma by the likelihood-space distance, C by 10-fold CV over 2^-5..2^8.

    Defaults follow the paper (``c_search="grid"``); options: see
    :class:`~svmtune.methods.esdr.WidthIndexSelector`.
    """

    name = "ld"
    defaults = {**LD_DEFAULTS, "c_search": "grid"}


class LDC1(_LDWidth):
    """LD-C1: sigma by the likelihood-space distance and C = 1 (no CV, no estimate).

    Accepts the width-search options of :class:`~svmtune.methods.esdr.WidthIndexSelector`;
    C and everything about its search are fixed.
    """

    name = "ld_c1"
    defaults = LD_DEFAULTS
    fixed = {"c_search": "fixed", "C": 1.0}
    unused = ("log2_C", "couple_C", "c_coarse_step", "c_xtol", "n_splits", "scoring")


class CVCV(GridSearch):
    """CV-CV (LD Sec. 5): 10-fold CV grid over sigma in 2^-6..2^4 and C in 2^-5..2^8.

    A :class:`~svmtune.methods.grid.GridSearch` with the LD paper's ranges (11 x 14 = 154
    candidates); all its options apply.
    """

    name = "cv_cv"

    def __init__(self, *, log2_sigma=(-6.0, 4.0, 1.0), log2_C=(-5.0, 8.0, 1.0), **options):
        super().__init__(log2_sigma=log2_sigma, log2_C=log2_C, **options)
