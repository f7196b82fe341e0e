"""Closed-form leave-one-group-out outputs of the L2-SVM and their gradient against their
definitions: retraining without each group, central finite differences."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmtune.kernels import rbf_columns, rbf_from_sqdist, squared_distances
from svmtune.loo.brute import brute_force_lgo
from svmtune.loo.closed_form import closed_form_loo, loo_exact_mask
from svmtune.loo.rbsvm import rbsvm_objective
from svmtune.loo.rbsvm_gradient import rbf_l2_derivatives
from svmtune.loo.rbsvm_groups import (
    closed_form_lgo,
    group_codes,
    lgo_exact_mask,
    lgo_gradient,
    lowrank_lgo,
    lowrank_lgo_gradient,
)
from svmtune.loo.rbsvm_lowrank import lowrank_rbsvm_objective
from svmtune.lowrank import fit_l2_svm_lowrank, nystroem_factor
from svmtune.methods.base import ovr_tasks
from svmtune.svm import fit_l2_svm

from ..conftest import make_problem
from .test_rbsvm import _fd_gradient as _fd


def _stable_groups(K, y, C, groups, full, w=None):
    """Groups whose removal leaves every other point's support status unchanged."""
    w = np.ones(len(y)) if w is None else w
    stable = []
    for g in np.unique(groups):
        keep = groups != g
        sol = fit_l2_svm(K[np.ix_(keep, keep)], y[keep], C, sample_weight=w[keep])
        if np.array_equal(sol.support, full.support[keep]):
            stable.append(g)
    return np.array(stable)


@pytest.mark.parametrize(
    "seed, sigma, C, size, weighted, mixed",
    [
        (0, 1.0, 0.05, 4, False, 0),  # every point a support vector
        (1, 0.8, 0.5, 2, False, 0),
        (2, 1.5, 4.0, 2, False, 2),
        (3, 1.0, 2.0, 3, True, 1),
    ],
)
def test_closed_form_equals_retraining_without_each_stable_group(
    seed, sigma, C, size, weighted, mixed
):
    n = 48
    X, y = make_problem(n, 2, seed)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, n) if weighted else None
    groups = np.random.default_rng(seed + 10).permutation(np.repeat(np.arange(n // size), size))
    K = rbf_from_sqdist(squared_distances(X), sigma)
    sol = fit_l2_svm(K, y, C, sample_weight=w)
    r = closed_form_lgo(sol, K, groups)
    ref = brute_force_lgo(K, y, C, groups, sample_weight=w)
    kept = _stable_groups(K, y, C, groups, sol, w)
    stable = np.isin(groups, kept)
    # the comparison covers groups that hold support vectors, and groups that hold both
    assert np.unique(groups[stable & sol.support]).size >= 3
    both = [g for g in kept if 0 < sol.support[groups == g].sum() < size]
    assert len(both) >= mixed
    np.testing.assert_allclose(r[stable], ref[stable], atol=1e-6, rtol=0)
    # the closed-form KKT certificate finds exactly the stable groups, without retraining
    np.testing.assert_array_equal(lgo_exact_mask(sol, K, groups), stable)
    assert (~stable).any() or C < 1
    if C < 1:
        assert stable.all() and sol.support.all()


def test_groups_of_one_are_the_single_row_closed_form():
    X, y = make_problem(40, 3, 5)
    D2 = squared_distances(X)
    K = rbf_from_sqdist(D2, 1.2)
    sol = fit_l2_svm(K, y, 3.0)
    assert 0 < sol.support.sum() < 40
    np.testing.assert_allclose(
        closed_form_lgo(sol, K, np.arange(40)), closed_form_loo(sol, K), atol=1e-10
    )
    np.testing.assert_array_equal(lgo_exact_mask(sol, K, np.arange(40)), loo_exact_mask(sol, K))
    theta = np.log([1.2, 3.0])
    plain = rbsvm_objective(D2, [y], theta)
    grouped = rbsvm_objective(D2, [y], theta, groups=np.arange(40)[::-1])
    np.testing.assert_allclose(grouped.value, plain.value, rtol=1e-10)
    np.testing.assert_allclose(grouped.grad, plain.grad, rtol=1e-7)


def test_a_group_without_support_vectors_keeps_the_full_model_outputs():
    X, y = make_problem(40, 2, 6)
    K = rbf_from_sqdist(squared_distances(X), 1.0)
    sol = fit_l2_svm(K, y, 5.0)
    non_sv = np.flatnonzero(~sol.support)
    assert non_sv.size >= 4
    groups = np.arange(40)
    groups[non_sv[:4]] = -1  # one group of four non-support vectors
    r = closed_form_lgo(sol, K, groups)
    np.testing.assert_allclose(r[non_sv[:4]], sol.decision_function(K[non_sv[:4]]), atol=1e-10)


@pytest.mark.parametrize(
    "seed, sigma, C, n_groups, loss, weighted",
    [
        (0, 1.0, 1.0, 10, "cross_entropy", False),
        (1, 0.6, 6.0, 7, "cross_entropy", False),
        (2, 2.0, 0.3, 12, "cross_entropy", True),
        (3, 0.9, 3.0, 5, "squared", False),
        (4, 1.3, 10.0, 20, "cross_entropy", True),
    ],
)
def test_gradient_matches_central_differences(seed, sigma, C, n_groups, loss, weighted):
    n = 40
    X, y = make_problem(n, 3, seed)
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    if weighted:
        w[:3] = 0.0  # rows of weight 0: in no fit and no loss term, still in their group
    groups = rng.integers(0, n_groups, n)
    kw = {"loss": loss, "sample_weight": w, "groups": groups}
    D2 = squared_distances(X)
    theta = np.log([sigma, C])
    obj = rbsvm_objective(D2, [y], theta, **kw)
    fd = _fd(D2, [y], theta, obj, **kw)
    np.testing.assert_allclose(obj.grad, fd, rtol=1e-5, atol=1e-9)
    assert np.all(np.abs(obj.grad) > 1e-6)


def test_multiclass_gradient_and_kernel_columns():
    rng = np.random.default_rng(7)
    centers = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 1.8]])
    yk = np.repeat(np.arange(3), 16)
    X = centers[yk] + rng.normal(scale=0.8, size=(48, 2))
    groups = np.array([f"subject {i % 12}" for i in range(48)])  # text labels
    tasks = ovr_tasks(yk)
    D2 = squared_distances(X)
    theta = np.log([0.9, 4.0])
    obj = rbsvm_objective(D2, tasks, theta, groups=groups)
    np.testing.assert_allclose(obj.grad, _fd(D2, tasks, theta, obj, groups=groups), rtol=1e-5)
    # the same numbers from a kernel read by columns
    sol = obj.solutions[0]
    K = rbf_from_sqdist(D2, 0.9)
    np.testing.assert_allclose(
        closed_form_lgo(sol, rbf_columns(D2, 0.9), groups), closed_form_lgo(sol, K, groups)
    )


