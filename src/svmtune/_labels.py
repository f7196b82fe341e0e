"""Label encodings of the binary solvers: {-1, +1} labels (:func:`check_pm1`, :func:`pm1`),
the one-vs-rest tasks of encoded labels ``0..k-1`` (:func:`ovr_tasks`) and codes that do not
depend on the names of the classes (:func:`first_seen_codes`)."""

from __future__ import annotations

import numpy as np

__all__ = [
    "check_pm1",
    "pm1",
    "ovr_tasks",
    "first_seen_codes",
]


def check_pm1(y, n: int | None = None, *, name: str = "y") -> np.ndarray:
    """``y`` as floats after checking it holds labels in {-1, +1} (``n`` of them if given)."""
    y = np.asarray(y)
    if y.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold the labels -1 and +1, got {y.dtype} values")
    y = np.asarray(y, dtype=float)
    if n is not None and y.shape != (n,):
        raise ValueError(f"{name} has shape {y.shape}; expected ({n},), one label per point")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError(
            f"{name} must hold the labels -1 and +1 (got values {np.unique(y)[:6]}); map 0/1 "
            "labels with 2 * y - 1"
        )
    return y


def pm1(y_binary: np.ndarray) -> np.ndarray:
    """Encoded binary labels {0, 1} as {-1, +1} floats."""
    return np.where(np.asarray(y_binary) == 1, 1.0, -1.0)


def ovr_tasks(y: np.ndarray) -> list[np.ndarray]:
    """One-vs-rest decomposition of encoded labels: a list of {-1, +1} label vectors.

    Binary ``y`` (classes 0, 1) gives a single task with class 1 as +1.
    """
    k = int(np.max(y)) + 1
    if k <= 2:
        return [pm1(y)]
    return [np.where(y == c, 1.0, -1.0) for c in range(k)]


def first_seen_codes(y) -> np.ndarray:
    """Labels encoded ``0..k-1`` in the order the classes first occur in ``y``.

    scikit-learn's ``SVC`` encodes the classes in sorted order and libsvm places the first
    class's rows first and takes it as its positive class; its working-set choices are not
    symmetric in the labels, so its iterations and support vectors (counted by ``auto``'s
    cost model) differ between ``y`` and a renaming of it.  These codes depend only on which
    rows share a class and on the rows' order: any renaming of the classes gives the same
    codes, and so the same libsvm fit (issue 63).
    """
    _, first, inverse = np.unique(np.asarray(y), return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=int)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.ravel()]
