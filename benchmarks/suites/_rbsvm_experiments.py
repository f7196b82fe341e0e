"""Helpers of the ``rbsvm-paper`` suite: the paper's tables as data, our side of them, Fig. 4.

Everything here is about reproducing Peng et al., "Regression-based hyperparameter learning
for support vector machines" (RBSVM, IEEE TNNLS 2023):

* ``PAPER_TABLE_II`` / ``PAPER_TABLE_III`` / ``PAPER_TABLE_V`` / ``PAPER_WILCOXON``: the
  paper's Tables II (learned sigma, C), III (10-fold accuracy, mean and std in %), V (model
  entropy) and IV / VI (paired Wilcoxon tests of RBSVM against each baseline), transcribed
  from the paper text (``tests/lab/test_suite_rbsvm_paper.py`` re-parses the paper and checks
  every number when the paper file is available);
* :func:`paper_tables` (a suite *figure*): Tables II-VI with our numbers beside the paper's,
  and the acceptance check of issue #3 (RBSVM vs grid search accuracy and selection-time ratio
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
"""

from __future__ import annotations

from ._rbsvm_criterion import (
    CriterionAlongC,
    CriterionAtPaperPoint,
)
from ._rbsvm_fig4 import (
    FIG4_METHODS,
    RuntimeVsN,
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
    acceptance_table,
    c_on_bound,
    probability_table,
    wilcoxon_vs_reference,
)
from ._rbsvm_tables import (
    paper_tables,
)

__all__ = [
    "TASKS",
    "TASK_SIZES",
    "SMALL_TASKS",
    "LARGE_TASKS",
    "PROTOCOL",
    "SEED",
    "PAPER_FILE",
    "METHOD_LABELS",
    "GRID_L2_LABEL",
    "RANDOM_L2_LABEL",
    "BAYES_L2_LABEL",
    "L2_SEARCHES",
    "REFIT_LABEL",
    "OPEN_C_LABEL",
    "LABEL_NONSV_LABEL",
    "LOWRANK_LABEL",
    "LOWRANK_SPAN_LABEL",
    "LOWRANK_RM_LABEL",
    "PLATT_LABEL",
    "REFIT_PLATT_LABEL",
    "PROBABILITY_METHODS",
    "OPEN_C_LOG2_C",
    "VARIANTS",
    "STAND_INS",
    "PAPER_TABLE_II",
    "PAPER_TABLE_III",
    "PAPER_TABLE_V",
    "PAPER_WILCOXON",
    "published_entries",
    "wilcoxon_vs_reference",
    "acceptance_table",
    "c_on_bound",
    "probability_table",
    "paper_tables",
    "RuntimeVsN",
    "CriterionAlongC",
    "CriterionAtPaperPoint",
    "FIG4_METHODS",
]
