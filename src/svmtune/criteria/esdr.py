"""Class-separability indices in feature space: ESDR, DBTC and J4 (Yin & Yin 2016).

All three are functions of the class-block means of the feature-space squared distance
``d_F^2(x, x') = K(x, x) + K(x', x') - 2 K(x, x')`` (ESDR eq. (9)), averaged over all ordered
pairs including ``i1 = i2`` (ESDR eq. (10)-(12)).  With ``s_ab`` the block mean between classes
``a`` and ``b`` and class fractions ``w_a = n_a / n`` (or weight fractions):

* ESDR (eq. (8)):   ``s_12 / (w_1 s_11 + w_2 s_22)`` -- 1 for completely mixed classes.
* DBTC (eq. (13) = eq. (16)):  ``||m_1 - m_2||^2 = s_12 - (s_11 + s_22) / 2``; the identity
  with eq. (13) holds for every kernel (the ``K_ii`` terms cancel), not only normalised ones.
* J4 (eq. (14)):  ``tr S_b / tr S_w = w_1 w_2 (2 s_12 - s_11 - s_22) / (w_1 s_11 + w_2 s_22)``,
  using ``tr S_w = (1/2) sum_c w_c s_cc`` and ``tr S_b = w_1 w_2 DBTC`` (eq. (15)).

The paper selects the width that **maximises** each index (Sec. 4.1, step 3).

Multiclass rule (the paper is binary only): every index is computed for each pair of classes
``(a, b)`` from that pair alone (class fractions renormalised to the pair) and the pairs are
reduced by their **minimum** (default: the worst-separated pair must be separated) or their
mean.  :func:`j4_scatter` is the native k-class scatter ratio of eq. (14), for reference.

ESDR, J4 and the ESDR denominator are scale-free, so they are evaluated from
:attr:`~svmtune.criteria._common.BlockStats.dist` (squared distances divided by ``1 / sigma^2``
for the RBF kernel), which keeps them exact as sigma -> inf where they tend to their input-space
values (eq. (19)).  Degenerate ratios never return NaN: ``0 / 0`` (all points of every class
coincide and so do the classes) gives 1 for ESDR and 0 for J4; ``x / 0`` with ``x > 0`` gives
``inf`` (perfectly separable point masses).

Also here: the analytic ESDR of two Gaussian classes with diagonal covariances (eq. (17)-(18))
with its limits, and the Gaussian-data study of Figs. 2, 3 and 9.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from svmtune._option_values import check_positive
from svmtune.criteria._common import BlockStats, _check_class_weights, rbf_t
from svmtune.criteria.blocks import RBFBlocks

__all__ = [
    "INDICES",
    "REDUCTIONS",
    "esdr_pair",
    "dbtc_pair",
    "j4_pair",
    "j4_scatter",
    "pair_index",
    "index_values",
    "index_uncertainty",
    "rbf_index_curve",
    "gaussian_between_sqdist",
    "gaussian_within_sqdist",
    "gaussian_esdr",
    "gaussian_esdr_input",
    "gaussian_study_case",
    "gaussian_study_curves",
    "sample_gaussian_case",
]

INDICES = ("esdr", "dbtc", "j4")
REDUCTIONS = ("min", "mean")


# ------------------------------------------------------------------------------ binary indices
def _safe_ratio(num: np.ndarray, den: np.ndarray, zero_zero: float) -> np.ndarray:
    num, den = np.broadcast_arrays(np.asarray(num, float), np.asarray(den, float))
    out = np.empty(num.shape)
    pos = den > 0
    out[pos] = num[pos] / den[pos]
    z = ~pos
    out[z] = np.where(num[z] > 0, np.inf, np.where(num[z] < 0, -np.inf, zero_zero))
    return out


def _check_pair(s11, s12, s22, w1=0.5, w2=0.5) -> None:
    """Raise unless the mean squared distances are finite and the class fractions finite,
    non-negative and not both 0."""
    for nm, v in (("s11", s11), ("s12", s12), ("s22", s22)):
        if not np.all(np.isfinite(np.asarray(v, float))):
            raise ValueError(f"{nm} must be finite (mean squared distances), got {v!r}")
    w1, w2 = float(w1), float(w2)
    if not (np.isfinite(w1) and np.isfinite(w2) and w1 >= 0 and w2 >= 0 and w1 + w2 > 0):
        raise ValueError(
            f"class fractions w1, w2 must be finite, non-negative and not both 0, got {w1}, {w2}"
        )


def esdr_pair(s11, s12, s22, w1, w2) -> np.ndarray:
    """ESDR of two classes from mean squared distances (ESDR eq. (8) with eq. (10)-(12)).

    Parameters
    ----------
    s11, s22 : array
        Within-class means of the squared distance over ordered pairs (``i1 = i2`` included).
    s12 : array
        Between-class mean of the squared distance.
    w1, w2 : float
        Class fractions ``n_1 / n`` and ``n_2 / n``.

    Raises
    ------
    ValueError
        If a mean is not finite, or a class fraction is negative or not finite.
    """
    _check_pair(s11, s12, s22, w1, w2)
    return _esdr_pair(s11, s12, s22, w1, w2)


def _esdr_pair(s11, s12, s22, w1, w2) -> np.ndarray:
    return _safe_ratio(s12, w1 * np.asarray(s11) + w2 * np.asarray(s22), 1.0)


def dbtc_pair(s11, s12, s22) -> np.ndarray:
    """DBTC, the squared distance between the class means in feature space (eq. (13), (16))."""
    _check_pair(s11, s12, s22)
    return _dbtc_pair(s11, s12, s22)


def _dbtc_pair(s11, s12, s22) -> np.ndarray:
    return np.asarray(s12, float) - 0.5 * (np.asarray(s11, float) + np.asarray(s22, float))


def j4_pair(s11, s12, s22, w1, w2) -> np.ndarray:
    """J4 = tr(S_b) / tr(S_w) of two classes (ESDR eq. (14)) from mean squared distances.

    ``tr S_b = w1 w2 (2 s12 - s11 - s22) / 2`` and ``tr S_w = (w1 s11 + w2 s22) / 2``.
    """
    _check_pair(s11, s12, s22, w1, w2)
    return _j4_pair(s11, s12, s22, w1, w2)


def _j4_pair(s11, s12, s22, w1, w2) -> np.ndarray:
    s11, s12, s22 = (np.asarray(v, float) for v in (s11, s12, s22))
    return _safe_ratio(w1 * w2 * (2.0 * s12 - s11 - s22), w1 * s11 + w2 * s22, 0.0)


def j4_scatter(dist: np.ndarray, class_weights: np.ndarray) -> np.ndarray:
    """Native k-class J4 = tr(S_b) / tr(S_w) of eq. (14) from block distance means.

    ``tr S_w = (1/2) sum_c w_c s_cc`` and
    ``tr S_b = (1/2) (sum_ab w_a w_b s_ab - sum_c w_c s_cc)``; equals :func:`j4_pair` for k = 2.

    Parameters
    ----------
    dist : array (..., k, k)
    class_weights : array (k,)
    """
    d = _check_dist(dist)
    w = _check_class_weights(class_weights, d.shape[-1])
    w = w / w.sum()
    within = np.einsum("...cc,c->...", d, w)
    total = np.einsum("...ab,a,b->...", d, w, w)
    return _safe_ratio(total - within, within, 0.0)


# the unchecked forms: pair_index validates its inputs once
_PAIR = {
    "esdr": lambda s11, s12, s22, w1, w2: _esdr_pair(s11, s12, s22, w1, w2),
    "dbtc": lambda s11, s12, s22, w1, w2: _dbtc_pair(s11, s12, s22),
    "j4": _j4_pair,
}


def _check_dist(dist) -> np.ndarray:
    d = np.asarray(dist, float)
    if d.ndim < 2 or d.shape[-1] != d.shape[-2]:
        raise ValueError(f"dist must be block means of shape (..., k, k), got shape {d.shape}")
    if not np.all(np.isfinite(d)):
        raise ValueError("dist contains NaN or infinity")
    return d


def _check_index(index: str, reduce: str = "min") -> None:
    if index not in INDICES:
        raise ValueError(f"index must be one of {INDICES}, got {index!r}")
    if reduce not in REDUCTIONS:
        raise ValueError(f"multiclass reduction must be one of {REDUCTIONS}, got {reduce!r}")


def pair_index(index: str, dist: np.ndarray, class_weights: np.ndarray) -> np.ndarray:
    """The index of every pair of classes, from their own two classes only.

    Parameters
    ----------
    index : {"esdr", "dbtc", "j4"}
    dist : array (..., k, k)
        Block means of the squared distance (any common scale for ESDR and J4).
    class_weights : array (k,)
        Class sizes (or total weights); renormalised within each pair.

    Returns
    -------
    array (..., n_pairs), pairs ordered ``(0, 1), (0, 2), ..., (k-2, k-1)``.
    """
    _check_index(index)
    d = _check_dist(dist)
    k = d.shape[-1]
    cw = _check_class_weights(class_weights, k)
    out = []
    for a in range(k):
        for b in range(a + 1, k):
            wa, wb = cw[a] / (cw[a] + cw[b]), cw[b] / (cw[a] + cw[b])
            out.append(_PAIR[index](d[..., a, a], d[..., a, b], d[..., b, b], wa, wb))
    return np.stack(out, axis=-1)


def index_values(stats: BlockStats, index: str, *, reduce: str = "min") -> np.ndarray:
    """ESDR, DBTC or J4 for every kernel parameter in ``stats`` (shape ``(s,)``).

    Multiclass: the minimum (or mean) over class pairs of the pairwise index.
    """
    _check_index(index, reduce)
    vals = pair_index(index, stats.dist, stats.class_weights)
    if index == "dbtc":
        vals = vals * stats.dist_scale[:, None]
    return vals.min(axis=-1) if reduce == "min" else vals.mean(axis=-1)


def _pair_partials(index: str, s11, s12, s22, w1, w2):
    """First derivatives of a pairwise index w.r.t. ``(s11, s12, s22)``."""
    if index == "dbtc":
        one = np.ones_like(s12)
        return -0.5 * one, one, -0.5 * one
    den = w1 * s11 + w2 * s22
    with np.errstate(divide="ignore", invalid="ignore"):
        if index == "esdr":
            return -w1 * s12 / den**2, 1.0 / den, -w2 * s12 / den**2
        num = w1 * w2 * (2.0 * s12 - s11 - s22)
        return (
            (-w1 * w2 * den - num * w1) / den**2,
            2.0 * w1 * w2 / den,
            (-w1 * w2 * den - num * w2) / den**2,
        )


def _times(partial: np.ndarray, err: np.ndarray) -> np.ndarray:
    """``partial * err``, 0 where ``err`` is 0: an exact block mean adds no uncertainty, also
    where the index's derivative is infinite (a class collapsed to one point)."""
    with np.errstate(invalid="ignore"):
        return np.where(err == 0, 0.0, partial * err)


