"""A dense ``X`` standardised as its rows are read, so that no standardised copy of it is held
(issue 64, "Past one machine").

The tuner's door fits a :class:`~sklearn.preprocessing.StandardScaler` on ``X`` and, for a
selector that reads ``X`` by rows (``auto``: its subsamples, the final-model rule's rows, the
low-rank model's row blocks), hands on :class:`StandardisedRows` instead of the transformed
copy: at 10^6 rows x 20 features that copy was 153 MB, a quarter of what a selection held
above the data.  Rows read through it are the rows of the copy, bit for bit: both apply the
scaler's statistics with the same arithmetic (:func:`scaled`, which
:func:`svmtune.preprocess.transform_validated` calls too).
"""

from __future__ import annotations

import numpy as np

__all__ = ["FLOATS", "StandardisedRows", "scaled"]

#: the dtypes scikit-learn's scaler keeps (``FLOAT_DTYPES``); others become float64
FLOATS = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.float16))


def scaled(scaler, X: np.ndarray, *, owned: bool = False) -> np.ndarray:
    """The dense ``X`` through a fitted ``StandardScaler``'s statistics as its ``transform``
    applies them (``X - mean_``, then ``/ scale_``, in ``X``'s float dtype; other dtypes
    become float64): a new array, or ``X`` itself changed in place where ``owned`` says the
    caller holds the only reference and its dtype is kept."""
    dtype = X.dtype if X.dtype in FLOATS else np.dtype(np.float64)
    if not (owned and X.dtype == dtype):
        X = np.array(X, dtype=dtype, copy=True)
    if scaler.with_mean:
        X -= scaler.mean_.astype(X.dtype)
    if scaler.with_std:
        X /= scaler.scale_.astype(X.dtype)
    return X


class StandardisedRows:
    """The rows of a dense ``X`` standardised by a fitted ``StandardScaler`` as they are read.

    ``rows[key]`` (``key`` a slice, an integer array or a boolean mask of rows) is
    ``scaled(scaler, X)[key]`` as float64, made for those rows alone; ``np.asarray(rows)``
    makes every row (for a consumer that needs ``X`` whole).  It has the ``shape``,
    ``ndim`` and ``dtype`` of that array.

    Parameters
    ----------
    X : ndarray (n, d)
        The validated rows (finite numbers; not copied: it must not change while read).
    scaler : StandardScaler
        Fitted on ``X`` (or its rows of positive weight).
    """

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, X: np.ndarray, scaler) -> None:
        self.X, self.scaler = X, scaler
        self.shape = (int(X.shape[0]), int(X.shape[1]))

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows) -> np.ndarray:
        if isinstance(rows, tuple) or (not isinstance(rows, slice) and np.ndim(rows) != 1):
            raise TypeError(
                "StandardisedRows reads whole rows: index it by a slice, an integer array or "
                f"a boolean mask of rows, not {type(rows).__name__}"
            )
        block = self.X[rows]
        out = scaled(self.scaler, block, owned=not np.may_share_memory(block, self.X))
        return np.asarray(out, dtype=np.float64)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self[:]
        return out if dtype is None else out.astype(dtype, copy=False)

    def __repr__(self) -> str:
        return f"StandardisedRows(shape={self.shape})"
