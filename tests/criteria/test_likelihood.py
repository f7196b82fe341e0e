"""LD likelihoods, class similarities and objective against their pair-by-pair definitions."""

from __future__ import annotations

import numpy as np
import pytest

from svmtune.criteria.blocks import RBFBlocks, rbf_block_stats
from svmtune.criteria.likelihood import (
    class_likelihoods,
    class_similarities,
    ld_curve,
    ld_distance,
    ld_objective,
    likelihood_map,
    ovo_similarities,
    ovr_similarities,
)


def _data(n=40, k=2, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    y[: n // 4] = 0  # unequal classes
    X = rng.normal(size=(n, 3)) + 0.7 * y[:, None]
    return X, y


def _B(x, Xc, s):
    """LD eq. (9), one term at a time."""
    return sum(np.exp(-np.sum((x - xk) ** 2) / (2 * s * s)) for xk in Xc) / len(Xc)


def _S(X, y, i, j, s):
    """LD eq. (10), pair by pair: mean over x_k in C_i of B(x_k, C_j)."""
    Xi, Xj = X[y == i], X[y == j]
    total = 0.0
    for xk in Xi:
        for xl in Xj:
            total += np.exp(-np.sum((xk - xl) ** 2) / (2 * s * s))
    return total / (len(Xi) * len(Xj))


@pytest.mark.parametrize("k", [2, 3])
def test_vectorised_similarities_equal_pair_by_pair(k):
    X, y = _data(n=30, k=k, seed=k)
    sig = [0.2, 0.9, 3.0, 20.0]
    V = class_similarities(rbf_block_stats(X, y, sig))
    for s_i, s in enumerate(sig):
        for i in range(k):
            for j in range(k):
                assert abs(V[s_i, i, j] - _S(X, y, i, j, s)) <= 1e-12
    # the histogram path agrees within its stated bound
    hs = RBFBlocks(X, y, method="histogram").stats(sig)
    assert np.all(np.abs(class_similarities(hs) - V) <= hs.mean_bound + 1e-15)


def test_likelihoods_equal_definition_and_average_to_similarities():
    X, y = _data(n=24, k=3, seed=1)
    sig = [0.5, 2.0]
    B = class_likelihoods(X, y, sig)
    for s_i, s in enumerate(sig):
        for i, x in enumerate(X):
            for c in range(3):
                assert B[s_i, i, c] == pytest.approx(_B(x, X[y == c], s), rel=1e-12)
    S = rbf_block_stats(X, y, sig).means
    for c in range(3):  # eq. (10): S_cj is the mean of B(x, C_j) over x in C_c
        np.testing.assert_allclose(B[:, y == c].mean(axis=1), S[:, c, :], rtol=1e-12)
    Xe = np.random.default_rng(3).normal(size=(5, 3))
    Be = class_likelihoods(X, y, 1.0, X_eval=Xe)[0]
    assert Be[2, 1] == pytest.approx(_B(Xe[2], X[y == 1], 1.0), rel=1e-12)
    m = likelihood_map(X, y, 2.0)
    np.testing.assert_allclose(m, B[1])
    with pytest.raises(ValueError, match="one width"):
        likelihood_map(X, y, [1.0, 2.0])


def test_weighted_likelihoods_use_weight_totals():
    X, y = _data(n=20, seed=2)
    w = np.linspace(0.5, 2.0, 20)
    B = class_likelihoods(X, y, 1.0, sample_weight=w)[0]
    for c in range(2):
        k = np.exp(-np.sum((X[0] - X[y == c]) ** 2, axis=1) / 2.0)
        assert B[0, c] == pytest.approx(np.sum(w[y == c] * k) / np.sum(w[y == c]), rel=1e-12)


def test_ld_distance_is_norm_times_cosine():
    rng = np.random.default_rng(4)
    V = rng.uniform(0.01, 1.0, size=(50, 2, 2))
    D = ld_distance(V)
    for v, d in zip(V, D):
        v1, v2 = v[0], v[1]
        cos = v1 @ v2 / (np.linalg.norm(v1) * np.linalg.norm(v2))
        assert d == pytest.approx(np.linalg.norm(v1 - v2) * cos, rel=1e-13)
    assert ld_distance(np.zeros((2, 2))) == 0.0
    with pytest.raises(ValueError, match="2 x 2"):
        ld_distance(np.ones((3, 3)))


def test_objective_limits():
    X, y = _data(n=40, seed=5)
    n1, n2 = np.bincount(y)
    st = rbf_block_stats(X, y, [1e-6, 1.0, 1e6])
    V = class_similarities(st)
    # sigma -> 0: V1 = (1/N1, 0), V2 = (0, 1/N2) (LD Sec. 4): orthogonal, D = 0
    np.testing.assert_allclose(V[0], np.diag([1 / n1, 1 / n2]), atol=1e-300)
    assert ld_objective(st)[0] == pytest.approx(0.0, abs=1e-300)
    # sigma -> inf: V1 = V2 = (1, 1), D -> 0; in between D > 0
    assert ld_objective(st)[2] == pytest.approx(0.0, abs=1e-9)
    assert ld_objective(st)[1] > 1e-3


def test_ovr_similarities_equal_relabelled_binary_problems():
    X, y = _data(n=45, k=3, seed=6)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=45)
    sig = [0.4, 1.5, 6.0]
    st = rbf_block_stats(X, y, sig, sample_weight=w)
    ovr = ovr_similarities(st.means, st.class_weights)
    per_task = []
    for c in range(3):
        yb = np.where(y == c, 0, 1)  # class c first, the rest second
        sb = rbf_block_stats(X, yb, sig, sample_weight=w)
        np.testing.assert_allclose(ovr[:, c], sb.means, rtol=1e-12)
        per_task.append(ld_objective(sb))
    per_task = np.array(per_task).T
    np.testing.assert_allclose(ld_objective(st), per_task.mean(1), rtol=1e-12)
    np.testing.assert_allclose(ld_objective(st, reduce="min"), per_task.min(1), rtol=1e-12)
    with pytest.raises(ValueError, match="reduction"):
        ld_objective(st, reduce="sum")


def test_ovo_similarities_equal_the_class_pair_problems():
    X, y = _data(n=48, k=4, seed=7)
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=48)
    sig = [0.3, 1.2, 5.0]
    st = rbf_block_stats(X, y, sig, sample_weight=w)
    ovo = ovo_similarities(st.means)
    per_pair = []
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    for p, (a, b) in enumerate(pairs):
        keep = (y == a) | (y == b)
        sb = rbf_block_stats(X[keep], np.where(y[keep] == a, 0, 1), sig, sample_weight=w[keep])
        np.testing.assert_allclose(ovo[:, p], sb.means, rtol=1e-12)
        per_pair.append(ld_objective(sb))
    per_pair = np.array(per_pair).T
    np.testing.assert_allclose(ld_objective(st, scheme="ovo"), per_pair.mean(1), rtol=1e-12)
    np.testing.assert_allclose(
        ld_objective(st, reduce="min", scheme="ovo"), per_pair.min(1), rtol=1e-12
    )
    with pytest.raises(ValueError, match="scheme"):
        ld_objective(st, scheme="pairs")
    # binary problems have one task whatever the scheme
    sb = rbf_block_stats(X, (y > 1).astype(int), sig)
    np.testing.assert_array_equal(ld_objective(sb, scheme="ovo"), ld_objective(sb))


def test_binary_objective_is_symmetric_in_the_classes():
    X, y = _data(seed=7)
    sig = 2.0 ** np.arange(-3.0, 4.0)
    np.testing.assert_allclose(ld_curve(X, y, sig), ld_curve(X, 1 - y, sig), rtol=1e-12)
