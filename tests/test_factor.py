"""The updatable factor of the L2-SVM's extended support-set matrix (RBSVM eq. (22)).

An updated factor (:meth:`ExtendedFactor.add`, :meth:`ExtendedFactor.remove`) must equal a
fresh factorisation of the same support set to 1e-10 (relative) over random add/remove
sequences, including the removal of the last point of a class and near-singular ``H``
(duplicated rows, huge C), and the solver that uses it must still satisfy its KKT conditions
and agree with the general QP reference.
"""

from __future__ import annotations

import numpy as np
import pytest

from svmtune._factor import UPDATE_PIVOT_TOL, ExtendedFactor
from svmtune.kernels import Kernel
from svmtune.svm import _support_factor, fit_l2_svm

from .conftest import assert_l2_kkt, make_problem
from .test_svm import l2_objective, qp_l2_dual

RTOL = 1e-10


def rel(a, b) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def assert_equals_fresh(fac: ExtendedFactor, H: np.ndarray) -> None:
    """``fac`` against a fresh factorisation of ``H[index, index]``: the Cholesky factor in
    the factor's own order to ``RTOL``, and ``u``, ``s``, ``M^{-1}``, its diagonal and a solve
    in sorted order to ``RTOL`` -- or, for a nearly singular ``H``, to ``1e-15 cond(H)``:
    two factors equal to ``RTOL`` give inverses that differ by up to ``cond(H)`` times that
    (the forward error of any backward-stable solve, a fresh factorisation's included)."""
    S = fac.index
    assert np.all(np.diff(S) > 0)
    fidx = fac.factor_index
    fresh_L = np.linalg.cholesky(H[np.ix_(fidx, fidx)])
    assert rel(np.tril(fac.chol[0]), fresh_L) <= RTOL
    HS = H[np.ix_(S, S)]
    fresh = ExtendedFactor.from_H(HS)
    tol = max(RTOL, 1e-15 * np.linalg.cond(HS))
    assert rel(fac.u, fresh.u) <= tol
    assert fac.s == pytest.approx(fresh.s, rel=tol)
    assert rel(fac.inverse(), fresh.inverse()) <= tol
    Minv = fresh.inverse()
    # entries of M^{-1} (zero for a single point): relative to its norm
    diag_err = np.linalg.norm(fac.inverse_diagonal() - fresh.inverse_diagonal())
    assert diag_err <= tol * np.linalg.norm(Minv)
    rhs = np.arange(S.size, dtype=float)
    x, z = fac.solve(rhs, 1.5)
    xf, zf = fresh.solve(rhs, 1.5)
    assert rel(np.append(x, z), np.append(xf, zf)) <= tol


def rbf_H(X, sigma, C):
    K = Kernel("rbf", sigma=sigma)(X)
    return K + np.eye(len(X)) / C


def random_walk(H, rng, steps, start_size, max_batch=3):
    """A random sequence of additions and removals from a random start; checks every step."""
    n = H.shape[0]
    S = np.sort(rng.choice(n, start_size, replace=False))
    fac = ExtendedFactor.from_block(H[np.ix_(S, S)], S)
    n_add = n_remove = 0
    for _ in range(steps):
        out = np.setdiff1d(np.arange(n), fac.index)
        if out.size and (fac.index.size <= 2 or rng.random() < 0.5):
            new = rng.choice(out, min(out.size, rng.integers(1, max_batch + 1)), replace=False)
            upd = fac.add(new, H[np.ix_(fac.index, new)], H[np.ix_(new, new)])
            assert upd is not None
            fac, n_add = upd, n_add + 1
        else:
            k = min(fac.index.size - 1, rng.integers(1, max_batch + 1))
            fac, n_remove = fac.remove(rng.choice(fac.index, k, replace=False)), n_remove + 1
        assert_equals_fresh(fac, H)
    return n_add, n_remove


