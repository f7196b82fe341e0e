"""The RBSVM objective of the Nystroem L2-SVM: closed-form LOO outputs and the exact gradient.

The L2-SVM on the low-rank kernel ``K~ = Z Z^T`` (:mod:`svmtune.lowrank`) has the support-set
factor ``M^{-1}`` of :class:`svmtune._factor.WoodburyFactor`, ``B = (M^{-1})_SS = D^{-1} - E
E^T``, in ``O(|S| m)`` memory.

* **LOO outputs** (:func:`lowrank_loo`): RBSVM eq. (27), ``r_i = y_i - beta_i / B_ii`` on the
  support set, ``f(x_i)`` elsewhere (as :func:`svmtune.loo.closed_form.closed_form_loo`).
* **Objective and exact gradient** (:func:`lowrank_rbsvm_objective`): the tanh cross-entropy of
  RBSVM eq. (29)-(33) and its exact gradient for a fixed support set.  The landmarks are held
  **fixed** and the approximate kernel is differentiated exactly in ``log sigma``
  (:class:`svmtune.lowrank.NystroemFactor`):

      dK~ = P G + G^T P^T - G^T Q G,   P = dK_nm, Q = dK_mm, G = (K_mm + jitter I)^{-1} K_mn.

  The gradient of :func:`svmtune.loo.rbsvm_gradient.loo_gradient` is the contraction
  ``dJ = <dK~, Gamma>`` with the ``n x n`` matrix ``Gamma`` (``Gamma_SS = -(B diag(g) B + v
  beta^T)``, ``Gamma_NS = c_N beta^T``, zero elsewhere); it is never formed: only the products
  ``Gamma G^T`` and ``Gamma^T G^T`` (``n x m``) are, so

      dJ/dlog sigma = <P, Gamma G^T + Gamma^T G^T> - <Q, G Gamma G^T>,
      dJ/dlog C = sum_{i in S} d_i ((B diag(g) B)_ii + v_i beta_i).

  ``J`` is the RBSVM objective *of the approximate kernel*; it is the exact method's objective
  when ``m = n`` (all points are landmarks, ``jitter = 0``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from svmtune._dual_solution import DualSolution, safe_diagonal
from svmtune._factor import WoodburyFactor
from svmtune._loo_losses import check_loss, check_nonsupport, objective_terms
from svmtune.loo import rbsvm_groups
from svmtune.lowrank import NystroemFactor, TaskSolutions, lowrank_support_system
from svmtune.lowrank._solver import LowRankInputs, _fit_tasks_lowrank, check_lowrank_inputs

__all__ = [
    "LowRankObjective",
    "lowrank_loo",
    "lowrank_loo_gradient",
    "lowrank_rbsvm_objective",
]


def lowrank_loo(sol: DualSolution, Z: np.ndarray) -> np.ndarray:
    """Closed-form LOO decision values (RBSVM eq. (27)) of the L2-SVM on ``K~ = Z Z^T``.

    ``r_i = y_i - beta_i / (M^{-1})_ii`` on the support set (``(M^{-1})_ii`` by Woodbury) and the
    full model's output ``f(x_i) = z_i^T Z_S^T beta + b`` elsewhere; ``O(n m)`` given the factor.
    """
    S, beta, b = lowrank_support_system(sol)
    Z = np.asarray(Z, dtype=float)
    out = Z @ (Z[S].T @ beta) + b
    diag = safe_diagonal(sol.factor.inverse_diagonal())
    out[S] = sol.y[S] - beta / diag
    return out


def lowrank_loo_gradient(sol: DualSolution, nf: NystroemFactor, dLdr: np.ndarray) -> np.ndarray:
    """Exact ``dJ / d(log sigma, log C)`` of ``J = sum_i J_i(r_i)`` for a fixed support set.

    The low-rank counterpart of :func:`svmtune.loo.rbsvm_gradient.loo_gradient` (same ``c``, ``g``,
    ``v``), with ``dK~`` of the module docstring (landmarks fixed); ``O(n m^2)`` time,
    ``O(n m)`` memory.

    Parameters
    ----------
    sol : DualSolution
        From :func:`fit_l2_svm_lowrank` on ``nf.Z``.
    nf : NystroemFactor
    dLdr : array (n,)
        ``c_i = dJ/dr_i``.

    Returns
    -------
    ndarray (2,)
    """
    if not isinstance(nf, NystroemFactor):
        raise TypeError(
            f"nf must be the NystroemFactor of nystroem_factor, got {type(nf).__name__}"
        )
    S, beta, _ = lowrank_support_system(sol)
    fac: WoodburyFactor = sol.factor
    Z = nf.Z
    n = Z.shape[0]
    c = np.asarray(dLdr, dtype=float)
    N = np.flatnonzero(~sol.support)
    diag = safe_diagonal(fac.inverse_diagonal())
    cS, cN = c[S], c[N]
    g = cS * beta / diag**2
    h_top = -cS / diag + Z[S] @ (Z[N].T @ cN)
    h_last = float(cN.sum())
    v = fac.apply_B(h_top) + fac.u * h_last / fac.s
    # Gamma X and Gamma^T X for X = G^T (n x m)
    X = nf.G_T
    XS = X[S]
    WXS = fac.apply_B(g[:, None] * fac.apply_B(XS))
    bX = beta @ XS
    Y1 = np.zeros((n, X.shape[1]))
    Y1[S] = -(WXS + np.outer(v, bX))
    Y1[N] = np.outer(cN, bX)
    Y2S = -(WXS + np.outer(beta, v @ XS)) + np.outer(beta, cN @ X[N])
    P, Q = nf.dlogsigma()
    d_sigma = float(np.sum(P * Y1)) + float(np.sum(P[S] * Y2S)) - float(np.sum(Q * (X.T @ Y1)))
    dS = sol.H_diag[S]
    d_C = float(np.sum(dS * (fac.weighted_square_diagonal(g) + v * beta)))
    return np.array([d_sigma, d_C])


@dataclass
class LowRankObjective(TaskSolutions):
    """Value, gradient and by-products of :func:`lowrank_rbsvm_objective` at one ``theta``."""

    value: float
    grad: np.ndarray | None
    loo: list[np.ndarray]
    solutions: list[DualSolution]
    theta: np.ndarray
    #: trace residual / n of the landmarks at this width (:attr:`NystroemFactor.trace_residual`)
    rank_residual: float = float("nan")


def lowrank_rbsvm_objective(
    D2_nm: np.ndarray,
    D2_mm: np.ndarray,
    tasks: Sequence[np.ndarray],
    theta: Sequence[float] | np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    init_support: Sequence[np.ndarray | None] | None = None,
    loss: str = "cross_entropy",
    nonsupport: str = "model",
    gradient: bool = True,
    jitter: float = 1e-8,
    tol: float = 1e-8,
    groups: np.ndarray | None = None,
) -> LowRankObjective:
    """RBSVM objective (eq. (33)) of the Nystroem L2-SVM and its exact gradient.

    Parameters
    ----------
    D2_nm, D2_mm : ndarray
        Squared distances of the points to the landmarks and among the landmarks.
    tasks : sequence of {-1, +1} vectors
        One per binary / one-vs-rest task (summed, as :func:`svmtune.loo.rbsvm.rbsvm_objective`).
    theta : (log sigma, log C)
    sample_weight, init_support, loss, nonsupport, gradient, tol
        As :func:`svmtune.loo.rbsvm.rbsvm_objective`.
    jitter : float
        Added to ``K_mm`` before its Cholesky factorisation.
    groups : array (n,), optional
        A group label per point: ``J`` sums the leave-one-group-out outputs instead
        (:func:`svmtune.loo.rbsvm_groups.lowrank_lgo`); needs ``nonsupport="model"``.

    Returns
    -------
    LowRankObjective
    """
    check_loss(loss)
    check_nonsupport(nonsupport)
    n = np.shape(D2_nm)[0]
    codes = rbsvm_groups.objective_codes(groups, n, nonsupport)
    checked = check_lowrank_inputs(D2_nm, D2_mm, tasks, theta, sample_weight, init_support, jitter)
    return _lowrank_rbsvm_objective(
        checked,
        loss=loss,
        nonsupport=nonsupport,
        codes=codes,
        gradient=gradient,
        jitter=jitter,
        tol=tol,
    )


def _lowrank_rbsvm_objective(
    inputs: LowRankInputs,
    *,
    loss: str,
    nonsupport: str,
    codes: np.ndarray | None,
    gradient: bool = True,
    jitter: float = 1e-8,
    tol: float = 1e-8,
) -> LowRankObjective:
    """:func:`lowrank_rbsvm_objective` on checked inputs: the objective evaluation of
    :class:`svmtune.methods.rbsvm_lowrank.RBSVMLowRank`'s search (RBSVM eq. (27)-(33)).

    ``inputs`` are those of :func:`svmtune.lowrank._solver._fit_tasks_lowrank` (the
    landmarks' distances checked when the search chose them, the tasks, weights and warm
    starts built or checked at the search's entry), ``loss``, ``nonsupport`` valid options
    and ``codes`` the group codes of :func:`svmtune.loo.rbsvm_groups.objective_codes` (or
    None): no evaluation repeats their checks nor the ``O(n)`` encoding of the groups
    (issue #55).
    """
    nf, sols = _fit_tasks_lowrank(inputs, jitter=jitter, tol=tol, derivatives=gradient)
    n = nf.Z.shape[0]
    weights = np.ones(n) if inputs.w is None else inputs.w
    value, grad = 0.0, (np.zeros(2) if gradient else None)
    loo = []
    for sol in sols:
        if codes is None:
            r = lowrank_loo(sol, nf.Z)
        else:
            r, red, rows = rbsvm_groups._lowrank_lgo_terms(sol, nf.Z, codes)
        L, dL = objective_terms(sol, r, loss, nonsupport)
        value += float(weights @ L)
        if gradient and codes is None:
            grad += lowrank_loo_gradient(sol, nf, weights * dL)
        elif gradient:
            grad += rbsvm_groups._lowrank_lgo_gradient(sol, nf, weights * dL, codes, red, rows)
        loo.append(r)
    return LowRankObjective(
        value=value,
        grad=grad,
        loo=loo,
        solutions=sols,
        theta=inputs.theta.copy(),
        rank_residual=nf.trace_residual,
    )
