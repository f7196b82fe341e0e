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
with ``O(m^2)`` memory beyond ``O(n)`` vectors.  The driver may hold the kernel rows
``K = k(X, X_L)`` instead of ``Z = K R^{-1}``: the margins and the gradient are then computed
on ``K`` with ``R`` folded into an ``m``-vector (:class:`svmtune.lowrank._blocks.FeatureBasis`),
so that a pass over all rows makes no triangular solve with ``R``; only the Gram matrix's
rows are mapped to features.  Its final ``(v, b)`` solve the support-set
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

On many rows the Newton method starts from the solution on a nested subsample (every
``WARM_START_STRIDE``-th row, :func:`warm_start_stride`): a coarse-to-fine Newton that needs
fewer passes over all rows to the same optimum (the problem is strictly convex).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from svmtune._dual_solution import l2_diagonal, safe_diagonal
from svmtune.lowrank._blocks import (
    BlockOp,
    FeatureBasis,
    gram_block,
    margins_block,
    weighted_sum_block,
)
from svmtune.lowrank._solver import (
    armijo_step,
    check_task_labels,
    newton_done,
    newton_solution,
    warn_not_converged,
)

__all__ = [
    "WARM_START_MIN_ROWS",
    "WARM_START_STRIDE",
    "BlockedL2Solution",
    "active_gram_block",
    "fit_l2_svm_blocks",
    "loo_terms_block",
    "lowrank_loo_blocks",
    "support_system",
    "warm_start_stride",
]

#: the warm start fits every this-many-th row first (:func:`warm_start_stride`)
WARM_START_STRIDE = 16
#: the fewest subsample rows for which :func:`warm_start_stride` starts from a subsample
WARM_START_MIN_ROWS = 4096


