"""Smoothed span estimate of the L2-SVM on a low-rank (Nystroem) kernel, with exact gradient.

The low-rank counterpart of :func:`svmtune.loo.span.smoothed_span` (Chapelle, Vapnik,
Bousquet & Mukherjee, "Choosing multiple parameters for support vector machines", Machine
Learning 46 (2002) -- *Chapelle et al. 2002* -- summarised in RBSVM §II-C..D), for the L2-SVM
on ``K~ = Z Z^T`` of :mod:`svmtune.lowrank` (fixed landmarks, ``Z = K_nm R^{-1}``).  Same
definition, constants (:data:`svmtune.loo.span.SPAN_A`, ``SPAN_B``, ``SPAN_ETA``) and weighting
conventions:

    T = sum_p w_p Psi(alpha_p S~_p^2 - 1) / sum_p w_p          (RBSVM eq. (14), smoothed)

with the sigmoid ``Psi(x) = 1 / (1 + exp(-A x + B))``, non-support vectors contributing
``Psi(-1)``, and the regularised span

    S~_p^2 = 1 / ((M + D)^{-1})_pp - D_pp,   D = diag(eta / alpha_p),
    M = [[H_SS, 1], [1^T, 0]],  H = K~ + diag(1 / (C w_i))      (RBSVM eq. (7), (22))

(Chapelle et al. 2002, span lemma and its regularisation; RBSVM eq. (11), (13)).

**Low-rank evaluation.**  On the support set ``H_SS + D = Z_S Z_S^T + diag(d_S + eta/alpha_S)``
is a positive diagonal plus a rank-``m`` term, so ``M + D`` is factored by
:class:`svmtune.lowrank.WoodburyFactor` (Woodbury identity, bordered by the bias row):
``G = ((M + D)^{-1})_SS = diag(1/e) - E E^T`` with ``E`` of shape ``(|S|, m + 1)``.  Its diagonal,
products ``G X`` and ``diag(G diag(w) G)`` cost ``O(|S| m^2)``; no ``n x n`` or ``|S| x |S|``
matrix is formed.

**Exact gradient** in ``theta = (log sigma, log C)`` for a fixed support set (the derivation of
:func:`svmtune.loo.span.smoothed_span`): with ``g_p = G_pp``, ``c_p = w_p Psi'(u_p - 1)``,
``Bm = G diag(c alpha / g^2) G``, ``r_p = c_p / g_p - eta Bm_pp / alpha_p^2`` (the ``d alpha``
terms, including ``dD = -eta d alpha / alpha^2``) and ``v = (M^{-1})_SS (y r)`` (one solve with
the SVM's own Woodbury factor; the adjoint of its KKT system ``M [beta; b] = [y; 0]``),

    dT = <dH_SS, Bm> - v^T dH_SS beta_S.

``dH/dlog C = -diag(d)`` gives ``dT/dlog C = -sum_p d_p Bm_pp + sum_i d_i v_i beta_i``.  For
``log sigma`` the landmarks are held fixed and ``K~`` is differentiated exactly, as in
:mod:`svmtune.lowrank`:

    dK~ = P X^T + X P^T - X Q X^T,   P = dK_nm, Q = dK_mm, X = G^T = K_nm (K_mm + jitter I)^{-1},

so for the symmetric ``Bm`` ``<dK~_SS, Bm> = 2 <P_S, Bm X_S> - <Q, X_S^T Bm X_S>`` (``Bm X_S``
by two Woodbury products, ``O(|S| m^2)``) and for the rank-one ``v beta^T``
``v^T dK~_SS beta = (P_S^T v).(X_S^T beta) + (X_S^T v).(P_S^T beta) - (X_S^T v)^T Q (X_S^T beta)``.
Total ``O(n m^2)`` time (the SVM fit) and ``O(n m)`` memory.  ``T`` is the smoothed span estimate
*of the approximate kernel*; with every point a landmark and ``jitter = 0`` it is the exact
:func:`svmtune.loo.span.smoothed_span`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from svmtune._dual_solution import DualSolution
from svmtune._factor import WoodburyFactor
from svmtune._validation import validate_sample_weight
from svmtune.kernels import rbf_dlogsigma
from svmtune.loo.closed_form import _check_encoded_labels, loo_error_rate
from svmtune.loo.rbsvm_lowrank import LowRankObjective, lowrank_loo
from svmtune.loo.span import (
    SPAN_A,
    SPAN_B,
    SPAN_ETA,
    SmoothedSpan,
    check_span_constants,
    sigmoid_step,
    span_terms,
)
from svmtune.lowrank import NystroemFactor, check_lowrank_solution
from svmtune.lowrank._solver import LowRankInputs, _fit_tasks_lowrank, check_lowrank_inputs

__all__ = [
    "LowRankSpanObjective",
    "lowrank_smoothed_span",
    "lowrank_span_objective",
    "lowrank_span_rule_error",
]


def lowrank_smoothed_span(
    nf: NystroemFactor,
    sol: DualSolution,
    *,
    gradient: bool = True,
    eta: float = SPAN_ETA,
    A: float = SPAN_A,
    B: float = SPAN_B,
    sample_weight: np.ndarray | None = None,
) -> SmoothedSpan:
    """Smoothed span estimate (Chapelle et al. 2002) of the Nystroem L2-SVM and its gradient.

    ``T = sum_p w_p Psi(alpha_p S~_p^2 - 1) / sum_p w_p`` (RBSVM eq. (14) with the sigmoid and
    the regularised span of the module docstring), computed and differentiated in
    ``O(|S| m^2)`` time and ``O(n m)`` memory given the SVM (module docstring).

    Parameters
    ----------
    nf : NystroemFactor
        The low-rank kernel ``K~ = nf.Z nf.Z^T`` (:func:`svmtune.lowrank.nystroem_factor`); its
        landmarks are held fixed in the ``log sigma`` derivative.
    sol : DualSolution
        L2-SVM on ``nf.Z`` from :func:`svmtune.lowrank.fit_l2_svm_lowrank` (its
        :class:`svmtune.lowrank.WoodburyFactor` is reused for the adjoint solve).
    gradient : bool
        Whether to compute ``dT / d(log sigma, log C)``.
    eta : float
        Span regulariser (``>= 0``; ``eta = 0`` gives the sigmoid of the plain span).
    A, B : float
        Sigmoid slope (``> 0``) and offset.
    sample_weight : array (n,), optional
        Weights of the terms (normalised to sum 1); default ``1/n`` each, as
        :func:`svmtune.loo.span.smoothed_span`.  Pass the weights the SVM was trained with.

    Returns
    -------
    SmoothedSpan
        ``grad`` is ``(dT/dlog sigma, dT/dlog C)`` for a fixed support set, or an empty array
        when ``gradient`` is false; ``span2`` the regularised spans of the support vectors in
        index order (``nan`` where ``alpha_p`` is at round-off level).
    """
    n = np.shape(nf.Z)[0]
    check_lowrank_solution(sol, n)
    check_span_constants(eta, A, B)
    w = validate_sample_weight(sample_weight, n)
    return _lowrank_smoothed_span(nf, sol, w, gradient=gradient, eta=eta, A=A, B=B)


def _lowrank_smoothed_span(
    nf: NystroemFactor,
    sol: DualSolution,
    w: np.ndarray | None,
    *,
    gradient: bool,
    eta: float,
    A: float,
    B: float,
) -> SmoothedSpan:
    """:func:`lowrank_smoothed_span` on checked inputs (issue #55): a low-rank solution
    ``sol`` on ``nf.Z`` (:func:`svmtune.lowrank.check_lowrank_solution`), weights ``w`` of
    :func:`svmtune._validation.validate_sample_weight` (or None) and valid constants
    (:func:`svmtune.loo.span.check_span_constants`) -- as
    :func:`_lowrank_span_objective` has them from its own fits and its search's entry, so
    that no evaluation checks them again.  Chapelle et al. 2002 (module docstring).
    """
    Z = np.asarray(nf.Z, dtype=float)
    wt, S, beta_S, keep = span_terms(sol, eta, w)
    P = S[keep]
    aP = sol.alpha[P]
    span2 = np.full(S.shape[0], np.nan)
    psi_out = float(sigmoid_step(np.array([-1.0]), A, B)[0])
    grad = np.zeros(2) if gradient else np.zeros(0)
    if P.size == 0:
        return SmoothedSpan(value=psi_out, grad=grad, span2=span2)

    d = sol.H_diag
    Dp = eta / aP if eta > 0 else np.zeros(P.size)
    if eta == 0 and keep.all():
        fac = sol.factor  # M itself
    else:
        fac = WoodburyFactor.from_lowrank(Z[P], d[P] + Dp)  # M + D, Woodbury
    g = fac.inverse_diagonal()
    u = aP / g - eta  # alpha_p S~_p^2
    span2[keep] = 1.0 / g - Dp
    psi = sigmoid_step(u - 1.0, A, B)
    wP = wt[P]
    value = float(wP @ psi + (1.0 - wP.sum()) * psi_out)
    if not gradient:
        return SmoothedSpan(value=value, grad=grad, span2=span2)

    c = wP * A * psi * (1.0 - psi)
    wv = c * aP / g**2  # Bm = G diag(wv) G
    dBm = fac.weighted_square_diagonal(wv)
    r = c / g
    if eta > 0:
        r = r - eta * dBm / aP**2
    rr = np.zeros(S.shape[0])
    rr[keep] = sol.y[P] * r
    v, _ = sol.factor.solve(rr, 0.0)

    # d / dlog C: dH_SS = -diag(d_S)
    grad[1] = float(-(d[P] @ dBm) + (d[S] * v) @ beta_S)

    # d / dlog sigma: dK~ = P X^T + X P^T - X Q X^T (landmarks fixed), support rows only
    sigma = nf.sigma
    XS = nf.G_T[S]
    PS = rbf_dlogsigma(nf.K_nm[S], nf.D2_nm[S], sigma)
    Q = rbf_dlogsigma(nf.K_mm, nf.D2_mm, sigma)
    XP, PP = XS[keep], PS[keep]
    BmX = fac.apply_B(wv[:, None] * fac.apply_B(XP))
    t_span = 2.0 * float(np.sum(PP * BmX)) - float(np.sum(Q * (XP.T @ BmX)))
    a, bv = XS.T @ beta_S, XS.T @ v
    t_alpha = float((PS.T @ v) @ a + bv @ (PS.T @ beta_S) - bv @ Q @ a)
    grad[0] = t_span - t_alpha
    return SmoothedSpan(value=value, grad=grad, span2=span2)


def lowrank_span_rule_error(
    solutions: Sequence[DualSolution],
    Z: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> float:
    """Span-rule LOO error of the (one-vs-rest) L2-SVM on ``K~ = Z Z^T``.

    The low-rank counterpart of :func:`svmtune.loo.span.span_rule_error_ovr`: one task counts
    ``alpha_p S_p^2 - 1 > 0`` on the support set (``S_p^2 = 1/(M^{-1})_pp`` by Woodbury;
    Chapelle et al. 2002, RBSVM eq. (14) with the step function) and ``y_i f(x_i) < 0``
    elsewhere; several tasks take the one-vs-rest argmax of the span-rule LOO outputs
    (RBSVM eq. (27), :func:`svmtune.loo.rbsvm_lowrank.lowrank_loo`).  ``O(n m)`` given the factors.

    Parameters
    ----------
    solutions : sequence of DualSolution
        From :func:`svmtune.lowrank.fit_l2_svm_lowrank`, one per task.
    Z : ndarray (n, m)
    y : array (n,)
        Encoded labels ``0..k-1``.
    sample_weight : array (n,), optional
        Weighted error rate.

    Raises
    ------
    ValueError
        If ``solutions`` is empty or not low-rank solutions on ``Z``, ``Z`` holds NaN or
        infinity, ``y`` is not ``n`` encoded labels in ``0..k-1`` or ``sample_weight`` is not
        ``n`` finite non-negative weights with a positive sum.
    """
    Z = np.asarray(Z, dtype=float)
    if isinstance(solutions, DualSolution) or not len(solutions):
        raise ValueError("solutions must be a non-empty list of DualSolution, one per task")
    if Z.ndim != 2:
        raise ValueError(f"Z must be the (n, m) feature matrix, got shape {Z.shape}")
    for sol in solutions:
        check_lowrank_solution(sol, Z.shape[0])
    if not np.all(np.isfinite(Z)):
        raise ValueError("Z contains NaN or infinite entries")
    _check_encoded_labels(y, Z.shape[0], max(len(solutions), 2))
    sample_weight = validate_sample_weight(sample_weight, Z.shape[0])
    if len(solutions) > 1:
        return loo_error_rate(y, [lowrank_loo(s, Z) for s in solutions], sample_weight)
    sol = solutions[0]
    S = np.flatnonzero(sol.support)
    beta = sol.y[S] * sol.alpha[S]
    wrong = sol.y * (Z @ (Z[S].T @ beta) + sol.b) < 0.0
    wrong[S] = sol.alpha[S] / sol.factor.inverse_diagonal() - 1.0 > 0.0
    if sample_weight is None:
        return float(np.mean(wrong))
    w = np.asarray(sample_weight, dtype=float)
    return float(w @ wrong / w.sum())


@dataclass
class LowRankSpanObjective(LowRankObjective):
    """:class:`svmtune.loo.rbsvm_lowrank.LowRankObjective` of :func:`lowrank_span_objective`,
    with the features ``Z`` it was computed on (for :func:`lowrank_span_rule_error` at the same
    point).
    """

    Z: np.ndarray | None = None


def lowrank_span_objective(
    D2_nm: np.ndarray,
    D2_mm: np.ndarray,
    tasks: Sequence[np.ndarray],
    theta: Sequence[float] | np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    init_support: Sequence[np.ndarray | None] | None = None,
    eta: float = SPAN_ETA,
    A: float = SPAN_A,
    B: float = SPAN_B,
    gradient: bool = True,
    jitter: float = 1e-8,
    tol: float = 1e-8,
) -> LowRankSpanObjective:
    """Smoothed span estimate of the Nystroem L2-SVM, summed over tasks, and its gradient.

    Trains the L2-SVM of every (one-vs-rest) task on ``K~`` at ``theta`` with
    :func:`svmtune.lowrank.fit_l2_svm_lowrank` and sums :func:`lowrank_smoothed_span` over the
    tasks, as :class:`svmtune.methods.gradient_baselines.SpanSVM` sums
    :func:`svmtune.loo.span.smoothed_span`.

    Parameters
    ----------
    D2_nm, D2_mm : ndarray
        Squared distances of the points to the landmarks and among the landmarks.
    tasks : sequence of {-1, +1} vectors
        One per binary / one-vs-rest task.
    theta : (log sigma, log C)
    sample_weight : array (n,), optional
        Per-sample weights, both of the SVM (``d_i = 1/(C w_i)``) and of the span terms.
    init_support : sequence of bool masks or None, optional
        Warm-start support set per task.
    eta, A, B : float
        As :func:`lowrank_smoothed_span`.
    gradient : bool
    jitter : float
        Added to ``K_mm`` before its Cholesky factorisation.
    tol : float
        KKT tolerance of the solver.

    Returns
    -------
    LowRankSpanObjective
        ``value`` the summed ``T``, ``grad`` its ``(log sigma, log C)`` gradient (None if not
        requested), ``loo`` the span-rule LOO outputs per task (RBSVM eq. (27)), ``solutions``
        and the features ``Z``.
    """
    check_span_constants(eta, A, B)
    checked = check_lowrank_inputs(D2_nm, D2_mm, tasks, theta, sample_weight, init_support, jitter)
    return _lowrank_span_objective(
        checked, eta=eta, A=A, B=B, gradient=gradient, jitter=jitter, tol=tol
    )


def _lowrank_span_objective(
    inputs: LowRankInputs,
    *,
    eta: float,
    A: float,
    B: float,
    gradient: bool = True,
    jitter: float = 1e-8,
    tol: float = 1e-8,
) -> LowRankSpanObjective:
    """:func:`lowrank_span_objective` on checked inputs: the objective evaluation of
    :class:`svmtune.methods.span_lowrank.SpanSVMLowRank`'s search (Chapelle et al. 2002).

    ``inputs`` are those of :func:`svmtune.lowrank._solver._fit_tasks_lowrank` (checked when
    the search chose its landmarks or at its entry), ``eta``, ``A``, ``B`` the constants
    checked by the selector's options: no evaluation repeats their checks (issue #55).
    """
    nf, sols = _fit_tasks_lowrank(inputs, jitter=jitter, tol=tol)
    value, grad = 0.0, (np.zeros(2) if gradient else None)
    loo = []
    for sol in sols:
        out = _lowrank_smoothed_span(nf, sol, inputs.w, gradient=gradient, eta=eta, A=A, B=B)
        value += out.value
        if gradient:
            grad += out.grad
        loo.append(lowrank_loo(sol, nf.Z))
    return LowRankSpanObjective(
        value=value,
        grad=grad,
        loo=loo,
        solutions=sols,
        theta=inputs.theta.copy(),
        rank_residual=nf.trace_residual,
        Z=nf.Z,
    )
