"""Radius-margin bound of the L2-SVM on a low-rank (Nystroem) kernel, with its exact gradient.

The low-rank counterpart of :mod:`svmtune.loo.radius_margin`: Chapelle, Vapnik, Bousquet &
Mukherjee, "Choosing multiple parameters for support vector machines", Machine Learning 46
(2002) -- *Chapelle et al. 2002* -- select ``theta = (log sigma, log C)`` by minimising

    T = R^2 ||w||^2                                            (RBSVM eq. (8): T_rm = T / n)

of the L2-SVM, the hard-margin SVM on ``K~ = K + diag(1 / (C w_i))`` (RBSVM eq. (7)).  Here the
kernel is the Nystroem approximation on ``m`` fixed landmarks (:mod:`svmtune.lowrank`), so

    K~ = Z Z^T + diag(r),    r_i = 1 / (C w_i),    Z in R^{n x m},

and nothing below forms an ``n x n`` (or support x support) matrix: ``O(n m^2)`` time and
``O(n m)`` memory per evaluation.

* **Radius** (:func:`lowrank_enclosing_ball`).  ``R^2 = max sum_i beta_i K~_ii - beta^T K~ beta``
  over the simplex (Chapelle et al. 2002), by the primal-dual active-set (semismooth Newton)
  iteration of :func:`svmtune.loo.sphere.enclosing_ball`.  Its support-set system
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
* **Margin** (:func:`lowrank_margin_norm2`).  ``||w||^2 = 2 W(alpha) = 2 sum alpha -
  beta^T K~ beta`` of the solution of :func:`svmtune.lowrank.fit_l2_svm_lowrank`
  (``beta = y * alpha``), with ``beta^T K~ beta = |Z_S^T beta_S|^2 + sum r_S beta_S^2``.
* **Gradient** (:func:`lowrank_radius_margin`).  Envelope theorem (Chapelle et al. 2002), both
  QP solutions held fixed:

      dR^2 = sum_i beta^ball_i dK~_ii - beta^ball^T dK~ beta^ball,   d||w||^2 = -beta^T dK~ beta,

  with the landmarks held **fixed** and ``K~`` differentiated exactly as in
  :mod:`svmtune.lowrank`: ``dK~/dlog sigma = P G + G^T P^T - G^T Q G`` (``P = dK_nm``,
  ``Q = dK_mm``, ``G = (K_mm + jitter I)^-1 K_mn``), so that

      b^T dK~ b = 2 (P^T b)^T (G b) - (G b)^T Q (G b),   dK~_ii = 2 p_i^T g_i - g_i^T Q g_i

  (``O(n m)`` and ``O(m^2)`` per point), and ``dK~/dlog C = -diag(1 / (C w))``.

Multiclass one-vs-rest: the sphere does not depend on the labels, so ``T = R^2 sum_k
||w_k||^2`` over the tasks, as in :func:`svmtune.loo.radius_margin.radius_margin`.  ``T`` is
the bound *of the approximate kernel*; it is the exact one when every point is a landmark and
``jitter = 0``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from svmtune._support import DualSolution
from svmtune._warnings import user_stacklevel
from svmtune.loo.radius_margin import RadiusMargin
from svmtune.loo.sphere import (
    BallSolution,
    _check_init_support,
    check_ridge,
    clarabel_simplex_weights,
)
from svmtune.lowrank import (
    NystroemFactor,
    TaskSolutions,
    check_lowrank_solution,
    fit_tasks_lowrank,
)

__all__ = [
    "LowRankRadiusMargin",
    "lowrank_enclosing_ball",
    "lowrank_margin_norm2",
    "lowrank_radius_margin",
    "lowrank_radius_margin_objective",
]

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
    Z = np.asarray(Z, dtype=float)
    if Z.ndim != 2 or Z.shape[0] == 0 or Z.shape[1] == 0:
        raise ValueError(f"Z must be a non-empty (n, m) matrix, got shape {Z.shape}")
    if not np.all(np.isfinite(Z)):
        raise ValueError("Z contains NaN or infinite entries")
    n, m = Z.shape
    r = check_ridge(ridge, n)
    if int(max_iter) != max_iter or max_iter < 0:
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter}")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol}")
    if init_support is not None:
        _check_init_support(init_support, n)
    if n == 1:
        return BallSolution(0.0, np.ones(1), np.ones(1, dtype=bool), 0, "trivial")
    k = np.einsum("ij,ij->i", Z, Z) + r
    scale = max(float(np.abs(k).max()), 1e-300)
    atol = tol * scale
    tau = _Q_FRACTION * scale
    is_q = r <= tau  # bordered block of the support system
    is_zero = r <= 1e-12 * scale  # singular beyond m + 1 affinely independent points
    q_cap = m + 1

    def cap(mask: np.ndarray, candidates: np.ndarray, priority: np.ndarray) -> np.ndarray:
        """``mask`` plus the ``candidates``, admitting at most ``m + 1`` new small-ridge points
        and keeping at most ``m + 1`` zero-ridge points (those of largest ``priority``)."""
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

    if init_support is None:
        S_mask = cap(np.zeros(n, dtype=bool), np.arange(n), k)
    else:
        init = np.zeros(n, dtype=bool)
        init[np.asarray(init_support)] = True
        if not init.any():
            init[:] = True
        S_mask = cap(np.zeros(n, dtype=bool), np.flatnonzero(init), k)

    seen: set[bytes] = set()
    for it in range(1, int(max_iter) + 1):
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

    # Fallback: interior point on the low-rank dual, then polish from its support set.
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
            return BallSolution(max(float(R2), 0.0), beta, beta > 0, int(max_iter), "clarabel")
    zb = Z.T @ beta
    R2 = float(k @ beta - zb @ zb - r @ (beta * beta))
    if R2 < 0.0:
        warnings.warn(
            f"low-rank enclosing ball: negative R^2 = {R2:.2e} from round-off; clipped to 0",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
    return BallSolution(max(R2, 0.0), beta, beta > thr, int(max_iter), "clarabel")


# ---------------------------------------------------------------------------------------------
# Margin
# ---------------------------------------------------------------------------------------------
def _check_l2(sol: DualSolution, n: int) -> None:
    check_lowrank_solution(sol, n, "the low-rank radius-margin bound and ||w||^2")
    if sol.alpha.shape != (n,):
        raise ValueError(f"SVM solution is for {sol.alpha.shape[0]} points, Z has {n} rows")


def lowrank_margin_norm2(Z: np.ndarray, sol: DualSolution) -> float:
    """``||w||^2 = 2 W(alpha)`` of the L2-SVM on ``K~ = Z Z^T + diag(H_diag)`` (RBSVM eq. (6)).

    ``W(alpha) = sum_i alpha_i - 1/2 beta^T K~ beta`` (``beta = y * alpha``), with
    ``beta^T K~ beta = |Z_S^T beta_S|^2 + sum_S H_diag beta^2``; at the optimum
    ``2 W = sum_i alpha_i`` (Chapelle et al. 2002).  ``O(|S| m)``.

    Parameters
    ----------
    Z : ndarray (n, m)
        The features the SVM was trained on.
    sol : DualSolution
        From :func:`svmtune.lowrank.fit_l2_svm_lowrank`.
    """
    Z = np.asarray(Z, dtype=float)
    _check_l2(sol, Z.shape[0])
    S = sol.support_indices
    b = sol.dual_coef[S]
    zb = Z[S].T @ b
    quad = float(zb @ zb + (b * b) @ sol.H_diag[S])
    return 2.0 * float(sol.alpha[S].sum()) - quad


# ---------------------------------------------------------------------------------------------
# Exact derivatives along dK~/dlog sigma (landmarks fixed) and dK~/dlog C
# ---------------------------------------------------------------------------------------------
def _quad_dsigma(nf: NystroemFactor, P: np.ndarray, Q: np.ndarray, I, b) -> float:
    """``b^T (dK~/dlog sigma) b = 2 (P^T b)^T (G b) - (G b)^T Q (G b)`` for ``b`` on ``I``."""
    gb = nf.G_T[I].T @ b
    pb = P[I].T @ b
    return float(2.0 * (pb @ gb) - gb @ Q @ gb)


def _diag_dsigma(nf: NystroemFactor, P: np.ndarray, Q: np.ndarray, I) -> np.ndarray:
    """``(dK~/dlog sigma)_ii = 2 p_i^T g_i - g_i^T Q g_i`` for ``i`` in ``I``."""
    GI = nf.G_T[I]
    return 2.0 * np.einsum("ij,ij->i", P[I], GI) - np.einsum("ij,ij->i", GI @ Q, GI)


def lowrank_radius_margin(
    nf: NystroemFactor,
    solutions: Sequence[DualSolution],
    *,
    gradient: bool = True,
    ball_init: np.ndarray | None = None,
    tol: float = 1e-10,
) -> RadiusMargin:
    """Radius-margin bound ``T = R^2 sum_k ||w_k||^2`` on a Nystroem kernel and its exact gradient.

    Parameters
    ----------
    nf : NystroemFactor
        The factor ``K~ = Z Z^T`` (:func:`svmtune.lowrank.nystroem_factor`) the SVMs were
        trained on, at ``sigma = nf.sigma``.
    solutions : sequence of DualSolution
        L2-SVM solutions of :func:`svmtune.lowrank.fit_l2_svm_lowrank` on ``nf.Z`` sharing one
        ridge ``sol.H_diag = 1 / (C w)`` (one per one-vs-rest task, a single one for a binary
        problem).
    gradient : bool
        Whether to compute ``dT / d(log sigma, log C)``.
    ball_init : bool mask, optional
        Support of the previous sphere (``RadiusMargin.ball.support``, relative to the
        positive-weight points), a warm start.
    tol : float
        Tolerance of :func:`lowrank_enclosing_ball`.

    Returns
    -------
    RadiusMargin
        ``grad = (dT/dlog sigma, dT/dlog C)`` (empty when ``gradient`` is False), by the
        envelope theorem (Chapelle et al. 2002) with the landmarks fixed;
        ``grad[j] = dR^2_j sum ||w||^2 + R^2 sum d||w||^2_j``.  Zero-weight points (infinite
        ridge) are left out of the sphere, as in :func:`svmtune.loo.radius_margin.radius_margin`.
    """
    if not len(solutions):
        raise ValueError("lowrank_radius_margin needs at least one SVM solution")
    Z = nf.Z
    n = Z.shape[0]
    for s in solutions:
        _check_l2(s, n)
    d = solutions[0].H_diag
    for s in solutions[1:]:
        if not np.array_equal(s.H_diag, d):
            raise ValueError("all one-vs-rest solutions must share the same ridge (C, weights)")
    finite = np.isfinite(d)
    active = np.flatnonzero(finite)
    if active.size == 0:
        raise ValueError("every sample weight is zero")
    all_active = active.size == n
    init = None
    if ball_init is not None and np.asarray(ball_init).shape == (active.size,):
        init = ball_init
    ball = lowrank_enclosing_ball(
        Z if all_active else Z[active], d[active], init_support=init, tol=tol
    )
    w2 = np.array([lowrank_margin_norm2(Z, s) for s in solutions])
    W = float(w2.sum())
    grad = np.zeros(0)
    if gradient:
        P, Q = nf.dlogsigma()
        Sb = active[ball.support]
        bb = ball.beta[ball.support]
        dS = d[Sb]
        dR2_sigma = float(bb @ _diag_dsigma(nf, P, Q, Sb)) - _quad_dsigma(nf, P, Q, Sb, bb)
        # dK~/dlog C = -diag(d):  dR^2 = -sum beta d + sum beta^2 d
        dR2_C = float((bb * bb - bb) @ dS)
        dw_sigma = dw_C = 0.0
        for s in solutions:
            S = s.support_indices
            b = s.dual_coef[S]
            dw_sigma -= _quad_dsigma(nf, P, Q, S, b)
            dw_C += float((b * b) @ d[S])
        grad = np.array([dR2_sigma * W + ball.R2 * dw_sigma, dR2_C * W + ball.R2 * dw_C])
    return RadiusMargin(value=ball.R2 * W, grad=grad, R2=ball.R2, w2=w2, ball=ball)


# ---------------------------------------------------------------------------------------------
# The criterion as a function of theta
# ---------------------------------------------------------------------------------------------
@dataclass
class LowRankRadiusMargin(TaskSolutions):
    """``T``, its gradient and by-products of :func:`lowrank_radius_margin_objective`.

    Attributes
    ----------
    value : float
        ``T = R^2 sum_k ||w_k||^2``.
    grad : ndarray of shape (2,) or None
        ``dT / d(log sigma, log C)``.
    R2 : float
    w2 : ndarray of shape (n_tasks,)
    ball : BallSolution
        Indices relative to the positive-weight points.
    solutions : list of DualSolution
    theta : ndarray of shape (2,)
    rank : int
        Number of landmarks ``m``.
    jitter : float
        The jitter actually used (raised by :func:`svmtune.lowrank.nystroem_factor` if needed).
    rank_residual : float
        Trace residual / n of the landmarks at this width
        (:attr:`svmtune.lowrank.NystroemFactor.trace_residual`).
    """

    value: float
    grad: np.ndarray | None
    R2: float
    w2: np.ndarray
    ball: BallSolution
    solutions: list[DualSolution]
    theta: np.ndarray
    rank: int
    jitter: float
    rank_residual: float = float("nan")


def lowrank_radius_margin_objective(
    D2_nm: np.ndarray,
    D2_mm: np.ndarray,
    tasks: Sequence[np.ndarray],
    theta: Sequence[float] | np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    init_support: Sequence[np.ndarray | None] | None = None,
    ball_init: np.ndarray | None = None,
    gradient: bool = True,
    jitter: float = 1e-8,
    tol: float = 1e-8,
) -> LowRankRadiusMargin:
    """Radius-margin bound ``T`` (RBSVM eq. (8); Chapelle et al. 2002) of the Nystroem L2-SVM.

    Builds ``K~ = Z Z^T`` at ``sigma = exp(theta[0])`` on the fixed landmarks, trains the
    L2-SVM of every task with ``C = exp(theta[1])`` (:func:`svmtune.lowrank.fit_l2_svm_lowrank`)
    and evaluates :func:`lowrank_radius_margin`.  ``O(n m^2)`` time, ``O(n m)`` memory.

    Parameters
    ----------
    D2_nm, D2_mm : ndarray
        Squared distances of the points to the landmarks and among the landmarks.
    tasks : sequence of {-1, +1} vectors
        One per binary / one-vs-rest task.
    theta : (log sigma, log C)
    sample_weight : array (n,), optional
        Per-sample weights (``r_i = 1 / (C w_i)``; zero-weight points are ignored).
    init_support : sequence of bool masks, optional
        Previous support set of each task (warm start).
    ball_init : bool mask, optional
        Previous sphere support (warm start).
    gradient : bool
    jitter : float
        Added to ``K_mm`` before its Cholesky factorisation.
    tol : float
        KKT tolerance of the SVM solver.

    Returns
    -------
    LowRankRadiusMargin
    """
    theta, nf, sols = fit_tasks_lowrank(
        D2_nm,
        D2_mm,
        tasks,
        theta,
        sample_weight=sample_weight,
        init_support=init_support,
        jitter=jitter,
        tol=tol,
    )
    rm = lowrank_radius_margin(nf, sols, gradient=gradient, ball_init=ball_init)
    return LowRankRadiusMargin(
        value=rm.value,
        grad=rm.grad if gradient else None,
        R2=rm.R2,
        w2=rm.w2,
        ball=rm.ball,
        solutions=sols,
        theta=theta.copy(),
        rank=nf.rank,
        jitter=nf.jitter,
        rank_residual=nf.trace_residual,
    )
