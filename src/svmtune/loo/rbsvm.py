"""Closed-form leave-one-out outputs of the L2-SVM, the RBSVM objective and its exact gradient.

Notation (RBSVM §III-B).  The L2-SVM is the hard-margin SVM on ``H = K + diag(d)``,
``d_i = 1 / (C w_i)`` (eq. (6)-(7)).  On its support set ``S`` (``m`` points) the KKT
conditions are the linear system

    M [beta; b] = [y_S; 0],   M = [[H_SS, 1], [1^T, 0]],   beta = y_S * alpha_S     (eq. (22))

**Leave-one-out output** (eq. (23)-(27)).  Write ``z = [beta_{-i}; b]`` and ``m_i`` for row ``i``
of ``M`` without its diagonal entry.  If removing support vector ``i`` leaves the other
support vectors' status unchanged, the reduced model solves ``M_{-i} z' = [y_{S-i}; 0]``, so
``z' = z + M_{-i}^{-1} m_i beta_i`` and its output at ``x_i`` (``H_ij = K_ij`` for ``j != i``) is

    f^{-i}(x_i) = m_i^T z' = y_i - beta_i (H_ii - m_i^T M_{-i}^{-1} m_i)
                = y_i - beta_i / (M^{-1})_ii = y_i (1 - alpha_i / (M^{-1})_ii)      (eq. (27))

i.e. eq. (27) with the paper's ``(H^{-1})_ii`` read as the diagonal of the inverse of the
*extended* matrix ``M``.  It is the LOO output of the kernel model
``f(x) = sum_j y_j alpha_j K(x_j, x) + b``, exactly what :func:`~svmtune.loo.brute.brute_force_loo`
computes by retraining.  A non-support vector leaves the solution unchanged when removed, so its
LOO output is the full model's output ``f(x_i)``.  :func:`loo_exact_mask` certifies, without
retraining, at which points eq. (27) is exact (the downdated solution satisfies the KKT
conditions); :func:`decremental_loo` makes the others exact too, by updating the support set
of the downdated model in ``O(m^2)`` per change of ``M^{-1}`` (decremental unlearning, beyond
the paper; eq. (27) remains the RBSVM criterion, whose gradient needs a fixed support set).

**Objective** (eq. (28)-(33)).  ``J = sum_i w_i L(y_i, tanh(r_i))`` with ``r_i`` the LOO output
and the cross-entropy

    L = -[(1+y)/2 log((1+tanh r)/2) + (1-y)/2 log((1-tanh r)/2)] = log(1 + exp(-2 y r)),

evaluated as ``logaddexp(0, -2 y r)``, which is exact for any ``r`` and needs no clipping of
``tanh r`` away from +-1; ``dL/dr = tanh(r) - y`` (eq. (31)).

**Exact gradient.**  The printed gradient (35)-(36) keeps only ``dH_ii``, which is zero for the
RBF width (``K_ii = 1``), so it cannot move sigma (see the reading notes).  For a fixed support
set everything depends on ``theta`` through ``M``: with ``dM = [[dH_SS, 0], [0, 0]]``,

    d(M^{-1}) = -M^{-1} dM M^{-1},     d[beta; b] = -M^{-1} dM [beta; b],
    d r_i = -d beta_i / (M^{-1})_ii + beta_i d(M^{-1})_ii / (M^{-1})_ii^2       (i in S)
    d r_i = dK_iS beta + K_iS d beta + d b                                      (i not in S)

With ``c_i = w_i dL/dr_i``, ``B`` the top-left ``m x m`` block of ``M^{-1}``,
``g = c_S beta / diag(B)^2``, ``h = [-c_S / diag(B) + K_NS^T c_N; sum c_N]`` and
``v = (M^{-1} h)_{1..m}`` (an adjoint solve), every hyperparameter's derivative is

    dJ = -<dH_SS, B diag(g) B + v beta^T> + c_N^T dK_NS beta.

``B diag(g) B``, ``v`` and ``K_NS^T c_N`` are computed once per step (one factorisation of
``M``, reused from the solver, plus one ``O(m^3)`` inverse), after which each hyperparameter
costs ``O(m^2)`` plus an ``O(n m)`` product.  For ``log sigma`` ``dH = dK/dlog sigma``
(:func:`svmtune.kernels.rbf_dlogsigma`); for ``log C`` ``dH = -diag(d)`` on ``S`` and
``dK_NS = 0``.

``J`` is smooth while the support set stays fixed but jumps where it changes: the diagonal of
``M^{-1}`` of the other support vectors changes discontinuously when a point with
``alpha_j -> 0`` leaves ``S`` (eq. (27) keeps ``j`` as a support vector of the reduced model).
The jumps are small (a fraction of a per cent of ``J`` on the data sets tried) but a line search
must tolerate them (:func:`svmtune.search.gradient.minimize_log_params` does).

Multiclass problems sum ``J`` and its gradient over one-vs-rest tasks sharing one kernel
matrix, so a single ``(sigma, C)`` is learned for all classes (RBSVM §IV-A).

**Non-support vectors in J.**  The paper's ``J`` (eq. (33)) sums eq. (29) over all ``m``
training points with ``r_i`` from eq. (27)/(30), ``r_i = y_i (1 - alpha_i / (H^{-1})_ii)``.
Read literally for a non-support vector (``alpha_i = 0``) that is ``r_i = y_i``: its term is
the constant ``log(1 + e^{-2})`` whatever its margin, and it adds nothing to the gradient.
The exact LOO output of a non-support vector is the full model's output ``f(x_i)``
(``y_i f(x_i) >= 1``), whose term falls below that constant as the margin grows.
:func:`rbsvm_objective` uses the exact output by default (``nonsupport="model"``) and the
literal reading with ``nonsupport="label"``; the paper does not say which it computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from svmtune._factor import sandwich
from svmtune._support import (
    LOSSES,
    NONSUPPORT,
    DualSolution,
    check_derivative,
    check_group_nonsupport,
    check_l2_solution,
    check_loss,
    check_nonsupport,
    check_pm1,
    loo_loss,
    objective_terms,
    safe_diagonal,
    support_system,
)
from svmtune._validation import validate_sample_weight
from svmtune.kernels import (
    KernelColumns,
    as_kernel,
    kernel_block,
    kernel_columns,
    rbf_columns,
    rbf_dlogsigma,
    rbf_from_sqdist,
)
from svmtune.loo import rbsvm_groups
from svmtune.loo.sphere import _check_kernel
from svmtune.svm import fit_l2_svm

__all__ = [
    "LOSSES",
    "NONSUPPORT",
    "LOOObjective",
    "closed_form_loo",
    "decremental_loo",
    "loo_exact_mask",
    "loo_loss",
    "objective_terms",
    "check_derivative",
    "check_group_nonsupport",
    "check_nonsupport",
    "loo_gradient",
    "rbf_l2_derivatives",
    "rbsvm_objective",
    "loo_predictions",
    "loo_error_rate",
]


# ---------------------------------------------------------------------------------------------
# Closed-form LOO outputs
# ---------------------------------------------------------------------------------------------
def _check_encoded_labels(y, n: int, n_classes: int) -> np.ndarray:
    """``y`` after checking it holds ``n`` encoded labels, integers in ``0..n_classes-1``."""
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y has shape {y.shape}; expected ({n},), one encoded label per point")
    ok = y.dtype.kind in "biu" or (y.dtype.kind == "f" and np.all(np.isfinite(y)))
    if not ok or not np.all((y >= 0) & (y < n_classes) & (y == np.floor(y))):
        shown = np.unique(y)[:6] if y.dtype.kind in "biuf" else f"of dtype {y.dtype}"
        raise ValueError(
            f"y must hold encoded labels, integers 0..{n_classes - 1} ({n_classes} classes), "
            f"got {shown}; encode them, e.g. with np.unique(y, return_inverse=True)[1]"
        )
    return y


def closed_form_loo(
    sol: DualSolution, K: np.ndarray | KernelColumns, *, inverse: np.ndarray | None = None
) -> np.ndarray:
    """Leave-one-out decision values of an L2-SVM without retraining (RBSVM eq. (27)).

    Parameters
    ----------
    sol : DualSolution
        From :func:`svmtune.svm.fit_l2_svm` (its ``factor`` is reused).
    K : ndarray (n, n) or KernelColumns
        The kernel matrix the SVM was trained on (without the ``1/C`` ridge); read at the
        support columns only.
    inverse : ndarray (m+1, m+1), optional
        ``M^{-1}`` if already computed (only its diagonal is used).

    Returns
    -------
    ndarray of shape (n,)
        ``r_i = y_i (1 - alpha_i / (M^{-1})_ii)`` for support vectors (exact when removing ``i``
        leaves the other points' support status unchanged -- see :func:`loo_exact_mask` -- an
        estimate otherwise) and the full model's output ``f(x_i)`` for the other points
        (exact).

    Raises
    ------
    ValueError
        If ``sol`` is not an L2-SVM solution, or ``K`` is not its ``(n, n)`` finite kernel
        matrix.
    """
    check_l2_solution(sol)
    K = _check_kernel(K, sol.y.shape[0])
    return _closed_form_loo(sol, K, inverse)


def _closed_form_loo(
    sol: DualSolution, K: np.ndarray | KernelColumns, inverse: np.ndarray | None
) -> np.ndarray:
    """:func:`closed_form_loo` on checked inputs."""
    S, beta, b = support_system(sol)
    out = kernel_columns(K, S) @ beta + b
    diag = sol.factor.inverse_diagonal() if inverse is None else np.diag(inverse)[: S.size]
    diag = safe_diagonal(np.asarray(diag, dtype=float))
    out[S] = sol.y[S] - beta / diag
    return out


def loo_exact_mask(
    sol: DualSolution,
    K: np.ndarray | KernelColumns,
    *,
    tol: float = 1e-8,
    inverse: np.ndarray | None = None,
) -> np.ndarray:
    """Points whose closed-form LOO output (eq. (27)) is provably the exact LOO output.

    Removing support vector ``i`` changes the support-set solution by the rank-one downdate
    ``[beta'; b'] = [beta; b] - M^{-1} e_i beta_i / (M^{-1})_ii`` (restricted to ``S - {i}``).
    That reduced solution is the L2-SVM trained without ``i`` -- and eq. (27) is exact -- iff it
    satisfies the KKT conditions: ``y_j beta'_j >= 0`` on ``S - {i}`` and
    ``y_j f'(x_j) >= 1`` off ``S``.  Checking all ``i`` at once costs one ``O(n m^2)`` product;
    no retraining.  Non-support vectors are always exact.

    Parameters
    ----------
    sol : DualSolution
        L2-SVM solution.
    K : ndarray (n, n) or KernelColumns
        Read at the support columns only.
    tol : float
        KKT tolerance (that of the solver).
    inverse : ndarray, optional
        ``M^{-1}`` if already computed.

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    check_l2_solution(sol)
    K = _check_kernel(K, sol.y.shape[0])
    return _loo_exact_mask(sol, K, tol, inverse)


