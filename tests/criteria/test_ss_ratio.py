"""S&S ratio quantities (eq. (7)-(9), (22)-(23), (26)-(32)) against direct computation."""

from __future__ import annotations

import numpy as np
import pytest

from svmtune.criteria.ss_copt import (
    PAPER_CURVE,
    CoptCurve,
    ExpPiece,
    c_opt,
    load_copt_table,
    ss_regime,
)
from svmtune.criteria.ss_core import (
    ALPHA,
    class_spreads,
    class_weight_matrix,
    gaussian_error_from_ss,
    pooled_sigma,
    ratio_from_ss,
    separability,
    ss_class_codes,
    ss_db,
    ss_from_class_sums,
    ss_from_ratio,
    ss_ratio,
)
from svmtune.criteria.ss_features import exact_kernel_features, kernel_features, select_kernel
from svmtune.criteria.ss_kernel import (
    kernel_ss_matrix,
    kernel_ss_ratio,
    min_pairwise_ss,
    pairwise_ss,
    worst_pairs,
)
from svmtune.kernels import Kernel
from svmtune.svm import fit_l1_svm


def two_classes(seed=0, n=(23, 17), p=3, shift=1.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(sum(n), p)) * np.linspace(0.5, 1.5, p)
    y = np.r_[np.zeros(n[0], int), np.ones(n[1], int)]
    X[y == 1, 0] += shift
    return X, y


# ------------------------------------------------------------------------------ eq. (9)
def test_ss_breakpoints_of_the_reading_notes():
    assert ss_db(1.0, 1.0 / 6.0) == pytest.approx(0.0, abs=1e-12)
    assert ss_db(1.0, 0.3) == pytest.approx(20 * np.log10(1 / 1.8))
    assert ss_db(1.0, 0.3) == pytest.approx(-5.0, abs=0.11)
    assert ss_db(2.0, 0.1, alpha=1.0) == pytest.approx(20 * np.log10(20.0))
    assert ss_from_ratio(1.0 / 6.0) == pytest.approx(0.0, abs=1e-12)
    r = np.array([0.01, 0.1, 1 / 6, 0.3, 2.0])
    np.testing.assert_allclose(ratio_from_ss(ss_from_ratio(r)), r, rtol=1e-12)
    assert ALPHA == 6.0


def test_ss_db_degenerate_and_invalid():
    assert ss_db(0.0, 1.0) == -np.inf
    assert ss_db(0.0, 0.0) == -np.inf
    assert ss_db(1.0, 0.0) == np.inf
    for bad in [(-1.0, 1.0), (1.0, -1.0), (np.nan, 1.0), (1.0, np.inf)]:
        with pytest.raises(ValueError):
            ss_db(*bad)
    with pytest.raises(ValueError, match="alpha"):
        ss_db(1.0, 1.0, alpha=0.0)


# ------------------------------------------------------------------------------ eq. (7)-(8)
def test_plain_quantities_match_direct_computation():
    X, y = two_classes()
    m0, m1 = X[y == 0].mean(0), X[y == 1].mean(0)
    d = np.linalg.norm(m1 - m0)
    u = (m0 - m1) / d
    s_dir = [np.std(X[y == c] @ u) for c in (0, 1)]
    s_iso = [np.sqrt(np.mean(np.var(X[y == c], axis=0))) for c in (0, 1)]
    n = [np.sum(y == 0), np.sum(y == 1)]
    for spread, s in [("directional", s_dir), ("isotropic", s_iso)]:
        res = ss_ratio(X, y, spread=spread, estimator="plain")
        pooled = np.sqrt((n[0] * s[0] ** 2 + n[1] * s[1] ** 2) / (n[0] + n[1]))
        assert res.d == pytest.approx(d, rel=1e-12)
        np.testing.assert_allclose(res.class_sigmas, s, rtol=1e-10)
        assert res.sigma == pytest.approx(pooled, rel=1e-10)
        assert res.ss == pytest.approx(20 * np.log10(d / (6 * pooled)), rel=1e-10)
        assert res.class_sizes == (n[0], n[1])
        assert res.classes == (0, 1)
        assert res.ratio == pytest.approx(pooled / d)
    assert separability(X, y) == pytest.approx(d)
    assert class_spreads(X, y, spread="directional", estimator="plain") == pytest.approx(s_dir)
    assert pooled_sigma([1.0, 2.0], [1.0, 3.0]) == pytest.approx(np.sqrt(13 / 4))


