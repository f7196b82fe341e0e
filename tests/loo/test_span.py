from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmtune.kernels import rbf_dlogsigma, rbf_from_sqdist, squared_distances
from svmtune.loo import brute_force_loo
from svmtune.loo.span import (
    SPAN_A,
    SPAN_B,
    SPAN_ETA,
    sigmoid_step,
    smoothed_span,
    span_loo_margins,
    span_rule_error,
    span_rule_error_ovr,
    span_squared,
)
from svmtune.svm import fit_l1_svm, fit_l2_svm

from ..conftest import make_problem


def stable_points(K, y, C, sol, w=None):
    """Points whose removal leaves every other point's support status unchanged."""
    n = len(y)
    w = np.ones(n) if w is None else w
    stable = np.ones(n, dtype=bool)
    for p in sol.support_indices:
        keep = np.arange(n) != p
        red = fit_l2_svm(
            K[np.ix_(keep, keep)],
            y[keep],
            C,
            sample_weight=w[keep],
            init_support=np.flatnonzero(sol.support[keep]),
        )
        stable[p] = np.array_equal(red.support, sol.support[keep])
    return stable


CASES = [
    (40, 3, 1, 1.3, 1.6),
    (40, 3, 1, 0.6, 7.4),
    (40, 3, 1, 2.7, 0.37),
    (30, 2, 5, 1.0, 1.0),
    (50, 4, 7, 2.0, 4.0),
    (35, 2, 8, 0.4, 20.0),
]


@pytest.mark.parametrize("n,d,seed,sigma,C", CASES)
def test_span_rule_equals_brute_force_loo_where_stable(n, d, seed, sigma, C):
    X, y = make_problem(n, d, seed)
    K = rbf_from_sqdist(squared_distances(X), sigma)
    sol = fit_l2_svm(K, y, C)
    loo = y * brute_force_loo(K, y, C)
    stable = stable_points(K, y, C, sol)
    assert stable.sum() >= n // 2  # the comparison is not vacuous
    margins = span_loo_margins(sol, K)
    assert np.allclose(margins[stable], loo[stable], atol=1e-7)
    # the step-function span rule counts exactly the brute-force LOO errors on stable points
    S = sol.support_indices
    step = np.zeros(n, dtype=bool)
    step[S] = sol.alpha[S] * span_squared(sol) - 1.0 > 0.0
    assert np.array_equal(step[stable], (loo < 0)[stable])
    if stable.all():
        assert span_rule_error(sol, K) == pytest.approx(np.mean(loo < 0))


def test_span_rule_error_equals_brute_force_error_rate_when_all_stable():
    X, y = make_problem(40, 3, 1)
    K = rbf_from_sqdist(squared_distances(X), np.e)
    C = np.exp(-1.0)
    sol = fit_l2_svm(K, y, C)
    assert stable_points(K, y, C, sol).all()
    loo = y * brute_force_loo(K, y, C)
    assert span_rule_error(sol, K) == pytest.approx(np.mean(loo < 0))
    assert 0 < span_rule_error(sol, K) < 1


def test_span_is_distance_to_affine_hull_of_other_support_vectors():
    """S_p^2 = 1/(M^-1)_pp equals min ||Phi_p - sum_j lam_j Phi_j||^2 over sum lam = 1."""
    X, y = make_problem(25, 2, 3)
    K = rbf_from_sqdist(squared_distances(X), 1.2)
    sol = fit_l2_svm(K, y, 2.0)
    H = K + np.diag(sol.H_diag)
    S = sol.support_indices
    spans = span_squared(sol)
    for k, p in enumerate(S):
        O = S[S != p]
        m = len(O)
        # KKT of min lam' H_OO lam - 2 lam' H_Op + H_pp s.t. 1'lam = 1
        A = np.block([[2 * H[np.ix_(O, O)], np.ones((m, 1))], [np.ones((1, m)), 0.0]])
        lam = np.linalg.solve(A, np.append(2 * H[O, p], 1.0))[:m]
        direct = H[p, p] - 2 * lam @ H[O, p] + lam @ H[np.ix_(O, O)] @ lam
        assert spans[k] == pytest.approx(direct, rel=1e-8)


