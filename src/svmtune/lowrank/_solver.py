"""The exact L2-SVM on a low-rank kernel ``K~ = Z Z^T``: ``O(n m^2)`` time, ``O(n m)`` memory.

With the explicit features ``Z`` (:func:`svmtune.lowrank.nystroem_factor`) the L2-SVM is the
linear squared-hinge SVM ``min 1/2 |v|^2 + C/2 sum_i w_i max(0, 1 - y_i (z_i^T v + b))^2`` whose
dual is exactly the hard-margin SVM on ``H = K~ + diag(d)``, ``d_i = 1 / (C w_i)`` (RBSVM eq.
(6)-(7)).  :func:`fit_l2_svm_lowrank` solves it by the primal (semismooth) Newton method with
Armijo backtracking (Keerthi & DeCoste 2005; Chapelle 2007), ``O(n m^2)`` per iteration,
finitely convergent; a Newton step with the active set fixed is the support-set system
``M [beta; b] = [y_S; 0]`` of RBSVM eq. (22).  The final ``[beta; b]`` is recomputed from that
system through the Woodbury factor of ``M`` (:class:`svmtune._factor.WoodburyFactor`), so the
closed forms (:mod:`svmtune.loo.rbsvm_lowrank`, :mod:`svmtune.loo.span_lowrank`,
:mod:`svmtune.loo.radius_margin_lowrank`) see it exactly.  Nothing here forms an ``n x n`` (or
support x support) matrix.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla

from svmtune._dual_solution import (
    DualSolution,
    _l2_diagonal,
    check_C,
    check_solution,
    l2_diagonal,
    l2_solution,
    support_mask,
    support_system,
)
from svmtune._factor import WoodburyFactor
from svmtune._option_values import check_positive
from svmtune._validation import validate_sample_weight
from svmtune._warnings import user_stacklevel
from svmtune.exceptions import ConvergenceWarning
from svmtune.lowrank._nystroem import (
    NystroemFactor,
    _nystroem_factor,
    check_landmark_distances,
)

__all__ = [
    "LowRankInputs",
    "TaskSolutions",
    "check_lowrank_inputs",
    "check_lowrank_solution",
    "fit_l2_svm_lowrank",
    "fit_tasks_lowrank",
    "lowrank_support_system",
]


def _primal(Z, y, Cw, v, b):
    f = Z @ v + b
    xi = 1.0 - y * f
    act = (xi > 0) & (Cw > 0)
    val = 0.5 * float(v @ v) + 0.5 * float(Cw[act] @ xi[act] ** 2)
    return val, f, xi, act


class _ActiveGram:
    """``Z_A^T diag(c_A) [Z_A, 1, y_A]`` for the active set ``A``, updated by the rows that
    enter or leave ``A`` (few near the optimum) instead of recomputed: ``O(|change| m^2)``."""

    def __init__(self, Z, y, Cw):
        self.Z, self.y, self.Cw = Z, y, Cw
        self.m = m = Z.shape[1]
        self.act = np.zeros(Z.shape[0], dtype=bool)
        self.G = np.zeros((m + 2, m + 2))

    def _block(self, rows):
        Za = np.hstack([self.Z[rows], np.ones((rows.size, 1)), self.y[rows][:, None]])
        return Za.T @ (Za * self.Cw[rows][:, None])

    def update(self, act):
        change = np.flatnonzero(act != self.act)
        if 2 * change.size > act.sum():
            self.G = self._block(np.flatnonzero(act))
        elif change.size:
            add, rem = change[act[change]], change[~act[change]]
            self.G = self.G + self._block(add) - self._block(rem)
        self.act = act.copy()

    def newton_point(self, act):
        """Minimiser of the primal with the active set fixed (the support-set system (22))."""
        self.update(act)
        return newton_solution(self.G)


def newton_solution(G: np.ndarray) -> tuple[np.ndarray, float]:
    """``(v, b)`` minimising the primal with the active set fixed (the support-set system of
    RBSVM eq. (22)) from its Gram matrix ``G = Z_A^T diag(c_A) [Z_A, 1, y_A]``."""
    m = G.shape[0] - 2
    Hm = G[: m + 1, : m + 1].copy()
    Hm[np.diag_indices(m)] += 1.0
    Hm[m, m] += 1e-12
    rhs = G[: m + 1, m + 1]
    sol = sla.solve(Hm, rhs, assume_a="sym", check_finite=False)
    return sol[:m], float(sol[m])


#: a trial's primal value may exceed the Armijo bound by this much relative to the value:
#: its rounding (a sum over ``n`` rows), which at the optimum swamps the predicted decrease
ARMIJO_ROUNDING = 1e-12


def armijo_step(trial, value: float, slope: float):
    """``(t, trial(t))`` for the first ``t`` of 1, 1/2, 1/4, ... whose primal value
    ``trial(t)[0]`` falls below ``value + 1e-4 t slope`` (Armijo backtracking along the
    Newton direction, ``slope`` its directional derivative; down to ``t = 1e-10``), up to the
    value's rounding, :data:`ARMIJO_ROUNDING` ``|value|``: at the optimum of 10^6 rows the
    predicted decrease fell below it, the search backtracked to tiny steps and the Newton
    method ran to ``max_iter`` (measured: 100 passes at ``n = 10^6``, issue 64)."""
    t = 1.0
    slack = ARMIJO_ROUNDING * abs(value)
    while True:
        out = trial(t)
        if out[0] <= value + 1e-4 * t * slope + slack or t < 1e-10:
            return t, out
        t *= 0.5


def newton_done(t: float, same: bool, gv, gb: float, tol: float, Cw) -> bool:
    """The primal Newton iteration's stop: a full step that left the active set unchanged
    (the exact optimum), or a KKT residual below ``tol`` (relative to the largest ``C w``)
    with the active set unchanged."""
    if t == 1.0 and same:
        return True
    kkt = max(float(np.max(np.abs(gv), initial=0.0)), abs(gb))
    return kkt < tol * max(1.0, float(np.abs(Cw).max())) and same


def warn_not_converged(max_iter: int) -> None:
    warnings.warn(
        f"low-rank L2-SVM Newton solver stopped after {max_iter} iterations",
        ConvergenceWarning,
        stacklevel=user_stacklevel(),
    )


def fit_l2_svm_lowrank(
    Z: np.ndarray,
    y: np.ndarray,
    C: float,
    *,
    sample_weight: np.ndarray | None = None,
    init_support: np.ndarray | None = None,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> DualSolution:
    """Exact L2-SVM on the low-rank kernel ``K~ = Z Z^T`` (RBSVM eq. (6)-(7), (22)).

    Primal Newton on ``(v, b)`` (module docstring) from the point solving the support-set
    system of ``init_support`` (warm start) or from ``v = 0, b = 0``; each iteration is
    ``O(n m^2)``.  Stops when a full Newton step leaves the active set unchanged (the iterate is
    then the exact optimum) or the KKT residual is below ``tol``.

    Parameters
    ----------
    Z : ndarray (n, m)
        Features with ``K~ = Z Z^T`` (:func:`nystroem_factor`).
    y : array of {-1, +1}
    C : float
    sample_weight : array (n,), optional
        Per-sample weights (``d_i = 1/(C w_i)``; ``w_i = 0`` means ``alpha_i = 0``).
    init_support : bool mask or index array, optional
        Starting active set (e.g. the previous hyperparameter step's support).
    tol : float
        KKT tolerance.
    max_iter : int

    Returns
    -------
    DualSolution
        ``factor`` is a :class:`WoodburyFactor` of the support set, ``H_diag = 1/(C w)``;
        ``[beta_S; b]`` solve ``M [beta_S; b] = [y_S; 0]`` exactly.

    Raises
    ------
    ValueError
        If ``Z`` is not a finite ``(n, m)`` array, ``y`` not -1/+1 with both classes among
        the samples of positive weight, ``C`` / the weights invalid, or ``init_support``
        out of range.
    """
    y = np.asarray(y, dtype=float).ravel()
    n = y.shape[0]
    Z = check_features(Z, n)
    check_task_labels(y)
    d = l2_diagonal(n, C, sample_weight)
    init_mask = None if init_support is None else support_mask(init_support, n)
    return _fit_l2_svm_lowrank(Z, y, d, init_mask, tol=tol, max_iter=max_iter)


def check_task_labels(y: np.ndarray) -> None:
    """Raise unless the float labels ``y`` are -1/+1 with both classes present."""
    if y.shape[0] == 0 or not np.all(np.isin(y, (-1.0, 1.0))) or np.all(y == y[0]):
        raise ValueError("labels must be -1/+1 with both classes present")


def check_features(Z, n: int | None = None) -> np.ndarray:
    """``Z`` as a float array after checking that it is a finite non-empty ``(n, m)`` feature
    matrix (any ``n`` when None): an ``O(n m)`` pass, made at the doors of
    :func:`fit_l2_svm_lowrank` and of the low-rank balls
    (:func:`svmtune.loo.sphere_lowrank.lowrank_enclosing_ball`); the low-rank criteria's
    evaluations take ``Z`` from :func:`svmtune.lowrank._nystroem._nystroem_factor` of checked
    distances and skip it (issue #55)."""
    Z = np.asarray(Z, dtype=float)
    if Z.ndim != 2 or 0 in Z.shape or (n is not None and Z.shape[0] != n):
        rows = "n" if n is None else n
        raise ValueError(f"Z must be a non-empty ({rows}, m) matrix, got shape {Z.shape}")
    if not np.all(np.isfinite(Z)):
        raise ValueError(
            "Z contains NaN or infinity; the low-rank features must be finite (check the "
            "distances and sigma they were computed from)"
        )
    return Z


def _fit_l2_svm_lowrank(
    Z: np.ndarray,
    y: np.ndarray,
    d: np.ndarray,
    init_mask: np.ndarray | None = None,
    *,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> DualSolution:
    """:func:`fit_l2_svm_lowrank` on checked inputs (issue #55): a finite ``(n, m)`` float
    ``Z``, float labels ``y`` in {-1, +1}, the L2-SVM's ridge ``d = 1 / (C w)`` of a
    checked ``C`` and weights (:func:`svmtune._dual_solution.l2_diagonal`; inf where
    ``w = 0``) and ``init_mask`` a bool mask of length ``n`` (or None).

    The low-rank criteria (:func:`_fit_tasks_lowrank`) call it on the factor they built from
    checked distances and the labels of their tasks, so that an objective evaluation repeats
    none of the checks of :func:`fit_l2_svm_lowrank`.  The primal Newton iteration is that of
    :func:`fit_l2_svm_lowrank` (RBSVM eq. (6)-(7), (22)).

    Raises
    ------
    ValueError
        If the samples of positive weight do not hold both classes.
    """
    n = y.shape[0]
    Cw = np.where(np.isfinite(d), 1.0 / d, 0.0)
    if np.unique(y[Cw > 0]).size < 2:
        raise ValueError("L2-SVM needs points of both classes with positive weight")
    gram = _ActiveGram(Z, y, Cw)
    if init_mask is not None and init_mask.sum() >= 2:
        act0 = init_mask & (Cw > 0)
        v, b = gram.newton_point(act0)
    else:
        v, b = np.zeros(Z.shape[1]), 0.0
    val, _, xi, act = _primal(Z, y, Cw, v, b)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007
        gv = v - Z[act].T @ (Cw[act] * y[act] * xi[act])
        gb = -float(Cw[act] @ (y[act] * xi[act]))
        vn, bn = gram.newton_point(act)
        dv, db = vn - v, bn - b
        t, (val_t, _, xi_t, act_t) = armijo_step(
            lambda t, v=v, b=b, dv=dv, db=db: _primal(Z, y, Cw, v + t * dv, b + t * db),
            val,
            float(gv @ dv + gb * db),
        )
        v, b, val, xi = v + t * dv, b + t * db, val_t, xi_t
        same = np.array_equal(act_t, act)
        act = act_t
        if newton_done(t, same, gv, gb, tol, Cw):
            converged = True
            break
    if not converged:
        warn_not_converged(max_iter)
    S = np.flatnonzero(act)
    if S.size < 2 or np.all(y[S] == y[S][0]):
        raise FloatingPointError("low-rank L2-SVM support set degenerated to one class")
    fac = WoodburyFactor.from_lowrank(Z[S], d[S])
    beta, b_exact = fac.solve(y[S], 0.0)
    mask = np.zeros(n, dtype=bool)
    mask[S] = True
    extra = {"beta": np.asarray(beta, dtype=float), "converged": converged}
    return l2_solution(y, mask, beta, float(b_exact), fac, d, it, extra)


def _system(sol: DualSolution) -> tuple[np.ndarray, np.ndarray, float]:
    if not isinstance(sol.factor, WoodburyFactor):
        raise ValueError("need a low-rank solution from fit_l2_svm_lowrank")
    S = np.flatnonzero(sol.support)
    beta, b = sol.factor.solve(sol.y[S], 0.0)
    return S, np.asarray(beta, dtype=float), float(b)


def lowrank_support_system(sol: DualSolution) -> tuple[np.ndarray, np.ndarray, float]:
    """Support indices and ``[beta; b] = M^{-1} [y_S; 0]`` (RBSVM eq. (22)) of a solution of
    :func:`fit_l2_svm_lowrank` (:func:`svmtune._dual_solution.support_system` through its Woodbury
    factor)."""
    if not isinstance(sol.factor, WoodburyFactor):
        raise ValueError("need a low-rank solution from fit_l2_svm_lowrank")
    return support_system(sol)


def check_lowrank_solution(
    sol: DualSolution, n: int, what: str = "low-rank span estimates"
) -> None:
    """Raise unless ``sol`` is a low-rank L2-SVM solution (a Woodbury factor) on ``n`` points."""
    kind = "an exact-kernel" if getattr(sol, "loss", None) == "l2" else "an L1-SVM"
    message = (
        f"{what} need an L2-SVM solution from svmtune.lowrank.fit_l2_svm_lowrank (got "
        f"{kind} solution)"
    )
    check_solution(sol, message, source="fit_l2_svm_lowrank")
    if not isinstance(sol.factor, WoodburyFactor):
        raise ValueError(message)
    if sol.y.shape[0] != n:
        raise ValueError(f"the solution has {sol.y.shape[0]} points but Z has {n} rows")


class TaskSolutions:
    """Mixin of the low-rank criteria's results: their per-task L2-SVM ``solutions``."""

    solutions: list[DualSolution]

    @property
    def supports(self) -> list[np.ndarray]:
        """Support mask of every task (the warm start of the next evaluation)."""
        return [s.support for s in self.solutions]

    @property
    def n_support(self) -> int:
        """Points that are support vectors of at least one task."""
        return int(np.logical_or.reduce(self.supports).sum())


def fit_tasks_lowrank(
    D2_nm: np.ndarray,
    D2_mm: np.ndarray,
    tasks: Sequence[np.ndarray],
    theta: Sequence[float] | np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    init_support: Sequence[np.ndarray | None] | None = None,
    jitter: float = 1e-8,
    tol: float = 1e-8,
) -> tuple[np.ndarray, NystroemFactor, list[DualSolution]]:
    """The Nystroem factor at ``sigma = exp(theta[0])`` and the L2-SVM of every task at
    ``C = exp(theta[1])`` (:func:`fit_l2_svm_lowrank`, warm-started from ``init_support``):
    the shared first step of the low-rank criteria.  Returns ``(theta, factor, solutions)``
    with ``theta`` validated.  Checks its inputs (:func:`check_lowrank_inputs`) and
    delegates to :func:`_fit_tasks_lowrank`."""
    checked = check_lowrank_inputs(D2_nm, D2_mm, tasks, theta, sample_weight, init_support, jitter)
    return (checked.theta, *_fit_tasks_lowrank(checked, jitter=jitter, tol=tol))


def _fit_tasks_lowrank(
    inputs: LowRankInputs, *, jitter: float, tol: float, derivatives: bool = True
) -> tuple[NystroemFactor, list[DualSolution]]:
    """:func:`fit_tasks_lowrank` on the checked inputs of :func:`check_lowrank_inputs`:
    the ``(factor, solutions)`` (issue #55); the factor's ``K_nm`` kept only where
    ``derivatives`` (:func:`svmtune.lowrank._nystroem._nystroem_factor`).

    The low-rank searches build or check these once -- the landmarks' distances when they
    choose the landmarks, the tasks (:func:`svmtune._labels.ovr_tasks`) and the weights at
    their entry; ``theta`` lies in their bounds -- and call this at each objective
    evaluation, which therefore repeats none of those checks, nor the ``O(n m)``
    finiteness pass over ``Z`` (:func:`svmtune.lowrank._nystroem._nystroem_factor`).
    """
    theta, n = inputs.theta, inputs.D2_nm.shape[0]
    sigma, C = float(np.exp(theta[0])), float(np.exp(theta[1]))
    nf = _nystroem_factor(inputs.D2_nm, inputs.D2_mm, sigma, float(jitter), derivatives=derivatives)
    d = _l2_diagonal(n, C, inputs.w)  # one ridge for every task
    sols = [
        _fit_l2_svm_lowrank(nf.Z, y_t, d, init, tol=tol)
        for y_t, init in zip(inputs.tasks, inputs.init_support)
    ]
    return nf, sols


class LowRankInputs(NamedTuple):
    """The checked inputs of a low-rank criterion at one ``theta``: what the unchecked
    kernels (:func:`_fit_tasks_lowrank` and the criteria on it) take, from
    :func:`check_lowrank_inputs` or from a search that built and checked them once
    (:meth:`svmtune.methods._lowrank_search.LowRankSearch._inputs`)."""

    D2_nm: np.ndarray
    D2_mm: np.ndarray
    tasks: list[np.ndarray]
    theta: np.ndarray
    w: np.ndarray | None
    init_support: list[np.ndarray | None]


def check_lowrank_inputs(
    D2_nm,
    D2_mm,
    tasks: Sequence[np.ndarray],
    theta,
    sample_weight=None,
    init_support: Sequence | None = None,
    jitter: float = 1e-8,
) -> LowRankInputs:
    """The inputs of a low-rank criterion, checked once: the door of
    :func:`fit_tasks_lowrank` and of the criteria built on it.

    ``theta`` a finite ``(log sigma, log C)`` pair whose ``sigma`` and ``C`` are positive
    finite, at least one task of ``n`` labels in {-1, +1} holding both classes, the
    distances of :func:`svmtune.lowrank._nystroem.check_landmark_distances`, ``n`` weights
    (:func:`svmtune._validation.validate_sample_weight`), one warm-start support set or None
    per task and a finite ``jitter >= 0``; the messages are those
    :func:`svmtune.lowrank.nystroem_factor` and :func:`fit_l2_svm_lowrank` give.

    Raises
    ------
    ValueError
        If any of them is invalid.
    """
    theta = np.asarray(theta, dtype=float).ravel()
    if theta.shape != (2,) or not np.all(np.isfinite(theta)):
        raise ValueError(f"theta must be finite (log sigma, log C), got {theta}")
    tasks = list(tasks)
    if not tasks:
        raise ValueError("need at least one task")
    D2_nm, D2_mm = check_landmark_distances(D2_nm, D2_mm)
    n = D2_nm.shape[0]
    for t in tasks:
        if np.shape(t) != (n,):
            raise ValueError(f"every task must hold {n} labels, got shape {np.shape(t)}")
    if init_support is None:
        init_support = [None] * len(tasks)
    if len(init_support) != len(tasks):
        raise ValueError("init_support needs one entry per task")
    if not (np.isfinite(jitter) and jitter >= 0):
        raise ValueError(f"jitter must be a non-negative number, got {jitter}")
    tasks = [np.asarray(t, dtype=float) for t in tasks]
    for t in tasks:
        check_task_labels(t)
    check_positive("sigma", float(np.exp(theta[0])))
    check_C(float(np.exp(theta[1])))
    w = validate_sample_weight(sample_weight, n)
    init = [None if s is None else support_mask(s, n) for s in init_support]
    return LowRankInputs(D2_nm, D2_mm, tasks, theta, w, init)
