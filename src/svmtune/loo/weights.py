"""Instance weights of the weighted SVM from importance scores (Weighted span, Section 6.3).

The weighted SVM penalises the slack of sample ``i`` with its own ``C_i`` (Weighted span
eq. (1)).  When every training sample carries an importance score ``q_i`` in ``[0, 1]``
(e.g. a disease-severity rating, the length of a phone call), the paper maps scores to
weights through the sigmoid family

    C_i(q_i; A, B, C) = max( C / (1 + exp(-A (q_i - B))), floor )        (Weighted span eq. (39))

with slope ``A``, centre ``B``, scale ``C`` and a small ``floor`` (the paper's sigma = 0.01)
for training stability, and selects ``(A, B, C)`` on the grid ``A = 1..10``,
``B = 0, 0.1, .., 0.9``, ``log2 C = -6..10`` (1700 models).

libsvm takes per-sample bounds as ``C * sample_weight``, so :func:`sigmoid_sample_weights`
returns the multipliers ``C_i / C``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import expit

from svmtune._option_values import check_positive

__all__ = [
    "DEFAULT_FLOOR",
    "PAPER_A_VALUES",
    "PAPER_B_VALUES",
    "check_scores",
    "minmax_scores",
    "sigmoid_weights",
    "sigmoid_sample_weights",
    "WeightFn",
]

#: The paper's ``sigma`` in eq. (39): the smallest instance weight ``C_i``.
DEFAULT_FLOOR = 0.01
#: Slopes ``A`` of the paper's grid (Section 6.3): 1, 2, ..., 10.
PAPER_A_VALUES = tuple(float(a) for a in range(1, 11))
#: Centres ``B`` of the paper's grid (Section 6.3): 0, 0.1, ..., 0.9.
PAPER_B_VALUES = tuple(round(0.1 * b, 1) for b in range(10))

#: A weight family: ``weight_fn(q, A, B, C) -> C_i`` (an array like ``q``, all > 0).
WeightFn = Callable[[np.ndarray, float, float, float], np.ndarray]


def check_scores(scores, n: int | None = None) -> np.ndarray:
    """Validate importance scores: a finite 1-D float array (of length ``n`` if given).

    Raises
    ------
    ValueError
        Naming what is wrong (shape, length, NaN/inf).
    """
    try:
        q = np.asarray(scores, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"scores must be an array of numbers, one importance score per sample, got "
            f"{type(scores).__name__} {str(scores)[:40]!r}"
        ) from None
    if q.ndim != 1:
        raise ValueError(f"scores must be a 1-D array with one score per sample, got {q.shape}")
    if n is not None and q.shape[0] != n:
        raise ValueError(
            f"scores has {q.shape[0]} entries but the training set has {n} samples; "
            "give one importance score per training sample, in the order of X"
        )
    if not np.all(np.isfinite(q)):
        raise ValueError("scores contain NaN or infinity; importance scores must be finite")
    return q


def minmax_scores(raw) -> np.ndarray:
    """Scale raw importance values linearly to ``[0, 1]`` (Weighted span Section 6.3).

    The paper scales the UPDRS ratings and the call durations this way before eq. (39).
    A constant input maps to all ones (every sample equally important).
    """
    q = check_scores(raw)
    lo, hi = float(q.min()), float(q.max())
    if hi == lo:
        return np.ones_like(q)
    return (q - lo) / (hi - lo)


def sigmoid_weights(
    q: np.ndarray, A: float, B: float, C: float, *, floor: float = DEFAULT_FLOOR
) -> np.ndarray:
    """Instance weights ``C_i`` from scores by the sigmoid family (Weighted span eq. (39)).

    ``C_i = max(C / (1 + exp(-A (q_i - B))), floor)``.

    Parameters
    ----------
    q : ndarray of shape (n,)
        Importance scores (the paper's are scaled to ``[0, 1]``).
    A : float
        Slope (finite; the paper uses 1..10; ``A = 0`` gives equal weights ``C / 2``).
    B : float
        Centre: ``q_i = B`` gets ``C / 2``.
    C : float
        Scale, the largest possible weight (positive).
    floor : float
        Smallest weight (the paper's ``sigma = 0.01``), non-negative.

    Returns
    -------
    ndarray of shape (n,)
        The per-sample penalties ``C_i``.
    """
    q = check_scores(q)
    if not np.isfinite(A):
        raise ValueError(f"slope A must be finite, got {A}")
    if not np.isfinite(B):
        raise ValueError(f"centre B must be finite, got {B}")
    check_positive("scale C", C)
    if not (np.isfinite(floor) and floor >= 0):
        raise ValueError(f"floor must be a non-negative finite number, got {floor}")
    return np.maximum(C * expit(A * (q - B)), floor)


def sigmoid_sample_weights(
    q: np.ndarray,
    A: float,
    B: float,
    C: float,
    *,
    floor: float = DEFAULT_FLOOR,
    weight_fn: WeightFn | None = None,
) -> np.ndarray:
    """Multipliers ``w_i = C_i / C`` such that libsvm's bounds ``C * w_i`` equal eq. (39).

    ``weight_fn(q, A, B, C)`` replaces the sigmoid family when given; it must return
    positive finite weights of the same shape as ``q``.
    """
    if weight_fn is None:
        Ci = sigmoid_weights(q, A, B, C, floor=floor)
    else:
        q = check_scores(q)
        Ci = np.asarray(weight_fn(q, A, B, C), dtype=float)
        if Ci.shape != q.shape:
            raise ValueError(
                f"weight_fn returned shape {Ci.shape}, expected {q.shape} (one weight per sample)"
            )
        if not np.all(np.isfinite(Ci)) or np.any(Ci < 0) or not np.any(Ci > 0):
            raise ValueError(
                "weight_fn must return finite, non-negative weights, not all zero "
                f"(got min {np.min(Ci)!r}, max {np.max(Ci)!r} for A={A}, B={B}, C={C})"
            )
    check_positive("scale C", C)
    return Ci / C
