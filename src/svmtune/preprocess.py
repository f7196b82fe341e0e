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
training data and only applied by ``transform``.  :func:`fit_preprocessor` fits with sample
weights as repeated rows: weighted means and scales, and under ``"auto"`` weighted medians
and most frequent values (a row of weight 0 is left out of every statistic: the caller
drops it from ``X``, see :class:`svmtune.SVMTuner`).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Hashable
from decimal import Decimal

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn import config_context
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler
from sklearn.utils import gen_batches
from sklearn.utils.validation import check_is_fitted

from svmtune._standardised_rows import FLOATS, scaled
from svmtune._warnings import user_stacklevel
from svmtune.exceptions import UnseenCategoryWarning

__all__ = [
    "MAX_DENSIFY_BYTES",
    "MAX_SPARSE_FEATURES",
    "PREPROCESS_MODES",
    "make_preprocessor",
    "fit_preprocessor",
    "categorical_columns",
    "needs_auto",
    "unseen_categories",
    "warn_unseen_categories",
]

PREPROCESS_MODES = ("standard", "auto", "none")


def _float_array(values) -> np.ndarray:
    """``values`` as a float array with NaN for missing entries (NaN, None, ``pd.NA``);
    raises ``ValueError``/``TypeError`` when a present value is not a number."""
    try:
        return np.asarray(values, dtype=float)
    except TypeError:  # pd.NA (NAType) does not convert; None does, to NaN
        arr = np.asarray(values, dtype=object)
        missing = pd.isna(arr)
        out = np.full(arr.shape, np.nan)
        out[~missing] = arr[~missing].astype(float)
        return out


def _convertible(column) -> bool:
    try:
        _float_array(column)
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


def _categorical_positions(X) -> list[int]:
    """Positions of the non-numeric columns of ``X`` (see :func:`categorical_columns`)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(X, "columns"):
        out = []
        for j, dt in enumerate(dtypes):
            kind = getattr(dt, "kind", "O")
            if str(dt) == "object" and _only_numbers(X.iloc[:, j]):
                continue
            if kind in "OSUb" or str(dt) in ("category", "string", "str", "bool", "boolean"):
                out.append(j)
        return out
    arr = np.asarray(X)
    if arr.ndim != 2 or arr.dtype.kind not in "OSU":
        return []
    return [j for j in range(arr.shape[1]) if not _convertible(arr[:, j])]


def categorical_columns(X) -> list:
    """The non-numeric columns of ``X``.

    DataFrames: names of the ``object``/``category``/``string``/``bool`` columns, except
    ``object`` columns that hold only numbers (and missing values).  Arrays of dtype object
    or str: integer indices of the columns whose values do not all convert to numbers.
    Numeric arrays: ``[]``.
    """
    positions = _categorical_positions(X)
    if hasattr(X, "columns"):
        return [X.columns[j] for j in positions]
    return positions


def _numeric_values(X) -> np.ndarray:
    """Numeric columns as a float array with NaN for missing (NaN, None, ``pd.NA``)."""
    if not isinstance(X, pd.DataFrame):
        return _float_array(X)
    try:
        return X.to_numpy(dtype=float, na_value=np.nan)
    except TypeError:  # an object column holding pd.NA: convert column by column
        out = np.empty(X.shape)
        for j in range(X.shape[1]):
            column = X.iloc[:, j]
            try:
                out[:, j] = column.to_numpy(dtype=float, na_value=np.nan)
            except TypeError:
                out[:, j] = _float_array(column.to_numpy(dtype=object))
        return out


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


def _check_category_cells(frame: pd.DataFrame, names=None) -> None:
    """Raise a ``TypeError`` naming the column and row of the first cell of ``frame`` that
    is a container (dict, list, set, array: unhashable, so no category) rather than a
    string, a number or a missing value.  ``names``: the columns' names in ``X`` (default
    ``frame``'s own)."""
    names = list(frame.columns) if names is None else list(names)
    for j in range(frame.shape[1]):
        column = frame.iloc[:, j]
        if column.dtype != object:
            continue
        for i, v in enumerate(column.to_numpy()):
            if isinstance(v, Hashable) and not isinstance(v, (tuple, frozenset)):
                continue
            raise TypeError(
                f"X column {names[j]!r}, row {i} holds a {type(v).__name__}: a categorical "
                f"cell must be a string or a number (argument must be a string or a number, "
                f"not {type(v).__name__!r}); convert it to text, or remove it"
            )


def _as_categories(X) -> np.ndarray:
    """First step of the categorical branch: object array of strings, NaN for missing."""
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
    _check_category_cells(frame)
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


