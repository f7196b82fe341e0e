from __future__ import annotations

import warnings

import numpy as np
import pytest
from cvxopt import matrix, solvers
from sklearn.svm import SVC, LinearSVC

from svmtune.kernels import (
    Kernel,
    KernelColumns,
    rbf_columns,
    rbf_from_sqdist,
    squared_distances,
)
from svmtune.svm import ExtendedFactor, fit_l1_svm, fit_l2_svm

from .conftest import assert_l2_kkt, make_problem

solvers.options["show_progress"] = False
solvers.options["abstol"] = 1e-12
solvers.options["reltol"] = 1e-12
solvers.options["feastol"] = 1e-12


def qp_l2_dual(K, y, C, w=None):
    """Reference: min 1/2 a'Qa - 1'a, a >= 0, y'a = 0 with Q = yy' * (K + diag(1/(C w)))."""
    n = len(y)
    w = np.ones(n) if w is None else w
    H = K + np.diag(1.0 / (C * w))
    Q = np.outer(y, y) * H
    sol = solvers.qp(
        matrix(Q),
        matrix(-np.ones(n)),
        matrix(-np.eye(n)),
        matrix(np.zeros(n)),
        matrix(y.reshape(1, -1)),
        matrix(0.0),
    )
    a = np.array(sol["x"]).ravel()
    return a, 0.5 * a @ Q @ a - a.sum()


def l2_objective(sol, K):
    H = K + np.diag(sol.H_diag)
    beta = sol.dual_coef
    return 0.5 * beta @ H @ beta - sol.alpha.sum()


CASES = [
    (n, C, sigma, imb, seed)
    for seed, (n, C, sigma, imb) in enumerate(
        [
            (n, C, s, i)
            for n in (12, 40, 90)
            for C in (0.05, 1.0, 50.0)
            for s in (0.3, 1.5)
            for i in (0.5, 0.2)
        ][:36]
        + [(25, 2.0**k, 2.0 ** (k / 3), 0.35) for k in range(-6, 8)]
    )
]


@pytest.mark.parametrize("n,C,sigma,imbalance,seed", CASES)
def test_l2_solver_matches_general_qp(n, C, sigma, imbalance, seed):
    X, y = make_problem(n, 3, seed, imbalance=imbalance)
    K = Kernel("rbf", sigma=sigma)(X)
    sol = fit_l2_svm(K, y, C)
    a_ref, obj_ref = qp_l2_dual(K, y, C)
    obj = l2_objective(sol, K)
    assert obj == pytest.approx(obj_ref, rel=1e-6, abs=1e-8)
    assert np.allclose(sol.alpha, a_ref, atol=1e-5 * max(1.0, a_ref.max()))
    # KKT at tolerance 1e-8
    assert_l2_kkt(sol, K)


def test_l2_solver_weights_and_warm_start():
    X, y = make_problem(50, 2, 7)
    K = Kernel("rbf", sigma=1.0)(X)
    w = np.random.default_rng(0).uniform(0.2, 3.0, size=50)
    w[3] = 0.0
    sol = fit_l2_svm(K, y, 3.0, sample_weight=w)
    keep = w > 0
    a_ref, _ = qp_l2_dual(K[np.ix_(keep, keep)], y[keep], 3.0, w[keep])
    assert sol.alpha[3] == 0.0
    assert np.allclose(sol.alpha[keep], a_ref, atol=1e-5)
    cold = fit_l2_svm(K, y, 3.5, sample_weight=w)
    warm = fit_l2_svm(K, y, 3.5, sample_weight=w, init_support=sol.support)
    assert np.allclose(cold.alpha, warm.alpha, atol=1e-10)
    assert warm.n_iter <= cold.n_iter


