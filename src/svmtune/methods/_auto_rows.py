"""Rows of ``X`` to memory for ``auto`` (:mod:`svmtune.methods.auto`), for NumPy, sparse and
dask ``X`` (issue #64, "Past one machine").

``auto`` works on subsamples: the probes of ``SVC()``, the stages' nested subsamples, the
final-model rule's rows and its held-out rows.  Each is drawn to memory here
(:func:`take_rows`): a NumPy or sparse ``X`` is sliced as before, and a dask ``X`` (the
door's lazily standardised array, :func:`svmtune._door.prepare_training`) has the rows
computed, asked for in increasing order (dask's indexing gathers sorted rows block by
block) and put back in the order asked.  The subsamples' sizes are the plan's
(:mod:`svmtune.methods._fidelity`): they hold what the NumPy path would hold.

What needs every row is either a reduction or the door's memory rule
(:func:`svmtune._dask_inputs.fits_in_memory`, a quarter of the memory available):

* ``SVC()``'s width, ``gamma = 1 / (d Var(X))`` over all entries (scikit-learn's
  ``gamma="scale"``, :class:`svmtune.methods.default.DefaultSVC`), is two reductions over a
  dask ``X``, or over blocks of a NumPy ``X`` standardised as its rows are read
  (:class:`svmtune._standardised_rows.StandardisedRows`: the door's ``X`` for ``auto``,
  which holds no standardised copy of it) (:func:`default_sigma`);
* the all-rows stage (:mod:`svmtune.methods._auto_allrows`) runs on the gathered ``X`` where
  it fits, and is otherwise skipped with the reason in ``history``
  (:func:`skip_all_rows`), ``C`` carried as where the landmarks cannot hold the kernel;
* the final model is the low-rank L2-SVM, fitted in ``X``'s row blocks on dask's scheduler
  (:class:`svmtune.estimators_lowrank.LowRankL2SVC`), where ``X`` does not fit
  (:func:`gather_refusal`; :func:`svmtune.methods._auto_final.final_rule`).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import gen_batches

from svmtune._dask_inputs import fits_in_memory, gather_limit, is_dask
from svmtune._standardised_rows import StandardisedRows
from svmtune.kernels import sigma_from_gamma
from svmtune.lowrank._dask_blocks import gather_rows
from svmtune.methods.base import SelectionContext, TrainingData, get_selector

__all__ = ["take_rows", "gather_refusal", "in_memory_note", "default_sigma", "skip_all_rows"]


def take_rows(X, rows: np.ndarray):
    """``X[rows]`` in memory: a NumPy array or sparse matrix sliced, a dask array's rows
    computed (asked for sorted, :func:`svmtune.lowrank._dask_blocks.gather_rows`, returned
    in the order of ``rows``) as a float64 array."""
    if not is_dask(X):
        return X[rows]
    rows = np.asarray(rows, dtype=np.intp)
    order = np.argsort(rows, kind="stable")
    block = gather_rows(X, rows[order])
    if np.all(order[1:] > order[:-1]):  # already sorted (the plan's rows are)
        return block
    out = np.empty_like(block)
    out[order] = block
    return out


def gather_refusal(X) -> str | None:
    """Why all rows of ``X`` cannot be gathered to memory, or None where they can: a NumPy
    or sparse ``X`` is there already; a dask ``X`` fits where its float64 rows take at most
    the door's share of the memory available (:func:`svmtune._dask_inputs.fits_in_memory`)."""
    if not is_dask(X):
        return None
    n, d = X.shape
    if fits_in_memory(n, d):
        return None
    return (
        f"X is a dask array of {n:,} rows x {d:,} columns, {8.0 * n * d / 2**30:.3g} GiB as "
        f"float64, more than the {gather_limit() / 2**30:.3g} GiB svmtune gathers into memory"
    )


def in_memory_note(X) -> str:
    """For ``info["final_rule"]``: that a dask ``X`` fits in memory, so the NumPy path's rule
    stands (its final fit gathers ``X``, :func:`svmtune._final.final_rows`); "" otherwise."""
    if not is_dask(X) or gather_refusal(X) is not None:
        return ""
    n, d = X.shape
    return (
        f"; X is a dask array that fits in memory ({8.0 * n * d / 2**30:.3g} GiB of the "
        f"{gather_limit() / 2**30:.3g} GiB svmtune gathers), so the rule is the in-memory one"
    )


def default_sigma(data: TrainingData) -> float:
    """The width of scikit-learn's ``SVC()`` on all rows (``gamma="scale"``): for a dask
    ``X`` by two reductions, the weighted mean of its entries, then the weighted mean over
    rows of their entries' squared deviations from it, as
    :class:`svmtune.methods.default.DefaultSVC` computes them in memory (which it does for
    any other ``X``)."""
    X, w = data.X, data.sample_weight
    if isinstance(X, StandardisedRows):
        return _rows_default_sigma(X, w)
    if not is_dask(X):
        return get_selector("default").run(data, SelectionContext()).params["sigma"]
    import dask.array as da

    n, d = X.shape
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    total = float(w.sum())
    wd = da.from_array(w, chunks=(X.chunks[0],))
    mean = float((np.asarray((X * wd[:, None]).sum(axis=0).compute()) / total).mean())
    var = float(((((X - mean) ** 2).mean(axis=1)) * wd).sum().compute() / total)
    gamma = 1.0 / (d * var) if var > 0 else 1.0
    return sigma_from_gamma(gamma)


#: values of ``X`` standardised at a time for :func:`default_sigma` (32 MB of float64)
SIGMA_BLOCK_VALUES = 2**22


def _rows_default_sigma(X: StandardisedRows, w: np.ndarray | None) -> float:
    """:func:`default_sigma` of rows standardised as they are read: where they hold at most
    :data:`SIGMA_BLOCK_VALUES` values, :class:`~svmtune.methods.default.DefaultSVC` on all
    of them (the numbers of a standardised copy, bit for bit); else the same two weighted
    means over blocks of rows, with no temporary of ``X``'s size."""
    n, d = X.shape
    if n * d <= SIGMA_BLOCK_VALUES:
        data = TrainingData(X[:], np.zeros(n, dtype=int), w)
        return get_selector("default").run(data, SelectionContext()).params["sigma"]
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    blocks = list(gen_batches(n, max(1, SIGMA_BLOCK_VALUES // d)))
    mean = float(sum(w[s] @ X[s] for s in blocks).mean() / w.sum())
    var = sum(float(w[s] @ ((X[s] - mean) ** 2).mean(axis=1)) for s in blocks) / w.sum()
    gamma = 1.0 / (d * var) if var > 0 else 1.0
    return sigma_from_gamma(gamma)


def skip_all_rows(carried, index: int, stage, why: str, history: list, progress) -> None:
    """The all-rows stage ``index`` (its plan's ``stage``) skipped because ``X`` cannot be
    gathered (``why``, :func:`gather_refusal`): ``carried`` (the stage before's winner, ``C``
    carried to all rows) joins ``history`` unscored, its verdict saying why, as
    :func:`svmtune.methods._auto_allrows.all_rows_stage` records a width the landmarks
    cannot hold."""
    carried.stage, carried.rows = index, stage.size
    carried.decided = f"not scored: {why}: C carried"
    history.append(carried)
    progress.evaluated(stage, 1)
    progress.stage_done(index, f"stage {index}: {why}: C carried")
