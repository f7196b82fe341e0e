"""ESDR, DBTC and J4 against their definitions; analytic Gaussian ESDR against Monte Carlo."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmtune.criteria.blocks import RBFBlocks, kernel_block_stats, rbf_block_stats
from svmtune.criteria.esdr import (
    dbtc_pair,
    esdr_pair,
    gaussian_between_sqdist,
    gaussian_esdr,
    gaussian_esdr_input,
    gaussian_study_case,
    gaussian_study_curves,
    gaussian_within_sqdist,
    index_uncertainty,
    index_values,
    j4_pair,
    j4_scatter,
    pair_index,
    rbf_index_curve,
    sample_gaussian_case,
)
from svmtune.criteria.histogram import build_pair_histogram, histogram_block_sums

KERNELS = {
    "rbf": lambda a, b: float(np.exp(-np.sum((a - b) ** 2) / (2 * 1.3**2))),
    "linear": lambda a, b: float(a @ b),
    "poly": lambda a, b: float((0.4 * a @ b + 1.0) ** 3),
}


def _data(n=36, k=2, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    X = rng.normal(size=(n, 3)) + 0.8 * y[:, None]
    return X, y


def _definitions(X, y, kern):
    """ESDR (eq. 8-12), DBTC (eq. 13) and J4 (eq. 14) of two classes, term by term."""
    X1, X2 = X[y == 0], X[y == 1]
    n1, n2, n = len(X1), len(X2), len(X)

    def dF2(a, b):  # eq. (9)
        return kern(a, a) - 2 * kern(a, b) + kern(b, b)

    e12 = np.mean([dF2(a, b) for a in X1 for b in X2])  # eq. (10)
    e11 = np.mean([dF2(a, b) for a in X1 for b in X1])  # eq. (11), i1 = i2 included
    e22 = np.mean([dF2(a, b) for a in X2 for b in X2])  # eq. (12)
    esdr = e12 / (n1 / n * e11 + n2 / n * e22)
    k11 = np.mean([kern(a, b) for a in X1 for b in X1])
    k12 = np.mean([kern(a, b) for a in X1 for b in X2])
    k22 = np.mean([kern(a, b) for a in X2 for b in X2])
    dbtc = k11 - 2 * k12 + k22  # eq. (13)
    # J4 via the kernel trick on the scatter traces of eq. (14)
    mm = {(0, 0): k11, (0, 1): k12, (1, 0): k12, (1, 1): k22}
    w = (n1 / n, n2 / n)
    tr_w = 0.0
    for c, Xc in enumerate((X1, X2)):
        for a in Xc:
            tr_w += kern(a, a) - 2 * np.mean([kern(a, b) for b in Xc]) + mm[(c, c)]
    tr_w /= n
    m_dot_m = sum(w[a] * w[b] * mm[(a, b)] for a in (0, 1) for b in (0, 1))
    tr_b = sum(
        n_c / n * (mm[(c, c)] - 2 * sum(w[b] * mm[(c, b)] for b in (0, 1)) + m_dot_m)
        for c, n_c in ((0, n1), (1, n2))
    )
    return esdr, dbtc, tr_b / tr_w


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_indices_equal_definitions(kernel):
    X, y = _data(n=30, seed=1)
    y[:4] = 0  # unequal class sizes
    kern = KERNELS[kernel]
    K = np.array([[kern(a, b) for b in X] for a in X])
    if kernel == "rbf":
        st = rbf_block_stats(X, y, [1.3])
    else:
        st = kernel_block_stats(K, y)
    ref = _definitions(X, y, kern)
    for name, r in zip(("esdr", "dbtc", "j4"), ref):
        assert index_values(st, name)[0] == pytest.approx(r, rel=1e-10, abs=1e-12), name


def test_linear_j4_equals_explicit_scatter_matrices():
    X, y = _data(n=45, k=3, seed=2)
    m = X.mean(0)
    Sb = sum(
        np.sum(y == c) * np.outer(X[y == c].mean(0) - m, X[y == c].mean(0) - m) for c in range(3)
    )
    Sw = sum((X[y == c] - X[y == c].mean(0)).T @ (X[y == c] - X[y == c].mean(0)) for c in range(3))
    st = kernel_block_stats(X @ X.T, y)
    assert j4_scatter(st.dist[0], st.class_weights) == pytest.approx(
        np.trace(Sb) / np.trace(Sw), rel=1e-12
    )
    # for two classes the native scatter ratio is the pairwise J4
    st2 = kernel_block_stats(X[y < 2] @ X[y < 2].T, y[y < 2])
    assert j4_scatter(st2.dist[0], st2.class_weights) == pytest.approx(
        index_values(st2, "j4")[0], rel=1e-12
    )


def test_dbtc_forms_agree():
    X, y = _data(seed=3)
    st = rbf_block_stats(X, y, [0.5, 2.0])
    M = st.means
    eq13 = M[:, 0, 0] - 2 * M[:, 0, 1] + M[:, 1, 1]
    np.testing.assert_allclose(index_values(st, "dbtc"), eq13, rtol=1e-10)
    s = st.sqdist_means  # eq. (16): a - b/2 - c/2
    np.testing.assert_allclose(dbtc_pair(s[:, 0, 0], s[:, 0, 1], s[:, 1, 1]), eq13, rtol=1e-10)
    # J4 = 2 w1 w2 DBTC / ESDR-denominator (eq. 15 and "denominator twice that of J4")
    w1, w2 = st.class_weights / st.class_weights.sum()
    den = w1 * s[:, 0, 0] + w2 * s[:, 1, 1]
    np.testing.assert_allclose(index_values(st, "j4"), 2 * w1 * w2 * eq13 / den, rtol=1e-10)


@pytest.mark.parametrize("index", ["esdr", "dbtc", "j4"])
def test_multiclass_rule_min_and_mean_over_class_pairs(index):
    X, y = _data(n=45, k=3, seed=4)
    sig = [0.7, 2.5]
    st = rbf_block_stats(X, y, sig)
    per_pair = []
    for a, b in ((0, 1), (0, 2), (1, 2)):
        sel = (y == a) | (y == b)
        sub = rbf_block_stats(X[sel], (y[sel] == b).astype(int), sig)
        per_pair.append(index_values(sub, index))
    per_pair = np.array(per_pair).T
    np.testing.assert_allclose(
        pair_index(index, st.dist, st.class_weights)[:, :]
        * (st.dist_scale[:, None] if index == "dbtc" else 1.0),
        per_pair,
        rtol=1e-10,
    )
    np.testing.assert_allclose(index_values(st, index), per_pair.min(1), rtol=1e-10)
    np.testing.assert_allclose(index_values(st, index, reduce="mean"), per_pair.mean(1), rtol=1e-10)
    with pytest.raises(ValueError, match="reduction"):
        index_values(st, index, reduce="max")
    with pytest.raises(ValueError, match="index"):
        index_values(st, "fisher")


def test_sample_esdr_limits():
    X, y = _data(n=40, seed=5)
    st = rbf_block_stats(X, y, [1e-6, 1e6, 1e100])
    n1, n2 = np.bincount(y)
    w1, w2 = n1 / 40, n2 / 40
    # sigma -> 0: every distinct pair is at feature distance sqrt(2); only i1 = i2 differ
    assert index_values(st, "esdr")[0] == pytest.approx(
        1.0 / (w1 * (1 - 1 / n1) + w2 * (1 - 1 / n2)), rel=1e-12
    )
    # sigma -> inf: the input-space ESDR (eq. 19), without cancellation even at 1e100
    lin = index_values(kernel_block_stats(X @ X.T, y), "esdr")[0]
    assert index_values(st, "esdr")[1] == pytest.approx(lin, rel=1e-9)
    assert index_values(st, "esdr")[2] == pytest.approx(lin, rel=1e-12)
    assert index_values(st, "j4")[2] == pytest.approx(
        index_values(kernel_block_stats(X @ X.T, y), "j4")[0], rel=1e-12
    )
    assert index_values(st, "dbtc")[2] == pytest.approx(0.0, abs=1e-150)


def test_degenerate_point_classes_never_nan():
    # two classes, each a single repeated point: within-class distances are zero
    X = np.array([[0.0, 0.0]] * 4 + [[1.0, 1.0]] * 4)
    y = np.repeat([0, 1], 4)
    st = rbf_block_stats(X, y, [0.5, 5.0])
    assert np.all(np.isinf(index_values(st, "esdr")))
    assert np.all(np.isinf(index_values(st, "j4")))
    assert np.all(np.isfinite(index_values(st, "dbtc")))
    same = rbf_block_stats(np.zeros((6, 2)), np.repeat([0, 1], 3), [1.0])
    assert index_values(same, "esdr")[0] == 1.0
    assert index_values(same, "j4")[0] == 0.0
    assert esdr_pair(0.0, 0.0, 0.0, 0.5, 0.5) == 1.0
    assert j4_pair(0.0, 1.0, 0.0, 0.5, 0.5) == np.inf


def test_histogram_index_within_propagated_bound():
    X, y = _data(n=150, seed=6)
    sig = 2.0 ** np.arange(-6.0, 8.01, 0.5)
    ex = rbf_block_stats(X, y, sig)
    hs = histogram_block_sums(build_pair_histogram(X, y), sig)
    for name in ("esdr", "dbtc", "j4"):
        bound, se = index_uncertainty(hs, name)
        err = np.abs(index_values(hs, name) - index_values(ex, name))
        # first-order propagation: allow a 10% margin for the second-order terms
        assert np.all(err <= 1.1 * bound + 1e-12 * np.abs(index_values(ex, name))), name
        assert np.all(se == 0)
        assert np.all(index_uncertainty(ex, name)[0] == 0)
    sub = RBFBlocks(X, y, max_pairs=3000, random_state=0).stats(sig)
    assert np.all(index_uncertainty(sub, "esdr")[1] > 0)


def test_exact_index_has_no_uncertainty_also_for_collapsed_classes():
    # every sample of a class at one point: within-class distances 0, ESDR and J4 infinite
    # with infinite derivatives; exact statistics still carry no uncertainty (not inf * 0)
    X = np.repeat([[0.0, 0.0], [1.0, 1.0]], 10, axis=0)
    y = np.repeat([0, 1], 10)
    ex = rbf_block_stats(X, y, [0.5, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for name in ("esdr", "dbtc", "j4"):
            bound, se = index_uncertainty(ex, name)
            assert np.all(bound == 0) and np.all(se == 0), name
    assert np.all(index_values(ex, "esdr") == np.inf)


def test_rbf_index_curve_matches_blocks():
    X, y = _data(seed=7)
    sig = [0.25, 1.0, 4.0]
    np.testing.assert_allclose(
        rbf_index_curve(X, y, sig, "j4"), index_values(rbf_block_stats(X, y, sig), "j4")
    )


# ------------------------------------------------------------------------------ Gaussian classes
CASES = [
    (np.zeros(2), np.full(2, 0.5), np.ones(2), np.full(2, 2.0), 1.0, 1.0),
    (
        np.array([0.0, 1.0, -1.0]),
        np.array([0.3, 1.0, 2.0]),
        np.array([1.0, 0.0, 0.5]),
        np.array([1.5, 0.2, 0.7]),
        3.0,
        1.0,
    ),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("sigma", [0.3, 1.0, 4.0])
def test_gaussian_esdr_matches_monte_carlo(case, sigma):
    mu1, v1, mu2, v2, n1, n2 = CASES[case]
    rng = np.random.default_rng(10 * case + int(sigma * 10))
    N = 40000

    def draw(mu, v):
        return mu + np.sqrt(v) * rng.standard_normal((N, mu.size))

    def sq(a, b):
        return 2.0 - 2.0 * np.exp(-np.sum((a - b) ** 2, axis=1) / (2 * sigma**2))

    between = sq(draw(mu1, v1), draw(mu2, v2))
    within1 = sq(draw(mu1, v1), draw(mu1, v1))
    within2 = sq(draw(mu2, v2), draw(mu2, v2))
    for sample, exact in (
        (between, gaussian_between_sqdist(mu1, v1, mu2, v2, sigma)[0]),
        (within1, gaussian_within_sqdist(v1, sigma)[0]),
        (within2, gaussian_within_sqdist(v2, sigma)[0]),
    ):
        se = sample.std(ddof=1) / np.sqrt(N)
        assert abs(sample.mean() - exact) <= 3 * se
    w1, w2 = n1 / (n1 + n2), n2 / (n1 + n2)
    num, den = between.mean(), w1 * within1.mean() + w2 * within2.mean()
    se_num = between.std(ddof=1) / np.sqrt(N)
    se_den = np.sqrt(w1**2 * within1.var(ddof=1) + w2**2 * within2.var(ddof=1)) / np.sqrt(N)
    ratio = num / den
    se_ratio = ratio * np.hypot(se_num / num, se_den / den)
    exact = gaussian_esdr(mu1, v1, mu2, v2, sigma, n1=n1, n2=n2)[0]
    assert abs(ratio - exact) <= 3 * se_ratio


def test_gaussian_esdr_limits():
    for mu1, v1, mu2, v2, n1, n2 in CASES:
        lim = gaussian_esdr_input(mu1, v1, mu2, v2, n1=n1, n2=n2)
        vals = gaussian_esdr(mu1, v1, mu2, v2, [1e-8, 1e-3, 1e4, 1e8, 1e150], n1=n1, n2=n2)
        assert vals[0] == pytest.approx(1.0, abs=1e-12)  # sigma -> 0 gives 1
        assert vals[3] == pytest.approx(lim, rel=1e-9)  # sigma -> inf: input space (eq. 19)
        assert vals[4] == pytest.approx(lim, rel=1e-12)
        assert abs(vals[2] - lim) < abs(vals[1] - lim)


def test_gaussian_study_grid():
    sig = 2.0 ** np.arange(-8.0, 9.01, 0.5)
    curves = gaussian_study_curves(sig)
    assert curves.shape == (5, 5, sig.size)
    assert np.all(np.isfinite(curves)) and np.all(curves > 0)
    np.testing.assert_allclose(curves, np.swapaxes(curves, 0, 1), rtol=1e-12)  # equal sizes
    mu1, v1, mu2, v2 = gaussian_study_case(2, 4)
    np.testing.assert_allclose(curves[1, 3], gaussian_esdr(mu1, v1, mu2, v2, sig))
    assert v1[0] == pytest.approx(np.exp(-2.0)) and v2[0] == pytest.approx(np.exp(2.0))
    with pytest.raises(ValueError, match="1..5"):
        gaussian_study_case(0, 3)
    X, y = sample_gaussian_case(3, 5, 50, random_state=0)
    X2, _ = sample_gaussian_case(3, 5, 50, random_state=0)
    assert X.shape == (100, 2) and np.array_equal(X, X2) and np.bincount(y).tolist() == [50, 50]