def _loo_exact_mask(
    sol: DualSolution, K: np.ndarray | KernelColumns, tol: float, inverse: np.ndarray | None
) -> np.ndarray:
    """:func:`loo_exact_mask` on checked inputs."""
    y = sol.y
    S, beta, b = support_system(sol)
    m = S.size
    N = np.flatnonzero(~sol.support & np.isfinite(sol.H_diag))
    Minv = sol.factor.inverse() if inverse is None else np.asarray(inverse, dtype=float)
    diag = safe_diagonal(np.diag(Minv)[:m].copy())
    step = beta / diag  # column i of the downdate is -Minv[:, i] * step_i
    # y_j beta'_j for j in S (rows) after removing i (columns)
    Bnew = beta[:, None] - Minv[:m, :m] * step[None, :]
    ok_sv = (y[S][:, None] * Bnew >= -tol) | np.eye(m, dtype=bool)
    exact = np.ones(y.shape[0], dtype=bool)
    exact_S = ok_sv.all(axis=0)
    if N.size:
        KNS = kernel_block(K, N, S)
        f_N = KNS @ beta + b
        G = KNS @ Minv[:m, :m] + Minv[m, :m][None, :]
        Fnew = f_N[:, None] - G * step[None, :]
        exact_S &= (y[N][:, None] * Fnew >= 1.0 - tol).all(axis=0)
    exact[S] = exact_S
    return exact


