"""Radius-margin bound on a Nystroem kernel: ball, value at full rank, exact gradient."""

from __future__ import annotations

import numpy as np
import pytest

from svmtune.kernels import rbf_dlogsigma, rbf_from_sqdist, squared_distances
from svmtune.loo.radius_margin import radius_margin
from svmtune.loo.radius_margin_lowrank import (
    lowrank_enclosing_ball,
    lowrank_margin_norm2,
    lowrank_radius_margin,
    lowrank_radius_margin_objective,
)
from svmtune.loo.sphere import enclosing_ball
from svmtune.lowrank import fit_l2_svm_lowrank, nystroem_factor, pivoted_cholesky_landmarks
from svmtune.svm import fit_l2_svm

from ..conftest import make_problem
from .test_sphere import cvxopt_ball


def _features(seed: int, n: int, m: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, m)) * rng.uniform(0.3, 3.0, size=m)


def _ridge(kind: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(100 + seed)
    if kind == "zero":
        return np.zeros(n)
    if kind == "random":
        return rng.uniform(0.01, 1.0, n)
    if kind == "large":  # the ridge dominates: many points on the sphere
        return np.full(n, 10.0)
    # half the points without ridge (bordered block of the support system)
    return np.where(rng.random(n) < 0.5, 0.0, rng.uniform(0.01, 1.0, n))


# --------------------------------------------------------------------------------------------
# (a) the ball
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["zero", "random", "large", "mixed"])
@pytest.mark.parametrize("shape", [(60, 4), (35, 2), (25, 8), (12, 20)])
def test_ball_equals_dense_enclosing_ball(kind, shape):
    n, m = shape
    seed = n + m
    Z = _features(seed, n, m)
    r = _ridge(kind, n, seed)
    lo = lowrank_enclosing_ball(Z, r)
    ex = enclosing_ball(Z @ Z.T, ridge=r)
    assert lo.method == "newton"
    assert lo.R2 == pytest.approx(ex.R2, abs=1e-8)
    assert np.abs(lo.beta - ex.beta).max() <= 1e-8
    assert np.array_equal(lo.support, lo.beta > 0)


@pytest.mark.parametrize("kind", ["zero", "random", "mixed"])
def test_ball_matches_a_general_qp_solver(kind):
    Z = _features(7, 30, 3)
    r = _ridge(kind, 30, 7)
    lo = lowrank_enclosing_ball(Z, r)
    ref = cvxopt_ball(Z @ Z.T + np.diag(r))
    assert lo.R2 == pytest.approx(ref, abs=1e-7 * max(1.0, ref))
    # KKT: every point inside the ball, the support on the sphere
    K = Z @ Z.T + np.diag(r)
    Kb = K @ lo.beta
    dist2 = np.diag(K) - 2 * Kb + lo.beta @ Kb
    assert np.all(dist2 <= lo.R2 + 1e-9 * np.diag(K).max())
    assert np.allclose(dist2[lo.support], lo.R2, atol=1e-9 * np.diag(K).max())
    assert lo.beta.min() >= 0 and lo.beta.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("kind", ["zero", "random"])
def test_fallback_equals_dense_ball(kind):
    Z = _features(3, 40, 3)
    r = _ridge(kind, 40, 3)
    lo = lowrank_enclosing_ball(Z, r, max_iter=0)  # straight to the clarabel fallback
    assert lo.method == "clarabel"
    ex = enclosing_ball(Z @ Z.T, ridge=r)
    assert lo.R2 == pytest.approx(ex.R2, abs=1e-8)
    assert np.abs(lo.beta - ex.beta).max() <= 1e-8


def test_duplicated_points_and_coinciding_points():
    Z = _features(5, 20, 3)
    Z = np.vstack([Z, Z])
    for r in (np.zeros(40), np.full(40, 1e-5), np.full(40, 0.3)):
        lo = lowrank_enclosing_ball(Z, r)
        assert lo.R2 == pytest.approx(cvxopt_ball(Z @ Z.T + np.diag(r)), abs=1e-7)
        assert np.all(np.isfinite(lo.beta)) and lo.beta.sum() == pytest.approx(1.0)
    # all points equal: R = 0 (K~ = 11^T), or the ridge alone (K~ = 11^T + r I)
    assert lowrank_enclosing_ball(np.ones((8, 2))).R2 == pytest.approx(0.0, abs=1e-12)
    assert lowrank_enclosing_ball(np.ones((8, 2)), np.full(8, 0.5)).R2 == pytest.approx(
        0.5 * (1 - 1 / 8)
    )
    one = lowrank_enclosing_ball(np.ones((1, 3)))
    assert one.R2 == 0.0 and one.beta.tolist() == [1.0] and one.method == "trivial"


