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

from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.utils import check_random_state

from svmtune._validation import check_labels

__all__ = [
    "BlockStats",
    "PairHistogram",
    "RBFBlocks",
    "encode_classes",
    "kernel_block_stats",
    "rbf_block_stats",
    "rbf_class_sums",
    "histogram_block_sums",
    "build_pair_histogram",
    "sample_pair_histogram",
    "rbf_t",
]

T_MIN, T_MAX = 1e-300, 1e300
METHODS = ("auto", "exact", "histogram")


# ------------------------------------------------------------------------------ containers
@dataclass(frozen=True)
class BlockStats:
    """Class-block kernel statistics for ``s`` kernel parameters and ``k`` classes.

    Attributes
    ----------
    sigmas : ndarray (s,) or None
        RBF widths (None for a given kernel matrix).
    class_counts : ndarray (k,)
        Samples per class.
    class_weights : ndarray (k,)
        Total sample weight per class ``W_a`` (equal to the counts without weights).
    means : ndarray (s, k, k)
        Block means ``M_ab`` of the kernel over ordered pairs including ``i = j``
        (LD eq. (10): ``S_ab = M_ab``).
    diag_means : ndarray (s, k)
        Weighted mean of ``K_ii`` over each class (1 for the RBF kernel).
    dist : ndarray (s, k, k)
        Block means of the feature-space squared distance (ESDR eq. (9)) divided by
        ``dist_scale``: ``E d_F^2 = dist_scale * dist``.
    dist_scale : ndarray (s,)
        ``2 t = 1 / sigma^2`` for the RBF kernel (so ``dist`` -> input-space squared distance
        as sigma -> inf); 1 for a given kernel matrix.
    mean_bound, dist_bound : ndarray (s, k, k)
        Absolute bounds on the binning error of ``means`` and ``dist`` (0 when exact).
    mean_se, dist_se : ndarray (s, k, k)
        Standard errors from pair subsampling (0 when all pairs were used).
    method : str
        "exact", "histogram", "subsample" or "kernel".
    """

    sigmas: np.ndarray | None
    class_counts: np.ndarray
    class_weights: np.ndarray
    means: np.ndarray
    diag_means: np.ndarray
    dist: np.ndarray
    dist_scale: np.ndarray
    mean_bound: np.ndarray
    dist_bound: np.ndarray
    mean_se: np.ndarray
    dist_se: np.ndarray
    method: str

    @property
    def n_classes(self) -> int:
        return int(self.class_counts.shape[0])

    @property
    def sqdist_means(self) -> np.ndarray:
        """Block means of the feature-space squared distance ``E d_F^2`` (ESDR eq. (10)-(12))."""
        return self.dist_scale[:, None, None] * self.dist


@dataclass(frozen=True)
class PairHistogram:
    """Binned squared input distances of the pairs of every class block ``a <= b``.

    The non-empty (coarse) bins of all blocks are concatenated; block ``i`` owns the bins
    ``offsets[i]:offsets[i+1]``.  Per bin: its total pair weight ``h``, the bracket
    ``[lo, hi]`` of the squared distances in it, and lower / upper bounds ``mu_lo <= mu <=
    mu_hi`` on their weighted mean (from the fine bins the pairs fell in).  ``pair_weight`` maps
    the binned weight to ordered-pair weight (2 for the upper triangle of a within-class block,
    1 otherwise); ``diag_weight`` is the exact weight of the ``i = j`` pairs (``sum w_i^2``;
    0 when subsampled, since sampled pairs already contain them); ``n_samples`` is the number
    of sampled pairs per block (None when all pairs were binned).
    """

    blocks: tuple[tuple[int, int], ...]
    offsets: np.ndarray
    h: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    mu_lo: np.ndarray
    mu_hi: np.ndarray
    pair_weight: np.ndarray
    diag_weight: np.ndarray
    n_samples: np.ndarray | None
    class_counts: np.ndarray
    class_weights: np.ndarray
    n_pairs: int
    fine_bits: int = 10
    coarse_bits: int = 5
    info: dict = field(default_factory=dict)

    @property
    def n_bins(self) -> int:
        """Number of non-empty coarse bins over all blocks (the per-sigma cost)."""
        return int(self.h.size)


