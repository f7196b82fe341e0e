"""Model entropy (RBSVM eq. (39)-(40)) against its direct definition."""

from __future__ import annotations

import math

import numpy as np
import pytest

from svmtune.kernels import Kernel
from svmtune.loo.closed_form import closed_form_loo
from svmtune.loo.entropy import correct_probability, l2_model_entropy, model_entropy
from svmtune.svm import fit_l2_svm

from ..conftest import make_problem


def _direct_entropy(y, r, base=2.0):
    """Eq. (39)-(40) written out point by point."""
    total = 0.0
    for yi, ri in zip(y, r):
        t = math.tanh(ri)
        if yi * ri > 0:
            P = (1 + t) / 2 if yi == 1 else (1 - t) / 2
        else:
            P = 0.5
        for q in (P, 1 - P):
            if q > 0:
                total -= q * math.log(q, base)
    return total / len(y)


def test_model_entropy_matches_direct_definition():
    rng = np.random.default_rng(0)
    y = np.where(rng.random(200) > 0.4, 1.0, -1.0)
    r = rng.normal(scale=1.5, size=200)
    assert model_entropy(y, r) == pytest.approx(_direct_entropy(y, r), rel=1e-12)
    assert model_entropy(y, r, base=math.e) == pytest.approx(
        _direct_entropy(y, r, base=math.e), rel=1e-12
    )
    w = rng.uniform(0.1, 3.0, 200)
    P = correct_probability(y, r)
    h = -(P * np.log2(P) + (1 - P) * np.log2(1 - P))
    assert model_entropy(y, r, sample_weight=w) == pytest.approx(np.sum(w * h) / w.sum())


def test_model_entropy_range_and_extremes():
    y = np.array([1.0, -1.0, 1.0, -1.0])
    assert model_entropy(y, np.array([50.0, -50.0, 40.0, -60.0])) == pytest.approx(0.0, abs=1e-12)
    assert model_entropy(y, -np.array([3.0, -3.0, 0.5, -0.1])) == pytest.approx(1.0)  # all wrong
    assert model_entropy(y, np.zeros(4)) == pytest.approx(1.0)  # r = 0 counts as wrong
    rng = np.random.default_rng(1)
    for _ in range(20):
        r = rng.normal(scale=3.0, size=4)
        assert 0.0 <= model_entropy(y, r) <= 1.0


def test_correct_probability_and_validation():
    P = correct_probability(np.array([1.0, -1.0, 1.0]), np.array([0.5, -0.5, -0.5]))
    np.testing.assert_allclose(P, [(1 + np.tanh(0.5)) / 2, (1 + np.tanh(0.5)) / 2, 0.5])
    with pytest.raises(ValueError, match="-1, \\+1"):
        model_entropy(np.array([0.0, 1.0]), np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match="same shape"):
        model_entropy(np.array([1.0, -1.0]), np.array([0.1]))
    with pytest.raises(ValueError, match="finite"):
        model_entropy(np.array([1.0, -1.0]), np.array([np.nan, 0.1]))
    with pytest.raises(ValueError, match="base"):
        model_entropy(np.array([1.0, -1.0]), np.array([0.1, 0.1]), base=1.0)
    with pytest.raises(ValueError, match="at least one sample"):
        model_entropy(np.array([]), np.array([]))


def test_l2_model_entropy_binary_is_entropy_of_closed_form_loo():
    X, ypm = make_problem(40, 3, 2)
    y = (ypm > 0).astype(int)
    params = {"kernel": "rbf", "sigma": 1.3, "C": 4.0}
    K = Kernel("rbf", sigma=1.3)(X)
    sol = fit_l2_svm(K, ypm, 4.0)
    expected = model_entropy(ypm, closed_form_loo(sol, K))
    assert l2_model_entropy(X, y, params) == pytest.approx(expected, rel=1e-12)
    # gamma instead of sigma: gamma = 1 / (2 sigma^2)
    params_g = {"kernel": "rbf", "gamma": 1.0 / (2 * 1.3**2), "C": 4.0}
    assert l2_model_entropy(X, y, params_g) == pytest.approx(expected, rel=1e-9)


