"""Baselines: scikit-learn's default SVC and K-fold cross-validated searches.

All CV-based baselines score candidates through :func:`svmtune.search.cv.cv_errors`.
"""

from __future__ import annotations

import numpy as np

from svmtune.kernels import gamma_from_sigma, sigma_from_gamma
from svmtune.methods.base import Selection, Selector
from svmtune.search.cv import cv_errors, make_folds

__all__ = ["DefaultSVC", "GridSearch", "log2_grid", "rbf_params"]


def log2_grid(lo: float, hi: float, step: float) -> np.ndarray:
    """``2 ** arange(lo, hi + step/2, step)``: the papers' log2 grids, endpoints included."""
    if not (np.isfinite(lo) and np.isfinite(hi) and hi >= lo):
        raise ValueError(f"grid range must satisfy lo <= hi, got [{lo}, {hi}]")
    if not (np.isfinite(step) and step > 0):
        raise ValueError(f"grid step must be positive, got {step}")
    return 2.0 ** np.arange(lo, hi + step / 2, step)


def rbf_params(sigma: float, C: float, **extra) -> dict:
    """``best_params_`` dict for an RBF SVM."""
    out = {"kernel": "rbf", "sigma": float(sigma), "gamma": float(gamma_from_sigma(sigma))}
    out["C"] = float(C)
    out.update(extra)
    return out


class DefaultSVC(Selector):
    """scikit-learn's ``SVC()`` as is: gamma='scale', C=1 -- the practitioner's zero-cost choice.

    gamma='scale' is ``1 / (d * Var(X))`` over all entries of the training matrix.
    """

    name = "default"
    kernels = ("rbf",)

    def select(self, X, y, sample_weight=None, *, kernel="rbf", random_state=None, n_jobs=None):
        self.check_kernel(kernel)
        var = float(X.var())
        gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        return Selection(params=rbf_params(sigma_from_gamma(gamma), 1.0), n_svm_fits=0)


class GridSearch(Selector):
    """K-fold cross-validated grid search over log2 sigma and log2 C.

    Defaults are the RBSVM paper's GridSearch baseline: log2 sigma and log2 C in [-8, 8],
    step 1 (17 x 17 = 289 candidates), 10-fold stratified CV.

    Parameters
    ----------
    log2_sigma, log2_C : (lo, hi, step)
    sigmas, Cs : sequences, optional
        Explicit grids (override the log2 ranges).
    n_splits : int
    scoring : {"error", "hinge", "f1"}
    """

    name = "grid"
    kernels = ("rbf",)

    def __init__(
        self,
        *,
        log2_sigma=(-8.0, 8.0, 1.0),
        log2_C=(-8.0, 8.0, 1.0),
        sigmas=None,
        Cs=None,
        n_splits: int = 10,
        scoring: str = "error",
    ):
        self.sigmas = np.asarray(sigmas, float) if sigmas is not None else log2_grid(*log2_sigma)
        self.Cs = np.asarray(Cs, float) if Cs is not None else log2_grid(*log2_C)
        if np.any(self.sigmas <= 0) or np.any(self.Cs <= 0):
            raise ValueError("grid values of sigma and C must be positive")
        if int(n_splits) < 2:
            raise ValueError(f"n_splits must be at least 2, got {n_splits}")
        if scoring not in ("error", "hinge", "f1"):
            raise ValueError(f"scoring must be 'error', 'hinge' or 'f1', got {scoring!r}")
        self.n_splits = int(n_splits)
        self.scoring = scoring

    def select(self, X, y, sample_weight=None, *, kernel="rbf", random_state=None, n_jobs=None):
        self.check_kernel(kernel)
        folds = make_folds(y, self.n_splits, random_state)
        cands = [rbf_params(s, c) for s in self.sigmas for c in self.Cs]
        errs = cv_errors(
            X, y, cands, folds=folds, sample_weight=sample_weight,
            scoring=self.scoring, n_jobs=n_jobs,
        )
        best = int(np.argmin(errs))
        history = [dict(c, cv_loss=float(e)) for c, e in zip(cands, errs)]
        est = float(errs[best]) if self.scoring == "error" else None
        return Selection(
            params=cands[best],
            estimate=est,
            criterion=float(errs[best]),
            n_svm_fits=len(cands) * len(folds),
            history=history,
        )
