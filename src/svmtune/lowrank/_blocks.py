"""Row-block kernels of the Nystroem model: pure functions of a block of rows, and their driver.

Everything the low-rank L2-SVM (RBSVM eq. (6)-(7) on ``K~ = Z Z^T``) needs from its ``n``
training rows is a sum over rows or a value per row of the features
``z_i = k_i R^{-1}``, ``k_i = k(x_i, X_L)`` (:mod:`svmtune.lowrank._nystroem`):

* the active set's Gram matrix ``Z_A^T diag(c_A) [Z_A, 1, y_A]`` (:func:`gram_block`),
  the gradient's ``Z^T r`` (:func:`weighted_sum_block`) and the trace residual
  ``sum_i w_i (1 - |z_i|^2)`` (:func:`residual_block`): ``O(m^2)`` sums;
* the margins ``Z V + b`` (:func:`margins_block`) and the leave-one-out terms of RBSVM eq.
  (27) (:func:`svmtune.lowrank._blocked_solver.loo_terms_block`): ``O(1)`` values a row.

Each is linear (or quadratic) in ``z_i``, so it is computed on the **kernel rows** ``K_b``
with ``R`` applied once to an ``O(m^2)`` result or folded into an ``m``-vector or ``m x m``
constant (:class:`FeatureBasis`): ``Z V + b = K (R^{-1} V) + b``, ``Z^T r = R^{-T} (K^T
r)``; the Gram matrix's rows, read only where the active set changes, are mapped to
features by one product with ``R^{-1}`` (:class:`FeatureBasis` says why).  A pass over all
rows then costs the kernel, ``O(block x m d)`` a block, and no triangular solve with ``R``
(``O(block x m^2)``, which dominated a pass at ``m = 500``, issue 64).

A **block function** takes a block of rows (kernel rows, or features where the driver holds
them) and the block's slices of per-row vectors and returns numbers; :class:`BlockOp` names
one with its arguments.  The **driver** :class:`RowBlocks` computes ``K_b = features(X_b)``
for one block of rows of an in-memory NumPy or CSR ``X`` at a time (:class:`NystroemMap`)
and applies the operations of a pass to it, so that a pass holds ``O(block x m)`` beyond the
data and its results, never an ``n x m`` matrix (40 GB at ``n = 10^7``, ``m = 500``).  A
dask ``X`` runs the same block step, :func:`block_outputs`, through ``dask.array.map_blocks``
(:mod:`svmtune.lowrank._dask_blocks`).  When the ``n x m`` rows fit
:data:`FEATURE_CACHE_BYTES` the driver keeps its blocks after the first full pass instead of
recomputing them (the ``O(n m d)`` kernel of every pass).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.utils import gen_batches

from svmtune.kernels import (
    rbf_from_sqdist,
    sparse_row_norms,
    sparse_squared_distances,
    squared_distances,
)

__all__ = [
    "FEATURE_CACHE_BYTES",
    "BlockOp",
    "FeatureBasis",
    "NystroemMap",
    "RowBlocks",
    "block_outputs",
    "chunk_outputs",
    "block_rows",
    "features_fit_cache",
    "gram_block",
    "is_dask_array",
    "margins_block",
    "residual_block",
    "weighted_sum_block",
]

#: the rows of a pass (``8 n m`` bytes: kernel rows or features) at most this large are kept
#: in blocks after the first full pass of :class:`RowBlocks` (256 MiB: ``n = 67,108`` rows at
#: ``m = 500``); larger, every pass recomputes its blocks and holds one at a time
FEATURE_CACHE_BYTES = 2**28


def block_rows(m: int, values: int = 2**22) -> int:
    """Rows per block so that a block holds at most ``values`` kernel values (``m`` a row);
    :class:`svmtune.estimators_lowrank.LowRankL2SVC` passes
    :data:`svmtune.estimators.DECISION_BLOCK`."""
    return max(1, int(values) // max(1, int(m)))


def features_fit_cache(n: int, m: int, cache_bytes: int | None = None) -> bool:
    """Whether the ``n x m`` features fit ``cache_bytes`` (:data:`FEATURE_CACHE_BYTES`, read
    at the call, when None): then :class:`RowBlocks` keeps them after the first full pass."""
    budget = FEATURE_CACHE_BYTES if cache_bytes is None else cache_bytes
    return 8 * int(n) * int(m) <= budget


def is_dask_array(X) -> bool:
    """Whether ``X`` is a dask array, without importing dask (a dask array exists only once
    ``dask.array`` is imported)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


