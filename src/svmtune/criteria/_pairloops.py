"""Compiled pair loops: the O(n^2) passes of the data criteria, fused and in O(n) memory.

* :func:`pair_bin_counts` computes the squared Euclidean distance of every pair of one class
  block and adds the pair's weight to its fine log-spaced bin (the float64 bit-pattern binning
  of :class:`svmtune.criteria.histogram._Binner`), in one loop: the numpy pipeline (``cdist``,
  floor, shift, offset, ``bincount``) passes over every distance six times and costs about
  5 ns per pair, this kernel 2-3.5 ns.  :func:`coarsen_bins` groups the fine bins.
* :func:`rbf_class_sums_multi` gives, for a sequence of RBF widths, every sample's kernel sum
  over each class, ``R[s, i, b] = sum_{j in b} w_j exp(-t_s ||x_i - x_j||^2)`` (the product
  ``K W`` of the S&S ratio), over row blocks of the upper triangle (3 x 512 KiB), never a kernel
  matrix: distances from a BLAS Gram block (compiled differences where its round-off could
  matter), the one exponential per pair by numpy
  (vectorised; numba compiles ``np.exp`` to a scalar libm call), the squaring chain and the
  class sums compiled in one loop.

Compiled with numba on first use and cached on disk (``cache=True``) where numba finds a
writable cache directory (beside this file, else the user's cache directory, or
``NUMBA_CACHE_DIR``); in a read-only installation without one they are compiled in every
process instead, with a warning.  Importing this module does not import numba
(:mod:`svmtune._jit`): the first call of one of its loops does, and compiles it (seconds in a
fresh installation; a fraction of a second to load from the cache).  Only these criteria use
numba; the default selection never calls them.
"""

from __future__ import annotations

import numpy as np

from svmtune._jit import _njit
from svmtune.criteria._common import rbf_t

__all__ = ["coarsen_bins", "pair_bin_counts", "rbf_class_sums_multi", "warm_up"]


@_njit(nogil=True, inline="always")
def _row_sqdist(x, XT, j0, out):  # pragma: no cover - compiled
    """``out[j] = ||x - XT[:, j0 + j]||^2`` for ``j < len(out)`` (columns of ``XT`` are points;
    the feature-outer loop order vectorises over ``j``)."""
    L = out.size
    for j in range(L):
        out[j] = 0.0
    for k in range(XT.shape[0]):
        xk = x[k]
        row = XT[k, j0:]
        for j in range(L):
            diff = xk - row[j]
            out[j] += diff * diff


@_njit(nogil=True)
def _pair_bin_counts(
    XA, XBT, triangle, wa, wb, weighted, floor, shift, lo, n_bins
):  # pragma: no cover
    # compiled.  Per row of XA: distances to the columns j0.. of XBT (a contiguous slice,
    # so the distance and code loops vectorise), then a serial scatter into the bins.
    m = XA.shape[0]
    nb = XBT.shape[1]
    counts = np.zeros(n_bins)  # float64 counts are exact up to 2**53 pairs
    buf_ = np.empty(nb)
    codes_ = np.empty(nb, np.int64)
    last = n_bins - 1
    for i in range(m):
        j0 = i + 1 if triangle else 0
        L = nb - j0
        if L <= 0:
            break
        buf = buf_[:L]
        codes = codes_[:L]
        _row_sqdist(XA[i], XBT, j0, buf)
        for j in range(L):
            buf[j] = max(buf[j], floor)
        bits = buf.view(np.int64)
        for j in range(L):
            codes[j] = min((bits[j] >> shift) - lo, last)
        if weighted:
            wi = wa[i]
            wrow = wb[j0:]
            for j in range(L):
                counts[codes[j]] += wi * wrow[j]
        else:
            for j in range(L):
                counts[codes[j]] += 1.0
    return counts