def test_weighted_quantities_match_direct_computation():
    X, y = two_classes(seed=1)
    w = np.random.default_rng(5).uniform(0.2, 3.0, y.size)
    m = [np.average(X[y == c], axis=0, weights=w[y == c]) for c in (0, 1)]
    d = np.linalg.norm(m[0] - m[1])
    u = (m[0] - m[1]) / d
    s = []
    for c in (0, 1):
        t = X[y == c] @ u
        s.append(
            np.sqrt(np.average((t - np.average(t, weights=w[y == c])) ** 2, weights=w[y == c]))
        )
    W = [w[y == 0].sum(), w[y == 1].sum()]
    res = ss_ratio(X, y, w, estimator="plain")
    assert res.d == pytest.approx(d, rel=1e-12)
    np.testing.assert_allclose(res.class_sigmas, s, rtol=1e-10)
    assert res.sigma == pytest.approx(pooled_sigma(s, W), rel=1e-10)
    # integer weights are repetitions
    wi = np.random.default_rng(2).integers(1, 4, y.size)
    rep = np.repeat(np.arange(y.size), wi)
    for est in ("plain",):
        a = ss_ratio(X, y, wi.astype(float), estimator=est)
        b = ss_ratio(X[rep], y[rep], estimator=est)
        assert a.ss == pytest.approx(b.ss, rel=1e-10)


def _loo_bruteforce(X, y):
    """Leave-one-out projections by explicit deletion (the definition)."""
    labels = np.unique(y)
    g = np.empty(len(y))
    for i in range(len(y)):
        own, oth = (labels[0], labels[1]) if y[i] == labels[0] else (labels[1], labels[0])
        keep = np.ones(len(y), bool)
        keep[i] = False
        mu_own = X[keep & (y == own)].mean(0)
        mu_oth = X[y == oth].mean(0)
        diff = mu_own - mu_oth if own == labels[0] else mu_oth - mu_own
        g[i] = X[i] @ diff
    d2 = g[y == labels[0]].mean() - g[y == labels[1]].mean()
    s = [np.std(g[y == c], ddof=1) / np.sqrt(d2) for c in labels] if d2 > 0 else None
    return d2, s


def test_loo_estimates_match_explicit_deletion():
    X, y = two_classes(seed=3, n=(9, 12), p=4)
    d2, s = _loo_bruteforce(X, y)
    res = ss_ratio(X, y, estimator="loo")
    assert res.d == pytest.approx(np.sqrt(d2), rel=1e-10)
    np.testing.assert_allclose(res.class_sigmas, s, rtol=1e-10)
    # the unbiased identity |m1 - m2|^2 - tr S1 / n1 - tr S2 / n2
    n = [np.sum(y == 0), np.sum(y == 1)]
    m = [X[y == c].mean(0) for c in (0, 1)]
    trS = [np.trace(np.cov(X[y == c].T)) for c in (0, 1)]
    assert d2 == pytest.approx(np.sum((m[0] - m[1]) ** 2) - trS[0] / n[0] - trS[1] / n[1])
    # isotropic + loo: unbiased per-coordinate variances
    iso = ss_ratio(X, y, spread="isotropic", estimator="loo")
    s_iso = [np.sqrt(np.mean(np.var(X[y == c], axis=0, ddof=1))) for c in (0, 1)]
    np.testing.assert_allclose(iso.class_sigmas, s_iso, rtol=1e-10)
    assert iso.d == pytest.approx(res.d)


