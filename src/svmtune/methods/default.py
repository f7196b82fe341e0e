"""scikit-learn's default ``SVC()``: gamma='scale', C=1, the zero-cost baseline."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from svmtune.kernels import rbf_params, sigma_from_gamma
from svmtune.methods.base import Selection, SelectionContext, Selector, TrainingData

__all__ = ["DefaultSVC"]


class DefaultSVC(Selector):
    """scikit-learn's ``SVC()`` as is: gamma='scale', C=1 -- the practitioner's zero-cost choice.

    gamma='scale' is ``1 / (d * Var(X))`` over all entries of the training matrix.
    """

    reads_centring = True  # gamma='scale' is 1 / (d Var(X)) over X's entries

    name = "default"
    kernels = ("rbf",)
    accepts_sparse = True

    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """Choose sigma from ``gamma='scale'`` and C = 1 (no search, no groups)."""
        X, sample_weight = data.X, data.sample_weight
        # weighted like repeated rows, so sample_weight=2 equals a duplicated row
        w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        if sp.issparse(X):  # from the row sums of x and x^2: X stays sparse
            d = X.shape[1]
            s1 = np.asarray(X.sum(axis=1)).ravel()
            s2 = np.asarray(X.multiply(X).sum(axis=1)).ravel()
            mean = float(np.average(s1 / d, weights=w))
            var = float(np.average((s2 - 2.0 * mean * s1) / d + mean**2, weights=w))
        else:
            mean = float(np.average(X, axis=0, weights=w).mean())
            var = float(np.average(((X - mean) ** 2).mean(axis=1), weights=w))
        gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        return Selection(params=rbf_params(sigma_from_gamma(gamma), 1.0), n_svm_fits=0)
