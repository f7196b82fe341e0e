"""The row-block kernels of svmtune.lowrank._blocks, ._blocked_solver and ._dask_blocks against
their dense definitions on the whole ``Z`` (RBSVM eq. (6)-(7), (22), (27)), the dask driver
against the NumPy one, and the arrays the blocked fit creates (never ``n x m``)."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import svmtune.estimators as est_module
import svmtune.lowrank._blocked_solver as blocked
import svmtune.lowrank._blocks as blocks
from svmtune.estimators_lowrank import LowRankL2SVC, _tasks
from svmtune.kernels import squared_distances
from svmtune.loo.rbsvm_lowrank import lowrank_loo
from svmtune.lowrank import fit_l2_svm_lowrank, nystroem_factor, pivoted_cholesky_landmarks
from svmtune.lowrank._blocked_solver import (
    fit_l2_svm_blocks,
    lowrank_loo_blocks,
    support_system,
    warm_start_stride,
)
from svmtune.lowrank._blocks import (
    BlockOp,
    NystroemMap,
    RowBlocks,
    gram_block,
    margins_block,
    residual_block,
    weighted_sum_block,
)
from svmtune.lowrank._dask_blocks import row_blocks
from svmtune.lowrank._solver import armijo_step

from .conftest import make_problem


def _nystroem(X, sigma, m):
    """Landmarks, the dense factor of nystroem_factor (``nf.Z``) and the map of its rows."""
    idx, _ = pivoted_cholesky_landmarks(X, sigma, tol=1e-9, max_rank=m)
    D2_nm = squared_distances(X, X[idx])
    nf = nystroem_factor(D2_nm, D2_nm[idx], sigma, landmarks=idx)
    return nf, NystroemMap(X[idx], sigma, nf.R)


def _dense_v(sol, Z):
    """The primal vector ``v = Z_S^T beta`` of a dense solution."""
    return Z[sol.support].T @ sol.extra["beta"]


# ------------------------------------------------------------------------- block functions
def test_block_functions_summed_over_blocks_are_the_dense_quantities():
    rng = np.random.default_rng(0)
    n, m = 203, 9
    Z = rng.normal(size=(n, m))
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    c, r, w = rng.uniform(0.1, 2.0, (3, n))
    where = rng.random(n) < 0.3
    V, b0 = rng.normal(size=(m, 2)), np.array([0.3, -1.0])
    rows = RowBlocks(Z, None, m, 17, cache_bytes=0)
    G, Ztr, res = rows.run(
        [
            BlockOp(gram_block, (y, c), reduce=True),
            BlockOp(weighted_sum_block, (r,), reduce=True),
            BlockOp(residual_block, (w,), reduce=True),
        ]
    )
    Za = np.column_stack([Z, np.ones(n), y])
    np.testing.assert_allclose(G, Za.T @ np.diag(c) @ Za, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Ztr, Z.T @ r, rtol=1e-12, atol=1e-12)
    assert res[0] == pytest.approx(w @ np.maximum(1.0 - (Z**2).sum(axis=1), 0.0), rel=1e-12)
    (Gw,) = rows.run([BlockOp(gram_block, (y, c), reduce=True)], where=where)
    Zw = Za[where]
    np.testing.assert_allclose(Gw, Zw.T @ np.diag(c[where]) @ Zw, rtol=1e-12, atol=1e-12)
    (F,) = rows.run([BlockOp(margins_block, consts=(V, b0))])
    np.testing.assert_allclose(F, Z @ V + b0, rtol=1e-12, atol=1e-12)
    assert rows.largest == 17 and rows.passes == 3


def test_nystroem_map_is_the_dense_factor_and_the_residual_its_trace_residual():
    X, _ = make_problem(150, 3, 1)
    nf, fmap = _nystroem(X, 1.2, 20)
    for Xb in (X, sp.csr_matrix(X)):
        rows = RowBlocks(Xb, fmap, fmap.m, 11, cache_bytes=0)
        np.testing.assert_allclose(rows.lazy_rows(BlockOp(blocks._identity)), nf.Z, atol=1e-12)
        (res,) = rows.run([BlockOp(residual_block, (np.ones(150),), reduce=True)])
        assert res[0] / 150 == pytest.approx(nf.trace_residual, rel=1e-10, abs=1e-15)
    K = NystroemMap(X[nf.landmarks], 1.2)  # the kernel rows themselves
    np.testing.assert_allclose(K(X), nf.K_nm, atol=1e-14)


def test_support_system_is_the_woodbury_solution():
    """``(v, b)`` of support_system from the support set's Gram matrix are ``Z_S^T beta`` and
    ``b`` of the Woodbury factor of RBSVM eq. (22)."""
    X, y = make_problem(120, 3, 2)
    nf, _ = _nystroem(X, 1.0, 15)
    w = np.random.default_rng(3).uniform(0.5, 2.0, 120)
    sol = fit_l2_svm_lowrank(nf.Z, y, 5.0, sample_weight=w)
    S = sol.support
    c = 5.0 * w[S]
    Za = np.column_stack([nf.Z[S], np.ones(S.sum()), y[S]])
    v, b, chol, q, s = support_system(Za.T @ (Za * c[:, None]))
    np.testing.assert_allclose(v, _dense_v(sol, nf.Z), rtol=1e-10, atol=1e-12)
    assert b == pytest.approx(sol.b, rel=1e-10, abs=1e-12)
    assert s == pytest.approx(sol.factor.s, rel=1e-10)


# ------------------------------------------------------------------------- the solver
PROBLEMS = [
    # (n, d, seed, C, sigma, rank, weights, imbalance)
    (300, 3, 4, 1.0, 1.0, 25, None, 0.5),
    (300, 3, 5, 100.0, 0.7, 40, "uniform", 0.3),
    (250, 5, 6, 0.05, 2.0, 30, "zeros", 0.5),
    (400, 2, 7, 1000.0, 0.5, 60, "uniform", 0.2),
]


def _weights(kind, n, seed):
    if kind is None:
        return None
    w = np.random.default_rng(seed).uniform(0.2, 3.0, n)
    if kind == "zeros":
        w[::7] = 0.0
    return w


@pytest.mark.parametrize("kernel_rows", [False, True])
@pytest.mark.parametrize("cache", [0, None])
@pytest.mark.parametrize("problem", PROBLEMS)
def test_blocked_solver_is_the_dense_solver(problem, cache, kernel_rows):
    """Same ``v, b`` to 1e-8, same support, iterations and predictions as
    fit_l2_svm_lowrank on the whole ``Z``; with the rows computed per pass (cache 0) or
    kept (the default budget), blocks that do not divide ``n``, and the driver's rows the
    features ``Z`` or the kernel rows ``K`` (``R`` given: no triangular solve a pass)."""
    n, d, seed, C, sigma, rank, wkind, imb = problem
    X, y = make_problem(n, d, seed, imbalance=imb)
    w = _weights(wkind, n, seed)
    nf, fmap = _nystroem(X, sigma, rank)
    dense = fit_l2_svm_lowrank(nf.Z, y, C, sample_weight=w)
    v = _dense_v(dense, nf.Z)
    R = nf.R if kernel_rows else None
    if kernel_rows:
        fmap = NystroemMap(fmap.X_L, sigma)
    rows = RowBlocks(X, fmap, fmap.m, 23, cache_bytes=cache)
    sol = fit_l2_svm_blocks(rows, y, C, sample_weight=w, R=R)
    assert np.max(np.abs(sol.v - v)) <= 1e-8 * np.max(np.abs(v))
    assert sol.b == pytest.approx(dense.b, rel=1e-8, abs=1e-10)
    assert np.array_equal(sol.support, dense.support) and sol.n_iter == dense.n_iter
    assert sol.converged
    assert np.array_equal(nf.Z @ sol.v + sol.b > 0, nf.Z @ v + dense.b > 0)
    assert rows.largest <= 23
    # the closed-form LOO outputs (RBSVM eq. (27)) of the same model, one more pass
    want = lowrank_loo(dense, nf.Z)
    got = lowrank_loo_blocks(rows, sol)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8 * np.max(np.abs(want)))


@pytest.mark.parametrize(
    ("n", "d", "seed", "C", "sigma", "rank"),
    [(400, 2, 7, 10.0, 2.0, 60), (600, 3, 3, 100.0, 3.0, 80)],
)
def test_kernel_rows_with_an_ill_conditioned_factor_are_the_dense_solver(
    n, d, seed, C, sigma, rank
):
    """Wide kernels in few dimensions (``cond(R)`` in the thousands): the kernel rows' solver
    still gives the features' ``v`` to 1e-8 (its Gram matrix sums features: summed on kernel
    rows and carried over by ``R^{-1}`` it was off by 4e-8 and 1e-6 here)."""
    X, y = make_problem(n, d, seed)
    nf, fmap = _nystroem(X, sigma, rank)
    assert np.linalg.cond(nf.R) > 5e3
    dense = fit_l2_svm_lowrank(nf.Z, y, C)
    v = _dense_v(dense, nf.Z)
    rows = RowBlocks(X, NystroemMap(fmap.X_L, sigma), fmap.m, 37, cache_bytes=0)
    sol = fit_l2_svm_blocks(rows, y, C, R=nf.R)
    assert np.max(np.abs(sol.v - v)) <= 1e-8 * np.max(np.abs(v))
    assert sol.b == pytest.approx(dense.b, rel=1e-8, abs=1e-10)
    assert np.array_equal(sol.support, dense.support) and sol.n_iter == dense.n_iter
    want = lowrank_loo(dense, nf.Z)
    np.testing.assert_allclose(
        lowrank_loo_blocks(rows, sol), want, rtol=1e-7, atol=1e-8 * np.max(np.abs(want))
    )


def test_warm_start_rule():
    """A subsample of every 16th row once it has max(4096, 2 m) rows."""
    assert warm_start_stride(16 * 4096, 500) == 16
    assert warm_start_stride(16 * 4096 - 16, 500) is None
    assert warm_start_stride(16 * 6000, 3000) == 16
    assert warm_start_stride(16 * 6000 - 16, 3000) is None


@pytest.mark.parametrize("weights", [None, "zeros"])
def test_warm_start_reaches_the_cold_optimum_in_fewer_passes_over_all_rows(monkeypatch, weights):
    """From the solution on every 16th row (the 'auto' rule at a lowered threshold, and the
    stride given) the Newton method ends at the cold start's optimum (strictly convex: the
    same support set, ``v`` and ``b`` to 1e-8) after fewer passes over all rows and fewer
    rows read in all (at least ``n`` fewer: the passes of the subsample's fit not counted,
    they read its own driver)."""
    n = 16000
    X, y = make_problem(n, 4, 15, imbalance=0.4)
    w = _weights(weights, n, 15)
    nf, fmap = _nystroem(X, 2.0, 100)
    kern = NystroemMap(fmap.X_L, 2.0)
    summed = []
    block = blocked._BlockedGram._block

    def spy(self, idx):
        summed.append((self.y.shape[0], idx.size))
        return block(self, idx)

    monkeypatch.setattr(blocked._BlockedGram, "_block", spy)
    cold_rows = RowBlocks(X, kern, kern.m, 1024, cache_bytes=0)
    cold = fit_l2_svm_blocks(cold_rows, y, 30.0, sample_weight=w, R=nf.R, warm_start=None)
    assert all(rows_n == n for rows_n, _ in summed)
    summed.clear()
    monkeypatch.setattr(blocked, "WARM_START_MIN_ROWS", 200)
    assert warm_start_stride(n, kern.m) == 16
    for warm_start in ("auto", 16):
        rows = RowBlocks(X, kern, kern.m, 1024, cache_bytes=0)
        sol = fit_l2_svm_blocks(rows, y, 30.0, sample_weight=w, R=nf.R, warm_start=warm_start)
        assert sol.converged and np.array_equal(sol.support, cold.support)
        assert np.max(np.abs(sol.v - cold.v)) <= 1e-8 * np.max(np.abs(cold.v))
        assert sol.b == pytest.approx(cold.b, rel=1e-8, abs=1e-10)
        assert rows.full_passes < cold_rows.full_passes
        assert rows.rows_read < cold_rows.rows_read - n
        # the Gram matrix summed rows of the subsample (of 1,000) too
        assert sum(k for rows_n, k in summed if rows_n == 1000) > 0
        summed.clear()
    with pytest.raises(ValueError, match="warm_start must be"):
        fit_l2_svm_blocks(cold_rows, y, 1.0, warm_start=0)


def test_a_subsample_keeps_its_features_only_where_its_driver_keeps_its_own():
    """The warm start's driver of every ``step``-th row caches its features where the full
    driver caches its own, never where the full driver runs in blocks (issue 64: at 10^6
    rows its 62,500 rows' features were 250 MB, held while the fit ran in blocks)."""
    X, _ = make_problem(4000, 4, 3)
    kern = NystroemMap(X[:50], 2.0)
    m = kern.m
    caching = RowBlocks(X, kern, m, 256, cache_bytes=8 * 4000 * m)
    blocked_only = RowBlocks(X, kern, m, 256, cache_bytes=8 * 4000 * m - 1)
    assert caching._cache is not None and blocked_only._cache is None
    assert caching.subsample(16)._cache is not None
    # the subsample's 250 rows would fit the budget; its driver's 4,000 do not
    assert blocks.features_fit_cache(250, m, blocked_only.cache_bytes)
    assert blocked_only.subsample(16)._cache is None


def test_armijo_step_takes_a_full_step_whose_rise_is_the_values_rounding():
    """At the optimum of many rows the predicted decrease is below the primal value's
    rounding: a full step whose value rises by rounding only is taken (the Newton method's
    finite stop, a full step with the active set unchanged), a real rise is not."""
    value = 2.9e5
    rounding = lambda t: (value * (1 + 50 * np.finfo(float).eps),)  # noqa: E731
    assert armijo_step(rounding, value, -1e-16)[0] == 1.0
    rise = lambda t: (value * (1 + 1e-9 * t),)  # noqa: E731
    assert armijo_step(rise, value, -1e-16)[0] < 1e-2  # backtracked to a rise of rounding


def test_blocked_solver_one_vs_rest_tasks_as_the_estimator_builds_them():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(360, 3))
    y_enc = np.argmax(X + 0.4 * rng.normal(size=(360, 3)), axis=1)
    w = rng.uniform(0.5, 2.0, 360)
    nf, fmap = _nystroem(X, 1.1, 35)
    rows = RowBlocks(X, fmap, fmap.m, 50, cache_bytes=0)
    for t in _tasks(y_enc, 3):
        dense = fit_l2_svm_lowrank(nf.Z, t, 8.0, sample_weight=w)
        sol = fit_l2_svm_blocks(rows, t, 8.0, sample_weight=w)
        v = _dense_v(dense, nf.Z)
        assert np.max(np.abs(sol.v - v)) <= 1e-8 * np.max(np.abs(v))
        assert sol.b == pytest.approx(dense.b, rel=1e-8, abs=1e-10)
        assert np.array_equal(sol.support, dense.support)
        np.testing.assert_allclose(
            lowrank_loo_blocks(rows, sol), lowrank_loo(dense, nf.Z), rtol=1e-7, atol=1e-8
        )


