"""Feature maps of a kernel and the kernel choice by S&S (S&S ratio eq. (24), (26)-(27), §5.1).

Kernels are compared by the S&S of the data mapped into (an approximation of) their feature
space: the exact map of the kernel matrix (:func:`exact_kernel_features`) or an approximate
one (:func:`kernel_features`: random Fourier features, Nystroem, tensor sketch);
:func:`select_kernel` keeps the highest S&S above -5 dB.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.kernel_approximation import Nystroem, PolynomialCountSketch, RBFSampler

from svmtune.criteria.ss_core import (
    FEATURE_MAPS,
    SS_KERNEL,
    _as_features,
    _check_choice,
    _check_kernel_matrix,
)
from svmtune.kernels import Kernel, gamma_from_sigma

__all__ = [
    "exact_kernel_features",
    "kernel_features",
    "select_kernel",
]


def exact_kernel_features(K: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Exact feature map of a kernel matrix by its eigendecomposition (§5.1, "SVD").

    ``K = V diag(lam) V^T`` gives ``Phi = V_+ diag(sqrt(lam_+))`` with ``Phi Phi^T = K`` on
    the eigenvalues above ``rtol * max(lam)``; rows are the training points.  O(n^3).

    Raises
    ------
    ValueError
        If ``K`` is not a finite, symmetric, positive semi-definite square matrix (negative
        eigenvalues beyond ``1e-8`` of the largest magnitude), or ``rtol`` is not in
        ``[0, 1)``.
    """
    rtol = float(rtol)
    if not (0 <= rtol < 1):
        raise ValueError(f"rtol must be a number in [0, 1), got {rtol}")
    K = _check_kernel_matrix(K)
    lam, V = np.linalg.eigh(0.5 * (K + K.T))
    top = float(lam.max()) if lam.size else 0.0
    if lam.size and lam.min() < -1e-8 * max(top, -float(lam.min())):
        raise ValueError(
            f"K is not positive semi-definite (eigenvalues down to {lam.min():.3g}, largest "
            f"{top:.3g}); pass the matrix of a positive semi-definite kernel"
        )
    if top <= 0:
        return np.zeros((K.shape[0], 1))
    keep = lam > rtol * top
    return V[:, keep] * np.sqrt(lam[keep])


def kernel_features(
    X: np.ndarray,
    kernel: Kernel,
    *,
    method: str = "exact",
    n_components: int = 512,
    random_state: int | np.random.RandomState | None = None,
) -> np.ndarray:
    """Feature map ``Phi(X)`` of a kernel, exact or approximate (S&S ratio §5.1).

    Parameters
    ----------
    X : ndarray (n, p)
    kernel : Kernel
        "linear" (returns ``X``), "rbf" or "poly".
    method : {"exact", "rff", "nystroem", "tensor_sketch"}
        "exact": eigendecomposition of the kernel matrix (:func:`exact_kernel_features`);
        "rff": random Fourier features / random kitchen sinks (RBF only; Rahimi & Recht,
        scikit-learn ``RBFSampler``); "nystroem": Nystroem features on ``n_components``
        random landmarks; "tensor_sketch": Tensor Sketch (polynomial only; Pham & Pagh,
        scikit-learn ``PolynomialCountSketch``).
    n_components : int
        Dimension of the approximate maps (ignored by "exact").
    random_state
        Seeds the approximate maps.
    """
    _check_choice("method", method, FEATURE_MAPS)
    X = _as_features(X)
    if not isinstance(kernel, Kernel):
        raise TypeError("kernel must be a svmtune.kernels.Kernel")
    if kernel.name not in ("linear", "rbf", "poly"):
        raise ValueError(
            f"S&S feature maps are defined for positive semi-definite kernels "
            f"('linear', 'rbf', 'poly'), not {kernel.name!r}"
        )
    if int(n_components) < 1:
        raise ValueError(f"n_components must be a positive integer, got {n_components}")
    n_components = int(n_components)
    if kernel.name == "linear":
        return X
    if method == "exact":
        return exact_kernel_features(kernel(X))
    if method == "rff":
        if kernel.name != "rbf":
            raise ValueError("random Fourier features approximate the RBF kernel only")
        rs = RBFSampler(
            gamma=gamma_from_sigma(kernel.sigma),
            n_components=n_components,
            random_state=random_state,
        )
        return rs.fit_transform(X)
    if method == "tensor_sketch":
        if kernel.name != "poly":
            raise ValueError("Tensor Sketch approximates the polynomial kernel only")
        ts = PolynomialCountSketch(
            gamma=kernel.gamma,
            degree=int(kernel.degree),
            coef0=kernel.coef0,
            n_components=n_components,
            random_state=random_state,
        )
        return ts.fit_transform(X)
    # Nystroem
    kw: dict[str, Any] = {"kernel": kernel.name}
    if kernel.name == "rbf":
        kw["gamma"] = gamma_from_sigma(kernel.sigma)
    else:
        kw.update(gamma=kernel.gamma, degree=int(kernel.degree), coef0=kernel.coef0)
    ny = Nystroem(n_components=min(n_components, X.shape[0]), random_state=random_state, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # n_components > n_samples is capped above
        return ny.fit_transform(X)


def select_kernel(ss_values: Sequence[float], threshold: float = SS_KERNEL) -> tuple[int, bool]:
    """Index of the kernel to use: the highest S&S among those above ``threshold``.

    Eq. (26)-(27): kernels with ``S&S <= -5`` are discarded, the maximum is kept.  When every
    candidate is discarded the paper gives no rule; the maximum over all candidates is
    returned with ``admissible=False`` so that the caller can say so.  Ties go to the first
    candidate.

    Returns
    -------
    index : int
    admissible : bool
        Whether the chosen candidate passed the threshold.
    """
    s = np.asarray(ss_values, dtype=float)
    if s.ndim != 1 or s.size == 0:
        raise ValueError("need a non-empty 1-D sequence of S&S values")
    if np.any(np.isnan(s)):
        raise ValueError("S&S values must not be NaN")
    if np.isnan(threshold):
        raise ValueError("threshold must not be NaN (S&S in dB; the paper uses -5)")
    ok = s > threshold
    if ok.any():
        return int(np.flatnonzero(ok)[np.argmax(s[ok])]), True
    return int(np.argmax(s)), False
