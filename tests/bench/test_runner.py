"""The benchmark runner: task preparation, cells, rows, and kill-and-resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from svmtune.bench.runner import (
    build_cells,
    derive_seed,
    prepare_task,
    run_cell,
    run_suite,
    split_indices,
)
from svmtune.bench.store import cell_key, read_rows
from svmtune.bench.suite import MethodSpec, Protocol, Task
from svmtune.methods import base as methods_base

from ._tiny import loader, tiny_suite

REPO = Path(__file__).resolve().parents[2]

#: row fields that must be identical between two runs of the same cell
DETERMINISTIC = (
    "status",
    "suite",
    "task",
    "split",
    "method",
    "seed",
    "dataset_version",
    "params",
    "accuracy",
    "f1",
    "log_loss",
    "brier",
    "estimate",
    "criterion",
    "n_svm_fits",
    "default_accuracy",
    "entropy",
    "n_train",
    "n_test",
)


def _fingerprint(rows):
    return {r["key"]: tuple(repr(r.get(f)) for f in DETERMINISTIC) for r in rows}


def _file_rows(out, suite="tiny"):
    return read_rows(Path(out) / suite / "results.jsonl")


def test_derive_seed_is_stable():
    assert derive_seed(0, "a", 1) == derive_seed(0, "a", 1)
    assert derive_seed(0, "a", 1) != derive_seed(0, "a", 2)
    assert 0 <= derive_seed("x") < 2**31


def test_prepare_task_positive_drop_subsample():
    t = Task("m", "mixed", positive="pos", drop_columns=("id",), subsample=20)
    d1 = prepare_task(t, loader, seed=5)
    d2 = prepare_task(t, loader, seed=5)
    assert list(d1.X.columns) == ["x0", "x1", "x2", "colour"]
    assert d1.X.equals(d2.X) and np.array_equal(d1.y, d2.y)  # same seed, same subsample
    assert len(d1.y) == 20 and set(d1.y) == {0, 1} and d1.y.sum() == 10  # stratified
    assert d1.preprocess == "auto"
    assert prepare_task(Task("t", "two"), loader, 0).preprocess == "standard"
    # labels and positive given as different types still match
    num = prepare_task(
        Task("n", "two", positive="1"), lambda n: (*loader(n)[:1], np.arange(48) % 2, {}), 0
    )
    assert num.y.sum() == 24
    with pytest.raises(ValueError, match="positive class 'nope'"):
        prepare_task(Task("bad", "two", positive="nope"), loader, 0)
    with pytest.raises(ValueError, match="drop_columns"):
        prepare_task(Task("bad", "two", drop_columns=("zz",)), loader, 0)


def test_prepare_task_keeps_the_task_classes():
    three = lambda n: (loader(n)[0], np.arange(48) % 4, {})  # noqa: E731 - labels 0..3
    full = prepare_task(Task("all", "two"), three, 0)
    d = prepare_task(Task("c", "two", classes=(1, "3")), three, 0)  # types need not match
    keep = np.isin(full.y, [1, 3])
    assert np.array_equal(d.y, full.y[keep]) and d.X.equals(full.X[keep].reset_index(drop=True))
    # then positive and subsample, on the kept rows only
    b = prepare_task(Task("b", "two", classes=(0, 1, 2), positive=2, subsample=18), three, 0)
    assert len(b.y) == 18 and b.y.sum() == 6
    with pytest.raises(ValueError, match="task 'bad': class 7 is not among the labels"):
        prepare_task(Task("bad", "two", classes=(1, 7)), three, 0)


def test_split_indices_follow_protocol():
    y = np.arange(40) % 2
    t = Task("t", "two")
    kf = split_indices(y, tiny_suite(protocol=Protocol("kfold", n_splits=4, n_repeats=2)), t)
    assert len(kf) == 8
    for r in range(2):
        tests = np.concatenate([te for _, te in kf[4 * r : 4 * r + 4]])
        assert np.array_equal(np.sort(tests), np.arange(40))  # each repeat partitions
    sp = split_indices(y, tiny_suite(protocol=Protocol("split", n_repeats=3, test_size=0.25)), t)
    assert len(sp) == 3 and all(len(te) == 10 and len(tr) == 30 for tr, te in sp)
    suite_tt = tiny_suite(
        protocol=Protocol("train_test"), tasks=[Task("t", "two", test_dataset="two")]
    )
    ((tr, te),) = split_indices(y, suite_tt, t)
    assert te is None and len(tr) == 40


def test_split_indices_keep_groups_whole():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(20), 3)
    y = np.repeat(rng.integers(0, 2, 20), 3)
    t = Task("t", "two")
    kfold = tiny_suite(protocol=Protocol("kfold", n_splits=4, n_repeats=2))
    kf = split_indices(y, kfold, t, groups)
    assert len(kf) == 8
    for r in range(2):
        tests = np.concatenate([te for _, te in kf[4 * r : 4 * r + 4]])
        assert np.array_equal(np.sort(tests), np.arange(60))  # each repeat partitions
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(kf[:4], kf[4:]))  # repeats differ
    split = tiny_suite(protocol=Protocol("split", n_repeats=3, test_size=0.25))
    sp = split_indices(y, split, t, groups)
    assert len(sp) == 3 and all(len(te) == 15 for _, te in sp)  # a quarter of the groups
    for tr, te in kf + sp:
        assert not set(groups[tr]) & set(groups[te])
    again = split_indices(y, kfold, t, groups)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(kf, again))  # seeded


def test_prepare_task_takes_the_groups_column_out_of_the_features():
    import pandas as pd

    def grouped(name):
        X = pd.DataFrame({"a": np.arange(12.0), "subject": np.repeat(["s1", "s2", "s3"], 4)})
        return X, np.arange(12) % 2, {"version": "v"}

    data = prepare_task(Task("g", "g", groups="subject"), grouped, 0)
    assert list(data.X.columns) == ["a"]
    assert list(data.groups) == [0] * 4 + [1] * 4 + [2] * 4
    with pytest.raises(ValueError, match="groups column 'patient' not in the data"):
        prepare_task(Task("g", "g", groups="patient"), grouped, 0)


def test_build_cells_keys_and_filters():
    suite = tiny_suite()
    cells = build_cells(suite)
    assert len(cells) == 2 * 2 * 2
    assert len({c.key for c in cells}) == len(cells)
    assert [c.key for c in build_cells(suite)] == [c.key for c in cells]  # stable
    same_split = [c for c in cells if c.task.name == "two" and c.split == 1]
    assert len({c.seed for c in same_split}) == 1  # methods share the split's seed
    assert len(build_cells(suite, tasks=["two"])) == 4
    assert len(build_cells(suite, methods=["grid"])) == 4  # by label or method name
    with pytest.raises(ValueError, match="unknown tasks"):
        build_cells(suite, tasks=["nope"])
    # a change of a method's params is a different cell
    other = tiny_suite(methods=[MethodSpec("grid", "grid", {"n_splits": 4})])
    assert not {c.key for c in build_cells(other)} & {c.key for c in cells}


def test_task_tuner_params_reach_the_tuner_and_the_key(monkeypatch):
    from svmtune import SVMTuner

    seen = []
    fit = SVMTuner.fit

    def spy(self, X, y, sample_weight=None):
        seen.append(self.multiclass)
        return fit(self, X, y, sample_weight)

    monkeypatch.setattr(SVMTuner, "fit", spy)
    plain = tiny_suite(tasks=[Task("three", "three")], methods=[MethodSpec("default", "default")])
    ovo = tiny_suite(
        tasks=[Task("three", "three", tuner_params={"multiclass": "ovo"})],
        methods=[
            MethodSpec("default", "default"),
            MethodSpec("default-ovr", "default", tuner_params={"multiclass": "ovr"}),
        ],
    )
    # keys: unchanged without task tuner params, different with them
    c0 = build_cells(plain)[0]
    old_formula = cell_key(
        suite="tiny",
        task="three",
        split=c0.split,
        label="default",
        method="default",
        params={},
        tuner_params={},
        seed=c0.seed,
    )
    assert c0.key == old_formula
    assert not {c.key for c in build_cells(ovo)} & {c.key for c in build_cells(plain)}
    rows = [run_cell(c, loader) for c in build_cells(ovo) if c.split == 0]
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert list(dict.fromkeys(seen)) == ["ovo", "ovr"]  # the method's own tuner_params win
    assert rows[0]["tuner_params"] == {"multiclass": "ovo"}
    assert rows[1]["tuner_params"] == {"multiclass": "ovr"}


def test_run_cell_row_on_mixed_data():
    suite = tiny_suite(
        tasks=[Task("mixed", "mixed", drop_columns=("id",))],
        methods=[
            MethodSpec("grid", "grid", {"log2_sigma": (0, 1, 1), "log2_C": (0, 0), "n_splits": 3})
        ],
    )
    row = run_cell(build_cells(suite)[0], loader)
    assert row["status"] == "ok", row.get("traceback")
    assert row["preprocess"] == "auto" and row["dataset_version"] == "sha-mixed"
    assert row["n_train"] == 20 and row["n_test"] == 20 and row["n_features"] == 5
    for f in ("accuracy", "f1", "default_accuracy"):
        assert 0.0 <= row[f] <= 1.0
    cm = np.array(row["confusion"])
    assert row["confusion_labels"] == ["neg", "pos"] and cm.shape == (2, 2)
    assert cm.sum() == row["n_test"] and np.trace(cm) / cm.sum() == row["accuracy"]
    tp, fp, fn = cm[1, 1], cm[0, 1], cm[1, 0]  # F1 of classes_[1], recomputed from the counts
    assert 2 * tp / (2 * tp + fp + fn) == pytest.approx(row["f1"])
    assert row["log_loss"] > 0 and 0 <= row["brier"] <= 2
    assert row["selection_time"] > 0 and row["final_fit_time"] > 0
    assert row["timing_repeats"] in (1, 2, 3)
    assert row["default_fit_time"] > 0 and row["n_svm_fits"] == 2 * 3
    assert row["params"]["kernel"] == "rbf" and row["estimate"] is not None
    assert row["entropy"] is not None or "entropy" in row["notes"]
    assert set(row["versions"]) >= {"svmtune", "numpy", "scipy", "sklearn"}
    assert row["machine"]["cpu_count"] == os.cpu_count() and row["timestamp"]
    assert "cpu" in row["machine"] and row["blas_threads"] == 1
    if Path("/proc/cpuinfo").exists():  # Linux: the model name, which processor() lacks
        assert row["machine"]["cpu"]


def test_confusion_counts_recompute_macro_f1_and_keep_unseen_test_labels():
    from svmtune.bench.runner import _metrics

    class Stub:  # predicts its input; three classes seen in training
        classes_ = np.array([0, 1, 2])

        def predict(self, X):
            return np.asarray(X)

        def predict_proba(self, X):
            return np.full((len(X), 3), 1 / 3)

    y_test = np.array([0, 0, 1, 1, 2, 2, 3])
    pred = np.array([0, 1, 1, 2, 2, 2, 0])
    out, notes = _metrics(Stub(), pred, y_test)
    assert out["confusion_labels"] == [0, 1, 2, 3]
    cm = np.array(out["confusion"])
    assert cm.sum() == 7 and cm[3, 0] == 1 and np.trace(cm) / 7 == out["accuracy"]
    tp = np.diag(cm)[:3]
    f1 = 2 * tp / (cm[:, :3].sum(axis=0) + cm[:3].sum(axis=1))  # macro over the seen classes
    assert f1.mean() == pytest.approx(out["f1"])
    assert out["log_loss"] is None and "proba" in notes  # label 3 is unknown to the model


def test_cheap_methods_are_timed_like_the_yardstick(monkeypatch):
    """Fastest of up to 3 fits under 1 s; one fit above; non-reproducible selection fails."""
    import svmtune.bench.runner as runner_module
    from svmtune import SVMTuner

    cell = build_cells(tiny_suite(methods=[MethodSpec("default", "default")]))[0]
    row = run_cell(cell, loader)
    assert row["status"] == "ok" and row["timing_repeats"] == 3
    monkeypatch.setattr(runner_module, "CHEAP_CELL_SECONDS", 0.0)
    assert run_cell(cell, loader)["timing_repeats"] == 1
    monkeypatch.setattr(runner_module, "CHEAP_CELL_SECONDS", 1.0)
    fit = SVMTuner.fit
    calls = []

    def drifting(self, X, y, sample_weight=None):
        fit(self, X, y, sample_weight)
        calls.append(1)
        if len(calls) > 1:  # a second fit "chooses" another C
            self.best_params_ = {**self.best_params_, "C": 2.0}
        return self

    monkeypatch.setattr(SVMTuner, "fit", drifting)
    bad = run_cell(cell, loader)
    assert bad["status"] != "ok" and "not reproducible" in bad["traceback"]


def test_compiled_loops_are_warmed_up_once_before_the_clock(monkeypatch):
    """The numba loops are compiled / loaded once per process, outside the timed fits."""
    import svmtune.bench.runner as runner_module

    events = []
    monkeypatch.setattr(runner_module, "warm_up", lambda: events.append("warm"))
    monkeypatch.setattr(runner_module, "_WARMED_UP", False)
    timed = runner_module._timed_tuner_fit

    def recording(*args, **kwargs):
        events.append("timed")
        return timed(*args, **kwargs)

    monkeypatch.setattr(runner_module, "_timed_tuner_fit", recording)
    cells = build_cells(tiny_suite(methods=[MethodSpec("default", "default")]))[:2]
    for cell in cells:
        row = run_cell(cell, loader)
        assert row["status"] == "ok" and row["jit_warmed_up"] is True
    assert events == ["warm", "timed", "timed"]


def test_a_failing_warm_up_is_the_cells_status(monkeypatch):
    """run_cell never raises: a warm-up that fails becomes the row's status."""
    import svmtune.bench.runner as runner_module

    def broken():
        raise RuntimeError("no compiler")

    monkeypatch.setattr(runner_module, "warm_up", broken)
    monkeypatch.setattr(runner_module, "_WARMED_UP", False)
    cell = build_cells(tiny_suite(methods=[MethodSpec("default", "default")]))[0]
    row = run_cell(cell, loader)
    assert row["status"] != "ok" and "no compiler" in row["traceback"]