def test_regularised_span_matches_its_definition():
    """S~_p^2 = 1/((M+D)^-1)_pp - D_pp is min ||Phi_p - sum lam Phi||^2 + eta sum lam^2/alpha."""
    X, y = make_problem(25, 2, 4)
    K = rbf_from_sqdist(squared_distances(X), 0.9)
    sol = fit_l2_svm(K, y, 3.0)
    H = K + np.diag(sol.H_diag)
    eta = 0.3
    out = smoothed_span(K, sol, eta=eta)
    S = sol.support_indices
    for k, p in enumerate(S):
        O = S[S != p]
        m = len(O)
        Q = H[np.ix_(O, O)] + np.diag(eta / sol.alpha[O])
        A = np.block([[2 * Q, np.ones((m, 1))], [np.ones((1, m)), 0.0]])
        lam = np.linalg.solve(A, np.append(2 * H[O, p], 1.0))[:m]
        direct = H[p, p] - 2 * lam @ H[O, p] + lam @ Q @ lam
        assert out.span2[k] == pytest.approx(direct, rel=1e-8)
    # eta = 0 gives back the plain span, sigmoid of alpha S^2 - 1 averaged over all points
    plain = smoothed_span(K, sol, eta=0.0)
    assert np.allclose(plain.span2, span_squared(sol))
    u = np.full(len(y), -1.0)
    u[S] = sol.alpha[S] * span_squared(sol) - 1.0
    assert plain.value == pytest.approx(np.mean(sigmoid_step(u)))


def _objective(D2, y, theta, eta, w=None, init=None):
    sigma, C = np.exp(theta)
    K = rbf_from_sqdist(D2, sigma)
    sol = fit_l2_svm(K, y, C, sample_weight=w, init_support=init)
    dirs = [rbf_dlogsigma(K, D2, sigma), -sol.H_diag]
    return smoothed_span(K, sol, dirs, eta=eta, sample_weight=w), sol


@pytest.mark.parametrize("eta", [SPAN_ETA, 0.0, 1.0])
@pytest.mark.parametrize("theta", [(0.3, 0.5), (-0.5, 2.0), (1.0, -1.0), (2.0, 3.0)])
@pytest.mark.parametrize("weighted", [False, True])
def test_smoothed_span_gradient_matches_central_differences(eta, theta, weighted):
    X, y = make_problem(40, 3, 1)
    D2 = squared_distances(X)
    w = np.random.default_rng(2).uniform(0.5, 2.0, 40) if weighted else None
    theta = np.asarray(theta)
    out, sol = _objective(D2, y, theta, eta, w)
    h = 1e-6
    for j in range(2):
        e = np.zeros(2)
        e[j] = h
        op, sp = _objective(D2, y, theta + e, eta, w, sol.support)
        om, sm = _objective(D2, y, theta - e, eta, w, sol.support)
        # the support set is held fixed by the perturbation (where the gradient is defined)
        assert np.array_equal(sp.support, sol.support) and np.array_equal(sm.support, sol.support)
        fd = (op.value - om.value) / (2 * h)
        assert out.grad[j] == pytest.approx(fd, rel=1e-5, abs=1e-10)


def test_smoothed_span_defaults_and_range():
    assert (SPAN_A, SPAN_B, SPAN_ETA) == (5.0, 0.0, 0.1)
    X, y = make_problem(30, 2, 6)
    K = rbf_from_sqdist(squared_distances(X), 1.0)
    sol = fit_l2_svm(K, y, 1.0)
    v = smoothed_span(K, sol).value
    assert sigmoid_step(np.array([-1.0]))[0] <= v <= 1.0


def test_sigmoid_step_is_stable_for_large_arguments():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sigmoid_step(np.array([-1e6, -1.0, 0.0, 1.0, 1e6]))
    assert out[0] == 0.0 and out[-1] == 1.0 and out[2] == 0.5
    assert out[1] == pytest.approx(1 / (1 + np.exp(5.0)))


