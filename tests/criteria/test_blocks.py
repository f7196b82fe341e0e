"""Class-block kernel statistics against their pair-by-pair definitions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist

from svmtune.criteria import blocks as B
from svmtune.criteria import histogram as H
from svmtune.criteria._pairloops import coarsen_bins, pair_bin_counts
from svmtune.criteria.blocks import RBFBlocks, kernel_block_stats, rbf_block_stats, rbf_class_sums
from svmtune.criteria.histogram import (
    build_pair_histogram,
    histogram_block_sums,
    sample_pair_histogram,
)

SIGMAS = 2.0 ** np.arange(-8.0, 9.01, 1.0)


def _data(n=40, d=3, k=2, seed=0, dup=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, k, size=n)
    y[:k] = np.arange(k)
    if dup:
        X[3] = X[7]  # an exact duplicate pair
    return X, y


def _loop_stats(X, y, kern, w=None):
    """Block means of K and of d_F^2 = K_ii + K_jj - 2 K_ij by explicit double loops."""
    n = X.shape[0]
    w = np.ones(n) if w is None else w
    k = int(y.max()) + 1
    M = np.zeros((k, k))
    Dm = np.zeros((k, k))
    W = np.zeros(k)
    for i in range(n):
        W[y[i]] += w[i]
    for i in range(n):
        for j in range(n):
            kij = kern(X[i], X[j])
            M[y[i], y[j]] += w[i] * w[j] * kij
            Dm[y[i], y[j]] += w[i] * w[j] * (kern(X[i], X[i]) + kern(X[j], X[j]) - 2 * kij)
    return M / np.outer(W, W), Dm / np.outer(W, W)


def _rbf(s):
    return lambda a, b: float(np.exp(-np.sum((a - b) ** 2) / (2 * s * s)))


@pytest.mark.parametrize("k", [2, 3])
def test_exact_rbf_matches_double_loop(k):
    X, y = _data(n=30, k=k, seed=k)
    w = np.random.default_rng(5).uniform(0.2, 2.0, size=X.shape[0])
    sig = np.array([0.3, 1.0, 4.0])
    st = rbf_block_stats(X, y, sig, sample_weight=w)
    for s_i, s in enumerate(sig):
        M, Dm = _loop_stats(X, y, _rbf(s), w)
        np.testing.assert_allclose(st.means[s_i], M, rtol=0, atol=1e-12)
        np.testing.assert_allclose(st.sqdist_means[s_i], Dm, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(st.class_weights, np.bincount(y, weights=w))
    assert np.all(st.mean_bound == 0) and np.all(st.mean_se == 0)


@pytest.mark.parametrize(
    "name, kern",
    [
        ("linear", lambda a, b: float(a @ b)),
        ("poly", lambda a, b: float((0.5 * a @ b + 1.0) ** 3)),
    ],
)
def test_kernel_block_stats_matches_double_loop(name, kern):
    X, y = _data(n=25, k=3, seed=1)
    K = np.array([[kern(a, b) for b in X] for a in X])
    st = kernel_block_stats(K, y)
    M, Dm = _loop_stats(X, y, kern)
    np.testing.assert_allclose(st.means[0], M, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(st.sqdist_means[0], Dm, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(
        st.diag_means[0], [np.mean(np.diag(K)[y == c]) for c in range(3)], rtol=1e-12
    )


def test_chunk_size_bounds_memory_and_does_not_change_results(monkeypatch):
    X, y = _data(n=50, seed=2)
    shapes = []
    real = B.cdist

    def spy(A, Bm, metric):
        shapes.append(A.shape[0] * Bm.shape[0])
        return real(A, Bm, metric)

    monkeypatch.setattr(B, "cdist", spy)
    big = rbf_block_stats(X, y, SIGMAS, chunk_size=10**6)
    shapes.clear()
    small = rbf_block_stats(X, y, SIGMAS, chunk_size=120)
    assert max(shapes) <= 120 and len(shapes) > 1
    np.testing.assert_allclose(small.means, big.means, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(small.dist, big.dist, rtol=1e-13)


def test_class_sums_match_definition():
    X, y = _data(n=20, k=3, seed=3)
    Xe = np.random.default_rng(1).normal(size=(4, 3))
    out = rbf_class_sums(X, y, [0.5, 2.0], X_eval=Xe, chunk_size=7)
    for s_i, s in enumerate([0.5, 2.0]):
        for i, x in enumerate(Xe):
            for c in range(3):
                ref = sum(_rbf(s)(x, X[j]) for j in range(20) if y[j] == c)
                assert out[s_i, i, c] == pytest.approx(ref, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("k, weighted", [(2, False), (3, False), (2, True)])
def test_histogram_within_its_bound(k, weighted):
    X, y = _data(n=120, k=k, seed=4)
    w = np.random.default_rng(2).uniform(0.5, 2, size=120) if weighted else None
    sig = np.r_[1e-3, SIGMAS, 1e4]
    ex = rbf_block_stats(X, y, sig, sample_weight=w)
    hs = histogram_block_sums(build_pair_histogram(X, y, sample_weight=w), sig)
    slack = 1e-12 * np.abs(ex.means) + 1e-15
    assert np.all(np.abs(hs.means - ex.means) <= hs.mean_bound + slack)
    slack = 1e-12 * np.abs(ex.dist)
    assert np.all(np.abs(hs.dist - ex.dist) <= hs.dist_bound + slack)
    # the bound is small: ~2^-10 / (2e) per pair in kernel units, relative for dist
    assert hs.mean_bound.max() < 2e-4
    assert np.max(hs.dist_bound / ex.dist) < 1e-3
    # coarser fine bins give a looser, still valid bound
    coarse = histogram_block_sums(
        build_pair_histogram(X, y, sample_weight=w, fine_bits=6, coarse_bits=3), sig
    )
    assert np.all(np.abs(coarse.means - ex.means) <= coarse.mean_bound + 1e-12)
    assert coarse.mean_bound.max() > hs.mean_bound.max()


@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_pair_binning_equals_numpy_binning(weighted):
    """The fused compiled pass bins every pair exactly as cdist / pdist + _Binner.count."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(70, 3)) * np.array([1.0, 1e-3, 30.0])
    X[60:65] = X[:5]  # exact duplicates: zero distances land in bin 0
    Xa, Xb = X[:45], X[45:]
    wa, wb = (
        (rng.uniform(0.1, 3, size=45), rng.uniform(0.1, 3, size=25)) if weighted else (None, None)
    )
    binner = H._Binner(H._vmax(X), 10, 40)
    args = dict(floor=binner._floor, shift=binner.shift, lo=binner.lo, n_bins=binner.n)
    tri = pair_bin_counts(Xa, None, wa, None, **args)
    iu = np.triu_indices(45, k=1)
    ref = binner.count(pdist(Xa, "sqeuclidean"), None if wa is None else np.outer(wa, wa)[iu])
    np.testing.assert_allclose(tri, ref, rtol=1e-13, atol=0)
    cross = pair_bin_counts(Xa, Xb, wa, wb, **args)
    ref = binner.count(cdist(Xa, Xb, "sqeuclidean"), None if wa is None else np.outer(wa, wb))
    np.testing.assert_allclose(cross, ref, rtol=1e-13, atol=0)
    if not weighted:
        assert tri.sum() == 45 * 44 / 2 and cross.sum() == 45 * 25
    # a bin range too short for the data folds the excess into the last bin
    short = pair_bin_counts(Xa, Xb, wa, wb, **{**args, "n_bins": 5})
    np.testing.assert_allclose(short, np.r_[cross[:4], cross[4:].sum()], rtol=1e-13)


