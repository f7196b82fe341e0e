"""The exact low-rank L2-SVM and its leave-one-out outputs from passes over row blocks.

The primal Newton method of :func:`svmtune.lowrank.fit_l2_svm_lowrank` (RBSVM eq. (6)-(7),
(22); Keerthi & DeCoste 2005, Chapelle 2007) reads the features ``Z`` only through

* the active set's Gram matrix ``G = Z_A^T diag(c_A) [Z_A, 1, y_A]`` (``c = C w``), built
  once and then updated by the rows entering or leaving ``A``
  (:class:`svmtune.lowrank._solver._ActiveGram`; here a pass over those rows only);
* per iteration, the margins along the Newton step ``Z dv + db`` and the gradient's
  ``Z^T (c y xi)``: one pass over all rows.  The Armijo line search then needs no pass: the
  margins at ``v + t dv`` are ``f + t (Z dv + db)``.

So :func:`fit_l2_svm_blocks` runs on a row-block driver (:mod:`svmtune.lowrank._blocks`)
with ``O(m^2)`` memory beyond ``O(n)`` vectors.  Its final ``(v, b)`` solve the support-set
system ``M [beta; b] = [y_S; 0]`` (RBSVM eq. (22)) exactly, through the Woodbury identity in
the ``m``-space: with ``A = I + Z_S^T D^{-1} Z_S`` (``D^{-1} = diag(c_S)``) and ``q = A^{-1}
Z_S^T c_S``,

    u = H^{-1} 1 = c_S (1 - Z_S q),   s = 1^T u = sum c_S - (Z_S^T c_S)^T q,
    b = 1^T H^{-1} y_S / s,           v = Z_S^T beta = A^{-1} Z_S^T c_S (y_S - b),

all from the ``(m + 2)``-square ``G`` of the support set; ``beta_i = c_i (y_i - z_i^T v - b)``.
The leave-one-out outputs of RBSVM eq. (27) need per row only ``z_i`` and the diagonal

    (M^{-1})_ii = c_i - c_i^2 z_i^T A^{-1} z_i - u_i^2 / s

(:class:`svmtune._factor.WoodburyFactor`'s ``1/d_i - |e_i|^2``): one pass
(:func:`lowrank_loo_blocks`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from svmtune._dual_solution import l2_diagonal, safe_diagonal
from svmtune.lowrank._blocks import BlockOp, gram_block, margins_block, weighted_sum_block
from svmtune.lowrank._solver import (
    _ActiveGram,
    armijo_step,
    check_task_labels,
    newton_done,
    warn_not_converged,
)

__all__ = [
    "BlockedL2Solution",
    "fit_l2_svm_blocks",
    "loo_terms_block",
    "lowrank_loo_blocks",
    "support_system",
]


class _BlockedGram(_ActiveGram):
    """:class:`svmtune.lowrank._solver._ActiveGram` on a row-block driver: its update rule
    (rebuild from the active set when more than half of it changes, else add and subtract
    the changed rows) with each block of rows one reduction pass (:func:`gram_block`) over
    those rows, never a ``|rows| x m`` copy of ``Z``."""

    def __init__(self, rows, y: np.ndarray, Cw: np.ndarray) -> None:
        self.rows, self.y, self.Cw = rows, y, Cw
        self.m = rows.m
        self.act = np.zeros(y.shape[0], dtype=bool)
        self.G = np.zeros((self.m + 2, self.m + 2))
        #: rows summed into the Gram matrix so far (the flop model's ``gram_passes``)
        self.rows_summed = 0

    def _block(self, idx: np.ndarray) -> np.ndarray:
        where = np.zeros(self.y.shape[0], dtype=bool)
        where[idx] = True
        self.rows_summed += int(idx.size)
        op = BlockOp(gram_block, (self.y, self.Cw), reduce=True)
        return self.rows.run([op], where=where)[0]


@dataclass
class BlockedL2Solution:
    """The low-rank L2-SVM of :func:`fit_l2_svm_blocks` and its support-set system.

    Attributes
    ----------
    v : ndarray (m,)
        Primal vector ``Z_S^T beta``: ``f(x) = z(x)^T v + b``.
    b : float
    support : ndarray of bool (n,)
        ``alpha_i > 0``.
    y, Cw : ndarray (n,)
        Labels (-1/+1) and ``C w`` (0 where ``w = 0``).
    chol : ndarray (m, m)
        Lower Cholesky factor of ``A = I + Z_S^T diag(c_S) Z_S``.
    q : ndarray (m,)
        ``A^{-1} Z_S^T c_S``.
    s : float
        ``1^T H_SS^{-1} 1`` (the Schur complement of RBSVM eq. (22)'s ``M``).
    n_iter : int
    converged : bool
    """

    v: np.ndarray
    b: float
    support: np.ndarray
    y: np.ndarray
    Cw: np.ndarray
    chol: np.ndarray
    q: np.ndarray
    s: float
    n_iter: int
    converged: bool

    @property
    def n_support(self) -> int:
        return int(self.support.sum())


def support_system(G: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, np.ndarray, float]:
    """``(v, b, chol, q, s)`` of the support-set system (RBSVM eq. (22)) from the Gram matrix
    ``G = Z_S^T diag(c_S) [Z_S, 1, y_S]`` (module docstring); ``O(m^3)``.

    Raises
    ------
    FloatingPointError
        If ``s = 1^T H_SS^{-1} 1`` is not positive (round-off on a degenerate support set).
    """
    m = G.shape[0] - 2
    A = G[:m, :m] + np.eye(m)
    chol = sla.cholesky(A, lower=True, check_finite=False)
    gz1, gzy = G[:m, m], G[:m, m + 1]
    q, p = sla.cho_solve((chol, True), np.column_stack([gz1, gzy]), check_finite=False).T
    s = float(G[m, m] - gz1 @ q)
    if not s > 0:
        raise FloatingPointError("low-rank L2-SVM support-set system is singular (s <= 0)")
    b = float(G[m, m + 1] - gz1 @ p) / s
    return p - q * b, b, chol, q, s


def fit_l2_svm_blocks(
    rows,
    y: np.ndarray,
    C: float,
    *,
    sample_weight: np.ndarray | None = None,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> BlockedL2Solution:
    """Exact L2-SVM on ``K~ = Z Z^T`` (RBSVM eq. (6)-(7), (22)) from passes over row blocks.

    The primal Newton method of :func:`svmtune.lowrank.fit_l2_svm_lowrank` from ``v = 0,
    b = 0``, iterate for iterate the same (up to round-off), with ``Z`` read block by block
    through ``rows`` (module docstring): one pass over all rows per Newton iteration plus
    the Gram matrix's passes over the rows that change, ``O(m^2 + block x m)`` memory besides
    ``O(n)`` vectors.

    Parameters
    ----------
    rows : RowBlocks or DaskRowBlocks
        The driver of the rows and their features (:func:`svmtune.lowrank._dask_blocks.row_blocks`).
    y : array of {-1, +1} (n,)
    C : float
    sample_weight : array (n,), optional
        Per-sample weights (``w_i = 0``: the row takes no part).
    tol : float
        KKT tolerance.
    max_iter : int

    Returns
    -------
    BlockedL2Solution

    Raises
    ------
    ValueError
        If ``y`` is not -1/+1 with both classes among the rows of positive weight, ``C`` or
        the weights are invalid.
    FloatingPointError
        If the support set degenerates to one class.
    """
    y = np.asarray(y, dtype=float).ravel()
    n = y.shape[0]
    if n != rows.n:
        raise ValueError(f"y has {n} labels but the rows are {rows.n}")
    check_task_labels(y)
    d = l2_diagonal(n, C, sample_weight)
    Cw = np.where(np.isfinite(d), 1.0 / d, 0.0)
    if np.unique(y[Cw > 0]).size < 2:
        raise ValueError("L2-SVM needs points of both classes with positive weight")
    gram = _BlockedGram(rows, y, Cw)
    act, n_iter, converged = _newton(rows, gram, y, Cw, tol, max_iter)
    if act.sum() < 2 or np.all(y[act] == y[act][0]):
        raise FloatingPointError("low-rank L2-SVM support set degenerated to one class")
    # a fresh Gram matrix of the support set: the updated one carries the round-off of
    # every row that entered and left
    v, b, chol, q, s = support_system(gram._block(np.flatnonzero(act)))
    return BlockedL2Solution(v, b, act, y, Cw, chol, q, s, n_iter, converged)


def _primal_at(f: np.ndarray, y: np.ndarray, Cw: np.ndarray, v: np.ndarray):
    """Primal value, slacks and active set at the margins ``f = Z v + b``."""
    xi = 1.0 - y * f
    act = (xi > 0) & (Cw > 0)
    return 0.5 * float(v @ v) + 0.5 * float(Cw[act] @ xi[act] ** 2), xi, act


def _newton(rows, gram: _BlockedGram, y, Cw, tol: float, max_iter: int):
    """The primal Newton iteration of :func:`svmtune.lowrank._solver._fit_l2_svm_lowrank`
    on margins kept per row: returns ``(active set, iterations, converged)``."""
    v, b = np.zeros(rows.m), 0.0
    f = np.zeros(y.shape[0])
    val, xi, act = _primal_at(f, y, Cw, v)
    converged, it = False, 0
    for it in range(1, max_iter + 1):  # noqa: B007
        vn, bn = gram.newton_point(act)
        dv, db = vn - v, bn - b
        r = np.where(act, Cw * y * xi, 0.0)
        step = BlockOp(margins_block, consts=(dv, db))
        g, Ztr = rows.run([step, BlockOp(weighted_sum_block, (r,), reduce=True)])
        gv = v - Ztr
        gb = -float(r.sum())
        t, (val_t, xi_t, act_t) = armijo_step(
            lambda t, f=f, g=g, v=v, dv=dv: _primal_at(f + t * g, y, Cw, v + t * dv),
            val,
            float(gv @ dv + gb * db),
        )
        v, b, f, val, xi = v + t * dv, b + t * db, f + t * g, val_t, xi_t
        same = np.array_equal(act_t, act)
        act = act_t
        if newton_done(t, same, gv, gb, tol, Cw):
            converged = True
            break
    if not converged:
        warn_not_converged(max_iter)
    return act, it, converged


def loo_terms_block(
    Z: np.ndarray,
    y: np.ndarray,
    c: np.ndarray,
    support: np.ndarray,
    v: np.ndarray,
    b: float,
    chol: np.ndarray,
    q: np.ndarray,
    s: float,
) -> np.ndarray:
    """Per row ``[f_i, (M^{-1})_ii, beta_i]`` (RBSVM eq. (22), (27); module docstring): the
    model's output ``z_i^T v + b``, and on the support set the diagonal of ``M^{-1}`` and the
    dual coefficient ``beta_i = c_i (y_i - f_i)`` (1 and 0 off it).  ``O(m^2)`` a support
    row (a triangular solve with ``chol``), ``O(m)`` another."""
    f = Z @ v + b
    out = np.column_stack([f, np.ones_like(f), np.zeros_like(f)])
    support = support.astype(bool)
    if support.any():
        ZS, cS = Z[support], c[support]
        W = sla.solve_triangular(chol, ZS.T, lower=True, check_finite=False)
        u = cS * (1.0 - ZS @ q)
        out[support, 1] = cS - cS**2 * np.einsum("ij,ij->j", W, W) - u**2 / s
        out[support, 2] = cS * (y[support] - f[support])
    return out


def lowrank_loo_blocks(rows, sol: BlockedL2Solution) -> np.ndarray:
    """Closed-form LOO decision values (RBSVM eq. (27)) of :func:`fit_l2_svm_blocks`'s
    L2-SVM, by one pass over the rows: ``r_i = y_i - beta_i / (M^{-1})_ii`` on the support
    set, ``f(x_i)`` elsewhere -- :func:`svmtune.loo.rbsvm_lowrank.lowrank_loo` without ``Z``
    (the diagonal floored as there, :func:`svmtune._dual_solution.safe_diagonal`)."""
    op = BlockOp(
        loo_terms_block,
        (sol.y, sol.Cw, sol.support.astype(float)),
        (sol.v, sol.b, sol.chol, sol.q, sol.s),
    )
    terms = rows.run([op])[0]
    out = terms[:, 0].copy()
    S = sol.support
    out[S] = sol.y[S] - terms[S, 2] / safe_diagonal(terms[S, 1])
    return out