def index_uncertainty(
    stats: BlockStats, index: str, *, reduce: str = "min"
) -> tuple[np.ndarray, np.ndarray]:
    """First-order propagation of the block-mean error bound and standard error to the index.

    Returns ``(bound, se)`` of shape ``(s,)``: ``bound = sum |d index / d s_ab| bound_ab``
    (linear in the binning bound of :func:`~svmtune.criteria.histogram.histogram_block_sums`)
    and ``se`` the delta-method standard error of pair subsampling (blocks sampled
    independently).  For ``reduce="min"`` they are those of the minimising pair; for
    ``"mean"`` the mean over pairs (conservative for the SE).  Both are 0 for exact statistics.
    """
    _check_index(index, reduce)
    d, db, ds = stats.dist, stats.dist_bound, stats.dist_se
    cw = stats.class_weights
    k = d.shape[-1]
    bounds, ses = [], []
    for a in range(k):
        for b in range(a + 1, k):
            wa, wb = cw[a] / (cw[a] + cw[b]), cw[b] / (cw[a] + cw[b])
            parts = _pair_partials(index, d[:, a, a], d[:, a, b], d[:, b, b], wa, wb)
            cells = ((a, a), (a, b), (b, b))
            bnd = sum(_times(np.abs(p), db[:, i, j]) for p, (i, j) in zip(parts, cells))
            se2 = sum(_times(p, ds[:, i, j]) ** 2 for p, (i, j) in zip(parts, cells))
            bounds.append(np.nan_to_num(bnd, nan=np.inf))
            ses.append(np.sqrt(np.nan_to_num(se2, nan=np.inf)))
    B, S = np.stack(bounds, -1), np.stack(ses, -1)
    if index == "dbtc":
        B, S = B * stats.dist_scale[:, None], S * stats.dist_scale[:, None]
    if reduce == "mean":
        return B.mean(-1), S.mean(-1)
    vals = pair_index(index, d, cw)
    arg = np.argmin(vals, axis=-1)
    rows = np.arange(vals.shape[0])
    return B[rows, arg], S[rows, arg]


