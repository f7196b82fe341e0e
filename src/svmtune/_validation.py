"""Input validation at the public boundary, with messages that say what to fix."""

from __future__ import annotations

import contextlib
import math
import numbers

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.sparsefuncs import min_max_axis
from sklearn.utils.validation import check_array

from svmtune.preprocess import _convertible, _numeric_values, _only_numbers, categorical_columns

__all__ = [
    "as_table",
    "explained_errors",
    "is_table",
    "check_label_kind",
    "check_labels",
    "validate_sample_weight",
    "check_weight_range",
    "WEIGHT_LIMIT",
    "validate_groups",
    "check_min_class_count",
    "check_feature_values",
    "check_feature_scale",
    "check_distance_range",
    "check_numeric_features",
    "check_time_columns",
    "available_memory",
    "check_dense_memory",
]


def _label(value) -> str:
    """A class label as users wrote it (numpy scalars shown as plain Python values)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return repr(value)


def _raise_missing_labels(missing: np.ndarray) -> None:
    if missing.any():
        rows = np.flatnonzero(missing)
        shown = ", ".join(str(r) for r in rows[:8]) + (", ..." if len(rows) > 8 else "")
        raise ValueError(
            f"y has {len(rows)} missing label(s) (None/NaN) at rows {shown}; drop those rows "
            "or give them a class"
        )


def check_labels(y) -> None:
    """Raise a ``ValueError`` when the labels ``y`` are missing somewhere (None, NaN,
    ``pd.NA``) or mix numbers and strings: cases that numpy's sorting otherwise reports as
    "'<' not supported between instances of 'NoneType' and 'str'"."""

    arr = y if isinstance(y, np.ndarray) else np.asarray(y)
    if arr.ndim != 1 or arr.dtype.kind in "biu":
        return  # numbers: scikit-learn's checks say what is wrong (continuous labels)
    if arr.dtype.kind == "f":
        _raise_missing_labels(np.isnan(arr))  # NaN, also pd.NA of a nullable integer column
        return
    if arr.dtype != object:
        if arr is y:
            return  # a string array
        # a list numpy made strings of (None -> 'None', nan -> 'nan', 1 -> '1'): its items
        arr = np.asarray(y, dtype=object)
    _raise_missing_labels(
        np.array([v is None or v is pd.NA or (isinstance(v, float) and v != v) for v in arr])
    )
    kinds = {
        "number"
        if isinstance(v, (numbers.Number, np.number, np.bool_))
        else "str"
        if isinstance(v, str)
        else type(v).__name__
        for v in arr
    }
    if len(kinds) > 1:
        raise ValueError(
            f"y mixes label types ({', '.join(sorted(kinds))}); give every label the same type, "
            "e.g. all strings"
        )


def check_label_kind(y) -> None:
    """Raise unless ``y`` (validated, 1-D) holds class labels: binary or multiclass."""
    kind = type_of_target(y, input_name="y")
    if kind not in ("binary", "multiclass"):
        raise ValueError(
            f"Unknown label type: y looks {kind!r}; svmtune selects hyperparameters for "
            "classification and needs discrete class labels."
        )


def check_min_class_count(
    y_encoded: np.ndarray,
    classes: np.ndarray,
    minimum: int = 2,
    sample_weight: np.ndarray | None = None,
) -> None:
    """Raise if fewer than two classes, or a class has fewer than ``minimum`` samples.

    With ``sample_weight`` only the samples of positive weight count (a sample of weight 0
    is one the fit leaves out).
    """
    counts = np.bincount(y_encoded, minlength=len(classes))
    if len(y_encoded) < 2:
        raise ValueError(
            f"got {len(y_encoded)} sample (n_samples={len(y_encoded)}); selection needs at "
            "least two samples of each of two classes."
        )
    if len(classes) < 2:
        raise ValueError(
            f"y has 1 class ({_label(classes[0])}); hyperparameter selection needs at "
            "least two classes."
        )
    if sample_weight is not None:
        counts = np.bincount(y_encoded[sample_weight > 0], minlength=len(classes))
    small = [(c, k) for c, k in zip(classes, counts) if k < minimum]
    if small:
        desc = ", ".join(f"class {_label(c)} has {k}" for c, k in small)
        if sample_weight is None:
            raise ValueError(
                f"every class needs at least {minimum} samples for selection; {desc}. "
                "Remove or merge the rare classes."
            )
        need = "a sample" if minimum == 1 else f"at least {minimum} samples"
        raise ValueError(
            f"every class needs {need} with positive sample_weight; {desc}. Give its "
            "samples a weight > 0, or remove the class."
        )


def _weights_array(sample_weight) -> np.ndarray:
    """Weights given as a list, a Series or another array-like, as a float array, or a
    ``ValueError`` saying what they must be."""
    try:
        return check_array(
            sample_weight, ensure_2d=False, dtype=float, ensure_all_finite=False, input_name="w"
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"sample_weight must be numbers, one weight per sample (or one number for all), "
            f"got {type(sample_weight).__name__} {str(sample_weight)[:40]!r} ({exc})"
        ) from None


def validate_sample_weight(sample_weight, n: int) -> np.ndarray | None:
    """Check per-sample weights: shape ``(n,)``, finite, non-negative, not all zero.

    A scalar is the same weight for every sample, as in scikit-learn.
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Real):
        sample_weight = np.full(n, sample_weight, dtype=float)
    if isinstance(sample_weight, np.ndarray) and sample_weight.dtype.kind in "fiu":
        w = sample_weight.astype(float, copy=False)  # the solvers' calls: no conversion
    else:
        w = _weights_array(sample_weight)
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(
            f"sample_weight has shape {w.shape}, expected ({n},): one weight per sample"
        )
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity; weights must be finite")
    if np.any(w < 0):
        raise ValueError("sample_weight contains negative values; weights must be >= 0")
    if not np.any(w > 0):
        raise ValueError("sample_weight is all zero; at least some samples need weight > 0")
    return w