def test_loo_separability_is_unbiased_monte_carlo():
    rng = np.random.default_rng(0)
    p, n, delta, reps = 10, 5, 0.5, 800
    loo, plain = [], []
    y = np.r_[np.zeros(n), np.ones(n)]
    for _ in range(reps):
        X = rng.normal(size=(2 * n, p))
        X[n:, 0] += delta
        # the signed U-statistic (ss_ratio clips d at 0): mean difference of LOO projections
        d2, _ = _loo_bruteforce(X, y)
        assert ss_ratio(X, y, estimator="loo").d == pytest.approx(np.sqrt(max(d2, 0.0)))
        loo.append(d2)
        plain.append(np.sum((X[:n].mean(0) - X[n:].mean(0)) ** 2))
    se = np.std(loo) / np.sqrt(reps)
    assert abs(np.mean(loo) - delta**2) < 4 * se
    # the plain (paper) estimate is biased upwards by tr(S_1)/n_1 + tr(S_2)/n_2 = 2 p / n
    se_p = np.std(plain) / np.sqrt(reps)
    assert abs(np.mean(plain) - (delta**2 + 2 * p / n)) < 4 * se_p


# ------------------------------------------------------------------------------ kernels
@pytest.mark.parametrize("estimator", ["plain", "loo"])
def test_kernel_matrix_equals_feature_space(estimator):
    X, y = two_classes(seed=4, n=(15, 20))
    lin = kernel_ss_ratio(X @ X.T, y, estimator=estimator)
    ref = ss_ratio(X, y, spread="directional", estimator=estimator)
    assert lin.ss == pytest.approx(ref.ss, rel=1e-8)
    assert lin.d == pytest.approx(ref.d, rel=1e-8)
    for kern in [Kernel("rbf", sigma=1.3), Kernel("poly", degree=2, gamma=0.5, coef0=1.0)]:
        K = kern(X)
        Z = exact_kernel_features(K)
        np.testing.assert_allclose(Z @ Z.T, K, atol=1e-8)
        a = kernel_ss_ratio(K, y, estimator=estimator)
        b = ss_ratio(Z, y, estimator=estimator)
        assert a.ss == pytest.approx(b.ss, rel=1e-6)
        np.testing.assert_allclose(a.class_sigmas, b.class_sigmas, rtol=1e-6)
        # the direct definition: class means in feature space
        mu = [Z[y == c].mean(0) for c in (0, 1)]
        if estimator == "plain":
            assert a.d == pytest.approx(np.linalg.norm(mu[0] - mu[1]), rel=1e-8)


def test_feature_maps_approximate_the_exact_kernel_space():
    X, y = two_classes(seed=6, n=(40, 40), p=2)
    rbf = Kernel("rbf", sigma=1.0)
    exact = kernel_ss_ratio(rbf(X), y)
    # Nystroem on all points reproduces the kernel matrix exactly
    Zn = kernel_features(X, rbf, method="nystroem", n_components=200, random_state=0)
    assert ss_ratio(Zn, y).ss == pytest.approx(exact.ss, abs=1e-6)
    Zr = kernel_features(X, rbf, method="rff", n_components=20000, random_state=0)
    assert Zr.shape == (80, 20000)
    assert ss_ratio(Zr, y).ss == pytest.approx(exact.ss, abs=0.5)
    poly = Kernel("poly", degree=2, gamma=0.5, coef0=1.0)
    exact_p = kernel_ss_ratio(poly(X), y)
    Zt = kernel_features(X, poly, method="tensor_sketch", n_components=20000, random_state=0)
    assert ss_ratio(Zt, y).ss == pytest.approx(exact_p.ss, abs=0.5)
    Ze = kernel_features(X, poly, method="exact")
    assert ss_ratio(Ze, y).ss == pytest.approx(exact_p.ss, rel=1e-6)
    assert kernel_features(X, Kernel("linear"), method="rff") is not None
    np.testing.assert_array_equal(kernel_features(X, Kernel("linear")), X)
    with pytest.raises(ValueError, match="RBF"):
        kernel_features(X, poly, method="rff")
    with pytest.raises(ValueError, match="polynomial"):
        kernel_features(X, rbf, method="tensor_sketch")
    with pytest.raises(ValueError, match="sigmoid"):
        kernel_features(X, Kernel("sigmoid"), method="exact")
    with pytest.raises(ValueError, match="method"):
        kernel_features(X, rbf, method="svd")