def test_warm_start_reaches_same_ball_in_one_step():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    idx, _ = pivoted_cholesky_landmarks(X, 1.5, max_rank=25)
    D2 = squared_distances(X, X[idx])
    Z1 = nystroem_factor(D2, D2[idx], 1.5).Z
    Z2 = nystroem_factor(D2, D2[idx], 1.5 * 1.001).Z
    r = np.full(300, 0.1)
    cold = lowrank_enclosing_ball(Z2, r)
    warm = lowrank_enclosing_ball(Z2, r, init_support=lowrank_enclosing_ball(Z1, r).support)
    assert warm.R2 == pytest.approx(cold.R2, rel=1e-12)
    assert np.array_equal(warm.support, cold.support)
    assert warm.n_iter == 1 < cold.n_iter


# --------------------------------------------------------------------------------------------
# (b) equal to the exact bound when every point is a landmark
# --------------------------------------------------------------------------------------------
def _tasks(kind: str, n: int, seed: int):
    X, y = make_problem(n, 3, seed)
    if kind == "multiclass":
        yk = np.random.default_rng(seed).integers(0, 3, n)
        return X, [np.where(yk == k, 1.0, -1.0) for k in range(3)]
    return X, [y]


def _weights(kind: str, n: int):
    if kind in ("weighted", "zero_weight"):
        w = np.random.default_rng(0).uniform(0.5, 2.0, n)
        if kind == "zero_weight":
            w[[3, 10]] = 0.0
        return w
    return None


@pytest.mark.parametrize("kind", ["binary", "weighted", "zero_weight", "multiclass"])
@pytest.mark.parametrize("theta", [(0.3, 0.5), (-0.5, 2.0), (1.0, -1.0)])
def test_full_rank_equals_exact_radius_margin(kind, theta):
    n = 45
    X, tasks = _tasks("multiclass" if kind == "multiclass" else "binary", n, 2)
    w = _weights(kind, n)
    D2 = squared_distances(X)
    sigma, C = np.exp(theta)
    K = rbf_from_sqdist(D2, sigma)
    sols = [fit_l2_svm(K, t, C, sample_weight=w) for t in tasks]
    ex = radius_margin(K, sols, [rbf_dlogsigma(K, D2, sigma), -sols[0].H_diag])
    # every point a landmark, no jitter: K~ = K up to round-off
    lo = lowrank_radius_margin_objective(D2, D2, tasks, theta, sample_weight=w, jitter=0.0)
    assert lo.jitter == 0.0 and lo.rank == n
    assert lo.value == pytest.approx(ex.value, rel=1e-6)
    assert lo.R2 == pytest.approx(ex.R2, rel=1e-6)
    assert np.allclose(lo.w2, ex.w2, rtol=1e-6)
    assert np.allclose(lo.grad, ex.grad, rtol=1e-6)
    assert len(lo.solutions) == len(tasks) and lo.n_support >= 2


def test_margin_is_twice_the_dual_objective():
    X, y = make_problem(80, 3, 0)
    idx, _ = pivoted_cholesky_landmarks(X, 1.1, max_rank=15)
    D2 = squared_distances(X, X[idx])
    nf = nystroem_factor(D2, D2[idx], 1.1)
    sol = fit_l2_svm_lowrank(nf.Z, y, 2.5)
    H = nf.Z @ nf.Z.T + np.diag(sol.H_diag)
    beta = sol.dual_coef
    assert lowrank_margin_norm2(nf.Z, sol) == pytest.approx(2 * sol.alpha.sum() - beta @ H @ beta)
    assert lowrank_margin_norm2(nf.Z, sol) == pytest.approx(sol.alpha.sum(), rel=1e-8)


