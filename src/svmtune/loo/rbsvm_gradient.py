"""Exact gradient of the closed-form leave-one-out outputs of the L2-SVM for a fixed support set.

Notation of :mod:`svmtune.loo.closed_form` (RBSVM eq. (22), (27)).  The printed gradient
(RBSVM eq. (35)-(36)) keeps only ``dH_ii``, which is zero for the RBF width (``K_ii = 1``), so
it cannot move sigma.  For a fixed support set everything depends on ``theta`` through ``M``:
with ``dM = [[dH_SS, 0], [0, 0]]``,

    d(M^{-1}) = -M^{-1} dM M^{-1},     d[beta; b] = -M^{-1} dM [beta; b],
    d r_i = -d beta_i / (M^{-1})_ii + beta_i d(M^{-1})_ii / (M^{-1})_ii^2       (i in S)
    d r_i = dK_iS beta + K_iS d beta + d b                                      (i not in S)

With ``c_i = w_i dL/dr_i``, ``B`` the top-left ``m x m`` block of ``M^{-1}``,
``g = c_S beta / diag(B)^2``, ``h = [-c_S / diag(B) + K_NS^T c_N; sum c_N]`` and
``v = (M^{-1} h)_{1..m}`` (an adjoint solve), every hyperparameter's derivative is

    dJ = -<dH_SS, B diag(g) B + v beta^T> + c_N^T dK_NS beta.

``B diag(g) B``, ``v`` and ``K_NS^T c_N`` are computed once per step (one factorisation of
``M``, reused from the solver, plus one ``O(m^3)`` inverse), after which each hyperparameter
costs ``O(m^2)`` plus an ``O(n m)`` product.  For ``log sigma`` ``dH = dK/dlog sigma``
(:func:`svmtune.kernels.rbf_dlogsigma`); for ``log C`` ``dH = -diag(d)`` on ``S`` and
``dK_NS = 0``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.utils import gen_batches

from svmtune._dual_solution import (
    DualSolution,
    check_derivative,
    check_l2_solution,
    safe_diagonal,
    support_system,
)
from svmtune._factor import sandwich
from svmtune._kernel_matrix_checks import TRAINED, check_kernel_matrix
from svmtune.kernels import (
    KernelColumns,
    as_kernel,
    kernel_block,
    kernel_columns,
    rbf_dlogsigma,
)

__all__ = ["loo_gradient", "rbf_l2_derivatives"]


def loo_gradient(
    sol: DualSolution,
    K: np.ndarray | KernelColumns,
    dH: Sequence[np.ndarray],
    dLdr: np.ndarray,
    *,
    inverse: np.ndarray | None = None,
) -> np.ndarray:
    """Exact gradient of ``sum_i c_i r_i``-type objectives for a fixed support set.

    Given ``c = dJ/dr`` (per-point derivative of the objective with respect to the
    closed-form LOO outputs ``r`` of :func:`closed_form_loo`), returns
    ``dJ/dtheta_k = sum_i c_i dr_i/dtheta_k`` for each hyperparameter, through
    ``d(M^{-1}) = -M^{-1} dM M^{-1}`` and ``d[beta; b] = -M^{-1} dM [beta; b]`` (module
    docstring; replaces RBSVM eq. (35)-(36)).

    Parameters
    ----------
    sol : DualSolution
        L2-SVM solution (support set ``S`` of size ``m``).
    K : ndarray (n, n) or KernelColumns
        Kernel matrix (read at the support columns only).
    dH : sequence of arrays
        One derivative per hyperparameter: an ``(n, m)`` array ``dH[:, S]`` (columns of the
        derivative of ``H = K + diag(d)`` at the support vectors; its rows outside ``S`` are the
        derivative of ``K_NS``), or an ``(m,)`` array for a derivative that only moves the
        diagonal ``H_SS`` (such as ``d/dlog C``).
    dLdr : array (n,)
        ``c_i = dJ/dr_i``.
    inverse : ndarray (m+1, m+1), optional
        ``M^{-1}`` if already computed.

    Returns
    -------
    ndarray of shape (len(dH),)

    Raises
    ------
    ValueError
        If ``K`` is not the solution's ``(n, n)`` finite kernel matrix, ``dLdr`` does not hold
        ``n`` values or a derivative has the wrong shape.
    """
    check_l2_solution(sol)
    n = sol.y.shape[0]
    K = check_kernel_matrix(K, n, what=TRAINED)
    c = np.asarray(dLdr, dtype=float)
    if c.shape != (n,):
        raise ValueError(f"dLdr has shape {c.shape}; expected ({n},), one derivative per point")
    return _loo_gradient(sol, K, dH, c, inverse)


def _loo_gradient(
    sol: DualSolution,
    K: np.ndarray | KernelColumns,
    dH: Sequence[np.ndarray | DerivativeColumns],
    c: np.ndarray,
    inverse: np.ndarray | None,
) -> np.ndarray:
    """:func:`loo_gradient` on checked inputs; a derivative may be
    :class:`DerivativeColumns`, read a block of columns at a time."""
    n = sol.y.shape[0]
    S, beta, _ = support_system(sol)
    m = S.size
    N = np.flatnonzero(~sol.support)
    Minv = sol.factor.inverse() if inverse is None else np.asarray(inverse, dtype=float)
    B = Minv[:m, :m]
    diag = safe_diagonal(np.diag(B).copy())
    cS, cN = c[S], c[N]
    g = cS * beta / diag**2
    W = sandwich(B, g)  # B diag(g) B
    h = np.empty(m + 1)
    KNS = kernel_block(K, N, S)
    h[:m] = -cS / diag + KNS.T @ cN
    h[m] = cN.sum()
    v = (Minv @ h)[:m]
    # -v^T dH_SS beta + c_N^T dK_NS beta = z^T (dK[:, S] beta), z = -v on S and c_N on N:
    # one product with the derivative's columns, no copies of its rows
    z = np.zeros(n)
    z[S] = -v
    z[N] = cN
    out = np.empty(len(dH))
    for k, D in enumerate(dH):
        if not isinstance(D, DerivativeColumns):
            D = check_derivative(D, n, m)
            if D.ndim == 1:
                out[k] = -float(np.sum(D * (np.diag(W) + v * beta)))
                continue
        out[k] = _columns_term(_column_blocks(D), S, W, z, beta)
    return out


def _columns_term(blocks, S, W, z, beta) -> float:
    """``-sum(D[S] * W) + z^T (D beta)`` of :func:`_loo_gradient` over the blocks ``(j,
    D[:, j])`` of the derivative's support columns (the whole products made two more
    ``|S| x |S|`` arrays: issue 64)."""
    total = 0.0
    for j, Dj in blocks:
        total += float(z @ (Dj @ beta[j])) - float(np.sum(Dj[S] * W[:, j]))
    return total


def _column_blocks(D):
    """``(j, D[:, j])`` for consecutive column slices ``j`` of :data:`_COLUMN_VALUES` values:
    :meth:`DerivativeColumns.blocks`, or views of an array's columns."""
    if isinstance(D, DerivativeColumns):
        return D.blocks()
    return ((j, D[:, j]) for j in gen_batches(D.shape[1], _block_columns(D.shape[0])))