def rbf_index_curve(
    X: np.ndarray,
    y: np.ndarray,
    sigmas,
    index: str = "esdr",
    *,
    reduce: str = "min",
    sample_weight: np.ndarray | None = None,
    **blocks_options,
) -> np.ndarray:
    """ESDR / DBTC / J4 of the RBF kernel against sigma (the curves of ESDR Figs. 5-7).

    ``blocks_options`` go to :class:`~svmtune.criteria.blocks.RBFBlocks` (method, chunk_size,
    max_pairs, ...).
    """
    blocks = RBFBlocks(X, y, sample_weight=sample_weight, **blocks_options)
    return index_values(blocks.stats(sigmas), index, reduce=reduce)


# ------------------------------------------------------------------------------ Gaussian classes
def _diag_params(mu1, var1, mu2, var2):
    mu1, var1, mu2, var2 = (np.atleast_1d(np.asarray(v, float)) for v in (mu1, var1, mu2, var2))
    d = mu1.shape[0]
    for nm, v in (("mu1", mu1), ("var1", var1), ("mu2", mu2), ("var2", var2)):
        _check_vector(nm, v, d, nonneg=nm.startswith("var"))
    return mu1, var1, mu2, var2


def _check_vector(nm: str, v: np.ndarray, d: int, *, nonneg: bool) -> None:
    if v.shape != (d,):
        raise ValueError(f"{nm} must have shape ({d},), got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{nm} must be finite")
    if nonneg and np.any(v < 0):
        raise ValueError("variances must be non-negative")