def test_blocked_solver_checks_its_inputs():
    Z = np.random.default_rng(9).normal(size=(20, 3))
    rows = RowBlocks(Z, None, 3, 8)
    y = np.where(np.arange(20) < 10, 1.0, -1.0)
    with pytest.raises(ValueError, match="labels must be -1/\\+1"):
        fit_l2_svm_blocks(rows, np.ones(20), 1.0)
    with pytest.raises(ValueError, match="y has 19 labels but the rows are 20"):
        fit_l2_svm_blocks(rows, y[:19], 1.0)
    with pytest.raises(ValueError, match="both classes with positive weight"):
        fit_l2_svm_blocks(rows, y, 1.0, sample_weight=(y > 0).astype(float))


# ------------------------------------------------------------------------- the shapes made
class _Recorder:
    """Wraps a feature map and records the shape of every features block it returns."""

    def __init__(self, fmap):
        self.fmap, self.m, self.shapes = fmap, fmap.m, []

    def __call__(self, X_b):
        Z = self.fmap(X_b)
        self.shapes.append(Z.shape)
        return Z


def test_estimator_fit_and_predict_never_make_n_by_m_features(monkeypatch):
    """At ``n`` far above the block (DECISION_BLOCK of 4,000 kernel values: 100 rows at
    m = 40) no features block of the fit or of the predictions has more rows than a block,
    and the features are computed at every pass when the cache's budget is 0."""
    n = 2000
    X, y = make_problem(n, 3, 10)
    made = []
    call = NystroemMap.__call__

    def spy(self, X_b):
        out = call(self, X_b)
        made.append(out.shape)
        return out

    monkeypatch.setattr(NystroemMap, "__call__", spy)
    monkeypatch.setattr(est_module, "DECISION_BLOCK", 4000)
    monkeypatch.setattr(blocks, "FEATURE_CACHE_BYTES", 0)
    clf = LowRankL2SVC(C=10.0, sigma=1.0, rank=40, rank_tol=1e-9).fit(X, y)
    assert clf.rank_ == 40
    assert made and max(r for r, _ in made) == 100
    assert sum(r for r, _ in made) >= n * (clf.n_iter_[0] + 1)  # a pass an iteration
    made.clear()
    clf.decision_function(X)
    assert max(r for r, _ in made) == 100 and sum(r for r, _ in made) == n


