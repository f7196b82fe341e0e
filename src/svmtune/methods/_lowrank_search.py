"""Landmark search shared by the low-rank selectors (issue #10).

The RBSVM, smoothed-span and radius-margin searches on a Nystroem kernel
(:class:`svmtune.methods.rbsvm_lowrank.RBSVMLowRank`,
:class:`svmtune.methods.span_lowrank.SpanSVMLowRank`,
:class:`svmtune.methods.radius_margin_lowrank.RMSVMLowRank`) differ only in the criterion; the
option checks, the start rule and the landmark/refresh loop are these functions:

* rank rule: pivoted Cholesky of the RBF kernel at the start width until the trace residual is
  at most ``rank_tol * n`` or ``rank`` landmarks
  (:func:`svmtune.lowrank.pivoted_cholesky_landmarks`);
* if the learned width ends more than a factor 2 from the width the landmarks were chosen at,
  the landmarks are re-chosen at the learned width, at least as many as before, and the
  search continues from there (``refresh`` times at most);
* the median-heuristic start uses a random subsample of ``start_sample`` points
  (``random_state``), since the full distance matrix is ``n x n``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils.validation import check_random_state

from svmtune.kernels import squared_distances
from svmtune.lowrank import pivoted_cholesky_landmarks
from svmtune.search.gradient import GradientSearchResult, initial_sigma, minimize_log_params

__all__ = ["check_lowrank_options", "landmark_search", "lowrank_start", "selector_landmark_search"]

_LOG2 = float(np.log(2.0))


def check_lowrank_options(
    *, rank, rank_tol, jitter, refresh, start_sample, final_model
) -> dict[str, Any]:
    """Validate the options of the low-rank selectors; returns them normalised.

    Raises ``ValueError`` naming the option (the messages of
    :class:`svmtune.methods.rbsvm_lowrank.RBSVMLowRank`).
    """

    def is_int(v) -> bool:
        try:
            return not isinstance(v, bool) and int(v) == v
        except (TypeError, ValueError):
            return False

    if not is_int(rank) or rank < 2:
        raise ValueError(f"rank must be an integer >= 2 (number of landmarks), got {rank!r}")
    try:
        ok = 0.0 < float(rank_tol) < 1.0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"rank_tol must lie in (0, 1), e.g. 0.01; got {rank_tol!r}")
    try:
        ok = bool(np.isfinite(float(jitter)) and float(jitter) >= 0)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"jitter must be a non-negative number, got {jitter!r}")
    if not is_int(refresh) or refresh < 0:
        raise ValueError(f"refresh must be a non-negative integer, got {refresh!r}")
    if not is_int(start_sample) or start_sample < 2:
        raise ValueError(f"start_sample must be an integer >= 2, got {start_sample!r}")
    if final_model not in ("l1", "l2"):
        raise ValueError(f"final_model must be 'l1' or 'l2', got {final_model!r}")
    return {
        "rank": int(rank),
        "rank_tol": float(rank_tol),
        "jitter": float(jitter),
        "refresh": int(refresh),
        "start_sample": int(start_sample),
        "final_model": final_model,
    }


def lowrank_start(X: np.ndarray, start, C0: float, start_sample: int, random_state) -> np.ndarray:
    """Starting ``theta = (log sigma0, log C0)``; the median rule on a random subsample.

    ``start`` is a rule of :func:`svmtune.search.gradient.initial_sigma` or a ``(sigma, C)``
    pair; the median heuristic uses at most ``start_sample`` points drawn with
    ``random_state`` (the full distance matrix is ``n x n``).
    """
    if isinstance(start, tuple):
        return np.log(start)
    rng = check_random_state(random_state)
    n = X.shape[0]
    sub = X if n <= start_sample else X[rng.choice(n, start_sample, replace=False)]
    D2 = squared_distances(sub) if start == "median" else None
    sigma0 = initial_sigma(D2, rule=start, n_features=X.shape[1], random_state=rng)
    return np.log([sigma0, C0])


def landmark_search(
    X: np.ndarray,
    theta0: np.ndarray,
    make_objective: Callable[[np.ndarray, np.ndarray, int], Callable],
    *,
    rank: int,
    rank_tol: float,
    refresh: int,
    random_state,
    **search_options,
) -> tuple[GradientSearchResult, dict[str, Any]]:
    """Minimise a criterion of the Nystroem kernel, re-choosing the landmarks if sigma moves.

    Landmarks by pivoted Cholesky (:func:`svmtune.lowrank.pivoted_cholesky_landmarks`) at the
    start width; :func:`svmtune.search.gradient.minimize_log_params` from ``theta0``; if the
    learned width is more than a factor 2 from the landmarks' width, the landmarks are
    re-chosen at the learned width (at least as many) and the search continues from there
    (at most ``refresh`` times; extra random ``restarts`` only in the first stage).

    Parameters
    ----------
    X : ndarray (n, d)
    theta0 : (log sigma0, log C0)
    make_objective : callable
        ``make_objective(D2_nm, D2_mm, m)`` returns the objective
        ``fun(theta, state) -> (value, grad, new_state)`` of ``minimize_log_params`` on those
        landmarks.
    rank, rank_tol, refresh
        The rank rule and the number of landmark refreshes.
    random_state
        A ``RandomState`` (shared with the start rule) or a seed.
    **search_options
        ``bounds``, ``tol``, ``max_iter``, ``max_eval``, ``restarts``, ``jump_restarts`` of
        ``minimize_log_params``.

    Returns
    -------
    (result, extra)
        The last stage's :class:`svmtune.search.gradient.GradientSearchResult` (its
        ``history``, ``n_evals``, ``n_fits`` and ``n_iter`` summed over the stages, each
        history record with its ``stage``) and ``{"rank", "rank_residual", "landmark_sigma",
        "n_refresh"}`` of the final landmarks.
    """
    rng = check_random_state(random_state)
    restarts = search_options.pop("restarts", 0)
    theta = np.asarray(theta0, dtype=float)
    history: list[dict] = []
    n_fits = n_iter = n_evals = 0
    n_refresh = 0
    ref_sigma = float(np.exp(theta[0]))
    min_rank = 1
    while True:
        idx, resid = pivoted_cholesky_landmarks(
            X, ref_sigma, tol=rank_tol, max_rank=rank, min_rank=min_rank
        )
        D2_nm = squared_distances(X, X[idx])
        D2_mm = D2_nm[idx]
        res = minimize_log_params(
            make_objective(D2_nm, D2_mm, int(idx.size)),
            theta,
            names=("sigma", "C"),
            restarts=restarts if n_refresh == 0 else 0,
            random_state=rng,
            **search_options,
        )
        for rec in res.history:
            rec["stage"] = n_refresh
        history.extend(res.history)
        n_fits += res.n_fits
        n_iter += res.n_iter
        n_evals += res.n_evals
        theta = res.theta
        sigma = float(np.exp(theta[0]))
        if n_refresh >= refresh or abs(np.log(sigma / ref_sigma)) <= _LOG2:
            break
        n_refresh += 1
        ref_sigma = sigma
        # a refresh keeps at least the previous rank: at a wider width the trace rule alone
        # can stop at a handful of landmarks, too coarse for the large-C L2-SVM found there
        min_rank = int(idx.size)
    res.history, res.n_fits, res.n_iter, res.n_evals = history, n_fits, n_iter, n_evals
    extra = {
        "rank": int(idx.size),
        "rank_residual": float(resid),
        "landmark_sigma": ref_sigma,
        "n_refresh": n_refresh,
    }
    return res, extra


def selector_landmark_search(
    selector, X: np.ndarray, theta0: np.ndarray, make_objective: Callable, random_state
) -> tuple[GradientSearchResult, dict[str, Any]]:
    """:func:`landmark_search` with the rank and search options stored on a low-rank selector
    (``rank``, ``rank_tol``, ``refresh``, ``log2_sigma``, ``log2_C``, ``tol``, ``max_iter``,
    ``max_eval``, ``restarts``, ``jump_restarts``)."""
    return landmark_search(
        X,
        theta0,
        make_objective,
        rank=selector.rank,
        rank_tol=selector.rank_tol,
        refresh=selector.refresh,
        random_state=random_state,
        bounds=[selector.log2_sigma, selector.log2_C],
        tol=selector.tol,
        max_iter=selector.max_iter,
        max_eval=selector.max_eval,
        restarts=selector.restarts,
        jump_restarts=selector.jump_restarts,
    )