def _drop_row(Q: np.ndarray, p: int) -> np.ndarray:
    """Inverse of a symmetric matrix with row and column ``p`` removed, from its inverse ``Q``:
    ``Q_{-p,-p} - Q_{-p,p} Q_{p,-p} / Q_pp`` (``O(m^2)``)."""
    keep = np.arange(Q.shape[0]) != p
    col = Q[keep, p]
    return Q[np.ix_(keep, keep)] - np.outer(col, col) / Q[p, p]


def _add_row(Q: np.ndarray, u: np.ndarray, d: float) -> np.ndarray | None:
    """Inverse of ``[[M, u], [u^T, d]]`` from ``Q = M^{-1}`` by the bordering (Schur
    complement) formula, ``O(m^2)``; None if the Schur complement is not positive."""
    Qu = Q @ u
    s = d - float(u @ Qu)
    if not s > 1e-12 * max(abs(d), 1.0):
        return None
    m = Q.shape[0]
    out = np.empty((m + 1, m + 1))
    out[:m, :m] = Q + np.outer(Qu, Qu) / s
    out[:m, m] = out[m, :m] = -Qu / s
    out[m, m] = 1.0 / s
    return out


def decremental_loo(
    sol: DualSolution,
    K: np.ndarray,
    *,
    tol: float = 1e-8,
    max_iter: int = 25,
    inverse: np.ndarray | None = None,
) -> tuple[np.ndarray, dict]:
    """Exact leave-one-out outputs of an L2-SVM by decremental unlearning, without retraining.

    Eq. (27) (:func:`closed_form_loo`) is exact at the points :func:`loo_exact_mask` certifies.
    At every other support vector ``i`` the rank-one downdate of ``M^{-1}`` gives the reduced
    model on ``S - {i}``; that model violates the KKT conditions (a support vector with
    ``alpha < 0`` or a point with ``y f < 1``), and the support set is corrected by the
    primal-dual active-set iteration of :func:`svmtune.svm.fit_l2_svm` -- drop the negative
    ``alpha``, add the margin violators -- with each change applied to the inverse in ``O(m^2)``
    (bordering / Schur-complement downdate) instead of a new factorisation: decremental
    learning in the sense of Cauwenberghs & Poggio (NIPS 2000), who used it for exact LOO.
    The result is the exact LOO output (KKT-verified at tolerance ``tol``); where the iteration
    does not settle within ``max_iter`` changes of the support set or an update is numerically
    unsafe, that point is retrained by :func:`svmtune.svm.fit_l2_svm` warm-started from the
    current support set (counted in ``info["retrained"]``).

    Parameters
    ----------
    sol : DualSolution
        From :func:`svmtune.svm.fit_l2_svm`.
    K : ndarray (n, n)
        Kernel matrix the SVM was trained on (without the ridge).
    tol : float
        KKT tolerance (that of the solver).
    max_iter : int
        Active-set iterations per corrected point before falling back to retraining.
    inverse : ndarray, optional
        ``M^{-1}`` if already computed.

    Returns
    -------
    r : ndarray of shape (n,)
        Exact ``f^{-i}(x_i)`` for every point.
    info : dict
        ``corrected`` (points where eq. (27) was not certified and the support set was
        updated), ``changes`` (support-set changes applied in total), ``retrained``.
    """
    check_l2_solution(sol)
    y = sol.y
    n = y.shape[0]
    if isinstance(K, KernelColumns):
        raise ValueError("decremental_loo needs the whole kernel matrix K, not KernelColumns")
    K = _check_kernel(K, n)
    S = np.flatnonzero(sol.support)
    Minv = sol.factor.inverse() if inverse is None else np.asarray(inverse, dtype=float)
    r = _closed_form_loo(sol, K, Minv)
    exact = _loo_exact_mask(sol, K, tol, Minv)
    usable = np.isfinite(sol.H_diag)  # zero-weight points never become support vectors
    info = {"corrected": 0, "changes": 0, "retrained": 0}
    for p, i in enumerate(S):
        if exact[i]:
            continue
        info["corrected"] += 1
        Q = _drop_row(Minv, p)
        idx = np.append(np.delete(S, p), -1)  # rows of Q: support points, then b
        settled = False
        for _ in range(max_iter):
            z = Q @ np.where(idx >= 0, y[idx], 0.0)
            if not np.all(np.isfinite(z)):
                break  # a degenerate support set (e.g. emptied): retrain below
            on = idx >= 0
            A, beta, b = idx[on], z[on], float(z[~on][0])
            outside = usable.copy()
            outside[A] = False
            outside[i] = False
            O = np.flatnonzero(outside)
            neg = A[y[A] * beta < -tol]
            viol = O[y[O] * (K[np.ix_(O, A)] @ beta + b) < 1.0 - tol] if O.size else O
            if neg.size == 0 and viol.size == 0:
                settled = True
                break
            for j in neg:
                q = int(np.flatnonzero(idx == j)[0])
                Q, idx = _drop_row(Q, q), np.delete(idx, q)
            for j in viol:
                u = np.where(idx >= 0, K[j, np.maximum(idx, 0)], 1.0)
                Q2 = _add_row(Q, u, K[j, j] + sol.H_diag[j])
                if Q2 is None:
                    break
                Q, idx = Q2, np.append(idx, j)
            else:
                info["changes"] += neg.size + viol.size
                continue
            break  # unsafe update: retrain below
        if settled:
            r[i] = float(K[i, A] @ beta + b)
            continue
        info["retrained"] += 1
        keep = np.arange(n) != i
        # the ridge 1 / (C w_j) is H_diag: C = 1 with weights 1 / H_diag reproduces it
        red = fit_l2_svm(
            K[np.ix_(keep, keep)],
            y[keep],
            1.0,
            sample_weight=1.0 / sol.H_diag[keep],
            init_support=sol.support[keep],
            tol=tol,
        )
        r[i] = float(red.decision_function(K[i : i + 1, keep])[0])
    return r, info


