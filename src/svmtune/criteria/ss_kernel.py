"""The S&S ratio in a kernel's feature space and of every class pair (S&S ratio eq. (26)-(31)).

The directional S&S of two classes needs only inner products of the mapped points, so it is
computed exactly from the kernel matrix (:func:`kernel_ss_ratio`, :func:`kernel_ss_matrix`)
or from the per-sample class sums of the kernel
(:func:`svmtune.criteria.ss_core.ss_from_class_sums`); multiclass
problems use the worst class pair (eq. (31), :func:`min_pairwise_ss`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from svmtune._validation import check_labels, validate_sample_weight
from svmtune.criteria.ss_core import (
    ALPHA,
    ESTIMATORS,
    SSResult,
    _as_features,
    _check_alpha,
    _check_choice,
    _check_kernel_matrix,
    _check_two_classes,
    _plain,
    class_weight_matrix,
    ss_class_codes,
    ss_from_class_sums,
    ss_ratio,
)

__all__ = [
    "SSMatrix",
    "worst_pairs",
    "kernel_ss_matrix",
    "kernel_ss_ratio",
    "pairwise_ss",
    "min_pairwise_ss",
]


@dataclass(frozen=True)
class SSMatrix:
    """Directional S&S of every pair of classes at once, from one kernel matrix.

    Attributes
    ----------
    labels : ndarray (k,)
        Sorted class labels.
    d : ndarray (k, k)
        Separability of each pair (symmetric, 0 on the diagonal).
    class_sigmas : ndarray (k, k)
        ``class_sigmas[a, b]``: the directional spread of class ``a`` along the line between
        the centres of ``a`` and ``b``.
    class_sizes : ndarray (k,)
        Total sample weight per class.
    sigma : ndarray (k, k)
        Pooled scatteredness of each pair (eq. (8); symmetric).
    ss : ndarray (k, k)
        S&S of each pair in dB (symmetric; ``+inf`` on the diagonal).
    estimator : str
    """

    labels: np.ndarray
    d: np.ndarray
    class_sigmas: np.ndarray
    class_sizes: np.ndarray
    sigma: np.ndarray
    ss: np.ndarray
    estimator: str

    def result(self, a: int, b: int) -> SSResult:
        """The :class:`SSResult` of the pair of class indices ``a < b``."""
        return SSResult(
            d=float(self.d[a, b]),
            sigma=float(self.sigma[a, b]),
            ss=float(self.ss[a, b]),
            class_sigmas=(float(self.class_sigmas[a, b]), float(self.class_sigmas[b, a])),
            class_sizes=(float(self.class_sizes[a]), float(self.class_sizes[b])),
            classes=(_plain(self.labels[a]), _plain(self.labels[b])),
            spread="directional",
            estimator=self.estimator,
        )

    def worst_pair(self) -> tuple[int, int]:
        """Class indices ``a < b`` of the smallest S&S (eq. (31)); ties go to the first pair."""
        a, b = worst_pairs(self.ss[None])
        return int(a[0]), int(b[0])


def worst_pairs(ss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class indices ``a < b`` of the smallest S&S of each matrix in a batch ``ss`` of shape
    ``(s, k, k)`` (eq. (31)); ties go to the first pair in row-major order."""
    ss = np.asarray(ss, dtype=float)
    if ss.ndim != 3 or ss.shape[1] != ss.shape[2] or ss.shape[1] < 2:
        raise ValueError(
            f"ss must be a batch of S&S matrices of shape (s, k, k) with k >= 2, got {ss.shape}"
        )
    a, b = np.triu_indices(ss.shape[-1], k=1)
    i = np.argmin(ss[:, a, b], axis=1)
    return a[i], b[i]


def kernel_ss_matrix(
    K: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None = None,
    *,
    estimator: str = "loo",
    alpha: float = ALPHA,
) -> SSMatrix:
    """Directional S&S of all class pairs in the exact feature space of a kernel (eq. (7)-(9)).

    With ``K = Phi Phi^T`` and ``R = K W`` (``W``: per-class sample-weight indicators), the
    projection of ``phi(x_i)``, ``i`` in class ``a``, on the line from the centre of class
    ``b`` to that of ``a`` is ``G_ib = m_i - R_ib / W_b`` (times ``1 / d_ab``), where
    ``m_i = R_ia / W_a`` is its similarity to its own centre (with ``estimator="loo"``:
    ``(R_ia - w_i K_ii) / (W_a - w_i)``, the centre without ``i``).  The class means of ``G``
    give ``d_ab^2 = mean_a G_.b + mean_b G_.a`` and its class variances the spreads
    ``sigma_a = std_a(G_.b) / d_ab`` -- eq. (7)-(9) for every pair (eq. (31)) from one product
    ``K W``, O(n^2 k), without forming the feature space.  Each pair's numbers equal those of
    the pair's two classes alone (:func:`kernel_ss_ratio` on the sub-matrix).

    Parameters
    ----------
    K : ndarray (n, n)
        Symmetric positive semi-definite kernel matrix.
    y : array (n,)
        At least two classes.
    sample_weight, estimator, alpha
        As in :func:`ss_ratio`.

    Raises
    ------
    ValueError
        If ``K`` is not finite, square and symmetric (up to ``1e-10`` of ``max |K|``), has a
        negative diagonal entry, or ``y`` does not give every one of two or more classes a
        sample of positive weight.
    """
    _check_choice("estimator", estimator, ESTIMATORS)
    alpha = _check_alpha(alpha)
    K = _check_kernel_matrix(K)
    if np.any(np.diag(K) < 0):
        raise ValueError(
            "K has negative diagonal entries; it must be a positive semi-definite kernel "
            "matrix (K_ii = |phi(x_i)|^2 >= 0)"
        )
    labels, codes, w = ss_class_codes(y, sample_weight, K.shape[0], estimator)
    Wm = class_weight_matrix(codes, w, labels.shape[0])
    d, sig, pooled, ss = ss_from_class_sums(
        (K @ Wm)[None], np.diag(K)[None], codes, w, estimator, alpha
    )
    return SSMatrix(labels, d[0], sig[0], Wm.sum(axis=0), pooled[0], ss[0], estimator)


