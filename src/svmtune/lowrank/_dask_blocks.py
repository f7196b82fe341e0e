"""The row-block driver on a dask array: the block step of :mod:`svmtune.lowrank._blocks`
through ``dask.array.map_blocks``, and the choice of driver for an ``X``.

:class:`DaskRowBlocks` runs a pass of block functions (:class:`svmtune.lowrank._blocks.BlockOp`)
as one ``map_blocks`` over the row chunks of ``X``: each chunk's task is
:func:`svmtune.lowrank._blocks.block_outputs` -- the same code the NumPy driver loops over --
and returns its operations' outputs flattened into one vector (the ``O(m^2)`` partial sums and
the per-row values); the client adds the partials and concatenates the rows.  No task holds
more than ``block x m`` kernel values: a chunk of more rows is run in blocks of ``block``
(:func:`svmtune.lowrank._blocks.chunk_outputs`).  dask is an optional dependency: it is
imported here, inside the functions, and only when ``X`` is a dask array.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from svmtune.lowrank._blocks import (
    BlockOp,
    PassResults,
    RowBlocks,
    block_rows,
    chunk_outputs,
    is_dask_array,
)

__all__ = ["DaskRowBlocks", "gather_rows", "row_blocks"]


def row_blocks(X, features, m: int, block: int, cache_bytes: int | None = None):
    """The driver of ``X``: :class:`DaskRowBlocks` for a dask array (its row chunks are the
    blocks), else :class:`svmtune.lowrank._blocks.RowBlocks` (blocks of ``block`` rows)."""
    if is_dask_array(X):
        return DaskRowBlocks(X, features, m, block)
    return RowBlocks(X, features, m, block, cache_bytes)


def gather_rows(X, rows: np.ndarray | None):
    """The rows ``rows`` (sorted, increasing; None: all) of ``X`` in memory: a NumPy array
    or sparse matrix sliced (rows standardised as they are read,
    :class:`svmtune._standardised_rows.StandardisedRows`, made for those rows or all), a dask
    array indexed lazily and only those rows computed, as a float64 NumPy array (the rest of
    ``X`` never reaches the client)."""
    if rows is None:
        if is_dask_array(X):
            return np.asarray(X.compute(), dtype=np.float64)
        return X if isinstance(X, np.ndarray) or sp.issparse(X) else np.asarray(X)
    if not is_dask_array(X):
        return X[rows]
    return np.asarray(X[np.asarray(rows, dtype=np.intp)].compute(), dtype=np.float64)


class DaskRowBlocks:
    """The driver of :class:`svmtune.lowrank._blocks.RowBlocks` on a dask array ``X`` whose
    row chunks are the blocks (its columns are joined into one chunk).  Per-row vectors of a
    pass live on the client (``O(n)``) and go to the tasks as row chunks.

    Attributes
    ----------
    largest : int
        The most rows of features a task holds at once: the largest row chunk, or ``block``
        where chunks are larger (a task runs its chunk in blocks of ``block`` rows,
        :func:`svmtune.lowrank._blocks.chunk_outputs`).
    passes : int
        Passes run (each one ``compute``).
    full_passes : int
        Those over all rows (no ``where``).
    rows_read : int
        Rows the passes computed (or read from the cache): ``n`` a full pass.
    """

    def __init__(self, X, features, m: int, block: int | None = None) -> None:
        self.X = X.rechunk({1: -1})
        self.features, self.m = features, int(m)
        self.block = block_rows(self.m) if block is None else int(block)
        self.n = int(X.shape[0])
        self.chunks = tuple(int(c) for c in self.X.chunks[0])
        self.largest = min(max(self.chunks, default=0), self.block)
        self.passes = 0
        self.full_passes = 0
        self.rows_read = 0

    def _column(self, r: np.ndarray):
        """A per-row vector (or ``(n, k)`` array) as a dask ``(n, k)`` array in ``X``'s row
        chunks (2-D: ``map_blocks`` aligns it with ``X``'s rows, not its columns)."""
        import dask.array as da

        r = np.asarray(r)
        return da.from_array(r.reshape(self.n, -1), chunks=(self.chunks, -1))

    def run(self, ops: Sequence[BlockOp], where: np.ndarray | None = None) -> list:
        """One pass (as :meth:`svmtune.lowrank._blocks.RowBlocks.run`): one ``map_blocks``
        task a chunk, whose flat output starts with the reducing operations' partials (summed
        over the chunks by dask's tree reduction, never gathered one a chunk) and goes on
        with the per-row values; one ``compute``."""
        import dask
        import dask.array as da

        counts = np.asarray(self.chunks)
        if where is not None and self.n:
            counts = np.add.reduceat(where.astype(int), np.cumsum((0, *self.chunks))[:-1])
        shapes = [op.shape(self.m) for op in ops]
        widths = [int(np.prod(sh)) for sh in shapes]
        head = sum(w for op, w in zip(ops, widths) if op.reduce)
        per_row = sum(w for op, w in zip(ops, widths) if not op.reduce)
        args = [self.X] + ([] if where is None else [self._column(where)])
        args += [self._column(r) for op in ops for r in op.rows]
        plan = [(replace(op, rows=()), [np.shape(r)[1:] for r in op.rows]) for op in ops]
        flat = da.map_blocks(
            _flat_block,
            *args,
            features=self.features,
            plan=plan,
            has_where=where is not None,
            block=self.block,
            dtype=float,
            chunks=(tuple(int(head + per_row * c) for c in counts),),
            drop_axis=1,
        )
        nb = len(counts)
        heads = flat.map_blocks(
            _head, head, chunks=((1,) * nb, (head,)), new_axis=1, dtype=float
        ).sum(axis=0)
        tails = flat.map_blocks(_tail, head, chunks=(tuple(int(per_row * c) for c in counts),))
        total, rows = dask.compute(heads, tails)
        self.passes += 1
        self.full_passes += where is None
        self.rows_read += self.n if where is None else int(where.sum())
        results = PassResults(ops, self.m)
        pos = 0
        for k, (op, w, sh) in enumerate(zip(ops, widths, shapes)):
            if op.reduce:
                results.add(k, total[pos : pos + w].reshape(sh))
                pos += w
        pos = 0
        for c in counts:  # each chunk's per-row values, operation after operation
            for k, (op, w, sh) in enumerate(zip(ops, widths, shapes)):
                if not op.reduce:
                    results.add(k, rows[pos : pos + w * int(c)].reshape((int(c), *sh)))
                    pos += w * int(c)
        return results.results()

    def subsample(self, step: int) -> DaskRowBlocks:
        """The driver of every ``step``-th row, ``X[::step]`` (lazy: its chunks are ``X``'s
        row chunks thinned), with the same features."""
        return DaskRowBlocks(self.X[::step], self.features, self.m, self.block)

    def gather(self, result):
        """A lazy result as a NumPy array (``compute``)."""
        return np.asarray(result.compute() if hasattr(result, "compute") else result)

    def lazy_rows(self, op: BlockOp):
        """The per-row values of one operation as a lazy dask array in ``X``'s row chunks
        (decision values of a dask ``X``)."""
        import dask.array as da

        trailing = op.shape(self.m)
        return da.map_blocks(
            _row_block,
            self.X,
            *[self._column(r) for r in op.rows],
            features=self.features,
            op=replace(op, rows=()),
            trailing=[np.shape(r)[1:] for r in op.rows],
            block=self.block,
            dtype=float,
            chunks=(self.chunks, *[(s,) for s in trailing]),
            drop_axis=1 if not trailing else None,
        )


def _split_rows(cols: list, plan, sel) -> tuple[list[BlockOp], list[list[np.ndarray]]]:
    """The operations of ``plan`` and their row slices (cut to ``sel``) from a task's
    column blocks, in the order :meth:`DaskRowBlocks.run` passed them."""
    ops, rows_b = [], []
    it = iter(cols)
    for op, trailing in plan:
        rs = [next(it) for _ in trailing]
        rows_b.append(
            [(r if sel is None else r[sel]).reshape((-1, *t)) for r, t in zip(rs, trailing)]
        )
        ops.append(op)
    return ops, rows_b


def _flat_block(X_b, *cols, features, plan, has_where: bool, block: int) -> np.ndarray:
    """A chunk's task of :meth:`DaskRowBlocks.run`: :func:`svmtune.lowrank._blocks.
    chunk_outputs` on the chunk (in blocks of ``block`` rows), its outputs flattened into one
    vector, the reducing operations' first."""
    cols = list(cols)
    sel = cols.pop(0)[:, 0].astype(bool) if has_where else None
    ops, rows_b = _split_rows(cols, plan, sel)
    outs = chunk_outputs(features, X_b, sel, ops, rows_b, block)
    order = [o for op, o in zip(ops, outs) if op.reduce] + [
        o for op, o in zip(ops, outs) if not op.reduce
    ]
    return np.concatenate([o.ravel() for o in order]) if order else np.zeros(0)


def _head(flat: np.ndarray, head: int) -> np.ndarray:
    """A chunk's partial sums (the first ``head`` values of its flat output) as one row."""
    return flat[:head][None, :]


def _tail(flat: np.ndarray, head: int) -> np.ndarray:
    """A chunk's per-row values (its flat output after the partial sums)."""
    return flat[head:]


def _row_block(X_b, *cols, features, op: BlockOp, trailing, block: int) -> np.ndarray:
    """A chunk's task of :meth:`DaskRowBlocks.lazy_rows`: the operation's values per row
    (in blocks of ``block`` rows)."""
    _, rows_b = _split_rows(list(cols), [(op, trailing)], None)
    return chunk_outputs(features, X_b, None, [op], rows_b, block)[0]