def test_random_maps_are_seeded():
    X, y = two_classes(seed=7)
    rbf = Kernel("rbf", sigma=0.8)
    a = kernel_features(X, rbf, method="rff", n_components=64, random_state=3)
    b = kernel_features(X, rbf, method="rff", n_components=64, random_state=3)
    np.testing.assert_array_equal(a, b)


def test_isotropic_spread_depends_on_feature_dimension_directional_does_not():
    X, y = two_classes(seed=8, n=(60, 60), p=2, shift=2.0)
    rbf = Kernel("rbf", sigma=1.0)
    exact = kernel_ss_ratio(rbf(X), y).ss
    out = {}
    for D in (256, 2048):
        Z = kernel_features(X, rbf, method="rff", n_components=D, random_state=0)
        out[D] = (ss_ratio(Z, y, spread="isotropic").ss, ss_ratio(Z, y).ss)
    # isotropic: per-coordinate spread ~ 1 / sqrt(D), S&S grows ~ 10 log10(2048 / 256) = 9 dB
    assert out[2048][0] - out[256][0] > 6.0
    # directional: converges to the exact kernel-space value
    assert abs(out[256][1] - exact) < 1.0
    assert abs(out[2048][1] - exact) < 1.0


def test_degenerate_kernels_give_clear_values_not_nan():
    X, y = two_classes(seed=9, n=(10, 12))
    I = Kernel("rbf", sigma=1e-6)(X)
    np.testing.assert_array_equal(I, np.eye(len(y)))
    assert kernel_ss_ratio(I, y, estimator="loo").ss == -np.inf
    with pytest.warns(RuntimeWarning, match="scatteredness"):
        assert kernel_ss_ratio(I, y, estimator="plain").ss == np.inf
    ones = Kernel("rbf", sigma=1e9)(X)
    for est in ("loo", "plain"):
        res = kernel_ss_ratio(ones, y, estimator=est)
        assert res.ss == -np.inf and res.d == 0.0 and not np.isnan(res.sigma)
    # duplicated points and a constant feature
    Xd = np.vstack([X, X])
    Xd[:, 1] = 3.0
    yd = np.r_[y, y]
    for spread in ("directional", "isotropic"):
        res = ss_ratio(Xd, yd, spread=spread)
        assert np.isfinite(res.ss)


def test_input_validation():
    X, y = two_classes()
    y3 = y.copy()
    y3[:3] = 2
    with pytest.raises(ValueError, match="pairwise"):
        ss_ratio(X, y3)
    with pytest.raises(ValueError, match="spread"):
        ss_ratio(X, y, spread="total")
    with pytest.raises(ValueError, match="estimator"):
        ss_ratio(X, y, estimator="jackknife")
    with pytest.raises(ValueError, match="sample_weight"):
        ss_ratio(X, y, -np.ones(len(y)))
    with pytest.raises(ValueError, match="rows"):
        ss_ratio(X, y[:-1])
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        ss_ratio(Xn, y)
    one = np.r_[0, np.ones(len(y) - 1, int)]
    with pytest.raises(ValueError, match="two samples"):
        ss_ratio(X, one, estimator="loo")
    assert np.isfinite(ss_ratio(X, one, estimator="plain").ss)
    with pytest.raises(ValueError, match="square"):
        kernel_ss_ratio(X, y)