@pytest.mark.parametrize("seed", range(6))
def test_l2_fallback_active_set_matches_general_qp(seed):
    """The primal active-set method that finishes a non-converged Newton iteration (forced
    here with ``max_iter=1``) reaches the general QP solver's optimum, with zero weights."""
    rng = np.random.default_rng(seed)
    n = 30 + 10 * seed
    X, y = make_problem(n, 3, seed, imbalance=0.3)
    K = Kernel("rbf", sigma=float(rng.uniform(0.4, 2.0)))(X)
    C = float(2.0 ** rng.uniform(0, 6))  # some points outside the margin
    w = rng.uniform(0.3, 3.0, size=n)
    w[rng.choice(n, 2, replace=False)] = 0.0
    newton = fit_l2_svm(K, y, C, sample_weight=w)
    assert newton.n_iter > 1  # one Newton step does not finish, so the fallback runs
    sol = fit_l2_svm(K, y, C, sample_weight=w, max_iter=1)
    assert sol.n_iter > 1  # the fallback's steps are counted
    keep = w > 0
    a_ref, obj_ref = qp_l2_dual(K[np.ix_(keep, keep)], y[keep], C, w[keep])
    assert np.all(sol.alpha[~keep] == 0.0)
    assert np.allclose(sol.alpha[keep], a_ref, atol=1e-5 * max(1.0, a_ref.max()))
    assert np.array_equal(sol.support, newton.support)
    assert np.allclose(sol.alpha, newton.alpha, atol=1e-9 * max(1.0, newton.alpha.max()))
    assert sol.b == pytest.approx(newton.b, abs=1e-8)


def test_extended_factor_inverse():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 6))
    H = A @ A.T + np.eye(6)
    M = np.block([[H, np.ones((6, 1))], [np.ones((1, 6)), np.zeros((1, 1))]])
    fac = ExtendedFactor.from_H(H)
    Minv = np.linalg.inv(M)
    assert np.allclose(fac.inverse(), Minv, atol=1e-10)
    assert np.allclose(fac.inverse_diagonal(), np.diag(Minv)[:6], atol=1e-10)
    x, z = fac.solve(np.arange(6.0), 2.0)
    assert np.allclose(M @ np.append(x, z), np.append(np.arange(6.0), 2.0))


