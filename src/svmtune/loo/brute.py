"""Reference leave-one-out by ``n`` re-trainings: the yardstick of every closed form."""

from __future__ import annotations

import numpy as np

from svmtune._validation import validate_groups
from svmtune.svm import fit_l1_svm, fit_l2_svm

__all__ = ["brute_force_lgo", "brute_force_loo"]


def _check(K, y, sample_weight):
    """``(K, y, w)`` as floats after checking that ``K`` is ``n x n`` for ``n`` labels."""
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    n = y.shape[0]
    if K.shape != (n, n):
        raise ValueError(f"K has shape {K.shape}; y has {n} labels: expected ({n}, {n})")
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    return K, y, w


def _refit_without(K, y, C, w, out, *, loss, full, tol) -> np.ndarray:
    """Decision values at the rows ``out`` (a mask) of the SVM trained on the other rows: the
    L2-SVM warm-started from ``full``'s support set, or libsvm's hinge-loss SVM."""
    keep = ~out
    Kk = K[np.ix_(keep, keep)]
    if loss == "l2":
        init = np.flatnonzero(full.support[keep])
        sol = fit_l2_svm(Kk, y[keep], C, sample_weight=w[keep], init_support=init, tol=tol)
    elif loss == "l1":
        sol = fit_l1_svm(y[keep], C, K=Kk, sample_weight=w[keep], tol=tol)
    else:
        raise ValueError(f"loss must be 'l2' or 'l1', got {loss!r}")
    return sol.decision_function(K[np.ix_(out, keep)])


def brute_force_loo(
    K: np.ndarray,
    y: np.ndarray,
    C: float,
    *,
    loss: str = "l2",
    sample_weight: np.ndarray | None = None,
    indices: np.ndarray | None = None,
    tol: float = 1e-8,
) -> np.ndarray:
    """Leave-one-out decision values ``f^{-i}(x_i)`` by retraining without each point.

    Parameters
    ----------
    K : ndarray (n, n)
        Kernel matrix (without any ``1/C`` ridge).
    y : array of {-1, +1}
    C : float
    loss : {"l2", "l1"}
        Squared-hinge SVM (exact solver, warm-started from the full support set) or the
        hinge-loss SVM (libsvm at tolerance ``tol``).
    sample_weight : array, optional
        Per-sample weights (``C_i = C w_i``).
    indices : array, optional
        Only leave out these points (default: all).

    Returns
    -------
    ndarray of shape (len(indices),)
        ``f^{-i}(x_i) = sum_{j != i} y_j alpha_j^{-i} K_ij + b^{-i}``.
    """
    K, y, w = _check(K, y, sample_weight)
    n = y.shape[0]
    idx = np.arange(n) if indices is None else np.asarray(indices)
    if idx.size and (idx.dtype.kind not in "iu" or idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"indices must be sample indices (integers in 0..{n - 1}), got {idx}")
    full = fit_l2_svm(K, y, C, sample_weight=w) if loss == "l2" else None
    out = np.empty(idx.shape[0])
    for k, i in enumerate(idx):
        left_out = np.arange(n) == i
        out[k] = _refit_without(K, y, C, w, left_out, loss=loss, full=full, tol=tol)[0]
    return out


def brute_force_lgo(
    K: np.ndarray,
    y: np.ndarray,
    C: float,
    groups,
    *,
    sample_weight: np.ndarray | None = None,
    tol: float = 1e-8,
) -> np.ndarray:
    """Leave-one-group-out decision values of the L2-SVM by retraining without each group.

    The yardstick of :func:`svmtune.loo.rbsvm_groups.closed_form_lgo`.

    Parameters
    ----------
    K : ndarray (n, n)
        Kernel matrix (without any ``1/C`` ridge).
    y : array of {-1, +1}
    C : float
    groups : array-like (n,)
        A group label per point; every group is left out once.
    sample_weight : array, optional
        Per-sample weights (``C_i = C w_i``).

    Returns
    -------
    ndarray of shape (n,)
        Each row's output from the model trained on the rows outside its group.
    """
    K, y, w = _check(K, y, sample_weight)
    codes = validate_groups(groups, y.shape[0])
    if codes is None:
        raise ValueError("groups is None: pass one group label per point")
    full = fit_l2_svm(K, y, C, sample_weight=w)
    out = np.empty(y.shape[0])
    for g in range(codes.max() + 1):
        left_out = codes == g
        out[left_out] = _refit_without(K, y, C, w, left_out, loss="l2", full=full, tol=tol)
    return out
