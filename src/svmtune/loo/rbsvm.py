"""The RBSVM objective: closed-form leave-one-out outputs of the L2-SVM, loss, exact gradient.

Notation (RBSVM §III-B).  The L2-SVM is the hard-margin SVM on ``H = K + diag(d)``,
``d_i = 1 / (C w_i)`` (eq. (6)-(7)).  On its support set ``S`` (``m`` points) the KKT
conditions are the linear system

    M [beta; b] = [y_S; 0],   M = [[H_SS, 1], [1^T, 0]],   beta = y_S * alpha_S     (eq. (22))

**Leave-one-out output** (eq. (23)-(27)): :func:`closed_form_loo`
(:mod:`svmtune.loo.closed_form`), exact where :func:`loo_exact_mask` certifies it; exact
everywhere by decremental unlearning (:func:`decremental_loo`, :mod:`svmtune.loo.decremental`).

**Objective** (eq. (28)-(33)).  ``J = sum_i w_i L(y_i, tanh(r_i))`` with ``r_i`` the LOO output
and the cross-entropy

    L = -[(1+y)/2 log((1+tanh r)/2) + (1-y)/2 log((1-tanh r)/2)] = log(1 + exp(-2 y r)),

evaluated as ``logaddexp(0, -2 y r)``, which is exact for any ``r`` and needs no clipping of
``tanh r`` away from +-1; ``dL/dr = tanh(r) - y`` (eq. (31)).

**Exact gradient** (:func:`loo_gradient`, :mod:`svmtune.loo.rbsvm_gradient`): for a fixed
support set, through ``d(M^{-1}) = -M^{-1} dM M^{-1}``; it replaces RBSVM eq. (35)-(36), which
keep only ``dH_ii`` and so cannot move the RBF width (``K_ii = 1``).

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

from svmtune._dual_solution import DualSolution, check_C, support_mask
from svmtune._kernel_matrix_checks import all_finite
from svmtune._labels import check_pm1
from svmtune._loo_losses import (
    check_loss,
    check_nonsupport,
    objective_terms,
)
from svmtune._validation import validate_sample_weight
from svmtune.kernels import (
    KernelColumns,
    rbf_columns,
    rbf_from_sqdist,
)
from svmtune.loo import rbsvm_groups
from svmtune.loo.closed_form import (
    _closed_form_loo,
)
from svmtune.loo.rbsvm_gradient import (
    _loo_gradient,
    _rbf_l2_derivative_blocks,
    rbf_l2_derivatives,
)
from svmtune.svm import _fit_l2_svm

__all__ = [
    "LOOObjective",
    "rbsvm_objective",
]


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
    tasks = [check_pm1(y_t, n, name="every task") for y_t in tasks]
    w = validate_sample_weight(sample_weight, n)
    if init_support is not None and len(init_support) != len(tasks):
        raise ValueError("init_support needs one entry per task")
    if init_support is not None:
        init_support = [None if s is None else support_mask(s, n) for s in init_support]
    check_C(float(np.exp(theta[1])))
    if not all_finite(D2):
        raise ValueError("D2 contains NaN or infinity; squared distances must be finite")
    return _rbsvm_objective(
        D2,
        tasks,
        theta,
        w,
        init_support=init_support,
        loss=loss,
        nonsupport=nonsupport,
        gradient=gradient,
        tol=tol,
        codes=rbsvm_groups.objective_codes(groups, n, nonsupport),
    )


def _rbsvm_objective(
    D2: np.ndarray,
    tasks: Sequence[np.ndarray],
    theta: np.ndarray,
    w: np.ndarray | None,
    init_support: Sequence[np.ndarray | None] | None,
    *,
    loss: str,
    nonsupport: str,
    codes: np.ndarray | None,
    gradient: bool = True,
    tol: float = 1e-8,
) -> LOOObjective:
    """:func:`rbsvm_objective` on checked inputs: the objective evaluation of
    :class:`svmtune.methods.rbsvm.RBSVM`'s search (RBSVM eq. (27)-(34)).

    ``D2`` is the square float matrix of squared distances, ``tasks`` float {-1, +1} label
    vectors of length ``n`` (:func:`svmtune._labels.ovr_tasks`), ``theta`` the finite float
    pair ``(log sigma, log C)``, ``w`` the weights of
    :func:`svmtune._validation.validate_sample_weight` (or None), ``init_support`` bool
    masks (one per task) and ``loss``, ``nonsupport`` valid options: the search checks them
    once at its entry, not at each of its evaluations (issue #55).  The kernel matrix is
    built here from ``D2`` (finite by construction), so the solver
    (:func:`svmtune.svm._fit_l2_svm`) and the closed forms take it unchecked.  ``codes`` are
    the group codes of :func:`svmtune.loo.rbsvm_groups.objective_codes` (or None: single rows
    held out), encoded once by the search, not at each evaluation (``O(n)``).
    """
    n = D2.shape[0]
    sigma, C = float(np.exp(theta[0])), float(np.exp(theta[1]))
    if init_support is None:
        init_support = [None] * len(tasks)
    K = _step_kernel(D2, sigma, init_support)
    weights = np.ones(n) if w is None else w
    value = 0.0
    grad = np.zeros(2) if gradient else None
    loo, sols, used = [], [], np.zeros(n, dtype=bool)
    for y_t, init in zip(tasks, init_support):
        sol = _fit_l2_svm(K, y_t, C, w, init, tol=tol)
        if codes is None:
            Minv = sol.factor.inverse() if gradient else None
            r = _closed_form_loo(sol, K, Minv)
        else:
            Minv = sol.factor.inverse()
            r, red, rows = rbsvm_groups._lgo_terms(sol, K, codes, Minv)
        L, dL = objective_terms(sol, r, loss, nonsupport)
        value += float(weights @ L)
        if gradient:
            if codes is None:  # the derivative's columns made where the gradient reads them
                dH = _rbf_l2_derivative_blocks(K, D2, sigma, sol)
                grad += _loo_gradient(sol, K, dH, weights * dL, Minv)
            else:
                dH = rbf_l2_derivatives(K, D2, sigma, sol)
                grad += rbsvm_groups._lgo_gradient(sol, K, dH, weights * dL, codes, Minv, red, rows)
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