def pair_bin_counts(
    XA: np.ndarray,
    XB: np.ndarray | None,
    wa: np.ndarray | None,
    wb: np.ndarray | None,
    *,
    floor: float,
    shift: int,
    lo: int,
    n_bins: int,
) -> np.ndarray:
    """Fine-bin weights of the squared distances of the pairs of one class block.

    Parameters
    ----------
    XA : array (m, d)
    XB : array (p, d) or None
        The other class; ``None`` bins the pairs ``i < j`` of ``XA`` with itself.
    wa, wb : arrays (m,), (p,) or None
        Sample weights (pair weight ``wa_i wb_j``); ``None`` for unit weights.  For the
        triangle ``wb`` is ignored (``wa`` weighs both ends).
    floor, shift, lo, n_bins :
        The binner: distances are floored at ``floor``, bin ``(bits(v) >> shift) - lo``,
        values past the last bin fold into it.

    Returns
    -------
    ndarray (n_bins,)
    """
    XA = np.ascontiguousarray(XA, dtype=np.float64)
    triangle = XB is None
    XBT = np.ascontiguousarray((XA if triangle else np.asarray(XB, dtype=np.float64)).T)
    if triangle:
        wb = wa
    weighted = wa is not None or wb is not None
    wa_ = np.ones(XA.shape[0]) if wa is None else np.ascontiguousarray(wa, dtype=np.float64)
    wb_ = np.ones(XBT.shape[1]) if wb is None else np.ascontiguousarray(wb, dtype=np.float64)
    return _pair_bin_counts(
        XA, XBT, triangle, wa_, wb_, weighted, float(floor), int(shift), int(lo), int(n_bins)
    )


@_njit(nogil=True)
def _coarsen_bins(counts, lo, shift, group_shift):  # pragma: no cover - compiled
    n_groups = ((lo + counts.size) >> group_shift) - (lo >> group_shift) + 1
    h = np.zeros(n_groups)
    s_lo = np.zeros(n_groups)
    s_hi = np.zeros(n_groups)
    e_lo = np.zeros(n_groups)
    e_hi = np.zeros(n_groups)
    code = np.empty(1, np.int64)
    edge = code.view(np.float64)
    g = -1
    current = -1
    for f in range(counts.size):
        c = counts[f]
        if c == 0.0:
            continue
        code[0] = (lo + f) << shift
        lower = 0.0 if f == 0 else edge[0]
        code[0] = (lo + f + 1) << shift
        upper = edge[0]
        key = (lo + f) >> group_shift
        if key != current:
            g += 1
            current = key
            e_lo[g] = lower
        h[g] += c
        s_lo[g] += c * lower
        s_hi[g] += c * upper
        e_hi[g] = upper
    g += 1
    return h[:g], e_lo[:g], e_hi[:g], s_lo[:g] / h[:g], s_hi[:g] / h[:g]


def coarsen_bins(
    counts: np.ndarray, *, lo: int, shift: int, group_shift: int
) -> tuple[np.ndarray, ...]:
    """Group the fine bins of :func:`pair_bin_counts` ``2**group_shift`` at a time.

    Fine bin ``f`` spans ``[edge(lo + f), edge(lo + f + 1))`` with ``edge(c)`` the float whose
    bits are ``c << shift`` (bin 0 starts at 0); groups follow the absolute codes
    ``(lo + f) >> group_shift``.  Only non-empty groups are returned, in increasing order.

    Returns
    -------
    h, lo_edge, hi_edge, mu_lo, mu_hi : ndarrays (groups,)
        Total weight; lowest lower edge and highest upper edge of the non-empty fine bins;
        lower and upper bounds on the weighted mean of the values (``sum c lower / h`` and
        ``sum c upper / h``).
    """
    counts = np.ascontiguousarray(counts, dtype=np.float64)
    return _coarsen_bins(counts, int(lo), int(shift), int(group_shift))


#: kernel values below this are flushed to 0 (their squares would be subnormal, which slows
#: every later product by orders of magnitude; next to the unit diagonal they carry nothing)
TINY = 1e-150


@_njit(nogil=True)
def _rows_sqdist(X, XT, r0, r1, t0, D, E):  # pragma: no cover - compiled
    # D[i - r0, j - r0 - 1] = ||x_i - x_j||^2 for i in [r0, r1), j in [r0 + 1, n); E = -t0 D
    for i in range(r0, r1):
        d = D[i - r0]
        e = E[i - r0]
        _row_sqdist(X[i], XT, r0 + 1, d)
        for j in range(d.size):
            e[j] = -t0 * d[j]


