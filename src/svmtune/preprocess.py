"""Preprocessing fitted on training data only.

Three documented modes (``SVMTuner(preprocess=...)``):

``"standard"`` (default)
    Numeric input only; NaN/inf rejected with a clear error (as scikit-learn estimators do);
    every feature standardised to zero mean and unit variance (constant features left at 0).
``"auto"``
    Mixed data: numeric columns -> median imputation + standardisation; categorical columns
    (pandas ``object``/``category``/``string``/``bool`` dtypes, except ``object`` columns
    holding only numbers, or columns of an object array that do not all convert to numbers)
    -> most-frequent imputation + one-hot encoding (categories unseen in training are
    ignored at prediction time: all their one-hot entries are 0).  Missing values are NaN,
    None or ``pd.NA``; infinite values are rejected (no imputation can tell what they
    should have been), and so are complex numbers.  Date/time columns (``datetime64``,
    ``timedelta64``) are numeric: nanoseconds, then standardised.  Works on pandas
    DataFrames (nullable dtypes included) and on arrays.
``"none"``
    Features used as given (still validated as finite numbers).

Every statistic (medians, modes, categories, means, scales) is learnt in ``fit`` on the
training data and only applied by ``transform``.
"""

from __future__ import annotations

import numbers
import warnings
from decimal import Decimal

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

from svmtune._warnings import user_stacklevel

__all__ = ["PREPROCESS_MODES", "make_preprocessor", "categorical_columns", "needs_auto"]

PREPROCESS_MODES = ("standard", "auto", "none")


def _convertible(column) -> bool:
    try:
        np.asarray(column, dtype=float)
    except (TypeError, ValueError):
        return False
    return True


def _only_numbers(column: pd.Series) -> bool:
    """An ``object`` column whose values are all numbers (not text, not booleans) or missing,
    e.g. ``pd.Series([1.5, None, 2], dtype=object)`` or decimals from a database: numeric,
    not categorical."""
    values = column.dropna()
    return bool(len(values)) and all(
        isinstance(v, (numbers.Real, Decimal)) and not isinstance(v, (bool, np.bool_))
        for v in values
    )