# ------------------------------------------------------------------------------ eq. (31)
def test_multiclass_minimum_over_pairs():
    rng = np.random.default_rng(11)
    centres = np.array([[0, 0], [4, 0], [4.8, 0.5]])
    y = np.repeat([0, 1, 2], [20, 25, 15])
    X = centres[y] + rng.normal(size=(60, 2))
    res = pairwise_ss(y, Z=X)
    assert set(res) == {(0, 1), (0, 2), (1, 2)}
    for (a, b), r in res.items():
        m = (y == a) | (y == b)
        assert r.ss == pytest.approx(ss_ratio(X[m], y[m]).ss)
    pair, worst = min_pairwise_ss(y, Z=X)
    assert pair == (1, 2)
    assert worst.ss == min(r.ss for r in res.values())
    Kp, Kw = min_pairwise_ss(y, K=X @ X.T)
    assert Kp == pair and Kw.ss == pytest.approx(worst.ss)
    with pytest.raises(ValueError, match="exactly one"):
        pairwise_ss(y)
    with pytest.raises(ValueError, match="directional"):
        pairwise_ss(y, K=X @ X.T, spread="isotropic")
    # binary: the single pair
    b = y < 2
    p2, r2 = min_pairwise_ss(y[b], Z=X[b])
    assert p2 == (0, 1) and r2.ss == pytest.approx(res[(0, 1)].ss)


@pytest.mark.parametrize("estimator", ["plain", "loo"])
def test_all_pairs_from_one_kernel_product_equal_each_pair_in_feature_space(estimator):
    """kernel_ss_matrix / ss_from_class_sums (one ``K W`` for all pairs, batched over kernels)
    = ss_ratio on each pair's own samples in explicit feature space, with sample weights."""
    rng = np.random.default_rng(12)
    centres = np.array([[0, 0, 0], [3, 0, 1], [3.5, 0.5, 0], [0, 2, 2]])
    y = np.repeat(["a", "b", "c", "d"], [14, 11, 9, 12])
    X = centres[np.unique(y, return_inverse=True)[1]] + rng.normal(size=(len(y), 3))
    w = rng.uniform(0.2, 2.0, size=len(y))
    kernels = [Kernel("rbf", sigma=s) for s in (0.7, 1.5, 4.0)] + [Kernel("linear")]
    Ks = [kern(X) for kern in kernels]
    labels, codes, ww = ss_class_codes(y, w, len(y), estimator)
    Wm = class_weight_matrix(codes, ww, 4)
    R = np.stack([K @ Wm for K in Ks])
    d_b, sig_b, pooled_b, ss_b = ss_from_class_sums(
        R, np.stack([np.diag(K) for K in Ks]), codes, ww, estimator
    )
    for c, K in enumerate(Ks):
        m = kernel_ss_matrix(K, y, w, estimator=estimator)
        Z = exact_kernel_features(K)
        for a in range(4):
            for b in range(a + 1, 4):
                idx = (y == labels[a]) | (y == labels[b])
                ref = ss_ratio(Z[idx], y[idx], w[idx], spread="directional", estimator=estimator)
                got = m.result(a, b)
                assert got.classes == ref.classes
                assert got.ss == pytest.approx(ref.ss, rel=1e-7, abs=1e-9)
                np.testing.assert_allclose(got.class_sigmas, ref.class_sigmas, rtol=1e-7)
                if estimator == "loo":  # the plain d of ss_ratio is the direct centre distance
                    assert got.d == pytest.approx(ref.d, rel=1e-7)
                assert got.sigma == pytest.approx(ref.sigma, rel=1e-7)
                assert ss_b[c, a, b] == pytest.approx(got.ss, rel=1e-12, abs=1e-12)
                assert d_b[c, a, b] == pytest.approx(got.d, rel=1e-12)
                assert sig_b[c, b, a] == pytest.approx(got.class_sigmas[1], rel=1e-12)
                assert pooled_b[c, a, b] == pytest.approx(got.sigma, rel=1e-12)
        pair, worst = min_pairwise_ss(y, K=K, sample_weight=w, estimator=estimator)
        assert worst.ss == min(
            r.ss for r in pairwise_ss(y, K=K, sample_weight=w, estimator=estimator).values()
        )
        assert pair == worst.classes


