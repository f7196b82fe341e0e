"""Separability and scatteredness (S&S) ratio: C, kernel and kernel parameter without a search.

The public face of the S&S closed forms; the maths is in :mod:`svmtune.criteria.ss_core` (the
ratio of two classes), :mod:`svmtune.criteria.ss_kernel` (in a feature space, every class
pair), :mod:`svmtune.criteria.ss_copt` (the optimal C) and :mod:`svmtune.criteria.ss_features`
(feature maps, kernel choice).

Shamsi & Beheshti ("S&S ratio") describe two classes by

* the separability ``d = |mu_1 - mu_2|``, the distance between the class centres (eq. (7)),
* the scatteredness ``sigma = sqrt((n_1 sigma_1^2 + n_2 sigma_2^2) / (n_1 + n_2))``, the pooled
  spread of the classes (eq. (8)),
* the ratio ``S&S = 20 log10(d / (alpha sigma))`` in decibels with ``alpha = 6`` (eq. (9)), so
  that ``S&S = 0`` at ``sigma / d = 1/6`` and ``S&S = -5`` at ``sigma / d = 0.3``,

and read the hinge-loss optimal ``C`` off a curve of ``sigma / d`` (eq. (22)-(23), regimes of
eq. (28) and (32)).  Kernels are compared by the S&S of the data mapped into (an approximation
of) their feature space (eq. (26)-(27)); multiclass problems use the worst class pair (eq. (31)).

Choices this module makes where the paper is under-specified (each documented where it is
implemented):

* **Per-class spread** ``sigma_c``.  ``spread="directional"`` (default): the standard
  deviation of the class's points projected on the line through the two centres (the
  paper's "directional scatteredness").  It is dimension-free, so it means the same in input
  space and in a kernel feature space of any dimension, it is computable exactly from the
  kernel matrix, and for the paper's isotropic Gaussian classes it is exactly the simulated
  ``sigma``.  ``spread="isotropic"``: the root-mean-square per-coordinate standard deviation
  ``sqrt(tr Cov_c / p)`` ("the average standard deviation of all data points"), equal to
  the simulated ``sigma`` for isotropic classes too, but in a feature space it depends on the
  number of features ``p`` of the map (see :func:`kernel_features`).
* **Estimator.**  ``estimator="plain"`` is the paper's in-sample computation.
  ``estimator="loo"`` (default) removes every point's own contribution: ``d^2`` is the
  unbiased (U-statistic) estimate of the squared centre distance and each point is projected
  on the centre line built without it.  The plain estimates are biased upwards when the
  feature dimension is comparable with ``n``; with an RBF kernel of vanishing width
  (``K -> I``) the plain directional S&S diverges to ``+inf`` while the LOO one goes to
  ``-inf`` (no separation left), which is what kernel selection needs.
* **Scale of C.**  Scaling the data by ``a`` and ``C`` by ``1 / a^2`` leaves the hinge-loss
  SVM's decision function unchanged, so a curve built at ``d = 1`` gives
  ``C_opt = C_curve(sigma / d) / d^2`` (``rescale=True``, default).  The paper reads
  ``C_curve`` directly (``rescale=False``), which is only right when ``d = 1``.
"""

from __future__ import annotations

from svmtune.criteria.ss_copt import (
    PAPER_CURVE,
    CoptCurve,
    ExpPiece,
    c_opt,
    load_copt_table,
    ss_regime,
)
from svmtune.criteria.ss_core import (
    ALPHA,
    ESTIMATORS,
    FEATURE_MAPS,
    SPREADS,
    SS_BREAK,
    SS_KERNEL,
    SSResult,
    class_spreads,
    class_weight_matrix,
    gaussian_error_from_ss,
    pooled_sigma,
    ratio_from_ss,
    separability,
    ss_class_codes,
    ss_db,
    ss_from_class_sums,
    ss_from_ratio,
    ss_ratio,
)
from svmtune.criteria.ss_features import (
    exact_kernel_features,
    kernel_features,
    select_kernel,
)
from svmtune.criteria.ss_kernel import (
    SSMatrix,
    kernel_ss_matrix,
    kernel_ss_ratio,
    min_pairwise_ss,
    pairwise_ss,
    worst_pairs,
)

__all__ = [
    "ALPHA",
    "SS_BREAK",
    "SS_KERNEL",
    "SPREADS",
    "ESTIMATORS",
    "FEATURE_MAPS",
    "SSResult",
    "ExpPiece",
    "CoptCurve",
    "PAPER_CURVE",
    "ss_db",
    "ss_from_ratio",
    "ratio_from_ss",
    "pooled_sigma",
    "separability",
    "class_spreads",
    "ss_ratio",
    "kernel_ss_ratio",
    "kernel_ss_matrix",
    "SSMatrix",
    "worst_pairs",
    "ss_from_class_sums",
    "class_weight_matrix",
    "ss_class_codes",
    "pairwise_ss",
    "min_pairwise_ss",
    "c_opt",
    "ss_regime",
    "load_copt_table",
    "gaussian_error_from_ss",
    "kernel_features",
    "exact_kernel_features",
    "select_kernel",
]
