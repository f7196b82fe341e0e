from __future__ import annotations

import warnings

import numpy as np
import pytest
from cvxopt import matrix, solvers

from svmtune.kernels import Kernel, rbf_dlogsigma, rbf_from_sqdist, squared_distances
from svmtune.loo.sphere import (
    enclosing_ball,
    min_enclosing_ball,
    radius2_derivative,
)

solvers.options["show_progress"] = False
solvers.options["abstol"] = 1e-12
solvers.options["reltol"] = 1e-12
solvers.options["feastol"] = 1e-12


def cvxopt_ball(K):
    """Reference: min b'Kb - diag(K)'b, b >= 0, 1'b = 1 (general QP solver)."""
    n = K.shape[0]
    k = np.diag(K)
    sol = solvers.qp(
        matrix(2.0 * K),
        matrix(-k),
        matrix(-np.eye(n)),
        matrix(np.zeros(n)),
        matrix(np.ones((1, n))),
        matrix(1.0),
    )
    b = np.array(sol["x"]).ravel()
    return float(k @ b - b @ K @ b)


def random_kernel(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 60))
    d = int(rng.integers(1, 5))
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, size=d)
    kind = seed % 5
    if kind == 0:  # RBF
        return Kernel("rbf", sigma=2.0 ** rng.uniform(-3, 4))(X)
    if kind == 1:  # linear: singular for n > d
        return X @ X.T
    if kind == 2:  # duplicated points
        X[n // 2 :] = X[: n - n // 2]
        return Kernel("rbf", sigma=2.0 ** rng.uniform(-2, 3))(X)
    if kind == 3:  # L2-SVM kernel K + I/C, the radius-margin use
        return Kernel("rbf", sigma=2.0 ** rng.uniform(-3, 8))(X) + np.eye(n) / 2 ** rng.uniform(
            -8, 8
        )
    return Kernel("poly", degree=2, gamma=0.5, coef0=1.0)(X)


def check_kkt(K, R2, beta, tol=1e-8):
    assert np.all(beta >= 0)
    assert beta.sum() == pytest.approx(1.0, abs=1e-12)
    Kb = K @ beta
    dist2 = np.diag(K) - 2 * Kb + beta @ Kb  # squared distances to the centre
    scale = max(1.0, np.abs(np.diag(K)).max())
    assert np.all(dist2 <= R2 + tol * scale)
    on = beta > 0
    assert np.allclose(dist2[on], R2, atol=1e-7 * scale)


@pytest.mark.parametrize("seed", range(40))
def test_radius_matches_cvxopt(seed):
    K = random_kernel(seed)
    R2, beta = min_enclosing_ball(K)
    ref = cvxopt_ball(K)
    assert R2 == pytest.approx(ref, abs=1e-6 * max(1.0, abs(ref)))
    check_kkt(K, R2, beta)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5, 6, 7])
def test_clarabel_fallback_matches_cvxopt(seed):
    K = random_kernel(seed)
    sol = enclosing_ball(K, max_iter=0)  # no Newton iteration: straight to the fallback
    assert sol.method == "clarabel"
    ref = cvxopt_ball(K)
    assert sol.R2 == pytest.approx(ref, abs=1e-6 * max(1.0, abs(ref)))
    check_kkt(K, sol.R2, sol.beta, tol=1e-7)


def test_warm_start_reaches_same_ball_in_one_step():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 3))
    D2 = squared_distances(X)
    K1 = rbf_from_sqdist(D2, 1.5) + 0.1 * np.eye(80)
    K2 = rbf_from_sqdist(D2, 1.5 * 1.001) + 0.1 * np.eye(80)
    cold = enclosing_ball(K2)
    warm = enclosing_ball(K2, init_support=enclosing_ball(K1).support)
    assert warm.R2 == pytest.approx(cold.R2, rel=1e-12)
    assert np.array_equal(warm.support, cold.support)
    assert warm.n_iter == 1


def test_degenerate_kernels():
    n = 7
    # sigma -> 0: K = I, every point on the sphere
    R2, beta = min_enclosing_ball(np.eye(n))
    assert R2 == pytest.approx(1 - 1 / n)
    assert np.allclose(beta, 1 / n)
    # sigma -> inf: K = 11^T, all points coincide
    R2, beta = min_enclosing_ball(np.ones((n, n)))
    assert R2 == pytest.approx(0.0, abs=1e-12)
    assert np.all(np.isfinite(beta)) and beta.sum() == pytest.approx(1.0)
    # one point
    R2, beta = min_enclosing_ball(np.array([[2.0]]))
    assert R2 == 0.0 and beta.tolist() == [1.0]
    # two points at distance^2 = 2 (K = I of size 2): R^2 = 1/2
    assert min_enclosing_ball(np.eye(2))[0] == pytest.approx(0.5)


