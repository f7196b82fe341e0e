"""Separability and scatteredness (S&S) ratio: C, kernel and kernel parameter without a search.

Shamsi & Beheshti ("S&S ratio") describe two classes by

* the separability ``d = |mu_1 - mu_2|``, the distance between the class centres (eq. (7)),
* the scatteredness ``sigma = sqrt((n_1 sigma_1^2 + n_2 sigma_2^2) / (n_1 + n_2))``, the pooled
  spread of the classes (eq. (8)),
* the ratio ``S&S = 20 log10(d / (alpha sigma))`` in decibels with ``alpha = 6`` (eq. (9)), so
  that ``S&S = 0`` at ``sigma / d = 1/6`` and ``S&S = -5`` at ``sigma / d = 0.3``,

and read the hinge-loss optimal ``C`` off a curve of ``sigma / d`` (eq. (22)-(23), regimes of
eq. (28) and (32)).  Kernels are compared by the S&S of the data mapped into (an approximation
of) their feature space (eq. (26)-(27)); multiclass problems use the worst class pair (eq. (31)).

Choices this module makes where the paper is under-specified (each documented where it is
implemented):

* **Per-class spread** ``sigma_c``.  ``spread="directional"`` (default): the standard
  deviation of the class's points projected on the line through the two centres (the
  paper's "directional scatteredness").  It is dimension-free, so it means the same in input
  space and in a kernel feature space of any dimension, it is computable exactly from the
  kernel matrix, and for the paper's isotropic Gaussian classes it is exactly the simulated
  ``sigma``.  ``spread="isotropic"``: the root-mean-square per-coordinate standard deviation
  ``sqrt(tr Cov_c / p)`` ("the average standard deviation of all data points"), equal to
  the simulated ``sigma`` for isotropic classes too, but in a feature space it depends on the
  number of features ``p`` of the map (see :func:`kernel_features`).
* **Estimator.**  ``estimator="plain"`` is the paper's in-sample computation.
  ``estimator="loo"`` (default) removes every point's own contribution: ``d^2`` is the
  unbiased (U-statistic) estimate of the squared centre distance and each point is projected
  on the centre line built without it.  The plain estimates are biased upwards when the
  feature dimension is comparable with ``n``; with an RBF kernel of vanishing width
  (``K -> I``) the plain directional S&S diverges to ``+inf`` while the LOO one goes to
  ``-inf`` (no separation left), which is what kernel selection needs.
* **Scale of C.**  Scaling the data by ``a`` and ``C`` by ``1 / a^2`` leaves the hinge-loss
  SVM's decision function unchanged, so a curve built at ``d = 1`` gives
  ``C_opt = C_curve(sigma / d) / d^2`` (``rescale=True``, default).  The paper reads
  ``C_curve`` directly (``rescale=False``), which is only right when ``d = 1``.
"""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import ndtr
from sklearn.kernel_approximation import Nystroem, PolynomialCountSketch, RBFSampler

from svmtune._validation import check_labels
from svmtune._warnings import user_stacklevel
from svmtune.kernels import Kernel, gamma_from_sigma

__all__ = [
    "ALPHA",
    "SS_BREAK",
    "SS_KERNEL",
    "SPREADS",
    "ESTIMATORS",
    "FEATURE_MAPS",
    "SSResult",
    "ExpPiece",
    "CoptCurve",
    "PAPER_CURVE",
    "ss_db",
    "ss_from_ratio",
    "ratio_from_ss",
    "pooled_sigma",
    "separability",
    "class_spreads",
    "ss_ratio",
    "kernel_ss_ratio",
    "kernel_ss_matrix",
    "SSMatrix",
    "worst_pairs",
    "ss_from_class_sums",
    "class_weight_matrix",
    "ss_class_codes",
    "pairwise_ss",
    "min_pairwise_ss",
    "c_opt",
    "ss_regime",
    "load_copt_table",
    "gaussian_error_from_ss",
    "kernel_features",
    "exact_kernel_features",
    "select_kernel",
]

#: normalising factor of eq. (9) (the reading notes: 6, the "3-sigma rule" on both classes)
ALPHA = 6.0
#: S&S at sigma / d = 1/6: above it the classes are separable, C_opt rises with sigma / d
SS_BREAK = 0.0
#: S&S at sigma / d = 0.3: at or below it the paper asks for a (better) kernel
SS_KERNEL = -5.0
SPREADS = ("directional", "isotropic")
ESTIMATORS = ("loo", "plain")
FEATURE_MAPS = ("exact", "rff", "nystroem", "tensor_sketch")

