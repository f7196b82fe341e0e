"""Helpers for reproducing the experiments of Weighted span (Sarafis, Diou & Delopoulos, JMLR).

:func:`holdout_error` (the "actual test error" of Table 4 and Fig. 2-4),
:func:`prediction_rmse` (Table 4), :func:`worst_case_at_minimum` (Tables 2-3),
:func:`best_slices` (Fig. 2-4), :func:`lemma1_statistics` (Table 5) and :func:`make_ringnorm`
(the synthetic data of Section 6.7, Fig. 5-6).
"""

from __future__ import annotations

import numpy as np

from svmtune._dual_solution import DualSolution
from svmtune._labels import check_pm1

__all__ = [
    "best_slices",
    "holdout_error",
    "lemma1_statistics",
    "make_ringnorm",
    "prediction_rmse",
    "worst_case_at_minimum",
]


def holdout_error(sol: DualSolution, K_test_train: np.ndarray, y_test: np.ndarray) -> float:
    """Error rate of the trained model on test data (labels in {-1, +1}).

    The "actual test error" the paper's predictions are compared with (Table 4, Fig. 2-4);
    a zero decision value counts as the negative class, as in libsvm.
    """
    if not isinstance(sol, DualSolution):
        raise TypeError(f"expected a DualSolution, got {type(sol)}")
    y = check_pm1(np.ravel(y_test), name="y_test")
    Kt = np.asarray(K_test_train, dtype=float)
    n = sol.y.shape[0]
    if Kt.ndim != 2 or Kt.shape[1] != n:
        raise ValueError(
            f"K_test_train has shape {Kt.shape}; expected (n_test, {n}), one column per "
            "training sample"
        )
    if not np.all(np.isfinite(Kt)):
        raise ValueError("K_test_train contains NaN or infinite entries")
    f = sol.decision_function(K_test_train)
    if f.shape != y.shape:
        raise ValueError(f"K_test_train has {f.shape[0]} rows but y_test has {y.shape[0]} labels")
    return float(np.mean(np.where(f > 0, 1.0, -1.0) != y))


def prediction_rmse(predicted, actual) -> float:
    """Root-mean-square difference between predicted and actual test errors (Table 4)."""
    p = np.asarray(predicted, dtype=float).ravel()
    a = np.asarray(actual, dtype=float).ravel()
    if p.shape != a.shape or p.size == 0:
        raise ValueError("predicted and actual must be non-empty and of equal length")
    return float(np.sqrt(np.mean((p - a) ** 2)))


def worst_case_at_minimum(predicted, actual) -> float:
    """Test error of the model a prediction rule selects, ties resolved pessimistically.

    Weighted span Tables 2-3: "if the minimum of a prediction rule is encountered more than
    once, the worst case outcome is reported" -- the largest ``actual`` among the models
    where ``predicted`` is minimal.
    """
    p = np.asarray(predicted, dtype=float).ravel()
    a = np.asarray(actual, dtype=float).ravel()
    if p.shape != a.shape or p.size == 0:
        raise ValueError("predicted and actual must be non-empty and of equal length")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(a))):
        raise ValueError("predicted and actual contain NaN or infinity; drop those models")
    return float(a[p == p.min()].max())


def best_slices(actual: np.ndarray, *predicted: np.ndarray) -> list[tuple[np.ndarray, ...]]:
    """1-D curves through the grid model with the smallest actual test error (Fig. 2-4).

    Weighted span Fig. 2-4 plot, for each training parameter, the test error and the
    predictions along that parameter with the other parameters fixed at the model of minimum
    actual test error.

    Parameters
    ----------
    actual : ndarray
        Actual test errors on the parameter grid (one axis per parameter).
    *predicted : ndarray
        Predictions on the same grid (span-rule, CV, xi-alpha, ...).

    Returns
    -------
    list of tuples
        For each axis ``a``: ``(actual_slice, predicted_1_slice, ...)`` along ``a``.
    """
    A = np.asarray(actual, dtype=float)
    P = [np.asarray(p, dtype=float) for p in predicted]
    if any(p.shape != A.shape for p in P):
        raise ValueError("every prediction grid must have the shape of the actual-error grid")
    best = np.unravel_index(int(np.argmin(A)), A.shape)
    out = []
    for axis in range(A.ndim):
        sl = tuple(slice(None) if k == axis else best[k] for k in range(A.ndim))
        out.append((A[sl],) + tuple(p[sl] for p in P))
    return out


def lemma1_statistics(n_empty, n_inbound, n_sv) -> dict[str, float]:
    """Table 5's columns over a set of models: mean and std of ``k``, ``n*`` and ``n``.

    Parameters are per-model counts (e.g. the ``n_empty``, ``n_inbound`` and ``n_sv``
    entries of a :class:`svmtune.methods.span_rule.SpanRule` selection's history).
    """
    out: dict[str, float] = {}
    for name, v in (("empty", n_empty), ("inbound", n_inbound), ("sv", n_sv)):
        a = np.asarray(v, dtype=float).ravel()
        if a.size == 0:
            raise ValueError("lemma1_statistics needs the counts of at least one model")
        out[f"{name}_mean"] = float(a.mean())
        out[f"{name}_std"] = float(a.std())
    return out


def make_ringnorm(
    n: int, d: int, *, p_positive: float = 0.3, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic data of Weighted span Section 6.7 (their variant of Breiman's ringnorm).

    Class +1 (prior ``p_positive`` = 0.3) ~ ``N(1_d, I)``; class -1 (prior 0.7) ~
    ``N(0, 4 I)``.  The class of each sample is drawn from the priors.

    Returns
    -------
    X : ndarray (n, d)
    y : ndarray (n,) of {-1, +1}
    """
    from sklearn.utils import check_random_state

    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n}")
    if int(d) != d or d < 1:
        raise ValueError(f"d must be a positive integer, got {d}")
    if not 0.0 < p_positive < 1.0:
        raise ValueError(f"p_positive must be in (0, 1), got {p_positive}")
    rng = check_random_state(random_state)
    y = np.where(rng.random_sample(int(n)) < p_positive, 1.0, -1.0)
    Z = rng.standard_normal((int(n), int(d)))
    X = np.where(y[:, None] > 0, 1.0 + Z, 2.0 * Z)
    return X, y