def test_gradient_with_a_generic_kernel_perturbation():
    """``lgo_gradient`` differentiates sum c_j r_j for any symmetric dK, diagonal included."""
    X, y = make_problem(30, 2, 11)
    K0 = rbf_from_sqdist(squared_distances(X), 1.0)
    A = np.random.default_rng(3).normal(size=(30, 30)) * 0.02
    A = A + A.T
    c = np.random.default_rng(4).normal(size=30)
    groups = np.repeat(np.arange(10), 3)
    C = 3.0
    sol = fit_l2_svm(K0, y, C)
    S = np.flatnonzero(sol.support)
    got = lgo_gradient(sol, K0, [A[:, S], -sol.H_diag[S]], c, groups)
    h = 1e-6
    fd = []
    for dK, dC in ((A, 0.0), (0.0, 1.0)):
        vals = []
        for t in (h, -h):
            Kt = K0 + t * dK
            st = fit_l2_svm(Kt, y, C * np.exp(t * dC), init_support=sol.support)
            assert np.array_equal(st.support, sol.support)
            vals.append(c @ closed_form_lgo(st, Kt, groups))
        fd.append((vals[0] - vals[1]) / (2 * h))
    np.testing.assert_allclose(got, fd, rtol=1e-6)
    # the derivative rows from rbf_l2_derivatives have the shapes lgo_gradient takes
    D2 = squared_distances(X)
    assert len(lgo_gradient(sol, K0, rbf_l2_derivatives(K0, D2, 1.0, sol), c, groups)) == 2


def test_a_group_holding_every_support_vector_gets_zero_with_a_warning():
    X, y = make_problem(30, 2, 2)
    K = rbf_from_sqdist(squared_distances(X), 1.0)
    sol = fit_l2_svm(K, y, 5.0)
    groups = np.where(sol.support, 0, np.arange(1, 31))
    with pytest.warns(RuntimeWarning, match="removes every support vector"):
        r = closed_form_lgo(sol, K, groups)
    assert np.all(r[sol.support] == 0.0)
    np.testing.assert_allclose(r[~sol.support], sol.decision_function(K[~sol.support]))
    with pytest.warns(RuntimeWarning, match="removes every support vector"):
        np.testing.assert_array_equal(lgo_exact_mask(sol, K, groups), ~sol.support)
    with pytest.warns(RuntimeWarning, match="removes every support vector"):
        g = lgo_gradient(sol, K, [-sol.H_diag[sol.support]], np.ones(30), groups)
    assert np.all(np.isfinite(g))


