"""Smallest ball enclosing the points of a low-rank kernel ``K~ = Z Z^T + diag(r)``.

The low-rank counterpart of :mod:`svmtune.loo.sphere` (Chapelle, Vapnik, Bousquet & Mukherjee,
"Choosing multiple parameters for support vector machines", Machine Learning 46 (2002) --
*Chapelle et al. 2002*), for the radius of the radius-margin bound
(:mod:`svmtune.loo.radius_margin_lowrank`) on the Nystroem kernel of :mod:`svmtune.lowrank`:
``O(n m^2)`` time and ``O(n m)`` memory.

:func:`lowrank_enclosing_ball`: ``R^2 = max sum_i beta_i K~_ii - beta^T K~ beta`` over the
simplex (Chapelle et al. 2002), by the primal-dual active-set (semismooth Newton) iteration
of :func:`svmtune.loo.sphere.enclosing_ball`.  Its support-set system
``[[2 K~_SS, 1], [1^T, 0]] [b; mu] = [k_S; 1]`` (``k = diag K~``) is solved through a
*bordered Woodbury* reduction: with ``v = Z_S^T b`` and the support split into ``Q``
(ridge ``r_i <= 1e-6 max_j K~_jj``, e.g. ``r = 0``) and ``P`` (the others), eliminating
``b_P = (k_P - mu - 2 Z_P v) / (2 r_P)`` leaves the symmetric system of size
``m + 1 + |Q|``

    [[I + Z_P^T D_P^-1 Z_P,  a / 2,   -Z_Q^T],     [v  ]   [Z_P^T D_P^-1 k_P / 2    ]
     [a^T / 2,               s / 4,   -1^T/2],  x  [mu ] = [1^T D_P^-1 k_P / 4 - 1/2]
     [-Z_Q,                  -1 / 2,  -D_Q  ]]     [b_Q]   [-k_Q / 2                ]

(``a = Z_P^T D_P^-1 1``, ``s = 1^T D_P^-1 1``): ``O(|S| m^2 + (m + |Q|)^3)``, followed by two
steps of iterative refinement on the residual of the full system (``O(|S| m)`` each).  For
``Q`` empty this is the Woodbury solve of :class:`svmtune.lowrank.WoodburyFactor`.  The
iteration is warm-startable from a previous support set.  **Fallback**: if it cycles or a
support system is singular (``r = 0`` with more than ``m + 1`` points on the sphere,
duplicated points), the dual QP is handed to clarabel in its low-rank form
``min ||v||^2 + sum_i r_i beta_i^2 - k^T beta`` s.t. ``v = Z^T beta``, ``1^T beta = 1``,
``beta >= 0`` (``n + m`` variables, ``n m`` non-zeros, ``O(n m)`` memory) and the exact step
is re-run from clarabel's support set, as in :func:`svmtune.loo.sphere.enclosing_ball`.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from svmtune._warnings import user_stacklevel
from svmtune.loo.sphere import (
    BallSolution,
    _check_init_support,
    check_ridge,
    clarabel_simplex_weights,
)
from svmtune.lowrank._solver import check_features

__all__ = ["lowrank_enclosing_ball"]

#: ridges below this fraction of ``max_i K~_ii`` are kept in the bordered block ``Q`` rather
#: than eliminated (their ``1 / r_i`` would swamp the reduced matrix)
_Q_FRACTION = 1e-6


# ---------------------------------------------------------------------------------------------
# Smallest enclosing ball of Z Z^T + diag(r)
# ---------------------------------------------------------------------------------------------
def _support_system(
    Z: np.ndarray, r: np.ndarray, k: np.ndarray, S: np.ndarray, tau: float
) -> tuple[np.ndarray, float, np.ndarray] | None:
    """Solve ``[[2 K~_SS, 1], [1^T, 0]] [b; mu] = [k_S; 1]`` by the bordered Woodbury reduction.

    Returns ``(b, mu, v = Z_S^T b)`` or None when the system is singular (the residual after
    refinement is not at round-off level).
    """
    ZS, rS, kS = Z[S], r[S], k[S]
    m = Z.shape[1]
    q_mask = rS <= tau
    ZP, rP = ZS[~q_mask], rS[~q_mask]
    ZQ, rQ = ZS[q_mask], rS[q_mask]
    nq = ZQ.shape[0]
    ZPd = ZP / rP[:, None]
    N = m + 1 + nq
    M = np.zeros((N, N))
    M[:m, :m] = ZP.T @ ZPd
    M[np.diag_indices(m)] += 1.0
    a = ZPd.sum(axis=0)
    M[:m, m] = M[m, :m] = 0.5 * a
    M[m, m] = 0.25 * float(np.sum(1.0 / rP))
    M[m + 1 :, :m] = -ZQ
    M[:m, m + 1 :] = -ZQ.T
    M[m, m + 1 :] = M[m + 1 :, m] = -0.5
    M[m + 1 :, m + 1 :] = -np.diag(rQ)

    def reduced_solve(f: np.ndarray, g: float, solver) -> tuple[np.ndarray, float]:
        """``(b, mu)`` with ``2 K~_SS b + mu 1 = f``, ``1^T b = g``."""
        fP, fQ = f[~q_mask], f[q_mask]
        rhs = np.empty(N)
        rhs[:m] = 0.5 * (ZPd.T @ fP)
        rhs[m] = 0.25 * float(np.sum(fP / rP)) - 0.5 * g
        rhs[m + 1 :] = -0.5 * fQ
        x = solver(rhs)
        v, mu = x[:m], float(x[m])
        b = np.empty(S.shape[0])
        b[q_mask] = x[m + 1 :]
        b[~q_mask] = (fP - mu - 2.0 * (ZP @ v)) / (2.0 * rP)
        return b, mu

    def residual(b: np.ndarray, mu: float) -> tuple[np.ndarray, float]:
        Kb = ZS @ (ZS.T @ b) + rS * b
        return 2.0 * Kb + mu - kS, float(b.sum()) - 1.0

    solvers = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sla.LinAlgWarning)
            lu = sla.lu_factor(M, check_finite=False)
        if np.all(np.isfinite(lu[0])) and np.abs(np.diag(lu[0])).min() > 0:
            solvers.append(lambda rhs: sla.lu_solve(lu, rhs, check_finite=False))
    except (np.linalg.LinAlgError, sla.LinAlgWarning, ValueError):
        pass

    def lstsq_solver(rhs: np.ndarray) -> np.ndarray:
        return sla.lstsq(M, rhs, cond=1e-13, check_finite=False)[0]

    solvers.append(lstsq_solver)
    scale = max(1.0, float(np.abs(kS).max()))
    for solver in solvers:
        b, mu = reduced_solve(kS, 1.0, solver)
        for _ in range(2):  # iterative refinement on the full system
            rf, rg = residual(b, mu)
            db, dmu = reduced_solve(rf, rg, solver)
            b, mu = b - db, mu - dmu
        rf, rg = residual(b, mu)
        if not (np.all(np.isfinite(b)) and np.isfinite(mu)):
            continue
        size = max(1.0, float(np.abs(b).max()), abs(mu) / scale)
        if max(float(np.abs(rf).max(initial=0.0)), abs(rg) * scale) <= 1e-9 * scale * size:
            return b, mu, ZS.T @ b
    return None


def _ball_state(
    Z: np.ndarray, r: np.ndarray, k: np.ndarray, S: np.ndarray, b: np.ndarray, mu: float, v
) -> tuple[float, np.ndarray]:
    """``R^2`` and the squared distances to the centre minus ``R^2`` (``O(n m)``)."""
    bKb = float(v @ v + r[S] @ (b * b))
    R2 = mu + bKb
    Kb = Z @ v
    Kb[S] += r[S] * b
    return R2, k - 2.0 * Kb + bKb - R2


def _clarabel_lowrank_ball(Z: np.ndarray, r: np.ndarray, k: np.ndarray, tol: float) -> np.ndarray:
    """The ball QP in low-rank form with clarabel (``n + m`` variables, ``O(n m)`` memory).

    ``min ||v||^2 + sum_i r_i beta_i^2 - k^T beta`` s.t. ``Z^T beta - v = 0``,
    ``1^T beta = 1``, ``beta >= 0``.
    """
    n, m = Z.shape
    P = sp.diags(2.0 * np.concatenate([r, np.ones(m)]), format="csc")
    q = np.concatenate([-k, np.zeros(m)])
    A = sp.vstack(
        [
            sp.hstack([sp.csc_matrix(Z.T), -sp.eye(m, format="csc")]),
            sp.hstack([sp.csc_matrix(np.ones((1, n))), sp.csc_matrix((1, m))]),
            sp.hstack([-sp.eye(n, format="csc"), sp.csc_matrix((n, m))]),
        ],
        format="csc",
    )
    rhs = np.concatenate([np.zeros(m), [1.0], np.zeros(n)])
    return clarabel_simplex_weights(P, q, A, rhs, m + 1, n, tol)


def _cap_support(
    mask: np.ndarray,
    candidates: np.ndarray,
    priority: np.ndarray,
    is_q: np.ndarray,
    is_zero: np.ndarray,
    q_cap: int,
) -> np.ndarray:
    """``mask`` plus the ``candidates``, admitting at most ``q_cap = m + 1`` new small-ridge
    points (``is_q``, the bordered block of the support system) and keeping at most ``q_cap``
    zero-ridge points (``is_zero``; those of largest ``priority``)."""
    new = mask.copy()
    new[candidates[~is_q[candidates]]] = True
    cq = candidates[is_q[candidates]]
    cq = cq[np.argsort(-priority[cq], kind="stable")]
    room = max(q_cap - int(np.sum(new & is_zero)), 0)
    zero = is_zero[cq]
    keep = np.ones(cq.size, dtype=bool)
    keep[np.flatnonzero(zero)[room:]] = False
    new[cq[keep][:q_cap]] = True
    return new


def _clarabel_fallback(
    Z: np.ndarray,
    r: np.ndarray,
    k: np.ndarray,
    tol: float,
    tau: float,
    atol: float,
    max_iter: int,
) -> BallSolution:
    """The fallback of :func:`lowrank_enclosing_ball`: the low-rank dual QP by clarabel
    (interior point), then the exact step from its support set when that one checks out."""
    n = Z.shape[0]
    beta = _clarabel_lowrank_ball(Z, r, k, tol)
    thr = 1e-7 * beta.max()
    S = np.flatnonzero(beta > thr)
    res = _support_system(Z, r, k, S, tau)
    if res is not None:
        b, mu, v = res
        R2, outside = _ball_state(Z, r, k, S, b, mu, v)
        mask = np.zeros(n, dtype=bool)
        mask[S] = True
        if not (b < -tol).any() and not (~mask & (outside > 10 * atol)).any():
            beta = np.zeros(n)
            beta[S] = np.maximum(b, 0.0)
            beta /= beta.sum()
            return BallSolution(max(float(R2), 0.0), beta, beta > 0, max_iter, "clarabel")
    zb = Z.T @ beta
    R2 = float(k @ beta - zb @ zb - r @ (beta * beta))
    if R2 < 0.0:
        warnings.warn(
            f"low-rank enclosing ball: negative R^2 = {R2:.2e} from round-off; clipped to 0",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
    return BallSolution(max(R2, 0.0), beta, beta > thr, max_iter, "clarabel")


def check_ball_options(tol: float, max_iter: int) -> None:
    """Raise unless ``max_iter`` is a non-negative integer and ``tol`` a positive number."""
    if int(max_iter) != max_iter or max_iter < 0:
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter}")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol}")


def lowrank_enclosing_ball(
    Z: np.ndarray,
    ridge: np.ndarray | None = None,
    *,
    init_support: np.ndarray | None = None,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> BallSolution:
    """Smallest ball enclosing the points of ``K~ = Z Z^T + diag(ridge)`` in feature space.

    Same problem, iteration and result as :func:`svmtune.loo.sphere.enclosing_ball` on the
    explicit matrix (Chapelle et al. 2002): ``R^2 = max sum_i beta_i K~_ii - beta^T K~ beta``
    over the simplex, by a primal-dual active-set iteration (drop points with ``beta_i < 0``,
    add points outside the ball) whose support-set system is solved by the bordered Woodbury
    reduction of the module docstring, never forming ``K~``.  Points whose ridge is below
    ``1e-6 max_i K~_ii`` enter the bordered block ``Q``, whose size the solve is cubic in, so
    at most ``m + 1`` of them are admitted per iteration (the most violating first); points
    with ``r = 0`` make the system singular beyond ``m + 1`` of them, so at most ``m + 1`` are
    kept.  If the iteration cycles, stalls or meets a singular system, clarabel solves the
    low-rank dual QP (module docstring) and the exact step is re-run from its support set.
    With ``r > 0`` (the L2-SVM) the iteration settles in a few steps; with ``r = 0`` and many
    points it often does not, and the fallback does the work (in ``O(n m)`` memory).

    Parameters
    ----------
    Z : ndarray (n, m)
        Features, ``Z Z^T`` the (low-rank) kernel matrix.
    ridge : ndarray (n,), optional
        Finite non-negative diagonal ``r`` (the L2-SVM's ``1 / (C w_i)``); default zero.
    init_support : bool mask or index array, optional
        Starting support set (warm start, e.g. ``previous.support``); default all points, as
        :func:`svmtune.loo.sphere.enclosing_ball` (of the points with a ridge below
        ``1e-6 max K~_ii``, only the ``m + 1`` of largest ``K~_ii``).
    tol : float
        Tolerance, relative to ``max_i K~_ii``, on the squared distances
        ``||Phi(x_i) - c||^2 <= R^2``; absolute on ``beta_i >= 0``.
    max_iter : int
        Active-set iterations before the clarabel fallback (0: the fallback directly).

    Returns
    -------
    BallSolution
        ``method`` is "newton", "clarabel" (fallback, polished when possible) or "trivial".
    """
    Z = check_features(Z)
    n = Z.shape[0]
    r = check_ridge(ridge, n)
    check_ball_options(tol, max_iter)
    if init_support is not None:
        _check_init_support(init_support, n)
    return _lowrank_enclosing_ball(Z, r, init_support, tol=tol, max_iter=int(max_iter))


def _lowrank_enclosing_ball(
    Z: np.ndarray,
    r: np.ndarray,
    init_support: np.ndarray | None,
    *,
    tol: float,
    max_iter: int,
) -> BallSolution:
    """:func:`lowrank_enclosing_ball` on checked inputs (issue #55): a finite non-empty
    ``(n, m)`` float ``Z``, its ridge ``r`` as ``n`` finite non-negative floats, a valid
    ``init_support`` (or None), ``tol > 0`` and ``max_iter >= 0``.  The low-rank
    radius-margin bound (:func:`svmtune.loo.radius_margin_lowrank._lowrank_radius_margin`)
    calls it on the Nystroem factor and the L2-SVM's ridge of each evaluation, so that no
    evaluation repeats the ``O(n m)`` finiteness pass over ``Z``.  The primal-dual
    active-set iteration of Chapelle et al. 2002 (module docstring).
    """
    n, m = Z.shape
    if n == 1:
        return BallSolution(0.0, np.ones(1), np.ones(1, dtype=bool), 0, "trivial")
    k = np.einsum("ij,ij->i", Z, Z) + r
    scale = max(float(np.abs(k).max()), 1e-300)
    atol = tol * scale
    tau = _Q_FRACTION * scale
    is_q = r <= tau  # bordered block of the support system
    is_zero = r <= 1e-12 * scale  # singular beyond m + 1 affinely independent points

    def cap(mask: np.ndarray, candidates: np.ndarray, priority: np.ndarray) -> np.ndarray:
        return _cap_support(mask, candidates, priority, is_q, is_zero, m + 1)

    if init_support is None:
        S_mask = cap(np.zeros(n, dtype=bool), np.arange(n), k)
    else:
        init = np.zeros(n, dtype=bool)
        init[np.asarray(init_support)] = True
        if not init.any():
            init[:] = True
        S_mask = cap(np.zeros(n, dtype=bool), np.flatnonzero(init), k)

    seen: set[bytes] = set()
    for it in range(1, max_iter + 1):
        S = np.flatnonzero(S_mask)
        res = _support_system(Z, r, k, S, tau)
        if res is None:
            break
        b, mu, v = res
        R2, outside = _ball_state(Z, r, k, S, b, mu, v)
        neg = b < -tol
        viol = ~S_mask & (outside > atol)
        if not neg.any() and not viol.any():
            beta = np.zeros(n)
            beta[S] = np.maximum(b, 0.0)
            beta /= beta.sum()
            return BallSolution(max(float(R2), 0.0), beta, beta > 0, it, "newton")
        key = S_mask.tobytes()
        if key in seen:
            break
        seen.add(key)
        kept = S_mask.copy()
        kept[S[neg]] = False
        new = cap(kept, np.flatnonzero(viol), outside)
        if not new.any() or np.array_equal(new, S_mask):
            break
        S_mask = new

    return _clarabel_fallback(Z, r, k, tol, tau, atol, max_iter)