def test_l2_matches_linearsvc_squared_hinge():
    # LinearSVC minimises 1/2|w|^2 + C' sum xi^2 (C' = C/2 of RBSVM eq. (5)) and regularises
    # the bias through intercept_scaling; with a large scaling the two formulations coincide.
    X, y = make_problem(80, 3, 11)
    C = 2.0
    sol = fit_l2_svm(Kernel("linear")(X), y, C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lin = LinearSVC(
            C=C / 2,
            loss="squared_hinge",
            dual=True,
            tol=1e-10,
            max_iter=10**5,
            intercept_scaling=30,
            random_state=0,
        ).fit(X, y)
    # the bias penalty b^2 / (2 * 30^2) is what separates the two problems
    f = sol.decision_function(Kernel("linear")(X))
    assert np.allclose(lin.decision_function(X), f, atol=1e-4)
    assert np.allclose(lin.coef_.ravel(), X.T @ sol.dual_coef, atol=1e-4)


def test_l2_degenerate_inputs_warn_not_nan():
    X, y = make_problem(30, 2, 5)
    X = np.vstack([X, X[:5]])  # duplicated points
    y = np.concatenate([y, y[:5]])
    for sigma in (1e-4, 1.0, 1e4):  # K -> I, regular, K -> 11^T
        sol = fit_l2_svm(Kernel("rbf", sigma=sigma)(X), y, 1e3)
        assert np.all(np.isfinite(sol.alpha)) and np.isfinite(sol.b)
    with pytest.raises(ValueError, match="both classes"):
        fit_l2_svm(np.eye(4), np.ones(4), 1.0)
    with pytest.raises(ValueError, match="C must be a positive finite number"):
        fit_l2_svm(np.eye(4), np.array([1.0, -1, 1, -1]), -1.0)


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_l1_swapped_labels_give_the_same_solution(native, weighted):
    """The hinge-loss SVM of ``-y`` is that of ``y`` with ``b`` negated; libsvm is handed one
    orientation of the labels, so the two fits agree exactly rather than within libsvm's
    tolerance (which moved the span-rule's leave-one-out values, issue 63)."""
    X, y = make_problem(100, 3, 1)
    kern = Kernel("rbf", sigma=2.0)
    w = np.random.default_rng(2).uniform(0.3, 2.0, 100) if weighted else None
    if weighted:
        w[:3] = 0.0  # the first sample libsvm sees is not the first row
    kw = {"X": X, "kernel": kern} if native else {"K": kern(X)}
    a = fit_l1_svm(y, 5.0, sample_weight=w, **kw)
    b = fit_l1_svm(-y, 5.0, sample_weight=w, **kw)
    np.testing.assert_array_equal(b.alpha, a.alpha)
    assert b.b == -a.b
    np.testing.assert_array_equal(b.in_bound, a.in_bound)


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_l1_adapter_reproduces_sklearn_and_kkt(native, weighted):
    X, y = make_problem(70, 3, 21)
    kern = Kernel("rbf", sigma=0.8)
    K = kern(X)
    w = np.random.default_rng(1).uniform(0.3, 2.0, 70) if weighted else None
    kw = {"X": X, "kernel": kern} if native else {"K": K}
    sol, svc = fit_l1_svm(y, 2.0, sample_weight=w, tol=1e-10, return_estimator=True, **kw)
    ref = svc.decision_function(X if native else K)
    assert np.allclose(sol.decision_function(K), ref, atol=1e-10)
    # KKT: in-bound SVs on the margin, bounded SVs inside it, non-SVs outside
    m = y * sol.decision_function(K)
    assert np.allclose(m[sol.in_bound], 1.0, atol=1e-6)
    assert np.all(m[sol.bounded] <= 1 + 1e-6)
    assert np.all(m[~sol.support] >= 1 - 1e-6)
    assert np.all(sol.alpha <= sol.upper + 1e-12)
    assert abs(y @ sol.alpha) < 1e-8
    assert not np.any(sol.in_bound & sol.bounded)
    assert np.array_equal(sol.support, sol.in_bound | sol.bounded)


@pytest.mark.parametrize("native", [True, False])
def test_l1_adapter_zero_weight_is_removal(native):
    # libsvm drops weight-0 samples and scikit-learn's support_ then indexes the others
    # (scikit-learn #25380): the solution must still put each alpha on its own sample
    X, y = make_problem(60, 3, 5)
    kern = Kernel("rbf", sigma=0.8)
    K = kern(X)
    w = np.random.default_rng(2).uniform(0.3, 2.0, 60)
    w[[0, 3, 4, 17, 40, 59]] = 0.0
    keep = w > 0
    kw = {"X": X, "kernel": kern} if native else {"K": K}
    sol = fit_l1_svm(y, 2.0, sample_weight=w, tol=1e-10, **kw)
    kw_ref = {"X": X[keep], "kernel": kern} if native else {"K": K[np.ix_(keep, keep)]}
    ref = fit_l1_svm(y[keep], 2.0, sample_weight=w[keep], tol=1e-10, **kw_ref)
    assert np.all(sol.alpha[~keep] == 0.0)
    assert np.allclose(sol.alpha[keep], ref.alpha, atol=1e-10)
    assert np.isclose(sol.b, ref.b, atol=1e-10)
    assert np.allclose(sol.decision_function(K), ref.decision_function(K[:, keep]), atol=1e-10)
    assert abs(y @ sol.alpha) < 1e-8


def test_l1_adapter_one_class_with_positive_weight():
    X, y = make_problem(20, 2, 0)
    w = np.where(y > 0, 1.0, 0.0)
    with pytest.raises(ValueError, match="both classes with positive weight"):
        fit_l1_svm(y, 1.0, K=np.eye(20), sample_weight=w)


def test_l1_adapter_errors():
    X, y = make_problem(10, 2, 0)
    with pytest.raises(ValueError, match="either K or both X and kernel"):
        fit_l1_svm(y, 1.0)
    with pytest.raises(ValueError, match="-1 or \\+1"):
        fit_l1_svm(np.arange(10.0), 1.0, K=np.eye(10))
    with pytest.raises(ValueError, match="negative values; weights must be >= 0"):
        fit_l1_svm(y, 1.0, K=np.eye(10), sample_weight=-np.ones(10))


def test_huge_C_precomputed_svc_equals_l2():
    X, y = make_problem(40, 2, 3)
    K = Kernel("rbf", sigma=1.0)(X)
    sol = fit_l2_svm(K, y, 4.0)
    svc = SVC(kernel="precomputed", C=1e8, tol=1e-8).fit(K + np.eye(40) / 4.0, y)
    a = np.zeros(40)
    a[svc.support_] = np.abs(svc.dual_coef_[0])
    assert np.allclose(a, sol.alpha, atol=1e-4)


@pytest.mark.parametrize("seed", range(8))
def test_l2_hinge_start_reaches_the_all_points_solution(seed):
    """Without a warm start the Newton iteration starts from libsvm's support vectors; the
    L2-SVM's solution is unique, so it must end where the start from all points ends."""
    X, y = make_problem(80, 3, seed, imbalance=0.3 if seed % 2 else 0.5)
    K = Kernel("rbf", sigma=[0.5, 1.0, 3.0][seed % 3])(X)
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.2, 3.0, size=80) if seed % 4 < 2 else None
    if w is not None:
        w[:3] = 0.0  # inactive points: libsvm never sees them
    C = [0.1, 1.0, 30.0, 1e4][seed % 4]
    hinge = fit_l2_svm(K, y, C, sample_weight=w)
    every = fit_l2_svm(K, y, C, sample_weight=w, init_support=np.arange(80))
    assert np.array_equal(hinge.support, every.support)
    np.testing.assert_allclose(hinge.alpha, every.alpha, rtol=1e-9, atol=1e-12)
    assert hinge.b == pytest.approx(every.b, rel=1e-9, abs=1e-12)
    if w is not None:
        assert not hinge.alpha[:3].any()


