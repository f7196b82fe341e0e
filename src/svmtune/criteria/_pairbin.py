"""Compiled pair-distance binning: the one O(n^2) pass of the histogram block statistics.

:func:`pair_bin_counts` computes the squared Euclidean distance of every pair of one class
block and adds the pair's weight to its fine log-spaced bin (the float64 bit-pattern binning of
:class:`svmtune.criteria.blocks._Binner`), fused in one loop: the numpy pipeline (``cdist``,
floor, shift, offset, ``bincount``) passes over every distance six times and costs about
5 ns per pair, this kernel about 1-2 ns, with O(n) memory instead of a chunk of distances.

Compiled with numba on first use and cached on disk (``cache=True``); importing this module
imports numba, so :mod:`svmtune.criteria.blocks` imports it only when a histogram is built.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["pair_bin_counts"]


@numba.njit(cache=True, nogil=True)
def _pair_bin_counts(
    XA, XBT, triangle, wa, wb, weighted, floor, shift, lo, n_bins
):  # pragma: no cover
    # compiled.  Per row of XA: distances to the columns j0.. of XBT (a contiguous slice,
    # so the distance and code loops vectorise), then a serial scatter into the bins.
    m = XA.shape[0]
    d = XBT.shape[0]
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
        for j in range(L):
            buf[j] = 0.0
        for k in range(d):
            xk = XA[i, k]
            row = XBT[k, j0:]
            for j in range(L):
                diff = xk - row[j]
                buf[j] += diff * diff
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


@numba.njit(cache=True, nogil=True)
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
        key = (lo + f) >> group_shift
        if key != current:
            g += 1
            current = key
            code[0] = (lo + f) << shift
            e_lo[g] = 0.0 if f == 0 else edge[0]
        code[0] = (lo + f) << shift
        lower = 0.0 if f == 0 else edge[0]
        code[0] = (lo + f + 1) << shift
        upper = edge[0]
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
