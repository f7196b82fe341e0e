"""Low-rank closed forms against their dense / brute-force definitions (RBSVM eq. (22), (27))."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

from svmtune.kernels import rbf_from_sqdist, squared_distances
from svmtune.loo.brute import brute_force_loo
from svmtune.loo.closed_form import closed_form_loo, loo_exact_mask
from svmtune.loo.rbsvm import rbsvm_objective
from svmtune.loo.rbsvm_lowrank import lowrank_loo, lowrank_rbsvm_objective
from svmtune.lowrank import (
    WoodburyFactor,
    fit_l2_svm_lowrank,
    fit_tasks_lowrank,
    nystroem_factor,
    pivoted_cholesky_landmarks,
)
from svmtune.svm import ExtendedFactor, fit_l2_svm

from .conftest import make_problem


def _landmarks(X, sigma, m):
    idx, _ = pivoted_cholesky_landmarks(X, sigma, tol=1e-6, max_rank=m)
    D2_nm = squared_distances(X, X[idx])
    return idx, D2_nm, D2_nm[idx]


@pytest.mark.parametrize("seed,C", [(0, 0.5), (1, 4.0), (2, 50.0)])
def test_full_rank_solution_equals_exact_solver(seed, C):
    X, y = make_problem(40, 3, seed)
    D2 = squared_distances(X)
    sigma = 1.3
    nf = nystroem_factor(D2, D2, sigma, jitter=0.0)
    K = rbf_from_sqdist(D2, sigma)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, size=40)
    lo = fit_l2_svm_lowrank(nf.Z, y, C, sample_weight=w)
    ex = fit_l2_svm(K, y, C, sample_weight=w)
    np.testing.assert_array_equal(lo.support, ex.support)
    np.testing.assert_allclose(lo.alpha, ex.alpha, atol=1e-6, rtol=1e-6)
    assert abs(lo.b - ex.b) < 1e-6
    np.testing.assert_allclose(lowrank_loo(lo, nf.Z), closed_form_loo(ex, K), atol=1e-6)


def test_low_rank_solution_equals_dense_solver_on_approximate_kernel():
    X, y = make_problem(80, 4, 3)
    _, D2_nm, D2_mm = _landmarks(X, 1.5, 12)
    nf = nystroem_factor(D2_nm, D2_mm, 1.5)
    Kt = nf.Z @ nf.Z.T
    lo = fit_l2_svm_lowrank(nf.Z, y, 3.0)
    ex = fit_l2_svm(Kt, y, 3.0)
    np.testing.assert_array_equal(lo.support, ex.support)
    np.testing.assert_allclose(lo.alpha, ex.alpha, atol=1e-7)
    # warm start from another support set reaches the same optimum
    warm = fit_l2_svm_lowrank(nf.Z, y, 3.0, init_support=~lo.support)
    np.testing.assert_allclose(warm.alpha, lo.alpha, atol=1e-9)


def test_woodbury_loo_diagonal_equals_dense_extended_factor():
    X, y = make_problem(70, 3, 4)
    _, D2_nm, D2_mm = _landmarks(X, 1.0, 10)
    nf = nystroem_factor(D2_nm, D2_mm, 1.0)
    sol = fit_l2_svm_lowrank(nf.Z, y, 2.0)
    S = sol.support
    H = nf.Z[S] @ nf.Z[S].T + np.diag(sol.H_diag[S])
    dense = ExtendedFactor.from_H(H)
    np.testing.assert_allclose(sol.factor.inverse_diagonal(), dense.inverse_diagonal(), rtol=1e-8)
    Minv = dense.inverse()
    np.testing.assert_allclose(sol.factor.apply_B(np.eye(S.sum())), Minv[:-1, :-1], atol=1e-9)
    g = np.random.default_rng(0).normal(size=S.sum())
    B = Minv[:-1, :-1]
    np.testing.assert_allclose(
        sol.factor.weighted_square_diagonal(g), np.diag(B @ np.diag(g) @ B), rtol=1e-8
    )


@pytest.mark.parametrize("weighted", [False, True])
def test_landmarks_follow_the_rows_not_their_order(weighted):
    """Rows in another order give the same landmark rows (issue 63): the first pivot is the
    row nearest the (weighted) mean, not the first row, and the rule stops early (the
    tolerance binds) so which rows lead matters."""
    X, _ = make_problem(120, 3, 6)
    w = np.random.default_rng(6).uniform(0.5, 2.0, 120) if weighted else None
    perm = np.random.default_rng(7).permutation(120)
    idx, resid = pivoted_cholesky_landmarks(X, 1.0, tol=0.05, sample_weight=w)
    w_p = None if w is None else w[perm]
    idx_p, resid_p = pivoted_cholesky_landmarks(X[perm], 1.0, tol=0.05, sample_weight=w_p)
    assert idx.size < 120
    assert np.array_equal(perm[idx_p], idx)
    assert resid_p == pytest.approx(resid, rel=1e-10)


def test_lowrank_loo_matches_brute_force_where_certified_exact():
    X, y = make_problem(50, 3, 5)
    _, D2_nm, D2_mm = _landmarks(X, 1.2, 15)
    nf = nystroem_factor(D2_nm, D2_mm, 1.2)
    Kt = nf.Z @ nf.Z.T
    sol = fit_l2_svm_lowrank(nf.Z, y, 5.0)
    r = lowrank_loo(sol, nf.Z)
    brute = brute_force_loo(Kt, y, 5.0, loss="l2")
    exact = loo_exact_mask(fit_l2_svm(Kt, y, 5.0), Kt)
    assert exact.mean() >= 0.5  # half the points or more are certified
    np.testing.assert_allclose(r[exact], brute[exact], atol=1e-6)


@pytest.mark.parametrize(
    "theta, nonsupport",
    [((0.2, 0.5), "model"), ((-0.3, 2.5), "model"), ((0.8, -1.0), "model"), ((0.2, 1.5), "label")],
)
def test_gradient_equals_central_differences(theta, nonsupport):
    X, y = make_problem(60, 3, 6)
    _, D2_nm, D2_mm = _landmarks(X, 1.0, 9)
    tasks = [y]
    w = np.random.default_rng(1).uniform(0.5, 1.5, size=60)
    th = np.asarray(theta)
    kw = {"sample_weight": w, "nonsupport": nonsupport}
    obj = lowrank_rbsvm_objective(D2_nm, D2_mm, tasks, th, **kw)
    if nonsupport == "label":
        assert obj.supports[0].sum() < 60  # non-support vectors for the option to act on
    h = 1e-5
    for k in range(2):
        e = np.zeros(2)
        e[k] = h
        a = lowrank_rbsvm_objective(D2_nm, D2_mm, tasks, th + e, **kw)
        b = lowrank_rbsvm_objective(D2_nm, D2_mm, tasks, th - e, **kw)
        np.testing.assert_array_equal(a.supports[0], obj.supports[0])  # support set fixed
        np.testing.assert_array_equal(b.supports[0], obj.supports[0])
        fd = (a.value - b.value) / (2 * h)
        assert abs(obj.grad[k] - fd) <= 1e-5 * max(abs(fd), 1e-3), (k, obj.grad[k], fd)


def test_full_rank_objective_and_gradient_equal_exact_rbsvm():
    X, y = make_problem(45, 3, 7)
    D2 = squared_distances(X)
    y3 = np.where(np.arange(45) % 3 == 0, 1.0, -1.0)
    th = np.log([1.4, 3.0])
    for nonsupport in ("model", "label"):
        lo = lowrank_rbsvm_objective(D2, D2, [y, y3], th, jitter=0.0, nonsupport=nonsupport)
        ex = rbsvm_objective(D2, [y, y3], th, nonsupport=nonsupport)
        assert lo.value == pytest.approx(ex.value, rel=1e-8)
        np.testing.assert_allclose(lo.grad, ex.grad, rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="nonsupport must be one of"):
        lowrank_rbsvm_objective(D2, D2, [y], th, nonsupport="zero")


def test_pivoted_cholesky_rank_rule():
    X, _ = make_problem(300, 2, 8)
    idx, resid = pivoted_cholesky_landmarks(X, 1.0, tol=1e-3, max_rank=300)
    assert resid <= 1e-3 and len(set(idx.tolist())) == idx.size
    D2_nm = squared_distances(X, X[idx])
    nf = nystroem_factor(D2_nm, D2_nm[idx], 1.0, jitter=0.0)
    K = rbf_from_sqdist(squared_distances(X), 1.0)
    assert np.trace(K - nf.Z @ nf.Z.T) == pytest.approx(resid * 300, rel=1e-6, abs=1e-9)
    assert nf.trace_residual == pytest.approx(resid, rel=1e-6, abs=1e-12)
    # the cap binds first with a tight tolerance
    idx2, resid2 = pivoted_cholesky_landmarks(X, 1.0, tol=1e-9, max_rank=5)
    assert idx2.size == 5 and resid2 > 1e-9
    with pytest.raises(ValueError, match="rank tolerance"):
        pivoted_cholesky_landmarks(X, 1.0, tol=0.0)


def test_degenerate_kernels_stay_finite():
    X, y = make_problem(30, 2, 9)
    X = np.vstack([X, X[:5]])  # duplicates
    y = np.concatenate([y, y[:5]])
    for sigma in (1e-4, 1e4):  # K -> I and K -> 11^T
        idx, D2_nm, D2_mm = _landmarks(X, sigma, 20)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            obj = lowrank_rbsvm_objective(D2_nm, D2_mm, [y], np.log([sigma, 1.0]))
        assert np.isfinite(obj.value) and np.all(np.isfinite(obj.grad))
    assert idx.size >= 1


def test_memory_is_order_n_m():
    """n = 20,000 and m = 5: an n x n float64 matrix would need 3.2 GB."""
    rng = np.random.default_rng(10)
    n, m = 20_000, 5
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    tracemalloc.start()
    try:
        idx, _ = pivoted_cholesky_landmarks(X, 1.0, tol=1e-9, max_rank=m)
        D2_nm = squared_distances(X, X[idx])
        obj = lowrank_rbsvm_objective(D2_nm, D2_nm[idx], [y], np.log([1.0, 1.0]))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert np.isfinite(obj.value)
    assert peak < 60 * n * m * 8  # a few dozen n x m arrays; n x n would be 4000x larger


def test_woodbury_factor_rejects_wrong_solution_type():
    X, y = make_problem(20, 2, 11)
    K = rbf_from_sqdist(squared_distances(X), 1.0)
    with pytest.raises(ValueError, match="low-rank"):
        lowrank_loo(fit_l2_svm(K, y, 1.0), np.eye(20))
    assert isinstance(WoodburyFactor.from_lowrank(np.ones((3, 1)), np.ones(3)), WoodburyFactor)


def test_pivoted_cholesky_min_rank_pivots_past_the_residual_target():
    X = np.random.default_rng(3).normal(size=(80, 3))
    idx, resid = pivoted_cholesky_landmarks(X, 8.0, tol=1e-2, max_rank=40)
    assert idx.size < 10 and resid <= 1e-2  # a wide kernel meets the target early
    idx2, resid2 = pivoted_cholesky_landmarks(X, 8.0, tol=1e-2, max_rank=40, min_rank=25)
    assert idx2.size == 25 and np.array_equal(idx2[: idx.size], idx) and resid2 < resid
    with pytest.raises(ValueError, match="min_rank"):
        pivoted_cholesky_landmarks(X, 1.0, min_rank=0)


def test_pivoted_cholesky_weights_are_repeated_rows():
    """A weight stands for repeated rows: integer weights pick the landmarks (and stop at the
    residual) of the rows repeated in place, rows of weight 0 are never landmarks, and the
    residual is weighted."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3))
    w = rng.integers(0, 4, size=60)
    w[0] = 0  # the unweighted rule's first pivot
    copies = np.repeat(np.arange(60), w)  # row of the repeated X -> row of X
    for tol, max_rank in ((5e-2, 60), (1e-9, 12)):  # the residual rule, the cap
        got, got_resid = pivoted_cholesky_landmarks(
            X, 1.3, tol=tol, max_rank=max_rank, sample_weight=w
        )
        want, want_resid = pivoted_cholesky_landmarks(X[copies], 1.3, tol=tol, max_rank=max_rank)
        assert np.array_equal(got, copies[want])
        assert got_resid == pytest.approx(want_resid, rel=1e-10, abs=1e-14)
        assert np.all(w[got] > 0)
    unweighted = pivoted_cholesky_landmarks(X, 1.3, tol=5e-2, max_rank=60)
    ones = pivoted_cholesky_landmarks(X, 1.3, tol=5e-2, max_rank=60, sample_weight=np.ones(60))
    assert np.array_equal(ones[0], unweighted[0]) and ones[1] == pytest.approx(unweighted[1])
    with pytest.raises(ValueError, match="sample_weight is all zero"):
        pivoted_cholesky_landmarks(X, 1.0, sample_weight=np.zeros(60))


