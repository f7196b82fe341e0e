"""Input validation at the public boundary, with messages that say what to fix."""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array, check_X_y

__all__ = ["validate_Xy", "validate_sample_weight", "check_min_class_count", "check_positive"]


def validate_Xy(X, y, *, allow_nan: bool = False, estimator=None):
    """Check features and labels: 2-D numeric ``X``, 1-D ``y`` of equal length, >= 2 classes.

    Raises ``ValueError`` naming the problem (NaN/inf, one class, mismatched lengths, a
    continuous target).
    """
    X, y = check_X_y(
        X,
        y,
        dtype="numeric",
        ensure_all_finite="allow-nan" if allow_nan else True,
        estimator=estimator,
        y_numeric=False,
    )
    kind = type_of_target(y, input_name="y")
    if kind not in ("binary", "multiclass"):
        raise ValueError(
            f"Unknown label type: y looks {kind!r}; svmtune selects hyperparameters for "
            "classification and needs discrete class labels."
        )
    return X, y


def check_min_class_count(y_encoded: np.ndarray, classes: np.ndarray, minimum: int = 2) -> None:
    """Raise if fewer than two classes, or a class has fewer than ``minimum`` samples."""
    counts = np.bincount(y_encoded, minlength=len(classes))
    if len(classes) < 2:
        raise ValueError(
            f"y has a single class ({classes[0]!r}); hyperparameter selection needs at "
            "least two classes."
        )
    small = [(c, k) for c, k in zip(classes, counts) if k < minimum]
    if small:
        desc = ", ".join(f"{c!r}: {k}" for c, k in small)
        raise ValueError(
            f"every class needs at least {minimum} samples for selection; too few in {desc}. "
            "Remove or merge the rare classes."
        )


def validate_sample_weight(sample_weight, n: int) -> np.ndarray | None:
    """Check per-sample weights: shape ``(n,)``, finite, non-negative, not all zero."""
    if sample_weight is None:
        return None
    w = check_array(
        sample_weight, ensure_2d=False, dtype=float, ensure_all_finite=False, input_name="w"
    )
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


def check_positive(name: str, value, *, allow_none: bool = False) -> None:
    """Raise a ``ValueError`` unless ``value`` is a positive finite number."""
    if value is None and allow_none:
        return
    try:
        ok = np.isfinite(value) and value > 0
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
