"""Closed-form leave-one-out outputs of the L2-SVM (RBSVM eq. (22)-(27)), and their error rate.

Notation (RBSVM §III-B).  The L2-SVM is the hard-margin SVM on ``H = K + diag(d)``,
``d_i = 1 / (C w_i)`` (eq. (6)-(7)).  On its support set ``S`` (``m`` points) the KKT
conditions are the linear system

    M [beta; b] = [y_S; 0],   M = [[H_SS, 1], [1^T, 0]],   beta = y_S * alpha_S     (eq. (22))

**Leave-one-out output** (eq. (23)-(27)).  Write ``z = [beta_{-i}; b]`` and ``m_i`` for row ``i``
of ``M`` without its diagonal entry.  If removing support vector ``i`` leaves the other
support vectors' status unchanged, the reduced model solves ``M_{-i} z' = [y_{S-i}; 0]``, so
``z' = z + M_{-i}^{-1} m_i beta_i`` and its output at ``x_i`` (``H_ij = K_ij`` for ``j != i``) is

    f^{-i}(x_i) = m_i^T z' = y_i - beta_i (H_ii - m_i^T M_{-i}^{-1} m_i)
                = y_i - beta_i / (M^{-1})_ii = y_i (1 - alpha_i / (M^{-1})_ii)      (eq. (27))

i.e. eq. (27) with the paper's ``(H^{-1})_ii`` read as the diagonal of the inverse of the
*extended* matrix ``M``.  It is the LOO output of the kernel model
``f(x) = sum_j y_j alpha_j K(x_j, x) + b``, exactly what :func:`~svmtune.loo.brute.brute_force_loo`
computes by retraining.  A non-support vector leaves the solution unchanged when removed, so its
LOO output is the full model's output ``f(x_i)``.  :func:`loo_exact_mask` certifies, without
retraining, at which points eq. (27) is exact (the downdated solution satisfies the KKT
conditions); :func:`svmtune.loo.decremental.decremental_loo` makes the others exact too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from svmtune._dual_solution import DualSolution, check_l2_solution, safe_diagonal, support_system
from svmtune._kernel_matrix_checks import TRAINED, check_kernel_matrix
from svmtune._validation import validate_sample_weight
from svmtune.kernels import (
    KernelColumns,
    kernel_block,
    kernel_columns,
)

__all__ = [
    "closed_form_loo",
    "loo_error_rate",
    "loo_exact_mask",
    "loo_predictions",
]


def _check_encoded_labels(y, n: int, n_classes: int) -> np.ndarray:
    """``y`` after checking it holds ``n`` encoded labels, integers in ``0..n_classes-1``."""
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y has shape {y.shape}; expected ({n},), one encoded label per point")
    ok = y.dtype.kind in "biu" or (y.dtype.kind == "f" and np.all(np.isfinite(y)))
    if not ok or not np.all((y >= 0) & (y < n_classes) & (y == np.floor(y))):
        shown = np.unique(y)[:6] if y.dtype.kind in "biuf" else f"of dtype {y.dtype}"
        raise ValueError(
            f"y must hold encoded labels, integers 0..{n_classes - 1} ({n_classes} classes), "
            f"got {shown}; encode them, e.g. with np.unique(y, return_inverse=True)[1]"
        )
    return y


def closed_form_loo(
    sol: DualSolution, K: np.ndarray | KernelColumns, *, inverse: np.ndarray | None = None
) -> np.ndarray:
    """Leave-one-out decision values of an L2-SVM without retraining (RBSVM eq. (27)).

    Parameters
    ----------
    sol : DualSolution
        From :func:`svmtune.svm.fit_l2_svm` (its ``factor`` is reused).
    K : ndarray (n, n) or KernelColumns
        The kernel matrix the SVM was trained on (without the ``1/C`` ridge); read at the
        support columns only.
    inverse : ndarray (m+1, m+1), optional
        ``M^{-1}`` if already computed (only its diagonal is used).

    Returns
    -------
    ndarray of shape (n,)
        ``r_i = y_i (1 - alpha_i / (M^{-1})_ii)`` for support vectors (exact when removing ``i``
        leaves the other points' support status unchanged -- see :func:`loo_exact_mask` -- an
        estimate otherwise) and the full model's output ``f(x_i)`` for the other points
        (exact).

    Raises
    ------
    ValueError
        If ``sol`` is not an L2-SVM solution, or ``K`` is not its ``(n, n)`` finite kernel
        matrix.
    """
    check_l2_solution(sol)
    K = check_kernel_matrix(K, sol.y.shape[0], what=TRAINED)
    return _closed_form_loo(sol, K, inverse)


def _closed_form_loo(
    sol: DualSolution, K: np.ndarray | KernelColumns, inverse: np.ndarray | None
) -> np.ndarray:
    """:func:`closed_form_loo` on checked inputs."""
    S, beta, b = support_system(sol)
    out = kernel_columns(K, S) @ beta + b
    diag = sol.factor.inverse_diagonal() if inverse is None else np.diag(inverse)[: S.size]
    diag = safe_diagonal(np.asarray(diag, dtype=float))
    out[S] = sol.y[S] - beta / diag
    return out


def loo_exact_mask(
    sol: DualSolution,
    K: np.ndarray | KernelColumns,
    *,
    tol: float = 1e-8,
    inverse: np.ndarray | None = None,
) -> np.ndarray:
    """Points whose closed-form LOO output (eq. (27)) is provably the exact LOO output.

    Removing support vector ``i`` changes the support-set solution by the rank-one downdate
    ``[beta'; b'] = [beta; b] - M^{-1} e_i beta_i / (M^{-1})_ii`` (restricted to ``S - {i}``).
    That reduced solution is the L2-SVM trained without ``i`` -- and eq. (27) is exact -- iff it
    satisfies the KKT conditions: ``y_j beta'_j >= 0`` on ``S - {i}`` and
    ``y_j f'(x_j) >= 1`` off ``S``.  Checking all ``i`` at once costs one ``O(n m^2)`` product;
    no retraining.  Non-support vectors are always exact.

    Parameters
    ----------
    sol : DualSolution
        L2-SVM solution.
    K : ndarray (n, n) or KernelColumns
        Read at the support columns only.
    tol : float
        KKT tolerance (that of the solver).
    inverse : ndarray, optional
        ``M^{-1}`` if already computed.

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    check_l2_solution(sol)
    K = check_kernel_matrix(K, sol.y.shape[0], what=TRAINED)
    return _loo_exact_mask(sol, K, tol, inverse)