def test_fit_tasks_lowrank_fits_every_task_and_validates():
    X, y = make_problem(40, 3, 9)
    idx, _ = pivoted_cholesky_landmarks(X, 1.2, tol=1e-3, max_rank=15)
    D2_nm = squared_distances(X, X[idx])
    tasks = [y, -y]
    theta, nf, sols = fit_tasks_lowrank(D2_nm, D2_nm[idx], tasks, np.log([1.2, 3.0]))
    assert nf.rank == idx.size and len(sols) == 2
    ref = fit_l2_svm_lowrank(nf.Z, -y, 3.0)
    np.testing.assert_allclose(sols[1].alpha, ref.alpha, atol=1e-10)
    with pytest.raises(ValueError, match="labels"):
        fit_tasks_lowrank(D2_nm, D2_nm[idx], [y[:-1]], theta)
    with pytest.raises(ValueError, match="at least one task"):
        fit_tasks_lowrank(D2_nm, D2_nm[idx], [], theta)
    with pytest.raises(ValueError, match="theta"):
        fit_tasks_lowrank(D2_nm, D2_nm[idx], tasks, [np.nan, 0.0])
    with pytest.raises(ValueError, match="init_support"):
        fit_tasks_lowrank(D2_nm, D2_nm[idx], tasks, theta, init_support=[None])