def test_duplicates_give_no_warning_or_nan():
    X = np.repeat(np.random.default_rng(0).normal(size=(5, 2)), 4, axis=0)
    K = Kernel("rbf", sigma=1.0)(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        R2, beta = min_enclosing_ball(K)
    assert np.isfinite(R2) and np.all(np.isfinite(beta))
    assert R2 == pytest.approx(cvxopt_ball(K), abs=1e-6)


def test_invalid_inputs():
    with pytest.raises(ValueError, match="square"):
        min_enclosing_ball(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        min_enclosing_ball(np.array([[1.0, np.nan], [np.nan, 1.0]]))
    with pytest.raises(ValueError, match="at least one"):
        min_enclosing_ball(np.zeros((0, 0)))


@pytest.mark.parametrize("sigma,ridge", [(0.7, 0.0), (1.3, 0.25), (4.0, 0.05)])
def test_radius_derivative_matches_finite_differences(sigma, ridge):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 3))
    D2 = squared_distances(X)
    n = X.shape[0]

    def ball(ls, lr, init=None):
        K = rbf_from_sqdist(D2, np.exp(ls)) + np.exp(lr) * np.eye(n)
        return enclosing_ball(K, init_support=init)

    ls0, lr0 = np.log(sigma), np.log(ridge) if ridge > 0 else -np.inf
    b0 = ball(ls0, lr0)
    K0 = rbf_from_sqdist(D2, sigma)
    g_sigma = radius2_derivative(b0.beta, rbf_dlogsigma(K0, D2, sigma))
    h = 1e-5
    bp, bm = ball(ls0 + h, lr0, b0.support), ball(ls0 - h, lr0, b0.support)
    assert np.array_equal(bp.support, b0.support) and np.array_equal(bm.support, b0.support)
    fd = (bp.R2 - bm.R2) / (2 * h)
    assert g_sigma == pytest.approx(fd, rel=1e-5, abs=1e-9)
    if ridge > 0:  # diagonal direction d(K + r I)/d log r = r I, given as a vector
        g_r = radius2_derivative(b0.beta, np.full(n, ridge))
        bp, bm = ball(ls0, lr0 + h, b0.support), ball(ls0, lr0 - h, b0.support)
        assert np.array_equal(bp.support, b0.support)
        fd = (bp.R2 - bm.R2) / (2 * h)
        assert g_r == pytest.approx(fd, rel=1e-5)
        # adding r I moves every squared distance by r (1 - 2 beta_i + |beta|^2)
        assert g_r == pytest.approx(ridge * (1 - b0.beta @ b0.beta))


def test_ridge_argument_is_the_ball_of_the_ridged_matrix():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2))
    K = Kernel("rbf", sigma=1.0)(X)
    r = rng.uniform(0.01, 0.5, 30)
    a = enclosing_ball(K, ridge=r)
    b = enclosing_ball(K + np.diag(r))
    assert a.R2 == pytest.approx(b.R2, rel=1e-12)
    assert np.allclose(a.beta, b.beta, atol=1e-12)
    c = enclosing_ball(K, ridge=r, max_iter=0)  # fallback path with a ridge
    assert c.R2 == pytest.approx(cvxopt_ball(K + np.diag(r)), abs=1e-6)
    with pytest.raises(ValueError, match="ridge"):
        enclosing_ball(K, ridge=-r)


def test_direction_forms_agree():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(25, 2))
    D2 = squared_distances(X)
    K = rbf_from_sqdist(D2, 1.3)
    dK = rbf_dlogsigma(K, D2, 1.3)
    _, beta = min_enclosing_ball(K + 0.2 * np.eye(25))
    full = radius2_derivative(beta, dK)
    block = radius2_derivative(beta, lambda I: dK[np.ix_(I, I)])
    assert block == pytest.approx(full, rel=1e-14)
    d = rng.uniform(size=25)
    assert radius2_derivative(beta, d) == pytest.approx(radius2_derivative(beta, np.diag(d)))
    with pytest.raises(ValueError, match="shape"):
        radius2_derivative(beta, lambda I: np.zeros((1, 1)))