_TABLE_RESOURCE = "data/ss_copt_table.json"


# ---------------------------------------------------------------------------------------------
# decibel conversions
# ---------------------------------------------------------------------------------------------
def _check_alpha(alpha: float) -> float:
    alpha = float(alpha)
    if not (np.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be positive and finite, got {alpha}")
    return alpha


def ss_db(d: float, sigma: float, alpha: float = ALPHA) -> float:
    """The S&S ratio in decibels, ``20 log10(d / (alpha sigma))`` (S&S ratio eq. (9)).

    Parameters
    ----------
    d : float
        Separability (eq. (7)), ``>= 0``.
    sigma : float
        Scatteredness (eq. (8)), ``>= 0``.
    alpha : float
        Normalising factor (6 in the paper).

    Returns
    -------
    float
        ``-inf`` when ``d = 0`` (no separation, whatever the spread); ``+inf`` when
        ``sigma = 0 < d`` (point-like, separated classes).
    """
    alpha = _check_alpha(alpha)
    d, sigma = float(d), float(sigma)
    if not (np.isfinite(d) and d >= 0) or not (np.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"d and sigma must be finite and non-negative, got d={d}, sigma={sigma}")
    if d == 0.0:
        return -np.inf
    if sigma == 0.0:
        return np.inf
    return float(20.0 * np.log10(d / (alpha * sigma)))


def ss_from_ratio(ratio: float | np.ndarray, alpha: float = ALPHA) -> float | np.ndarray:
    """S&S of a scatteredness-to-separability ratio ``sigma / d`` (eq. (9) with ``d = 1``)."""
    alpha = _check_alpha(alpha)
    r = np.asarray(ratio, dtype=float)
    if np.any(r < 0) or np.any(np.isnan(r)):
        raise ValueError("sigma / d must be non-negative")
    with np.errstate(divide="ignore"):
        out = -20.0 * np.log10(alpha * r)
    return float(out) if out.ndim == 0 else out


def ratio_from_ss(ss: float | np.ndarray, alpha: float = ALPHA) -> float | np.ndarray:
    """``sigma / d = 10^(-S&S / 20) / alpha``, the inverse of :func:`ss_from_ratio`."""
    alpha = _check_alpha(alpha)
    s = np.asarray(ss, dtype=float)
    if np.any(np.isnan(s)):
        raise ValueError("S&S must not be NaN")
    with np.errstate(over="ignore"):
        out = 10.0 ** (-s / 20.0) / alpha
    return float(out) if out.ndim == 0 else out


def gaussian_error_from_ss(ss: float | np.ndarray, alpha: float = ALPHA) -> float | np.ndarray:
    """Bayes error of two equiprobable isotropic Gaussian classes with the given S&S.

    With centres ``d`` apart and common spread ``sigma`` the optimal boundary is the
    perpendicular bisector and the error is ``Phi(-d / (2 sigma))``; by eq. (9)
    ``d / sigma = alpha 10^(S&S / 20)``.  This is the paper's "SNR" reading of S&S (§6,
    Fig. 11) made explicit; it is a model value, not an estimate for non-Gaussian data.
    """
    alpha = _check_alpha(alpha)
    s = np.asarray(ss, dtype=float)
    if np.any(np.isnan(s)):
        raise ValueError("S&S must not be NaN")
    with np.errstate(over="ignore"):
        out = ndtr(-0.5 * alpha * 10.0 ** (s / 20.0))
    return float(out) if out.ndim == 0 else out


# ---------------------------------------------------------------------------------------------
# separability, scatteredness, S&S
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SSResult:
    """Separability, scatteredness and S&S of one pair of classes.

    Attributes
    ----------
    d : float
        Separability, the distance between the class centres (eq. (7)); with
        ``estimator="loo"`` the square root of the unbiased estimate of ``d^2`` (0 when that
        estimate is negative).
    sigma : float
        Pooled scatteredness (eq. (8)).
    ss : float
        ``20 log10(d / (alpha sigma))`` in dB (eq. (9)).
    class_sigmas : (float, float)
        ``sigma_1, sigma_2`` of the two classes, in the order of ``classes``.
    class_sizes : (float, float)
        ``n_1, n_2`` (sums of sample weights).
    classes : (label, label)
        The two labels, sorted.
    spread, estimator : str
        How ``sigma_c`` and the estimates were computed.
    """

    d: float
    sigma: float
    ss: float
    class_sigmas: tuple[float, float]
    class_sizes: tuple[float, float]
    classes: tuple[Any, Any]
    spread: str = "directional"
    estimator: str = "loo"

    @property
    def ratio(self) -> float:
        """``sigma / d`` (``inf`` when ``d = 0``)."""
        return float(self.sigma / self.d) if self.d > 0 else np.inf

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["classes"] = [_plain(c) for c in self.classes]
        out["class_sigmas"] = list(self.class_sigmas)
        out["class_sizes"] = list(self.class_sizes)
        return out


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _check_choice(name: str, value: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def _wvar_cols(Z: np.ndarray, w: np.ndarray, unbiased: bool) -> np.ndarray:
    """Column-wise weighted variances; ``unbiased`` applies the reliability-weights
    correction ``W - sum w^2 / W``."""
    W = np.sum(w)
    m = (w @ Z) / W
    ss = w @ (Z - m) ** 2
    if not unbiased:
        return ss / W
    denom = W - np.sum(w**2) / W
    return ss / denom if denom > 0 else np.zeros_like(ss)


def _check_two_classes(labels: np.ndarray) -> None:
    if labels.shape[0] != 2:
        raise ValueError(
            f"S&S is defined for two classes, got {labels.shape[0]}; "
            "use pairwise_ss / min_pairwise_ss for multiclass labels (eq. (31))"
        )


def _warn_collapsed() -> None:
    warnings.warn(
        "both classes collapse to a point along the centre line (zero scatteredness): S&S = +inf",
        RuntimeWarning,
        stacklevel=user_stacklevel(),
    )


def _finish(d, sigmas, sizes, labels, spread, estimator, alpha) -> SSResult:
    sigma = pooled_sigma(sigmas, sizes)
    if d > 0 and sigma > 0:
        ss = ss_db(d, sigma, alpha)
    elif d > 0:
        _warn_collapsed()
        ss = np.inf
    else:
        ss = -np.inf
    return SSResult(
        d=float(d),
        sigma=float(sigma),
        ss=float(ss),
        class_sigmas=(float(sigmas[0]), float(sigmas[1])),
        class_sizes=(float(sizes[0]), float(sizes[1])),
        classes=(_plain(labels[0]), _plain(labels[1])),
        spread=spread,
        estimator=estimator,
    )


def pooled_sigma(class_sigmas: Sequence[float], class_sizes: Sequence[float]) -> float:
    """Scatteredness ``sqrt((n_1 sigma_1^2 + n_2 sigma_2^2) / (n_1 + n_2))`` (eq. (8))."""
    s = np.asarray(class_sigmas, dtype=float)
    n = np.asarray(class_sizes, dtype=float)
    if s.shape != n.shape or np.any(s < 0) or np.any(n < 0) or n.sum() <= 0:
        raise ValueError("class spreads and sizes must be non-negative and of equal length")
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(n))):
        raise ValueError("class spreads and sizes must be finite (no NaN or infinity)")
    return float(np.sqrt(np.sum(n * s**2) / np.sum(n)))


