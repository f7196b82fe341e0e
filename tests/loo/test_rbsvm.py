"""Closed-form LOO (RBSVM eq. (27)), its loss and exact gradient against their definitions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import svmtune.loo.rbsvm as rbsvm_module
from svmtune._loo_losses import loo_loss
from svmtune.kernels import rbf_from_sqdist, squared_distances
from svmtune.loo.brute import brute_force_loo
from svmtune.loo.closed_form import closed_form_loo, loo_error_rate, loo_exact_mask, loo_predictions
from svmtune.loo.decremental import decremental_loo
from svmtune.loo.rbsvm import rbsvm_objective
from svmtune.loo.rbsvm_gradient import loo_gradient, rbf_l2_derivatives
from svmtune.methods.base import ovr_tasks
from svmtune.svm import fit_l1_svm, fit_l2_svm

from ..conftest import make_problem


def _stable_points(K, y, C, full, w=None):
    """Indices whose removal leaves every other point's support status unchanged (brute force)."""
    n = len(y)
    w = np.ones(n) if w is None else w
    stable = []
    for i in range(n):
        keep = np.arange(n) != i
        sol = fit_l2_svm(K[np.ix_(keep, keep)], y[keep], C, sample_weight=w[keep])
        if np.array_equal(sol.support, full.support[keep]):
            stable.append(i)
    return np.array(stable, dtype=int)


@pytest.mark.parametrize(
    "seed, sigma, C, weighted",
    [(0, 1.0, 1.0, False), (1, 0.7, 10.0, False), (2, 2.0, 0.3, False), (3, 1.2, 4.0, True)],
)
def test_closed_form_equals_brute_force_where_support_is_stable(seed, sigma, C, weighted):
    X, y = make_problem(30, 2, seed)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, 30) if weighted else None
    K = rbf_from_sqdist(squared_distances(X), sigma)
    sol = fit_l2_svm(K, y, C, sample_weight=w)
    r = closed_form_loo(sol, K)
    stable = _stable_points(K, y, C, sol, w)
    stable_sv = np.intersect1d(stable, np.flatnonzero(sol.support))
    assert stable_sv.size >= 5  # the comparison must cover support vectors
    ref = brute_force_loo(K, y, C, sample_weight=w, indices=stable)
    np.testing.assert_allclose(r[stable], ref, atol=1e-6, rtol=0)
    # the closed-form KKT certificate finds exactly the stable points, without retraining
    np.testing.assert_array_equal(np.flatnonzero(loo_exact_mask(sol, K)), stable)


def test_non_support_vectors_get_the_full_model_output():
    X, y = make_problem(40, 2, 5, noise=0.1)
    K = rbf_from_sqdist(squared_distances(X), 1.0)
    sol = fit_l2_svm(K, y, 5.0)
    N = np.flatnonzero(~sol.support)
    assert N.size > 0
    r = closed_form_loo(sol, K)
    np.testing.assert_allclose(r[N], sol.decision_function(K)[N], atol=1e-10)
    np.testing.assert_allclose(r[N], brute_force_loo(K, y, 5.0, indices=N), atol=1e-8)


def test_support_vector_form_is_eq27_with_extended_inverse():
    X, y = make_problem(25, 3, 6)
    K = rbf_from_sqdist(squared_distances(X), 1.5)
    sol = fit_l2_svm(K, y, 2.0)
    S = np.flatnonzero(sol.support)
    d = sol.factor.inverse_diagonal()
    r = closed_form_loo(sol, K)
    np.testing.assert_allclose(r[S], y[S] * (1.0 - sol.alpha[S] / d), atol=1e-7)
    # the same through the full inverse
    np.testing.assert_allclose(closed_form_loo(sol, K, inverse=sol.factor.inverse()), r)