def _pack(blocks, per_block, **fields) -> PairHistogram:
    """Concatenate the per-block bin arrays of :func:`_coarsen` into a :class:`PairHistogram`."""
    sizes = [len(b[0]) for b in per_block]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    cols = [
        np.concatenate([b[i] for b in per_block]) if per_block else np.zeros(0) for i in range(5)
    ]
    return PairHistogram(
        blocks=tuple(blocks),
        offsets=offsets,
        h=cols[0].astype(float),
        lo=cols[1],
        hi=cols[2],
        mu_lo=cols[3],
        mu_hi=cols[4],
        **fields,
    )


# ------------------------------------------------------------------------------ helpers
def encode_classes(y: np.ndarray) -> tuple[np.ndarray, int]:
    """Integer class codes ``0..k-1`` of ``y`` and ``k`` (classes ordered as ``np.unique``)."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {y.shape}")
    check_labels(y)
    _, codes = np.unique(y, return_inverse=True)
    return codes.astype(np.intp), int(codes.max()) + 1 if codes.size else 0


def rbf_t(sigmas) -> tuple[np.ndarray, np.ndarray]:
    """``(sigmas, t)`` with ``t = 1 / (2 sigma^2)`` clipped to ``[1e-300, 1e300]``.

    Raises ``ValueError`` unless every sigma is positive and finite.
    """
    s = np.atleast_1d(np.asarray(sigmas, dtype=float))
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"sigmas must be a non-empty 1-D array of widths, got shape {s.shape}")
    if not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise ValueError(f"RBF widths sigma must be positive and finite, got {s}")
    with np.errstate(over="ignore", divide="ignore", under="ignore"):
        t = 1.0 / (2.0 * s * s)
    return s, np.clip(t, T_MIN, T_MAX)


def _check_X(X, name: str = "X") -> np.ndarray:
    """``X`` as a finite 2-D float array (n_samples, n_features)."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinity; impute or drop those values first")
    return X


def _check_class_weights(class_weights, k: int) -> np.ndarray:
    """``class_weights`` as a float array of ``k >= 2`` positive finite class sizes."""
    cw = np.asarray(class_weights, dtype=float)
    if k < 2:
        raise ValueError(f"got {k} class; the class-pair criteria need at least two classes")
    if cw.shape != (k,):
        raise ValueError(f"class_weights must have shape ({k},): one per class, got {cw.shape}")
    if not np.all(np.isfinite(cw)) or np.any(cw <= 0):
        raise ValueError(f"class_weights must be positive and finite (class sizes), got {cw}")
    return cw


def _check_inputs(X, y, sample_weight, min_classes: int = 2):
    """Validated ``(X, codes, k, w, counts, class_weights)``; the class-pair statistics need
    ``min_classes = 2`` classes (per-class sums alone, 1)."""
    X = _check_X(X)
    codes, k = encode_classes(y)
    if codes.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} samples but y has {codes.shape[0]}")
    if X.shape[0] == 0:
        raise ValueError("X has no samples")
    if k < min_classes:
        raise ValueError(
            f"y has {k} class; the class-separability criteria need at least {min_classes}"
        )
    if sample_weight is None:
        w = None
    else:
        w = np.asarray(sample_weight, dtype=float)
        if w.shape != (X.shape[0],):
            raise ValueError(f"sample_weight must have shape ({X.shape[0]},), got {w.shape}")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("sample_weight must be finite and non-negative")
    counts = np.bincount(codes, minlength=k)
    cw = counts.astype(float) if w is None else np.bincount(codes, weights=w, minlength=k)
    if np.any(cw <= 0):
        raise ValueError("every class needs positive total sample weight")
    return X, codes, k, w, counts, cw


def _check_chunk(chunk_size) -> int:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)):
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    return int(chunk_size)


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


