"""The error estimates of a trained weighted L1-SVM by name, K-fold cross-validation among them.

Weighted span (Sarafis, Diou & Delopoulos, JMLR) compares, on one trained model, the span
rule (:func:`svmtune.loo.span_rule.estimate_span_rule`, Corollary 1), the span bound
(:func:`svmtune.loo.span_bounds.estimate_span_bound`, Theorem 1), the xi-alpha bound
(:func:`svmtune.loo.span_bounds.estimate_xi_alpha`, eq. (21)) and K-fold cross-validation
(:func:`estimate_kfold_cv`, the paper's K = 5, which refits through :mod:`svmtune.search.cv`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from svmtune._dual_solution import DualSolution
from svmtune._option_values import check_positive
from svmtune.kernels import Kernel
from svmtune.loo._spans import _check
from svmtune.loo.span_bounds import estimate_span_bound, estimate_xi_alpha
from svmtune.loo.span_rule import estimate_span_rule
from svmtune.search.cv import cv_errors, make_folds

__all__ = ["ESTIMATES", "estimate_kfold_cv"]


def estimate_kfold_cv(
    sol: DualSolution,
    K: np.ndarray,
    *,
    X: np.ndarray,
    params: dict[str, Any],
    n_splits: int = 5,
    folds: list[tuple] | None = None,
    random_state=None,
    n_jobs: int | None = None,
    check_kernel: bool = True,
) -> float:
    """K-fold cross-validation error of the model's hyperparameters (the paper's K = 5).

    Unlike the other estimates it refits: each fold trains the weighted SVM with the same
    per-sample penalties ``C_i`` (``sol.upper``) on the other folds, through the shared CV
    path :func:`svmtune.search.cv.cv_errors` (stratified folds of
    :func:`svmtune.search.cv.make_folds`).  The features ``X`` and the kernel ``params``
    (``best_params_`` style: kernel, sigma/gamma, C) are therefore needed; ``K`` must be the
    kernel matrix of ``X`` under ``params`` (checked when ``check_kernel``).  Any
    ``class_weight`` in ``params`` is ignored: ``sol.upper / C`` already holds every
    per-sample multiplier.
    """
    K = _check(sol, K)
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] != sol.y.shape[0]:
        raise ValueError(f"X must have one row per training sample ({sol.y.shape[0]})")
    if "C" not in params:
        raise ValueError("params must contain the penalty 'C' the model was trained with")
    C = check_positive("params['C']", params["C"])
    cand = {k: v for k, v in params.items() if k != "class_weight"}
    if check_kernel:
        Kx = Kernel.from_params(cand)(X)
        if not np.allclose(Kx, K, rtol=1e-8, atol=1e-10):
            raise ValueError("K is not the kernel matrix of X under params; pass matching ones")
    y01 = (sol.y > 0).astype(int)
    w = sol.upper / C
    if folds is None and not (isinstance(n_splits, (int, np.integer)) and n_splits >= 2):
        raise ValueError(
            f"n_splits must be an integer >= 2 (K-fold needs two folds), got {n_splits!r}"
        )
    if folds is None:
        folds = make_folds(y01, n_splits, random_state, w)
    err = cv_errors(X, y01, [cand], folds=folds, sample_weight=w, n_jobs=n_jobs)
    return float(err[0])


#: Name -> estimate function; every one is ``f(sol, K, **options) -> float``.
ESTIMATES: dict[str, Callable[..., float]] = {
    "span_rule": estimate_span_rule,
    "span_bound": estimate_span_bound,
    "xi_alpha": estimate_xi_alpha,
    "kfold_cv": estimate_kfold_cv,
}
