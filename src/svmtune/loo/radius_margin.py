"""Radius-margin bound of the L2-SVM and its exact gradient.

Chapelle, Vapnik, Bousquet & Mukherjee, "Choosing multiple parameters for support vector
machines", Machine Learning 46 (2002) -- *Chapelle et al. 2002* -- select hyperparameters by
minimising

    T = R^2 ||w||^2                                            (RBSVM eq. (8): T_rm = T / n)

for the L2-SVM, i.e. the hard-margin SVM on ``K~ = K + diag(1 / (C w_i))`` (RBSVM eq. (7)):
both the radius ``R`` of the smallest sphere enclosing the training points and the margin
``1 / ||w||`` are taken in the feature space of ``K~``, so that ``C`` enters both.

* ``R^2`` comes from :func:`svmtune.loo.sphere.enclosing_ball` on ``K~``.
* ``||w||^2 = 2 W(alpha)`` with ``W(alpha) = sum_i alpha_i - 1/2 beta^T K~ beta`` the dual
  objective at the optimum (``beta = y * alpha``; equal to ``sum_i alpha_i`` by the KKT
  conditions).

Both are optima of quadratic programs, so their derivatives follow from the envelope theorem
with both solutions held fixed (Chapelle et al. 2002, gradients of the radius and of the
margin):

    dR^2      = sum_i beta^ball_i dK~_ii - beta^ball^T dK~ beta^ball,
    d||w||^2  = -sum_ij alpha_i alpha_j y_i y_j dK~_ij = -beta^T dK~ beta.

For ``theta = (log sigma, log C)``: ``dK~/d log sigma = dK/d log sigma`` and
``dK~/d log C = -diag(1 / (C w_i))``.  Multiclass one-vs-rest: the sphere does not depend on
the labels, so ``T = R^2 sum_k ||w_k||^2`` over the tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from svmtune._dual_solution import DualSolution, check_solution
from svmtune._kernel_matrix_checks import TRAINED, check_kernel_matrix
from svmtune.loo.sphere import (
    BallSolution,
    Direction,
    _check_direction,
    _enclosing_ball,
    check_ridge,
    direction_block,
    direction_diagonal,
    radius2_derivative,
)

__all__ = [
    "RadiusMargin",
    "margin_norm2",
    "margin_norm2_derivative",
    "radius_margin",
]


def _check_l2(sol: DualSolution) -> None:
    check_solution(
        sol, "the radius-margin bound needs L2-SVM solutions from fit_l2_svm", factor=False
    )


def margin_norm2(K: np.ndarray, sol: DualSolution) -> float:
    """``||w||^2 = 2 W(alpha)`` of an L2-SVM, ``W`` its dual objective on ``K~`` (RBSVM eq. (6)).

    ``W(alpha) = sum_i alpha_i - 1/2 sum_ij alpha_i alpha_j y_i y_j K~_ij`` with
    ``K~ = K + diag(sol.H_diag)``; at the optimum ``2 W = sum_i alpha_i`` (Chapelle et al. 2002).

    Raises
    ------
    ValueError
        If ``K`` is not the solution's ``(n, n)`` finite kernel matrix.
    """
    _check_l2(sol)
    K = check_kernel_matrix(K, sol.y.shape[0], what=TRAINED)
    return _margin_norm2(K, sol)


def _margin_norm2(K: np.ndarray, sol: DualSolution) -> float:
    """:func:`margin_norm2` on checked inputs."""
    S = sol.support_indices
    b = sol.dual_coef[S]
    quad = float(b @ np.asarray(K)[np.ix_(S, S)] @ b + (b * b) @ sol.H_diag[S])
    return 2.0 * float(sol.alpha[S].sum()) - quad


def margin_norm2_derivative(sol: DualSolution, dH: Direction) -> float:
    """Derivative of ``||w||^2`` along a direction ``dH`` of ``K~`` (envelope theorem).

    ``d||w||^2 = 2 dW = -sum_ij alpha_i alpha_j y_i y_j dK~_ij`` with ``alpha`` held fixed
    (Chapelle et al. 2002).  ``dH`` is a :data:`svmtune.loo.sphere.Direction`: an (n, n)
    matrix, an (n,) vector (a diagonal direction such as ``dK~/d log C = -sol.H_diag``) or a
    block callable (only the support-set block is read).

    Raises
    ------
    ValueError
        If an array ``dH`` is neither ``(n, n)`` nor ``(n,)``.
    """
    _check_l2(sol)
    _check_direction(dH, sol.y.shape[0])
    S = sol.support_indices
    b = sol.dual_coef[S]
    if not callable(dH) and np.ndim(dH) == 1:
        return -float((b * b) @ direction_diagonal(dH, S))
    return -float(b @ direction_block(dH, S) @ b)


@dataclass
class RadiusMargin:
    """Radius-margin criterion ``T = R^2 sum_k ||w_k||^2`` and its gradient.

    Attributes
    ----------
    value : float
        ``T``.
    grad : ndarray of shape (n_directions,)
    R2 : float
        Squared radius of the smallest ball enclosing the points in the feature space of
        ``K~`` (zero-weight points, which the SVM ignores, excluded).
    w2 : ndarray of shape (n_tasks,)
        ``||w_k||^2`` per one-vs-rest task.
    ball : BallSolution
        The sphere (indices relative to the positive-weight points), for warm starts.
    """

    value: float
    grad: np.ndarray
    R2: float
    w2: np.ndarray
    ball: BallSolution


def radius_margin(
    K: np.ndarray,
    solutions: Sequence[DualSolution],
    directions: Sequence[Direction] = (),
    *,
    ball_init: np.ndarray | None = None,
) -> RadiusMargin:
    """Radius-margin bound ``T = R^2 ||w||^2`` of L2-SVMs and its exact gradient.

    Parameters
    ----------
    K : ndarray (n, n)
        Kernel matrix (without the ridge).
    solutions : sequence of DualSolution
        L2-SVM solutions on ``K`` sharing one ridge ``sol.H_diag`` (one per one-vs-rest task;
        a single one for a binary problem).
    directions : sequence of :data:`svmtune.loo.sphere.Direction`
        Derivatives of ``K~ = K + diag(H_diag)`` with respect to each hyperparameter: an
        (n, n) matrix, an (n,) vector for a diagonal direction (``dK~/d log C =
        -H_diag``), or a block callable (only the blocks on the SVMs' and the sphere's
        supports are requested).  Entries of zero-weight points (infinite ridge) are ignored.
    ball_init : bool mask, optional
        Support of the previous sphere (``RadiusMargin.ball.support``), a warm start.

    Returns
    -------
    RadiusMargin
        ``grad[k] = dR^2_k sum ||w||^2 + R^2 sum d||w||^2_k`` (envelope theorem, Chapelle et
        al. 2002).
    """
    if not len(solutions):
        raise ValueError("radius_margin needs at least one SVM solution")
    for s in solutions:
        _check_l2(s)
    d = solutions[0].H_diag
    for s in solutions[1:]:
        if not np.array_equal(s.H_diag, d):
            raise ValueError("all one-vs-rest solutions must share the same ridge (C, weights)")
    n = solutions[0].y.shape[0]
    if any(s.y.shape[0] != n for s in solutions):
        raise ValueError("every task's solution must be fitted on the same points")
    K = check_kernel_matrix(K, n, what=TRAINED)
    check_ridge(d[np.isfinite(d)], int(np.isfinite(d).sum()))  # the ball's ridge
    for dH in directions:
        _check_direction(dH, n)
    return _radius_margin(K, solutions, directions, ball_init)


def _radius_margin(
    K: np.ndarray,
    solutions: Sequence[DualSolution],
    directions: Sequence[Direction],
    ball_init: np.ndarray | None = None,
) -> RadiusMargin:
    """:func:`radius_margin` on checked inputs (Chapelle et al. 2002; RBSVM eq. (8)): L2-SVM
    solutions sharing one ridge on the finite ``(n, n)`` float ``K`` and directions of the
    right shapes.  RMSVM's search calls it on the kernel matrix and solutions it built, so
    that an evaluation repeats none of the checks of :func:`radius_margin` (issue #55)."""
    n = solutions[0].y.shape[0]
    d = solutions[0].H_diag
    finite = np.isfinite(d)
    active = np.flatnonzero(finite)
    all_active = active.size == n
    # the ball of K~ on the positive-weight points, without forming K~ (ridge argument)
    Ka = K if all_active else K[np.ix_(active, active)]
    init = None
    if ball_init is not None and np.asarray(ball_init).shape == (active.shape[0],):
        init = ball_init
    # K is finite and n x n (radius_margin's check or the search's own), the ridge of the
    # positive-weight points finite and positive (the solvers' 1 / (C w))
    ball = _enclosing_ball(Ka, d[active], init)
    beta_full = np.zeros(n)
    beta_full[active] = ball.beta
    w2 = np.array([_margin_norm2(K, s) for s in solutions])
    W = float(w2.sum())
    grad = np.zeros(len(directions))
    for k, dH in enumerate(directions):
        if not callable(dH) and np.ndim(dH) == 1:
            dH = np.where(finite, np.asarray(dH, dtype=float), 0.0)
        dR2 = radius2_derivative(beta_full, dH)
        dw = sum(margin_norm2_derivative(s, dH) for s in solutions)
        grad[k] = dR2 * W + ball.R2 * dw
    return RadiusMargin(value=ball.R2 * W, grad=grad, R2=ball.R2, w2=w2, ball=ball)