def warm_start_stride(n: int, m: int) -> int | None:
    """The stride of the warm start's subsample on ``n`` rows of rank ``m``
    (:data:`WARM_START_STRIDE`), or None for a cold start from ``v = 0, b = 0``.

    The rule: a warm start when the subsample has at least ``max(WARM_START_MIN_ROWS, 2 m)``
    rows (``n >= 65,536`` at ``m <= 2,048``).  Why it pays there: the subsample problem
    (``C`` times ``n / n_sub``, each row standing for the rows it skips) costs about
    ``1 / 16`` of a cold fit, and its ``(v, b)`` carries nearly the final active set, so the
    fit on all rows needs one margins pass and a few Newton iterations (each a pass over all
    rows) instead of the cold start's 5-15, and builds its first Gram matrix from that active
    set instead of from every row.  Below it, a cold fit is cheap (at ``m = 500`` the rows of
    ``n < 67,108`` fit :data:`svmtune.lowrank._blocks.FEATURE_CACHE_BYTES`: a pass reads
    them from memory), and a subsample of fewer than ``2 m`` rows barely determines an
    ``m``-dimensional ``v``.
    """
    sub = -(-int(n) // WARM_START_STRIDE)
    return WARM_START_STRIDE if sub >= max(WARM_START_MIN_ROWS, 2 * int(m)) else None


class _BlockedGram:
    """The active set's Gram matrix on a row-block driver, with the update rule of
    :class:`svmtune.lowrank._solver._ActiveGram` (rebuild from the active set when more than
    half of it changes, else add and subtract the changed rows), each block of rows one
    reduction pass (:func:`gram_block`, on the features of kernel rows) over those rows,
    never a ``|rows| x m`` copy of the rows."""

    def __init__(self, rows, y: np.ndarray, Cw: np.ndarray, basis: FeatureBasis) -> None:
        self.rows, self.y, self.Cw, self.basis = rows, y, Cw, basis
        self.m = rows.m
        self.act = np.zeros(y.shape[0], dtype=bool)
        self.G = np.zeros((self.m + 2, self.m + 2))
        #: whether G was built from the active set ``act`` in one pass (not updated since)
        self.fresh = False
        #: rows summed into the Gram matrix so far (the flop model's ``gram_passes``)
        self.rows_summed = 0

    def _block(self, idx: np.ndarray) -> np.ndarray:
        where = np.zeros(self.y.shape[0], dtype=bool)
        where[idx] = True
        self.rows_summed += int(idx.size)
        op = BlockOp(gram_block, (self.y, self.Cw), (self.basis.inverse(),), reduce=True)
        return self.rows.run([op], where=where)[0]

    def update(self, act: np.ndarray) -> None:
        """``G`` of the active set ``act`` (only rows that changed are read)."""
        change = np.flatnonzero(act != self.act)
        if 2 * change.size > act.sum():
            self.G, self.fresh = self._block(np.flatnonzero(act)), True
        elif change.size:
            add, rem = change[act[change]], change[~act[change]]
            self.G = self.G + (self._block(add) if add.size else 0.0)
            self.G = self.G - (self._block(rem) if rem.size else 0.0)
            self.fresh = False
        self.act = act.copy()

    def newton_point(self, act: np.ndarray) -> tuple[np.ndarray, float]:
        """The Newton point with the active set ``act`` fixed (support-set system (22))."""
        self.update(act)
        return newton_solution(self.G)

    def support_gram(self, act: np.ndarray) -> np.ndarray:
        """The features' Gram matrix of the support set ``act`` summed afresh (the updated
        one carries the round-off of every row that entered and left); ``G`` itself when it
        was just built from ``act`` in one pass (the same sums)."""
        if not (self.fresh and np.array_equal(act, self.act)):
            self.G, self.fresh, self.act = self._block(np.flatnonzero(act)), True, act.copy()
        return self.G


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
        Newton iterations on all rows (the warm start's on its subsample not counted).
    converged : bool
    basis : FeatureBasis
        The features of the driver's rows the solution was fitted on.
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
    basis: FeatureBasis = field(default_factory=FeatureBasis)

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
    R: np.ndarray | None = None,
    warm_start: int | str | None = "auto",
    tol: float = 1e-8,
    max_iter: int = 100,
) -> BlockedL2Solution:
    """Exact L2-SVM on ``K~ = Z Z^T`` (RBSVM eq. (6)-(7), (22)) from passes over row blocks.

    The primal Newton method of :func:`svmtune.lowrank.fit_l2_svm_lowrank`, with ``Z`` read
    block by block through ``rows`` (module docstring): one pass over all rows per Newton
    iteration plus the Gram matrix's passes over the rows that change, ``O(m^2 + block x
    m)`` memory besides ``O(n)`` vectors.  From ``v = 0, b = 0`` it is iterate for iterate
    the dense method (up to round-off); with a warm start it first solves the problem on
    every ``k``-th row (``C`` times ``n / n_sub``; itself warm-started by the same rule) and
    starts from that ``(v, b)``: the same optimum in fewer passes over all rows.

    Parameters
    ----------
    rows : RowBlocks or DaskRowBlocks
        The driver of the rows (:func:`svmtune.lowrank._dask_blocks.row_blocks`).
    y : array of {-1, +1} (n,)
    C : float
    sample_weight : array (n,), optional
        Per-sample weights (``w_i = 0``: the row takes no part).
    R : ndarray (m, m), optional
        When the driver's rows are the kernel rows ``k(x_i, X_L)``: the upper factor of
        ``K_mm + jitter I = R^T R``, the features being ``Z = K R^{-1}``
        (:class:`svmtune.lowrank._blocks.FeatureBasis`); None when the rows are ``Z``.
    warm_start : "auto", int or None
        The stride ``k`` of the warm start's subsample; "auto": :func:`warm_start_stride`;
        None (or 1): from ``v = 0, b = 0``.
    tol : float
        KKT tolerance.
    max_iter : int

    Returns
    -------
    BlockedL2Solution

    Raises
    ------
    ValueError
        If ``y`` is not -1/+1 with both classes among the rows of positive weight, ``C``,
        the weights or ``warm_start`` are invalid.
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
    if warm_start == "auto":
        warm_start = warm_start_stride(n, rows.m)
    elif warm_start is not None and (
        isinstance(warm_start, bool) or not isinstance(warm_start, int) or warm_start < 1
    ):
        raise ValueError(f"warm_start must be 'auto', None or an integer >= 1, got {warm_start!r}")
    basis = FeatureBasis(R)
    gram = _BlockedGram(rows, y, Cw, basis)
    start = _coarse_start(rows, y, Cw, basis, tol, max_iter, warm_start)
    _, _, act, n_iter, converged = _newton(rows, gram, y, Cw, tol, max_iter, start)
    if not converged:
        warn_not_converged(max_iter)
    if act.sum() < 2 or np.all(y[act] == y[act][0]):
        raise FloatingPointError("low-rank L2-SVM support set degenerated to one class")
    v, b, chol, q, s = support_system(gram.support_gram(act))
    return BlockedL2Solution(v, b, act, y, Cw, chol, q, s, n_iter, converged, basis)


def _coarse_start(rows, y, Cw, basis: FeatureBasis, tol: float, max_iter: int, step):
    """``(v, b)`` of the L2-SVM on every ``step``-th row (each standing for ``n / n_sub``
    rows: ``C w`` scaled so), itself warm-started by :func:`warm_start_stride`; None for
    no step, or when the subsample lacks a class of positive weight."""
    if step is None or step <= 1 or rows.n < 2 * step:
        return None
    sub = rows.subsample(step)
    y_s, Cw_s = y[::step], Cw[::step] * (rows.n / sub.n)
    if np.unique(y_s[Cw_s > 0]).size < 2:
        return None
    start = _coarse_start(sub, y_s, Cw_s, basis, tol, max_iter, warm_start_stride(sub.n, sub.m))
    v, b, *_ = _newton(sub, _BlockedGram(sub, y_s, Cw_s, basis), y_s, Cw_s, tol, max_iter, start)
    return v, b


def _primal_at(f: np.ndarray, y: np.ndarray, Cw: np.ndarray, v: np.ndarray):
    """Primal value, slacks and active set at the margins ``f = Z v + b``."""
    xi = 1.0 - y * f
    act = (xi > 0) & (Cw > 0)
    return 0.5 * float(v @ v) + 0.5 * float(Cw[act] @ xi[act] ** 2), xi, act


def _newton(rows, gram: _BlockedGram, y, Cw, tol: float, max_iter: int, start=None):
    """The primal Newton iteration of :func:`svmtune.lowrank._solver._fit_l2_svm_lowrank`
    on margins kept per row, from ``start = (v, b)`` (one pass for its margins and its
    active set's Gram matrix, :func:`active_gram_block`) or from ``v = 0, b = 0``: returns
    ``(v, b, active set, iterations, converged)``."""
    basis = gram.basis
    if start is None:
        v, b = np.zeros(rows.m), 0.0
        f = np.zeros(y.shape[0])
    else:  # the margins at the start and the Gram matrix of its active set: one pass
        v, b = start
        consts = (basis.coef(v), b)
        f, G = rows.run(
            [
                BlockOp(margins_block, consts=consts),
                BlockOp(active_gram_block, (y, Cw), (*consts, basis.inverse()), reduce=True),
            ]
        )
    val, xi, act = _primal_at(f, y, Cw, v)
    if start is not None:
        gram.G, gram.act, gram.rows_summed = G, act.copy(), gram.rows_summed + int(act.sum())
    converged, it = False, 0
    for it in range(1, max_iter + 1):  # noqa: B007
        vn, bn = gram.newton_point(act)
        dv, db = vn - v, bn - b
        r = np.where(act, Cw * y * xi, 0.0)
        step = BlockOp(margins_block, consts=(basis.coef(dv), db))
        g, Ktr = rows.run([step, BlockOp(weighted_sum_block, (r,), reduce=True)])
        gv = v - basis.sums(Ktr)
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
    return v, b, act, it, converged


def active_gram_block(
    Z: np.ndarray,
    y: np.ndarray,
    c: np.ndarray,
    v: np.ndarray,
    b: float,
    R_inv: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`gram_block` of the block's rows active at ``(v, b)``: ``y_i (z_i^T v + b) < 1``
    (the margins of :func:`margins_block`) and ``c_i > 0``; on kernel rows with ``v`` times
    ``R^{-1}`` and ``R_inv`` given.  A warm start's first Gram matrix, in its margins' pass."""
    act = (1.0 - y * margins_block(Z, v, b) > 0) & (c > 0)
    return gram_block(Z[act], y[act], c[act], R_inv)


def loo_terms_block(
    Z: np.ndarray,
    y: np.ndarray,
    c: np.ndarray,
    support: np.ndarray,
    v: np.ndarray,
    b: float,
    B: np.ndarray,
    q: np.ndarray,
    s: float,
) -> np.ndarray:
    """Per row ``[f_i, (M^{-1})_ii, beta_i]`` (RBSVM eq. (22), (27); module docstring): the
    model's output ``f_i = z_i^T v + b``, and on the support set the diagonal of ``M^{-1}``
    with ``z_i^T A^{-1} z_i = |B z_i|^2`` (``B = L^{-1}``, ``A = L L^T``) and the dual
    coefficient ``beta_i = c_i (y_i - f_i)`` (1 and 0 off it).  On kernel rows ``k_i`` the
    same with ``v``, ``q`` times ``R^{-1}`` and ``B = L^{-1} R^{-T}``
    (:meth:`svmtune.lowrank._blocks.FeatureBasis.quadratic`).  ``O(m^2)`` a support row
    (a product with ``B``), ``O(m)`` another."""
    f = Z @ v + b
    out = np.column_stack([f, np.ones_like(f), np.zeros_like(f)])
    support = support.astype(bool)
    if support.any():
        ZS, cS = Z[support], c[support]
        E = ZS @ B.T
        u = cS * (1.0 - ZS @ q)
        out[support, 1] = cS - cS**2 * np.einsum("ij,ij->i", E, E) - u**2 / s
        out[support, 2] = cS * (y[support] - f[support])
    return out


def lowrank_loo_blocks(rows, sol: BlockedL2Solution) -> np.ndarray:
    """Closed-form LOO decision values (RBSVM eq. (27)) of :func:`fit_l2_svm_blocks`'s
    L2-SVM, by one pass over the rows: ``r_i = y_i - beta_i / (M^{-1})_ii`` on the support
    set, ``f(x_i)`` elsewhere -- :func:`svmtune.loo.rbsvm_lowrank.lowrank_loo` without ``Z``
    (the diagonal floored as there, :func:`svmtune._dual_solution.safe_diagonal`)."""
    basis = sol.basis
    op = BlockOp(
        loo_terms_block,
        (sol.y, sol.Cw, sol.support.astype(float)),
        (basis.coef(sol.v), sol.b, basis.quadratic(sol.chol), basis.coef(sol.q), sol.s),
    )
    terms = rows.run([op])[0]
    out = terms[:, 0].copy()
    S = sol.support
    out[S] = sol.y[S] - terms[S, 2] / safe_diagonal(terms[S, 1])
    return out
