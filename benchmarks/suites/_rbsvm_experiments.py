"""Helpers of the ``rbsvm-paper`` suite: the paper's tables as data, our side of them, Fig. 4.

Everything here is about reproducing Peng et al., "Regression-based hyperparameter learning
for support vector machines" (RBSVM, IEEE TNNLS 2023):

* ``PAPER_TABLE_II`` / ``PAPER_TABLE_III`` / ``PAPER_TABLE_V`` / ``PAPER_WILCOXON``: the
  paper's Tables II (learned sigma, C), III (10-fold accuracy, mean and std in %), V (model
  entropy) and IV / VI (paired Wilcoxon tests of RBSVM against each baseline), read from
  ``paper_tables/rbsvm_paper.json``, transcribed from the paper text
  (``tests/lab/test_suite_rbsvm_paper.py`` re-parses the paper and checks every number when
  the paper file is available);
* :func:`paper_tables` (a suite *figure*): Tables II-VI with our numbers beside the paper's,
  and the acceptance check (RBSVM vs grid search accuracy and selection-time ratio
  per task on the same folds, from the stored cells; ``benchmarks/rbsvm_time_ratio.py``
  measures the ratio in one run);
* :class:`RuntimeVsN` (a suite *experiment*): RBSVM Fig. 4, selection time against the
  number of samples on stratified subsamples of skin_nonskin, for the gradient methods and
  for grid / random / Bayesian search with 16 and 256 candidates; sizes and the largest size
  actually run per method are parameters, and the plot marks the points not run;
* :class:`CriterionAlongC` (a suite *experiment*, beyond the paper): RBSVM's criterion along
  C at the width RBSVM learned, from the closed form (eq. (27)) and from the exact
  leave-one-out outputs, beside the test accuracy of the L2-SVM and of libsvm's SVC there --
  whether a difference from the grid search comes from the closed form, the criterion or the
  final model;
* :class:`CriterionAtPaperPoint` (a suite *experiment*, beyond the paper): the same
  criterion at our learned point and at the paper's Table II point on the same folds --
  whether our (sigma, C) differ from the paper's because our search stops short.

This module gathers the names of the modules that hold them: ``_rbsvm_labels`` (labels,
tasks, the paper's numbers), ``_rbsvm_stats`` (Wilcoxon tests, acceptance, probabilities,
C on its bound), ``_rbsvm_tables`` (:func:`paper_tables`), ``_rbsvm_fig4``
(:class:`RuntimeVsN`) and ``_rbsvm_criterion`` (the two criterion experiments).
"""

from __future__ import annotations

from ._rbsvm_criterion import (
    CriterionAlongC,
    CriterionAtPaperPoint,
    criterion_along_c_markdown,
    criterion_along_c_plot,
    criterion_at_paper_point_markdown,
    criterion_at_paper_point_plot,
)
from ._rbsvm_fig4 import (
    FIG4_METHODS,
    RuntimeVsN,
    runtime_column,
    runtime_plot,
)
from ._rbsvm_labels import (
    BAYES_L2_LABEL,
    GRID_L2_LABEL,
    L2_SEARCHES,
    LABEL_NONSV_LABEL,
    LARGE_TASKS,
    LOWRANK_LABEL,
    LOWRANK_RM_LABEL,
    LOWRANK_SPAN_LABEL,
    METHOD_LABELS,
    OPEN_C_LABEL,
    OPEN_C_LOG2_C,
    PAPER_FILE,
    PAPER_TABLE_II,
    PAPER_TABLE_III,
    PAPER_TABLE_V,
    PAPER_WILCOXON,
    PLATT_LABEL,
    PROBABILITY_METHODS,
    PROTOCOL,
    RANDOM_L2_LABEL,
    REFIT_LABEL,
    REFIT_PLATT_LABEL,
    SEED,
    SMALL_TASKS,
    STAND_INS,
    TASK_SIZES,
    TASKS,
    VARIANTS,
    published_entries,
)
from ._rbsvm_stats import (
    DEFAULT_LOG2_C,
    acceptance_table,
    c_on_bound,
    probability_table,
    wilcoxon_vs_reference,
)
from ._rbsvm_tables import (
    paper_tables,
)

__all__ = [
    "METHOD_LABELS",
    "GRID_L2_LABEL",
    "RANDOM_L2_LABEL",
    "BAYES_L2_LABEL",
    "L2_SEARCHES",
    "REFIT_LABEL",
    "OPEN_C_LABEL",
    "OPEN_C_LOG2_C",
    "LABEL_NONSV_LABEL",
    "LOWRANK_LABEL",
    "LOWRANK_SPAN_LABEL",
    "LOWRANK_RM_LABEL",
    "PLATT_LABEL",
    "REFIT_PLATT_LABEL",
    "PROBABILITY_METHODS",
    "STAND_INS",
    "VARIANTS",
    "PAPER_FILE",
    "PAPER_TABLE_II",
    "PAPER_TABLE_III",
    "PAPER_TABLE_V",
    "PAPER_WILCOXON",
    "TASK_SIZES",
    "TASKS",
    "PROTOCOL",
    "SEED",
    "SMALL_TASKS",
    "LARGE_TASKS",
    "published_entries",
    "wilcoxon_vs_reference",
    "acceptance_table",
    "probability_table",
    "DEFAULT_LOG2_C",
    "c_on_bound",
    "paper_tables",
    "FIG4_METHODS",
    "RuntimeVsN",
    "runtime_column",
    "runtime_plot",
    "CriterionAlongC",
    "criterion_along_c_markdown",
    "criterion_along_c_plot",
    "CriterionAtPaperPoint",
    "criterion_at_paper_point_markdown",
    "criterion_at_paper_point_plot",
]
