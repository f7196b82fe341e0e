"""The start and the options of the gradient searches over ``(log sigma, log C)`` (RBSVM §IV-A).

:func:`initial_sigma` gives the starting RBF width instead of the paper's ``sigma = 1``
(Algorithm 1, step 1), which ignores the scale of the data:

* ``"median"`` (default): the median heuristic, ``sigma0 = sqrt(median ||x_i - x_j||^2)`` over
  the pairs ``i < j`` at positive distance (duplicates excluded).  For standardised data with
  ``d`` roughly independent features this is close to ``sqrt(2 d)``.
* ``"sqrt_d"``: ``sigma0 = sqrt(d)``, the scale of distances between standardised points
  (``E ||x - x'||^2 = 2 d`` for independent standardised features, so ``sigma0^2 = d`` puts
  the typical kernel value near ``exp(-1)``).

and ``log C = 0`` (``C = 1``: Algorithm 1's "C = 0" read as ``log C``, since ``C`` must be
positive).

:data:`SEARCH_OPTION_RULES` are the rules of the options the gradient selectors (RBSVM, SpanSVM,
RMSVM) share, one per option; :func:`exact_search_start` gives the squared distances and the
start of an exact (``n x n``) search.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.utils.validation import check_random_state

from svmtune._option_values import (
    check_float_values,
    check_int_option,
    check_log2_range,
    check_positive,
)
from svmtune._validation import check_dense_memory, validate_sample_weight
from svmtune._warnings import user_stacklevel
from svmtune.kernels import _squared_distances

__all__ = [
    "EXACT_DENSE_MATRICES",
    "START_RULES",
    "SEARCH_OPTION_RULES",
    "exact_search_start",
    "initial_sigma",
    "initial_theta",
]

#: rules accepted by :func:`initial_sigma`
START_RULES = ("median", "sqrt_d")


def _check_int(name: str, value, minimum: int) -> int:
    return check_int_option(name, value, minimum=minimum)


def _check_start(start):
    msg = (
        f"start must be one of {START_RULES}, a pair (sigma, C) or a dict with keys "
        f"sigma and C; got {start!r}"
    )
    if isinstance(start, str):
        if start not in START_RULES:
            raise ValueError(msg)
        return start
    try:
        s0, c0 = (start["sigma"], start["C"]) if isinstance(start, dict) else start
        if np.ndim(s0) or np.ndim(c0):
            raise TypeError
    except (TypeError, ValueError, KeyError):
        raise ValueError(msg) from None
    s0, c0 = check_float_values("start", [s0, c0], what="a pair (sigma, C) of positive numbers")
    if not (np.isfinite(s0) and s0 > 0 and np.isfinite(c0) and c0 > 0):
        raise ValueError(f"start sigma and C must be positive and finite, got {start!r}")
    return (s0, c0)


#: the rule of each option shared by the gradient selectors: ``rule(name, value)`` returns the
#: value normalised or raises a ``ValueError`` naming the option (the declared constraints of
#: the selectors, :data:`svmtune.methods._constraints.SEARCH_CONSTRAINTS`, are these rules)
SEARCH_OPTION_RULES = {
    "log2_sigma": check_log2_range,
    "log2_C": check_log2_range,
    "start": lambda name, value: _check_start(value),
    "C0": check_positive,
    "restarts": lambda name, value: _check_int(name, value, 0),
    "jump_restarts": lambda name, value: _check_int(name, value, 0),
    "tol": check_positive,
    "max_iter": lambda name, value: _check_int(name, value, 1),
    "max_eval": lambda name, value: None if value is None else _check_int(name, value, 1),
}


def initial_sigma(
    D2: np.ndarray | None = None,
    *,
    rule: str = "median",
    n_features: int | None = None,
    max_pairs: int = 2_000_000,
    random_state: int | np.random.RandomState | None = 0,
) -> float:
    """Starting RBF width from the data (replaces RBSVM Algorithm 1's ``sigma = 1``).

    Parameters
    ----------
    D2 : ndarray (n, n), optional
        Pairwise squared distances (needed for ``rule="median"``).
    rule : {"median", "sqrt_d"}
        ``"median"``: ``sqrt`` of the median positive squared distance over pairs ``i < j``
        (the median heuristic).  ``"sqrt_d"``: ``sqrt(n_features)``.
    n_features : int, optional
        Number of features (needed for ``rule="sqrt_d"``).
    max_pairs : int
        Above this many pairs the median is taken over ``max_pairs`` random pairs (drawn with
        replacement; pairs ``i = j`` dropped).
    random_state : int, RandomState or None
        Used only for that subset.

    Returns
    -------
    float
        ``sigma0 > 0``.  If every pair of points coincides, 1.0 with a warning.

    Raises
    ------
    ValueError
        If ``D2`` is not a square matrix of at least two points, or the distances used hold
        NaN, infinity or negative values; if ``n_features`` or ``max_pairs`` is not a
        positive integer.
    """
    if rule not in START_RULES:
        raise ValueError(f"start rule must be one of {START_RULES}, got {rule!r}")
    if rule == "sqrt_d":
        if n_features is None:
            raise ValueError("rule='sqrt_d' needs n_features >= 1")
        return float(np.sqrt(_check_int("n_features", n_features, 1)))
    if D2 is None:
        raise ValueError("rule='median' needs the squared-distance matrix D2")
    max_pairs = _check_int("max_pairs", max_pairs, 1)
    D2 = np.asarray(D2, dtype=float)
    if D2.ndim != 2 or D2.shape[0] != D2.shape[1] or D2.shape[0] < 2:
        raise ValueError(
            f"D2 must be the square matrix of pairwise squared distances of at least two "
            f"points, got shape {D2.shape}"
        )
    n = D2.shape[0]
    if n * (n - 1) // 2 > max_pairs:
        rng = check_random_state(random_state)
        iu, ju = rng.randint(0, n, max_pairs), rng.randint(0, n, max_pairs)
        keep = iu != ju
        iu, ju = iu[keep], ju[keep]
    else:
        iu, ju = np.triu_indices(n, k=1)
    vals = D2[iu, ju]
    if not np.all(np.isfinite(vals)) or np.any(vals < 0):
        raise ValueError(
            "D2 holds NaN, infinity or negative values; squared distances are finite and >= 0"
        )
    vals = vals[vals > 0]
    if vals.size == 0:
        warnings.warn(
            "all training points coincide; starting from sigma = 1",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
        return 1.0
    return float(np.sqrt(np.median(vals)))


def initial_theta(
    D2: np.ndarray | None,
    start,
    C0: float,
    *,
    n_features: int,
    random_state=None,
    sample_weight: np.ndarray | None = None,
) -> np.ndarray:
    """Starting point ``theta = (log sigma0, log C0)`` of a gradient search over (sigma, C).

    ``start`` is a ``(sigma, C)`` pair, taken as it is, or a rule of :func:`initial_sigma`
    (then ``C0`` is the starting C).  With ``sample_weight`` the rule sees only the points
    of positive weight (a point of weight 0 is one left out).

    Raises
    ------
    ValueError
        If ``start`` is neither a rule nor a positive finite ``(sigma, C)`` pair, ``C0`` is
        not positive and finite, or ``sample_weight`` does not give one finite non-negative
        weight per row of ``D2``.
    """
    start = _check_start(start)
    if isinstance(start, tuple):
        return np.log(np.asarray(start, dtype=float))
    check_positive("C0", C0)
    if D2 is not None and sample_weight is not None:
        pos = validate_sample_weight(sample_weight, np.shape(D2)[0]) > 0
        D2 = D2[np.ix_(pos, pos)]
    sigma0 = initial_sigma(D2, rule=start, n_features=n_features, random_state=random_state)
    return np.log([sigma0, C0])


#: lower estimate of the peak memory of an exact gradient search (RBSVM, smoothed span,
#: radius-margin) in dense n x n float64 matrices, below the peaks measured for the three
#: (``docs/notes/cost_measurements.md``)
EXACT_DENSE_MATRICES = 6


def exact_search_start(
    X: np.ndarray,
    start,
    C0: float,
    *,
    method: str,
    random_state=None,
    sample_weight=None,
    sqdist: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(D2, theta0)`` of an exact (n x n) gradient search named ``method``: the squared
    distances (``sqdist`` where the caller has them:
    :attr:`svmtune.methods.base.TrainingData.sqdist`) and the starting point of
    :func:`initial_theta`.  ``X`` comes checked (a selector's ``run``: the tuner's door or
    ``Selector.select``), a finite float array.

    Raises ``MemoryError`` first when the search's dense matrices cannot fit in the memory
    available (:func:`svmtune._validation.check_dense_memory`), naming the low-rank form of
    the method as the alternative.
    """
    if sqdist is None:  # (the caller's sqdist: its memory is spent already)
        check_dense_memory(
            X.shape[0],
            matrices=EXACT_DENSE_MATRICES,
            method=method,
            alternative=f"use method='{method}_lowrank' (O(n m) memory) or fewer samples",
        )
        sqdist = _squared_distances(X)  # the rows come checked (the search's run)
    theta0 = initial_theta(
        sqdist,
        start,
        C0,
        n_features=X.shape[1],
        random_state=random_state,
        sample_weight=sample_weight,
    )
    return sqdist, theta0
