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

* **Radius** (:func:`svmtune.loo.sphere_lowrank.lowrank_enclosing_ball`): the smallest ball
  enclosing the points of ``K~`` in feature space (Chapelle et al. 2002), by a bordered
  Woodbury reduction of its support-set system, never forming ``K~``.
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

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from svmtune._dual_solution import DualSolution
from svmtune.loo.radius_margin import RadiusMargin
from svmtune.loo.sphere import BallSolution, _check_init_support
from svmtune.loo.sphere_lowrank import (
    _lowrank_enclosing_ball,
    check_ball_options,
    lowrank_enclosing_ball,
)
from svmtune.lowrank import NystroemFactor, TaskSolutions, check_lowrank_solution
from svmtune.lowrank._solver import (
    LowRankInputs,
    _fit_tasks_lowrank,
    check_features,
    check_lowrank_inputs,
)

__all__ = [
    "LowRankRadiusMargin",
    "lowrank_enclosing_ball",
    "lowrank_margin_norm2",
    "lowrank_radius_margin",
    "lowrank_radius_margin_objective",
]


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
    return _lowrank_margin_norm2(Z, sol)


def _lowrank_margin_norm2(Z: np.ndarray, sol: DualSolution) -> float:
    """:func:`lowrank_margin_norm2` of a checked low-rank solution ``sol`` on the float
    ``Z`` (issue #55: the radius-margin evaluations check their own fits no further)."""
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
    n = nf.Z.shape[0]
    for s in solutions:
        _check_l2(s, n)
    d = solutions[0].H_diag
    for s in solutions[1:]:
        if not np.array_equal(s.H_diag, d):
            raise ValueError("all one-vs-rest solutions must share the same ridge (C, weights)")
    active = np.isfinite(d)
    if active.any():
        check_features(nf.Z[active])
    check_ball_options(tol, 100)
    if ball_init is not None and np.asarray(ball_init).shape == (int(active.sum()),):
        _check_init_support(ball_init, int(active.sum()))  # another shape: no warm start
    return _lowrank_radius_margin(nf, solutions, gradient=gradient, ball_init=ball_init, tol=tol)


def _lowrank_radius_margin(
    nf: NystroemFactor,
    solutions: Sequence[DualSolution],
    *,
    gradient: bool,
    ball_init: np.ndarray | None,
    tol: float,
) -> RadiusMargin:
    """:func:`lowrank_radius_margin` of checked solutions (issue #55): low-rank L2-SVM
    solutions on ``nf.Z`` sharing one ridge, ``ball_init`` a bool mask (or None) and
    ``tol > 0``, as :func:`_lowrank_radius_margin_objective` has them from its own fits, so
    that its evaluations check neither them nor ``Z`` (the ``O(n m)`` finiteness pass of
    :func:`lowrank_enclosing_ball`) again.  Chapelle et al. 2002, with
    the landmarks fixed (module docstring).
    """
    Z = nf.Z
    n = Z.shape[0]
    d = solutions[0].H_diag
    finite = np.isfinite(d)
    active = np.flatnonzero(finite)
    if active.size == 0:
        raise ValueError("every sample weight is zero")
    all_active = active.size == n
    init = None
    if ball_init is not None and np.asarray(ball_init).shape == (active.size,):
        init = ball_init
    ball = _lowrank_enclosing_ball(
        Z if all_active else Z[active], d[active], init, tol=tol, max_iter=100
    )
    w2 = np.array([_lowrank_margin_norm2(Z, s) for s in solutions])
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
    checked = check_lowrank_inputs(D2_nm, D2_mm, tasks, theta, sample_weight, init_support, jitter)
    return _lowrank_radius_margin_objective(
        checked, ball_init=ball_init, gradient=gradient, jitter=jitter, tol=tol
    )


def _lowrank_radius_margin_objective(
    inputs: LowRankInputs,
    *,
    ball_init: np.ndarray | None = None,
    gradient: bool = True,
    jitter: float = 1e-8,
    tol: float = 1e-8,
) -> LowRankRadiusMargin:
    """:func:`lowrank_radius_margin_objective` on checked inputs: the objective evaluation
    of :class:`svmtune.methods.radius_margin_lowrank.RMSVMLowRank`'s search (RBSVM eq. (8);
    Chapelle et al. 2002).

    ``inputs`` are those of :func:`svmtune.lowrank._solver._fit_tasks_lowrank` (checked when
    the search chose its landmarks or at its entry): no evaluation repeats their checks, nor
    those of the solutions it fits itself (issue #55).
    """
    nf, sols = _fit_tasks_lowrank(inputs, jitter=jitter, tol=tol)
    rm = _lowrank_radius_margin(nf, sols, gradient=gradient, ball_init=ball_init, tol=1e-10)
    return LowRankRadiusMargin(
        value=rm.value,
        grad=rm.grad if gradient else None,
        R2=rm.R2,
        w2=rm.w2,
        ball=rm.ball,
        solutions=sols,
        theta=inputs.theta.copy(),
        rank=nf.rank,
        jitter=nf.jitter,
        rank_residual=nf.trace_residual,
    )