# ---------------------------------------------------------------------------------------------
# Exact gradient
# ---------------------------------------------------------------------------------------------
def loo_gradient(
    sol: DualSolution,
    K: np.ndarray | KernelColumns,
    dH: Sequence[np.ndarray],
    dLdr: np.ndarray,
    *,
    inverse: np.ndarray | None = None,
) -> np.ndarray:
    """Exact gradient of ``sum_i c_i r_i``-type objectives for a fixed support set.

    Given ``c = dJ/dr`` (per-point derivative of the objective with respect to the
    closed-form LOO outputs ``r`` of :func:`closed_form_loo`), returns
    ``dJ/dtheta_k = sum_i c_i dr_i/dtheta_k`` for each hyperparameter, through
    ``d(M^{-1}) = -M^{-1} dM M^{-1}`` and ``d[beta; b] = -M^{-1} dM [beta; b]`` (module
    docstring; replaces RBSVM eq. (35)-(36)).

    Parameters
    ----------
    sol : DualSolution
        L2-SVM solution (support set ``S`` of size ``m``).
    K : ndarray (n, n) or KernelColumns
        Kernel matrix (read at the support columns only).
    dH : sequence of arrays
        One derivative per hyperparameter: an ``(n, m)`` array ``dH[:, S]`` (columns of the
        derivative of ``H = K + diag(d)`` at the support vectors; its rows outside ``S`` are the
        derivative of ``K_NS``), or an ``(m,)`` array for a derivative that only moves the
        diagonal ``H_SS`` (such as ``d/dlog C``).
    dLdr : array (n,)
        ``c_i = dJ/dr_i``.
    inverse : ndarray (m+1, m+1), optional
        ``M^{-1}`` if already computed.

    Returns
    -------
    ndarray of shape (len(dH),)

    Raises
    ------
    ValueError
        If ``K`` is not the solution's ``(n, n)`` finite kernel matrix, ``dLdr`` does not hold
        ``n`` values or a derivative has the wrong shape.
    """
    check_l2_solution(sol)
    n = sol.y.shape[0]
    K = _check_kernel(K, n)
    c = np.asarray(dLdr, dtype=float)
    if c.shape != (n,):
        raise ValueError(f"dLdr has shape {c.shape}; expected ({n},), one derivative per point")
    return _loo_gradient(sol, K, dH, c, inverse)


