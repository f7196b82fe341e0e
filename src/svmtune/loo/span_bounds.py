"""The span bound and the xi-alpha bound of a weighted L1-SVM's leave-one-out error.

Weighted span (Sarafis, Diou & Delopoulos, JMLR) compares estimates of the error rate of a
trained model, all ``estimate_*(sol, K, ...) -> float``:

* :func:`estimate_span_bound` -- Theorem 1's bound (may exceed 1), with the box-constrained
  spans of :func:`svmtune.loo._spans.box_constrained_spans` and the diameter ``D`` of Lemma 2;
* :func:`estimate_xi_alpha` -- the xi-alpha bound, eq. (21) (Joachims 2000; Yang et al. 2015).

The span rule itself is :func:`svmtune.loo.span_rule.estimate_span_rule`.
"""

from __future__ import annotations

import numpy as np

from svmtune._dual_solution import DualSolution
from svmtune.loo._spans import _check, _n_trained, _trained, box_constrained_spans
from svmtune.loo.sphere import min_enclosing_ball

__all__ = [
    "enclosing_diameter",
    "estimate_span_bound",
    "estimate_xi_alpha",
    "span_bound_value",
    "xi_alpha_radius2",
]


# ---------------------------------------------------------------------------------------------
# Span bound (Theorem 1)
# ---------------------------------------------------------------------------------------------
def span_bound_value(
    spans_inbound: np.ndarray,
    alpha_inbound: np.ndarray,
    C_inbound: np.ndarray,
    D: float,
    m: int,
    l: int,
) -> float:
    """Theorem 1's bound from its ingredients (Weighted span Theorem 1, eq. (66)-(67)).

    ``(S sum_{p: Lambda_p != empty} max(D, 1/sqrt(C_p)) alpha_p + k + m) / l`` with
    ``S = max S_p`` over the in-bound SVs with non-empty ``Lambda_p`` (eq. (33)) and ``k``
    the in-bound SVs with empty ``Lambda_p``.

    Parameters
    ----------
    spans_inbound : ndarray
        Squared box-constrained spans of the in-bound SVs, ``inf`` where ``Lambda_p`` is empty.
    alpha_inbound, C_inbound : ndarray
        Their ``alpha_p`` and ``C_p``.
    D : float
        Diameter of the smallest sphere enclosing the training set in feature space.
    m : int
        Number of bounded support vectors.
    l : int
        Training set size.

    Raises
    ------
    ValueError
        If the arrays differ in length, a span is NaN or negative, an ``alpha_p`` is not
        finite and ``>= 0``, a ``C_p`` is not finite and positive, ``D`` is not finite and
        ``>= 0``, ``m`` is not an integer ``>= 0`` or ``l`` not a positive integer.
    """
    S2 = np.asarray(spans_inbound, dtype=float)
    a = np.asarray(alpha_inbound, dtype=float)
    C = np.asarray(C_inbound, dtype=float)
    if S2.ndim != 1 or a.shape != S2.shape or C.shape != S2.shape:
        raise ValueError(
            "spans_inbound, alpha_inbound and C_inbound must be 1-D arrays of one length (one "
            f"entry per in-bound SV), got shapes {S2.shape}, {a.shape} and {C.shape}"
        )
    if not np.all(S2 >= 0):
        raise ValueError("spans_inbound must be >= 0 (inf for an empty Lambda_p), got NaN or < 0")
    if not np.all(np.isfinite(a) & (a >= 0)):
        raise ValueError("alpha_inbound must be finite and >= 0")
    if not np.all(np.isfinite(C) & (C > 0)):
        raise ValueError("C_inbound must be finite and > 0 (the penalties C_p of in-bound SVs)")
    if not (np.isfinite(D) and D >= 0):
        raise ValueError(f"D must be a non-negative finite diameter, got {D}")
    if not (int(m) == m and m >= 0):
        raise ValueError(f"m (bounded support vectors) must be an integer >= 0, got {m}")
    if not (int(l) == l and l >= 1):
        raise ValueError(f"l (training set size) must be a positive integer, got {l}")
    ok = np.isfinite(S2)
    k = int(np.sum(~ok))
    if ok.any():
        S = float(np.sqrt(S2[ok].max()))
        total = S * float(np.sum(np.maximum(D, 1.0 / np.sqrt(C[ok])) * a[ok]))
    else:
        total = 0.0
    return (total + k + int(m)) / int(l)