def _block_columns(n: int) -> int:
    """Columns of ``n`` rows per block of :data:`_COLUMN_VALUES` values."""
    return max(1, _COLUMN_VALUES // max(n, 1))


def rbf_l2_derivatives(
    K: np.ndarray | KernelColumns, D2: np.ndarray, sigma: float, sol: DualSolution
) -> list[np.ndarray]:
    """Derivatives of ``H = K + diag(1/(C w))`` in ``(log sigma, log C)`` for :func:`loo_gradient`.

    ``dH/dlog sigma = K * D2 / sigma^2 = -2 K log K`` (:func:`svmtune.kernels.rbf_dlogsigma`;
    the last form of RBSVM eq. (38) -- the printed eq. (37) and the middle form of eq. (38) carry
    a spurious factor 1/4), returned as its ``(n, m)`` support columns; ``dH/dlog C =
    -1/(C w_i)`` on the support diagonal (eq. (38) with sample weights), returned as an ``(m,)``
    vector.
    """
    check_l2_solution(sol)
    n = sol.y.shape[0]
    if np.shape(D2) != (n, n) or np.shape(K) != (n, n):
        raise ValueError(
            f"K and D2 must be ({n}, {n}) for a solution on {n} points, got {np.shape(K)} and "
            f"{np.shape(D2)}"
        )
    dK, dlogC = _rbf_l2_derivative_blocks(K, D2, sigma, sol)
    # by blocks of columns: one n x |S| array made, not three (issue 64)
    cols = np.empty((n, dK.S.size))
    for j, Dj in dK.blocks():
        cols[:, j] = Dj
    return [cols, dlogC]


def _rbf_l2_derivative_blocks(K, D2, sigma: float, sol: DualSolution) -> list:
    """:func:`rbf_l2_derivatives` on checked inputs, the sigma-derivative's columns as
    :class:`DerivativeColumns` (made where :func:`_loo_gradient` reads them)."""
    S = np.flatnonzero(sol.support)
    return [DerivativeColumns(as_kernel(K), np.asarray(D2), float(sigma), S), -sol.H_diag[S]]


@dataclass(frozen=True)
class DerivativeColumns:
    """The support columns ``dK[:, S] = K[:, S] * D2[:, S] / sigma^2`` of the kernel's
    derivative in ``log sigma`` (RBSVM eq. (38)), made :data:`_COLUMN_VALUES` values at a time
    where they are read, never as one ``n x |S|`` array (issue 64: that array was at the
    exact stage's peak beside the support factor, its inverse and ``B diag(g) B``)."""

    K: np.ndarray | KernelColumns
    D2: np.ndarray
    sigma: float
    S: np.ndarray

    def blocks(self):
        """``(j, dK[:, S[j]])`` for consecutive slices ``j`` of the support columns."""
        for j in gen_batches(self.S.size, _block_columns(self.D2.shape[0])):
            cols = self.S[j]
            yield j, rbf_dlogsigma(kernel_columns(self.K, cols), self.D2[:, cols], self.sigma)


#: kernel values per block of columns of :func:`rbf_l2_derivatives` (2 MB)
_COLUMN_VALUES = 2**18
