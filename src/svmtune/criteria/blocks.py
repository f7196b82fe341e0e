"""Class-block kernel statistics for many kernel widths at once.

ESDR, DBTC, J4 (ESDR eq. (8)-(16)) and the likelihood-space distance (LD eq. (9)-(13)) are all
functions of the *class-block means* of the kernel matrix,

    M_ab = 1 / (W_a W_b) * sum_{i in a} sum_{j in b} w_i w_j K(x_i, x_j),

taken over all ordered pairs **including** ``i = j`` (ESDR eq. (10)-(12), LD eq. (10)), with
``W_a = sum_{i in a} w_i`` (plain counts without sample weights), and of the block means of the
feature-space squared distance ``d_F^2(x_i, x_j) = K_ii + K_jj - 2 K_ij`` (ESDR eq. (9)).

Three ways to get them, all returning a :class:`BlockStats`:

``exact``
    All pairs, one chunked pass per call over the pairwise squared distances (memory bounded
    by ``chunk_size`` matrix entries, never ``n x n x n_sigma``); O(n^2 d + n^2 n_sigma).
``histogram``
    One pass over all pairs builds, per class block, a histogram of the squared input distances
    ``v = ||x_i - x_j||^2`` in log-spaced bins (read straight off the float64 bit pattern:
    ``2**fine_bits`` bins per octave; distances and bins in one compiled loop, O(n) memory).
    Every further sigma then costs O(bins), with a rigorous error bound (see
    :func:`histogram_block_sums`).
``subsample``
    ``max_pairs`` ordered pairs drawn at random (``i`` and ``j`` independently, with probability
    proportional to their weights, within their classes) and then binned as above: an unbiased
    estimate of every block mean (up to the binning bound) with a reported standard error.

For the RBF kernel ``k = exp(-t v)``, ``t = 1 / (2 sigma^2)``, the feature-space distance is
``2 (1 - k)``; it is computed as ``-expm1(-t v)`` and stored divided by ``t``
(:attr:`BlockStats.dist`), which tends to the input-space squared distance as sigma -> inf, so
scale-free ratios (ESDR, J4) stay exact in that limit instead of dividing round-off by
round-off (ESDR eq. (19)).  Widths are clipped to ``t in [1e-300, 1e300]`` (sigma roughly in
[1e-150, 1e150]): beyond that the kernel is numerically the identity / all-ones matrix.

:class:`RBFBlocks` picks the exact path for ``n^2 <= 2**18`` ordered pairs (n <= 512) and the
histogram otherwise.  Duplicated points are exact in the exact path; in the histogram their
zero distances share the first bin ``[0, vmax 2**-n_octaves]`` with any near-duplicates, and
the stated bound covers them (it only becomes loose for absurdly small widths).

:func:`kernel_block_stats` gives the same statistics for any precomputed kernel matrix (linear,
polynomial, ...).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from svmtune.criteria._common import (
    BlockStats,
    _check_chunk,
    _check_inputs,
    _check_X,
    rbf_t,
)
from svmtune.criteria.histogram import (
    PairHistogram,
    build_pair_histogram,
    histogram_block_sums,
    sample_pair_histogram,
)

__all__ = [
    "RBFBlocks",
    "kernel_block_stats",
    "rbf_block_stats",
    "rbf_class_sums",
]

METHODS = ("auto", "exact", "histogram")


# ------------------------------------------------------------------------------ exact path
def _exact_row_sums(X, codes, k, w, t, X_eval, chunk_size):
    """Yield ``(rows, Ksum, OMsum)`` per chunk of evaluation rows.

    ``Ksum[s, r, b] = sum_{j in b} w_j exp(-t_s v_rj)`` and ``OMsum`` the same with
    ``-expm1(-t_s v_rj) / t_s`` (i.e. ``(1 - k) / t``).  Temporary memory: one
    ``rows x n`` block per kernel evaluation.
    """
    n = X.shape[0]
    W1 = np.zeros((n, k))
    W1[np.arange(n), codes] = 1.0 if w is None else w
    rows_per = max(1, chunk_size // max(n, 1))
    for start in range(0, X_eval.shape[0], rows_per):
        rows = slice(start, min(start + rows_per, X_eval.shape[0]))
        D = cdist(X_eval[rows], X, "sqeuclidean")
        Ks = np.empty((t.size, D.shape[0], k))
        Os = np.empty((t.size, D.shape[0], k))
        for s, ts in enumerate(t):
            E = np.expm1(-ts * D)
            Os[s] = (-E / ts) @ W1
            E += 1.0
            Ks[s] = E @ W1
        yield rows, Ks, Os


def rbf_class_sums(
    X: np.ndarray,
    y: np.ndarray,
    sigmas,
    *,
    X_eval: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    chunk_size: int = 2**20,
) -> np.ndarray:
    """Per-row class sums of the RBF kernel, ``sum_{j in C_b} w_j k(x_i, x_j)``, exactly.

    The numerator of the class likelihood ``B(x, C_b)`` (LD eq. (9)).

    Parameters
    ----------
    X, y : training samples and their class labels (classes ordered as ``np.unique(y)``).
    sigmas : float or array (s,)
    X_eval : array (m, d), optional
        Points to evaluate at (default: the training samples themselves, self included).
    sample_weight : array (n,), optional
    chunk_size : int
        Maximum number of pairwise distances held in memory at once.

    Returns
    -------
    ndarray (s, m, k)
    """
    X, codes, k, w, _, _ = _check_inputs(X, y, sample_weight, min_classes=1)
    _, t = rbf_t(sigmas)
    Xe = X if X_eval is None else _check_X(X_eval, "X_eval")
    if Xe.shape[1] != X.shape[1]:
        raise ValueError(f"X_eval must have shape (m, {X.shape[1]}), got {Xe.shape}")
    out = np.empty((t.size, Xe.shape[0], k))
    for rows, Ks, _ in _exact_row_sums(X, codes, k, w, t, Xe, _check_chunk(chunk_size)):
        out[:, rows] = Ks
    return out


def rbf_block_stats(
    X: np.ndarray,
    y: np.ndarray,
    sigmas,
    *,
    sample_weight: np.ndarray | None = None,
    chunk_size: int = 2**20,
) -> BlockStats:
    """Exact class-block statistics of the RBF kernel for a vector of widths, in one pass.

    One chunked pass over the pairwise squared distances; each chunk of rows is reused for
    every sigma, so memory is ``O(chunk_size + n k s)`` and never ``n x n x s``.  Block means
    include the ``i = j`` pairs (ESDR eq. (10)-(12), LD eq. (10)).
    """
    X, codes, k, w, counts, cw = _check_inputs(X, y, sample_weight)
    sig, t = rbf_t(sigmas)
    Ksum = np.zeros((t.size, k, k))
    Osum = np.zeros((t.size, k, k))
    ww = np.ones(X.shape[0]) if w is None else w
    for rows, Ks, Os in _exact_row_sums(X, codes, k, w, t, X, _check_chunk(chunk_size)):
        A = np.zeros((ww[rows].shape[0], k))
        A[np.arange(A.shape[0]), codes[rows]] = ww[rows]
        Ksum += np.einsum("ra,srb->sab", A, Ks)
        Osum += np.einsum("ra,srb->sab", A, Os)
    norm = np.outer(cw, cw)
    zeros = np.zeros_like(Ksum)
    return BlockStats(
        sigmas=sig,
        class_counts=counts,
        class_weights=cw,
        means=Ksum / norm,
        diag_means=np.ones((t.size, k)),
        dist=Osum / norm,
        dist_scale=2.0 * t,
        mean_bound=zeros,
        dist_bound=zeros.copy(),
        mean_se=zeros.copy(),
        dist_se=zeros.copy(),
        method="exact",
    )


def kernel_block_stats(
    K: np.ndarray, y: np.ndarray, *, sample_weight: np.ndarray | None = None
) -> BlockStats:
    """Class-block statistics of a given kernel matrix (any kernel: linear, polynomial, ...).

    ``dist`` holds the block means of ``K_ii + K_jj - 2 K_ij`` (ESDR eq. (9)) with
    ``dist_scale = 1``.
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square kernel matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("K contains NaN or infinity")
    _, codes, k, w, counts, cw = _check_inputs(np.zeros((K.shape[0], 1)), y, sample_weight)
    ww = np.ones(K.shape[0]) if w is None else w
    A = np.zeros((K.shape[0], k))
    A[np.arange(K.shape[0]), codes] = ww
    norm = np.outer(cw, cw)
    means = (A.T @ K @ A) / norm
    diag = (A.T @ np.diag(K)) / cw
    dist = diag[:, None] + diag[None, :] - 2.0 * means
    z = np.zeros((1, k, k))
    return BlockStats(
        sigmas=None,
        class_counts=counts,
        class_weights=cw,
        means=means[None],
        diag_means=diag[None],
        dist=dist[None],
        dist_scale=np.ones(1),
        mean_bound=z,
        dist_bound=z.copy(),
        mean_se=z.copy(),
        dist_se=z.copy(),
        method="kernel",
    )


