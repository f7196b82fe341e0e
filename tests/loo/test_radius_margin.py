from __future__ import annotations

import numpy as np
import pytest

from svmtune.kernels import rbf_dlogsigma, rbf_from_sqdist, squared_distances
from svmtune.loo.radius_margin import (
    margin_norm2,
    margin_norm2_derivative,
    radius_margin,
)
from svmtune.svm import fit_l2_svm

from ..conftest import make_problem
from .test_sphere import cvxopt_ball


def _tasks(kind: str, n: int, seed: int):
    X, y = make_problem(n, 3, seed)
    if kind == "multiclass":
        yk = np.random.default_rng(seed).integers(0, 3, n)
        return X, [np.where(yk == k, 1.0, -1.0) for k in range(3)]
    return X, [y]


def _evaluate(D2, tasks, theta, w=None, inits=None, ball_init=None):
    sigma, C = np.exp(theta)
    K = rbf_from_sqdist(D2, sigma)
    inits = inits or [None] * len(tasks)
    sols = [fit_l2_svm(K, t, C, sample_weight=w, init_support=s) for t, s in zip(tasks, inits)]
    dirs = [rbf_dlogsigma(K, D2, sigma), -sols[0].H_diag]
    return radius_margin(K, sols, dirs, ball_init=ball_init), sols, K


def test_margin_is_twice_the_dual_objective():
    X, y = make_problem(40, 3, 0)
    K = rbf_from_sqdist(squared_distances(X), 1.1)
    sol = fit_l2_svm(K, y, 2.5)
    H = K + np.diag(sol.H_diag)
    beta = sol.dual_coef
    W = sol.alpha.sum() - 0.5 * beta @ H @ beta
    assert margin_norm2(K, sol) == pytest.approx(2 * W, rel=1e-12)
    # = ||w||^2 in the feature space of K~ = sum alpha (KKT)
    assert margin_norm2(K, sol) == pytest.approx(beta @ H @ beta, rel=1e-8)
    assert margin_norm2(K, sol) == pytest.approx(sol.alpha.sum(), rel=1e-8)


@pytest.mark.parametrize("theta", [(0.3, 0.5), (-0.5, 2.0), (1.5, -1.0), (3.0, 4.0)])
def test_radius_is_the_ball_of_the_ridged_kernel(theta):
    X, tasks = _tasks("binary", 40, 3)
    rm, sols, K = _evaluate(squared_distances(X), tasks, np.asarray(theta))
    Kt = K + np.diag(sols[0].H_diag)
    assert rm.R2 == pytest.approx(cvxopt_ball(Kt), abs=1e-6)
    assert rm.value == pytest.approx(rm.R2 * margin_norm2(K, sols[0]), rel=1e-12)


@pytest.mark.parametrize("kind", ["binary", "weighted", "zero_weight", "multiclass"])
@pytest.mark.parametrize("theta", [(0.3, 0.5), (-0.5, 2.0), (1.5, -1.0), (3.0, 4.0)])
def test_gradient_matches_central_differences(kind, theta):
    n = 45
    X, tasks = _tasks("multiclass" if kind == "multiclass" else "binary", n, 2)
    w = None
    if kind in ("weighted", "zero_weight"):
        w = np.random.default_rng(0).uniform(0.5, 2.0, n)
        if kind == "zero_weight":
            w[[3, 10]] = 0.0
    D2 = squared_distances(X)
    theta = np.asarray(theta)
    rm, sols, _ = _evaluate(D2, tasks, theta, w)
    inits = [s.support for s in sols]
    h = 1e-6
    for j in range(2):
        e = np.zeros(2)
        e[j] = h
        rp, sp, _ = _evaluate(D2, tasks, theta + e, w, inits, rm.ball.support)
        rmn, sm, _ = _evaluate(D2, tasks, theta - e, w, inits, rm.ball.support)
        # both QPs keep their support sets under the perturbation
        for a, b, c in zip(sols, sp, sm):
            assert np.array_equal(a.support, b.support) and np.array_equal(a.support, c.support)
        assert np.array_equal(rp.ball.support, rm.ball.support)
        assert np.array_equal(rmn.ball.support, rm.ball.support)
        fd = (rp.value - rmn.value) / (2 * h)
        assert rm.grad[j] == pytest.approx(fd, rel=1e-5)


def test_multiclass_sums_margins_over_tasks_with_one_sphere():
    X, tasks = _tasks("multiclass", 40, 5)
    rm, sols, K = _evaluate(squared_distances(X), tasks, np.array([0.2, 0.7]))
    assert rm.w2.shape == (3,)
    assert rm.value == pytest.approx(rm.R2 * sum(margin_norm2(K, s) for s in sols))


def test_margin_derivative_directions():
    X, y = make_problem(30, 2, 1)
    K = rbf_from_sqdist(squared_distances(X), 1.0)
    sol = fit_l2_svm(K, y, 2.0)
    # a diagonal direction as a vector equals the same direction as a matrix
    d = -sol.H_diag
    assert margin_norm2_derivative(sol, d) == pytest.approx(
        margin_norm2_derivative(sol, np.diag(d))
    )


def test_invalid_inputs():
    X, y = make_problem(20, 2, 0)
    K = rbf_from_sqdist(squared_distances(X), 1.0)
    with pytest.raises(ValueError, match="at least one"):
        radius_margin(K, [])
    a, b = fit_l2_svm(K, y, 1.0), fit_l2_svm(K, -y, 2.0)
    with pytest.raises(ValueError, match="same ridge"):
        radius_margin(K, [a, b])


def test_degenerate_kernels_give_finite_values():
    X, y = make_problem(20, 2, 0)
    n = len(y)
    for K in (np.eye(n), np.ones((n, n))):  # sigma -> 0 and sigma -> inf
        sol = fit_l2_svm(K, y, 1.0)
        out = radius_margin(K, [sol], [K, -sol.H_diag])
        assert np.isfinite(out.value) and np.all(np.isfinite(out.grad))
    # K = I: every point on the sphere of K~ = 2 I, R^2 = 2 (1 - 1/n)
    sol = fit_l2_svm(np.eye(n), y, 1.0)
    assert radius_margin(np.eye(n), [sol]).R2 == pytest.approx(2 * (1 - 1 / n))


def test_block_directions_equal_full_matrices():
    X, y = make_problem(30, 2, 9)
    D2 = squared_distances(X)
    K = rbf_from_sqdist(D2, 1.1)
    sol = fit_l2_svm(K, y, 2.0)
    dK = rbf_dlogsigma(K, D2, 1.1)
    full = radius_margin(K, [sol], [dK, -sol.H_diag])
    block = radius_margin(K, [sol], [lambda I: dK[np.ix_(I, I)], np.diag(-sol.H_diag)])
    assert np.allclose(full.grad, block.grad, rtol=1e-12)
