"""The L2-SVM's support-set system: the pieces every closed form and solver shares.

A leaf of svmtune (it imports numpy and :mod:`svmtune._warnings` only; the factor classes of
:mod:`svmtune._factor` are named in annotations).  The exact solver
(:func:`svmtune.svm.fit_l2_svm`), the low-rank solver
(:func:`svmtune.lowrank.fit_l2_svm_lowrank`), the closed-form leave-one-out outputs
(:mod:`svmtune.loo`) and the objectives above them read their solutions through it.

Notation (RBSVM §III-B).  The L2-SVM is the hard-margin SVM on ``H = K + diag(d)``,
``d_i = 1 / (C w_i)`` (RBSVM eq. (6)-(7)); on its support set ``S`` the KKT conditions are

    M [beta; b] = [y_S; 0],   M = [[H_SS, 1], [1^T, 0]],   beta = y_S * alpha_S   (RBSVM eq. (22))

* the result type :class:`DualSolution` (``factor`` factors ``M``: a dense
  :class:`svmtune._factor.ExtendedFactor` or a low-rank :class:`svmtune._factor.WoodburyFactor`);
* the ridge ``d`` (:func:`l2_diagonal`) and the checks of ``C``, the weights, warm starts and
  solutions (:func:`check_solution`);
* ``[beta; b]`` from the factor (:func:`support_system`) and the floored diagonal of
  ``M^{-1}`` (:func:`safe_diagonal`) that RBSVM eq. (27) divides by;
* the losses of the tanh-mapped leave-one-out outputs (RBSVM eq. (29)-(33)):
  :func:`loo_loss` and :func:`objective_terms`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from svmtune._option_values import check_positive
from svmtune._validation import validate_sample_weight
from svmtune._warnings import user_stacklevel

if TYPE_CHECKING:
    from svmtune._factor import ExtendedFactor, WoodburyFactor

__all__ = [
    "ovr_tasks",
    "pm1",
    "DualSolution",
    "LOSSES",
    "NONSUPPORT",
    "check_C",
    "check_derivative",
    "check_group_nonsupport",
    "check_l2_solution",
    "check_loss",
    "check_nonsupport",
    "check_pm1",
    "check_solution",
    "l2_diagonal",
    "l2_solution",
    "loo_loss",
    "objective_terms",
    "safe_diagonal",
    "support_mask",
    "support_system",
]

#: loss variants of :func:`loo_loss`
LOSSES = ("cross_entropy", "squared")
#: what the RBSVM objective takes as a non-support vector's LOO output: the full model's
#: output (exact) or its label (RBSVM eq. (27) read literally with ``alpha_i = 0``)
NONSUPPORT = ("model", "label")


@dataclass
class DualSolution:
    """A trained binary kernel SVM in dual form.

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        Dual variables, ``alpha >= 0``.
    b : float
        Bias.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    upper : ndarray of shape (n,)
        Box bounds ``C_i`` (``inf`` for the L2-SVM, which has no upper bound).
    loss : {"l1", "l2"}
    support, in_bound, bounded : ndarray of bool
        ``alpha > 0``; ``0 < alpha < C_i``; ``alpha = C_i``.
    factor : ExtendedFactor, WoodburyFactor or None
        Factorisation of the extended matrix ``M`` of ``H`` on the support set (L2 only).
    H_diag : ndarray or None
        The added diagonal ``1 / (C w_i)`` of the L2-SVM (``H = K + diag(H_diag)``).
    n_iter : int
        Solver iterations (active-set changes for L2).
    """

    alpha: np.ndarray
    b: float
    y: np.ndarray
    upper: np.ndarray
    loss: str
    support: np.ndarray
    in_bound: np.ndarray
    bounded: np.ndarray
    factor: ExtendedFactor | WoodburyFactor | None = None
    H_diag: np.ndarray | None = None
    n_iter: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def dual_coef(self) -> np.ndarray:
        """``y_i alpha_i`` for all training points."""
        return self.y * self.alpha

    @property
    def support_indices(self) -> np.ndarray:
        return np.flatnonzero(self.support)

    def decision_function(self, K_test_train: np.ndarray) -> np.ndarray:
        """``f(x) = sum_i y_i alpha_i k(x_i, x) + b`` from a test x train kernel matrix."""
        sv = self.support
        return np.asarray(K_test_train)[:, sv] @ self.dual_coef[sv] + self.b

    def training_outputs(self, K: np.ndarray) -> np.ndarray:
        """Training outputs ``f(x_i)`` of the kernel (not ``H``) model."""
        return self.decision_function(K)


def l2_solution(
    y: np.ndarray,
    support: np.ndarray,
    beta: np.ndarray,
    b: float,
    factor: ExtendedFactor | WoodburyFactor,
    H_diag: np.ndarray,
    n_iter: int,
    extra: dict | None = None,
) -> DualSolution:
    """The :class:`DualSolution` of an L2-SVM from its support-set system (RBSVM eq. (22)).

    ``alpha_S = max(y_S beta, 0)`` on the support mask ``support`` (``beta`` in the sorted
    order of its points), zero elsewhere; no upper bound (``upper = inf``), every support
    vector in bound, ``factor`` the factor of ``M`` and ``H_diag = 1 / (C w)``.
    """
    n = y.shape[0]
    alpha = np.zeros(n)
    alpha[np.flatnonzero(support)] = np.maximum(y[support] * beta, 0.0)
    return DualSolution(
        alpha=alpha,
        b=b,
        y=y,
        upper=np.full(n, np.inf),
        loss="l2",
        support=support.copy(),
        in_bound=support.copy(),
        bounded=np.zeros(n, dtype=bool),
        factor=factor,
        H_diag=H_diag,
        n_iter=n_iter,
        extra={} if extra is None else extra,
    )


def check_C(C) -> None:
    """Raise unless ``C`` is a positive finite real number
    (:func:`svmtune._option_values.check_positive`)."""
    check_positive("C", C)


def l2_diagonal(n: int, C: float, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Diagonal added to ``K`` by the L2-SVM: ``1 / (C w_i)`` (RBSVM eq. (7)); inf where w_i=0."""
    check_C(C)
    return _l2_diagonal(n, C, validate_sample_weight(sample_weight, n))