def test_trace_residual_at_another_width_and_in_every_objective():
    """The residual the landmark search watches: trace(K - Z Z^T) / n at the evaluated width,
    reported by the RBSVM, span and radius-margin objectives alike."""
    from svmtune.loo.radius_margin_lowrank import lowrank_radius_margin_objective
    from svmtune.loo.span_lowrank import lowrank_span_objective

    X, y = make_problem(120, 3, 2)
    idx, _ = pivoted_cholesky_landmarks(X, 2.0, tol=1e-2, max_rank=120)
    D2_nm = squared_distances(X, X[idx])
    for sigma in (0.5, 4.0):
        nf = nystroem_factor(D2_nm, D2_nm[idx], sigma, jitter=0.0)
        K = rbf_from_sqdist(squared_distances(X), sigma)
        brute = np.trace(K - nf.Z @ nf.Z.T) / len(X)
        assert nf.trace_residual == pytest.approx(brute, rel=1e-8, abs=1e-12)
        theta = np.log([sigma, 2.0])
        for objective in (
            lowrank_rbsvm_objective,
            lowrank_span_objective,
            lowrank_radius_margin_objective,
        ):
            obj = objective(D2_nm, D2_nm[idx], [y], theta, gradient=False, jitter=0.0)
            assert obj.rank_residual == pytest.approx(nf.trace_residual, rel=1e-10)
    # narrower than the landmarks' width the same landmarks leave more of the trace
    wide = nystroem_factor(D2_nm, D2_nm[idx], 4.0).trace_residual
    narrow = nystroem_factor(D2_nm, D2_nm[idx], 0.5).trace_residual
    assert narrow > 0.05 > wide


