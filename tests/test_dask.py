"""The joblib candidate evaluation runs unchanged on a Dask cluster.

A ``LocalCluster`` (2 in-process workers, 1 thread each) stands in for a real cluster; the
searches run under ``joblib.parallel_config(backend="dask")`` and must return exactly what the
serial run returns.
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