def categorical_columns(X) -> list:
    """The non-numeric columns of ``X``.

    DataFrames: names of the ``object``/``category``/``string``/``bool`` columns, except
    ``object`` columns that hold only numbers (and missing values).  Arrays of dtype object
    or str: integer indices of the columns whose values do not all convert to numbers.
    Numeric arrays: ``[]``.
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(X, "columns"):
        out = []
        for j, (col, dt) in enumerate(dtypes.items()):
            kind = getattr(dt, "kind", "O")
            if str(dt) == "object" and _only_numbers(X.iloc[:, j]):
                continue
            if kind in "OSUb" or str(dt) in ("category", "string", "str", "bool", "boolean"):
                out.append(col)
        return out
    arr = np.asarray(X)
    if arr.ndim != 2 or arr.dtype.kind not in "OSU":
        return []
    return [j for j in range(arr.shape[1]) if not _convertible(arr[:, j])]


def _numeric_values(X) -> np.ndarray:
    """Numeric columns as a float array with NaN for missing (None, pd.NA)."""
    if isinstance(X, pd.DataFrame):
        return X.to_numpy(dtype=float, na_value=np.nan)
    return np.asarray(X, dtype=float)


def needs_auto(X) -> bool:
    """True when ``X`` has categorical columns or missing values (the CLI then uses "auto")."""
    if categorical_columns(X):
        return True
    return bool(np.isnan(_numeric_values(X)).any())


def _as_float(X) -> np.ndarray:
    """First step of the numeric branch: float array, NaN for missing, infinity and complex
    numbers rejected (date/time columns are read as nanoseconds)."""
    if isinstance(X, pd.DataFrame):
        complex_ = any(getattr(dt, "kind", "") == "c" for dt in X.dtypes)
    else:
        complex_ = np.asarray(X).dtype.kind == "c"
    if complex_:
        raise ValueError("Complex data not supported: X has complex-valued columns")
    values = _numeric_values(X)
    if values.ndim == 1:
        values = values.reshape(-1, 1)
    inf = np.isinf(values)
    if inf.any():
        cols = list(X.columns) if isinstance(X, pd.DataFrame) else list(range(values.shape[1]))
        bad = [str(cols[j]) for j in np.flatnonzero(inf.any(axis=0))]
        raise ValueError(
            f"X contains infinity in column(s) {', '.join(bad)}: replace or remove those "
            "values (imputation only fills missing values)"
        )
    return values


def _as_categories(X) -> np.ndarray:
    """First step of the categorical branch: object array of strings, NaN for missing."""
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
    missing = frame.isna().to_numpy()
    values = frame.astype(object).to_numpy()
    out = np.empty(values.shape, dtype=object)
    out[...] = np.nan
    out[~missing] = [str(v) for v in values[~missing]]
    return out


def _first_names(items: list[str], k: int = 6) -> str:
    """The first ``k`` of ``items`` joined for a warning, `` ...`` when there are more."""
    return ", ".join(items[:k]) + (" ..." if len(items) > k else "")


def _warn_empty_columns(X) -> None:
    """Warn (once, at fit) about the columns of ``X`` with no observed value."""
    if X is None:
        return
    if isinstance(X, pd.DataFrame):
        empty = list(X.columns[X.isna().all().to_numpy()])
    else:
        arr = np.asarray(X)
        if arr.ndim != 2 or arr.shape[0] == 0:
            return
        empty = np.flatnonzero(pd.isna(arr).all(axis=0)).tolist()
    if empty:
        names = _first_names([repr(c) for c in empty])
        warnings.warn(
            f"column(s) {names} have no observed value in the training data; they are kept "
            "as constant columns and carry no information",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


#: a categorical column with more distinct values than this share of the rows (and more
#: than :data:`MANY_CATEGORIES_MIN`) is warned about: most of its categories are seen once
MANY_CATEGORIES_SHARE = 0.5
MANY_CATEGORIES_MIN = 20


def _warn_many_categories(X, cats: list) -> None:
    """Warn (once, at fit) about categorical columns whose values nearly all differ: an
    identifier, or numbers the reader kept as text (``"1,234"``), which one-hot encoding
    turns into one feature per row."""
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
    n = frame.shape[0]
    many = []
    for c in cats:
        k = int(frame[c].nunique(dropna=True))
        if k > MANY_CATEGORIES_MIN and k > MANY_CATEGORIES_SHARE * n:
            many.append(f"{c!r} ({k} distinct values)")
    if many:
        names = _first_names(many)
        warnings.warn(
            f"categorical column(s) {names} in {n} rows: one-hot encoding gives each value "
            "its own feature, and a value seen once says nothing about new rows. Drop an "
            "identifier column; convert numbers stored as text (e.g. '1,234' with a "
            "thousands separator) to numbers.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


#: fewer rows than this are not checked for row-number columns
ROW_NUMBER_MIN_ROWS = 20


def _warn_row_number_columns(X) -> None:
    """Warn (once, at fit) about numeric columns of whole numbers that increase strictly
    from row to row: a row number or an identifier in file order (a training split keeps
    the order), which as a feature only tells where a row was in the file."""
    if isinstance(X, pd.DataFrame):
        cols = [c for c, dt in X.dtypes.items() if getattr(dt, "kind", "O") in "iuf"]
        n = X.shape[0]

        def column(c) -> np.ndarray:
            return X[c].to_numpy(dtype=float, na_value=np.nan)

    else:
        arr = np.asarray(X)
        if arr.ndim != 2 or arr.dtype.kind not in "iuf":
            return
        cols, n = list(range(arr.shape[1])), arr.shape[0]

        def column(c) -> np.ndarray:
            return arr[:, c].astype(float)

    if n <= ROW_NUMBER_MIN_ROWS:
        return
    found = []
    for c in cols:  # a column at a time: no copy of the whole of X
        v = column(c)
        with np.errstate(invalid="ignore"):
            if np.all(np.diff(v) > 0) and np.all(v == np.round(v)):
                found.append(repr(c))
    if found:
        warnings.warn(
            f"column(s) {_first_names(found)} hold whole numbers that increase from row to row, "
            "like a row number or an identifier: as a feature such a column says where a row "
            "stood in the file, not what it is. Drop it if it is one (svmtune select --drop "
            "COLUMN).",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


def make_preprocessor(mode: str, X=None):
    """An unfitted transformer for ``mode`` (see the module docstring).

    ``X`` (the training data) is needed for ``"auto"``: it decides which columns are
    categorical.  Warns about columns that look like row numbers (whole numbers increasing
    row by row), and under ``"auto"`` about columns with no observed value and categorical
    columns whose values nearly all differ.
    """
    if mode not in PREPROCESS_MODES:
        raise ValueError(f"preprocess must be one of {PREPROCESS_MODES}, got {mode!r}")
    if X is not None:
        _warn_row_number_columns(X)
    if mode == "standard":
        return StandardScaler()
    if mode == "none":
        return FunctionTransformer(validate=False)
    _warn_empty_columns(X)
    # a column without any observed value is kept as a constant (scikit-learn's imputers
    # would drop it with a warning at every transform, i.e. at every predict)
    num_pipe = make_pipeline(
        FunctionTransformer(_as_float, feature_names_out="one-to-one"),
        SimpleImputer(strategy="median", keep_empty_features=True),
        StandardScaler(),
    )
    cats = categorical_columns(X) if X is not None else []
    if not cats:
        return num_pipe
    _warn_many_categories(X, cats)
    cat_set = set(cats)
    n_cols = X.shape[1]
    nums = (
        [c for c in X.columns if c not in cat_set]
        if hasattr(X, "columns")
        else [j for j in range(n_cols) if j not in cat_set]
    )
    cat_pipe = make_pipeline(
        FunctionTransformer(_as_categories, feature_names_out="one-to-one"),
        SimpleImputer(strategy="most_frequent", keep_empty_features=True),
        OneHotEncoder(handle_unknown="ignore", sparse_output=False),
    )
    return ColumnTransformer(
        [("num", num_pipe, nums), ("cat", cat_pipe, cats)], remainder="drop", sparse_threshold=0
    )


def transform_as_fitted(pre, X) -> np.ndarray:
    """``X`` through the fitted preprocessor ``pre`` (as the final SVM sees it), given as
    ``pre`` was fitted: a DataFrame if it saw column names, else an array."""
    if not hasattr(pre, "feature_names_in_"):
        X = X.to_numpy() if hasattr(X, "to_numpy") else np.asarray(X)
    return np.asarray(pre.transform(X), dtype=float)