def _as_features(Z: np.ndarray) -> np.ndarray:
    Z = np.asarray(Z, dtype=float)
    if Z.ndim == 1:
        Z = Z[:, None]
    if Z.ndim != 2 or not np.all(np.isfinite(Z)):
        raise ValueError("features must be a finite 2-D array (n_samples, n_features)")
    return Z


def separability(
    Z: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None = None,
    *,
    estimator: str = "plain",
) -> float:
    """Distance between the two class centres, ``d = |mu_1 - mu_2|`` (S&S ratio eq. (7)).

    ``estimator="plain"`` is the distance between the (weighted) sample means;
    ``estimator="loo"`` is the square root of the unbiased estimate
    ``|m_1 - m_2|^2 - tr S_1 / n_1 - tr S_2 / n_2`` (0 if that is negative).
    """
    return ss_ratio(Z, y, sample_weight, spread="isotropic", estimator=estimator).d


def class_spreads(
    Z: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None = None,
    *,
    spread: str = "directional",
    estimator: str = "loo",
) -> tuple[float, float]:
    """Per-class spreads ``(sigma_1, sigma_2)`` entering eq. (8); see :func:`ss_ratio`."""
    return ss_ratio(Z, y, sample_weight, spread=spread, estimator=estimator).class_sigmas