def test_worst_pairs_of_a_batch_equal_the_first_smallest_pair_of_each_matrix():
    """eq. (31) over a batch: the smallest off-diagonal S&S of each matrix, ties to the first
    pair (a, b), a < b, in row-major order (values drawn from a few levels to make ties)."""
    rng = np.random.default_rng(3)
    for k in (2, 3, 5):
        ss = rng.integers(-3, 3, size=(40, k, k)).astype(float)
        ss = np.minimum(ss, np.swapaxes(ss, 1, 2))  # symmetric, as S&S is
        ss[:, np.eye(k, dtype=bool)] = np.inf
        a, b = worst_pairs(ss)
        for m, (ai, bi) in enumerate(zip(a, b)):
            pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
            expect = min(pairs, key=lambda p: (ss[m][p], pairs.index(p)))
            assert (int(ai), int(bi)) == expect


def test_kernel_ss_matrix_input_errors():
    X, y = two_classes(seed=1)
    K = X @ X.T
    with pytest.raises(ValueError, match="rows"):
        kernel_ss_matrix(K, y[:-1])
    with pytest.raises(ValueError, match="two classes"):
        kernel_ss_matrix(K, np.zeros(len(y)))
    w = np.ones(len(y))
    w[y == 1] = 0.0
    with pytest.raises(ValueError, match="positive weight"):
        kernel_ss_matrix(K, y, w)
    w[np.flatnonzero(y == 1)[0]] = 1.0
    with pytest.raises(ValueError, match="two samples"):
        kernel_ss_matrix(K, y, w, estimator="loo")
    assert np.isfinite(kernel_ss_matrix(K, y, w, estimator="plain").ss[0, 1])
    with pytest.raises(ValueError, match="finite square"):
        kernel_ss_matrix(K[:, :-1], y)


# ------------------------------------------------------------------------------ eq. (22)-(23)
def test_paper_curve_and_regimes():
    # eq. (22) and (23) as printed, on their own ranges
    assert PAPER_CURVE(0.12) == pytest.approx(0.7345 * np.exp(33.6915 * 0.12) - 0.5247)
    assert PAPER_CURVE(0.2) == pytest.approx(5164.4657 * np.exp(-21.2514 * 0.2) - 0.8548)
    assert PAPER_CURVE(0.5) == pytest.approx(PAPER_CURVE(0.3))  # S&S <= -5: end of the curve
    assert PAPER_CURVE(0.0) == pytest.approx(0.7345 - 0.5247)
    # eq. (28): the switch is at S&S = 0
    assert c_opt(0.5, rescale=False) == pytest.approx(PAPER_CURVE.rising(ratio_from_ss(0.5)))
    assert c_opt(-0.5, rescale=False) == pytest.approx(PAPER_CURVE.falling(ratio_from_ss(-0.5)))
    assert ss_regime(3.0) == "separable"
    assert ss_regime(0.0) == "overlapping"
    assert ss_regime(-4.9) == "overlapping"
    assert ss_regime(-5.0) == "kernel"
    assert ss_regime(-np.inf) == "kernel"
    with pytest.raises(ValueError):
        ss_regime(np.nan)


