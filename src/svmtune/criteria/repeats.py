"""Exact repeated rows and the within-class RBF similarity they carry.

Rows repeated exactly (categorical or coarsely rounded features) keep kernel value 1 at every
RBF width, while pairs of distinct rows fade as the width shrinks.  Criteria built on class
kernel means (S&S, ESDR, DBTC, J4) can then favour the narrowest widths, which describe
which rows repeat rather than how the classes lie.  :func:`repeat_share` measures how much of
the within-class similarity the repeats carry; :func:`repeat_floor` finds the narrowest
width of a grid at which they carry less than a given share.  Beyond the papers, which have
no rule for repeated rows.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from svmtune._validation import validate_sample_weight
from svmtune.criteria._common import _check_X, encode_classes
from svmtune.criteria.blocks import rbf_class_sums

__all__ = [
    "SHARE_ROWS",
    "positive_rows",
    "repeat_floor",
    "repeat_mass",
    "repeat_share",
    "within_mass",
]

#: rows :func:`repeat_share` uses at most when it subsamples (its cost is O(rows^2) per width)
SHARE_ROWS = 5000


def repeat_mass(X: np.ndarray, codes: np.ndarray, w: np.ndarray) -> float:
    """``sum_{i != j} w_i w_j`` over pairs of equal rows of the same class (the within-class
    similarity of exact repeats at every RBF width).  Rows are grouped by their bytes (one
    sort of a 1-D view, a third of ``np.unique(axis=0)``'s time: this runs in every S&S
    selection)."""
    rows = np.ascontiguousarray(np.column_stack([X, codes]), dtype=float)
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    groups = np.unique(keys, return_inverse=True)[1].ravel()
    gw = np.bincount(groups, weights=w)
    return float(np.sum(gw * gw) - np.sum(w * w))


def within_mass(R: np.ndarray, codes: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_{i != j, same class} w_i w_j k(x_i, x_j)`` from class sums ``R`` of shape
    ``(s, n, k)`` (``R[., i, c] = sum_{j in c} w_j k(x_i, x_j)``, ``k(x, x) = 1``): one value
    per leading entry."""
    if np.ndim(R) != 3 or np.shape(R)[1] != codes.shape[0]:
        raise ValueError(
            f"R must be class sums of shape (s, {codes.shape[0]}, k), got {np.shape(R)}"
        )
    own = R[:, np.arange(codes.shape[0]), codes]
    return own @ w - np.sum(w * w)


def positive_rows(X, y, w) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of positive weight (the others add nothing to either sum), their class codes and
    weights.

    Raises
    ------
    ValueError
        If ``X`` is not a finite 2-D array, ``y`` not one label per row, or ``w`` not
        finite non-negative weights, one per row, some positive.
    """
    X = _check_X(X)
    y = np.asarray(y)
    encode_classes(y)  # 1-D, no missing labels
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} samples but y has {y.shape[0]}")
    w = np.ones(X.shape[0]) if w is None else validate_sample_weight(w, X.shape[0])
    keep = w > 0
    codes = np.unique(y[keep], return_inverse=True)[1].ravel()
    return X[keep], codes, w[keep]


def repeat_share(
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray | None,
    sigma,
    *,
    max_rows: int | None = None,
    random_state=None,
):
    """Share of the within-class RBF similarity between different samples that comes from
    exact repeats (rows equal to another row of the same class), at width(s) ``sigma``.

    ``sum_{i != j, same class} w_i w_j k(x_i, x_j)`` counts a repeated pair with kernel value
    1 at every width, while pairs of distinct rows fade as the width shrinks; a share near 1
    means the class centres and spreads S&S compares describe which rows repeat, not how
    the classes lie; 0 when no row repeats within its class.  With more
    than ``max_rows`` rows it is computed on ``max_rows`` of them drawn at random (both sums
    run over pairs, so their ratio keeps its expectation), at ``O(max_rows^2)`` cost; all
    widths in one pass over the pairs.  A float for a scalar ``sigma``, else an array.
    """
    rows = _share_rows(X, y, w, max_rows, random_state)
    out = _shares(*rows, np.atleast_1d(np.asarray(sigma, dtype=float)))
    return float(out[0]) if np.ndim(sigma) == 0 else out


def _share_rows(X, y, w, max_rows, random_state):
    """The rows :func:`repeat_share` sums over (positive weight, at most ``max_rows`` drawn
    at random), their class codes and weights, and their :func:`repeat_mass`."""
    if max_rows is not None and (
        isinstance(max_rows, bool) or int(max_rows) != max_rows or max_rows < 1
    ):
        raise ValueError(f"max_rows must be a positive integer or None, got {max_rows!r}")
    X, codes, w = positive_rows(X, y, w)
    if max_rows is not None and X.shape[0] > max_rows:
        idx = check_random_state(random_state).choice(X.shape[0], max_rows, replace=False)
        X, codes, w = X[idx], codes[idx], w[idx]
    return X, codes, w, repeat_mass(X, codes, w)


def _shares(X, codes, w, repeats: float, sig: np.ndarray) -> np.ndarray:
    """:func:`repeat_share` at the widths ``sig`` for the rows of :func:`_share_rows`."""
    if repeats == 0:
        return np.zeros(sig.shape)
    # the repeated pairs are part of the within-class similarity: it is positive
    return repeats / within_mass(rbf_class_sums(X, codes, sig, sample_weight=w), codes, w)


def repeat_floor(
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray | None,
    sigmas: np.ndarray,
    max_share: float,
    *,
    random_state=None,
) -> tuple[int, float]:
    """Index of the narrowest of the increasing widths ``sigmas`` at which exact repeats carry
    less than ``max_share`` of the within-class similarity, and the share there.

    :func:`repeat_share` does not increase with the width (every kernel value between
    distinct rows grows with it, the repeats' stays 1), so the widths that pass are a suffix
    of ``sigmas``: found by bisection, at ``O(log len(sigmas))`` evaluations of
    ``O(min(n, SHARE_ROWS)^2)``; none when no row repeats within its class.  Returns
    ``(0, share)`` when every width passes and ``(len(sigmas), share)`` when none does.
    """
    sig = np.asarray(sigmas, dtype=float)
    if sig.ndim != 1 or sig.size == 0 or np.any(np.diff(sig) <= 0):
        raise ValueError("sigmas must be a non-empty increasing 1-D array")
    rows = _share_rows(X, y, w, SHARE_ROWS, random_state)  # the same rows at every width
    if rows[-1] == 0:
        return 0, 0.0

    def share(i: int) -> float:
        return float(_shares(*rows, sig[i : i + 1])[0])

    lo, hi = 0, sig.size  # the answer lies in [lo, hi]
    shares: dict[int, float] = {}
    while lo < hi:
        mid = (lo + hi) // 2
        shares[mid] = share(mid)
        if shares[mid] < max_share:
            hi = mid
        else:
            lo = mid + 1
    at = min(lo, sig.size - 1)  # the first width that passes, or the widest
    return lo, shares[at] if at in shares else share(at)
