"""Histograms of the pairs' squared distances per class block: the block means for any width.

One pass over all pairs (:func:`build_pair_histogram`) or over ``max_pairs`` sampled pairs
(:func:`sample_pair_histogram`) bins the squared input distances ``v = ||x_i - x_j||^2`` of
every class block in log-spaced bins, read straight off the float64 bit pattern
(``2**fine_bits`` bins per octave; distances and bins in one compiled loop of
:mod:`svmtune.criteria._pairloops`, O(n) memory).  Every width then costs O(bins)
(:func:`histogram_block_sums`), with a rigorous bound on the binning error of the block means
of ESDR eq. (9)-(12) and LD eq. (10).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.utils import check_random_state

from svmtune.criteria._common import (
    BlockStats,
    _check_chunk,
    _check_inputs,
    rbf_t,
)
from svmtune.criteria._pairloops import coarsen_bins, pair_bin_counts

__all__ = [
    "PairHistogram",
    "build_pair_histogram",
    "histogram_block_sums",
    "sample_pair_histogram",
]


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

    The random numbers belong to the blocks' rows, not to the classes' codes: each block
    draws from its own stream, keyed by the first rows of its two classes
    (:func:`_block_stream`), ``i`` from the class whose first row comes first.  Renaming or
    reordering the classes therefore samples the same pairs for every block (issue 63).
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
    seed = int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    binner = _Binner(_vmax(X), fine_bits, n_octaves)
    idx = [np.flatnonzero(codes == a) for a in range(k)]
    prob = [None if w is None else w[i] / w[i].sum() for i in idx]
    per_block = []
    rows_per = max(1, min(chunk_size, _PIECE_PAIRS) // max(X.shape[1], 1))

    def draw(c: int, rng: np.random.Generator) -> np.ndarray:
        if prob[c] is None:
            return idx[c][rng.integers(0, idx[c].size, size=m)]
        return idx[c][rng.choice(idx[c].size, size=m, p=prob[c])]

    for a, b in blocks:
        first, second = sorted((a, b), key=lambda c: idx[c][0])
        rng = _block_stream(seed, idx[first][0], idx[second][0])
        ii, jj = draw(first, rng), draw(second, rng)
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


def _block_stream(seed: int, row_a: int, row_b: int) -> np.random.Generator:
    """The random stream of the block of the classes whose first rows are ``row_a`` and
    ``row_b`` (``row_a <= row_b``): a child of ``seed`` keyed by the rows, so that it does not
    depend on the codes of the classes."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(int(row_a), int(row_b))))


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