def ss_ratio(
    Z: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None = None,
    *,
    spread: str = "directional",
    estimator: str = "loo",
    alpha: float = ALPHA,
) -> SSResult:
    """Separability, scatteredness and S&S of two classes in a feature space (eq. (7)-(9)).

    Parameters
    ----------
    Z : ndarray (n, p)
        The data (input space, or a feature map from :func:`kernel_features`).
    y : array (n,)
        Two distinct labels.
    sample_weight : array (n,), optional
        Weighted means and variances; ``n_c`` in eq. (8) becomes the class's total weight.
    spread : {"directional", "isotropic"}
        ``sigma_c``: standard deviation of the class projected on the line between the centres
        (directional), or ``sqrt(tr Cov_c / p)``, the RMS per-coordinate standard deviation
        (isotropic).  Both equal ``sigma`` for the paper's isotropic Gaussian classes.
    estimator : {"loo", "plain"}
        "plain": in-sample means and population variances (the paper).  "loo": unbiased
        ``d^2``; directional projections of every point on the centre line computed without
        it (leave-one-out) and unbiased variances.
    alpha : float
        Eq. (9)'s normalising factor.

    Returns
    -------
    SSResult
    """
    _check_choice("spread", spread, SPREADS)
    _check_choice("estimator", estimator, ESTIMATORS)
    alpha = _check_alpha(alpha)
    Z = _as_features(Z)
    labels, codes, w = ss_class_codes(y, sample_weight, Z.shape[0], estimator)
    _check_two_classes(labels)
    Wm = class_weight_matrix(codes, w, 2)
    sums = Z.T @ Wm  # class sums of the features, (p, 2)
    self_sim = np.einsum("ij,ij->i", Z, Z)
    d2, sig2, _, _ = ss_from_class_sums(
        (Z @ sums)[None], self_sim[None], codes, w, estimator, alpha, warn=False
    )
    d, dir_sig = float(d2[0, 0, 1]), (float(sig2[0, 0, 1]), float(sig2[0, 1, 0]))
    sizes = tuple(float(v) for v in Wm.sum(axis=0))
    if estimator == "plain":
        # the distance between the means directly (no cancellation at small d)
        mu = [sums[:, k] / sizes[k] for k in range(2)]
        d_direct = float(np.linalg.norm(mu[0] - mu[1]))
        if d > 0:
            dir_sig = tuple(s * d / d_direct for s in dir_sig) if d_direct > 0 else (0.0, 0.0)
        d = d_direct
    if spread == "directional":
        sigmas = dir_sig
    else:
        unbiased = estimator == "loo"
        p = Z.shape[1]
        sigmas = tuple(
            float(np.sqrt(_wvar_cols(Z[codes == c], w[codes == c], unbiased).sum() / p))
            for c in range(2)
        )
    return _finish(d, sigmas, sizes, labels, spread, estimator, alpha)


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


def _check_kernel_matrix(K) -> np.ndarray:
    """``K`` as a finite, square, symmetric float matrix (symmetric up to ``1e-10`` relative
    to ``max |K|``)."""
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or not np.all(np.isfinite(K)):
        raise ValueError(f"K must be a finite square kernel matrix, got shape {K.shape}")
    if K.size and np.max(np.abs(K - K.T)) > 1e-10 * np.max(np.abs(K)):
        raise ValueError(
            "K is not symmetric; a kernel matrix has K[i, j] = K[j, i] (pass the full "
            "matrix of one kernel, e.g. (K + K.T) / 2 if it only carries round-off)"
        )
    return K


