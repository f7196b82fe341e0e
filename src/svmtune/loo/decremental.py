"""Exact leave-one-out outputs of the L2-SVM by decremental unlearning, without retraining.

RBSVM eq. (27) (:func:`svmtune.loo.closed_form.closed_form_loo`) is exact where removing a
support vector leaves the other points' support status unchanged
(:func:`svmtune.loo.closed_form.loo_exact_mask`).  :func:`decremental_loo` makes the other
points exact too, by updating the support set of the downdated model in ``O(m^2)`` per change
of ``M^{-1}`` (decremental learning, Cauwenberghs & Poggio, NIPS 2000; beyond the paper:
eq. (27) remains the RBSVM criterion, whose gradient needs a fixed support set).
"""

from __future__ import annotations

import numpy as np

from svmtune._dual_solution import DualSolution, check_l2_solution
from svmtune._kernel_matrix_checks import TRAINED, check_kernel_matrix
from svmtune.kernels import (
    KernelColumns,
)
from svmtune.loo.closed_form import _closed_form_loo, _loo_exact_mask
from svmtune.svm import fit_l2_svm

__all__ = ["decremental_loo"]


def _drop_row(Q: np.ndarray, p: int) -> np.ndarray:
    """Inverse of a symmetric matrix with row and column ``p`` removed, from its inverse ``Q``:
    ``Q_{-p,-p} - Q_{-p,p} Q_{p,-p} / Q_pp`` (``O(m^2)``)."""
    keep = np.arange(Q.shape[0]) != p
    col = Q[keep, p]
    return Q[np.ix_(keep, keep)] - np.outer(col, col) / Q[p, p]


def _add_row(Q: np.ndarray, u: np.ndarray, d: float) -> np.ndarray | None:
    """Inverse of ``[[M, u], [u^T, d]]`` from ``Q = M^{-1}`` by the bordering (Schur
    complement) formula, ``O(m^2)``; None if the Schur complement is not positive."""
    Qu = Q @ u
    s = d - float(u @ Qu)
    if not s > 1e-12 * max(abs(d), 1.0):
        return None
    m = Q.shape[0]
    out = np.empty((m + 1, m + 1))
    out[:m, :m] = Q + np.outer(Qu, Qu) / s
    out[:m, m] = out[m, :m] = -Qu / s
    out[m, m] = 1.0 / s
    return out


def decremental_loo(
    sol: DualSolution,
    K: np.ndarray,
    *,
    tol: float = 1e-8,
    max_iter: int = 25,
    inverse: np.ndarray | None = None,
) -> tuple[np.ndarray, dict]:
    """Exact leave-one-out outputs of an L2-SVM by decremental unlearning, without retraining.

    Eq. (27) (:func:`closed_form_loo`) is exact at the points :func:`loo_exact_mask` certifies.
    At every other support vector ``i`` the rank-one downdate of ``M^{-1}`` gives the reduced
    model on ``S - {i}``; that model violates the KKT conditions (a support vector with
    ``alpha < 0`` or a point with ``y f < 1``), and the support set is corrected by the
    primal-dual active-set iteration of :func:`svmtune.svm.fit_l2_svm` -- drop the negative
    ``alpha``, add the margin violators -- with each change applied to the inverse in ``O(m^2)``
    (bordering / Schur-complement downdate) instead of a new factorisation: decremental
    learning in the sense of Cauwenberghs & Poggio (NIPS 2000), who used it for exact LOO.
    The result is the exact LOO output (KKT-verified at tolerance ``tol``); where the iteration
    does not settle within ``max_iter`` changes of the support set or an update is numerically
    unsafe, that point is retrained by :func:`svmtune.svm.fit_l2_svm` warm-started from the
    current support set (counted in ``info["retrained"]``).

    Parameters
    ----------
    sol : DualSolution
        From :func:`svmtune.svm.fit_l2_svm`.
    K : ndarray (n, n)
        Kernel matrix the SVM was trained on (without the ridge).
    tol : float
        KKT tolerance (that of the solver).
    max_iter : int
        Active-set iterations per corrected point before falling back to retraining.
    inverse : ndarray, optional
        ``M^{-1}`` if already computed.

    Returns
    -------
    r : ndarray of shape (n,)
        Exact ``f^{-i}(x_i)`` for every point.
    info : dict
        ``corrected`` (points where eq. (27) was not certified and the support set was
        updated), ``changes`` (support-set changes applied in total), ``retrained``.
    """
    check_l2_solution(sol)
    y = sol.y
    n = y.shape[0]
    if isinstance(K, KernelColumns):
        raise ValueError("decremental_loo needs the whole kernel matrix K, not KernelColumns")
    K = check_kernel_matrix(K, n, what=TRAINED)
    S = np.flatnonzero(sol.support)
    Minv = sol.factor.inverse() if inverse is None else np.asarray(inverse, dtype=float)
    r = _closed_form_loo(sol, K, Minv)
    exact = _loo_exact_mask(sol, K, tol, Minv)
    usable = np.isfinite(sol.H_diag)  # zero-weight points never become support vectors
    info = {"corrected": 0, "changes": 0, "retrained": 0}
    for p, i in enumerate(S):
        if exact[i]:
            continue
        info["corrected"] += 1
        Q = _drop_row(Minv, p)
        idx = np.append(np.delete(S, p), -1)  # rows of Q: support points, then b
        settled = False
        for _ in range(max_iter):
            z = Q @ np.where(idx >= 0, y[idx], 0.0)
            if not np.all(np.isfinite(z)):
                break  # a degenerate support set (e.g. emptied): retrain below
            on = idx >= 0
            A, beta, b = idx[on], z[on], float(z[~on][0])
            outside = usable.copy()
            outside[A] = False
            outside[i] = False
            O = np.flatnonzero(outside)
            neg = A[y[A] * beta < -tol]
            viol = O[y[O] * (K[np.ix_(O, A)] @ beta + b) < 1.0 - tol] if O.size else O
            if neg.size == 0 and viol.size == 0:
                settled = True
                break
            for j in neg:
                q = int(np.flatnonzero(idx == j)[0])
                Q, idx = _drop_row(Q, q), np.delete(idx, q)
            for j in viol:
                u = np.where(idx >= 0, K[j, np.maximum(idx, 0)], 1.0)
                Q2 = _add_row(Q, u, K[j, j] + sol.H_diag[j])
                if Q2 is None:
                    break
                Q, idx = Q2, np.append(idx, j)
            else:
                info["changes"] += neg.size + viol.size
                continue
            break  # unsafe update: retrain below
        if settled:
            r[i] = float(K[i, A] @ beta + b)
            continue
        info["retrained"] += 1
        keep = np.arange(n) != i
        # the ridge 1 / (C w_j) is H_diag: C = 1 with weights 1 / H_diag reproduces it
        red = fit_l2_svm(
            K[np.ix_(keep, keep)],
            y[keep],
            1.0,
            sample_weight=1.0 / sol.H_diag[keep],
            init_support=sol.support[keep],
            tol=tol,
        )
        r[i] = float(red.decision_function(K[i : i + 1, keep])[0])
    return r, info