def test_loo_error_counts_agree_with_brute_force_on_100_random_problems():
    """Closed-form (RBSVM eq. (27)) and brute-force LOO error counts of 100 random small problems.

    Eq. (27) is an estimate wherever removing a point changes the support set, and on this
    family of problems (n = 15..30, sigma in [2^-1.5, 2^2], C in [2^-3, 2^5]; fixed before
    looking at the outcome) the counts agree on 91 of 100; the bound below guards that level.
    Every disagreement sits at a point :func:`loo_exact_mask` flags as not exact, and at every
    flagged-exact point the closed form equals retraining to round-off.  Decremental
    unlearning (eq. (27), then support-set updates of ``M^-1`` at the uncertified points)
    equals retraining everywhere, so its counts agree on all 100.
    """
    rng = np.random.default_rng(2024)
    agree = agree_dec = 0
    n_exact = n_total = 0
    for p in range(100):
        n = int(rng.integers(15, 31))
        d = int(rng.integers(1, 5))
        X, y = make_problem(n, d, 1000 + p, noise=float(rng.uniform(0.2, 1.5)))
        sigma = float(2.0 ** rng.uniform(-1.5, 2.0))
        C = float(2.0 ** rng.uniform(-3.0, 5.0))
        K = rbf_from_sqdist(squared_distances(X), sigma)
        sol = fit_l2_svm(K, y, C)
        r = closed_form_loo(sol, K)
        ref = brute_force_loo(K, y, C)
        agree += int(np.sum(y * r <= 0) == np.sum(y * ref <= 0))
        # decremental unlearning: eq. (27) plus support-set updates of M^-1, no retraining
        r_dec, info = decremental_loo(sol, K)
        np.testing.assert_allclose(r_dec, ref, atol=1e-8, rtol=0)
        assert info["retrained"] == 0
        agree_dec += int(np.sum(y * r_dec <= 0) == np.sum(y * ref <= 0))
        exact = loo_exact_mask(sol, K)
        np.testing.assert_allclose(r[exact], ref[exact], atol=1e-8, rtol=0)
        assert not np.any(((y * r <= 0) != (y * ref <= 0)) & exact)
        n_exact += int(exact.sum())
        n_total += n
    assert agree >= 90
    assert agree_dec == 100
    assert n_exact >= 0.8 * n_total


@pytest.mark.parametrize("max_iter", [25, 0])  # 0: every uncertified point is retrained
def test_decremental_loo_with_weights_equals_retraining(max_iter):
    X, y = make_problem(40, 3, 11, noise=0.8)
    w = np.random.default_rng(11).uniform(0.3, 3.0, 40)
    w[[3, 17]] = 0.0  # zero-weight points never become support vectors
    K = rbf_from_sqdist(squared_distances(X), 1.3)
    sol = fit_l2_svm(K, y, 4.0, sample_weight=w)
    r, info = decremental_loo(sol, K, max_iter=max_iter)
    np.testing.assert_allclose(r, brute_force_loo(K, y, 4.0, sample_weight=w), atol=1e-8)
    n_uncertified = int((~loo_exact_mask(sol, K)).sum())
    assert info["corrected"] == n_uncertified > 0
    assert info["retrained"] == (n_uncertified if max_iter == 0 else 0)


def test_closed_form_rejects_l1_solutions():
    X, y = make_problem(20, 2, 0)
    K = rbf_from_sqdist(squared_distances(X), 1.0)
    with pytest.raises(ValueError, match="L2-SVM"):
        closed_form_loo(fit_l1_svm(y, 1.0, K=K), K)


# ---------------------------------------------------------------------------------------------
# loss
# ---------------------------------------------------------------------------------------------
def test_cross_entropy_matches_its_definition_and_is_safe():
    rng = np.random.default_rng(0)
    y = np.where(rng.random(50) > 0.5, 1.0, -1.0)
    r = rng.normal(scale=2.0, size=50)
    L, dL = loo_loss(y, r)
    t = np.tanh(r)
    direct = -((1 + y) / 2 * np.log((1 + t) / 2) + (1 - y) / 2 * np.log((1 - t) / 2))
    np.testing.assert_allclose(L, direct, rtol=1e-10)
    np.testing.assert_allclose(dL, t - y)  # RBSVM eq. (31)
    h = 1e-6
    fd = (loo_loss(y, r + h)[0] - loo_loss(y, r - h)[0]) / (2 * h)
    np.testing.assert_allclose(dL, fd, rtol=1e-6, atol=1e-9)
    # far outside the range where tanh rounds to +-1
    Lb, dLb = loo_loss(np.array([1.0, -1.0, 1.0]), np.array([-1e4, 1e4, 1e4]))
    assert np.all(np.isfinite(Lb)) and np.all(np.isfinite(dLb))
    np.testing.assert_allclose(Lb, [2e4, 2e4, 0.0])


def test_squared_loss_and_derivative():
    rng = np.random.default_rng(1)
    y = np.where(rng.random(30) > 0.5, 1.0, -1.0)
    r = rng.normal(size=30)
    L, dL = loo_loss(y, r, "squared")
    np.testing.assert_allclose(L, ((1 + np.tanh(r)) / 2 - (1 + y) / 2) ** 2)
    h = 1e-6
    fd = (loo_loss(y, r + h, "squared")[0] - loo_loss(y, r - h, "squared")[0]) / (2 * h)
    np.testing.assert_allclose(dL, fd, rtol=1e-6, atol=1e-10)
    with pytest.raises(ValueError, match="loss must be one of"):
        loo_loss(y, r, "hinge")