def _loo_gradient(
    sol: DualSolution,
    K: np.ndarray | KernelColumns,
    dH: Sequence[np.ndarray],
    c: np.ndarray,
    inverse: np.ndarray | None,
) -> np.ndarray:
    """:func:`loo_gradient` on checked inputs."""
    n = sol.y.shape[0]
    S, beta, _ = support_system(sol)
    m = S.size
    N = np.flatnonzero(~sol.support)
    Minv = sol.factor.inverse() if inverse is None else np.asarray(inverse, dtype=float)
    B = Minv[:m, :m]
    diag = safe_diagonal(np.diag(B).copy())
    cS, cN = c[S], c[N]
    g = cS * beta / diag**2
    W = sandwich(B, g)  # B diag(g) B
    h = np.empty(m + 1)
    KNS = kernel_block(K, N, S)
    h[:m] = -cS / diag + KNS.T @ cN
    h[m] = cN.sum()
    v = (Minv @ h)[:m]
    # -v^T dH_SS beta + c_N^T dK_NS beta = z^T (dK[:, S] beta), z = -v on S and c_N on N:
    # one product with the derivative's columns, no copies of its rows
    z = np.zeros(n)
    z[S] = -v
    z[N] = cN
    out = np.empty(len(dH))
    for k, D in enumerate(dH):
        D = check_derivative(D, n, m)
        if D.ndim == 1:
            out[k] = -float(np.sum(D * (np.diag(W) + v * beta)))
        else:
            out[k] = -float(np.sum(D[S] * W)) + float(z @ (D @ beta))
    return out