def ss_class_codes(
    y: np.ndarray, sample_weight: np.ndarray | None, n: int, estimator: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated labels, class codes and weights for the kernel S&S of all class pairs.

    Every class needs a sample with positive weight, and two of them for ``estimator="loo"``
    (a point's own centre is computed without it).
    """
    y = np.asarray(y).ravel()
    check_labels(y)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but the kernel matrix has {n} rows")
    labels, codes = np.unique(y, return_inverse=True)
    k = labels.shape[0]
    if k < 2:
        raise ValueError("S&S needs at least two classes")
    if sample_weight is None:
        w = np.ones(n)
    else:
        w = np.asarray(sample_weight, dtype=float).ravel()
        if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(f"sample_weight must be {n} finite non-negative numbers")
    npos = np.bincount(codes, weights=(w > 0).astype(float), minlength=k)
    for lab, c in zip(labels, npos):
        if c < 1:
            raise ValueError(f"class {lab!r} has no sample with positive weight")
    if estimator == "loo" and np.any(npos < 2):
        raise ValueError(
            "estimator='loo' needs at least two samples with positive weight in each class"
        )
    return labels, codes.ravel(), w


def class_weight_matrix(codes: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    """``(n, k)`` matrix with ``w_i`` in column ``codes[i]`` (per-class weight indicators)."""
    Wm = np.zeros((codes.shape[0], k))
    Wm[np.arange(codes.shape[0]), codes] = w
    return Wm


def ss_from_class_sums(
    R: np.ndarray,
    kdiag: np.ndarray,
    codes: np.ndarray,
    w: np.ndarray,
    estimator: str = "loo",
    alpha: float = ALPHA,
    *,
    warn: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Directional separability, spreads and S&S of all class pairs for a batch of kernels.

    The arithmetic of :func:`kernel_ss_matrix` after the product ``R = K W``, vectorised over
    a leading batch axis (one entry per kernel or kernel parameter).  Inputs are not
    validated (every class needs positive weight, two samples with ``estimator="loo"``).

    Parameters
    ----------
    R : ndarray (s, n, k)
        ``R[., i, c] = sum_{j in c} w_j K_ij``.
    kdiag : ndarray (s, n)
        ``K_ii``.
    codes : ndarray (n,)
        Class index of every sample.
    w : ndarray (n,)
        Sample weights.
    warn : bool
        Warn when a pair has zero scatteredness (S&S = +inf).

    Returns
    -------
    d, class_sigmas, sigma, ss : ndarray (s, k, k)
        As the attributes of :class:`SSMatrix`.
    """
    s, n, k = R.shape
    W = np.bincount(codes, weights=w, minlength=k)
    own = R[:, np.arange(n), codes]
    if estimator == "loo":
        denom = W[codes] - w
        m_own = (own - w * kdiag) / np.where(denom > 0, denom, 1.0)
        m_own[:, denom <= 0] = 0.0
    else:
        m_own = own / W[codes]
    # G[., b, i]: d_ab times the projection of sample i (class a) on the line from the centre
    # of b to that of a.
    # Layout (s, k, n), samples last, so that every broadcast runs over contiguous rows; the
    # class means and variances are batched matrix products with the weight indicators.
    Rt = np.ascontiguousarray(np.swapaxes(R, 1, 2))
    G = m_own[:, None, :] - Rt / W[:, None]
    Wm = class_weight_matrix(codes, w, k)
    mu = np.swapaxes(np.matmul(G, Wm), 1, 2) / W[:, None]  # mu[., a, b]: mean of G[., b] on a
    Gc = G - np.swapaxes(mu, 1, 2)[:, :, codes]
    var = np.swapaxes(np.matmul(Gc * Gc, Wm), 1, 2)
    if estimator == "loo":
        vden = W - np.bincount(codes, weights=w * w, minlength=k) / W
        var = np.where(vden[:, None] > 0, var / np.where(vden > 0, vden, 1.0)[:, None], 0.0)
    else:
        var = var / W[:, None]
    # a class constant along a centre line gives variance 0 up to the round-off of its mean:
    # flush what lies below that round-off to an exact 0 (S&S = +inf, not a huge number)
    counts = np.bincount(codes, minlength=k)
    eps = np.finfo(float).eps
    # G's terms (own-class and other-class kernel means) carry the round-off of sums of up
    # to n kernel values; mu[., a, b] averages G over class a
    terms = np.abs(m_own)[:, None, :] + np.abs(Rt) / W[:, None]
    err = np.empty_like(mu)
    for a in range(k):
        in_a = codes == a
        scale = np.max(np.abs(G[:, :, in_a]), axis=2)
        row = var[:, a]
        row[row <= (4.0 * counts[a] * eps * scale) ** 2] = 0.0
        err[:, a] = 4.0 * n * eps * np.max(terms[:, :, in_a], axis=2)
    # centres that coincide up to that round-off are equal: d = 0 (S&S = -inf), not a
    # round-off residue that C = curve / d^2 would turn into an astronomical C
    d2 = mu + np.swapaxes(mu, 1, 2)
    d2[d2 <= err + np.swapaxes(err, 1, 2)] = 0.0
    d = np.sqrt(d2)
    eye = np.eye(k, dtype=bool)
    d[:, eye] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        sig = np.where(d > 0, np.sqrt(np.maximum(var, 0.0)) / d, 0.0)
        sig2 = W[:, None] * sig**2
        pooled = np.sqrt((sig2 + np.swapaxes(sig2, 1, 2)) / (W[:, None] + W))
        ss = np.where(
            d > 0,
            np.where(pooled > 0, 20.0 * np.log10(d / (alpha * pooled)), np.inf),
            -np.inf,
        )
    ss[:, eye] = np.inf
    if warn and np.any((d > 0) & (pooled == 0) & ~eye):
        _warn_collapsed()
    return d, sig, pooled, ss


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
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=float).ravel()
    if w is not None and w.shape != y.shape:
        raise ValueError(f"sample_weight must be {y.shape[0]} numbers, got shape {w.shape}")
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


# ---------------------------------------------------------------------------------------------
# C_opt as a function of S&S
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExpPiece:
    """``C(r) = a exp(b r) + c`` of ``r = sigma / d`` (the form of eq. (22)-(23))."""

    a: float
    b: float
    c: float

    def __call__(self, r: float | np.ndarray) -> float | np.ndarray:
        out = self.a * np.exp(self.b * np.asarray(r, dtype=float)) + self.c
        return float(out) if np.ndim(out) == 0 else out


@dataclass(frozen=True)
class CoptCurve:
    """Hinge-loss optimal ``C`` as a function of ``r = sigma / d`` at ``d = 1``.

    ``rising`` applies for ``r < r_break`` (S&S > 0, eq. (22)), ``falling`` for
    ``r_break <= r < r_kernel`` (-5 < S&S <= 0, eq. (23)).  For ``r >= r_kernel`` (S&S <= -5)
    the paper gives no value -- it asks for a kernel (eq. (32)); without a ``tail`` the curve
    returns its value at ``r_kernel``, with one (the regenerated table simulates that regime
    too) it follows ``tail`` up to ``r_max`` and stays constant beyond.  Values are floored
    at ``c_min`` (the printed constants make eq. (22)-(23) negative far outside their ranges).

    Attributes
    ----------
    rising, falling : ExpPiece
    r_break, r_kernel : float
    tail : ExpPiece or None
    r_max : float or None
        End of the simulated range of ``tail``.
    c_min : float
    source : str
        Where the constants come from.
    """

    rising: ExpPiece
    falling: ExpPiece
    r_break: float = 1.0 / 6.0
    r_kernel: float = 0.3
    tail: ExpPiece | None = None
    r_max: float | None = None
    c_min: float = 1e-3
    source: str = ""

    def __call__(self, r: float | np.ndarray) -> float | np.ndarray:
        r = np.asarray(r, dtype=float)
        if np.any(np.isnan(r)) or np.any(r < 0):
            raise ValueError("sigma / d must be non-negative")
        if self.tail is None:
            rc = np.minimum(r, self.r_kernel)
            out = np.where(rc < self.r_break, self.rising(rc), self.falling(rc))
        else:
            r_max = self.r_kernel if self.r_max is None else max(self.r_max, self.r_kernel)
            rc = np.minimum(r, r_max)
            out = np.where(
                rc < self.r_break,
                self.rising(rc),
                np.where(rc < self.r_kernel, self.falling(rc), self.tail(rc)),
            )
        out = np.maximum(out, self.c_min)
        return float(out) if out.ndim == 0 else out


#: eq. (22)-(23) with the printed constants; the switch is at S&S = 0 (eq. (28)), i.e.
#: sigma / d = 1/6, where the text puts the breaking point (eq. (22)-(23) print 0.16)
PAPER_CURVE = CoptCurve(
    rising=ExpPiece(0.7345, 33.6915, -0.5247),
    falling=ExpPiece(5164.4657, -21.2514, -0.8548),
    r_break=1.0 / 6.0,
    r_kernel=0.3,
    source="S&S ratio eq. (22)-(23), printed constants",
)


def ss_regime(ss: float) -> str:
    """Regime of eq. (28)/(32): "separable" (S&S > 0), "overlapping" (-5 < S&S <= 0) or
    "kernel" (S&S <= -5: not linearly separable in this space, the paper asks for a kernel).
    """
    ss = float(ss)
    if np.isnan(ss):
        raise ValueError("S&S must not be NaN")
    if ss > SS_BREAK:
        return "separable"
    if ss > SS_KERNEL:
        return "overlapping"
    return "kernel"


def c_opt(
    ss: float,
    *,
    d: float | None = None,
    curve: CoptCurve = PAPER_CURVE,
    rescale: bool = True,
    alpha: float = ALPHA,
) -> float:
    """Hinge-loss optimal ``C`` from the S&S ratio (S&S ratio eq. (22)-(23), (28), (32)).

    ``r = sigma / d = 10^(-S&S/20) / alpha`` is read off ``curve`` (built for ``d = 1``).
    With ``rescale=True`` and ``d`` given the value is divided by ``d^2``: the hinge-loss SVM
    on data scaled by ``a`` with penalty ``C / a^2`` has the same decision function, so a
    curve for ``d = 1`` transfers to separability ``d`` as ``C_curve(r) / d^2``.  The paper
    omits this factor (``rescale=False``).  ``S&S = +inf`` gives ``curve(0)``; for
    ``S&S <= -5`` see :class:`CoptCurve` (the paper's curve stops at ``r_kernel = 0.3``).
    """
    ss = float(ss)
    if np.isnan(ss):
        raise ValueError("S&S must not be NaN")
    r = 0.0 if ss == np.inf else (np.inf if ss == -np.inf else ratio_from_ss(ss, alpha))
    C = float(curve(r))
    if rescale:
        if d is None:
            raise ValueError("rescale=True needs the separability d (or pass rescale=False)")
        d = float(d)
        if not (np.isfinite(d) and d > 0):
            raise ValueError(f"d must be positive and finite to rescale C, got {d}")
        C = C / d**2
    return C


def load_copt_table(path: str | Path | None = None) -> CoptCurve:
    """The regenerated C_opt curve shipped with svmtune (or the JSON at ``path``).

    The file is written by ``python -m svmtune.criteria.ss_table``; its ``"fit"`` entry holds
    the exponential pieces refitted to the simulated optimum ``C`` (see that module).
    """
    if path is None:
        return _shipped_copt_table()
    return _copt_curve(json.loads(Path(path).read_text()), path)


@functools.lru_cache(maxsize=1)
def _shipped_copt_table() -> CoptCurve:
    """The shipped curve, parsed once per process (it is read by every S&S-RB selection)."""
    return _copt_curve(
        json.loads(resources.files("svmtune.criteria").joinpath(_TABLE_RESOURCE).read_text())
    )


def _copt_curve(table: dict, path=None) -> CoptCurve:
    try:
        return _parse_copt_curve(table)
    except (KeyError, TypeError, AttributeError) as e:
        where = "the C_opt table" if path is None else f"C_opt table {str(path)!r}"
        raise ValueError(
            f"{where} is not a table written by `python -m svmtune.criteria.ss_table`: its "
            f'"fit" entry needs rising, falling (each with a, b, c), r_break and r_kernel '
            f"({type(e).__name__}: {e})"
        ) from None


def _parse_copt_curve(table: dict) -> CoptCurve:
    fit = table["fit"]
    tail = fit.get("tail")
    return CoptCurve(
        rising=ExpPiece(**fit["rising"]),
        falling=ExpPiece(**fit["falling"]),
        r_break=float(fit["r_break"]),
        r_kernel=float(fit["r_kernel"]),
        tail=None if tail is None else ExpPiece(**tail),
        r_max=None if fit.get("r_max") is None else float(fit["r_max"]),
        c_min=float(fit.get("c_min", 1e-3)),
        source=str(table.get("command", "svmtune.criteria.ss_table")),
    )


# ---------------------------------------------------------------------------------------------
# feature maps (eq. (24), §5.1) and kernel selection (eq. (26)-(27))
# ---------------------------------------------------------------------------------------------
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