#: largest positive sample weight (and inverse of the smallest) the SVMs are given: every
#: fit multiplies C by the weights (C up to 2^30 in any search range used) and the L2-SVM's
#: ridge is 1 / (C w); with weights within [1e-100, 1e100] both and their squares stay
#: finite in float64
WEIGHT_LIMIT = 1e100


def check_weight_range(w: np.ndarray | None, name: str = "sample_weight") -> None:
    """Raise a ``ValueError`` naming ``name`` when a positive weight of ``w`` lies outside
    ``[1 / WEIGHT_LIMIT, WEIGHT_LIMIT]``, where ``C * w`` or ``1 / (C w)`` overflow in
    float64 (the SVMs then meet infinities and NaN).  Only the product ``C * w`` matters,
    so dividing (or multiplying) every weight by one constant is the fix."""
    if w is None:
        return
    pos = w[w > 0]
    if pos.size == 0:
        return
    lo, hi = float(pos.min()), float(pos.max())
    if hi > WEIGHT_LIMIT or lo < 1.0 / WEIGHT_LIMIT:
        raise ValueError(
            f"{name} has positive values from {lo:.3g} to {hi:.3g}; they must lie between "
            f"{1.0 / WEIGHT_LIMIT:g} and {WEIGHT_LIMIT:g}, where C * weight and its inverse "
            "stay finite. Only C * weight matters: divide all weights by their mean (and "
            "set weights that should not count to 0)"
        )


def validate_groups(groups, n: int) -> np.ndarray | None:
    """Check group labels (one per sample, any hashable values, none missing) and encode
    them as integers ``0..G-1`` in order of first appearance.

    Raises
    ------
    ValueError
        If ``groups`` is not one label per sample or some label is missing (None, NaN,
        ``pd.NA``).
    """

    if groups is None:
        return None
    if isinstance(groups, (str, bytes, numbers.Number)):
        raise ValueError(
            f"groups must be one group label per sample (an array of length {n}), got {groups!r}"
        )
    arr = groups.to_numpy() if isinstance(groups, (pd.Series, pd.Index)) else np.asarray(groups)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(
            f"groups has shape {arr.shape}, expected ({n},): one group label per sample"
        )
    codes = pd.factorize(arr)[0]  # -1 marks None, NaN and pd.NA
    missing = np.flatnonzero(codes < 0)
    if missing.size:
        shown = ", ".join(str(i) for i in missing[:5]) + (" ..." if missing.size > 5 else "")
        raise ValueError(
            f"groups has {missing.size} missing value(s) (None, NaN or pd.NA) at position(s) "
            f"{shown}; give every sample a group label"
        )
    return codes.astype(np.intp)


def _numeric_part(X) -> tuple[np.ndarray, list]:
    """The numeric columns of ``X`` (a DataFrame or a 2-D array) as floats with NaN for
    missing values, and their names (positions for an array): number dtypes except complex
    (left to scikit-learn's "Complex data not supported") and ``object`` columns holding
    only numbers and missing values."""

    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    keep = [
        j
        for j, dt in enumerate(frame.dtypes)
        if (
            pd.api.types.is_numeric_dtype(dt)
            and not pd.api.types.is_complex_dtype(dt)
            and not pd.api.types.is_bool_dtype(dt)
        )
        or (str(dt) == "object" and _only_numbers(frame.iloc[:, j]))
    ]
    num = frame.iloc[:, keep]
    return _numeric_values(num), list(num.columns)