class NystroemMap:
    """The feature map ``x -> k(x, X_L) R^{-1}`` of the Nystroem kernel on the landmark rows
    ``X_L`` (``K_mm + jitter I = R^T R``, :func:`svmtune.lowrank.nystroem_factor`), or the
    kernel row ``x -> k(x, X_L)`` itself when ``R`` is None (prediction: ``f(x) = k(x, X_L) W
    + b`` with ``W = R^{-1} v`` needs no triangular solve).

    The RBF kernel of a block: sparse (either side) through
    :func:`svmtune.kernels.sparse_squared_distances` with the landmarks' norms computed once,
    never densified; dense through :func:`svmtune.kernels.squared_distances`.  A picklable
    object (dask ships it to its workers).
    """

    def __init__(self, X_L, sigma: float, R: np.ndarray | None = None):
        self.X_L, self.sigma, self.R = X_L, float(sigma), R
        self.L_norms = sparse_row_norms(X_L) if sp.issparse(X_L) else None

    @property
    def m(self) -> int:
        """Features per row: the number of landmarks."""
        return int(self.X_L.shape[0])

    def kernel(self, X_b) -> np.ndarray:
        """``K(X_b, X_L)`` of the RBF kernel at ``sigma``."""
        if sp.issparse(X_b) or sp.issparse(self.X_L):
            D2 = sparse_squared_distances(X_b, self.X_L, Y_norms=self.L_norms)
        else:
            D2 = squared_distances(X_b, self.X_L)
        return rbf_from_sqdist(D2, self.sigma)

    def __call__(self, X_b) -> np.ndarray:
        K = self.kernel(X_b)
        if self.R is None:
            return K
        return sla.solve_triangular(self.R, K.T, trans="T", lower=False, check_finite=False).T


class FeatureBasis:
    """The features ``Z = K R^{-1}`` of the kernel rows ``K`` a driver computes
    (``K_mm + jitter I = R^T R``, ``R`` upper triangular): how ``R`` enters the quantities of
    the blocked solver that are linear in ``z_i`` -- applied to an ``m``-vector once a pass
    instead of to every row (module docstring).  ``R`` None: the rows are the features
    themselves and every map is the identity.

    The Gram matrix is the exception: summed on kernel rows and carried over,
    ``R^{-T} (K^T diag(c) K) R^{-1}`` carries the rounding of the kernel sums amplified by
    ``cond(R)^2`` (measured: ``v`` off by 4e-8 relative at ``cond(R) = 4.7e4``, against
    5e-14 on the features), so :func:`gram_block` maps its rows to features by a product
    with :meth:`inverse` (``2 m^2`` a row, the order of the Gram's own ``(m + 2)^2``; the
    Gram's passes read only the rows entering or leaving the active set).
    """

    def __init__(self, R: np.ndarray | None = None) -> None:
        self.R = None if R is None else np.asarray(R, dtype=float)
        self._inv: np.ndarray | None = None

    def coef(self, V: np.ndarray) -> np.ndarray:
        """``R^{-1} V``: the kernel-row coefficients of feature coefficients ``V`` (``(m,)``
        or ``(m, k)``), ``Z V = K (R^{-1} V)``."""
        if self.R is None:
            return V
        return sla.solve_triangular(self.R, V, lower=False, check_finite=False)

    def sums(self, s: np.ndarray) -> np.ndarray:
        """``R^{-T} s``: ``Z^T r`` from the kernel rows' ``s = K^T r``."""
        if self.R is None:
            return s
        return sla.solve_triangular(self.R, s, trans="T", lower=False, check_finite=False)

    def quadratic(self, chol: np.ndarray) -> np.ndarray:
        """``B = L^{-1} R^{-T}`` (lower triangular) for ``A = L L^T`` (``chol``, lower), so that
        ``z_i^T A^{-1} z_i = |B k_i|^2``: the leave-one-out diagonal of RBSVM eq. (27) by a
        product with a fixed ``m x m`` matrix a row instead of a triangular solve."""
        m = chol.shape[0]
        Rt_inv = np.eye(m) if self.R is None else self.sums(np.eye(m))
        return sla.solve_triangular(chol, Rt_inv, lower=True, check_finite=False)

    def inverse(self) -> np.ndarray | None:
        """``R^{-1}`` (upper triangular; None for the identity), computed once: ``Z = K R^{-1}``
        as one matrix product a block where a block function needs the features themselves
        (:func:`gram_block`, :func:`residual_block`)."""
        if self.R is not None and self._inv is None:
            self._inv = self.coef(np.eye(self.R.shape[0]))
        return self._inv