def rbf_l2_derivatives(
    K: np.ndarray | KernelColumns, D2: np.ndarray, sigma: float, sol: DualSolution
) -> list[np.ndarray]:
    """Derivatives of ``H = K + diag(1/(C w))`` in ``(log sigma, log C)`` for :func:`loo_gradient`.

    ``dH/dlog sigma = K * D2 / sigma^2 = -2 K log K`` (:func:`svmtune.kernels.rbf_dlogsigma`;
    the last form of RBSVM eq. (38) -- the printed eq. (37) and the middle form of eq. (38) carry
    a spurious factor 1/4), returned as its ``(n, m)`` support columns; ``dH/dlog C =
    -1/(C w_i)`` on the support diagonal (eq. (38) with sample weights), returned as an ``(m,)``
    vector.
    """
    check_l2_solution(sol)
    n = sol.y.shape[0]
    if np.shape(D2) != (n, n) or np.shape(K) != (n, n):
        raise ValueError(
            f"K and D2 must be ({n}, {n}) for a solution on {n} points, got {np.shape(K)} and "
            f"{np.shape(D2)}"
        )
    S = np.flatnonzero(sol.support)
    cols = rbf_dlogsigma(kernel_columns(as_kernel(K), S), np.asarray(D2)[:, S], sigma)
    return [cols, -sol.H_diag[S]]


# ---------------------------------------------------------------------------------------------
# The RBSVM objective over (log sigma, log C), summed over one-vs-rest tasks
# ---------------------------------------------------------------------------------------------
@dataclass
class LOOObjective:
    """Value, gradient and by-products of :func:`rbsvm_objective` at one ``theta``.

    Attributes
    ----------
    value : float
        ``J = sum_tasks sum_i w_i L(y_i, tanh r_i)`` (RBSVM eq. (33)).
    grad : ndarray (2,) or None
        ``dJ / d(log sigma, log C)`` for the solutions' support sets.
    loo : list of ndarray
        Closed-form LOO outputs per task.
    solutions : list of DualSolution
    theta : ndarray (2,)
    n_support : int
        Points that are support vectors of at least one task.
    """

    value: float
    grad: np.ndarray | None
    loo: list[np.ndarray]
    solutions: list[DualSolution]
    theta: np.ndarray
    n_support: int
    per_task_n_support: list[int] = field(default_factory=list)

    @property
    def supports(self) -> list[np.ndarray]:
        """Support masks per task (the warm start for the next step)."""
        return [s.support for s in self.solutions]