@_njit(nogil=True)
def _gram_sqdist(G, sq, r0, t0, keep_d, D, E):  # pragma: no cover - compiled
    # G[ii, jj] = <x_i, x_j> for i = r0 + ii, j = r0 + 1 + jj: squared distance
    # max(sq_i + sq_j - 2 G, 0) into D (if keep_d) and -t0 times it into E
    sqr = sq[r0 + 1 :]
    for ii in range(G.shape[0]):
        si = sq[r0 + ii]
        g = G[ii]
        e = E[ii]
        if keep_d:
            d = D[ii]
            for j in range(g.size):
                v = si + sqr[j] - 2.0 * g[j]
                v = v if v > 0.0 else 0.0
                d[j] = v
                e[j] = -t0 * v
        else:
            for j in range(g.size):
                v = si + sqr[j] - 2.0 * g[j]
                e[j] = -t0 * (v if v > 0.0 else 0.0)


@_njit(nogil=True, fastmath={"reassoc", "contract"})
def _accumulate_rows(E, D, r0, w, unit, starts, t, square, own, other):  # pragma: no cover
    # compiled.  Rows r0.. of the pairs i < j.  On entry E = exp(-t_0 D / 2) (computed by
    # numpy, whose exp is vectorised); width c is the square of the kernel before it when
    # square[c] (square[0]: of E), else an exponential of its own.  Per class the row sum
    # (own) and the column sums (other), in the same loop as the kernel values; with unit
    # weights three squarings per pass over the row.
    n = w.size
    k = starts.size - 1
    s = t.size
    ci = 0
    while r0 >= starts[ci + 1]:
        ci += 1
    for ii in range(E.shape[0]):
        i = r0 + ii
        while i >= starts[ci + 1]:
            ci += 1
        L = n - i - 1
        if L <= 0:
            break
        kv = E[ii, ii : ii + L]
        d2 = D[ii, ii : ii + L]
        wi = w[i]
        c = 0
        while c < s:
            three = unit and c + 2 < s and square[c] and square[c + 1] and square[c + 2]
            total = 0.0  # of the last width of this pass
            for b in range(k):
                lo = max(starts[b], i + 1) - (i + 1)
                hi = starts[b + 1] - (i + 1)
                if hi <= lo:
                    continue
                # slices, so that the loop index starts at 0 (no negative-index wraparound
                # checks, which keep the loops from vectorising); one loop per case
                m = hi - lo
                kseg = kv[lo:hi]
                wseg = w[i + 1 + lo : i + 1 + hi]
                oseg = other[c, ci, i + 1 + lo : i + 1 + hi]
                acc = 0.0
                mass = 0.0
                if three:
                    oseg1 = other[c + 1, ci, i + 1 + lo : i + 1 + hi]
                    oseg2 = other[c + 2, ci, i + 1 + lo : i + 1 + hi]
                    acc1 = 0.0
                    for j in range(m):
                        v = kseg[j] * kseg[j]
                        v = v if v >= TINY else 0.0
                        v1 = v * v
                        v1 = v1 if v1 >= TINY else 0.0
                        v2 = v1 * v1
                        v2 = v2 if v2 >= TINY else 0.0
                        kseg[j] = v2
                        acc += v
                        acc1 += v1
                        mass += v2
                        oseg[j] += v
                        oseg1[j] += v1
                        oseg2[j] += v2
                    own[c + 1, i, b] += acc1
                    own[c + 2, i, b] += mass
                elif square[c] and unit:
                    for j in range(m):
                        v = kseg[j] * kseg[j]
                        v = v if v >= TINY else 0.0
                        kseg[j] = v
                        acc += v
                        oseg[j] += v
                    mass = acc
                elif square[c]:
                    for j in range(m):
                        v = kseg[j] * kseg[j]
                        v = v if v >= TINY else 0.0
                        kseg[j] = v
                        mass += v
                        acc += wseg[j] * v
                        oseg[j] += wi * v
                else:  # off the chain: an exponential of its own
                    tc = t[c]
                    dseg = d2[lo:hi]
                    for j in range(m):
                        kseg[j] = np.exp(-tc * dseg[j])
                    for j in range(m):
                        v = kseg[j] if kseg[j] >= TINY else 0.0
                        kseg[j] = v
                        mass += v
                        acc += wseg[j] * v
                        oseg[j] += wi * v
                own[c, i, b] += acc
                total += mass
            if total == 0.0:
                break  # every later (narrower, t increasing) kernel of this row is 0 as well
            c += 3 if three else 1