# ---------------------------------------------------------------------------------------------
# exact gradient against central finite differences, support sets held fixed
# ---------------------------------------------------------------------------------------------
def _fd_gradient(D2, tasks, theta, obj, h=1e-5, **kw):
    fd = np.empty(2)
    for k in range(2):
        e = np.zeros(2)
        e[k] = h
        vals = []
        for sgn in (1.0, -1.0):
            o = rbsvm_objective(
                D2, tasks, theta + sgn * e, init_support=obj.supports, gradient=False, **kw
            )
            for s_new, s_old in zip(o.supports, obj.supports):
                assert np.array_equal(s_new, s_old), "support set changed: choose another point"
            vals.append(o.value)
        fd[k] = (vals[0] - vals[1]) / (2 * h)
    return fd


@pytest.mark.parametrize(
    "seed, sigma, C, loss, weighted, nonsupport",
    [
        (0, 1.0, 1.0, "cross_entropy", False, "model"),
        (1, 0.5, 10.0, "cross_entropy", False, "model"),
        (2, 2.0, 0.3, "cross_entropy", False, "model"),
        (3, 1.3, 3.0, "cross_entropy", True, "model"),
        (4, 0.8, 2.0, "squared", False, "model"),
        (5, 1.0, 3.0, "cross_entropy", False, "label"),
        (6, 0.7, 8.0, "cross_entropy", True, "label"),
    ],
)
def test_gradient_matches_central_differences(seed, sigma, C, loss, weighted, nonsupport):
    X, y = make_problem(35, 3, seed)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, 35) if weighted else None
    kw = {"loss": loss, "sample_weight": w, "nonsupport": nonsupport}
    D2 = squared_distances(X)
    theta = np.log([sigma, C])
    obj = rbsvm_objective(D2, [y], theta, **kw)
    assert 0 < obj.n_support
    if nonsupport == "label":
        assert obj.n_support < 35  # there are non-support vectors for the option to act on
    fd = _fd_gradient(D2, [y], theta, obj, **kw)
    np.testing.assert_allclose(obj.grad, fd, rtol=1e-5, atol=1e-9)
    assert abs(obj.grad[0]) > 1e-6  # the width gradient is not the zero of eq. (35)-(36)


def test_gradient_of_multiclass_sum_matches_central_differences():
    rng = np.random.default_rng(7)
    centers = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 1.8]])
    yk = np.repeat(np.arange(3), 15)
    X = centers[yk] + rng.normal(scale=0.8, size=(45, 2))
    tasks = ovr_tasks(yk)
    assert len(tasks) == 3
    D2 = squared_distances(X)
    theta = np.log([0.9, 4.0])
    obj = rbsvm_objective(D2, tasks, theta)
    fd = _fd_gradient(D2, tasks, theta, obj)
    np.testing.assert_allclose(obj.grad, fd, rtol=1e-5, atol=1e-9)
    single = [rbsvm_objective(D2, [t], theta) for t in tasks]
    np.testing.assert_allclose(obj.value, sum(s.value for s in single), rtol=1e-12)
    np.testing.assert_allclose(obj.grad, sum(s.grad for s in single), rtol=1e-10)


def test_loo_gradient_with_a_generic_kernel_perturbation():
    """``loo_gradient`` differentiates sum c_i r_i for any symmetric dH, not only RBF's."""
    X, y = make_problem(25, 2, 11)
    D2 = squared_distances(X)
    K0 = rbf_from_sqdist(D2, 1.0)
    A = np.random.default_rng(3).normal(size=(25, 25)) * 0.02
    A = A + A.T
    c = np.random.default_rng(4).normal(size=25)
    C = 3.0
    sol = fit_l2_svm(K0, y, C)
    S = np.flatnonzero(sol.support)
    g = loo_gradient(sol, K0, [A[:, S]], c)[0]
    h = 1e-6
    vals = []
    for t in (h, -h):
        Kt = K0 + t * A
        st = fit_l2_svm(Kt, y, C, init_support=sol.support)
        assert np.array_equal(st.support, sol.support)
        vals.append(c @ closed_form_loo(st, Kt))
    np.testing.assert_allclose(g, (vals[0] - vals[1]) / (2 * h), rtol=1e-5)