def test_blocked_solver_peak_memory_is_far_below_n_by_m():
    """tracemalloc's peak of the blocked fit (features per pass) beyond the data: the
    ``O(n)`` vectors and one block, well below the ``8 n m`` bytes of ``Z``."""
    n, m = 6000, 120
    X, y = make_problem(n, 3, 11)
    idx, _ = pivoted_cholesky_landmarks(X[:1000], 1.0, tol=1e-12, max_rank=m)
    fmap = NystroemMap(X[idx], 1.0, nystroem_factor(*(2 * [squared_distances(X[idx])]), 1.0).R)
    rows = RowBlocks(X, fmap, m, 200, cache_bytes=0)
    tracemalloc.start()
    try:
        sol = fit_l2_svm_blocks(rows, y, 1.0)
        lowrank_loo_blocks(rows, sol)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert idx.size == m and sol.converged
    assert peak < 0.25 * 8 * n * m, peak


# ------------------------------------------------------------------------- dask
def _dask():
    return pytest.importorskip("dask.array")


@pytest.mark.parametrize("chunks", [(97, 3), (1000, 1)])
def test_dask_driver_gives_the_numpy_results(chunks):
    da = _dask()
    X, y = make_problem(600, 3, 12, imbalance=0.3)
    w = _weights("zeros", 600, 12)
    nf, fmap = _nystroem(X, 0.9, 30)
    ref_rows = RowBlocks(X, fmap, fmap.m, 64)
    dask_rows = row_blocks(da.from_array(X, chunks=chunks), fmap, fmap.m, 64)
    ref = fit_l2_svm_blocks(ref_rows, y, 20.0, sample_weight=w)
    got = fit_l2_svm_blocks(dask_rows, y, 20.0, sample_weight=w)
    np.testing.assert_allclose(got.v, ref.v, rtol=1e-10, atol=1e-10 * np.abs(ref.v).max())
    assert got.b == pytest.approx(ref.b, rel=1e-10, abs=1e-12)
    assert np.array_equal(got.support, ref.support) and got.n_iter == ref.n_iter
    np.testing.assert_allclose(
        lowrank_loo_blocks(dask_rows, got), lowrank_loo_blocks(ref_rows, ref), rtol=1e-10
    )
    op = BlockOp(residual_block, (np.ones(600),), reduce=True)
    np.testing.assert_allclose(dask_rows.run([op]), ref_rows.run([op]), rtol=1e-10)
    # a chunk of more than the driver's 64 rows is run in blocks of 64 (a task holds 64 x m)
    assert dask_rows.largest == 64

    class Spy(type(fmap)):
        seen: list = []

        def __call__(self, X_b):
            Spy.seen.append(X_b.shape[0])
            return super().__call__(X_b)

    spy = Spy.__new__(Spy)
    spy.__dict__.update(fmap.__dict__)
    spied = row_blocks(da.from_array(X, chunks=chunks), spy, fmap.m, 64)
    np.testing.assert_allclose(spied.run([op]), ref_rows.run([op]), rtol=1e-10)
    assert max(Spy.seen) == 64 and sum(Spy.seen) == 600