def test_duplicated_points_in_groups_give_a_finite_objective():
    X, y = make_problem(20, 2, 3)
    X = np.vstack([X, X])
    y = np.concatenate([y, y])
    groups = np.tile(np.arange(20), 2)  # each point and its copy in one group
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        obj = rbsvm_objective(squared_distances(X), [y], np.log([1.0, 100.0]), groups=groups)
    assert np.isfinite(obj.value) and np.all(np.isfinite(obj.grad))


def test_bad_groups_are_refused():
    X, y = make_problem(20, 2, 0)
    D2 = squared_distances(X)
    K = rbf_from_sqdist(D2, 1.0)
    sol = fit_l2_svm(K, y, 1.0)
    with pytest.raises(ValueError, match=r"groups has shape \(19,\), expected \(20,\)"):
        closed_form_lgo(sol, K, np.arange(19))
    with pytest.raises(ValueError, match="groups has 1 missing value"):
        closed_form_lgo(sol, K, [None] + list(range(19)))
    with pytest.raises(ValueError, match="groups is None"):
        closed_form_lgo(sol, K, None)
    with pytest.raises(ValueError, match="groups need nonsupport='model'"):
        rbsvm_objective(D2, [y], [0.0, 0.0], groups=np.arange(20), nonsupport="label")
    with pytest.raises(ValueError, match="dLdr has shape"):
        lgo_gradient(sol, K, [], np.ones(3), np.arange(20))
    with pytest.raises(ValueError, match=r"groups has shape \(3,\), expected \(20,\)"):
        brute_force_lgo(K, y, 1.0, np.arange(3))
    np.testing.assert_array_equal(group_codes(["b", "a", "b"], 3), [0, 1, 0])  # first seen


# ---------------------------------------------------------------------------------------------
# low rank: the same closed form through the Woodbury factor
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma, C", [(1.0, 1.0), (0.7, 5.0), (2.0, 0.3)])
def test_lowrank_at_full_rank_is_the_exact_closed_form(sigma, C):
    X, y = make_problem(40, 2, 1)
    D2 = squared_distances(X)
    groups = np.random.default_rng(0).integers(0, 8, 40)
    nf = nystroem_factor(D2, D2, sigma, jitter=0.0)  # every point a landmark: Z Z^T = K
    K = rbf_from_sqdist(D2, sigma)
    low, exact = fit_l2_svm_lowrank(nf.Z, y, C), fit_l2_svm(K, y, C)
    assert np.array_equal(low.support, exact.support)
    np.testing.assert_allclose(
        lowrank_lgo(low, nf.Z, groups), closed_form_lgo(exact, K, groups), atol=1e-8
    )
    c = np.random.default_rng(1).normal(size=40)
    want = lgo_gradient(exact, K, rbf_l2_derivatives(K, D2, sigma, exact), c, groups)
    np.testing.assert_allclose(lowrank_lgo_gradient(low, nf, c, groups), want, rtol=1e-7)


@pytest.mark.parametrize("weighted", [False, True])
def test_lowrank_gradient_matches_central_differences(weighted):
    X, y = make_problem(60, 3, 2)
    landmarks = np.arange(0, 60, 4)  # rank 15
    D2_nm, D2_mm = squared_distances(X, X[landmarks]), squared_distances(X[landmarks])
    w = None
    if weighted:
        w = np.random.default_rng(0).uniform(0.5, 2.0, 60)
        w[:3] = 0.0
    groups = np.random.default_rng(1).integers(0, 10, 60)
    kw = {"groups": groups, "sample_weight": w}
    for theta in (np.log([1.0, 2.0]), np.log([0.7, 8.0])):
        obj = lowrank_rbsvm_objective(D2_nm, D2_mm, [y], theta, **kw)
        fd = np.empty(2)
        for k in range(2):
            e = np.zeros(2)
            e[k] = 1e-5
            vals = []
            for sgn in (1.0, -1.0):
                o = lowrank_rbsvm_objective(
                    D2_nm,
                    D2_mm,
                    [y],
                    theta + sgn * e,
                    init_support=obj.supports,
                    gradient=False,
                    **kw,
                )
                assert np.array_equal(o.supports[0], obj.supports[0])
                vals.append(o.value)
            fd[k] = (vals[0] - vals[1]) / 2e-5
        np.testing.assert_allclose(obj.grad, fd, rtol=1e-5, atol=1e-9)
    with pytest.raises(ValueError, match="groups need nonsupport='model'"):
        lowrank_rbsvm_objective(D2_nm, D2_mm, [y], theta, nonsupport="label", **kw)