def _l2_diagonal(n: int, C: float, w: np.ndarray | None) -> np.ndarray:
    """:func:`l2_diagonal` of a checked ``C`` and weights ``w`` (None or the float array of
    :func:`svmtune._validation.validate_sample_weight`): the solvers' unchecked kernels."""
    w = np.ones(n) if w is None else w
    with np.errstate(divide="ignore"):
        return 1.0 / (C * w)


def support_mask(init_support, n: int) -> np.ndarray:
    """A warm-start support set as a boolean mask of length ``n``: ``init_support`` is such
    a mask or an array of indices in ``[0, n)``."""
    s = np.asarray(init_support)
    if s.dtype == bool:
        if s.shape != (n,):
            raise ValueError(f"init_support as a boolean mask needs shape ({n},), got {s.shape}")
        return s.copy()
    s = s.ravel()
    if s.size == 0:
        return np.zeros(n, dtype=bool)
    if s.dtype.kind not in "iu":
        raise TypeError(
            f"init_support must be a boolean mask or integer indices, got dtype {s.dtype}"
        )
    if s.min() < 0 or s.max() >= n:
        raise ValueError(
            f"init_support indices must lie in [0, {n}), got values from {s.min()} to {s.max()}"
        )
    mask = np.zeros(n, dtype=bool)
    mask[s] = True
    return mask


# ---------------------------------------------------------------------------------------------
# Checks of solutions, labels and derivatives
# ---------------------------------------------------------------------------------------------
def check_solution(
    sol: DualSolution,
    message: str,
    *,
    loss: str = "l2",
    factor: bool = True,
    source: str | None = None,
) -> None:
    """Raise unless ``sol`` is a :class:`DualSolution` of the ``loss`` SVM.

    Parameters
    ----------
    sol : DualSolution
    message : str
        The ``ValueError`` message when ``sol`` is of the wrong kind.
    loss : {"l2", "l1"}
        The L2-SVM also needs its ridge ``H_diag`` (RBSVM eq. (7)).
    factor : bool
        Also need the factor of ``M`` (RBSVM eq. (22)) that the closed forms reuse.
    source : str, optional
        The solver named in the ``TypeError`` (default ``svmtune.svm.fit_<loss>_svm``).

    Raises
    ------
    TypeError
        If ``sol`` is not a :class:`DualSolution`.
    ValueError
        If it is the solution of another SVM or lacks its factor.
    """
    if not isinstance(sol, DualSolution):
        src = source or f"svmtune.svm.fit_{loss}_svm"
        raise TypeError(f"expected a DualSolution (from {src}), got {type(sol)}")
    wrong = sol.loss != loss
    if loss == "l2":
        wrong = wrong or sol.H_diag is None
    if wrong or (factor and sol.factor is None):
        raise ValueError(message)