def enclosing_diameter(K: np.ndarray) -> float:
    """Diameter ``D = 2R`` of the smallest sphere enclosing the training set in feature space.

    ``R^2`` from :func:`svmtune.loo.sphere.min_enclosing_ball` (the ``D`` of Weighted span
    Lemma 2 and Theorem 1).
    """
    R2, _ = min_enclosing_ball(K)
    return 2.0 * float(np.sqrt(max(R2, 0.0)))


def estimate_span_bound(
    sol: DualSolution,
    K: np.ndarray,
    *,
    D: float | None = None,
    spans: np.ndarray | None = None,
) -> float:
    """Span bound of the leave-one-out error (Weighted span Theorem 1).

    The ``m`` bounded SVs and the ``k`` in-bound SVs with empty ``Lambda_p`` (Lemma 1) count
    as errors; each other in-bound SV contributes ``S max(D, 1/sqrt(C_p)) alpha_p``, with the
    box-constrained spans of :func:`box_constrained_spans`.  The value can exceed 1.  ``l``
    and the training set are the samples of positive ``C_i`` (a sample of weight 0 is a
    removed row).

    Parameters
    ----------
    D : float, optional
        Diameter of the smallest sphere enclosing the training set in feature space; by
        default ``2 R`` from :func:`svmtune.loo.sphere.min_enclosing_ball` on the samples of
        positive ``C_i``.
    spans : ndarray, optional
        Box-constrained squared spans of the in-bound SVs (in the order of
        ``np.flatnonzero(sol.in_bound)``).
    """
    K = _check(sol, K)
    I = np.flatnonzero(sol.in_bound)
    if spans is None:
        spans = box_constrained_spans(sol, K, I)
    spans = np.asarray(spans, dtype=float)
    if spans.shape != I.shape:
        raise ValueError(f"spans must hold one value per in-bound SV ({I.size}), got {spans.shape}")
    if D is None:
        keep = _trained(sol)
        D = enclosing_diameter(K if keep is None else K[np.ix_(keep, keep)])
    if not (np.isfinite(D) and D >= 0):
        raise ValueError(f"D must be a non-negative finite diameter, got {D}")
    return span_bound_value(
        spans, sol.alpha[I], sol.upper[I], float(D), int(sol.bounded.sum()), _n_trained(sol)
    )


# ---------------------------------------------------------------------------------------------
# xi-alpha bound (eq. (21))
# ---------------------------------------------------------------------------------------------
def xi_alpha_radius2(K: np.ndarray) -> float:
    """``R_Delta^2`` of the xi-alpha bound: the smallest ``R`` with ``c <= K_ij <= c + R^2``.

    Over the training kernel matrix, ``R_Delta^2 = max K_ij - min K_ij`` (Weighted span
    eq. (21); Joachims 2000).

    Raises
    ------
    ValueError
        If ``K`` is not a non-empty square matrix of finite values.
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.size == 0:
        raise ValueError(f"K must be a non-empty square kernel matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("K contains NaN or infinite entries")
    return float(K.max() - K.min())


def estimate_xi_alpha(
    sol: DualSolution, K: np.ndarray, *, rho: float = 2.0, r2_delta: float | None = None
) -> float:
    """The xi-alpha bound of the weighted SVM (Weighted span eq. (21); Yang et al. 2015).

    ``(1/l) sum_p theta(rho alpha_p R_Delta^2 + xi_p - 1)`` with ``rho = 2``,
    ``xi_p = max(0, 1 - y_p f(x_p))`` the slacks and ``theta(t) = 1`` for ``t >= 0``.  The
    sum and ``l`` run over the samples of positive ``C_i`` (a sample of weight 0 is a
    removed row).

    Parameters
    ----------
    rho : float
        Joachims' constant (2 for the SVM with threshold ``b``).
    r2_delta : float, optional
        ``R_Delta^2`` (default :func:`xi_alpha_radius2` of ``K`` on the samples of positive
        ``C_i``).
    """
    K = _check(sol, K)
    if not (np.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be positive, got {rho}")
    keep = _trained(sol)
    if r2_delta is not None:
        R2 = float(r2_delta)
        if not (np.isfinite(R2) and R2 >= 0):
            raise ValueError(
                f"r2_delta must be a finite R_Delta^2 >= 0 (max K_ij - min K_ij), got {r2_delta}"
            )
    else:
        R2 = xi_alpha_radius2(K if keep is None else K[np.ix_(keep, keep)])
    xi = np.maximum(0.0, 1.0 - sol.y * sol.decision_function(K))
    t = rho * sol.alpha * R2 + xi - 1.0
    return float(np.mean(t >= 0 if keep is None else t[keep] >= 0))