@pytest.mark.parametrize("seed", range(4))
def test_l2_on_columns_of_points_starts_from_libsvm_on_the_points(seed):
    """A kernel by columns that knows its points gets the hinge-loss start from libsvm on
    the points (same kernel, C, weights), reads only about the support columns, and ends at
    the solution on the whole matrix."""
    X, y = make_problem(300, 2, seed, noise=0.1)
    kernel = (
        Kernel("rbf", sigma=1.0) if seed < 3 else Kernel("poly", degree=3, gamma=0.5, coef0=1.0)
    )
    w = None
    if seed % 2:
        w = np.random.default_rng(seed).uniform(0.2, 3.0, size=300)
        w[:5] = 0.0
    ref = fit_l2_svm(kernel(X), y, 50.0, sample_weight=w)
    K = KernelColumns.of(X, kernel)
    sol = fit_l2_svm(K, y, 50.0, sample_weight=w)
    assert np.array_equal(sol.support, ref.support)
    np.testing.assert_allclose(sol.alpha, ref.alpha, rtol=1e-8, atol=1e-10)
    assert sol.b == pytest.approx(ref.b, rel=1e-8, abs=1e-10)
    assert sol.support.sum() <= K.n_computed < 0.6 * 300  # all 300 from all points
    if w is not None:
        assert not sol.alpha[:5].any()
    # without its points the kernel by columns starts from all of them: same solution
    blind = KernelColumns(300, K._compute)
    every = fit_l2_svm(blind, y, 50.0, sample_weight=w)
    np.testing.assert_allclose(every.alpha, ref.alpha, rtol=1e-8, atol=1e-10)