class RBFBlocks:
    """Class-block statistics of the RBF kernel of one data set, for any widths.

    Build once, then call :meth:`stats` with any vector of sigmas (a grid scan, then single
    points of a golden-section search).

    Parameters
    ----------
    X : array (n, d)
    y : array (n,)
        Class labels (classes ordered as ``np.unique(y)``).
    sample_weight : array (n,), optional
        Pair ``(i, j)`` gets weight ``w_i w_j`` in every block mean.
    method : {"auto", "exact", "histogram"}
        "auto" is exact when ``n^2 <= exact_max_pairs``, the histogram otherwise.
    exact_max_pairs : int
        Threshold of "auto".
    max_pairs : int, optional
        When the ``n^2`` ordered pairs exceed it, a histogram of ``max_pairs`` randomly drawn
        pairs replaces the full pass (unbiased, with standard errors); needs ``random_state``
        for reproducibility.
    chunk_size : int
        Maximum number of pairwise distances held at once (exact path and pair subsampling;
        the full histogram pass needs O(n) memory).
    fine_bits, coarse_bits, n_octaves : int
        Histogram resolution, see :func:`build_pair_histogram`.
    random_state : int, RandomState or None
        Used only for pair subsampling.

    Attributes
    ----------
    method_ : {"exact", "histogram", "subsample"}
    histogram_ : PairHistogram or None
    n_pairs_ : int
        Pairs visited once (histogram) or per call (exact).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        *,
        sample_weight: np.ndarray | None = None,
        method: str = "auto",
        exact_max_pairs: int = 2**18,
        max_pairs: int | None = None,
        chunk_size: int = 2**20,
        fine_bits: int = 10,
        coarse_bits: int = 5,
        n_octaves: int = 40,
        random_state=None,
    ):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        X, codes, k, w, _, _ = _check_inputs(X, y, sample_weight)
        self.chunk_size = _check_chunk(chunk_size)
        n2 = X.shape[0] ** 2
        if max_pairs is not None and (
            isinstance(max_pairs, bool) or not isinstance(max_pairs, (int, np.integer))
        ):
            raise ValueError(f"max_pairs must be a positive integer or None, got {max_pairs!r}")
        subsample = max_pairs is not None and n2 > max_pairs
        if method == "exact" and subsample:
            raise ValueError(
                "method='exact' uses all pairs; drop max_pairs or use method='histogram'"
            )
        exact = method == "exact" or (method == "auto" and n2 <= exact_max_pairs and not subsample)
        self._X, self._codes, self._w = X, codes, w
        self.histogram_: PairHistogram | None = None
        if exact:
            self.method_ = "exact"
            self.n_pairs_ = n2
        elif subsample:
            self.method_ = "subsample"
            self.histogram_ = sample_pair_histogram(
                X,
                codes,
                int(max_pairs),
                sample_weight=w,
                random_state=random_state,
                chunk_size=self.chunk_size,
                fine_bits=fine_bits,
                coarse_bits=coarse_bits,
                n_octaves=n_octaves,
            )
            self.n_pairs_ = self.histogram_.n_pairs
        else:
            self.method_ = "histogram"
            self.histogram_ = build_pair_histogram(
                X,
                codes,
                sample_weight=w,
                fine_bits=fine_bits,
                coarse_bits=coarse_bits,
                n_octaves=n_octaves,
            )
            self.n_pairs_ = self.histogram_.n_pairs

    def stats(self, sigmas) -> BlockStats:
        """:class:`BlockStats` for the widths ``sigmas`` (scalar or 1-D array)."""
        if self.histogram_ is not None:
            return histogram_block_sums(self.histogram_, sigmas)
        return rbf_block_stats(
            self._X, self._codes, sigmas, sample_weight=self._w, chunk_size=self.chunk_size
        )