def _warn_many_categories(X, cats: list[int]) -> None:
    """Warn (once, at fit) about categorical columns (positions ``cats``) whose values nearly
    all differ: an identifier, or numbers the reader kept as text (``"1,234"``), which
    one-hot encoding turns into one feature per row."""
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
    n = frame.shape[0]
    many = []
    for j in cats:
        k = int(frame.iloc[:, j].nunique(dropna=True))
        if k > MANY_CATEGORIES_MIN and k > MANY_CATEGORIES_SHARE * n:
            many.append(f"{frame.columns[j]!r} ({k} distinct values)")
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


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """Median of ``values`` with each value repeated ``weights`` times: the midpoint of the
    lower and upper weighted medians, so that equal weights give :func:`numpy.median`."""
    order = np.argsort(values, kind="stable")
    v, cum = values[order], np.cumsum(weights[order])
    half = cum[-1] / 2
    lower = v[np.searchsorted(cum, half, side="left")]
    upper = v[np.searchsorted(cum, half, side="right")]
    return (lower + upper) / 2


def _weighted_mode(values: np.ndarray, weights: np.ndarray):
    """Most frequent of ``values`` counting each ``weights`` times; the smallest of tied
    values (as :class:`~sklearn.impute.SimpleImputer` does)."""
    unique, codes = np.unique(values, return_inverse=True)
    return unique[int(np.argmax(np.bincount(codes.ravel(), weights=weights)))]


class WeightedImputer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Fill missing values (NaN, None) with each column's median or most frequent value,
    counting every row ``sample_weight`` times.

    :class:`~sklearn.impute.SimpleImputer` (whose results this reproduces without weights,
    ``keep_empty_features=True``: a column with no observed value is filled with 0) takes no
    sample weights.

    Parameters
    ----------
    strategy : {"median", "most_frequent"}, default="median"
        "median" for numeric input (the midpoint of the lower and upper weighted medians),
        "most_frequent" for any values (the smallest of tied values).
    """

    def __init__(self, *, strategy: str = "median"):
        self.strategy = strategy

    def _values(self, X) -> np.ndarray:
        return np.array(X, dtype=float if self.strategy == "median" else object, copy=True)

    def fit(self, X, y=None, sample_weight=None):
        if self.strategy not in ("median", "most_frequent"):
            raise ValueError(f"strategy must be 'median' or 'most_frequent', got {self.strategy!r}")
        values = self._values(X)
        n, d = values.shape
        w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        observed = ~pd.isna(values) & (w > 0)[:, None]
        fill = _weighted_median if self.strategy == "median" else _weighted_mode
        stats = np.zeros(d, dtype=values.dtype)
        for j in range(d):
            rows = observed[:, j]
            if rows.any():
                stats[j] = fill(values[rows, j], w[rows])
        self.statistics_ = stats
        self.n_features_in_ = d
        return self

    def transform(self, X):
        check_is_fitted(self)
        values = self._values(X)
        rows, cols = np.nonzero(pd.isna(values))
        values[rows, cols] = self.statistics_[cols]
        return values


def make_preprocessor(mode: str, X=None):
    """An unfitted transformer for ``mode`` (see the module docstring); fit it with
    :func:`fit_preprocessor` to use sample weights.

    ``X`` (the training data) is needed for ``"auto"``: it decides which columns are
    categorical (they are selected by position, so integer column labels, as
    ``pandas.read_csv(header=None)`` gives, are not mistaken for positions).  Warns about
    columns that look like row numbers (whole numbers increasing row by row), and under
    ``"auto"`` about columns with no observed value and categorical columns whose values
    nearly all differ.
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
    # would drop it with a warning at every transform, i.e. at every predict); the weighted
    # steps ask for the sample weights scikit-learn's metadata routing passes them
    with config_context(enable_metadata_routing=True):
        num_pipe = make_pipeline(
            FunctionTransformer(_as_float, feature_names_out="one-to-one"),
            WeightedImputer(strategy="median").set_fit_request(sample_weight=True),
            StandardScaler().set_fit_request(sample_weight=True),
        )
        cats = _categorical_positions(X) if X is not None else []
        if not cats:
            return num_pipe
        frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
        _check_category_cells(frame.iloc[:, cats], [frame.columns[j] for j in cats])
        _warn_many_categories(X, cats)
        nums = [j for j in range(X.shape[1]) if j not in set(cats)]
        cat_pipe = make_pipeline(
            FunctionTransformer(_as_categories, feature_names_out="one-to-one"),
            WeightedImputer(strategy="most_frequent").set_fit_request(sample_weight=True),
            OneHotEncoder(handle_unknown="ignore", sparse_output=False),
        )
    return ColumnTransformer(
        [("num", num_pipe, nums), ("cat", cat_pipe, cats)], remainder="drop", sparse_threshold=0
    )