def test_ovr_span_rule_matches_brute_force_when_stable():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(36, 2)) + np.repeat(np.array([[0, 0], [2.5, 0], [0, 2.5]]), 12, axis=0)
    yk = np.repeat(np.arange(3), 12)
    K = rbf_from_sqdist(squared_distances(X), 1.5)
    C = 0.37
    sols, loos, all_stable = [], [], True
    for k in range(3):
        t = np.where(yk == k, 1.0, -1.0)
        s = fit_l2_svm(K, t, C)
        sols.append(s)
        loos.append(brute_force_loo(K, t, C))
        all_stable &= bool(stable_points(K, t, C, s).all())
    assert all_stable
    brute = np.mean(np.argmax(np.column_stack(loos), axis=1) != yk)
    assert 0 < brute < 0.5
    assert span_rule_error_ovr(sols, K, yk) == pytest.approx(brute)
    # binary: the same function gives span_rule_error
    t = np.where(yk == 0, 1.0, -1.0)
    assert span_rule_error_ovr([sols[0]], K, (t > 0).astype(int)) == span_rule_error(sols[0], K)


def test_weighted_span_rule_counts_zero_weight_points_by_the_full_model():
    X, y = make_problem(30, 2, 2)
    K = rbf_from_sqdist(squared_distances(X), 1.0)
    w = np.ones(30)
    w[:3] = 0.0
    sol = fit_l2_svm(K, y, 2.0, sample_weight=w)
    assert not sol.support[:3].any()
    m = span_loo_margins(sol, K)
    assert np.allclose(m[:3], y[:3] * sol.decision_function(K)[:3])
    # weighted error rate ignores the zero-weight points
    err_w = span_rule_error(sol, K, sample_weight=w)
    assert err_w == pytest.approx(np.mean(m[3:] < 0))


def test_invalid_inputs():
    X, y = make_problem(20, 2, 0)
    K = rbf_from_sqdist(squared_distances(X), 1.0)
    l1 = fit_l1_svm(y, 1.0, K=K)
    with pytest.raises(ValueError, match="L2-SVM"):
        span_squared(l1)
    sol = fit_l2_svm(K, y, 1.0)
    with pytest.raises(ValueError, match="eta"):
        smoothed_span(K, sol, eta=-1.0)
    with pytest.raises(ValueError, match="slope"):
        smoothed_span(K, sol, A=0.0)
    with pytest.raises(ValueError, match="sample_weight"):
        smoothed_span(K, sol, sample_weight=np.ones(3))


def test_degenerate_kernels_give_finite_values():
    X, y = make_problem(20, 2, 0)
    n = len(y)
    for K in (np.eye(n), np.ones((n, n))):  # sigma -> 0 and sigma -> inf
        sol = fit_l2_svm(K, y, 1.0)
        out = smoothed_span(K, sol, [K, -sol.H_diag])
        assert np.isfinite(out.value) and np.all(np.isfinite(out.grad))
        assert 0.0 <= span_rule_error(sol, K) <= 1.0


def test_block_directions_equal_full_matrices():
    X, y = make_problem(30, 2, 9)
    D2 = squared_distances(X)
    K = rbf_from_sqdist(D2, 1.1)
    sol = fit_l2_svm(K, y, 2.0)
    dK = rbf_dlogsigma(K, D2, 1.1)
    full = smoothed_span(K, sol, [dK, -sol.H_diag])
    block = smoothed_span(K, sol, [lambda I: dK[np.ix_(I, I)], np.diag(-sol.H_diag)])
    assert np.allclose(full.grad, block.grad, rtol=1e-12)


def test_regulariser_makes_the_estimate_continuous_across_a_support_set_change():
    """Chapelle et al.'s point: with eta > 0 a point leaving S changes nothing abruptly."""
    X, y = make_problem(30, 2, 3)
    K = rbf_from_sqdist(squared_distances(X), 1.0)
    a, b = -1.0, 1.0  # log C bracketing a change of the support set
    sa, sb = fit_l2_svm(K, y, np.exp(a)), fit_l2_svm(K, y, np.exp(b))
    assert not np.array_equal(sa.support, sb.support)
    for _ in range(60):  # bisect to the change
        mid = 0.5 * (a + b)
        sm = fit_l2_svm(K, y, np.exp(mid))
        if np.array_equal(sm.support, sa.support):
            a, sa = mid, sm
        else:
            b, sb = mid, sm
    assert b - a < 1e-12 and not np.array_equal(sa.support, sb.support)
    jump_smooth = abs(smoothed_span(K, sa).value - smoothed_span(K, sb).value)
    jump_plain = abs(smoothed_span(K, sa, eta=0.0).value - smoothed_span(K, sb, eta=0.0).value)
    assert jump_smooth < 1e-8
    assert jump_plain > 1e-5