def check_feature_values(X, *, allow_nan: bool = False) -> None:
    """Raise a ``ValueError`` naming the columns of ``X`` that hold infinity (or NaN).

    ``X`` is a DataFrame or a 2-D array; non-numeric (categorical) columns are skipped.  NaN
    is allowed when ``allow_nan`` (the imputing ``preprocess="auto"`` pipeline fills it);
    infinity never is: no preprocessing can tell what it should have been.
    """
    values, names = _numeric_part(X)
    if values.shape[1] == 0:
        return
    names = [str(c) for c in names]

    def _cols(mask: np.ndarray) -> str:
        bad = [names[j] for j in np.flatnonzero(mask.any(axis=0))]
        return ", ".join(repr(b) for b in bad[:8]) + (", ..." if len(bad) > 8 else "")

    def _cells(mask: np.ndarray) -> str:
        k = int(mask.sum())
        return f"{k} cell" if k == 1 else f"{k} cells"

    inf = np.isinf(values)
    if inf.any():
        raise ValueError(
            f"X contains infinity ({_cells(inf)}, columns {_cols(inf)}); replace "
            "or remove those values (imputation only fills missing values)"
        )
    nan = np.isnan(values)
    if nan.any() and not allow_nan:
        raise ValueError(
            f"X contains NaN ({_cells(nan)} missing, columns {_cols(nan)}); impute "
            "them, e.g. with preprocess='auto' (median imputation + one-hot + standardise)"
        )


#: largest / smallest column magnitude standardisation handles: squares (variances) of
#: values beyond 2^500 ~ 3e150 overflow float64, below 2^-500 they underflow to 0
FEATURE_SCALE_LIMIT = 2.0**500


def check_feature_scale(X, names=None) -> None:
    """Raise a ``ValueError`` naming the numeric columns whose magnitudes standardisation
    cannot handle in float64 (largest ``|x|`` above ``2^500`` or, nonzero, below
    ``2^-500``): their variances overflow to inf (the standardised column becomes NaN) or
    underflow to 0 (the column is left unscaled, i.e. carries no information).  A scipy
    sparse ``X`` is read at its stored entries, a numeric array as it is (no copy: the
    tuner's door has checked it); ``names`` name their columns (default: positions).  A
    DataFrame's numeric columns are read by name."""
    if sp.issparse(X):
        lo, hi = min_max_axis(sp.csr_matrix(X), axis=0)  # no copy of a CSR X's entries
        peak = np.maximum(-lo, hi)
        names = range(X.shape[1]) if names is None else names
    elif isinstance(X, np.ndarray) and X.dtype.kind in "fiu" and X.ndim == 2:
        if X.size == 0:
            return
        peak = np.fmax.reduce(np.abs(X), axis=0)
        names = range(X.shape[1]) if names is None else names
    else:
        values, names = _numeric_part(X)
        if values.shape[1] == 0 or values.shape[0] == 0:
            return
        # fmax skips NaN; a column holding infinity has its own error (check_feature_values)
        peak = np.fmax.reduce(np.abs(values), axis=0)
    bad = np.isfinite(peak) & (
        (peak > FEATURE_SCALE_LIMIT) | ((peak > 0) & (peak < 1.0 / FEATURE_SCALE_LIMIT))
    )
    if bad.any():
        cols = [f"{names[j]!r} (largest |x| {peak[j]:.1e})" for j in np.flatnonzero(bad)]
        raise ValueError(
            f"X has columns too large or too small to standardise in float64: "
            f"{', '.join(cols[:6])}{', ...' if len(cols) > 6 else ''}; rescale them (e.g. by "
            "a power of ten) so that their magnitudes lie between 1e-150 and 1e150"
        )


#: smallest largest-magnitude feature value ``preprocess="none"`` accepts: squares of
#: values below ``sqrt(float64 tiny) ~ 1.5e-154`` underflow
DISTANCE_FLOOR = 1e-150


def check_distance_range(X) -> None:
    """Raise a ``ValueError`` when the squared distances of the rows of ``X`` (features used
    as they are, ``preprocess="none"``) can overflow float64 (``2 * max|x| *
    sqrt(n_features)`` above ``sqrt(float64 max) ~ 1.3e154``) or underflow to 0 (a nonzero
    ``max|x|`` below :data:`DISTANCE_FLOOR`: every point would coincide).  A scipy sparse
    ``X`` is read at its stored entries only."""
    values = X if sp.issparse(X) else np.asarray(X, dtype=float)
    if values.shape[0] * values.shape[1] == 0:
        return
    if sp.issparse(values):
        peak = float(abs(values).max()) if values.nnz else 0.0
    else:
        peak = float(np.max(np.abs(values)))
    limit = math.sqrt(np.finfo(float).max) / (2.0 * math.sqrt(values.shape[1]))
    if 0.0 < peak < DISTANCE_FLOOR:
        raise ValueError(
            f"X has values no larger than {peak:.2e}: with preprocess='none' the kernels take "
            "squared distances of the features as they are, which underflow to 0 below "
            f"|x| = {DISTANCE_FLOOR:g}; rescale X (e.g. by a power of ten) or use "
            "preprocess='standard'"
        )
    if peak > limit:
        raise ValueError(
            f"X has values up to {peak:.2e}: with preprocess='none' the kernels take squared "
            f"distances of the features as they are, which overflow float64 above |x| = "
            f"{limit:.1e} for {values.shape[1]} features; rescale X (e.g. by a power of ten) "
            "or use preprocess='standard'"
        )