def check_l2_solution(sol: DualSolution, what: str = "closed-form LOO") -> None:
    """Raise unless ``sol`` is an exact L2-SVM solution with its factor of ``M`` (RBSVM eq.
    (22)), as :func:`svmtune.svm.fit_l2_svm` returns it: :func:`check_solution` for ``what``."""
    check_solution(
        sol,
        f"{what} needs an L2-SVM solution from svmtune.svm.fit_l2_svm "
        "(with its support-set factorisation)",
    )


def check_pm1(y, n: int | None = None, *, name: str = "y") -> np.ndarray:
    """``y`` as floats after checking it holds labels in {-1, +1} (``n`` of them if given)."""
    y = np.asarray(y)
    if y.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold the labels -1 and +1, got {y.dtype} values")
    y = np.asarray(y, dtype=float)
    if n is not None and y.shape != (n,):
        raise ValueError(f"{name} has shape {y.shape}; expected ({n},), one label per point")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError(
            f"{name} must hold the labels -1 and +1 (got values {np.unique(y)[:6]}); map 0/1 "
            "labels with 2 * y - 1"
        )
    return y


def check_derivative(D, n: int, m: int) -> np.ndarray:
    """``D`` as floats after checking it is a derivative the closed-form gradients take: the
    ``(n, m)`` support columns of ``dK`` or the ``(m,)`` diagonal of ``dH_SS``."""
    D = np.asarray(D, dtype=float)
    if D.ndim == 1 and D.shape != (m,):
        raise ValueError(f"diagonal derivative must have shape ({m},), got {D.shape}")
    if D.ndim != 1 and D.shape != (n, m):
        raise ValueError(f"derivative columns must have shape ({n}, {m}), got {D.shape}")
    return D


# ---------------------------------------------------------------------------------------------
# The support-set system
# ---------------------------------------------------------------------------------------------
def support_system(sol: DualSolution) -> tuple[np.ndarray, np.ndarray, float]:
    """Support indices and the exact solution ``[beta; b] = M^{-1} [y_S; 0]`` (RBSVM eq. (22))
    from the solution's factor of ``M``."""
    S = np.flatnonzero(sol.support)
    beta, b = sol.factor.solve(sol.y[S], 0.0)
    return S, np.asarray(beta, dtype=float), float(b)