def test_dask_driver_with_kernel_rows_and_a_warm_start_gives_the_numpy_results():
    """The kernel rows with ``R`` and the warm start's subsample (``X[::4]`` of a dask
    array, its chunks thinned) on the dask driver: the NumPy driver's solution and LOO."""
    da = _dask()
    X, y = make_problem(800, 3, 16, imbalance=0.3)
    nf, fmap = _nystroem(X, 1.3, 30)
    kern = NystroemMap(fmap.X_L, 1.3)
    ref_rows = RowBlocks(X, kern, kern.m, 64)
    dask_rows = row_blocks(da.from_array(X, chunks=(150, 3)), kern, kern.m, 64)
    ref = fit_l2_svm_blocks(ref_rows, y, 5.0, R=nf.R, warm_start=4)
    got = fit_l2_svm_blocks(dask_rows, y, 5.0, R=nf.R, warm_start=4)
    np.testing.assert_allclose(got.v, ref.v, rtol=1e-10, atol=1e-10 * np.abs(ref.v).max())
    assert got.b == pytest.approx(ref.b, rel=1e-10, abs=1e-12)
    assert np.array_equal(got.support, ref.support) and got.n_iter == ref.n_iter
    assert dask_rows.full_passes == ref_rows.full_passes
    np.testing.assert_allclose(
        lowrank_loo_blocks(dask_rows, got), lowrank_loo_blocks(ref_rows, ref), rtol=1e-10
    )


