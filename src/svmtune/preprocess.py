"""Preprocessing fitted on training data only.

Three documented modes (``SVMTuner(preprocess=...)``):

``"standard"`` (default)
    Numeric input only; NaN/inf rejected with a clear error (as scikit-learn estimators do);
    every feature standardised to zero mean and unit variance (constant features left at 0).
``"auto"``
    Mixed data: numeric columns -> median imputation + standardisation; categorical columns
    (pandas ``object``/``category``/``string``/``bool`` dtypes) -> most-frequent imputation +
    one-hot encoding (categories unseen in training are ignored at prediction time).  Works on
    pandas DataFrames and on numeric arrays with missing values.
``"none"``
    Features used as given (still validated as finite numbers).
"""

from __future__ import annotations

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

__all__ = ["PREPROCESS_MODES", "make_preprocessor", "categorical_columns", "needs_auto"]

PREPROCESS_MODES = ("standard", "auto", "none")


def categorical_columns(X) -> list:
    """Names of the non-numeric columns of a DataFrame (empty for arrays)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None:
        return []
    out = []
    for col, dt in dtypes.items():
        kind = getattr(dt, "kind", "O")
        if kind in "OSUb" or str(dt) in ("category", "string", "str", "bool"):
            out.append(col)
    return out


def needs_auto(X) -> bool:
    """True when ``X`` has categorical columns or missing values (the CLI then uses "auto")."""
    if categorical_columns(X):
        return True
    arr = np.asarray(X, dtype=float)
    return not np.all(np.isfinite(arr))


def make_preprocessor(mode: str, X=None):
    """An unfitted transformer for ``mode`` (see the module docstring)."""
    if mode == "standard":
        return StandardScaler()
    if mode == "none":
        return FunctionTransformer(validate=False)
    if mode != "auto":
        raise ValueError(f"preprocess must be one of {PREPROCESS_MODES}, got {mode!r}")
    num_pipe = make_pipeline(SimpleImputer(strategy="median"), StandardScaler())
    cats = categorical_columns(X) if X is not None else []
    if not cats:
        return num_pipe
    nums = [c for c in X.columns if c not in cats]
    cat_pipe = make_pipeline(
        SimpleImputer(strategy="most_frequent"),
        OneHotEncoder(handle_unknown="ignore", sparse_output=False),
    )
    return ColumnTransformer(
        [("num", num_pipe, nums), ("cat", cat_pipe, cats)], remainder="drop", sparse_threshold=0
    )