def test_c_opt_rescaling_and_limits():
    ss = -2.0
    base = c_opt(ss, rescale=False)
    assert c_opt(ss, d=1.0) == pytest.approx(base)
    assert c_opt(ss, d=2.0) == pytest.approx(base / 4)
    assert c_opt(ss, d=0.5) == pytest.approx(base * 4)
    assert c_opt(np.inf, rescale=False) == pytest.approx(PAPER_CURVE(0.0))
    assert c_opt(-np.inf, rescale=False) == pytest.approx(PAPER_CURVE(0.3))
    with pytest.raises(ValueError, match="d"):
        c_opt(ss)
    with pytest.raises(ValueError, match="positive"):
        c_opt(ss, d=0.0)
    with pytest.raises(ValueError, match="NaN"):
        c_opt(np.nan, rescale=False)
    neg = CoptCurve(rising=ExpPiece(1.0, 0.0, -5.0), falling=ExpPiece(1.0, 0.0, -5.0), c_min=0.01)
    assert neg(0.1) == 0.01
    # a tail continues past r_kernel up to r_max, then stays constant
    tail = ExpPiece(10.0, -2.0, 0.0)
    cur = CoptCurve(rising=PAPER_CURVE.rising, falling=PAPER_CURVE.falling, tail=tail, r_max=0.8)
    assert cur(0.5) == pytest.approx(tail(0.5))
    assert cur(5.0) == pytest.approx(tail(0.8)) == pytest.approx(cur(np.inf))
    assert cur(0.2) == pytest.approx(PAPER_CURVE(0.2))
    assert c_opt(-np.inf, curve=cur, rescale=False) == pytest.approx(tail(0.8))


def test_scaling_the_data_by_a_scales_c_by_one_over_a_squared():
    """The fact behind rescale=True: SVM(a X, C / a^2) has the decision function of SVM(X, C)."""
    X, y = two_classes(seed=12, n=(25, 25), p=2, shift=1.0)
    t = np.where(y == 1, 1.0, -1.0)
    Xt = np.random.default_rng(1).normal(size=(30, 2))
    lin = Kernel("linear")
    a, C = 3.0, 2.0
    s1 = fit_l1_svm(t, C, X=X, kernel=lin, tol=1e-8)
    s2 = fit_l1_svm(t, C / a**2, X=a * X, kernel=lin, tol=1e-8)
    f1 = s1.decision_function(lin(Xt, X))
    f2 = s2.decision_function(lin(a * Xt, a * X))
    np.testing.assert_allclose(f1, f2, atol=1e-5)


def test_shipped_table_loads():
    curve = load_copt_table()
    r = np.linspace(0.0, 0.6, 61)
    C = curve(r)
    assert np.all(np.isfinite(C)) and np.all(C > 0)
    assert 0.1 < curve.r_break < curve.r_kernel
    assert "ss_table" in curve.source


# ------------------------------------------------------------------------------ eq. (26)-(27)
def test_select_kernel_discards_below_threshold():
    assert select_kernel([-6.0, -1.0, 2.0, -5.0]) == (2, True)
    assert select_kernel([-6.0, -4.0, -5.0]) == (1, True)
    assert select_kernel([-7.0, -6.0, -9.0]) == (1, False)
    assert select_kernel([1.0, 1.0]) == (0, True)
    assert select_kernel([-np.inf, -np.inf]) == (0, False)
    assert select_kernel([np.inf, 3.0]) == (0, True)
    with pytest.raises(ValueError):
        select_kernel([])
    with pytest.raises(ValueError):
        select_kernel([np.nan, 1.0])


def test_gaussian_error_monte_carlo():
    rng = np.random.default_rng(0)
    for ss in (-8.0, -3.0, 0.0):
        r = ratio_from_ss(ss)
        n = 400_000
        x_neg = rng.normal(0.0, r, n)
        x_pos = rng.normal(1.0, r, n)
        err = 0.5 * np.mean(x_neg > 0.5) + 0.5 * np.mean(x_pos < 0.5)
        se = np.sqrt(err * (1 - err) / (2 * n)) + 1e-7
        assert abs(err - gaussian_error_from_ss(ss)) < 5 * se
    assert gaussian_error_from_ss(-np.inf) == pytest.approx(0.5)
    assert gaussian_error_from_ss(np.inf) == 0.0