def test_rbf_derivatives_shapes_and_validation():
    X, y = make_problem(20, 2, 1)
    D2 = squared_distances(X)
    K = rbf_from_sqdist(D2, 1.0)
    sol = fit_l2_svm(K, y, 2.0)
    m = int(sol.support.sum())
    dS, dC = rbf_l2_derivatives(K, D2, 1.0, sol)
    assert dS.shape == (20, m) and dC.shape == (m,)
    np.testing.assert_allclose(dC, -0.5)  # d/dlog C of 1/C at C = 2
    with pytest.raises(ValueError, match="shape"):
        loo_gradient(sol, K, [np.zeros(m + 1)], np.ones(20))


def test_rbf_derivatives_by_blocks_of_columns_are_the_whole_product(monkeypatch):
    """The sigma-derivative's support columns, made a few columns at a time (one ``n x |S|``
    array, issue 64), are ``K[:, S] * D2[:, S] / sigma^2`` exactly."""
    import svmtune.loo.rbsvm_gradient as grad_module

    X, y = make_problem(40, 2, 3)
    D2 = squared_distances(X)
    K = rbf_from_sqdist(D2, 1.3)
    sol = fit_l2_svm(K, y, 5.0)
    S = np.flatnonzero(sol.support)
    monkeypatch.setattr(grad_module, "_COLUMN_VALUES", 3 * 40)  # blocks of 3 columns
    dS, _ = rbf_l2_derivatives(K, D2, 1.3, sol)
    assert S.size > 6
    assert np.array_equal(dS, D2[:, S] / 1.3**2 * K[:, S])


def test_gradient_term_by_blocks_of_columns_is_the_whole_sum(monkeypatch):
    """``-sum(D[S] * W) + z^T (D beta)``, the derivative's columns read a few at a time
    (issue 64), is the term of the whole arrays."""
    import svmtune.loo.rbsvm_gradient as grad_module

    rng = np.random.default_rng(2)
    D, W = rng.normal(size=(50, 20)), rng.normal(size=(20, 20))
    z, beta = rng.normal(size=50), rng.normal(size=20)
    S = np.sort(rng.choice(50, 20, replace=False))
    monkeypatch.setattr(grad_module, "_COLUMN_VALUES", 3 * 50)  # blocks of 3 columns
    blocks = list(grad_module._column_blocks(D))
    assert len(blocks) == 7 and all(np.shares_memory(Dj, D) for _, Dj in blocks)
    got = grad_module._columns_term(blocks, S, W, z, beta)
    assert got == pytest.approx(z @ (D @ beta) - np.sum(D[S] * W), rel=1e-13)


def test_gradient_from_derivative_columns_by_blocks_is_the_gradient_of_the_array(monkeypatch):
    """The objective's gradient reads the sigma-derivative's columns a block at a time
    (issue 64: never one ``n x |S|`` array); it is the gradient of the whole array."""
    import svmtune.loo.rbsvm_gradient as grad_module

    X, y = make_problem(40, 2, 3)
    D2 = squared_distances(X)
    K = rbf_from_sqdist(D2, 1.3)
    sol = fit_l2_svm(K, y, 5.0)
    c = np.random.default_rng(0).normal(size=40)
    whole = loo_gradient(sol, K, rbf_l2_derivatives(K, D2, 1.3, sol), c)
    monkeypatch.setattr(grad_module, "_COLUMN_VALUES", 3 * 40)  # blocks of 3 columns
    lazy = grad_module._rbf_l2_derivative_blocks(K, D2, 1.3, sol)
    assert isinstance(lazy[0], grad_module.DerivativeColumns)
    assert max(j.stop - j.start for j, _ in lazy[0].blocks()) == 3
    got = grad_module._loo_gradient(sol, K, lazy, c, None)
    np.testing.assert_allclose(got, whole, rtol=1e-11, atol=1e-13)


def test_objective_is_consistent_with_the_pieces():
    X, y = make_problem(30, 2, 8)
    D2 = squared_distances(X)
    obj = rbsvm_objective(D2, [y], np.log([1.1, 2.5]))
    K = rbf_from_sqdist(D2, 1.1)
    sol = fit_l2_svm(K, y, 2.5)
    r = closed_form_loo(sol, K)
    np.testing.assert_allclose(obj.loo[0], r, atol=1e-10)
    np.testing.assert_allclose(obj.value, loo_loss(y, r)[0].sum(), rtol=1e-12)
    with pytest.raises(ValueError, match="theta"):
        rbsvm_objective(D2, [y], [np.nan, 0.0])