#: warm-start support sets covering less than this fraction of the points make a step
#: compute only the kernel columns it reads (:class:`svmtune.kernels.KernelColumns`)
COLUMNS_BELOW = 0.5


def _step_kernel(
    D2: np.ndarray, sigma: float, init_support: Sequence
) -> np.ndarray | KernelColumns:
    """The RBF kernel of one objective step: by columns when the warm-start support sets are
    a small part of the data (the step reads ``K`` only at the support vectors' columns,
    ``n * m`` kernel values instead of ``n^2``), else the whole matrix.  Equal values."""
    n = D2.shape[0]
    if any(s is None for s in init_support):
        return rbf_from_sqdist(D2, sigma)
    used = np.zeros(n, dtype=bool)
    for s in init_support:
        used[np.asarray(s)] = True
    if used.sum() >= COLUMNS_BELOW * n:
        return rbf_from_sqdist(D2, sigma)
    return rbf_columns(D2, sigma)


def rbsvm_objective(
    D2: np.ndarray,
    tasks: Sequence[np.ndarray],
    theta: Sequence[float] | np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    init_support: Sequence[np.ndarray | None] | None = None,
    loss: str = "cross_entropy",
    nonsupport: str = "model",
    gradient: bool = True,
    tol: float = 1e-8,
    groups: np.ndarray | None = None,
) -> LOOObjective:
    """The RBSVM leave-one-out objective and its exact gradient (RBSVM eq. (27)-(34)).

    Parameters
    ----------
    D2 : ndarray (n, n)
        Pairwise squared distances of the training points
        (:func:`svmtune.kernels.squared_distances`).
    tasks : sequence of arrays of {-1, +1}
        Binary label vectors sharing the kernel (one for a binary problem, one per class for
        one-vs-rest, :func:`svmtune.methods.base.ovr_tasks`).
    theta : (log sigma, log C)
        Natural logarithms.
    sample_weight : array (n,), optional
        Per-sample weights: they scale ``C`` per point (``d_i = 1/(C w_i)``) and the loss terms.
    init_support : sequence of masks, optional
        Warm-start support set per task (from the previous step).
    loss : {"cross_entropy", "squared"}
        See :func:`loo_loss`.
    nonsupport : {"model", "label"}
        The LOO output a non-support vector enters ``J`` with: the full model's output
        ``f(x_i)`` (its exact LOO output; default) or its label ``y_i`` (eq. (27) read
        literally with ``alpha_i = 0``; constant, so no gradient).  See the module docstring.
        ``loo`` holds the closed-form LOO outputs either way.
    gradient : bool
        Also compute the gradient.
    tol : float
        KKT tolerance of the L2-SVM solver.
    groups : array (n,), optional
        A group label per point: ``r`` holds the leave-one-group-out outputs instead
        (:func:`svmtune.loo.rbsvm_groups.closed_form_lgo`, the block version of eq. (27),
        beyond the paper), and the gradient is theirs.  Needs ``nonsupport="model"``.

    Returns
    -------
    LOOObjective
    """
    theta = np.asarray(theta, dtype=float).ravel()
    if theta.shape != (2,) or not np.all(np.isfinite(theta)):
        raise ValueError(f"theta must be finite (log sigma, log C), got {theta}")
    check_loss(loss)
    check_nonsupport(nonsupport)
    D2 = np.asarray(D2, dtype=float)
    if groups is not None:
        check_group_nonsupport(nonsupport)
    if D2.ndim != 2 or D2.shape[0] != D2.shape[1]:
        raise ValueError(f"D2 must be the square (n, n) squared-distance matrix, got {D2.shape}")
    n = D2.shape[0]
    if isinstance(tasks, np.ndarray) and tasks.ndim == 1:
        raise ValueError(
            "tasks must be a list of {-1, +1} label vectors, one per task; got a single 1-D "
            "array: pass [y] for a binary problem"
        )
    if not len(tasks):
        raise ValueError("tasks is empty: pass at least one {-1, +1} label vector")
    for y_t in tasks:
        check_pm1(y_t, n, name="every task")
    validate_sample_weight(sample_weight, n)
    if groups is not None:
        codes = rbsvm_groups.group_codes(groups, n)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    sigma, C = float(np.exp(theta[0])), float(np.exp(theta[1]))
    if init_support is None:
        init_support = [None] * len(tasks)
    if len(init_support) != len(tasks):
        raise ValueError("init_support needs one entry per task")
    K = _step_kernel(D2, sigma, init_support)
    value = 0.0
    grad = np.zeros(2) if gradient else None
    loo, sols, used = [], [], np.zeros(n, dtype=bool)
    for y_t, init in zip(tasks, init_support):
        sol = fit_l2_svm(K, y_t, C, sample_weight=sample_weight, init_support=init, tol=tol)
        if groups is None:
            Minv = sol.factor.inverse() if gradient else None
            r = _closed_form_loo(sol, K, Minv)
        else:
            Minv = sol.factor.inverse()
            r, red, rows = rbsvm_groups._lgo_terms(sol, K, codes, Minv)
        L, dL = objective_terms(sol, r, loss, nonsupport)
        value += float(w @ L)
        if gradient:
            dH = rbf_l2_derivatives(K, D2, sigma, sol)
            if groups is None:
                grad += _loo_gradient(sol, K, dH, w * dL, Minv)
            else:
                grad += rbsvm_groups._lgo_gradient(sol, K, dH, w * dL, codes, Minv, red, rows)
        loo.append(r)
        sols.append(sol)
        used |= sol.support
    return LOOObjective(
        value=value,
        grad=grad,
        loo=loo,
        solutions=sols,
        theta=theta.copy(),
        n_support=int(used.sum()),
        per_task_n_support=[int(s.support.sum()) for s in sols],
    )