# --- input validation at the public boundary ------------------------------------------------
def _small_lowrank():
    X, y = make_problem(40, 2, 0)
    _, D2_nm, D2_mm = _landmarks(X, 1.0, 6)
    return nystroem_factor(D2_nm, D2_mm, 1.0), y


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_fit_l2_svm_lowrank_rejects_non_finite_Z(bad):
    nf, y = _small_lowrank()
    Z = nf.Z.copy()
    Z[0, 0] = bad
    with pytest.raises(ValueError, match="Z contains NaN or infinity"):
        fit_l2_svm_lowrank(Z, y, 1.0)


def test_fit_l2_svm_lowrank_init_support_indices_and_range():
    nf, y = _small_lowrank()
    ref = fit_l2_svm_lowrank(nf.Z, y, 1.0)
    by_mask = fit_l2_svm_lowrank(nf.Z, y, 1.0, init_support=ref.support)
    by_idx = fit_l2_svm_lowrank(nf.Z, y, 1.0, init_support=ref.support_indices)
    assert np.array_equal(by_mask.alpha, by_idx.alpha) and by_mask.b == by_idx.b
    with pytest.raises(ValueError, match="init_support indices"):
        fit_l2_svm_lowrank(nf.Z, y, 1.0, init_support=np.array([0, 99]))
    with pytest.raises(ValueError, match="sample_weight is all zero"):
        fit_l2_svm_lowrank(nf.Z, y, 1.0, sample_weight=np.zeros(y.size))


