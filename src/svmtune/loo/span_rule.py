"""The span rule of a weighted L1-SVM (Weighted span Corollary 1, Theorem 2).

Sarafis, Diou & Delopoulos, "Span error bound for weighted SVM with applications in
hyperparameter selection" (JMLR), cited as *Weighted span*.  The spans of the support
vectors (eq. (24)-(32), Theorem 2, Lemma 1) are computed in :mod:`svmtune.loo._spans`; the
span bound, the xi-alpha bound and their estimates in :mod:`svmtune.loo.span_bounds`.  This
module turns the spans into the span rule:

* :func:`span_rule_loo_decision` -- the leave-one-out decision values the span rule predicts;
* :func:`estimate_span_rule` -- the span-rule ``t_l`` (Corollary 1, eq. (37)), which is the
  leave-one-out error itself when the support-vector sets are stable (Theorem 2, eq. (35)).
"""

from __future__ import annotations

import numpy as np

from svmtune._dual_solution import DualSolution
from svmtune.loo._spans import (
    _check,
    _check_spans,
    _n_trained,
    _spans,
    span_rule_spans,
)

__all__ = [
    "span_rule_loo_decision",
    "estimate_span_rule",
]


# ---------------------------------------------------------------------------------------------
# Span-rule (Theorem 2, Corollary 1)
# ---------------------------------------------------------------------------------------------
def span_rule_loo_decision(
    sol: DualSolution, K: np.ndarray, *, spans: np.ndarray | None = None
) -> np.ndarray:
    """Leave-one-out decision values ``f^p(x_p)`` predicted by the span (Theorem 2, eq. (35)).

    ``y_p (f^0(x_p) - f^p(x_p)) = alpha_p S_p^2``, so ``f^p(x_p) = f^0(x_p) -
    y_p alpha_p S_p^2`` for every support vector; a non-support vector keeps ``f^0(x_p)``
    (removing it leaves the solution unchanged).  Exact when the in-bound and bounded sets
    do not change when ``p`` is left out.  Support vectors with an undefined span get
    ``-y_p * inf`` (counted as leave-one-out errors).

    Parameters
    ----------
    spans : ndarray (n,), optional
        Squared spans from :func:`span_rule_spans` (computed when omitted).
    """
    K = _check(sol, K)
    S2 = None if spans is None else _check_spans(spans, sol.y.shape[0])
    return _span_rule_loo_decision(sol, K, S2)


def _span_rule_loo_decision(
    sol: DualSolution, K: np.ndarray, spans: np.ndarray | None = None
) -> np.ndarray:
    """:func:`span_rule_loo_decision` on checked inputs (Weighted span Theorem 2, eq. (35)):
    a hinge-loss solution ``sol`` of the finite ``(n, n)`` float ``K`` and, if given, its
    checked squared spans (else computed, :func:`svmtune.loo._spans.span_rule_spans` without
    its checks).  The referee of ``auto`` calls it on the kernel matrix it built, so that
    scoring a candidate repeats none of the ``O(n^2)`` checks (issue #55)."""
    S2 = _spans(sol, K) if spans is None else spans
    f = sol.decision_function(K)
    sv = sol.support
    out = f.copy()
    out[sv] = f[sv] - sol.y[sv] * sol.alpha[sv] * S2[sv]
    return out


def estimate_span_rule(
    sol: DualSolution, K: np.ndarray, *, spans: np.ndarray | None = None
) -> float:
    """Span-rule estimate of the leave-one-out error (Weighted span Corollary 1, eq. (37)).

    ``t_l = (1/l) sum_{p in SV} theta(alpha_p S_p^2 - y_p f^0(x_p))`` with ``theta(t) = 1``
    for ``t >= 0``, and ``S_p`` the spans without box constraints
    (:func:`span_rule_spans`).  Equal to the leave-one-out error when the support-vector
    sets are stable (Theorem 2).  Every training sample counts once, whatever its ``C_i``;
    ``l`` is the number of samples of positive ``C_i``: a sample of weight 0 was left out of
    the fit and is left out of the count as a removed row would be.
    """
    K = _check(sol, K)
    S2 = span_rule_spans(sol, K) if spans is None else _check_spans(spans, sol.y.shape[0])
    sv = sol.support
    f = sol.decision_function(K)
    with np.errstate(invalid="ignore"):
        t = sol.alpha[sv] * S2[sv] - sol.y[sv] * f[sv]
    return float(np.sum(t >= 0) / _n_trained(sol))
