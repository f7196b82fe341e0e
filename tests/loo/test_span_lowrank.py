"""Low-rank smoothed span: equality with the exact estimate at full rank, exact gradient."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

from svmtune.kernels import rbf_dlogsigma, rbf_from_sqdist, squared_distances
from svmtune.loo.span import SPAN_ETA, smoothed_span, span_rule_error_ovr
from svmtune.loo.span_lowrank import (
    LowRankSpanObjective,
    lowrank_smoothed_span,
    lowrank_span_objective,
    lowrank_span_rule_error,
)
from svmtune.lowrank import fit_l2_svm_lowrank, nystroem_factor, pivoted_cholesky_landmarks
from svmtune.svm import fit_l2_svm

from ..conftest import make_problem


def _weights(n, seed=2):
    return np.random.default_rng(seed).uniform(0.5, 2.0, n)


def _three_class_tasks(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    yk = np.digitize(X[:, 0] + 0.4 * rng.normal(size=n), [-0.4, 0.4])
    return X, yk, [np.where(yk == k, 1.0, -1.0) for k in range(3)]


def _exact(D2, tasks, theta, eta, w):
    """Sum over tasks of the exact smoothed span and its gradient, with the solutions."""
    sigma, C = np.exp(theta)
    K = rbf_from_sqdist(D2, sigma)
    value, grad, sols = 0.0, np.zeros(2), []
    for t in tasks:
        sol = fit_l2_svm(K, t, C, sample_weight=w)
        out = smoothed_span(
            K, sol, [rbf_dlogsigma(K, D2, sigma), -sol.H_diag], eta=eta, sample_weight=w
        )
        value += out.value
        grad += out.grad
        sols.append(sol)
    return value, grad, sols, K


# ---------------------------------------------------------------------------------------------
# (a) every point a landmark: the exact smoothed span
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eta", [SPAN_ETA, 0.0, 1.0])
@pytest.mark.parametrize("theta", [(0.3, 0.5), (-0.5, 2.0), (1.0, -1.0), (2.0, 3.0)])
@pytest.mark.parametrize("weighted", [False, True])
def test_full_rank_equals_exact_smoothed_span_binary(eta, theta, weighted):
    X, y = make_problem(40, 3, 1)
    D2 = squared_distances(X)
    w = _weights(40) if weighted else None
    sigma, C = np.exp(theta)
    K = rbf_from_sqdist(D2, sigma)
    ex = fit_l2_svm(K, y, C, sample_weight=w)
    ref = smoothed_span(K, ex, [rbf_dlogsigma(K, D2, sigma), -ex.H_diag], eta=eta, sample_weight=w)
    nf = nystroem_factor(D2, D2, sigma, jitter=0.0)  # rank n
    lo = fit_l2_svm_lowrank(nf.Z, y, C, sample_weight=w)
    assert np.array_equal(lo.support, ex.support)
    out = lowrank_smoothed_span(nf, lo, eta=eta, sample_weight=w)
    assert abs(out.value - ref.value) <= 1e-6
    np.testing.assert_allclose(out.grad, ref.grad, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(out.span2, ref.span2, rtol=1e-6, atol=1e-8)
    # the span-rule (step-function) estimate, too
    yk = (y > 0).astype(int)
    assert lowrank_span_rule_error([lo], nf.Z, yk, w) == span_rule_error_ovr([ex], K, yk, w)


@pytest.mark.parametrize("weighted", [False, True])
def test_full_rank_equals_exact_smoothed_span_one_vs_rest(weighted):
    X, yk, tasks = _three_class_tasks(45, 3)
    D2 = squared_distances(X)
    w = _weights(45, 5) if weighted else None
    theta = np.log([1.2, 4.0])
    value, grad, sols, K = _exact(D2, tasks, theta, SPAN_ETA, w)
    # all points as landmarks through the rank rule (tiny tolerance, rank cap n)
    idx, resid = pivoted_cholesky_landmarks(X, 1.2, tol=1e-14, max_rank=45)
    assert idx.size == 45 and resid < 1e-10
    D2_nm = squared_distances(X, X[idx])
    obj = lowrank_span_objective(D2_nm, D2_nm[idx], tasks, theta, sample_weight=w, jitter=0.0)
    assert isinstance(obj, LowRankSpanObjective) and len(obj.solutions) == 3
    assert abs(obj.value - value) <= 1e-6
    np.testing.assert_allclose(obj.grad, grad, rtol=1e-6, atol=1e-8)
    assert lowrank_span_rule_error(obj.solutions, obj.Z, yk, w) == pytest.approx(
        span_rule_error_ovr(sols, K, yk, w)
    )
    # without the gradient: same value
    plain = lowrank_span_objective(
        D2_nm, D2_nm[idx], tasks, theta, sample_weight=w, jitter=0.0, gradient=False
    )
    assert plain.grad is None and plain.value == pytest.approx(obj.value, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# (b) the exact gradient at a rank < n (support set held fixed)
# ---------------------------------------------------------------------------------------------
def _check_fd(D2_nm, D2_mm, tasks, theta, eta, w, h=1e-6):
    theta = np.asarray(theta, dtype=float)
    obj = lowrank_span_objective(D2_nm, D2_mm, tasks, theta, eta=eta, sample_weight=w)
    worst = 0.0
    for k in range(2):
        e = np.zeros(2)
        e[k] = h
        a = lowrank_span_objective(
            D2_nm, D2_mm, tasks, theta + e, eta=eta, sample_weight=w, init_support=obj.supports
        )
        b = lowrank_span_objective(
            D2_nm, D2_mm, tasks, theta - e, eta=eta, sample_weight=w, init_support=obj.supports
        )
        for sa, sb, s0 in zip(a.supports, b.supports, obj.supports):
            # the support set is held fixed by the perturbation (where the gradient is defined)
            assert np.array_equal(sa, s0) and np.array_equal(sb, s0)
        fd = (a.value - b.value) / (2 * h)
        err = abs(obj.grad[k] - fd) / max(abs(fd), 1e-4)
        assert err <= 1e-5, (k, obj.grad[k], fd)
        worst = max(worst, err)
    return worst


@pytest.mark.parametrize("eta", [SPAN_ETA, 0.0, 1.0])
@pytest.mark.parametrize("theta", [(0.3, 0.5), (-0.5, 2.0), (1.0, -1.0), (2.0, 3.0)])
@pytest.mark.parametrize("weighted", [False, True])
def test_gradient_equals_central_differences_at_low_rank(eta, theta, weighted):
    X, y = make_problem(60, 3, 6)
    idx, _ = pivoted_cholesky_landmarks(X, 1.0, tol=1e-6, max_rank=9)
    assert idx.size == 9  # rank < n
    D2_nm = squared_distances(X, X[idx])
    w = _weights(60, 1) if weighted else None
    _check_fd(D2_nm, D2_nm[idx], [y], theta, eta, w)


def test_gradient_equals_central_differences_one_vs_rest_weighted():
    X, _, tasks = _three_class_tasks(70, 4)
    idx, _ = pivoted_cholesky_landmarks(X, 0.8, tol=1e-6, max_rank=12)
    D2_nm = squared_distances(X, X[idx])
    _check_fd(D2_nm, D2_nm[idx], tasks, (np.log(0.8), 1.0), SPAN_ETA, _weights(70, 3))


# ---------------------------------------------------------------------------------------------
# cost, robustness and validation
# ---------------------------------------------------------------------------------------------
def test_memory_is_order_n_m():
    """n = 20,000 and m = 5: an n x n (or support x support) float64 matrix needs ~3 GB."""
    rng = np.random.default_rng(10)
    n, m = 20_000, 5
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    tracemalloc.start()
    try:
        idx, _ = pivoted_cholesky_landmarks(X, 1.0, tol=1e-9, max_rank=m)
        D2_nm = squared_distances(X, X[idx])
        obj = lowrank_span_objective(D2_nm, D2_nm[idx], [y], np.log([1.0, 1.0]))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert obj.n_support > n // 10  # many support vectors: an |S| x |S| matrix would show
    assert np.isfinite(obj.value) and np.all(np.isfinite(obj.grad))
    assert peak < 60 * n * m * 8


def test_degenerate_kernels_stay_finite():
    X, y = make_problem(30, 2, 9)
    X = np.vstack([X, X[:5]])  # duplicates
    y = np.concatenate([y, y[:5]])
    for sigma in (1e-4, 1e4):  # K -> I and K -> 11^T
        idx, _ = pivoted_cholesky_landmarks(X, sigma, tol=1e-6, max_rank=20)
        D2_nm = squared_distances(X, X[idx])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            obj = lowrank_span_objective(D2_nm, D2_nm[idx], [y], np.log([sigma, 1.0]))
        assert np.isfinite(obj.value) and np.all(np.isfinite(obj.grad))
        assert 0.0 < obj.value < 1.0


def test_invalid_inputs():
    X, y = make_problem(20, 2, 0)
    D2 = squared_distances(X)
    nf = nystroem_factor(D2[:, :5], D2[:5, :5], 1.0)
    sol = fit_l2_svm_lowrank(nf.Z, y, 1.0)
    exact = fit_l2_svm(rbf_from_sqdist(D2, 1.0), y, 1.0)
    with pytest.raises(ValueError, match="fit_l2_svm_lowrank"):
        lowrank_smoothed_span(nf, exact)
    with pytest.raises(ValueError, match="fit_l2_svm_lowrank"):
        lowrank_span_rule_error([exact], nf.Z, (y > 0).astype(int))
    with pytest.raises(ValueError, match="rows"):
        lowrank_smoothed_span(nystroem_factor(D2[:10, :5], D2[:5, :5], 1.0), sol)
    with pytest.raises(ValueError, match="eta"):
        lowrank_smoothed_span(nf, sol, eta=-1.0)
    with pytest.raises(ValueError, match="slope"):
        lowrank_smoothed_span(nf, sol, A=0.0)
    with pytest.raises(ValueError, match="offset"):
        lowrank_smoothed_span(nf, sol, B=np.nan)
    with pytest.raises(ValueError, match="sample_weight"):
        lowrank_smoothed_span(nf, sol, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="sample_weight"):
        lowrank_smoothed_span(nf, sol, sample_weight=np.zeros(20))
    D2_nm, D2_mm = D2[:, :5], D2[:5, :5]
    with pytest.raises(ValueError, match="theta"):
        lowrank_span_objective(D2_nm, D2_mm, [y], [0.0])
    with pytest.raises(ValueError, match="theta"):
        lowrank_span_objective(D2_nm, D2_mm, [y], [np.inf, 0.0])
    with pytest.raises(ValueError, match="init_support"):
        lowrank_span_objective(D2_nm, D2_mm, [y], [0.0, 0.0], init_support=[None, None])
    with pytest.raises(ValueError, match="task"):
        lowrank_span_objective(D2_nm, D2_mm, [], [0.0, 0.0])
    with pytest.raises(ValueError, match="eta"):
        lowrank_span_objective(D2_nm, D2_mm, [y], [0.0, 0.0], eta=np.nan)
