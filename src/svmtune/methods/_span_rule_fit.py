"""One span-rule candidate: its width rule, class weights, L1-SVM fits and LOO estimates.

Used by :class:`svmtune.methods.span_rule.SpanRule` (run in joblib workers): for one
candidate ``(sigma, C, weights)`` one libsvm fit per one-vs-rest task, then the span-rule
estimate (Weighted span eq. (38); Vapnik & Chapelle's span rule), and for binary problems the
span bound and the xi-alpha estimate.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from svmtune._option_values import check_positive
from svmtune._warnings import user_stacklevel
from svmtune.kernels import sigma_from_gamma
from svmtune.loo._spans import SpanCache, n_empty_spans, span_rule_spans
from svmtune.loo.span_bounds import (
    enclosing_diameter,
    estimate_span_bound,
    estimate_xi_alpha,
    xi_alpha_radius2,
)
from svmtune.loo.span_rule import estimate_span_rule, span_rule_loo_decision
from svmtune.loo.weights import sigmoid_sample_weights
from svmtune.svm import fit_l1_svm

__all__ = ["candidate_weights", "class_weight_params", "evaluate_candidate", "unit_range_sigma"]


def candidate_weights(spec: dict[str, Any], ctx: dict[str, Any]) -> np.ndarray:
    """Per-sample multipliers ``w_i`` (``C_i = C w_i``) of one candidate."""
    w = ctx["w_user"]
    if spec["kind"] == "class":
        return w * np.where(ctx["y"] == 1, spec["ratio"], 1.0)
    if spec["kind"] == "scores":
        q = ctx["scores"]
        return w * sigmoid_sample_weights(
            q, spec["A"], spec["B"], spec["C"], floor=ctx["floor"], weight_fn=ctx["weight_fn"]
        )
    return w


def evaluate_candidate(
    K: np.ndarray,
    spec: dict[str, Any],
    ctx: dict[str, Any],
    *,
    D: float | None,
    r2_delta: float,
    spans: SpanCache | None = None,
) -> dict[str, Any]:
    """One libsvm fit per one-vs-rest task, then span-rule (and bounds) for the candidate.

    ``spans`` carries the spans already computed on ``K`` by other tasks and candidates.
    """
    tasks, y = ctx["tasks"], ctx["y"]
    w = candidate_weights(spec, ctx)
    # samples of weight 0 are absent rows: the fits leave them out, the error rates and the
    # kernel quantities D and R_Delta^2 of the training set skip them
    keep = w > 0
    if not np.array_equal(keep, ctx["w_user"] > 0):
        # more zeros than the user's (a weight_fn returning 0): D and R_Delta^2 computed per
        # candidate on its own training set by the estimates
        D = None if D is None else enclosing_diameter(K[np.ix_(keep, keep)])
        r2_delta = xi_alpha_radius2(K[np.ix_(keep, keep)])
    t0 = time.perf_counter()
    sols = [fit_l1_svm(t, spec["C"], K=K, sample_weight=w, tol=ctx["tol"]) for t in tasks]
    t1 = time.perf_counter()
    rec: dict[str, Any] = {"n_sv": 0, "n_inbound": 0, "n_bounded": 0, "n_empty": 0}
    F = []
    for sol in sols:
        S2 = span_rule_spans(sol, K, cache=spans)
        F.append(span_rule_loo_decision(sol, K, spans=S2))
        rec["n_sv"] += int(sol.support.sum())
        rec["n_inbound"] += int(sol.in_bound.sum())
        rec["n_bounded"] += int(sol.bounded.sum())
        rec["n_empty"] += n_empty_spans(sol)
    if len(sols) == 1:
        rec["span_rule"] = estimate_span_rule(sols[0], K, spans=S2)
        rec["xi_alpha"] = estimate_xi_alpha(sols[0], K, r2_delta=r2_delta)
    else:
        wrong = np.argmax(np.column_stack(F), axis=1) != y
        rec["span_rule"] = float(np.mean(wrong if keep.all() else wrong[keep]))
    t2 = time.perf_counter()
    rec["time_fit"] = t1 - t0
    rec["time_span"] = t2 - t1
    if D is not None:
        rec["span_bound"] = estimate_span_bound(sols[0], K, D=D)
        rec["time_bound"] = time.perf_counter() - t2
    return rec


def unit_range_sigma(X: np.ndarray, unit_gamma: float | None = None) -> float:
    """RBF width on ``X`` matching the heuristic "gamma = 1/d on features scaled to [0, 1]".

    Weighted span Section 6.2 scales every feature linearly to ``[0, 1]``,
    ``u_j = (x_j - min_j) / r_j`` with ``r_j`` the feature's range, and uses
    ``k(u, u') = exp(-gamma_u ||u - u'||^2)`` with ``gamma_u = 1/d``.  A per-feature rescale
    cannot be written as an isotropic RBF kernel on ``X`` (the features :class:`SVMTuner`
    standardises and refits the final SVM on), so the selector honours the heuristic with
    the isotropic kernel on ``X`` whose mean kernel exponent over all pairs equals the
    heuristic's:

        gamma_x sum_j Var(x_j) = gamma_u sum_j Var(x_j) / r_j^2,

    (the mean of ``||x_i - x_k||^2`` over all pairs is ``2 sum_j Var(x_j)``).  When all
    ranges are equal -- in particular for data already scaled to ``[0, 1]`` -- this is
    exactly the paper's kernel.  Constant features are ignored (they add nothing to either
    distance).

    Parameters
    ----------
    X : ndarray (n, d)
    unit_gamma : float, optional
        ``gamma_u`` on the ``[0, 1]``-scaled features; default ``1/d``.

    Returns
    -------
    float
        ``sigma`` with ``gamma_x = 1 / (2 sigma^2)``.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError("unit_range_sigma needs a 2-D array with at least two rows")
    d = X.shape[1]
    g = 1.0 / d if unit_gamma is None else check_positive("unit_gamma", unit_gamma)
    r = X.max(axis=0) - X.min(axis=0)
    var = X.var(axis=0)
    ok = (r > 0) & (var > 0)
    if not ok.any():
        warnings.warn(
            "every feature is constant: the kernel matrix is all ones whatever its width; "
            "using gamma = unit_gamma",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
        return float(sigma_from_gamma(g))
    gamma_x = g * float(np.sum(var[ok] / r[ok] ** 2)) / float(np.sum(var[ok]))
    return float(sigma_from_gamma(gamma_x))


def class_weight_params(C_pos: float, C_neg: float) -> tuple[float, dict[int, float]]:
    """``C`` and a ``class_weight`` dict on the encoded labels giving ``C+`` / ``C-``.

    The weighted SVM of Weighted span Experiment #1 has ``C_i = C+`` for ``y_i = +1``
    (encoded label 1) and ``C_i = C-`` for ``y_i = -1`` (label 0).  libsvm's per-sample
    bound is ``C * class_weight[label]``; this returns ``C = C-`` and
    ``class_weight = {0: 1.0, 1: C+ / C-}``.
    """
    if not (np.isfinite(C_pos) and C_pos > 0 and np.isfinite(C_neg) and C_neg > 0):
        raise ValueError(f"C+ and C- must be positive and finite, got {C_pos}, {C_neg}")
    return float(C_neg), {0: 1.0, 1: float(C_pos) / float(C_neg)}