@pytest.mark.parametrize("seed", range(8))
def test_random_add_remove_sequences_equal_fresh_factorisations(seed):
    rng = np.random.default_rng(seed)
    n = 30 + 5 * seed
    X = rng.normal(size=(n, 3))
    H = rbf_H(X, sigma=float(rng.uniform(0.5, 3.0)), C=float(2.0 ** rng.uniform(-3, 8)))
    n_add, n_remove = random_walk(H, rng, steps=40, start_size=n // 3)
    assert n_add > 5 and n_remove > 5


def test_removal_of_the_last_point_of_a_class():
    X, y = make_problem(30, 2, 1)
    H = rbf_H(X, 1.0, 10.0)
    pos = np.flatnonzero(y > 0)
    neg = np.flatnonzero(y < 0)
    S = np.sort(np.r_[pos[:1], neg[:8]])  # one point of class +1
    fac = ExtendedFactor.from_block(H[np.ix_(S, S)], S)
    fac = fac.remove(pos[:1])
    assert not np.isin(pos, fac.index).any()
    assert_equals_fresh(fac, H)
    # ... and the first point of the other class in the middle, then the last two
    fac = fac.remove(fac.index[:1]).remove(fac.index[-2:])
    assert_equals_fresh(fac, H)


def test_removal_down_to_one_point_and_first_and_last_positions():
    rng = np.random.default_rng(5)
    H = rbf_H(rng.normal(size=(12, 2)), 1.0, 3.0)
    S = np.arange(12)
    fac = ExtendedFactor.from_block(H, S)
    for pts in ([0], [11], [5, 6], [1, 10], [2, 3, 4, 7, 8]):
        fac = fac.remove(np.array(pts))
        assert_equals_fresh(fac, H)
    assert fac.index.tolist() == [9]


@pytest.mark.parametrize("C", [1e4, 1e8])
def test_near_singular_duplicated_rows_and_huge_C(C):
    """Duplicated rows make ``K`` singular; with a huge C, ``H = K + I / C`` is nearly so.
    Removals stay accurate; an addition whose pivot is at the round-off of its diagonal
    (a duplicate of a point in the set) is refused, and the solver refactorises."""
    rng = np.random.default_rng(2)
    X0 = rng.normal(size=(20, 2))
    X = np.vstack([X0, X0[:6]])  # rows 20..25 duplicate rows 0..5
    H = rbf_H(X, 1.0, C)
    # a set with the duplicated pairs in it: removals
    S = np.r_[0:4, 8:14, 20:24]
    fac = ExtendedFactor.from_block(H[np.ix_(S, S)], S)
    for pts in ([20], [2, 23], [8]):
        fac = fac.remove(np.array(pts))
        assert_equals_fresh(fac, H)
    # adding the duplicate of a point in the set: pivot 2 / C against H_ii = 1 + 1 / C
    assert 2.0 / C < UPDATE_PIVOT_TOL * (1 + 1 / C) or C == 1e4
    upd = fac.add(np.array([20]), H[np.ix_(fac.index, [20])], H[np.ix_([20], [20])])  # twin of 0
    if C == 1e8:
        assert upd is None
        S2 = np.union1d(fac.index, [20])
        via, updated = _support_factor(H - np.eye(len(X)) / C, np.full(len(X), 1 / C), S2, fac)
        assert not updated  # refused: a fresh factorisation
        assert_equals_fresh(via, H)
    else:
        assert upd is not None
        assert_equals_fresh(upd, H)
    # adding points that are not duplicates is accepted
    new = np.array([15, 16])
    upd = fac.add(new, H[np.ix_(fac.index, new)], H[np.ix_(new, new)])
    assert upd is not None
    assert_equals_fresh(upd, H)


def test_random_walk_with_duplicated_rows_and_huge_C():
    rng = np.random.default_rng(9)
    X0 = rng.normal(size=(25, 3))
    X = np.vstack([X0, X0[:10]])
    H = rbf_H(X, 2.0, 1e6)
    # only points without their duplicate are added (the others are refused, tested above)
    n = H.shape[0]
    S = np.sort(rng.choice(np.arange(10, 25), 5, replace=False))
    fac = ExtendedFactor.from_block(H[np.ix_(S, S)], S)
    for _ in range(30):
        twins = {i: i + 25 for i in range(10)} | {i + 25: i for i in range(10)}
        out = [i for i in range(n) if i not in fac.index and twins.get(i, -1) not in fac.index]
        if out and (fac.index.size <= 2 or rng.random() < 0.5):
            new = rng.choice(out, 1)
            upd = fac.add(new, H[np.ix_(fac.index, new)], H[np.ix_(new, new)])
            if upd is not None:
                fac = upd
        else:
            fac = fac.remove(rng.choice(fac.index, 1))
        assert_equals_fresh(fac, H)


@pytest.mark.parametrize("seed", range(6))
def test_solver_with_updates_keeps_kkt_and_matches_qp(seed, monkeypatch):
    """Warm starts far from the solution make the active-set iteration add and remove points
    (through factor updates); the solution still satisfies the KKT conditions and matches
    the general QP reference.  On these small sets a fresh factorisation is estimated
    cheaper than a Givens update (:data:`svmtune.svm.GIVENS_COST`,
    :data:`svmtune.svm.GIVENS_COLUMN_COST`), so the estimate is switched off here to test
    the updates."""
    monkeypatch.setattr("svmtune.svm.GIVENS_COST", 0.0)
    monkeypatch.setattr("svmtune.svm.GIVENS_COLUMN_COST", 0.0)
    updates = []
    orig = ExtendedFactor.remove
    monkeypatch.setattr(
        ExtendedFactor, "remove", lambda self, pts: updates.append(1) or orig(self, pts)
    )
    rng = np.random.default_rng(seed)
    n = 60 + 10 * seed
    X, y = make_problem(n, 3, seed, imbalance=0.35)
    K = Kernel("rbf", sigma=float(rng.uniform(0.5, 2.0)))(X)
    C = float(2.0 ** rng.uniform(-2, 6))
    a_ref, obj_ref = qp_l2_dual(K, y, C)
    cold = fit_l2_svm(K, y, C)
    # the cold solution's support set with a tenth of it swapped for other points
    S = cold.support.copy()
    idx = np.flatnonzero(S)
    out = np.flatnonzero(~cold.support)
    k = max(1, min(idx.size // 10, out.size))
    S[rng.choice(idx, k, replace=False)] = False
    S[rng.choice(out, k, replace=False)] = True
    for init in (S, cold.support):
        sol = fit_l2_svm(K, y, C, init_support=init)
        assert l2_objective(sol, K) == pytest.approx(obj_ref, rel=1e-6, abs=1e-8)
        assert np.allclose(sol.alpha, a_ref, atol=1e-5 * max(1.0, a_ref.max()))
        assert_l2_kkt(sol, K)
        assert np.array_equal(sol.support, cold.support)
        assert np.allclose(sol.alpha, cold.alpha, atol=1e-9 * max(1.0, cold.alpha.max()))
        assert_equals_fresh(sol.factor, K + np.diag(sol.H_diag))
    assert updates  # the warm start off the solution was finished by factor updates


def test_solver_counts_one_fresh_factorisation_when_warm(monkeypatch):
    """A warm start a few points off the solution: one fresh factorisation, the rest updates."""
    X, y = make_problem(200, 3, 4, imbalance=0.4)
    K = Kernel("rbf", sigma=1.0)(X)
    cold = fit_l2_svm(K, y, 5.0)
    init = cold.support.copy()
    init[np.flatnonzero(init)[:2]] = False
    calls = []
    orig = ExtendedFactor.from_H.__func__
    monkeypatch.setattr(
        ExtendedFactor, "from_H", classmethod(lambda cls, H: calls.append(1) or orig(cls, H))
    )
    sol = fit_l2_svm(K, y, 5.0, init_support=init)
    assert sol.n_iter >= 2
    assert len(calls) == 1
    assert np.array_equal(sol.support, cold.support)


def test_update_cost_estimate():
    """Additions and a few late removals are updates; many early removals on a large set, or
    a change of most of a small set, are a fresh factorisation."""
    from svmtune.svm import _update_is_cheaper

    assert _update_is_cheaper(700, 705, np.array([], dtype=int), 5)
    assert _update_is_cheaper(700, 699, np.array([400]), 0)
    assert not _update_is_cheaper(700, 620, np.arange(0, 80), 0)
    assert not _update_is_cheaper(10, 12, np.arange(0, 5), 7)


def test_solver_replaces_an_inaccurate_update_by_a_fresh_factorisation(monkeypatch):
    """An update whose factor is off (simulated: the factor scaled by 1 + 1e-6) fails
    the solver's KKT-residual test and is replaced by a fresh factorisation: same solution."""
    X, y = make_problem(120, 3, 6, imbalance=0.4)
    K = Kernel("rbf", sigma=1.0)(X)
    cold = fit_l2_svm(K, y, 4.0)
    init = cold.support.copy()
    init[np.flatnonzero(init)[:3]] = False
    monkeypatch.setattr("svmtune.svm.GIVENS_COST", 0.0)
    monkeypatch.setattr("svmtune.svm.GIVENS_COLUMN_COST", 0.0)
    orig = ExtendedFactor._from_factor_order.__func__  # the end of every add and remove
    bad = []

    def bad_update(cls, L, fidx):
        bad.append(1)
        return orig(cls, L * (1.0 + 1e-6), fidx)

    monkeypatch.setattr(ExtendedFactor, "_from_factor_order", classmethod(bad_update))
    fresh = []
    orig_block = ExtendedFactor.from_block.__func__
    monkeypatch.setattr(
        ExtendedFactor,
        "from_block",
        classmethod(lambda cls, H, idx: fresh.append(1) or orig_block(cls, H, idx)),
    )
    sol = fit_l2_svm(K, y, 4.0, init_support=init)
    assert bad  # the iteration updated the factor ...
    assert len(fresh) >= 2  # ... and replaced the bad update by a fresh factorisation
    assert np.array_equal(sol.support, cold.support)
    assert np.allclose(sol.alpha, cold.alpha, atol=1e-9 * max(1.0, cold.alpha.max()))
    assert_equals_fresh(sol.factor, K + np.diag(sol.H_diag))


@pytest.mark.parametrize("m, start", [(1, 0), (2, 1), (7, 0), (40, 13), (200, 0), (301, 150)])
def test_rank_one_update_equals_cholesky_of_the_updated_matrix(m, start):
    """The Givens update of the trailing block (BLAS ``drot`` per column) equals the
    Cholesky factor of ``L22 L22^T + x x^T`` to 1e-10, and leaves the leading columns as
    they were."""
    from svmtune._factor import _rank_one_update

    rng = np.random.default_rng(m + start)
    A = rng.normal(size=(m, m + 3))
    L = np.asfortranarray(np.linalg.cholesky(A @ A.T / m + 0.1 * np.eye(m)))
    x = rng.normal(size=m) * 3.0
    L_old, x_old = L.copy(order="F"), x.copy()
    _rank_one_update(L, x, start)
    T = L_old[start:, start:]
    ref = np.linalg.cholesky(T @ T.T + np.outer(x_old[start:], x_old[start:]))
    assert rel(np.tril(L[start:, start:]), ref) <= RTOL
    np.testing.assert_array_equal(L[:, :start], L_old[:, :start])
    assert np.all(np.triu(L, 1) == 0.0)


def test_rank_one_update_refuses_arrays_it_would_copy():
    """BLAS through f2py rotates copies of non-contiguous arrays: refused, not lost."""
    from svmtune._factor import _rank_one_update

    L = np.eye(4)  # C-ordered: its columns are not contiguous
    with pytest.raises(ValueError, match="Fortran-ordered"):
        _rank_one_update(L, np.ones(4), 0)
    with pytest.raises(ValueError, match="Fortran-ordered"):
        _rank_one_update(np.asfortranarray(L), np.ones(8)[::2], 0)


@pytest.mark.parametrize("m", [0, 1, 5, 127, 128, 129, 300])
@pytest.mark.parametrize("order", ["F", "C", "view"])
def test_mirror_lower_copies_the_lower_triangle_up(m, order):
    """Every memory layout, sizes around the block width: the result is exactly the
    symmetric matrix of the lower triangle (a copy, no arithmetic on the values)."""
    from svmtune._factor import _MIRROR_BLOCK, mirror_lower

    assert _MIRROR_BLOCK == 128  # the sizes above straddle it
    rng = np.random.default_rng(m)
    low = np.tril(rng.normal(size=(m, m)))
    if order == "view":
        big = np.zeros((2 * m, 2 * m))
        big[::2, ::2] = low
        A = big[::2, ::2]
    else:
        A = np.array(low, order=order)
    out = mirror_lower(A)
    assert out is A
    np.testing.assert_array_equal(A, low + np.tril(low, -1).T)


def test_rounding_level_jitter_is_not_warned_and_larger_jitter_says_what_to_do():
    """A support set of duplicated rows at a huge C: H = 1 1^T + 1e-17 I is singular in
    floating point, and the 1e-12 jitter that factors it is within Cholesky's own backward
    error (no warning, the solve as accurate as rounding allows).  A matrix that needs far
    more is warned with what it means and what to change."""
    import warnings

    from svmtune._factor import _cholesky

    m = 100
    H = np.ones((m, m)) + 1e-17 * np.eye(m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails
        L = _cholesky(H)
    np.testing.assert_allclose(L @ L.T, H, atol=1e-11)
    bad = np.ones((m, m)) - 1e-7 * np.eye(m)  # indefinite by far more than rounding
    with pytest.warns(RuntimeWarning, match="singular beyond rounding") as rec:
        _cholesky(bad)
    assert "Remove duplicated rows" in str(rec[0].message)
    assert "log2_C" in str(rec[0].message)


def test_sandwich_by_blocks_of_columns_is_the_whole_product(monkeypatch):
    """``B diag(g) B`` made a few scaled columns at a time (issue 64: no scaled copy of all of
    ``B``) is the product of the whole matrices, with ``g`` of both signs and zeros."""
    import svmtune._factor as factor_module

    rng = np.random.default_rng(5)
    A = rng.normal(size=(30, 30))
    B = A + A.T
    g = rng.normal(size=30)
    g[::7] = 0.0
    want = B @ np.diag(g) @ B
    monkeypatch.setattr(factor_module, "_SANDWICH_VALUES", 4 * 30)  # blocks of 4 columns
    np.testing.assert_allclose(factor_module.sandwich(B, g), want, rtol=1e-12, atol=1e-12)