def unseen_categories(pre, X) -> dict:
    """The values of ``X``'s categorical columns that the fitted ``"auto"`` preprocessor
    ``pre`` (a ``ColumnTransformer`` from :func:`make_preprocessor`) did not see in
    training, by column name (position for an array): ``{column: [value, ...]}`` in order
    of first appearance, values as the encoder reads them (text).  Missing values are
    imputed, not unseen.  ``{}`` for any other preprocessor.

    ``X`` is the data ``pre.transform`` has just taken (so its cells are valid categories);
    each column's distinct values are compared, not its rows.
    """
    if not isinstance(pre, ColumnTransformer):
        return {}
    named = isinstance(X, pd.DataFrame) and hasattr(pre, "feature_names_in_")
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
    found = {}
    for name, pipe, positions in pre.transformers_:
        if name != "cat":
            continue
        encoder = pipe[-1]
        for j, known in zip(positions, encoder.categories_):
            # ColumnTransformer selects a DataFrame it was fitted on by name
            column = frame[pre.feature_names_in_[j]] if named else frame.iloc[:, j]
            values = column.dropna().astype(object)
            distinct = values.unique()
            if not all(isinstance(v, str) for v in distinct):
                # 1, 1.0 and True are one value to unique() and three categories to the
                # encoder, which reads each cell as text (_as_categories)
                distinct = pd.unique(np.array([str(v) for v in values], dtype=object))
            seen = set(known)
            new = [str(v) for v in distinct if str(v) not in seen]
            if new:
                found[column.name] = new
    return found


def warn_unseen_categories(pre, X) -> None:
    """One :class:`~svmtune.exceptions.UnseenCategoryWarning` naming every categorical column
    of ``X`` that holds values the fitted preprocessor ``pre`` did not see in training, and
    those values (:func:`unseen_categories`): their one-hot entries are all 0, which the
    model reads as no category, so predictions for those rows rest on the other columns.
    Nothing when every value was seen."""
    found = unseen_categories(pre, X)
    if not found:
        return
    parts = [
        f"column {column!r}: {_first_names([repr(v) for v in values])}"
        for column, values in found.items()
    ]
    warnings.warn(
        f"X holds categories the training data did not; their one-hot entries are all 0, as "
        f"if the row had none of the known categories: {'; '.join(parts)}",
        UnseenCategoryWarning,
        stacklevel=user_stacklevel(),
    )


def fit_preprocessor(pre, X, sample_weight=None):
    """Fit ``pre`` (from :func:`make_preprocessor`) on ``X`` with ``sample_weight`` (None:
    every row once) counting each row that many times in the means, scales, medians and most
    frequent values.  Returns ``pre``.

    A standard scaler on a dense array of more than :data:`FIT_CHUNK_VALUES` values is
    fitted in row chunks (its ``partial_fit``, the statistics equal to a single fit's up to
    rounding): a single ``fit`` makes temporaries of about ``X``'s size (issue 64: at 10^6
    rows the tuner's door held ``X`` three times and more)."""
    if isinstance(pre, StandardScaler):
        return _fit_scaler(pre, X, sample_weight)
    if sample_weight is None or isinstance(pre, FunctionTransformer):
        return pre.fit(X)
    with config_context(enable_metadata_routing=True):
        return pre.fit(X, sample_weight=sample_weight)


#: values of ``X`` a standard scaler is fitted on at a time (32 MB of float64)
FIT_CHUNK_VALUES = 2**22


