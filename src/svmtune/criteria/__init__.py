"""Data criteria for the kernel width and C, computed from the data without training an SVM.

* :mod:`~svmtune.criteria.blocks`, :mod:`~svmtune.criteria.histogram` -- the class-block
  sums of the RBF kernel matrix every criterion below reads (exact, or from pair-distance
  histograms for large n);
* :mod:`~svmtune.criteria.esdr` -- ESDR, DBTC and J4 (the class-separation indices of the
  ESDR paper);
* :mod:`~svmtune.criteria.likelihood` -- LD, the likelihood-distance criterion;
* :mod:`~svmtune.criteria.ss_core`, :mod:`~svmtune.criteria.ss_kernel`,
  :mod:`~svmtune.criteria.ss_copt` -- the S&S ratio and the C_opt curve of S&S-RB
  (:mod:`~svmtune.criteria.ss_core` states the choices made where the paper is silent);
* :mod:`~svmtune.criteria.repeats` -- how much of the data are repeated rows.
"""

from __future__ import annotations

from svmtune.criteria.blocks import RBFBlocks, kernel_block_stats, rbf_block_stats
from svmtune.criteria.esdr import dbtc_pair, esdr_pair, j4_pair, rbf_index_curve
from svmtune.criteria.likelihood import class_likelihoods, ld_curve, ld_objective
from svmtune.criteria.repeats import repeat_share
from svmtune.criteria.ss_copt import c_opt, load_copt_table
from svmtune.criteria.ss_core import ss_db, ss_ratio
from svmtune.criteria.ss_kernel import kernel_ss_ratio

__all__ = [
    "RBFBlocks",
    "c_opt",
    "class_likelihoods",
    "dbtc_pair",
    "esdr_pair",
    "j4_pair",
    "kernel_block_stats",
    "kernel_ss_ratio",
    "ld_curve",
    "ld_objective",
    "load_copt_table",
    "rbf_block_stats",
    "rbf_index_curve",
    "repeat_share",
    "ss_db",
    "ss_ratio",
]