@pytest.mark.parametrize("n_classes", [2, 3])
def test_estimator_on_a_dask_array(n_classes):
    da = _dask()
    rng = np.random.default_rng(13)
    X = rng.normal(size=(500, 4))
    y = np.argmax(X[:, :n_classes] + 0.3 * rng.normal(size=(500, n_classes)), axis=1)
    w = rng.uniform(0.5, 2.0, 500)
    params = {"C": 3.0, "sigma": 1.5, "rank": 40}
    ref = LowRankL2SVC(**params).fit(X, y, sample_weight=w)
    Xd = da.from_array(X, chunks=(120, 2))
    got = LowRankL2SVC(**params).fit(Xd, da.from_array(y, chunks=120), sample_weight=w)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=1e-10, atol=1e-10)
    assert got.trace_residual_ == pytest.approx(ref.trace_residual_, rel=1e-10)
    assert got.n_iter_.tolist() == ref.n_iter_.tolist()
    for method in ("decision_function", "predict", "predict_proba"):
        lazy = getattr(ref, method)(Xd)
        assert isinstance(lazy, da.Array), method
        want = getattr(ref, method)(X)
        if method == "predict":
            assert np.array_equal(lazy.compute(), want)
        else:
            np.testing.assert_allclose(lazy.compute(), want, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="expecting 4 features"):
        ref.decision_function(Xd[:, :3])