def kernel_ss_ratio(
    K: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None = None,
    *,
    estimator: str = "loo",
    alpha: float = ALPHA,
) -> SSResult:
    """Directional S&S of two classes in the exact feature space of a kernel (eq. (7)-(9)).

    ``d^2 = S_11 + S_22 - 2 S_12`` (class-block means of ``K``) and the projection of
    ``phi(x_i)`` on the centre line is ``(mean_{j in 1} K_ij - mean_{j in 2} K_ij) / d``,
    evaluated without forming the feature space of eq. (24) (the exact-SVD features of §5.1
    give the same numbers, see :func:`exact_kernel_features`); the two-class case of
    :func:`kernel_ss_matrix`.  O(n^2).  The isotropic spread needs the dimension of a feature
    map and is only available through :func:`ss_ratio`.

    Parameters
    ----------
    K : ndarray (n, n)
        Symmetric positive semi-definite kernel matrix.
    y, sample_weight, estimator, alpha
        As in :func:`ss_ratio`.
    """
    y = np.asarray(y).ravel()
    check_labels(y)
    _check_two_classes(np.unique(y))
    return kernel_ss_matrix(K, y, sample_weight, estimator=estimator, alpha=alpha).result(0, 1)


def pairwise_ss(
    y: np.ndarray,
    *,
    Z: np.ndarray | None = None,
    K: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    spread: str = "directional",
    estimator: str = "loo",
    alpha: float = ALPHA,
) -> dict[tuple[Any, Any], SSResult]:
    """S&S of every pair of classes, ``S&S_(i,j)`` (S&S ratio §5.3).

    Give features ``Z`` (any spread) or a kernel matrix ``K`` (directional only).  Each pair
    is computed on its own two classes' samples (from ``K``: all pairs in one pass,
    :func:`kernel_ss_matrix`).
    """
    if (Z is None) == (K is None):
        raise ValueError("give exactly one of Z (features) or K (kernel matrix)")
    y = np.asarray(y).ravel()
    check_labels(y)
    if Z is not None:
        Z = _as_features(Z)
        if Z.shape[0] != y.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but Z has {Z.shape[0]} rows")
    labels = np.unique(y)
    if labels.shape[0] < 2:
        raise ValueError("S&S needs at least two classes")
    if K is not None and spread != "directional":
        raise ValueError("from a kernel matrix only spread='directional' is defined")
    if K is not None:
        m = kernel_ss_matrix(K, y, sample_weight, estimator=estimator, alpha=alpha)
        return {
            (_plain(labels[a]), _plain(labels[b])): m.result(a, b)
            for a in range(labels.shape[0])
            for b in range(a + 1, labels.shape[0])
        }
    w = validate_sample_weight(sample_weight, y.shape[0])
    out: dict[tuple[Any, Any], SSResult] = {}
    for a in range(labels.shape[0]):
        for b in range(a + 1, labels.shape[0]):
            idx = np.flatnonzero((y == labels[a]) | (y == labels[b]))
            wi = None if w is None else w[idx]
            out[(_plain(labels[a]), _plain(labels[b]))] = ss_ratio(
                Z[idx], y[idx], wi, spread=spread, estimator=estimator, alpha=alpha
            )
    return out


def min_pairwise_ss(
    y: np.ndarray,
    *,
    Z: np.ndarray | None = None,
    K: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    spread: str = "directional",
    estimator: str = "loo",
    alpha: float = ALPHA,
) -> tuple[tuple[Any, Any], SSResult]:
    """The worst class pair ``S&S_min = min_(i,j) S&S_(i,j)`` and its result (eq. (31)).

    For two classes this is simply their S&S.  Ties go to the first pair in label order.
    """
    if K is not None and Z is None and spread == "directional":
        m = kernel_ss_matrix(K, y, sample_weight, estimator=estimator, alpha=alpha)
        a, b = m.worst_pair()
        return (_plain(m.labels[a]), _plain(m.labels[b])), m.result(a, b)
    res = pairwise_ss(
        y, Z=Z, K=K, sample_weight=sample_weight, spread=spread, estimator=estimator, alpha=alpha
    )
    pair = min(res, key=lambda k: res[k].ss)
    return pair, res[pair]