# ------------------------------------------------------------------------------ histogram path
_MANT = 52  # float64 mantissa bits


def _code_of(v: float, shift: int) -> int:
    return int(np.array([v], dtype=np.float64).view(np.int64)[0] >> shift)


def _edge_of(code: np.ndarray, shift: int) -> np.ndarray:
    return (np.asarray(code, dtype=np.int64) << shift).view(np.float64)


class _Binner:
    """Maps squared distances to fine log-spaced bins through their float64 bit pattern.

    Bin ``f`` covers ``[edge(lo + f), edge(lo + f + 1))`` where ``edge(c)`` is the float whose
    bits are ``c << shift``: ``2**fine_bits`` bins per octave, relative width <= 2**-fine_bits.
    Everything below ``vmax * 2**-n_octaves`` (exact duplicates included) falls in bin 0, whose
    lower edge is taken as 0.
    """

    def __init__(self, vmax: float, fine_bits: int, n_octaves: int):
        self.shift = _MANT - fine_bits
        self.lo = _code_of(vmax * 2.0**-n_octaves, self.shift)
        self.hi = _code_of(vmax, self.shift)
        self.n = self.hi - self.lo + 1
        # smallest float of bin 0: flooring ``v`` there in float arithmetic replaces the
        # two-sided integer clip (one pass instead of two)
        self._floor = float(_edge_of(self.lo, self.shift))

    def codes(self, v: np.ndarray) -> np.ndarray:
        """Bin indices of the non-negative float64 array ``v`` (overwritten in place).

        Values above ``vmax`` (which bounds every squared distance) are not clipped here;
        :meth:`count` folds them into the last bin.
        """
        np.maximum(v, self._floor, out=v)
        c = v.view(np.int64)
        c >>= self.shift
        c -= self.lo
        return c

    def count(self, v: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Fine-bin weights of the squared distances ``v`` (overwritten in place)."""
        cnt = np.bincount(
            self.codes(v).ravel(),
            weights=None if weights is None else weights.ravel(),
            minlength=self.n,
        )
        if cnt.size > self.n:  # round-off above vmax: the last bin's edge is an upper bound
            cnt[self.n - 1] += cnt[self.n :].sum()
            cnt = cnt[: self.n]
        return cnt


def _vmax(X: np.ndarray) -> float:
    """An upper bound on every squared distance: ``(2 max_i ||x_i - mean||)^2`` (+ slack)."""
    c = X.mean(axis=0)
    r2 = float(np.max(np.einsum("ij,ij->i", X - c, X - c))) if X.shape[0] else 0.0
    v = 4.0 * r2 * (1.0 + 1e-9) + 1e-300
    return v if v > 1e-290 else 1.0


def _coarsen(counts: np.ndarray, binner: _Binner, fine_bits: int, coarse_bits: int):
    """Group fine bins ``2**(fine_bits - coarse_bits)`` at a time; keep the non-empty groups.

    Groups follow the absolute bit codes, so each one is a ``2**-coarse_bits`` fraction of an
    octave.  Returns per group: total weight, lowest and highest edge of its non-empty fine
    bins, and lower / upper bounds on the weighted mean of its squared distances.
    """
    from svmtune.criteria._pairloops import coarsen_bins

    return coarsen_bins(
        counts, lo=binner.lo, shift=binner.shift, group_shift=fine_bits - coarse_bits
    )


def _block_pairs(k: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(k) for b in range(a, k)]


def build_pair_histogram(
    X: np.ndarray,
    y: np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    fine_bits: int = 10,
    coarse_bits: int = 5,
    n_octaves: int = 40,
) -> PairHistogram:
    """Histogram of the squared distances of all pairs, per class block (one pass).

    Within-class blocks bin the upper triangle ``i < j`` (counted twice, plus the exact
    ``i = j`` term); between-class blocks bin every pair once.  Distances and bins are computed
    together in one compiled loop per block (:mod:`svmtune.criteria._pairloops`), 2-3.5 ns
    per pair and O(n + bins) memory.

    Parameters
    ----------
    fine_bits : int
        ``2**fine_bits`` fine bins per octave of squared distance (pairs are counted there).
    coarse_bits : int
        ``2**coarse_bits`` evaluation bins per octave (fine bins are grouped, keeping lower and
        upper bounds on each group's mean); the per-sigma cost is the number of non-empty
        coarse bins.
    n_octaves : int
        Dynamic range: squared distances below ``vmax * 2**-n_octaves`` share the first bin.
    """
    X, codes, k, w, counts, cw = _check_inputs(X, y, sample_weight)
    _check_bits(fine_bits, coarse_bits, n_octaves)
    binner = _Binner(_vmax(X), fine_bits, n_octaves)
    idx = [np.flatnonzero(codes == a) for a in range(k)]
    blocks = _block_pairs(k)
    per_block = []
    pair_weight = np.empty(len(blocks))
    diag_weight = np.zeros(len(blocks))
    n_pairs = 0
    for bi, (a, b) in enumerate(blocks):
        Xa = X[idx[a]]
        wa = None if w is None else w[idx[a]]
        if a == b:
            cnt, npairs = _block_counts(Xa, wa, None, None, binner)
            pair_weight[bi] = 2.0
            diag_weight[bi] = float(len(Xa) if wa is None else np.sum(wa * wa))
        else:
            wb = None if w is None else w[idx[b]]
            cnt, npairs = _block_counts(Xa, wa, X[idx[b]], wb, binner)
            pair_weight[bi] = 1.0
        n_pairs += npairs
        per_block.append(_coarsen(cnt, binner, fine_bits, coarse_bits))
    return _pack(
        blocks,
        per_block,
        pair_weight=pair_weight,
        diag_weight=diag_weight,
        n_samples=None,
        class_counts=counts,
        class_weights=cw,
        n_pairs=n_pairs,
        fine_bits=fine_bits,
        coarse_bits=coarse_bits,
        info={"n_fine_bins": binner.n},
    )


def _check_bits(fine_bits, coarse_bits, n_octaves):
    for nm, v, lo, hi in (
        ("fine_bits", fine_bits, 1, 20),
        ("coarse_bits", coarse_bits, 0, 20),
        ("n_octaves", n_octaves, 1, 1000),
    ):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
            raise ValueError(f"{nm} must be an integer in [{lo}, {hi}], got {v!r}")
    if coarse_bits > fine_bits:
        raise ValueError(f"coarse_bits ({coarse_bits}) must not exceed fine_bits ({fine_bits})")


#: sampled pairs per distance call: amortises the call, stays in cache
_PIECE_PAIRS = 2**18


def _block_counts(Xa, wa, Xb, wb, binner: _Binner):
    """Fine-bin weights of the pairs ``i < j`` of one class (``Xb is None``) or of all pairs
    between two classes, and their number: one fused compiled pass
    (:func:`svmtune.criteria._pairloops.pair_bin_counts`), O(n) memory."""
    from svmtune.criteria._pairloops import pair_bin_counts

    cnt = pair_bin_counts(
        Xa, Xb, wa, wb, floor=binner._floor, shift=binner.shift, lo=binner.lo, n_bins=binner.n
    )
    m = Xa.shape[0]
    return cnt, (m * (m - 1) // 2 if Xb is None else m * Xb.shape[0])


def sample_pair_histogram(
    X: np.ndarray,
    y: np.ndarray,
    max_pairs: int,
    *,
    sample_weight: np.ndarray | None = None,
    random_state=None,
    chunk_size: int = 2**20,
    fine_bits: int = 10,
    coarse_bits: int = 5,
    n_octaves: int = 40,
) -> PairHistogram:
    """Histogram of ``max_pairs`` randomly drawn ordered pairs (split evenly over the blocks).

    For block ``(a, b)``, ``i`` is drawn from class ``a`` and ``j`` from class ``b``
    independently with probabilities ``w_i / W_a`` and ``w_j / W_b`` (with replacement, so
    ``i = j`` occurs in within-class blocks exactly as often as in the ordered-pair mean).
    Then ``E k(x_i, x_j) = M_ab``: the binned sample mean is unbiased up to the binning bound,
    and :func:`histogram_block_sums` reports its standard error.
    """
    X, codes, k, w, counts, cw = _check_inputs(X, y, sample_weight)
    chunk_size = _check_chunk(chunk_size)
    _check_bits(fine_bits, coarse_bits, n_octaves)
    if isinstance(max_pairs, bool) or not isinstance(max_pairs, (int, np.integer)):
        raise ValueError(f"max_pairs must be a positive integer, got {max_pairs!r}")
    blocks = _block_pairs(k)
    m = int(max_pairs) // len(blocks)
    if m < 2:
        raise ValueError(f"max_pairs={max_pairs} leaves fewer than 2 pairs per class block")
    rng = check_random_state(random_state)
    binner = _Binner(_vmax(X), fine_bits, n_octaves)
    idx = [np.flatnonzero(codes == a) for a in range(k)]
    prob = [None if w is None else w[i] / w[i].sum() for i in idx]
    per_block = []
    rows_per = max(1, min(chunk_size, _PIECE_PAIRS) // max(X.shape[1], 1))

    def draw(c: int) -> np.ndarray:
        if prob[c] is None:
            return idx[c][rng.randint(0, idx[c].size, size=m)]
        return idx[c][rng.choice(idx[c].size, size=m, p=prob[c])]

    for a, b in blocks:
        ii, jj = draw(a), draw(b)
        cnt = np.zeros(binner.n)
        for s in range(0, m, rows_per):
            diff = X[ii[s : s + rows_per]] - X[jj[s : s + rows_per]]
            v = np.einsum("ij,ij->i", diff, diff)
            cnt += binner.count(v)
        cnt *= cw[a] * cw[b] / m  # each sampled ordered pair stands for W_a W_b / m
        per_block.append(_coarsen(cnt, binner, fine_bits, coarse_bits))
    return _pack(
        blocks,
        per_block,
        pair_weight=np.ones(len(blocks)),
        diag_weight=np.zeros(len(blocks)),
        n_samples=np.full(len(blocks), m),
        class_counts=counts,
        class_weights=cw,
        n_pairs=m * len(blocks),
        fine_bits=fine_bits,
        coarse_bits=coarse_bits,
        info={"n_fine_bins": binner.n},
    )


def histogram_block_sums(hist: PairHistogram, sigmas) -> BlockStats:
    """Class-block statistics of the RBF kernel from a pair histogram: O(bins) per sigma.

    Error bound (derivation).  In a bin holding pairs with squared distances ``v`` in
    ``[lo, hi]``, total weight ``h`` and weighted mean ``mu`` in ``[mu_lo, mu_hi]``,
    ``f(v) = exp(-t v)`` is decreasing, so the bin edges bracket the sum
    (``h f(hi) <= sum f(v) <= h f(lo)``, the monotone bound, relative width
    ``<= 2**-coarse_bits``); it is also convex, which gives the tighter bracket used here:

        h f(mu_hi) <= h f(mu) <= sum f(v)        (Jensen; f decreasing)
        sum f(v) <= h chord(mu) <= h chord(mu_lo),  chord(u) = f(lo) + (f(hi)-f(lo)) (u-lo)/(hi-lo)

    The estimate is the midpoint of ``[L, U]`` and the bound ``(U - L) / 2``.  Its size is
    second order in the coarse bin width plus first order in the fine bin width
    (``mu_hi - mu_lo <= 2**-fine_bits mu``): per pair at most about
    ``2**-fine_bits / (2 e) + 2**(-2 coarse_bits) / (4 e^2)`` in kernel units, whatever sigma
    (``t (mu_hi - mu_lo) e^{-t mu} <= 2**-fine_bits / e`` and the chord-tangent gap of a bin of
    relative width ``2**-coarse_bits`` is at most ``(2**-coarse_bits t mu)^2 e^{-t mu} / 8``).
    The same bracket, computed with ``expm1``, bounds ``(1 - k) / t`` (:attr:`BlockStats.dist`)
    with relative error of the same order also for large sigma.  For a subsampled histogram
    the standard error is ``sqrt(Var k / m)`` with ``Var k`` evaluated at the bin means.
    """
    sig, t = rbf_t(sigmas)
    k = hist.class_counts.shape[0]
    s = t.size
    tt = t[:, None]
    h = hist.h
    # Every bracket is (sum of h) + (sum of h * expm1(.)): only the two expm1-weighted sums per
    # block are needed, for the Jensen point mu_hi and for the chord at mu_lo.
    # In place in one buffer: fresh temporaries of s x bins cost page faults comparable to
    # the arithmetic itself.
    per_bin = np.empty((3, s, h.size))
    eP, eB, eA = per_bin
    np.multiply(-tt, hist.mu_hi, out=eP)
    np.multiply(-tt, hist.hi, out=eB)
    np.multiply(-tt, hist.lo, out=eA)
    np.expm1(per_bin, out=per_bin)
    frac = (hist.mu_lo - hist.lo) / (hist.hi - hist.lo)
    eP *= h  # h expm1(-t mu_hi)
    eB -= eA  # -> h * (expm1 chord at mu_lo) = h (eA + (eB - eA) frac)
    eB *= frac
    eB += eA
    eB *= h
    per_bin = per_bin[:2]
    nb = len(hist.blocks)
    sums = np.zeros((2, s, nb))
    hsum = np.zeros(nb)
    nonempty = np.flatnonzero(np.diff(hist.offsets) > 0)
    if nonempty.size:
        sums[:, :, nonempty] = np.add.reduceat(per_bin, hist.offsets[nonempty], axis=2)
        hsum[nonempty] = np.add.reduceat(h, hist.offsets[nonempty])
    sP, sC = sums  # sum h expm1 at mu_hi (Jensen) and of the chord; sC >= sP
    se_blk = np.zeros((s, nb))
    if hist.n_samples is not None and nonempty.size:
        mid = 0.5 * (hist.mu_lo + hist.mu_hi)
        k2 = np.add.reduceat(np.exp(-2.0 * tt * mid) * h, hist.offsets[nonempty], axis=1)
        hs = hsum[nonempty]
        k1 = (hs + 0.5 * (sP[:, nonempty] + sC[:, nonempty])) / hs
        var = np.maximum(k2 / hs - k1 * k1, 0.0)
        se_blk[:, nonempty] = np.sqrt(var / hist.n_samples[nonempty])
    pw, dw = hist.pair_weight, hist.diag_weight
    # per block: midpoint and half-width of the brackets on sum k and on sum (1 - k) / t
    k_mid = pw * (hsum + 0.5 * (sP + sC)) + dw
    k_half = pw * 0.5 * (sC - sP)
    o_mid = -pw * 0.5 * (sP + sC) / tt
    o_half = k_half / tt
    aa = np.array([a for a, _ in hist.blocks], dtype=np.intp)
    bb = np.array([b for _, b in hist.blocks], dtype=np.intp)
    norm = np.outer(hist.class_weights, hist.class_weights)
    out = []
    for v in (k_mid, k_half, o_mid, o_half, se_blk):
        arr = np.zeros((s, k, k))
        arr[:, aa, bb] = v
        arr[:, bb, aa] = v
        out.append(arr)
    means, mean_bound, dist, dist_bound, se = out
    return BlockStats(
        sigmas=sig,
        class_counts=hist.class_counts,
        class_weights=hist.class_weights,
        means=means / norm,
        diag_means=np.ones((s, k)),
        dist=dist / norm,
        dist_scale=2.0 * t,
        mean_bound=np.maximum(mean_bound / norm, 0.0),
        dist_bound=np.maximum(dist_bound / norm, 0.0),
        mean_se=se,
        dist_se=se / t[:, None, None],
        method="subsample" if hist.n_samples is not None else "histogram",
    )


# ------------------------------------------------------------------------------ front end
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