def test_a_dask_x_beyond_landmark_rows_is_never_gathered_whole(monkeypatch):
    """A dask ``X`` of more than ``landmark_rows`` rows: every array computed to the client
    in fit (``Array.compute``, which ``np.asarray`` calls too, and ``dask.compute``, the
    passes') has at most ``landmark_rows`` rows of ``X``'s width -- the subsample gathered,
    never ``X`` -- and the model is the NumPy fit's of the same draw."""
    import dask

    da = _dask()
    n, s = 1200, 200
    X, y = make_problem(n, 3, 15)
    w = np.random.default_rng(15).uniform(0.5, 2.0, n)
    w[:50] = 0.0
    params = {"C": 2.0, "sigma": 1.0, "rank": 25, "landmark_rows": s, "random_state": 4}
    ref = LowRankL2SVC(**params).fit(X, y, sample_weight=w)
    computed: list[tuple] = []
    compute, dask_compute = da.Array.compute, dask.compute

    def spy(self, **kw):
        out = compute(self, **kw)
        computed.append(np.shape(out))
        return out

    def spy_all(*args, **kw):
        outs = dask_compute(*args, **kw)
        computed.extend(np.shape(o) for o in outs)
        return outs

    monkeypatch.setattr(da.Array, "compute", spy)
    monkeypatch.setattr(dask, "compute", spy_all)
    Xd = da.from_array(X, chunks=(150, 3))
    got = LowRankL2SVC(**params).fit(Xd, da.from_array(y, chunks=150), sample_weight=w)
    wide = [sh for sh in computed if len(sh) == 2]
    assert wide == [(s, 3)], computed  # the subsample, once; nothing else 2-D
    assert max(sh[0] for sh in computed if sh) == n  # the labels and the passes' vectors
    assert np.array_equal(got.landmarks_, ref.landmarks_)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-10, atol=1e-10)
    assert got.trace_residual_ == pytest.approx(ref.trace_residual_, rel=1e-10)
    # the old rule gathered X whole: the spy sees it where the subsample is all of X
    computed.clear()
    LowRankL2SVC(**(params | {"landmark_rows": None})).fit(Xd, y, sample_weight=w)
    assert (n, 3) in computed