def test_l2_model_entropy_multiclass_is_mean_over_one_vs_rest():
    rng = np.random.default_rng(3)
    y = np.repeat(np.arange(3), 12)
    X = np.array([[0, 0], [2, 0], [1, 2]])[y] + rng.normal(scale=0.7, size=(36, 2))
    params = {"kernel": "rbf", "sigma": 0.8, "C": 2.0}
    K = Kernel("rbf", sigma=0.8)(X)
    vals = []
    for c in range(3):
        t = np.where(y == c, 1.0, -1.0)
        vals.append(model_entropy(t, closed_form_loo(fit_l2_svm(K, t, 2.0), K)))
    assert l2_model_entropy(X, y, params) == pytest.approx(np.mean(vals), rel=1e-12)


def test_l2_model_entropy_with_weights_and_validation():
    X, ypm = make_problem(30, 2, 4)
    y = (ypm > 0).astype(int)
    w = np.random.default_rng(0).uniform(0.5, 2.0, 30)
    p = {"sigma": 1.0, "C": 1.0}
    e_w = l2_model_entropy(X, y, p, sample_weight=w)
    e_cw = l2_model_entropy(X, y, dict(p, class_weight="balanced"))
    assert 0.0 <= e_w <= 1.0 and 0.0 <= e_cw <= 1.0
    assert e_w != pytest.approx(l2_model_entropy(X, y, p))
    with pytest.raises(ValueError, match="C"):
        l2_model_entropy(X, y, {"sigma": 1.0})
    with pytest.raises(ValueError, match="X must be"):
        l2_model_entropy(X[:10], y, p)


@pytest.mark.parametrize("multiclass", [False, True])
def test_l2_model_entropy_lowrank_path_equals_exact_at_full_rank(multiclass):
    """Above ``max_exact`` the Nystroem path evaluates the same closed forms: with every point
    a landmark it equals the exact entropy; with fewer it stays close."""
    rng = np.random.default_rng(7)
    if multiclass:
        y = np.repeat(np.arange(3), 15)
        X = np.array([[0, 0], [2, 0], [1, 2]])[y] + rng.normal(scale=0.8, size=(45, 2))
    else:
        X, ypm = make_problem(45, 3, 8, noise=0.8)
        y = (ypm > 0).astype(int)
    w = rng.uniform(0.5, 2.0, y.size)
    params = {"kernel": "rbf", "sigma": 1.1, "C": 3.0, "class_weight": "balanced"}
    exact = l2_model_entropy(X, y, params, sample_weight=w)
    full = l2_model_entropy(X, y, params, sample_weight=w, max_exact=0, rank=y.size, rank_tol=1e-12)
    assert full == pytest.approx(exact, abs=1e-6)
    approx = l2_model_entropy(X, y, params, sample_weight=w, max_exact=0, rank=20, rank_tol=0.05)
    assert approx == pytest.approx(exact, abs=0.05)
    with pytest.raises(ValueError, match="RBF"):
        l2_model_entropy(X, y, {"kernel": "linear", "C": 1.0}, max_exact=0)


def test_l2_model_entropy_lowrank_path_leaves_weight_0_rows_out():
    """The Nystroem landmarks are chosen among the samples of positive weight: rows of weight
    0 (outliers here, which a pivoted Cholesky would pick first) are as if removed."""
    rng = np.random.default_rng(3)
    X, ypm = make_problem(40, 2, 5)
    y = (ypm > 0).astype(int)
    junk = rng.normal(scale=30.0, size=(8, 2))
    X_all, y_all = np.vstack([X, junk]), np.r_[y, rng.integers(0, 2, 8)]
    w = np.r_[np.ones(40), np.zeros(8)]
    params = {"kernel": "rbf", "sigma": 1.0, "C": 2.0}
    kw = {"max_exact": 0, "rank": 12, "rank_tol": 1e-3}
    with_rows = l2_model_entropy(X_all, y_all, params, sample_weight=w, **kw)
    assert with_rows == pytest.approx(l2_model_entropy(X, y, params, **kw), rel=1e-9)