# --------------------------------------------------------------------------------------------
# (c) exact gradient at a rank < n
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["binary", "zero_weight", "multiclass"])
@pytest.mark.parametrize("theta", [(0.3, 0.5), (-0.5, 2.0), (1.0, -1.0), (0.0, 4.0)])
def test_gradient_matches_central_differences_at_low_rank(kind, theta):
    n = 60
    X, tasks = _tasks("multiclass" if kind == "multiclass" else "binary", n, 2)
    w = _weights("weighted" if kind == "multiclass" else kind, n)
    idx, _ = pivoted_cholesky_landmarks(X, 1.0, max_rank=12)
    assert idx.size == 12 < n
    D2_nm = squared_distances(X, X[idx])
    D2_mm = D2_nm[idx]
    theta = np.asarray(theta, dtype=float)
    obj = lowrank_radius_margin_objective(D2_nm, D2_mm, tasks, theta, sample_weight=w)
    assert obj.ball.method == "newton"
    h = 1e-6
    for j in range(2):
        e = np.zeros(2)
        e[j] = h
        kw = dict(
            sample_weight=w,
            init_support=obj.supports,
            ball_init=obj.ball.support,
            gradient=False,
        )
        p = lowrank_radius_margin_objective(D2_nm, D2_mm, tasks, theta + e, **kw)
        m = lowrank_radius_margin_objective(D2_nm, D2_mm, tasks, theta - e, **kw)
        # both QPs keep their support sets under the perturbation
        for a, b, c in zip(obj.solutions, p.solutions, m.solutions):
            assert np.array_equal(a.support, b.support) and np.array_equal(a.support, c.support)
        assert np.array_equal(p.ball.support, obj.ball.support)
        assert np.array_equal(m.ball.support, obj.ball.support)
        assert p.grad is None
        fd = (p.value - m.value) / (2 * h)
        assert obj.grad[j] == pytest.approx(fd, rel=1e-5)


def test_multiclass_sums_margins_over_tasks_with_one_sphere():
    X, tasks = _tasks("multiclass", 50, 5)
    idx, _ = pivoted_cholesky_landmarks(X, 1.2, max_rank=10)
    D2 = squared_distances(X, X[idx])
    nf = nystroem_factor(D2, D2[idx], 1.2)
    sols = [fit_l2_svm_lowrank(nf.Z, t, 2.0) for t in tasks]
    rm = lowrank_radius_margin(nf, sols)
    assert rm.w2.shape == (3,) and rm.grad.shape == (2,)
    assert rm.value == pytest.approx(rm.R2 * sum(lowrank_margin_norm2(nf.Z, s) for s in sols))
    assert rm.R2 == pytest.approx(lowrank_enclosing_ball(nf.Z, sols[0].H_diag).R2, rel=1e-12)
    assert lowrank_radius_margin(nf, sols, gradient=False).grad.shape == (0,)


# --------------------------------------------------------------------------------------------
# (d) validation
# --------------------------------------------------------------------------------------------
def test_invalid_inputs():
    Z = _features(0, 10, 2)
    with pytest.raises(ValueError, match="non-empty"):
        lowrank_enclosing_ball(np.ones(5))
    with pytest.raises(ValueError, match="non-empty"):
        lowrank_enclosing_ball(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="NaN"):
        lowrank_enclosing_ball(np.full((3, 2), np.nan))
    for bad in (np.full(10, -1.0), np.ones(9), np.full(10, np.inf)):
        with pytest.raises(ValueError, match="ridge"):
            lowrank_enclosing_ball(Z, bad)
    with pytest.raises(ValueError, match="max_iter"):
        lowrank_enclosing_ball(Z, max_iter=-1)
    with pytest.raises(ValueError, match="tol"):
        lowrank_enclosing_ball(Z, tol=0.0)

    X, y = make_problem(20, 2, 0)
    D2 = squared_distances(X, X[:5])
    nf = nystroem_factor(D2, D2[:5], 1.0)
    with pytest.raises(ValueError, match="at least one"):
        lowrank_radius_margin(nf, [])
    a, b = fit_l2_svm_lowrank(nf.Z, y, 1.0), fit_l2_svm_lowrank(nf.Z, -y, 2.0)
    with pytest.raises(ValueError, match="same ridge"):
        lowrank_radius_margin(nf, [a, b])
    other = fit_l2_svm_lowrank(nf.Z[:15], y[:15], 1.0)
    with pytest.raises(ValueError, match="15 points"):
        lowrank_radius_margin(nf, [other])
    with pytest.raises(ValueError, match="theta"):
        lowrank_radius_margin_objective(D2, D2[:5], [y], (np.nan, 0.0))
    with pytest.raises(ValueError, match="one entry per task"):
        lowrank_radius_margin_objective(D2, D2[:5], [y], (0.0, 0.0), init_support=[None, None])
    with pytest.raises(ValueError, match="labels"):
        lowrank_radius_margin_objective(D2, D2[:5], [y[:10]], (0.0, 0.0))
    with pytest.raises(ValueError, match="at least one task"):
        lowrank_radius_margin_objective(D2, D2[:5], [], (0.0, 0.0))