def test_bad_dask_x_is_refused_before_any_pass():
    da = _dask()
    X, y = make_problem(100, 3, 16)
    X[5, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        LowRankL2SVC(rank=5).fit(da.from_array(X, chunks=30), y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        LowRankL2SVC(rank=5).fit(da.from_array(np.nan_to_num(X), chunks=30), y[:-1])
    with pytest.raises(ValueError, match="2D dask array"):
        LowRankL2SVC(rank=5).fit(da.from_array(y, chunks=30), y)


def test_assume_finite_skips_the_dask_finiteness_pass(monkeypatch):
    """scikit-learn's ``assume_finite`` (the tuner's final fit sets it: its door checked X)
    skips the reduction over a dask X, as ``check_array`` skips its pass."""
    import sklearn

    da = _dask()
    X, y = make_problem(100, 3, 16)
    calls = []
    isfinite = da.isfinite
    monkeypatch.setattr(da, "isfinite", lambda a: calls.append(a.shape) or isfinite(a))
    LowRankL2SVC(rank=5).fit(da.from_array(X, chunks=30), y)
    assert calls == [X.shape]
    with sklearn.config_context(assume_finite=True):
        LowRankL2SVC(rank=5).fit(da.from_array(X, chunks=30), y)
    assert calls == [X.shape]


def test_estimator_fits_on_a_local_cluster():
    distributed = pytest.importorskip("dask.distributed")
    da = _dask()
    X, y = make_problem(300, 3, 14)
    ref = LowRankL2SVC(C=2.0, sigma=1.0, rank=20).fit(X, y)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    client = distributed.Client(cluster)
    try:
        Xd = da.from_array(X, chunks=(50, 3))
        with distributed.get_task_stream(client) as ts:
            got = LowRankL2SVC(C=2.0, sigma=1.0, rank=20).fit(Xd, y)
            pred = got.predict(Xd).compute()
        assert len(ts.data) > 0  # the blocks ran on the cluster's workers
    finally:
        client.close()
        cluster.close()
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-10, atol=1e-10)
    assert np.array_equal(pred, ref.predict(X))


def test_import_svmtune_does_not_import_dask():
    code = "import sys, svmtune, svmtune.estimators_lowrank; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
