"""The S&S ratio of two classes (S&S ratio eq. (7)-(9)): separability, scatteredness, decibels.

This module holds the ratio of two classes; :mod:`svmtune.criteria.ss_kernel` computes it in
a feature space for every class pair, :mod:`svmtune.criteria.ss_copt` reads the optimal C and
:mod:`svmtune.criteria.ss_features` builds the feature maps and chooses the kernel.

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
  number of features ``p`` of the map (see :func:`svmtune.criteria.ss_features.kernel_features`).
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

import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.special import ndtr

from svmtune._option_values import check_positive
from svmtune._validation import check_labels, validate_sample_weight
from svmtune._warnings import user_stacklevel

__all__ = [
    "ALPHA",
    "SS_BREAK",
    "SS_KERNEL",
    "SPREADS",
    "ESTIMATORS",
    "FEATURE_MAPS",
    "SSResult",
    "ss_db",
    "ss_from_ratio",
    "ratio_from_ss",
    "gaussian_error_from_ss",
    "pooled_sigma",
    "separability",
    "class_spreads",
    "ss_ratio",
    "ss_class_codes",
    "class_weight_matrix",
    "ss_from_class_sums",
]

#: normalising factor of eq. (9): 6, the "3-sigma rule" on both classes (S&S ratio §3)
ALPHA = 6.0
#: S&S at sigma / d = 1/6: above it the classes are separable, C_opt rises with sigma / d
SS_BREAK = 0.0
#: S&S at sigma / d = 0.3: at or below it the paper asks for a (better) kernel
SS_KERNEL = -5.0
SPREADS = ("directional", "isotropic")
ESTIMATORS = ("loo", "plain")
FEATURE_MAPS = ("exact", "rff", "nystroem", "tensor_sketch")


# ---------------------------------------------------------------------------------------------
# decibel conversions
# ---------------------------------------------------------------------------------------------
def _check_alpha(alpha: float) -> float:
    return check_positive("alpha", alpha)


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
        w = validate_sample_weight(sample_weight, n)
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
