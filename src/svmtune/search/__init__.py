"""Search strategies: the cross-validation every CV-based method scores with, the gradient
search of the closed-form criteria with its data-driven start, and the scalar searches.

* :mod:`~svmtune.search.cv` -- stratified (group) folds and the CV error of a candidate;
* :mod:`~svmtune.search.start` -- the data-driven start (median-distance width, C = 1);
* :mod:`~svmtune.search.gradient` -- quasi-Newton descent in ``log(sigma), log(C)``;
* :mod:`~svmtune.search.scalar` -- golden section and grid-then-refine over one parameter;
* :mod:`~svmtune.search.estimates` -- the K-fold estimate the gradient methods report.
"""

from __future__ import annotations

from svmtune.search.cv import cv_errors, make_folds
from svmtune.search.estimates import estimate_kfold_cv
from svmtune.search.gradient import GradientSearchResult, minimize_log_params
from svmtune.search.scalar import ScalarSearch, golden_section_max, grid_then_refine_max
from svmtune.search.start import initial_sigma, initial_theta

__all__ = [
    "GradientSearchResult",
    "ScalarSearch",
    "cv_errors",
    "estimate_kfold_cv",
    "golden_section_max",
    "grid_then_refine_max",
    "initial_sigma",
    "initial_theta",
    "make_folds",
    "minimize_log_params",
]
