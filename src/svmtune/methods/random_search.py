"""Random search (Bergstra & Bengio 2012) over (sigma, C), each candidate scored by K-fold CV.

The RBSVM paper's RandomSearch baseline (RBSVM Sec. V-A, Fig. 4) with its box
``sigma, C in [2^-8, 2^8]``.
"""

from __future__ import annotations

from sklearn.utils import check_random_state

from svmtune.kernels import rbf_params
from svmtune.methods.base import Selection, SelectionContext, TrainingData
from svmtune.methods.baselines import BUDGET, _CVSearch, sample_log2_box

__all__ = ["RandomSearch"]


class RandomSearch(_CVSearch):
    """Random search (Bergstra & Bengio 2012) over (sigma, C) with K-fold CV, fixed budget.

    Parameters
    ----------
    n_iter : int, default=60
        Number of candidates (60 draws find a point of the best 5 % of the box with
        probability 0.95).  The RBSVM paper's Fig. 4 uses the grid's budget (256).
    log2_sigma, log2_C : (lo, hi), default=(-8, 8)
    distribution : {"loguniform", "uniform"}, default="loguniform"
        See :func:`~svmtune.methods.baselines.sample_log2_box`; ``"uniform"`` is the RBSVM
        paper's setting.
    n_splits : int, default=10
    scoring : {"error", "hinge", "f1", "f1_macro"}, default="error"
    final_model : {"l1", "l2"}, default="l1"
        The SVM each candidate trains in the cross-validation, and the one the tuner fits
        at the end (``SVMTuner(final_model="auto")``): libsvm's hinge-loss ``SVC`` or the
        exact squared-hinge L2-SVM (:class:`svmtune.estimators.L2SVC`, one-vs-rest).  The
        RBSVM paper ran every search with the L2-SVM (Sec. IV-C: "all the SVM solving
        algorithms in the hyperparameter learning algorithms use L2-SVM").
    """

    name = "random"
    _parameter_constraints = {"n_iter": [BUDGET]}

    def __init__(
        self,
        *,
        n_iter: int = 60,
        log2_sigma=(-8.0, 8.0),
        log2_C=(-8.0, 8.0),
        distribution: str = "loguniform",
        n_splits: int = 10,
        scoring: str = "error",
        final_model: str = "l1",
    ):
        self._set_options(
            n_iter=n_iter,
            log2_sigma=log2_sigma,
            log2_C=log2_C,
            distribution=distribution,
            n_splits=n_splits,
            scoring=scoring,
            final_model=final_model,
        )

    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """Choose (sigma, C): see :meth:`svmtune.methods.base.Selector.run`."""
        X, y, sample_weight, groups = data.X, data.y, data.sample_weight, data.groups
        random_state, n_jobs, multiclass = context.random_state, context.n_jobs, context.multiclass
        rng = check_random_state(random_state)
        folds = self._folds(y, random_state, sample_weight, groups)
        sig, Cs = sample_log2_box(self.n_iter, self.log2_sigma, self.log2_C, self.distribution, rng)
        cands = [rbf_params(s, c) for s, c in zip(sig, Cs)]
        return self._best_of(X, y, cands, folds, sample_weight, n_jobs, multiclass)