# ---------------------------------------------------------------------------------------------
# Predictions and error rate from LOO outputs
# ---------------------------------------------------------------------------------------------
def loo_predictions(loo: Sequence[np.ndarray]) -> np.ndarray:
    """Encoded class predictions from LOO outputs: ``r > 0`` for one binary task, else the
    one-vs-rest argmax (as :class:`svmtune.estimators.L2SVC` predicts)."""
    if len(loo) == 1:
        return (np.asarray(loo[0]) > 0).astype(int)
    return np.argmax(np.column_stack(loo), axis=1)


def loo_error_rate(
    y: np.ndarray, loo: Sequence[np.ndarray], sample_weight: np.ndarray | None = None
) -> float:
    """Leave-one-out error rate of encoded labels ``y`` (0..k-1) from LOO outputs per task.

    With ``sample_weight``, the weighted error rate (points of weight 0 do not count).

    Raises
    ------
    ValueError
        If ``loo`` is empty or its arrays differ in length, ``y`` is not ``n`` encoded labels
        in ``0..k-1`` (``k`` the number of tasks, 2 for one binary task) or ``sample_weight``
        is not ``n`` finite non-negative weights with a positive sum.
    """
    if not len(loo):
        raise ValueError("loo is empty: pass the LOO outputs of at least one task")
    n = np.shape(loo[0])[0] if np.ndim(loo[0]) == 1 else -1
    if any(np.shape(r) != (n,) for r in loo):
        raise ValueError(
            f"every task's LOO outputs must be a 1-D array of one length, got shapes "
            f"{[np.shape(r) for r in loo]}"
        )
    _check_encoded_labels(y, n, max(len(loo), 2))
    sample_weight = validate_sample_weight(sample_weight, n)
    wrong = loo_predictions(loo) != np.asarray(y)
    if sample_weight is None:
        return float(np.mean(wrong))
    w = np.asarray(sample_weight, dtype=float)
    return float(w @ wrong / w.sum())
