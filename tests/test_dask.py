"""The joblib candidate evaluation runs unchanged on a Dask cluster, and dask arrays and
DataFrames go through the tuner's door.

A ``LocalCluster`` (2 in-process workers, 1 thread each) stands in for a real cluster; the
searches run under ``joblib.parallel_config(backend="dask")`` and must return exactly what the
serial run returns.  A dask ``X`` (array or DataFrame) is checked and standardised by reductions
(:mod:`svmtune._dask_inputs`) and must give the NumPy data's selection and predictions; its
predictions are dask arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

distributed = pytest.importorskip("dask.distributed")

from joblib import parallel_config  # noqa: E402

from svmtune import SVMTuner  # noqa: E402
from svmtune.methods import GridSearch  # noqa: E402
from svmtune.search.cv import cv_errors, make_folds  # noqa: E402

from .conftest import make_problem  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    cl = distributed.Client(cluster)
    try:
        yield cl
    finally:
        cl.close()
        cluster.close()


@pytest.fixture(scope="module")
def data():
    X, y = make_problem(80, 3, 21)
    return X, (y > 0).astype(int)


def test_cv_errors_identical_on_dask(client, data):
    X, y = data
    folds = make_folds(y, 5, random_state=0)
    cands = [{"kernel": "rbf", "sigma": s, "C": c} for s in (0.5, 2.0) for c in (0.5, 8.0)]
    serial = cv_errors(X, y, cands, folds=folds, n_jobs=1)
    with distributed.get_task_stream(client) as ts, parallel_config(backend="dask"):
        dist = cv_errors(X, y, cands, folds=folds, n_jobs=-1)
    np.testing.assert_array_equal(dist, serial)
    assert len(client.scheduler_info()["workers"]) == 2
    assert len(ts.data) > 0  # the cells really ran on the cluster


def test_grid_search_same_hyperparameters_on_dask(client, data):
    X, y = data
    grid = GridSearch(log2_sigma=(-1, 2, 1), log2_C=(-1, 3, 2), n_splits=5)
    serial = grid.select(X, y, random_state=0, n_jobs=1)
    with parallel_config(backend="dask"):
        dist = grid.select(X, y, random_state=0, n_jobs=-1)
    assert dist.params == serial.params
    assert dist.estimate == serial.estimate

    def timeless(history):  # seconds differ from run to run
        return [{k: v for k, v in h.items() if k != "fit_time"} for h in history]

    assert timeless(dist.history) == timeless(serial.history)


def test_tuner_same_result_on_dask(client, data):
    X, y = data
    params = {"log2_sigma": (-1, 1, 1), "log2_C": (0, 2, 2), "n_splits": 3}
    serial = SVMTuner(method="grid", method_params=params, random_state=0, n_jobs=1).fit(X, y)
    with parallel_config(backend="dask"):
        dist = SVMTuner(method="grid", method_params=params, random_state=0, n_jobs=-1).fit(X, y)
    assert dist.best_params_ == serial.best_params_
    np.testing.assert_array_equal(dist.predict(X), serial.predict(X))


def test_tuner_backend_dask_runs_on_the_cluster(client, data):
    X, y = data
    params = {"log2_sigma": (-1, 1, 1), "log2_C": (0, 2, 2), "n_splits": 3}
    serial = SVMTuner(method="grid", method_params=params, random_state=0, n_jobs=1).fit(X, y)
    with distributed.get_task_stream(client) as ts:
        dist = SVMTuner(
            method="grid", method_params=params, random_state=0, n_jobs=-1, backend="dask"
        ).fit(X, y)
    assert len(ts.data) > 0  # the backend option alone sends the candidates to the cluster
    assert dist.best_params_ == serial.best_params_
    np.testing.assert_array_equal(dist.decision_function(X), serial.decision_function(X))


def test_bench_scheduler_option_gives_the_serial_rows(client, tmp_path):
    """``svmtune bench --scheduler ADDRESS`` on a slice of the quick suite: the same cells,
    with the same chosen hyperparameters, as the serial run."""
    from click.testing import CliRunner

    from svmtune.bench.store import read_rows
    from svmtune.cli._bench import bench

    common = ["--suite", "quick", "--tasks", "iris,sonar", "--methods", "default,rbsvm,ss"]
    common += ["--no-experiments", "--no-progress", "--no-entropy"]
    runner = CliRunner()
    ser = runner.invoke(bench, [*common, "--out", str(tmp_path / "serial")])
    assert ser.exit_code == 0, ser.output
    # the cluster's workers are threads of this process and share its BLAS thread pools: a
    # cell that lifted its one-thread cap on leaving would change the thread count (and the
    # round-off) of a cell still running in the other thread (caught where BLAS has > 1 thread)
    with distributed.get_task_stream(client) as ts:
        dist = runner.invoke(
            bench,
            [*common, "--out", str(tmp_path / "dask"), "--scheduler", client.scheduler.address],
        )
    assert dist.exit_code == 0, dist.output
    assert len(ts.data) > 0  # the cells ran on the cluster's workers

    def chosen(sub):
        rows = read_rows(tmp_path / sub / "quick" / "results.jsonl")
        cells = [r for r in rows if r.get("kind") == "cell"]
        bad = [(r["task"], r["split"], r["method"], r["status"]) for r in cells]
        assert all(r["status"] == "ok" for r in cells), [b for b in bad if b[3] != "ok"]
        return {r["key"]: r["params"] for r in cells}

    a, b = chosen("serial"), chosen("dask")
    assert len(a) == 12 and a == b


# ---------------------------------------------------------------- dask collections at the door
import dask.array as da  # noqa: E402

import svmtune._dask_inputs as _dask_inputs  # noqa: E402
from svmtune._door import prepare_training  # noqa: E402
from svmtune.methods.base import get_selector  # noqa: E402


def _scaled(X):
    """Columns of very different scales and offsets: the standardisation matters."""
    return X * np.array([1.0, 100.0, 0.01]) + np.array([5.0, -300.0, 0.2])


@pytest.mark.parametrize("method", ["rbsvm", "default"])
def test_dask_array_gives_the_numpy_selection_and_predictions(data, method):
    X, y = data
    X = _scaled(X)
    Xd = da.from_array(X, chunks=(17, 2))  # blocks split the columns too
    yd = da.from_array(y, chunks=23)
    ref = SVMTuner(method=method, random_state=0).fit(X, y)
    got = SVMTuner(method=method, random_state=0).fit(Xd, yd)
    for key, value in ref.best_params_.items():
        assert got.best_params_[key] == pytest.approx(value, rel=1e-9), key
    pre, pre_ref = got.preprocessor_, ref.preprocessor_
    np.testing.assert_allclose(pre.mean_, pre_ref.mean_, rtol=1e-12)
    np.testing.assert_allclose(pre.var_, pre_ref.var_, rtol=1e-12)
    np.testing.assert_allclose(pre.scale_, pre_ref.scale_, rtol=1e-12)
    assert pre.n_samples_seen_ == pre_ref.n_samples_seen_
    np.testing.assert_array_equal(got.classes_, ref.classes_)
    assert got.n_features_in_ == 3 and not hasattr(got, "feature_names_in_")
    pred = got.predict(Xd)
    assert isinstance(pred, da.Array)
    np.testing.assert_array_equal(pred.compute(), ref.predict(X))
    dec, proba = got.decision_function(Xd), got.predict_proba(Xd)
    assert isinstance(dec, da.Array) and isinstance(proba, da.Array)
    np.testing.assert_allclose(dec.compute(), ref.decision_function(X), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(proba.compute(), ref.predict_proba(X), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(
        np.asarray(got.predict_log_proba(Xd)), ref.predict_log_proba(X), rtol=1e-7, atol=1e-9
    )


def test_dask_weighted_statistics_equal_the_numpy_ones(data):
    """Sample weights (some 0) times class weights: the scaler's weighted reductions give
    scikit-learn's weighted numbers, on the rows of positive weight."""
    X, y = data
    X = _scaled(X)
    w = np.linspace(0.2, 3.0, len(y))
    w[::7] = 0.0
    tuner = SVMTuner(method="rbsvm", class_weight="balanced")
    selector = get_selector("rbsvm", None)
    ref = prepare_training(tuner, X, y, w, None, selector=selector)
    got = prepare_training(tuner, da.from_array(X, chunks=13), y, w, None, selector=selector)
    np.testing.assert_allclose(got.preprocessor.mean_, ref.preprocessor.mean_, rtol=1e-12)
    np.testing.assert_allclose(got.preprocessor.var_, ref.preprocessor.var_, rtol=1e-12)
    np.testing.assert_allclose(got.data.X, ref.data.X, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(got.data.y, ref.data.y)
    np.testing.assert_allclose(got.data.sample_weight, ref.data.sample_weight, rtol=1e-15)
    assert isinstance(got.data.X, np.ndarray)  # rbsvm takes no dask X: gathered


def test_a_selector_that_accepts_dask_gets_the_lazy_standardised_array(data, monkeypatch):
    from svmtune.methods.rbsvm import RBSVM

    X, y = data
    monkeypatch.setattr(RBSVM, "accepts_lazy_rows", True)
    tuner = SVMTuner(method="rbsvm")
    got = prepare_training(
        tuner, da.from_array(X, chunks=20), y, None, None, selector=get_selector("rbsvm", None)
    )
    assert isinstance(got.data.X, da.Array)
    ref = prepare_training(tuner, X, y, None, None, selector=get_selector("rbsvm", None))
    np.testing.assert_allclose(got.data.X.compute(), ref.data.X, rtol=1e-10, atol=1e-12)


def test_dask_dataframe_gives_the_pandas_selection_and_feature_names(data):
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    X, y = data
    frame = pd.DataFrame(_scaled(X), columns=["age", "dose", "ratio"])
    ddf = dd.from_pandas(frame, npartitions=3)
    ref = SVMTuner(method="rbsvm", random_state=0).fit(frame, y)
    got = SVMTuner(method="rbsvm", random_state=0).fit(ddf, da.from_array(y, chunks=30))
    np.testing.assert_array_equal(got.feature_names_in_, ["age", "dose", "ratio"])
    for key, value in ref.best_params_.items():
        assert got.best_params_[key] == pytest.approx(value, rel=1e-9), key
    pred = got.predict(ddf)
    assert isinstance(pred, da.Array)
    np.testing.assert_array_equal(pred.compute(), ref.predict(frame))
    with pytest.raises(ValueError, match="feature names"):
        got.predict(ddf.rename(columns={"age": "years"}))


def _fit_error(X, y, **options):
    with pytest.raises(ValueError) as err:
        SVMTuner(method="default", **options).fit(X, y)
    return str(err.value)


def test_bad_dask_input_is_refused_with_what_to_do(data):
    X, y = data
    nan = X.copy()
    nan[4, 1] = np.nan
    msg = _fit_error(da.from_array(nan, chunks=20), y)
    assert "X contains NaN (1 cell missing, columns '1')" in msg and "not imputed" in msg
    inf = X.copy()
    inf[2, 2] = -np.inf
    assert "X contains infinity (1 cell, columns '2')" in _fit_error(da.from_array(inf, 20), y)
    Xd = da.from_array(X, chunks=20)
    assert "unknown chunk sizes" in _fit_error(Xd[Xd[:, 0] > -100], y)
    assert "compute_chunk_sizes()" in _fit_error(Xd[Xd[:, 0] > -100], y)
    assert "not numbers" in _fit_error(da.from_array(X.astype(str), chunks=20), y)
    assert "Expected a 2D dask array" in _fit_error(Xd[:, 0], y)
    assert "inconsistent numbers of samples: [80, 70]" in _fit_error(Xd, y[:70])
    assert "takes no dask X" in _fit_error(Xd, y, preprocess="auto")
    labels = np.where(y > 0, "a", None).astype(object)
    assert "missing label(s)" in _fit_error(Xd, da.from_array(labels, chunks=20))
    assert "too large or too small to standardise" in _fit_error(Xd * 1e200, y)


def test_dask_dataframe_with_text_columns_is_refused(data):
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    X, y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(colour=np.where(y > 0, "r", "g"))
    msg = _fit_error(dd.from_pandas(frame, npartitions=2), y)
    assert "non-numeric (categorical) columns: 'colour'" in msg


def test_a_dask_x_too_large_to_gather_names_auto_and_the_issue(data, monkeypatch):
    import svmtune._dask_inputs as dask_inputs

    X, y = data
    monkeypatch.setattr(dask_inputs, "available_memory", lambda: 4 * 8 * X.size)
    SVMTuner(method="default").fit(da.from_array(X, chunks=20), y)  # a quarter: it fits
    monkeypatch.setattr(dask_inputs, "available_memory", lambda: 4 * 8 * X.size - 8)
    msg = _fit_error(da.from_array(X, chunks=20), y)
    assert "method 'default' takes no dask X yet" in msg
    assert "method='auto'" in msg and "issue #64" in msg


def test_import_svmtune_imports_no_dask():
    import subprocess
    import sys

    code = "import sys, svmtune; sys.exit('dask' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# ---------------------------------------------------------------- method="auto" on a dask X
@pytest.fixture(scope="module")
def rows_3000():
    X, y = make_problem(3000, 5, 31)
    return X, (y > 0).astype(int)


def _auto_equal(got, ref) -> None:
    """The same selection (sigma and C to 1e-8), final model and predictions."""
    for key in ("sigma", "C"):
        assert got.best_params_[key] == pytest.approx(ref.best_params_[key], rel=1e-8), key
    assert got.final_model_ == ref.final_model_
    assert got.selection_.info["chosen"] == ref.selection_.info["chosen"]


def test_auto_on_a_dask_x_gives_the_numpy_selection_and_predictions(rows_3000):
    """A dask ``X`` that fits in memory: its subsamples gathered, SVC()'s width a reduction,
    the in-memory final-model rule; the NumPy run's selection and predictions."""
    X, y = rows_3000
    Xd = da.from_array(X, chunks=(500, 5))
    ref = SVMTuner(random_state=0).fit(X, y)
    got = SVMTuner(random_state=0).fit(Xd, da.from_array(y, chunks=500))
    _auto_equal(got, ref)
    # the same rule and reason; its predicted costs count libsvm's iterations, which differ
    # with the rounding of X's standardisation (below), so the numbers are not compared
    rule, rule_ref = got.selection_.info["final_rule"], ref.selection_.info["final_rule"]
    assert rule.split(":")[0] == rule_ref.split(":")[0]
    assert "X is a dask array that fits in memory" in rule
    pred = got.predict(Xd)
    assert isinstance(pred, da.Array)
    # the scaler's reductions sum in another order (X standardised differs by ~1e-16), so
    # libsvm's SMO takes another path to its stopping tolerance (1e-3): the decision values
    # agree to about that tolerance, and the predictions wherever they are farther from 0
    dec, dec_ref = got.decision_function(Xd).compute(), ref.decision_function(X)
    np.testing.assert_allclose(dec, dec_ref, rtol=0, atol=5e-3)
    clear = np.abs(dec_ref) > 1e-2
    assert clear.mean() > 0.98
    np.testing.assert_array_equal(pred.compute()[clear], ref.predict(X)[clear])


def test_auto_on_a_local_cluster_fits_the_low_rank_model_in_blocks(client, rows_3000, monkeypatch):
    """``SVMTuner().fit(dask X, dask y)`` under a ``Client`` where ``X`` is too large to
    gather (the door's memory rule, patched): the NumPy run's selection, the low-rank L2-SVM
    fitted on the workers in ``X``'s row chunks (no block of features of more rows than a
    chunk: never ``n x m``), and its predictions."""
    from svmtune import tuner as tuner_module
    from svmtune.estimators_lowrank import LowRankL2SVC
    from svmtune.lowrank._blocks import NystroemMap

    X, y = rows_3000
    ref = SVMTuner(random_state=0, final_model="lowrank").fit(X, y)
    monkeypatch.setattr(_dask_inputs, "available_memory", lambda: 4 * 8 * X.size - 8)
    blocks, final = [], [False]
    call, fit_final = NystroemMap.__call__, tuner_module.SVMTuner._fit_final

    def spy(self, X_b):
        out = call(self, X_b)
        if final[0]:
            blocks.append(out.shape)
        return out

    def spied_fit_final(self, *args):
        final[0] = True
        try:
            return fit_final(self, *args)
        finally:
            final[0] = False

    monkeypatch.setattr(NystroemMap, "__call__", spy)
    monkeypatch.setattr(tuner_module.SVMTuner, "_fit_final", spied_fit_final)
    Xd, yd = da.from_array(X, chunks=(500, 5)), da.from_array(y, chunks=500)
    with distributed.get_task_stream(client) as ts:
        got = SVMTuner(random_state=0).fit(Xd, yd)
    assert len(ts.data) > 0  # the reductions, subsamples and blocks ran on the cluster
    _auto_equal(got, ref)
    assert isinstance(got.estimator_, LowRankL2SVC)
    assert got.selection_.info["final_rule"].startswith("the low-rank L2-SVM, fitted in X's")
    m = got.estimator_.rank_
    assert blocks and max(r for r, _ in blocks) == 500 and {c for _, c in blocks} == {m}
    assert sum(r for r, _ in blocks) >= 3000 * (got.estimator_.n_iter_[0] + 1)
    np.testing.assert_array_equal(got.predict(Xd).compute(), ref.predict(X))
    np.testing.assert_allclose(
        got.decision_function(Xd).compute(), ref.decision_function(X), rtol=1e-6, atol=1e-8
    )


def test_auto_on_memory_limited_worker_processes(rows_3000, monkeypatch):
    """Worker processes with a memory limit (issue 64's CI line): ``auto`` on a dask ``X``
    too large to gather fits its low-rank model on them, as in memory; no worker restarted,
    each stayed below its limit (its own peak resident memory, read in the worker)."""
    import resource

    X, y = rows_3000
    ref = SVMTuner(random_state=0, final_model="lowrank").fit(X, y)
    monkeypatch.setattr(_dask_inputs, "available_memory", lambda: 4 * 8 * X.size - 8)
    limit = 1.5 * 2**30
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit=limit,
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as cl,
    ):
        before = set(cl.scheduler_info()["workers"])
        Xd, yd = da.from_array(X, chunks=(500, 5)), da.from_array(y, chunks=500)
        got = SVMTuner(random_state=0).fit(Xd, yd)
        pred = got.predict(Xd).compute()
        peaks = cl.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0)
        assert set(cl.scheduler_info()["workers"]) == before  # none restarted
    _auto_equal(got, ref)
    assert got.selection_.info["final_rule"].startswith("the low-rank L2-SVM, fitted in X's")
    assert len(peaks) == 2 and max(peaks.values()) < limit
    np.testing.assert_array_equal(pred, ref.predict(X))


def test_a_forced_in_memory_final_model_refuses_a_dask_x_too_large(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(_dask_inputs, "available_memory", lambda: 4 * 8 * X.size - 8)
    tuner = SVMTuner(final_model="l1", random_state=0)
    with pytest.raises(ValueError, match="final_model='l1' is fitted in memory"):
        tuner.fit(da.from_array(X, chunks=20), y)