# ---------------------------------------------------------------------------------------------
# Block functions: a block of rows (kernel rows K_b, or the features Z_b where the driver holds
# them) and the block's per-row vectors in, numbers out.  Each is the definition of its
# quantity on the block's rows, so that the sum (or the concatenation) over the blocks is the
# quantity on all rows; FeatureBasis turns a kernel-row result into the features' one.
# ---------------------------------------------------------------------------------------------
def gram_block(
    Z: np.ndarray, y: np.ndarray, c: np.ndarray, R_inv: np.ndarray | None = None
) -> np.ndarray:
    """``[Z, 1, y]^T diag(c) [Z, 1, y]``, ``(m + 2) x (m + 2)``: the block's share of the
    active set's Gram matrix of the primal Newton step (RBSVM eq. (22); the rows of the
    block are those of the active set, or those entering or leaving it), with ``z_i = k_i
    R^{-1}`` of the kernel rows ``Z`` when ``R_inv`` (:meth:`FeatureBasis.inverse`) is given.
    With ``c >= 0`` it is ``S^T S``, ``S = diag(sqrt(c)) [Z, 1, y]`` (NumPy's symmetric
    rank-k update: half the flops of a general product)."""
    F = Z if R_inv is None else Z @ R_inv
    Za = np.hstack([F, np.ones((F.shape[0], 1)), y[:, None]])
    if np.all(c >= 0):
        S = Za * np.sqrt(c)[:, None]
        return S.T @ S
    return Za.T @ (Za * c[:, None])


