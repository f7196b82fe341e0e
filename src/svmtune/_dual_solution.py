"""The L2-SVM's dual solution and its support-set system: what every closed form and solver
shares.

Low in svmtune's layers (it imports numpy, the labels and the option and weight rules of
:mod:`svmtune._validation`; the factor classes of :mod:`svmtune._factor` are named in
annotations only).  The exact solver
(:func:`svmtune.svm.fit_l2_svm`), the low-rank solver
(:func:`svmtune.lowrank.fit_l2_svm_lowrank`), the closed-form leave-one-out outputs
(:mod:`svmtune.loo`) and the objectives above them read their solutions through it.

Notation (RBSVM §III-B).  The L2-SVM is the hard-margin SVM on ``H = K + diag(d)``,
``d_i = 1 / (C w_i)`` (RBSVM eq. (6)-(7)); on its support set ``S`` the KKT conditions are

    M [beta; b] = [y_S; 0],   M = [[H_SS, 1], [1^T, 0]],   beta = y_S * alpha_S   (RBSVM eq. (22))

* the result type :class:`DualSolution` (``factor`` factors ``M``: a dense
  :class:`svmtune._factor.ExtendedFactor` or a low-rank :class:`svmtune._factor.WoodburyFactor`);
* the ridge ``d`` (:func:`l2_diagonal`) and the checks of ``C``, warm starts and solutions
  (:func:`check_solution`);
* ``[beta; b]`` from the factor (:func:`support_system`) and the floored diagonal of
  ``M^{-1}`` (:func:`safe_diagonal`) that RBSVM eq. (27) divides by.

The losses of the leave-one-out outputs are in :mod:`svmtune._loo_losses`, the label
encodings in :mod:`svmtune._labels`.
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
    "DualSolution",
    "l2_solution",
    "check_C",
    "l2_diagonal",
    "support_mask",
    "check_solution",
    "check_l2_solution",
    "check_derivative",
    "support_system",
    "safe_diagonal",
]


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


def check_derivative(D, n: int, m: int) -> np.ndarray:
    """``D`` as floats after checking it is a derivative the closed-form gradients take: the
    ``(n, m)`` support columns of ``dK`` or the ``(m,)`` diagonal of ``dH_SS``."""
    D = np.asarray(D, dtype=float)
    if D.ndim == 1 and D.shape != (m,):
        raise ValueError(f"diagonal derivative must have shape ({m},), got {D.shape}")
    if D.ndim != 1 and D.shape != (n, m):
        raise ValueError(f"derivative columns must have shape ({n}, {m}), got {D.shape}")
    return D


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