def _loo_exact_mask(
    sol: DualSolution, K: np.ndarray | KernelColumns, tol: float, inverse: np.ndarray | None
) -> np.ndarray:
    """:func:`loo_exact_mask` on checked inputs."""
    y = sol.y
    S, beta, b = support_system(sol)
    m = S.size
    N = np.flatnonzero(~sol.support & np.isfinite(sol.H_diag))
    Minv = sol.factor.inverse() if inverse is None else np.asarray(inverse, dtype=float)
    diag = safe_diagonal(np.diag(Minv)[:m].copy())
    step = beta / diag  # column i of the downdate is -Minv[:, i] * step_i
    # y_j beta'_j for j in S (rows) after removing i (columns)
    Bnew = beta[:, None] - Minv[:m, :m] * step[None, :]
    ok_sv = (y[S][:, None] * Bnew >= -tol) | np.eye(m, dtype=bool)
    exact = np.ones(y.shape[0], dtype=bool)
    exact_S = ok_sv.all(axis=0)
    if N.size:
        KNS = kernel_block(K, N, S)
        f_N = KNS @ beta + b
        G = KNS @ Minv[:m, :m] + Minv[m, :m][None, :]
        Fnew = f_N[:, None] - G * step[None, :]
        exact_S &= (y[N][:, None] * Fnew >= 1.0 - tol).all(axis=0)
    exact[S] = exact_S
    return exact


def loo_predictions(loo: Sequence[np.ndarray]) -> np.ndarray:
    """Encoded class predictions from LOO outputs: ``r > 0`` for one binary task, else the
    one-vs-rest argmax (as :class:`svmtune.estimators.L2SVC` predicts)."""
    if len(loo) == 1:
        return (np.asarray(loo[0]) > 0).astype(int)
    return np.argmax(np.column_stack(loo), axis=1)


def loo_error_rate(
    y: np.ndarray, loo: Sequence[np.ndarray], sample_weight: np.ndarray | None = None
) -> float:
    """Leave-one-out error rate of encoded labels ``y`` (0..k-1) from LOO outputs per task.

    With ``sample_weight``, the weighted error rate (points of weight 0 do not count).

    Raises
    ------
    ValueError
        If ``loo`` is empty or its arrays differ in length, ``y`` is not ``n`` encoded labels
        in ``0..k-1`` (``k`` the number of tasks, 2 for one binary task) or ``sample_weight``
        is not ``n`` finite non-negative weights with a positive sum.
    """
    if not len(loo):
        raise ValueError("loo is empty: pass the LOO outputs of at least one task")
    n = np.shape(loo[0])[0] if np.ndim(loo[0]) == 1 else -1
    if any(np.shape(r) != (n,) for r in loo):
        raise ValueError(
            f"every task's LOO outputs must be a 1-D array of one length, got shapes "
            f"{[np.shape(r) for r in loo]}"
        )
    _check_encoded_labels(y, n, max(len(loo), 2))
    sample_weight = validate_sample_weight(sample_weight, n)
    wrong = loo_predictions(loo) != np.asarray(y)
    if sample_weight is None:
        return float(np.mean(wrong))
    w = np.asarray(sample_weight, dtype=float)
    return float(w @ wrong / w.sum())