def test_l2_on_kernel_columns_reads_only_the_columns_it_needs():
    X, y = make_problem(300, 2, 3, noise=0.1)
    D2 = squared_distances(X)
    full = rbf_from_sqdist(D2, 1.0)
    start = fit_l2_svm(full, y, 100.0)
    K = rbf_columns(D2, 1.0)
    sol = fit_l2_svm(K, y, 120.0, init_support=start.support)
    ref = fit_l2_svm(full, y, 120.0, init_support=start.support)
    assert np.array_equal(sol.alpha, ref.alpha) and sol.b == ref.b  # the same arithmetic
    assert sol.support.sum() <= K.n_computed < 150  # the support columns (and new ones)
    # the fallback solver reads the diagonal: it takes the whole matrix, same result
    K = rbf_columns(D2, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fb = fit_l2_svm(K, y, 120.0, init_support=start.support[::-1].copy(), max_iter=1)
        fb_ref = fit_l2_svm(full, y, 120.0, init_support=start.support[::-1].copy(), max_iter=1)
    np.testing.assert_array_equal(fb.alpha, fb_ref.alpha)
    np.testing.assert_allclose(fb.alpha, ref.alpha, rtol=1e-6, atol=1e-9)


# --- input validation at the public boundary ------------------------------------------------
def _small_problem():
    X, y = make_problem(20, 2, 0)
    return rbf_from_sqdist(squared_distances(X), 1.0), y


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("warm", [False, True])
def test_fit_l2_svm_rejects_non_finite_K(bad, warm):
    K, y = _small_problem()
    K[0, 1] = K[1, 0] = bad
    init = np.arange(y.size) if warm else None
    with pytest.raises(ValueError, match="K contains NaN or infinity"):
        fit_l2_svm(K, y, 1.0, init_support=init)


def test_fit_l1_svm_rejects_non_finite_K():
    K, y = _small_problem()
    K[0, 1] = K[1, 0] = np.nan
    with pytest.raises(ValueError, match="K contains NaN or infinity"):
        fit_l1_svm(y, 1.0, K=K)


def test_fit_l2_svm_rejects_non_finite_kernel_columns():
    X, y = make_problem(20, 2, 0)
    D2 = squared_distances(X)
    D2[0, 1] = D2[1, 0] = np.nan
    with pytest.raises(ValueError, match="kernel matrix K contains NaN or infinity"):
        fit_l2_svm(rbf_columns(D2, 1.0), y, 1.0, init_support=np.arange(y.size))


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"sample_weight": np.zeros(20)}, ValueError, "sample_weight is all zero"),
        ({"init_support": np.array([0, 50])}, ValueError, r"init_support indices .* \[0, 20\)"),
        ({"init_support": np.ones(5, dtype=bool)}, ValueError, r"mask needs shape \(20,\)"),
        ({"init_support": np.array([0.0, 1.0])}, TypeError, "boolean mask or integer"),
        ({"C": "1"}, TypeError, "C must be a real number"),
    ],
)
def test_fit_l2_svm_bad_arguments(kwargs, exc, match):
    K, y = _small_problem()
    args = {"C": 1.0, **kwargs}
    C = args.pop("C")
    with pytest.raises(exc, match=match):
        fit_l2_svm(K, y, C, **args)


def test_fit_l2_svm_empty_and_not_psd():
    K, y = _small_problem()
    with pytest.raises(ValueError, match="y is empty"):
        fit_l2_svm(np.zeros((0, 0)), np.zeros(0), 1.0)
    with pytest.raises(ValueError, match="y is empty"):
        fit_l1_svm(np.zeros(0), 1.0, K=np.zeros((0, 0)))
    with pytest.raises(np.linalg.LinAlgError, match="must be symmetric positive semi-definite"):
        fit_l2_svm(-K, y, 1.0)


def test_fit_l2_svm_accepts_indices_like_the_mask():
    K, y = _small_problem()
    ref = fit_l2_svm(K, y, 1.0)
    sol = fit_l2_svm(K, y, 1.0, init_support=ref.support_indices)
    assert np.array_equal(sol.alpha, fit_l2_svm(K, y, 1.0, init_support=ref.support).alpha)


def test_mirror_lower_needs_a_square_matrix():
    from svmtune.svm import mirror_lower

    with pytest.raises(ValueError, match="square 2-D array"):
        mirror_lower(np.ones(3))