#: pair distances held at once by :func:`rbf_class_sums_multi` (blocks of 512 KiB, cache-sized)
_BLOCK_PAIRS = 2**16

#: largest bound on the kernel values' absolute error for which :func:`rbf_class_sums_multi`
#: takes distances from the Gram expansion (else from the differences, exactly)
GRAM_KERNEL_ERROR = 1e-8
_EPS = float(np.finfo(np.float64).eps)


def _rbf_class_sums(X, codes, w, starts, t, square):
    """Class sums over sorted classes (``codes`` ascending, class ``b`` in rows
    ``starts[b]:starts[b+1]``) and increasing ``t``: row blocks of the upper triangle;
    distances from a BLAS Gram block (or compiled differences), the first exponential by
    numpy, the chain and the sums compiled."""
    n = X.shape[0]
    k = starts.size - 1
    s = t.size
    # distances by the expansion ||x||^2 + ||x'||^2 - 2 <x, x'> of the centred data (a
    # matrix product, as scikit-learn's euclidean_distances and libsvm compute them), with
    # absolute error at most about (d + 2) eps (||x||^2 + ||x'||^2): a kernel value is off
    # by at most t times that (with standardised data and the default widths a repeated
    # row's kernel typically still rounds to exactly 1).  The differences themselves where
    # that could exceed GRAM_KERNEL_ERROR at the narrowest width (features of very
    # different scales, far from standardised) or the squared norms could overflow.
    Xc = X - X.mean(axis=0)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    top = float(sq.max(initial=0.0))
    gram = (
        bool(np.all(np.isfinite(sq)))
        and top < 1e306
        and t[-1] * (X.shape[1] + 2) * _EPS * 2.0 * top <= GRAM_KERNEL_ERROR
    )
    XT = None if gram else np.ascontiguousarray(X.T)
    # weights constant within each class (None, class_weight): sums unweighted, then scaled
    cw = np.array([w[a] if z > a else 1.0 for a, z in zip(starts[:-1], starts[1:])])
    unit = bool(np.all(w == np.repeat(cw, np.diff(starts))))
    own = np.zeros((s, n, k))  # row i's sums over j > i, per class
    other = np.zeros((s, k, n))  # column j's sums over i < j, per class of i
    rows = max(1, _BLOCK_PAIRS // max(n, 1))
    keep_d = not gram or not bool(np.all(square))  # an exponential off the chain
    E_ = np.empty(rows * max(n - 1, 1))
    D_ = np.empty_like(E_) if keep_d else E_
    G_ = np.empty_like(E_) if gram else None
    w_acc = np.ones(n) if unit else w
    for r0 in range(0, n - 1, rows):
        r1 = min(r0 + rows, n - 1)
        shape = (r1 - r0, n - r0 - 1)
        E = E_[: shape[0] * shape[1]].reshape(shape)
        D = D_[: E.size].reshape(shape)
        if gram:
            G = G_[: E.size].reshape(shape)
            np.matmul(Xc[r0:r1], Xc[r0 + 1 :].T, out=G)
            _gram_sqdist(G, sq, r0, 0.5 * t[0], keep_d, D, E)
        else:
            _rows_sqdist(X, XT, r0, r1, 0.5 * t[0], D, E)
        np.exp(E, out=E)
        _accumulate_rows(E, D, r0, w_acc, unit, starts, t, square, own, other)
    if unit:
        own *= cw
        other *= cw[:, None]
    R = own + np.swapaxes(other, 1, 2)
    R[:, np.arange(n), codes] += w  # the diagonal: K_ii = 1
    return R


def rbf_class_sums_multi(
    X: np.ndarray, codes: np.ndarray, w: np.ndarray, sigmas: np.ndarray, n_classes: int
) -> np.ndarray:
    """Per-sample class sums of the RBF kernel for several widths, ``R = K_s W``.

    ``R[s, i, b] = sum_{j : codes_j = b} w_j exp(-||x_i - x_j||^2 / (2 sigma_s^2))`` (the
    ``j = i`` term included), RBSVM eq. (4) kernel.  One pass over the pairs ``i < j``;
    when consecutive widths (in decreasing order) differ by the factor ``sqrt(2)`` the
    narrower kernel is the square of the wider one (a product instead of an exponential).
    Kernel values below ``TINY`` (1e-150) are set to 0.  Squared distances come from the
    expansion ``||x||^2 + ||x'||^2 - 2 <x, x'>`` of the centred ``X`` (a BLAS product), with
    absolute error at most about ``(d + 2) eps (||x||^2 + ||x'||^2)``, when that error times
    the largest ``1 / (2 sigma^2)`` is at most ``GRAM_KERNEL_ERROR`` (1e-8) in the kernel
    values; otherwise (features of very different scales, squared norms that could
    overflow) from the differences themselves.

    Parameters
    ----------
    X : array (n, d)
    codes : int array (n,)
        Class index ``0..n_classes-1`` of every sample.
    w : array (n,)
        Sample weights.
    sigmas : array (s,)
        Positive RBF widths, any order.

    Returns
    -------
    ndarray (s, n, n_classes), in the order of ``sigmas`` and of the rows of ``X``.
    """
    X = np.asarray(X, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.intp)
    _, t = rbf_t(sigmas)  # validated, clipped to [1e-300, 1e300]
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(n_classes + 1)).astype(np.int64)
    by_t = np.argsort(t, kind="stable")  # increasing t = decreasing sigma
    t = t[by_t]
    square = np.ones(t.size, dtype=np.bool_)  # the first: the square of exp(-t_0 D / 2)
    square[1:] = np.abs(t[1:] - 2.0 * t[:-1]) <= 1e-12 * t[1:]
    R = _rbf_class_sums(
        np.ascontiguousarray(X[order]),
        codes[order],
        np.ascontiguousarray(np.asarray(w, dtype=np.float64)[order]),
        starts,
        np.ascontiguousarray(t),
        square,
    )
    out = np.empty_like(R)
    out[np.ix_(by_t, order)] = R
    return out