def test_nonsupport_label_is_eq_27_with_alpha_zero():
    """``nonsupport="label"``: J takes a non-support vector at its label (eq. (27) with
    alpha_i = 0), each such term the constant log(1 + e^-2); support vectors are unchanged."""
    X, y = make_problem(40, 2, 9)
    D2 = squared_distances(X)
    theta = np.log([1.0, 4.0])
    exact = rbsvm_objective(D2, [y], theta)
    lit = rbsvm_objective(D2, [y], theta, nonsupport="label")
    S = exact.solutions[0].support
    assert 0 < S.sum() < 40
    r = exact.loo[0].copy()
    assert np.all(y[~S] * r[~S] >= 1.0 - 1e-8)  # exact: the model's margin, at least 1
    np.testing.assert_allclose(lit.loo[0], r, atol=1e-12)  # loo: the closed-form outputs
    r[~S] = y[~S]
    np.testing.assert_allclose(lit.value, loo_loss(y, r)[0].sum(), rtol=1e-12)
    np.testing.assert_allclose(
        lit.value - exact.value,
        np.sum(np.log1p(np.exp(-2.0)) - loo_loss(y, exact.loo[0])[0][~S]),
        rtol=1e-10,
    )
    assert lit.value > exact.value
    with pytest.raises(ValueError, match="nonsupport must be one of"):
        rbsvm_objective(D2, [y], theta, nonsupport="zero")


# ---------------------------------------------------------------------------------------------
# degenerate problems: finite values, no crash
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("log2_sigma", [-8.0, 12.0])
def test_extreme_widths_give_finite_objective(log2_sigma):
    X, y = make_problem(30, 2, 9)
    D2 = squared_distances(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        obj = rbsvm_objective(D2, [y], [log2_sigma * np.log(2), np.log(4.0)])
    assert np.isfinite(obj.value) and np.all(np.isfinite(obj.grad))
    assert np.all(np.isfinite(obj.loo[0]))


def test_duplicated_points_give_finite_objective():
    X, y = make_problem(20, 2, 10)
    X2, y2 = np.vstack([X, X]), np.concatenate([y, y])
    D2 = squared_distances(X2)
    obj = rbsvm_objective(D2, [y2], np.log([1.0, 256.0]))
    assert np.isfinite(obj.value) and np.all(np.isfinite(obj.grad))
    K = rbf_from_sqdist(D2, 1.0)
    assert np.linalg.matrix_rank(K) <= 20  # K itself is singular


def test_loo_predictions_and_error_rate():
    y = np.array([0, 1, 1, 0])
    r = np.array([-0.5, 0.2, -0.1, 0.3])
    np.testing.assert_array_equal(loo_predictions([r]), [0, 1, 0, 1])
    assert loo_error_rate(y, [r]) == 0.5
    assert loo_error_rate(y, [r], sample_weight=np.array([1.0, 1.0, 0.0, 0.0])) == 0.0
    R = [np.array([1.0, -1.0, -1.0]), np.array([-1.0, 1.0, -2.0]), np.array([0.0, 0.5, -0.5])]
    np.testing.assert_array_equal(loo_predictions(R), [0, 1, 2])


@pytest.mark.parametrize("weighted", [False, True])
def test_objective_on_kernel_columns_equals_the_full_kernel(monkeypatch, weighted):
    """A warm-started step computes only the kernel columns it reads; J, its gradient and
    the LOO outputs are those of the step on the whole matrix, to the last bit."""
    X, y = make_problem(200, 2, 5, noise=0.2)
    D2 = squared_distances(X)
    w = np.random.default_rng(1).uniform(0.5, 2.0, 200) if weighted else None
    tasks = ovr_tasks(np.where(y > 0, 1, 0))
    start = rbsvm_objective(D2, tasks, np.log([1.0, 50.0]), sample_weight=w)
    theta = np.log([1.2, 60.0])
    results = {}
    for below in (0.0, 1.01):  # never / always by columns
        monkeypatch.setattr(rbsvm_module, "COLUMNS_BELOW", below)
        results[below] = rbsvm_objective(
            D2, tasks, theta, sample_weight=w, init_support=start.supports
        )
        kind = type(rbsvm_module._step_kernel(D2, 1.2, start.supports)).__name__
        assert kind == ("ndarray" if below == 0.0 else "KernelColumns")
    full, cols = results[0.0], results[1.01]
    assert full.value == cols.value and np.array_equal(full.grad, cols.grad)
    assert all(np.array_equal(a, b) for a, b in zip(full.loo, cols.loo))
    assert start.n_support < 100  # the case the columns are for