def test_subsample_is_unbiased_with_correct_standard_error():
    X, y = _data(n=60, seed=6)
    sig = np.array([0.5, 1.0, 3.0])
    ex = rbf_block_stats(X, y, sig)
    reps = [
        histogram_block_sums(sample_pair_histogram(X, y, 1500, random_state=r), sig)
        for r in range(150)
    ]
    est = np.array([r.means for r in reps])
    se = np.array([r.mean_se for r in reps])
    # unbiased: the average over draws is within 3 standard errors of the exact means
    avg_se = se.mean(0) / np.sqrt(len(reps))
    bound = reps[0].mean_bound
    assert np.all(np.abs(est.mean(0) - ex.means) <= 3 * avg_se + bound)
    # the reported standard error matches the spread over draws
    ratio = est.std(0) / se.mean(0)
    assert np.all((ratio > 0.75) & (ratio < 1.3))


def test_rbfblocks_method_choice_and_validation():
    X, y = _data(n=30, seed=7)
    assert RBFBlocks(X, y).method_ == "exact"
    assert RBFBlocks(X, y, method="histogram").method_ == "histogram"
    assert RBFBlocks(X, y, exact_max_pairs=100).method_ == "histogram"
    sub = RBFBlocks(X, y, max_pairs=300, random_state=0)
    assert sub.method_ == "subsample" and sub.n_pairs_ == 300
    st = sub.stats([1.0])
    assert st.method == "subsample" and np.all(st.mean_se > 0)
    with pytest.raises(ValueError, match="max_pairs"):
        RBFBlocks(X, y, method="exact", max_pairs=10)
    with pytest.raises(ValueError, match="method"):
        RBFBlocks(X, y, method="fast")
    with pytest.raises(ValueError, match="sigma"):
        RBFBlocks(X, y).stats([1.0, -2.0])
    with pytest.raises(ValueError, match="samples"):
        RBFBlocks(X, y[:-1])
    with pytest.raises(ValueError, match="NaN"):
        RBFBlocks(np.where(X > 2, np.nan, X), y)
    with pytest.raises(ValueError, match="chunk_size"):
        RBFBlocks(X, y, chunk_size=0)
    for method in ("exact", "histogram"):  # the class-pair statistics need two classes
        with pytest.raises(ValueError, match="1 class; .* at least 2"):
            RBFBlocks(X, np.zeros_like(y), method=method)
    with pytest.raises(ValueError, match="coarse_bits"):
        build_pair_histogram(X, y, fine_bits=4, coarse_bits=6)


