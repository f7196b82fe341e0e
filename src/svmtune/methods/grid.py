"""Grid search: K-fold cross-validated search over a log2 grid of (sigma, C).

The RBSVM paper's GridSearch baseline (RBSVM Sec. V-A): log2 sigma and log2 C in
[-8, 8] with step 1, every candidate scored by 10-fold CV through
:func:`svmtune.search.cv.cv_errors`.
"""

from __future__ import annotations

from svmtune.kernels import rbf_params
from svmtune.methods.base import Selection, SelectionContext, TrainingData
from svmtune.methods.baselines import EXPLICIT_GRID, _CVSearch, grid_values

__all__ = ["GridSearch"]


class GridSearch(_CVSearch):
    """K-fold cross-validated grid search over log2 sigma and log2 C.

    Defaults are the RBSVM paper's GridSearch baseline: log2 sigma and log2 C in [-8, 8],
    step 1 (17 x 17 = 289 candidates), 10-fold stratified CV.

    Parameters
    ----------
    log2_sigma, log2_C : (lo, hi) or (lo, hi, step)
        Grid ranges in log2 units (step 1 if omitted).
    sigmas, Cs : sequences, optional
        Explicit grids (override the log2 ranges).
    n_splits : int
    scoring : {"error", "hinge", "f1", "f1_macro"}
        The validation loss: error rate, mean hinge loss, 1 - F1 (binary tasks: of the
        second class in sorted order; multiclass: macro-F1) or 1 - macro-F1 (the mean F1 of
        every class, binary tasks included, so no class is singled out as positive).
    final_model : {"l1", "l2"}, default="l1"
        See :class:`~svmtune.methods.random_search.RandomSearch`.
    """

    grid = True

    name = "grid"
    _parameter_constraints = {"sigmas": [EXPLICIT_GRID, None], "Cs": [EXPLICIT_GRID, None]}

    def __init__(
        self,
        *,
        log2_sigma=(-8.0, 8.0, 1.0),
        log2_C=(-8.0, 8.0, 1.0),
        sigmas=None,
        Cs=None,
        n_splits: int = 10,
        scoring: str = "error",
        final_model: str = "l1",
    ):
        # explicit grids override the log2 ranges (which are then not checked)
        self._validate_options(sigmas=sigmas, Cs=Cs)
        self.sigmas = grid_values("sigmas", sigmas, "log2_sigma", log2_sigma)
        self.Cs = grid_values("Cs", Cs, "log2_C", log2_C)
        self._set_options(n_splits=n_splits, scoring=scoring, final_model=final_model)

    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """Choose (sigma, C): see :meth:`svmtune.methods.base.Selector.run`."""
        X, y, sample_weight, groups = data.X, data.y, data.sample_weight, data.groups
        random_state, n_jobs, multiclass = context.random_state, context.n_jobs, context.multiclass
        folds = self._folds(y, random_state, sample_weight, groups)
        cands = [rbf_params(s, c) for s in self.sigmas for c in self.Cs]
        return self._best_of(X, y, cands, folds, sample_weight, n_jobs, multiclass)