def test_run_cell_records_errors(monkeypatch):
    monkeypatch.setitem(methods_base.METHODS, "rbsvm", "svmtune.methods.not_there:X")
    suite = tiny_suite(
        methods=[MethodSpec("RBSVM", "rbsvm"), MethodSpec("bad", "grid", {"n_splits": 1})]
    )
    cells = build_cells(suite, tasks=["two"])
    rows = [run_cell(c, loader) for c in cells[:2]]
    assert rows[0]["status"] == "error: method module not available (svmtune.methods.not_there)"
    assert rows[1]["status"].startswith("error: ValueError: n_splits must be")
    assert "traceback" in rows[1] and rows[1]["key"] == cells[1].key


def test_killed_run_resumes_to_the_clean_rows(tmp_path):
    clean = tmp_path / "clean"
    run_suite(tiny_suite(), clean, loader=loader, progress=False)
    clean_rows = _file_rows(clean)
    assert len(clean_rows) == 8 and all(r["status"] == "ok" for r in clean_rows)

    out = tmp_path / "killed"
    path = out / "tiny" / "results.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.bench._tiny", str(out)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if path.exists() and path.read_bytes().count(b"\n") >= 1:
                break
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    n_before = len(read_rows(path))
    assert 1 <= n_before < 8, "the run must be killed in the middle"
    with open(path, "ab") as fh:  # and as if it died while writing a row
        fh.write(b'{"key": "torn", "status": "o')

    summary = run_suite(tiny_suite(), out, loader=loader, progress=False)
    assert summary.n_skipped == n_before and summary.n_run == 8 - n_before
    lines = path.read_bytes().decode().splitlines()
    assert len(lines) == 8  # the torn line is gone, nothing duplicated
    rows = _file_rows(out)
    assert len({r["key"] for r in rows}) == 8
    assert _fingerprint(rows) == _fingerprint(clean_rows)

    again = run_suite(tiny_suite(), out, loader=loader, progress=False)
    assert again.n_run == 0 and len(_file_rows(out)) == 8


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (Linux /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states in /proc")
@pytest.mark.parametrize(
    ("signum", "returncode"),
    [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, -signal.SIGINT)],
    ids=["SIGTERM", "SIGINT"],
)
def test_a_stopped_parallel_run_stops_its_workers(tmp_path, signum, returncode):
    """``kill`` (SIGTERM; the workers used to go on computing) or Ctrl-C (SIGINT) of a
    parallel run ends its workers too."""
    pids = tmp_path / "pids"
    pids.mkdir()
    log = tmp_path / "stderr.txt"
    with open(log, "wb") as err:  # a file, not a pipe: the workers inherit it
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.bench._tiny", str(tmp_path / "out"), "--slow"],
            cwd=REPO,
            env={**os.environ, "SVMTUNE_TEST_PID_DIR": str(pids)},
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            workers = [int(p.name) for p in pids.iterdir()]
            if len(workers) == 2:
                break
            time.sleep(0.05)
        assert len(workers) == 2, "both workers must be inside a cell before the signal"
        proc.send_signal(signum)
        proc.wait(timeout=120)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(map(_running, workers)):
            time.sleep(0.1)
        left = [pid for pid in workers if _running(pid)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in workers:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
    assert not left, f"workers {left} still run after the parent was terminated"
    assert proc.returncode == returncode, log.read_text()[-2000:]


def test_cells_stored_by_a_concurrent_run_are_skipped(tmp_path):
    """A run leaves out the cells another run stores after it started (and counts them as
    already stored); two runs of one suite at once end with every cell stored once."""
    from svmtune.bench.runner import _not_stored_meanwhile
    from svmtune.bench.store import ResultStore

    cells = build_cells(tiny_suite())
    skipped = []
    with ResultStore(tmp_path / "s") as mine, ResultStore(tmp_path / "s") as other:
        gen = _not_stored_meanwhile(cells[:4], mine, False, skipped)
        assert next(gen) is cells[0]
        other.append({"key": cells[2].key, "status": "ok"})
        assert list(gen) == [cells[1], cells[3]] and skipped == [cells[2]]


def test_a_second_run_on_one_results_directory_is_refused(tmp_path):
    """Two runs of one suite into one ``out`` at once: the second is refused with StoreBusy
    naming the holder's pid, and no cell is computed twice (8 cells, 8 rows)."""
    from svmtune.exceptions import StoreBusy

    done, refused = {}, {}
    started = threading.Event()
    release = threading.Event()

    def slow_loader(*args, **kwargs):
        started.set()
        release.wait(60)  # the first run holds the lock while the second tries
        return loader(*args, **kwargs)

    def first():
        done["a"] = run_suite(tiny_suite(), tmp_path / "both", loader=slow_loader, progress=False)

    t = threading.Thread(target=first)
    t.start()
    assert started.wait(60)
    try:
        run_suite(tiny_suite(), tmp_path / "both", loader=loader, progress=False)
    except StoreBusy as exc:
        refused["msg"] = str(exc)
    finally:
        release.set()
        t.join(240)
    assert f"process {os.getpid()} holds the 'run' lock" in refused["msg"]
    assert "give another --out" in refused["msg"]
    assert done["a"].n_run == 8 and done["a"].n_error == 0
    rows = _file_rows(tmp_path / "both")
    assert len(rows) == len({r["key"] for r in rows}) == 8  # each cell computed once


def test_max_cells_then_resume_and_parallel(tmp_path):
    first = run_suite(tiny_suite(), tmp_path / "a", loader=loader, max_cells=3, progress=False)
    assert (first.n_run, first.n_remaining) == (3, 5)
    rest = run_suite(tiny_suite(), tmp_path / "a", loader=loader, n_jobs=2, progress=False)
    assert (rest.n_skipped, rest.n_run, rest.n_remaining) == (3, 5, 0)
    seq = run_suite(tiny_suite(), tmp_path / "b", loader=loader, progress=False)
    assert seq.n_ok == 8
    assert _fingerprint(_file_rows(tmp_path / "a")) == _fingerprint(_file_rows(tmp_path / "b"))


def test_retry_errors_and_experiments(tmp_path, monkeypatch):
    calls = []

    def study(outdir, seed):
        calls.append(seed)
        p = Path(outdir) / "study.csv"
        p.write_text("a,b\n1,2\n")
        return [p]

    def broken(outdir, seed):
        raise RuntimeError("no data")

    suite = tiny_suite(methods=[MethodSpec("RBSVM", "rbsvm")], experiments=[study, broken])
    monkeypatch.setitem(methods_base.METHODS, "rbsvm", "svmtune.methods.not_there:X")
    s1 = run_suite(suite, tmp_path, loader=loader, progress=False)
    assert s1.n_error == 4 and calls == [3]
    exp = {e["experiment"]: e for e in s1.experiments}
    assert exp["study"]["status"] == "ok" and exp["study"]["files"] == [
        "experiments/study/study.csv"
    ]
    assert exp["broken"]["status"] == "error: RuntimeError: no data"
    assert (tmp_path / "tiny" / "experiments" / "study" / "study.csv").exists()

    s2 = run_suite(suite, tmp_path, loader=loader, progress=False)  # nothing to redo
    assert s2.n_run == 0 and calls == [3]

    monkeypatch.setitem(methods_base.METHODS, "rbsvm", "svmtune.methods.default:DefaultSVC")
    s3 = run_suite(suite, tmp_path, loader=loader, retry_errors=True, progress=False)
    assert (s3.n_run, s3.n_ok) == (4, 4) and calls == [3]  # "study" succeeded before
    rows = [r for r in _file_rows(tmp_path) if r["kind"] == "cell"]
    latest = {r["key"]: r["status"] for r in rows}  # superseded rows stay in the file
    assert len(rows) == 8 and set(latest.values()) == {"ok"}

    s4 = run_suite(suite, tmp_path, loader=loader, rerun_experiments=["study"], progress=False)
    assert s4.n_run == 0 and calls == [3, 3]  # run again although stored ok
    records = [r for r in _file_rows(tmp_path) if r["kind"] == "experiment"]
    assert [r["experiment"] for r in records].count("study") == 2
    with pytest.raises(ValueError, match="no experiment"):
        run_suite(suite, tmp_path, loader=loader, rerun_experiments=["stdy"], progress=False)
    with pytest.raises(ValueError, match="needs experiments=True"):
        run_suite(suite, tmp_path, loader=loader, experiments=False, rerun_experiments=["study"])


def test_experiments_running_elsewhere_are_left_to_that_run(tmp_path):
    from svmtune.bench.store import ResultStore

    calls = []

    def study(outdir, seed):
        calls.append(seed)
        return []

    suite = tiny_suite(methods=[MethodSpec("default", "default")], experiments=[study])
    with ResultStore(tmp_path / "tiny") as other, other.exclusive("experiments"):
        with pytest.warns(RuntimeWarning, match="another run is running its experiments"):
            busy = run_suite(suite, tmp_path, loader=loader, progress=False)
    assert busy.n_ok == 4 and busy.experiments == [] and calls == []
    free = run_suite(suite, tmp_path, loader=loader, progress=False)
    assert free.n_run == 0 and calls == [3] and free.experiments[0]["status"] == "ok"


def test_cells_run_with_single_threaded_blas():
    from threadpoolctl import threadpool_info

    seen = []

    def recording_loader(name):
        seen.append({i["num_threads"] for i in threadpool_info()})
        return loader(name)

    row = run_cell(build_cells(tiny_suite())[0], recording_loader)
    assert row["status"] == "ok" and seen == [{1}]


def test_rerun_before_reruns_older_rows_and_resumes(tmp_path):
    import json

    first = run_suite(tiny_suite(), tmp_path, loader=loader, progress=False)
    assert first.n_ok == 8
    path = tmp_path / "tiny" / "results.jsonl"
    old = [{**r, "timestamp": "2001-01-01T00:00:00+00:00"} for r in read_rows(path)]
    path.write_text("".join(json.dumps(r) + "\n" for r in old))
    change = "2020-06-01T12:00:00"  # naive: UTC; after the old rows, before the new ones
    # only the selected cells written before the time run again; a second call with the same
    # time resumes (rows written at or after it count as done)
    some = run_suite(
        tiny_suite(), tmp_path, loader=loader, rerun_before=change, max_cells=3, progress=False
    )
    assert (some.n_run, some.n_remaining) == (3, 5)
    rest = run_suite(tiny_suite(), tmp_path, loader=loader, rerun_before=change, progress=False)
    assert (rest.n_skipped, rest.n_run) == (3, 5)
    again = run_suite(tiny_suite(), tmp_path, loader=loader, rerun_before=change, progress=False)
    assert again.n_run == 0
    rows = read_rows(path)
    assert len(rows) == 16  # the superseded rows stay in the file; the last of a key wins
    assert _fingerprint(rows[8:]) == _fingerprint(old)  # same results
    early = run_suite(
        tiny_suite(), tmp_path, loader=loader, rerun_before="2000-01-01", progress=False
    )
    assert early.n_run == 0  # every row is newer
    with pytest.raises(ValueError, match="ISO 8601"):
        run_suite(tiny_suite(), tmp_path, loader=loader, rerun_before="yesterday")


def test_a_damaged_results_line_is_quarantined_once_and_the_run_resumes(tmp_path):
    """Non-UTF-8 bytes and a cut line followed by a newline in a results file: the run
    names file and lines once, moves them aside, and resumes from the rows that remain."""
    import warnings

    first = run_suite(tiny_suite(), tmp_path, loader=loader, max_cells=3, progress=False)
    path = first.path
    good = path.read_bytes()
    path.write_bytes(good + b"\x80\x81\xfe garbage\n" + good.splitlines()[0][:25] + b"\n")
    with pytest.warns(RuntimeWarning, match=r"moved 2 damaged line\(s\).*line 4 \(not UTF-8"):
        rest = run_suite(tiny_suite(), tmp_path, loader=loader, progress=False)
    assert (rest.n_skipped, rest.n_run, rest.n_remaining) == (3, 5, 0)
    assert (path.parent / "results.jsonl.damaged").read_bytes().count(b"\n") == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once: the next run has nothing to say
        again = run_suite(tiny_suite(), tmp_path, loader=loader, progress=False)
    assert (again.n_skipped, again.n_run) == (8, 0)