def check_time_columns(X) -> None:
    """Raise a ``ValueError`` naming the ``datetime64`` / ``timedelta64`` columns of a
    DataFrame ``X`` (only ``preprocess="auto"`` reads them, as nanoseconds)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        return
    times = [c for c, dt in dtypes.items() if getattr(dt, "kind", "") in "mM"]
    if times:
        raise ValueError(
            f"X has date/time columns: {', '.join(repr(c) for c in times[:6])}; convert "
            "them to numbers (e.g. days since a date), or use preprocess='auto', which "
            "reads them as nanoseconds before standardising"
        )


def check_numeric_features(X) -> None:
    """Raise a ``ValueError`` naming the columns of ``X`` that do not hold numbers.

    For a DataFrame or an array of strings or objects: such columns need an encoding
    (one-hot with ``preprocess="auto"``) before an RBF kernel can use them.  Other inputs are
    left to scikit-learn's checks.
    """

    check_time_columns(X)
    is_frame = hasattr(X, "columns") and hasattr(X, "dtypes")
    if not is_frame and np.asarray(X).dtype.kind not in "OSU":
        return
    cols = categorical_columns(X)
    if is_frame:
        cols = [c for c in cols if X[c].dtype.kind != "b" and not _convertible(X[c])]
    if cols:
        names = ", ".join(repr(c if is_frame else int(c)) for c in cols[:6])
        more = f" and {len(cols) - 6} more" if len(cols) > 6 else ""
        raise ValueError(
            f"X has non-numeric (categorical) columns: {names}{more}; encode them, e.g. "
            "with preprocess='auto' (one-hot encoding, imputation, standardisation)"
        )


def available_memory() -> int | None:
    """Bytes of memory a new allocation can use without swapping (Linux ``MemAvailable``),
    or None where the system does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_dense_memory(n: int, *, matrices: float, method: str, alternative: str) -> None:
    """Raise a ``MemoryError`` before a method that keeps ``matrices`` dense ``n x n``
    float64 arrays starts, when they alone exceed the memory available now.

    ``matrices`` is a lower estimate of the method's peak (measured peaks are higher), so the
    check stops only runs that cannot fit, instead of letting them be killed by the
    operating system after a long time.
    """
    need = matrices * 8.0 * n * n
    avail = available_memory()
    if avail is not None and need > avail:
        raise MemoryError(
            f"method {method!r} keeps at least {matrices:g} dense n x n matrices: with "
            f"n = {n:,} samples that is {need / 2**30:.1f} GiB, more than the "
            f"{avail / 2**30:.1f} GiB of memory available; {alternative}"
        )


@contextlib.contextmanager
def explained_errors(X):
    """Replace scikit-learn's ValueError on ``X`` by one naming the columns and the fix when
    the cause is one only ``preprocess="auto"`` handles (categorical or date/time columns,
    NaN).  Runs the column checks only after a failure, so valid input is checked once, by
    scikit-learn."""
    try:
        yield
    except ValueError:
        if not sp.issparse(X) and is_table(X):
            try:
                check_numeric_features(X)
                check_feature_values(X)
            except ValueError as clearer:
                raise clearer from None
        raise
    except TypeError:  # numpy's DTypePromotionError (date/time columns) is a TypeError,
        try:  # and so is pd.NA in an object column of numbers
            check_time_columns(X)
            if not sp.issparse(X) and is_table(X):
                check_feature_values(X)
        except ValueError as clearer:
            raise clearer from None
        raise


def is_table(X) -> bool:
    """Whether ``X`` is a DataFrame or an array-like numpy reads as 2-D (the column checks
    apply; anything else keeps scikit-learn's message, e.g. "Found array with dim 3")."""
    if isinstance(X, pd.DataFrame):
        return True
    try:
        return np.ndim(X) == 2
    except ValueError:  # ragged nested lists
        return False


def as_table(X):
    """``X`` for ``preprocess="auto"``: a DataFrame as it is, anything else through
    scikit-learn's ``check_array`` keeping its dtype (dense, 2-D, at least one sample and
    one feature; missing values and text allowed)."""
    if isinstance(X, pd.DataFrame):
        return X
    return check_array(X, dtype=None, ensure_all_finite=False, input_name="X")
