"""Dask arrays and DataFrames at the tuner's door: checked lazily, standardised by reductions.

A ``dask.array.Array`` (or a dask DataFrame of numeric columns) given to
:meth:`svmtune.SVMTuner.fit` is never gathered whole to be checked: its dtype, dimensions and
shape are read from its metadata (the row count from known chunk sizes), its NaN and infinite
cells and its columns' largest magnitudes are counted by one reduction, and the standard
scaler's weighted means and variances by two more, with scikit-learn's two-pass formula
(:class:`~sklearn.preprocessing.StandardScaler` with ``sample_weight``), so the fitted
scaler holds the NumPy path's numbers to rounding.  The labels' classes are their distinct
values (a reduction), and their codes an ``int`` array of one entry a row.

Predictions on a dask collection map the fitted model over its blocks of rows
(:func:`map_rows`): rows are independent, so each block is predicted as a NumPy array or a
pandas DataFrame would be.

dask is imported only when a dask collection is met (``import svmtune`` imports none of it):
it is the optional extra ``svmtune[dask]``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np
import pandas as pd
from sklearn.preprocessing import StandardScaler

from svmtune._validation import available_memory, check_label_kind, check_labels

__all__ = [
    "DASK_ISSUE",
    "MATERIALISE_SHARE",
    "is_dask",
    "dask_meta",
    "dask_rows",
    "dask_labels",
    "column_summary",
    "fit_dask_scaler",
    "check_materialise",
    "gather_limit",
    "fits_in_memory",
    "map_rows",
]

#: the issue that brings dask arrays to the selection methods themselves
DASK_ISSUE = "issue #64"

#: the largest share of the available memory a dask ``X`` may take once gathered as float64
#: for a method that takes NumPy arrays only (its kernel matrices need more still)
MATERIALISE_SHARE = 0.25

#: largest gathered ``X`` where the system does not say how much memory is available
_FALLBACK_BYTES = 1 << 30


def is_dask(obj) -> bool:
    """Whether ``obj`` is a dask collection (array, DataFrame, Series), without importing
    dask: a program that has none loaded cannot hold one."""
    dask = sys.modules.get("dask")
    return dask is not None and bool(dask.is_dask_collection(obj))


def _is_frame(X) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes")


def _unknown_chunks(name: str) -> ValueError:
    return ValueError(
        f"{name} is a dask array of unknown chunk sizes (rows per block), as boolean indexing "
        f"leaves it: call {name}.compute_chunk_sizes() first, or for a DataFrame "
        "to_dask_array(lengths=True)"
    )


def _frame_rows(X):
    """A dask DataFrame of numeric columns as a float64 dask array with known chunk sizes
    (one pass counts each partition's rows); its non-numeric columns refused by name."""
    bad = [
        c
        for c, dt in X.dtypes.items()
        if not pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_complex_dtype(dt)
    ]
    if bad:
        names = ", ".join(repr(c) for c in bad[:6]) + (" ..." if len(bad) > 6 else "")
        raise ValueError(
            f"X has non-numeric (categorical) columns: {names}; a dask X is standardised as "
            "numbers: encode them as numbers, or compute() X (a pandas DataFrame) and use "
            "preprocess='auto' (one-hot encoding, imputation, standardisation)"
        )
    return X.astype("float64").to_dask_array(lengths=True)


def dask_meta(X):
    """What ``validate_data`` (``skip_check_array=True``) reads of the dask collection
    ``X``: for a DataFrame an empty pandas DataFrame of its columns and dtypes (its feature
    names: scikit-learn reads none of a lazy frame), else ``X`` itself (its shape)."""
    if _is_frame(X):
        return pd.DataFrame({c: pd.Series(dtype=dt) for c, dt in X.dtypes.items()})
    return X


def dask_rows(X):
    """``X`` (a dask array or DataFrame) as a 2-D float64 dask array, checked from its
    metadata alone, and what ``validate_data`` reads of it: an empty pandas DataFrame with
    its columns (a DataFrame: the feature names) or the array itself (its shape).

    Raises
    ------
    ValueError
        For non-numeric or complex values, a dimension other than 2, unknown chunk sizes or
        no row or column, each saying what to do.
    """
    meta = dask_meta(X)
    if _is_frame(X):
        Xd = _frame_rows(X)
    else:
        Xd = X
        kind = X.dtype.kind
        if kind == "c":
            raise ValueError("Complex data not supported: X is a complex-valued dask array")
        if kind not in "biuf":
            raise ValueError(
                f"X is a dask array of dtype {X.dtype}, not numbers; a dask X is standardised "
                "as numbers: encode it, or compute() it and use preprocess='auto'"
            )
        if X.ndim != 2:
            raise ValueError(
                f"Expected a 2D dask array, got {X.ndim}D array instead: reshape it to "
                "(n_samples, n_features), e.g. X.reshape(-1, 1) for a single feature"
            )
        if not isinstance(getattr(X, "_meta", None), np.ndarray):
            raise ValueError(
                f"X is a dask array of {type(X._meta).__name__} blocks; svmtune takes dask "
                "arrays of NumPy blocks"
            )
        if any(np.isnan(c) for c in X.chunks[0]):
            raise _unknown_chunks("X")
    n, d = Xd.shape
    if n < 1 or d < 1:
        what = "0 sample(s)" if n < 1 else "0 feature(s)"
        raise ValueError(
            f"Found array with {what} (shape=({n}, {d})) while a minimum of 1 is required."
        )
    return Xd.astype(np.float64), meta


def dask_labels(y, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The classes of the labels ``y`` (a dask array or Series, or array-like) -- their
    distinct values, a reduction -- and every row's code ``0..k-1``, an ``int`` array.

    Raises
    ------
    ValueError
        When ``y`` is not one label for each of the ``n`` rows, or (through
        :func:`svmtune._validation.check_labels`, on the distinct values, then on all labels
        for the rows' numbers) a label is missing or labels mix types.
    """
    import dask.array as da

    if _is_frame(y) and len(y.columns) == 1:
        y = y.iloc[:, 0]
    if is_dask(y) and not isinstance(y, da.Array):  # a dask Series
        y = y.to_dask_array()
    if not is_dask(y):
        y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    try:
        classes = np.asarray(da.unique(y).compute() if is_dask(y) else np.unique(y))
        check_labels(classes)
    except (TypeError, ValueError):  # None among strings does not sort
        check_labels(np.asarray(y))  # the same complaint, naming the rows
        raise
    check_label_kind(classes)  # the distinct values decide it as all labels do
    if is_dask(y):
        y_enc = y.map_blocks(lambda b: np.searchsorted(classes, b), dtype=np.intp).compute()
    else:
        y_enc = np.searchsorted(classes, y)
    y_enc = np.asarray(y_enc, dtype=np.intp)
    if len(y_enc) != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {len(y_enc)}]"
        )
    return classes, y_enc


def column_summary(Xd) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column of the dask array ``Xd``: its NaN cells, its infinite cells and its
    largest magnitude (NaN where the column holds NaN), in one reduction over ``Xd``."""
    import dask
    import dask.array as da

    nan, inf, peak = dask.compute(
        da.isnan(Xd).sum(axis=0), da.isinf(Xd).sum(axis=0), abs(Xd).max(axis=0)
    )
    return np.asarray(nan), np.asarray(inf), np.asarray(peak)


def check_dask_values(nan: np.ndarray, inf: np.ndarray, names) -> None:
    """Raise a ``ValueError`` naming the columns (``names``) that hold infinity or NaN, from
    the per-column counts ``nan`` and ``inf`` of :func:`column_summary`: a dask ``X`` is
    standardised, never imputed."""

    def cols(counts: np.ndarray) -> str:
        bad = [repr(str(names[j])) for j in np.flatnonzero(counts)]
        return ", ".join(bad[:8]) + (", ..." if len(bad) > 8 else "")

    def cells(k: int) -> str:
        return f"{k} cell" if k == 1 else f"{k} cells"

    if inf.any():
        raise ValueError(
            f"X contains infinity ({cells(int(inf.sum()))}, columns {cols(inf)}); replace or "
            "remove those values"
        )
    if nan.any():
        raise ValueError(
            f"X contains NaN ({cells(int(nan.sum()))} missing, columns {cols(nan)}); a dask X "
            "is not imputed: fill those values (e.g. dask.array.nan_to_num, or a DataFrame's "
            "fillna) or drop their rows, or compute() X and use preprocess='auto'"
        )


def fit_dask_scaler(Xd, w: np.ndarray | None) -> StandardScaler:
    """A :class:`~sklearn.preprocessing.StandardScaler` fitted on the finite dask array
    ``Xd`` with ``sample_weight=w`` (None: every row once), by two reductions.

    The numbers are scikit-learn's (``_incremental_mean_and_var`` on a first fit): the mean
    ``sum(w x) / W``, then the variance ``(sum(w c^2) - sum(w c)^2 / W) / W`` of the
    centred ``c = x - mean`` (the correction term takes up the mean's rounding); a feature
    whose variance is within rounding of 0 (scikit-learn's ``_is_constant_feature``) keeps
    the scale 1.  A row of weight 0 counts in none of them, as the NumPy path, which leaves
    it out, has it.  ``n_samples_seen_`` is the number of rows or, with weights, their sum,
    a float64 as scikit-learn records it.
    """
    import dask
    import dask.array as da

    weights = None if w is None else da.from_array(w, chunks=(Xd.chunks[0],))[:, None]

    def weighted(v):
        return v if weights is None else v * weights

    total = float(Xd.shape[0]) if w is None else float(w.sum())
    (s1,) = dask.compute(weighted(Xd).sum(axis=0))
    mean = np.asarray(s1) / total
    centred = Xd - mean
    corr, s2 = dask.compute(weighted(centred).sum(axis=0), weighted(centred**2).sum(axis=0))
    var = (np.asarray(s2) - np.asarray(corr) ** 2 / total) / total
    n_seen = np.float64(total)
    eps = np.finfo(np.float64).eps
    constant = var <= n_seen * eps * var + (n_seen * mean * eps) ** 2
    scale = np.sqrt(var)
    scale[constant] = 1.0
    scaler = StandardScaler()
    scaler.mean_, scaler.var_, scaler.scale_ = mean, var, scale
    scaler.n_samples_seen_ = n_seen
    scaler.n_features_in_ = int(Xd.shape[1])
    return scaler


def gather_limit() -> float:
    """The most bytes svmtune gathers a dask ``X`` into: :data:`MATERIALISE_SHARE` of the
    memory available now (1 GiB where the system does not say)."""
    avail = available_memory()
    return _FALLBACK_BYTES if avail is None else MATERIALISE_SHARE * avail


def fits_in_memory(n: int, d: int) -> bool:
    """Whether ``n`` rows and ``d`` columns of float64 fit :func:`gather_limit`: the door's
    rule for gathering a dask ``X``, which ``method="auto"`` also applies to its all-rows
    stage and its final model (:mod:`svmtune.methods._auto_rows`)."""
    return 8.0 * n * d <= gather_limit()


def check_materialise(n: int, d: int, method: str) -> None:
    """Raise a ``ValueError`` when a dask ``X`` of ``n`` rows and ``d`` columns, gathered as
    float64 for ``method`` (which takes NumPy arrays only), would take more than
    :data:`MATERIALISE_SHARE` of the memory available now (1 GiB where the system does not
    say; :func:`fits_in_memory`)."""
    if fits_in_memory(n, d):
        return
    need, limit = 8.0 * n * d, gather_limit()
    raise ValueError(
        f"method {method!r} takes no dask X yet: it would be gathered into memory, and "
        f"{n:,} rows x {d:,} columns take {need / 2**30:.3g} GiB as float64, more than "
        f"the {limit / 2**30:.3g} GiB svmtune gathers; use method='auto', which takes a "
        f"dask X ({DASK_ISSUE}: its subsamples are gathered, its final model is fitted in "
        "X's row blocks), or fit on a sample of the rows that fits in memory, e.g. X[:m] "
        "for a shuffled X"
    )


def map_rows(func: Callable, X, width: int | None, dtype) -> object:
    """``func`` (a prediction on NumPy or pandas rows) mapped over the blocks of rows of the
    dask collection ``X``, as a dask array: of shape ``(n,)`` when ``width`` is None, else
    ``(n, width)``.  A dask array's blocks hold all its columns (rechunked so); a dask
    DataFrame's partitions are pandas DataFrames, given as they are (the result's chunk
    sizes are then unknown)."""
    dtype = np.dtype(dtype)
    if _is_frame(X):

        def part(frame):
            out = func(frame)
            if width is None:
                return pd.Series(out, index=frame.index)
            return pd.DataFrame(out, index=frame.index)

        meta = (
            pd.Series(np.empty(0, dtype))
            if width is None
            else pd.DataFrame(np.empty((0, width), dtype))
        )
        return X.map_partitions(part, meta=meta).to_dask_array()
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D dask array, got {X.ndim}D array instead")
    X = X.rechunk({1: -1})
    if width is None:
        return X.map_blocks(func, drop_axis=1, dtype=dtype, meta=np.empty((0,), dtype))
    return X.map_blocks(
        func, chunks=(X.chunks[0], (width,)), dtype=dtype, meta=np.empty((0, width), dtype)
    )