def warm_up(*, histogram: bool = True, rbf: bool = True) -> None:
    """Compile the loops of this module (or load them from numba's disk cache) on tiny data.

    The first call of each loop in a process compiles it (seconds) or loads it from the disk
    cache (a fraction of a second, and some memory); a benchmark calls this before it starts
    its clocks, so that a timed selection measures the selection, not this one-time cost.
    The calls take the same code paths, with the same argument types, as the criteria's.

    Parameters
    ----------
    histogram : bool
        The pair-distance histogram loops (ESDR, DBTC, J4, LD).
    rbf : bool
        The RBF class sums (S&S).
    """
    X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 2.0], [0.5, 1.5], [1.5, 0.0], [3.0, 1.0]])
    y = np.array([0, 1, 0, 1, 0, 1])
    w = np.arange(1.0, 7.0)
    if histogram:
        # the calls of svmtune.criteria.histogram.build_pair_histogram: a within-class
        # triangle and a between-class block, unit and general weights, its default binner
        # (10 fine bits per octave over 40 octaves, coarsened to 5 bits)
        shift = 52 - 10
        lo, hi = (np.array([16.0 * 2.0**-40, 16.0]).view(np.int64) >> shift).tolist()
        floor = float(np.array([lo << shift], dtype=np.int64).view(np.float64)[0])
        A, B = X[y == 0], X[y == 1]
        for wa, wb in ((None, None), (w[y == 0], w[y == 1])):
            for XB, wB in ((None, None), (B, wb)):
                cnt = pair_bin_counts(
                    A, XB, wa, wB, floor=floor, shift=shift, lo=lo, n_bins=hi - lo + 1
                )
                coarsen_bins(cnt, lo=lo, shift=shift, group_shift=10 - 5)
    if rbf:
        sigmas = np.array([2.0, 2.0**0.5, 1.0, 2.0**-0.5, 0.3])  # the chain, an exponential
        for Xw in (X, X * 1e160):  # the Gram path and the differences
            for ww in (np.ones(6), w):  # unit weights and general ones
                rbf_class_sums_multi(Xw, y, ww, sigmas, 2)
