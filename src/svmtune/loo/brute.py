"""Reference leave-one-out by ``n`` re-trainings: the yardstick of every closed form."""

from __future__ import annotations

import numpy as np

from svmtune.svm import fit_l1_svm, fit_l2_svm

__all__ = ["brute_force_lgo", "brute_force_loo"]


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
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    n = y.shape[0]
    if K.shape != (n, n):
        raise ValueError(f"K has shape {K.shape}; y has {n} labels: expected ({n}, {n})")
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    idx = np.arange(n) if indices is None else np.asarray(indices)
    if idx.size and (idx.dtype.kind not in "iu" or idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"indices must be sample indices (integers in 0..{n - 1}), got {idx}")
    full = fit_l2_svm(K, y, C, sample_weight=w) if loss == "l2" else None
    out = np.empty(idx.shape[0])
    for k, i in enumerate(idx):
        keep = np.arange(n) != i
        Kk = K[np.ix_(keep, keep)]
        if loss == "l2":
            init = np.flatnonzero(full.support[keep])
            sol = fit_l2_svm(Kk, y[keep], C, sample_weight=w[keep], init_support=init, tol=tol)
        elif loss == "l1":
            sol = fit_l1_svm(y[keep], C, K=Kk, sample_weight=w[keep], tol=tol)
        else:
            raise ValueError(f"loss must be 'l2' or 'l1', got {loss!r}")
        out[k] = sol.decision_function(K[i : i + 1, keep])[0]
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
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    n = y.shape[0]
    if K.shape != (n, n):
        raise ValueError(f"K has shape {K.shape}; y has {n} labels: expected ({n}, {n})")
    groups = np.asarray(groups)
    if groups.shape != (n,):
        raise ValueError(f"groups has shape {groups.shape}; expected ({n},), one label per point")
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    full = fit_l2_svm(K, y, C, sample_weight=w)
    out = np.empty(n)
    for g in np.unique(groups):
        out_g = groups == g
        keep = ~out_g
        init = np.flatnonzero(full.support[keep])
        sol = fit_l2_svm(
            K[np.ix_(keep, keep)], y[keep], C, sample_weight=w[keep], init_support=init, tol=tol
        )
        out[out_g] = sol.decision_function(K[np.ix_(out_g, keep)])
    return out