def weighted_sum_block(Z: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``Z^T r``, ``(m,)``: the block's share of the primal gradient ``v - Z^T (c y xi)``
    (on kernel rows ``K^T r``, and ``Z^T r = R^{-T} K^T r``, :meth:`FeatureBasis.sums`)."""
    return Z.T @ r


def margins_block(Z: np.ndarray, V: np.ndarray, b: np.ndarray | float) -> np.ndarray:
    """``Z V + b``: margins of ``(v, b)`` (``V`` of shape ``(m,)``) or of several columns
    (``(m, k)``, one ``b`` each): decision values, or the Newton solver's margins at the
    iterate and along its step (on kernel rows with ``V = R^{-1} v``,
    :meth:`FeatureBasis.coef`)."""
    return Z @ V + b


def residual_block(Z: np.ndarray, w: np.ndarray, R_inv: np.ndarray | None = None) -> np.ndarray:
    """``[sum_i w_i max(0, 1 - |z_i|^2)]``: the block's share of the weighted trace residual
    ``sum_i w_i (K_ii - K~_ii)`` of the Nystroem kernel (``K_ii = 1`` for the RBF kernel;
    :attr:`svmtune.lowrank.NystroemFactor.trace_residual` unweighted), with ``z_i = k_i
    R^{-1}`` of the kernel rows ``Z`` when ``R_inv`` (:meth:`FeatureBasis.inverse`) is
    given."""
    F = Z if R_inv is None else Z @ R_inv
    return np.array([float(w @ np.maximum(1.0 - np.einsum("ij,ij->i", F, F), 0.0))])


@dataclass(frozen=True)
class BlockOp:
    """One block function of a pass with its arguments: ``fn(Z_b, *rows_b, *consts)``.

    ``rows`` are per-row arrays (``n`` rows; the driver passes each block its slice) and
    ``consts`` whole arguments; ``reduce`` says whether the results of the blocks are summed
    (an ``O(m^2)`` partial a block) or concatenated (values per row).
    """

    fn: Callable[..., np.ndarray]
    rows: tuple[np.ndarray, ...] = ()
    consts: tuple = ()
    reduce: bool = False

    def on_block(self, Z: np.ndarray, rows_b: Sequence[np.ndarray]) -> np.ndarray:
        """The block function on one block's features and row slices, as a float array."""
        return np.asarray(self.fn(Z, *rows_b, *self.consts), dtype=float)

    def shape(self, m: int) -> tuple[int, ...]:
        """The shape of the sum (``reduce``) or of one row's values, read from the block
        function on a block of no rows."""
        out = self.on_block(np.zeros((0, m)), [r[:0] for r in self.rows])
        return out.shape if self.reduce else out.shape[1:]


def block_outputs(
    features: Callable | None, X_b, sel: np.ndarray | None, ops: Sequence[BlockOp], rows_b
) -> list[np.ndarray]:
    """One block's step, the same for the NumPy and the dask driver: the features
    ``Z_b = features(X_b[sel])`` (``X_b`` itself when ``features`` is None) and each
    operation's block function on them and on its row slices ``rows_b[k]`` (already cut to
    the selected rows).  ``features`` has the number of features as ``features.m``."""
    X_sel = X_b if sel is None else X_b[sel]
    if features is None:
        Z = np.asarray(X_sel, dtype=float)
    elif X_sel.shape[0] == 0:  # a dask chunk without selected rows: partials of zeros
        Z = np.zeros((0, features.m))
    else:
        Z = features(X_sel)
    return [op.on_block(Z, r) for op, r in zip(ops, rows_b)]


def chunk_outputs(
    features: Callable | None,
    X_c,
    sel: np.ndarray | None,
    ops: Sequence[BlockOp],
    rows_c,
    block: int,
) -> list[np.ndarray]:
    """:func:`block_outputs` on a chunk of rows (a dask task's) in blocks of at most
    ``block`` selected rows, the reducing outputs summed and the others concatenated
    (:class:`PassResults`): a task holds ``block x m`` kernel values, not ``chunk x m``
    (a chunk of 100,000 rows at ``m = 500`` made a worker hold 1.4 GiB).  ``rows_c[k]`` are
    the operations' row slices, already cut to ``sel``."""
    X_sel = X_c if sel is None else X_c[sel]
    rows = X_sel.shape[0]
    if rows <= block:
        return block_outputs(features, X_sel, None, ops, rows_c)
    results = PassResults(ops, features.m if features is not None else X_sel.shape[1])
    for s in gen_batches(rows, block):
        out = block_outputs(features, X_sel[s], None, ops, [[r[s] for r in rs] for rs in rows_c])
        for k, o in enumerate(out):
            results.add(k, o)
    return results.results()


class PassResults:
    """The results of a pass, gathered block by block: the running sums of the reducing
    operations (added in place: one ``O(m^2)`` partial at a time) and the per-row values of
    the others (concatenated in row order by :meth:`results`)."""

    def __init__(self, ops: Sequence[BlockOp], m: int) -> None:
        self.ops, self.m = list(ops), int(m)
        self.sums: list[np.ndarray | None] = [None] * len(self.ops)
        self.parts: list[list[np.ndarray]] = [[] for _ in self.ops]

    def add(self, k: int, out: np.ndarray) -> None:
        """Add one block's output of operation ``k``."""
        if not self.ops[k].reduce:
            self.parts[k].append(out)
        elif self.sums[k] is None:
            self.sums[k] = np.array(out, dtype=float, copy=True)
        else:
            self.sums[k] += out

    def results(self) -> list[np.ndarray]:
        """Every operation's result, in ``ops``' order (zeros or no rows when no block came)."""
        out = []
        for op, total, parts in zip(self.ops, self.sums, self.parts):
            if op.reduce:
                out.append(np.zeros(op.shape(self.m)) if total is None else total)
            else:
                out.append(np.concatenate(parts) if parts else np.zeros((0, *op.shape(self.m))))
        return out


class RowBlocks:
    """The driver over an in-memory ``X`` (NumPy array or CSR matrix) in blocks of ``block``
    rows: each pass (:meth:`run`) computes the features of one block at a time and applies
    the block functions of the pass to it.

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix (n, d)
        The rows (a CSR matrix's row slices are cheap).
    features : callable or None
        ``X_b -> Z_b`` (a :class:`NystroemMap`); None when ``X`` holds the features.
    m : int
        Features per row.
    block : int
        Rows per block (:func:`block_rows`).
    cache_bytes : int, optional
        Keep the features' blocks after the first full pass when ``Z`` takes at most this
        many bytes (:data:`FEATURE_CACHE_BYTES` when None); 0 never keeps them.

    Attributes
    ----------
    largest : int
        The most rows of features any block held so far (an ``n x m`` matrix was never made
        when it is below ``n``; the tests read it).
    passes : int
        Passes run.
    full_passes : int
        Those over all rows (no ``where``).
    rows_read : int
        Rows the passes computed (or read from the cache): ``n`` a full pass.
    """

    def __init__(self, X, features, m: int, block: int, cache_bytes: int | None = None) -> None:
        self.X, self.features, self.m, self.block = X, features, int(m), int(block)
        self.n, self.cache_bytes = int(X.shape[0]), cache_bytes
        self.slices = list(gen_batches(self.n, self.block))
        fits = features_fit_cache(self.n, self.m, cache_bytes)
        self._cache: list[np.ndarray] | None = [] if fits else None
        self.largest = 0
        self.passes = 0
        self.full_passes = 0
        self.rows_read = 0

    def run(self, ops: Sequence[BlockOp], where: np.ndarray | None = None) -> list:
        """One pass over the rows (those of the bool mask ``where`` only): the result of every
        operation, in ``ops``' order."""
        results = PassResults(ops, self.m)
        for i, s in enumerate(self.slices):
            sel = None if where is None else where[s]
            if sel is not None and not sel.any():
                continue
            rows_b = [[_rows(r, s, sel) for r in op.rows] for op in ops]
            if self._cache is not None and i < len(self._cache):
                Z = self._cache[i] if sel is None else self._cache[i][sel]
                out = [op.on_block(Z, r) for op, r in zip(ops, rows_b)]
            elif self._cache is not None and sel is None and i == len(self._cache):
                self._cache.append(block_outputs(self.features, self.X[s], None, [_FEATS], [[]])[0])
                out = [op.on_block(self._cache[i], r) for op, r in zip(ops, rows_b)]
            else:
                out = block_outputs(self.features, self.X[s], sel, ops, rows_b)
            self.largest = max(self.largest, s.stop - s.start if sel is None else int(sel.sum()))
            for k, o in enumerate(out):
                results.add(k, o)
        self.passes += 1
        self.full_passes += where is None
        self.rows_read += self.n if where is None else int(where.sum())
        return results.results()

    def subsample(self, step: int) -> RowBlocks:
        """The driver of every ``step``-th row, ``X[::step]`` (a copy of ``n / step`` rows),
        with the same features and blocks; it keeps its features only where this driver
        keeps its own: a fit too large for the cache runs in blocks throughout (issue 64: at
        10^6 rows and 500 landmarks the warm start's 62,500 rows held 250 MB, more than X)."""
        X = self.X[::step]
        return RowBlocks(
            X if sp.issparse(X) else np.ascontiguousarray(X),
            self.features,
            self.m,
            self.block,
            self.cache_bytes if self._cache is not None else 0,
        )

    def gather(self, result):
        """A result of :meth:`run` as a NumPy array (it is one already)."""
        return result

    def lazy_rows(self, op: BlockOp):
        """The per-row values of one operation (a NumPy array; the dask driver's are lazy)."""
        return self.run([op])[0]


def _identity(Z: np.ndarray) -> np.ndarray:
    return Z


#: the operation that returns the features themselves (filling the cache)
_FEATS = BlockOp(_identity)


def _rows(r: np.ndarray, s: slice, sel: np.ndarray | None) -> np.ndarray:
    return r[s] if sel is None else r[s][sel]