def test_pivoted_cholesky_landmarks_rejects_empty_and_bad_points():
    with pytest.raises(ValueError, match="X is empty"):
        pivoted_cholesky_landmarks(np.zeros((0, 2)), 1.0)
    with pytest.raises(ValueError, match="X contains NaN"):
        pivoted_cholesky_landmarks(np.array([[0.0, np.nan]]), 1.0)


def test_nystroem_factor_rejects_bad_distances():
    X, _ = make_problem(30, 2, 0)
    idx = np.arange(5)
    D2_nm, D2_mm = squared_distances(X, X[idx]), squared_distances(X[idx])
    with pytest.raises(ValueError, match=r"D2_mm .* must be square"):
        nystroem_factor(D2_nm, D2_mm[0], 1.0)
    with pytest.raises(ValueError, match=r"D2_nm .* must have shape \(n, 5\)"):
        nystroem_factor(D2_nm[:, :4], D2_mm, 1.0)
    with pytest.raises(ValueError, match="D2_mm must hold finite, non-negative"):
        nystroem_factor(D2_nm, -D2_mm, 1.0)
    with pytest.raises(ValueError, match="D2_nm must hold finite, non-negative"):
        nystroem_factor(np.where(D2_nm > 1, np.nan, D2_nm), D2_mm, 1.0)


def test_a_factor_without_derivatives_holds_two_n_by_m_arrays_and_the_same_numbers():
    """Without ``derivatives`` the factor holds ``Z`` (in ``K_nm``'s place) and the distances
    only, and computes ``K_nm`` and ``G_T`` at their first use, equal to the eager ones; the
    objective without its gradient is the objective's value and leave-one-out outputs
    (issue 64: the referee's low-rank scores held four ``n x m`` arrays of this factor)."""
    from svmtune.lowrank._nystroem import _nystroem_factor

    X, y = make_problem(120, 3, 4)
    idx, _ = pivoted_cholesky_landmarks(X, 1.5, tol=1e-9, max_rank=20)
    D2_nm, D2_mm = squared_distances(X, X[idx]), squared_distances(X[idx])
    eager = _nystroem_factor(D2_nm, D2_mm, 1.5, 1e-8)
    lean = _nystroem_factor(D2_nm, D2_mm, 1.5, 1e-8, derivatives=False)
    held = [k for k, v in vars(lean).items() if np.shape(v) == D2_nm.shape]
    assert sorted(held) == ["D2_nm", "Z"]
    assert sorted(k for k, v in vars(eager).items() if np.shape(v) == D2_nm.shape) == [
        "D2_nm",
        "K_nm",
        "Z",
    ]
    assert np.array_equal(lean.Z, eager.Z)
    assert np.array_equal(lean.K_nm, eager.K_nm) and np.array_equal(lean.G_T, eager.G_T)
    tasks = [np.where(y == 1, 1.0, -1.0)]
    th = np.log([1.5, 10.0])
    full = lowrank_rbsvm_objective(D2_nm, D2_mm, tasks, th)
    value = lowrank_rbsvm_objective(D2_nm, D2_mm, tasks, th, gradient=False)
    assert value.grad is None and value.value == full.value
    assert all(np.array_equal(a, b) for a, b in zip(value.loo, full.loo))


def test_pivoted_cholesky_columns_are_exact_distances_dense_and_sparse():
    """The pivot loop's unchecked distances to one row equal ``squared_distances`` (dense
    and sparse, never densified), with an exact 0 at the row itself."""
    import scipy.sparse as sp

    from svmtune.lowrank._nystroem import _distances_to_row

    X, _ = make_problem(80, 4, 3)
    X[:, 1] = 0.0  # sparse structure
    D = squared_distances(X)
    norms = np.einsum("ij,ij->i", X, X)
    S = sp.csr_matrix(X)
    for j in (0, 17, 79):
        dense = _distances_to_row(X, j, norms)
        sparse = _distances_to_row(S, j, norms)
        assert dense[j] == sparse[j] == 0.0
        np.testing.assert_allclose(dense, D[:, j], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(sparse, D[:, j], rtol=1e-12, atol=1e-12)
    a, ra = pivoted_cholesky_landmarks(X, 0.8, tol=1e-4, max_rank=40)
    b, rb = pivoted_cholesky_landmarks(S, 0.8, tol=1e-4, max_rank=40)
    assert np.array_equal(a, b) and ra == pytest.approx(rb, rel=1e-10)
