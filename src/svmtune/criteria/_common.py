"""The inputs and the result type shared by the class-block kernel statistics.

:class:`BlockStats` holds the class-block means of the kernel matrix (ESDR eq. (10)-(12), LD
eq. (10)) and of the feature-space squared distance (ESDR eq. (9)) that
:mod:`svmtune.criteria.blocks` (exact) and :mod:`svmtune.criteria.histogram` (binned) compute;
the checks of the data, labels and weights, and the RBF parameter ``t = 1 / (2 sigma^2)``
(:func:`rbf_t`) are theirs too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmtune._validation import check_labels, validate_sample_weight

__all__ = ["BlockStats", "T_MAX", "T_MIN", "encode_classes", "rbf_t"]

#: widths are clipped to ``t in [T_MIN, T_MAX]`` (sigma roughly in [1e-150, 1e150]): beyond
#: that the kernel is numerically the identity / all-ones matrix
T_MIN, T_MAX = 1e-300, 1e300


@dataclass(frozen=True)
class BlockStats:
    """Class-block kernel statistics for ``s`` kernel parameters and ``k`` classes.

    Attributes
    ----------
    sigmas : ndarray (s,) or None
        RBF widths (None for a given kernel matrix).
    class_counts : ndarray (k,)
        Samples per class.
    class_weights : ndarray (k,)
        Total sample weight per class ``W_a`` (equal to the counts without weights).
    means : ndarray (s, k, k)
        Block means ``M_ab`` of the kernel over ordered pairs including ``i = j``
        (LD eq. (10): ``S_ab = M_ab``).
    diag_means : ndarray (s, k)
        Weighted mean of ``K_ii`` over each class (1 for the RBF kernel).
    dist : ndarray (s, k, k)
        Block means of the feature-space squared distance (ESDR eq. (9)) divided by
        ``dist_scale``: ``E d_F^2 = dist_scale * dist``.
    dist_scale : ndarray (s,)
        ``2 t = 1 / sigma^2`` for the RBF kernel (so ``dist`` -> input-space squared distance
        as sigma -> inf); 1 for a given kernel matrix.
    mean_bound, dist_bound : ndarray (s, k, k)
        Absolute bounds on the binning error of ``means`` and ``dist`` (0 when exact).
    mean_se, dist_se : ndarray (s, k, k)
        Standard errors from pair subsampling (0 when all pairs were used).
    method : str
        "exact", "histogram", "subsample" or "kernel".
    """

    sigmas: np.ndarray | None
    class_counts: np.ndarray
    class_weights: np.ndarray
    means: np.ndarray
    diag_means: np.ndarray
    dist: np.ndarray
    dist_scale: np.ndarray
    mean_bound: np.ndarray
    dist_bound: np.ndarray
    mean_se: np.ndarray
    dist_se: np.ndarray
    method: str

    @property
    def n_classes(self) -> int:
        return int(self.class_counts.shape[0])

    @property
    def sqdist_means(self) -> np.ndarray:
        """Block means of the feature-space squared distance ``E d_F^2`` (ESDR eq. (10)-(12))."""
        return self.dist_scale[:, None, None] * self.dist


def encode_classes(y: np.ndarray) -> tuple[np.ndarray, int]:
    """Integer class codes ``0..k-1`` of ``y`` and ``k`` (classes ordered as ``np.unique``)."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {y.shape}")
    check_labels(y)
    _, codes = np.unique(y, return_inverse=True)
    return codes.astype(np.intp), int(codes.max()) + 1 if codes.size else 0


def rbf_t(sigmas) -> tuple[np.ndarray, np.ndarray]:
    """``(sigmas, t)`` with ``t = 1 / (2 sigma^2)`` clipped to ``[1e-300, 1e300]``.

    Raises ``ValueError`` unless every sigma is positive and finite.
    """
    s = np.atleast_1d(np.asarray(sigmas, dtype=float))
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"sigmas must be a non-empty 1-D array of widths, got shape {s.shape}")
    if not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise ValueError(f"RBF widths sigma must be positive and finite, got {s}")
    with np.errstate(over="ignore", divide="ignore", under="ignore"):
        t = 1.0 / (2.0 * s * s)
    return s, np.clip(t, T_MIN, T_MAX)


def _check_X(X, name: str = "X") -> np.ndarray:
    """``X`` as a finite 2-D float array (n_samples, n_features)."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinity; impute or drop those values first")
    return X


def _check_class_weights(class_weights, k: int) -> np.ndarray:
    """``class_weights`` as a float array of ``k >= 2`` positive finite class sizes."""
    cw = np.asarray(class_weights, dtype=float)
    if k < 2:
        raise ValueError(f"got {k} class; the class-pair criteria need at least two classes")
    if cw.shape != (k,):
        raise ValueError(f"class_weights must have shape ({k},): one per class, got {cw.shape}")
    if not np.all(np.isfinite(cw)) or np.any(cw <= 0):
        raise ValueError(f"class_weights must be positive and finite (class sizes), got {cw}")
    return cw


def _check_inputs(X, y, sample_weight, min_classes: int = 2):
    """Validated ``(X, codes, k, w, counts, class_weights)``; the class-pair statistics need
    ``min_classes = 2`` classes (per-class sums alone, 1)."""
    X = _check_X(X)
    codes, k = encode_classes(y)
    if codes.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} samples but y has {codes.shape[0]}")
    if X.shape[0] == 0:
        raise ValueError("X has no samples")
    if k < min_classes:
        raise ValueError(
            f"y has {k} class; the class-separability criteria need at least {min_classes}"
        )
    w = validate_sample_weight(sample_weight, X.shape[0])
    counts = np.bincount(codes, minlength=k)
    cw = counts.astype(float) if w is None else np.bincount(codes, weights=w, minlength=k)
    if np.any(cw <= 0):
        raise ValueError("every class needs positive total sample weight")
    return X, codes, k, w, counts, cw


def _check_chunk(chunk_size) -> int:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)):
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    return int(chunk_size)