@pytest.mark.parametrize("method", ["exact", "histogram"])
def test_degenerate_widths_and_duplicates_stay_finite(method):
    X, y = _data(n=30, seed=8)
    X[10:14] = X[10]  # several duplicates
    st = RBFBlocks(X, y, method=method).stats([1e-200, 1e-6, 1e6, 1e200])
    for arr in (st.means, st.dist, st.mean_bound, st.dist_bound):
        assert np.all(np.isfinite(arr))
    n = np.bincount(y)
    # sigma -> 0: K = I (duplicates aside) so M_aa -> (#coinciding ordered pairs) / n_a^2
    same = np.all(X[:, None, :] == X[None, :, :], axis=2)
    dup = np.array([same[np.ix_(y == c, y == c)].sum() for c in range(2)])
    diag = np.diagonal(st.means[0])
    assert np.all(np.abs(diag - dup / n**2) <= np.diagonal(st.mean_bound[0]) + 1e-12)
    if method == "exact":
        np.testing.assert_allclose(diag, dup / n**2, atol=1e-12)
    # sigma -> inf: K = 11^T and dist -> the input-space squared distance means (eq. (19))
    np.testing.assert_allclose(st.means[-1], 1.0, atol=1e-12)
    lin = kernel_block_stats(X @ X.T, y)
    np.testing.assert_allclose(st.dist[-1], lin.dist[0], rtol=1e-9 if method == "exact" else 1e-3)


@pytest.mark.parametrize("method", ["exact", "histogram"])
def test_singleton_class_block(method):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(20, 2))
    y = np.r_[np.zeros(19, int), 1]
    st = RBFBlocks(X, y, method=method).stats([0.5, 2.0])
    np.testing.assert_allclose(st.means[:, 1, 1], 1.0)  # only the i = j pair
    np.testing.assert_allclose(st.dist[:, 1, 1], 0.0)
    ref = rbf_block_stats(X, y, [0.5, 2.0])
    assert np.all(np.abs(st.means - ref.means) <= st.mean_bound + 1e-15)


def test_compiled_coarsening_equals_numpy_definition():
    rng = np.random.default_rng(11)
    binner = H._Binner(50.0, 6, 12)
    counts = np.zeros(binner.n)
    hit = rng.choice(binner.n, size=60, replace=False)
    counts[hit] = rng.uniform(0.5, 5, size=60)
    counts[0] = 2.0  # bin 0 starts at 0
    h, lo, hi, mu_lo, mu_hi = coarsen_bins(counts, lo=binner.lo, shift=binner.shift, group_shift=3)
    # numpy reference: fine-bin edges from the bit codes, grouped by code >> 3
    nz = np.flatnonzero(counts)
    lower = H._edge_of(binner.lo + nz, binner.shift).copy()
    lower[nz == 0] = 0.0
    upper = H._edge_of(binner.lo + nz + 1, binner.shift)
    group = (nz + binner.lo) >> 3
    for g_i, g in enumerate(np.unique(group)):
        m = group == g
        c = counts[nz[m]]
        assert h[g_i] == pytest.approx(c.sum(), rel=1e-14)
        assert lo[g_i] == lower[m].min() and hi[g_i] == upper[m].max()
        assert mu_lo[g_i] == pytest.approx((c * lower[m]).sum() / c.sum(), rel=1e-14)
        assert mu_hi[g_i] == pytest.approx((c * upper[m]).sum() / c.sum(), rel=1e-14)
    assert h.size == np.unique(group).size and lo[0] == 0.0
    assert all(a.size == 0 for a in coarsen_bins(np.zeros(8), lo=5, shift=40, group_shift=1))