def _class_fractions(n1, n2) -> tuple[float, float]:
    check_positive("n1", n1)
    check_positive("n2", n2)
    return n1 / (n1 + n2), n2 / (n1 + n2)


def _log_overlap(var_sum: np.ndarray, dmu2: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """``log prod_p sigma / sqrt(v_p + sigma^2) exp(-dmu_p^2 / (2 (v_p + sigma^2)))``.

    Written with ``log1p`` so that ``1 - exp(.)`` keeps its relative accuracy as sigma -> inf.
    """
    s2 = np.asarray(sigma, float)[:, None] ** 2
    with np.errstate(divide="ignore", over="ignore"):
        terms = -0.5 * np.log1p(var_sum[None, :] / s2) - dmu2[None, :] / (2.0 * (var_sum + s2))
    return terms.sum(axis=1)


def gaussian_between_sqdist(mu1, var1, mu2, var2, sigma) -> np.ndarray:
    """``E d_F^2(x_1, x_2)`` for independent Gaussian classes, RBF kernel (ESDR eq. (17)).

    ``x_c ~ N(mu_c, diag(var_c))``: ``2 - 2 prod_p sigma / sqrt(var_1p + var_2p + sigma^2)
    exp(-(mu_1p - mu_2p)^2 / (2 (var_1p + var_2p + sigma^2)))``.
    """
    mu1, var1, mu2, var2 = _diag_params(mu1, var1, mu2, var2)
    sig = rbf_t(sigma)[0]
    return -2.0 * np.expm1(_log_overlap(var1 + var2, (mu1 - mu2) ** 2, sig))


def gaussian_within_sqdist(var, sigma) -> np.ndarray:
    """``E d_F^2(x, x')`` for two independent draws of one Gaussian class (a term of eq. (18)).

    ``2 - 2 prod_p sigma / sqrt(2 var_p + sigma^2)``.
    """
    var = np.atleast_1d(np.asarray(var, float))
    _check_vector("var", var, var.shape[0], nonneg=True)
    sig = rbf_t(sigma)[0]
    return -2.0 * np.expm1(_log_overlap(2.0 * var, np.zeros_like(var), sig))


def gaussian_esdr(mu1, var1, mu2, var2, sigma, *, n1: float = 1.0, n2: float = 1.0):
    """Analytic ESDR of two Gaussian classes with an RBF kernel (ESDR eq. (8), (17), (18)).

    Population version (independent draws; the sample estimate (10)-(12) also averages the
    ``i1 = i2`` pairs, a ``1 / n_c`` effect).  Limits: sigma -> 0 gives 1; sigma -> inf gives
    the input-space ESDR (:func:`gaussian_esdr_input`, eq. (19)).  Evaluated through
    ``expm1``/``log1p``, so both limits are reached without cancellation.

    Parameters
    ----------
    mu1, mu2 : array (d,)
    var1, var2 : array (d,)
        Per-dimension variances (diagonal covariances).
    sigma : float or array (s,)
    n1, n2 : float
        Class sizes (only their ratio matters: the weights ``n_c / n`` of eq. (8)).
    """
    mu1, var1, mu2, var2 = _diag_params(mu1, var1, mu2, var2)
    w1, w2 = _class_fractions(n1, n2)
    sig = rbf_t(sigma)[0]
    num = gaussian_between_sqdist(mu1, var1, mu2, var2, sig)
    den = w1 * gaussian_within_sqdist(var1, sig) + w2 * gaussian_within_sqdist(var2, sig)
    return _safe_ratio(num, den, 1.0)


def gaussian_esdr_input(mu1, var1, mu2, var2, *, n1: float = 1.0, n2: float = 1.0) -> float:
    """Input-space ESDR of two Gaussian classes: the sigma -> inf limit (ESDR eq. (19)).

    ``sum_p (var_1p + var_2p + (mu_1p - mu_2p)^2) / (w_1 2 sum var_1 + w_2 2 sum var_2)``.
    """
    mu1, var1, mu2, var2 = _diag_params(mu1, var1, mu2, var2)
    w1, w2 = _class_fractions(n1, n2)
    num = np.sum(var1 + var2 + (mu1 - mu2) ** 2)
    den = 2.0 * (w1 * np.sum(var1) + w2 * np.sum(var2))
    return float(_safe_ratio(num, den, 1.0))


def gaussian_study_case(i: int, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Parameters of panel (i, j) of ESDR Fig. 2 (i, j = 1..5).

    ``mu_1 = (0, 0)``, ``Sigma_1 = e^{2(i-3)} I``, ``mu_2 = (1, 1)``, ``Sigma_2 = e^{2(j-3)} I``.
    Returns ``(mu1, var1, mu2, var2)`` with per-dimension variances.
    """
    for nm, v in (("i", i), ("j", j)):
        if int(v) != v or not 1 <= v <= 5:
            raise ValueError(f"{nm} must be an integer in 1..5 (panel of Fig. 2), got {v!r}")
    v1, v2 = np.exp(2.0 * (i - 3)), np.exp(2.0 * (j - 3))
    return np.zeros(2), np.full(2, v1), np.ones(2), np.full(2, v2)


def gaussian_study_curves(sigmas) -> np.ndarray:
    """Analytic ESDR against sigma for the 5 x 5 panels of ESDR Fig. 2 / Fig. 3 (equal classes).

    Returns an array ``(5, 5, s)``: ``[i-1, j-1]`` is panel (i, j).
    """
    sig = np.atleast_1d(np.asarray(sigmas, float))
    out = np.empty((5, 5, sig.size))
    for i in range(1, 6):
        for j in range(1, 6):
            out[i - 1, j - 1] = gaussian_esdr(*gaussian_study_case(i, j), sig)
    return out


def sample_gaussian_case(
    i: int, j: int, n_per_class: int = 100, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Draw the data of panel (i, j) as in ESDR Sec. 4.2 (100 samples per class there).

    Returns ``X (2 n, 2)`` and ``y`` in {0, 1} (class 1 of the paper is label 0).
    """
    if int(n_per_class) != n_per_class or n_per_class < 2:
        raise ValueError(f"n_per_class must be an integer >= 2, got {n_per_class!r}")
    rng = check_random_state(random_state)
    mu1, v1, mu2, v2 = gaussian_study_case(i, j)
    n = int(n_per_class)
    X = np.vstack(
        [
            mu1 + np.sqrt(v1) * rng.standard_normal((n, 2)),
            mu2 + np.sqrt(v2) * rng.standard_normal((n, 2)),
        ]
    )
    return X, np.repeat([0, 1], n)