def safe_diagonal(diag: np.ndarray) -> np.ndarray:
    """The diagonal ``(M^{-1})_ii`` of the support vectors, floored at ``eps * max``.

    It is positive in exact arithmetic (``M^{-1}``'s top-left block is positive semi-definite
    with null vector 1), and RBSVM eq. (27) divides by it; round-off values are floored (with a
    warning) so that leave-one-out outputs stay finite.
    """
    floor = np.finfo(float).eps * max(float(np.max(np.abs(diag), initial=0.0)), 1e-300)
    bad = ~(diag > floor)
    if bad.any():
        warnings.warn(
            f"{int(bad.sum())} diagonal entries of M^-1 are not positive (round-off on a "
            "nearly singular support set); they are floored and their leave-one-out outputs "
            "are large but finite",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
        diag = np.where(bad, floor, diag)
    return diag


# ---------------------------------------------------------------------------------------------
# Losses of the leave-one-out outputs
# ---------------------------------------------------------------------------------------------
def loo_loss(
    y: np.ndarray, r: np.ndarray, loss: str = "cross_entropy"
) -> tuple[np.ndarray, np.ndarray]:
    """Per-point loss of the tanh-mapped LOO output and its derivative in ``r``.

    Parameters
    ----------
    y : array of {-1, +1}
    r : array
        LOO decision values.
    loss : {"cross_entropy", "squared"}
        ``"cross_entropy"`` (RBSVM eq. (29)): ``log(1 + exp(-2 y r))``, derivative
        ``tanh(r) - y`` (eq. (31)).  ``"squared"``: the Brier score of the probability
        ``(1 + tanh r)/2``, ``(tanh r - y)^2 / 4``, derivative ``(tanh r - y)(1 - tanh^2 r)/2``
        (bounded, so single badly predicted points weigh less).

    Returns
    -------
    (values, derivatives) : ndarrays of the shape of ``r``

    Raises
    ------
    ValueError
        If ``y`` holds other labels than -1 and +1 or does not have the shape of ``r``.
    """
    y = check_pm1(y)
    r = np.asarray(r, dtype=float)
    if y.shape != r.shape:
        raise ValueError(
            f"y has shape {y.shape} but r has shape {r.shape}; pass one label per LOO output"
        )
    return _loo_loss(y, r, loss)


def _loo_loss(y: np.ndarray, r: np.ndarray, loss: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`loo_loss` of float labels ``y`` in {-1, +1} and outputs ``r`` of one shape (a
    solution's labels and its LOO outputs): the objectives' per-task step, unchecked."""
    t = np.tanh(r)
    if loss == "cross_entropy":
        return np.logaddexp(0.0, -2.0 * y * r), t - y
    if loss == "squared":
        return 0.25 * (t - y) ** 2, 0.5 * (t - y) * (1.0 - t * t)
    raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def check_loss(loss: str) -> None:
    """Raise ``ValueError`` unless ``loss`` is one of :data:`LOSSES`."""
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def check_nonsupport(nonsupport: str) -> None:
    """Raise ``ValueError`` unless ``nonsupport`` is one of :data:`NONSUPPORT`."""
    if nonsupport not in NONSUPPORT:
        raise ValueError(f"nonsupport must be one of {NONSUPPORT}, got {nonsupport!r}")


def check_group_nonsupport(nonsupport: str) -> None:
    """Raise ``ValueError`` unless ``nonsupport`` is ``"model"``, the only reading that
    leave-one-group-out outputs have (:mod:`svmtune.loo.rbsvm_groups`)."""
    if nonsupport != "model":
        raise ValueError(
            "groups need nonsupport='model': a row of a group that holds support vectors gets "
            "the reduced model's output whether or not it is a support vector itself"
        )


def objective_terms(
    sol: DualSolution, r: np.ndarray, loss: str = "cross_entropy", nonsupport: str = "model"
) -> tuple[np.ndarray, np.ndarray]:
    """Per-point terms of the RBSVM objective ``J`` (RBSVM eq. (33)) and their derivatives in
    ``r`` (:func:`loo_loss`).

    ``nonsupport="model"``: the closed-form LOO outputs ``r`` as they are (a non-support
    vector's exact LOO output is the model's output).  ``"label"``: a non-support vector
    enters with ``r_i = y_i`` (RBSVM eq. (27) read literally with ``alpha_i = 0``), a constant,
    so its derivative is 0.  ``r`` is not modified.

    The options are not checked here: the objectives (:func:`svmtune.loo.rbsvm.rbsvm_objective`
    and its low-rank twin) check ``loss`` and ``nonsupport`` once at their door, and the
    labels are the solution's own, so a task's step repeats no check (issue #55).
    """
    if nonsupport == "label":
        r = np.where(sol.support, r, sol.y)
    L, dL = _loo_loss(sol.y, r, loss)
    if nonsupport == "label":
        dL[~sol.support] = 0.0
    return L, dL


# ----------------------------------------------------------------------------- labels
def pm1(y_binary: np.ndarray) -> np.ndarray:
    """Encoded binary labels {0, 1} as {-1, +1} floats."""
    return np.where(np.asarray(y_binary) == 1, 1.0, -1.0)


def ovr_tasks(y: np.ndarray) -> list[np.ndarray]:
    """One-vs-rest decomposition of encoded labels: a list of {-1, +1} label vectors.

    Binary ``y`` (classes 0, 1) gives a single task with class 1 as +1.
    """
    k = int(np.max(y)) + 1
    if k <= 2:
        return [pm1(y)]
    return [np.where(y == c, 1.0, -1.0) for c in range(k)]