def _fit_scaler(pre: StandardScaler, X, sample_weight) -> StandardScaler:
    """``pre.fit`` on ``X``, in row chunks of :data:`FIT_CHUNK_VALUES` values where a dense
    ``X`` holds more (the first chunk by ``fit``, which resets ``pre``; the others by
    ``partial_fit``)."""
    rows = max(1, FIT_CHUNK_VALUES // max(1, X.shape[1]))
    if not isinstance(X, np.ndarray) or X.shape[0] <= rows:
        return pre.fit(X, sample_weight=sample_weight)
    for i, s in enumerate(gen_batches(X.shape[0], rows)):
        w = None if sample_weight is None else sample_weight[s]
        (pre.partial_fit if i else pre.fit)(X[s], sample_weight=w)
    return pre


def transform_validated(pre, X):
    """``pre.transform(X)`` for rows the tuner's door has validated: a fitted
    ``StandardScaler``'s statistics are applied here as its ``transform`` applies them
    (``X - mean_``, then ``/ scale_``; a sparse ``X`` has its stored values scaled), the same
    numbers without a second ``check_array`` pass over the training rows (issue 55); any
    other transformer runs its own ``transform`` (a pipeline's steps run theirs, its last
    step, a scaler, as above: the array it gets is one the step before built)."""
    if isinstance(pre, Pipeline):
        for _, step in pre.steps[:-1]:
            X = step.transform(X)
        return transform_validated(pre.steps[-1][1], X)
    if type(pre) is not StandardScaler:
        return pre.transform(X)
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=X.dtype if X.dtype in FLOATS else np.float64, copy=True)
        if pre.scale_ is not None:
            X.data *= (1.0 / pre.scale_).take(X.indices, mode="clip")
        return X
    return scaled(pre, X)


def transform_as_fitted(pre, X) -> np.ndarray:
    """``X`` through the fitted preprocessor ``pre`` (as the final SVM sees it), given as
    ``pre`` was fitted: a DataFrame if it saw column names, else an array."""
    if not hasattr(pre, "feature_names_in_"):
        X = X.to_numpy() if hasattr(X, "to_numpy") else np.asarray(X)
    return np.asarray(pre.transform(X), dtype=float)


#: most columns a sparse ``X`` may have.  Fitting on a sparse ``X`` keeps it sparse, but the
#: scaler's statistics and their temporaries are dense arrays of one float64 per column:
#: about five at once, 40 bytes a column (measured: ``SVMTuner(method="auto"/"default")`` on
#: 60 rows peaks 120 MB higher at 4,194,304 columns than at 1,048,576); 2^23 columns keep
#: them under 320 MiB, whatever the number of stored values
MAX_SPARSE_FEATURES = 1 << 23

#: largest dense copy (bytes of float64) made of a sparse ``X`` given to a model fitted on
#: dense rows; the dense svmlight reader takes the same bound
#: (:data:`svmtune.datasets._svmlight.MAX_DENSE_BYTES`)
MAX_DENSIFY_BYTES = 1 << 30


def check_sparse_features(X) -> None:
    """Raise a ``ValueError`` when the sparse ``X`` has more than
    :data:`MAX_SPARSE_FEATURES` columns, before anything of one entry per column is
    allocated; what to do is in the message (keep the columns that hold a value, or hash
    the features into fewer columns)."""
    d = int(X.shape[1])
    if d > MAX_SPARSE_FEATURES:
        raise ValueError(
            f"the sparse X has {d:,} columns, more than the {MAX_SPARSE_FEATURES:,} svmtune "
            f"takes: standardising it keeps dense arrays of one number per column (about "
            f"{40 * d / 2**30:.1f} GiB here); keep only the columns that hold a value "
            "(X[:, np.flatnonzero(X.getnnz(axis=0))], with the same columns at prediction) "
            "or hash the features into fewer columns "
            "(sklearn.feature_extraction.FeatureHasher(n_features=2**20))"
        )


def densify_for(X, pre, fitted_sparse: bool | None):
    """A sparse ``X`` to be transformed by the fitted preprocessor ``pre`` of a model fitted
    on dense rows (whose centring a sparse matrix cannot take, and whose SVM takes dense
    rows only) as a dense array, so that its predictions are those of ``X.toarray()``;
    refused with a message when the copy would exceed :data:`MAX_DENSIFY_BYTES`.  Anything
    else unchanged.  ``fitted_sparse``: whether the model was fitted on sparse rows (None,
    unrecorded: when ``pre`` is a scaler that does not centre, as for sparse rows)."""
    if fitted_sparse is None:
        fitted_sparse = isinstance(pre, StandardScaler) and not pre.with_mean
    if not sp.issparse(X) or fitted_sparse:
        return X
    n, d = X.shape[0], max(X.shape[1], 1)
    if n * d * 8 > MAX_DENSIFY_BYTES:
        raise ValueError(
            f"this model was fitted on dense X, so a sparse X is made dense to be standardised "
            f"as the training rows were; {n:,} rows x {d:,} columns would take "
            f"{n * d * 8 / 2**30:.1f} GiB, more than the {MAX_DENSIFY_BYTES / 2**30:g} GiB "
            f"svmtune makes: predict fewer rows at a time (at most {MAX_DENSIFY_BYTES // (8 * d):,}"
            "), or fit on the sparse matrix"
        )
    return X.toarray()
