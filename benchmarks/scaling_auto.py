"""``auto`` against ``SVC()``, scikit-learn's halving search and an Optuna search, against n.

Every cell (data set, training size, method, seed) runs in a fresh Python process (no
compiled code, cache or warm import shared between methods or cells) under a wall-time limit,
and is appended as one JSON line to ``<out>/results.jsonl`` (:class:`svmtune.bench.store.
ResultStore`: one ``write`` + ``fsync`` per row).  A rerun skips the stored cells (a timed-out
cell is run again only under a longer ``--timeout``; errors only with ``--retry-errors``;
everything with ``--force``).  The cells of a set run by growing size; with
``--skip-after-timeout`` a method that timed out at one size is not run at the set's larger
sizes (those cells are neither run nor stored: the table leaves them blank).  ``table``
writes ``benchmarks/scaling_auto.md`` and ``benchmarks/scaling_auto.png`` from the result
files only::

    python benchmarks/scaling_auto.py run --sets ijcnn1,a9a --sizes 1000,2000,full \\
        --methods auto,default,halving,optuna --seeds 0 --timeout 900 \\
        --out benchmarks/results/scaling_auto
    python benchmarks/scaling_auto.py table

The full run takes the defaults (every set of :data:`SETS`, every size of :data:`SIZES`, all
four methods, seed 0, 900 s), with nothing else running on the machine::

    python benchmarks/scaling_auto.py run --skip-after-timeout
    python benchmarks/scaling_auto.py table

Methods (all with ``n_jobs`` left at its default, i.e. one process):

``auto``
    ``svmtune.SVMTuner(random_state=seed)``: the default method, standardising itself.
``default``
    scikit-learn's ``SVC()`` (C = 1, gamma = "scale") on standardised features.
``halving``
    ``HalvingRandomSearchCV(make_pipeline(StandardScaler(), SVC()), {"svc__C":
    loguniform(2^-5, 2^15), "svc__gamma": loguniform(2^-15, 2^3)}, factor=3, cv=3,
    random_state=seed)`` with scikit-learn's other defaults (``n_candidates`` and
    ``min_resources`` "exhaust", ``refit=True``, so its time includes the final fit).
``optuna``
    svmtune's registered ``optuna`` method, ``SVMTuner(method="optuna", random_state=seed)``
    with its default budget: 60 Optuna TPE trials over log2 sigma, log2 C in [-8, 8], each
    scored by 10-fold CV, then the final ``SVC`` (:class:`svmtune.methods.optuna_tpe.
    OptunaTPE`).

Data: the training part of each set is its official training file (ijcnn1, a9a, the MNIST
pairs, scored on their official test files) or, for a single-file set, a stratified 70 %
split with the seed (the other 30 % is held out).  Categorical columns (bank_marketing) are
one-hot encoded with the categories of the training rows, so every method sees the same
numeric features.  A size ``n`` is the first ``n`` rows of a seeded stratified order of the
training part (every prefix keeps the class shares; the sizes are nested); ``full`` is the
whole training part, and a numeric size at or above it is skipped.  The MNIST pairs run by
default are 2 vs 9 and 3 vs 6 (0 vs 8 and 1 vs 7 are near 100 % for every method).

Cost: ``selection_s + final_fit_s`` (``auto``/``optuna``: the tuner's ``selection_time_`` and
``final_fit_time_``; ``halving``: its fit's wall time less ``refit_time_``, and
``refit_time_``), and that over one ``SVC()`` fit on the same standardised training rows,
measured in the same process after the method and its prediction (the fastest of three when
the first takes under a second, as :mod:`svmtune.bench.measure` does), under its own
``--timeout``: a reference fit that does not finish in time is recorded as missing
(``ref_status``), never estimated.  For ``default`` its own fit is the unit.  The time limit
counts from the moment the data are loaded; a method that does not finish within it is
recorded as ``status: "timeout"`` with the seconds it ran.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
#: benchmark name -> (training file, official test file or None: a stratified 30 % split)
SETS = {
    "ijcnn1": ("ijcnn1_train", "ijcnn1_test"),
    "a9a": ("adult_a9a_train", "adult_a9a_test"),
    "skin_nonskin": ("skin_nonskin", None),
    "eeg_eye_state": ("eeg_eye_state", None),
    "bank_marketing": ("bank_marketing", None),
    "mnist_2v9": ("mnist_2v9_train", "mnist_2v9_test"),
    "mnist_3v6": ("mnist_3v6_train", "mnist_3v6_test"),
    "waveform_5000": ("waveform_5000", None),
    "spambase": ("spambase", None),
}
SIZES = ("1000", "2000", "5000", "10000", "20000", "50000", "full")
METHODS = ("auto", "default", "halving", "optuna")
HOLDOUT = 0.3
LOAD_LIMIT = 300.0  # seconds allowed for loading a set (under a shorter --timeout)
SHORT_FIT = 1.0  # seconds: a reference fit this short is repeated (3 in all), the fastest kept


# ---------------------------------------------------------------------------------- data
def files_of(name: str) -> tuple[str, str | None]:
    """The training and test file of benchmark set ``name``: :data:`SETS`, else any bundled
    set (``<name>_train`` + ``<name>_test`` if both exist, else ``<name>`` split)."""
    if name in SETS:
        return SETS[name]
    from svmtune.datasets import list_datasets

    names = set(list_datasets())
    if f"{name}_train" in names and f"{name}_test" in names:
        return f"{name}_train", f"{name}_test"
    if name in names:
        return name, None
    raise SystemExit(f"unknown data set {name!r}: one of {sorted(SETS)} or a bundled name")


def stratified_order(y: np.ndarray, seed: int) -> np.ndarray:
    """A seeded shuffle whose every prefix keeps the class shares (nested subsamples)."""
    rng = np.random.RandomState(seed)
    keys = np.empty(y.shape[0])
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        keys[idx] = (rng.permutation(idx.size) + rng.uniform(size=idx.size)) / idx.size
    return np.argsort(keys, kind="stable")


def load_parts(name: str, seed: int):
    """``(X_train, y_train, X_test, y_test, version)`` of the whole training part (frames)."""
    from sklearn.model_selection import train_test_split

    from svmtune.datasets import load_dataset

    train, test = files_of(name)
    X, y, info = load_dataset(train)
    if test is not None:
        Xt, yt, tinfo = load_dataset(test)
        return X, y, Xt, yt, {"train": info.version, "test": tinfo.version}
    X, Xt, y, yt = train_test_split(X, y, test_size=HOLDOUT, stratify=y, random_state=seed)
    return X, y, Xt, yt, {"train": info.version, "test": None}


def n_train_full(name: str, seed: int) -> int:
    """Rows of the training part: from the manifest's row count where it has one (no file
    is read, so the parent process holds no data), else by loading the set."""
    from svmtune.datasets import manifest

    train, test = files_of(name)
    entry = manifest().get(train)
    if entry is None or entry.n is None:
        return len(load_parts(name, seed)[1])
    # train_test_split holds out ceil(HOLDOUT * n) rows
    return entry.n if test is not None else entry.n - math.ceil(HOLDOUT * entry.n)


def encode(X, Xt) -> tuple[np.ndarray, np.ndarray]:
    """Float arrays of ``X`` and ``Xt``, categorical columns one-hot encoded with the
    categories of ``X`` (unseen ones: all zeros); missing values are refused."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    from svmtune.preprocess import categorical_columns

    cats = categorical_columns(X)
    if cats:
        ct = ColumnTransformer(
            [("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cats)],
            remainder="passthrough",
            sparse_threshold=0,
        )
        A, B = ct.fit_transform(X), ct.transform(Xt)
    else:
        A, B = X.to_numpy(), Xt.to_numpy()
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    if np.isnan(A).any() or np.isnan(B).any():
        raise ValueError("the data have missing values; this benchmark takes complete sets")
    return A, B


def cell_data(name: str, size: str, seed: int):
    """The cell's training rows (the first ``size`` of the stratified order, or all), the
    held-out rows, and what the row records about them."""
    X, y, Xt, yt, version = load_parts(name, seed)
    order = stratified_order(np.asarray(y), seed)
    if size != "full":
        order = order[: int(size)]
    X, y = X.iloc[order], np.asarray(y)[order]
    A, B = encode(X, Xt)
    meta = {
        "n_train": int(A.shape[0]),
        "n_test": int(B.shape[0]),
        "d": int(A.shape[1]),
        "d_columns": int(X.shape[1]),
        "classes": int(np.unique(y).size),
        "data_version": version,
    }
    return A, y, B, np.asarray(yt), meta


# ------------------------------------------------------------------------------- methods
def _tuner_fields(tuner, _extra=None) -> dict:
    from svmtune.bench.store import jsonable

    return {
        "selection_s": float(tuner.selection_time_),
        "final_fit_s": float(tuner.final_fit_time_),
        "n_svm_fits": int(tuner.n_svm_fits_),
        "params": jsonable(tuner.best_params_),
        "details": jsonable(
            {
                "estimate": tuner.estimate_,
                "final_model": tuner.final_model_,
                "info": dict(tuner.selection_.info),
                "history": tuner.history_,
            }
        ),
    }


def fit_tuner(method: str):
    from svmtune import SVMTuner

    if method == "optuna":
        import optuna  # noqa: F401  (imported before the clock starts, as in a user's session)

    def fit(X, y, seed):
        return SVMTuner(method=method, random_state=seed).fit(X, y), None

    return fit, _tuner_fields


def fit_default():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    def fit(X, y, seed):
        scaler = StandardScaler().fit(X)
        Xs = scaler.transform(X)
        t0 = time.perf_counter()
        svc = SVC().fit(Xs, y)
        return make_pipeline(scaler, svc), time.perf_counter() - t0

    def fields(model, svc_s):
        return {"selection_s": 0.0, "final_fit_s": svc_s, "n_svm_fits": 1, "params": {}}

    return fit, fields


def fit_halving():
    from scipy.stats import loguniform
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingRandomSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from svmtune.bench.store import jsonable

    space = {"svc__C": loguniform(2.0**-5, 2.0**15), "svc__gamma": loguniform(2.0**-15, 2.0**3)}

    def fit(X, y, seed):
        pipe = make_pipeline(StandardScaler(), SVC())
        search = HalvingRandomSearchCV(pipe, space, factor=3, cv=3, random_state=seed)
        t0 = time.perf_counter()
        search.fit(X, y)
        return search, time.perf_counter() - t0

    def fields(search, wall):
        scores = np.asarray(search.cv_results_["mean_test_score"], dtype=float)
        return {
            "selection_s": wall - search.refit_time_,
            "final_fit_s": float(search.refit_time_),
            "n_svm_fits": 3 * len(scores) + 1,
            "params": jsonable(search.best_params_),
            "details": jsonable(
                {
                    "n_candidates": search.n_candidates_,
                    "n_resources": search.n_resources_,
                    "n_iterations": search.n_iterations_,
                    "failed_candidates": int(np.isnan(scores).sum()),
                    "best_score": search.best_score_,
                }
            ),
        }

    return fit, fields


def method_fit(method: str):
    """``(fit, fields)``: ``fit(X, y, seed) -> (model, extra)`` and ``fields(model, extra)``
    (the row's selection and final-fit seconds, fits, parameters, details); the method's
    modules are imported here, before its clock starts."""
    if method in ("auto", "optuna"):
        return fit_tuner(method)
    if method == "default":
        return fit_default()
    if method == "halving":
        return fit_halving()
    raise SystemExit(f"unknown method {method!r}: one of {METHODS}")


# ---------------------------------------------------------------------------- child cell
def _maxrss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _put(path: Path, obj: dict) -> None:
    """Write ``obj`` as JSON to ``path`` atomically (temp file + rename)."""
    from svmtune.bench.store import jsonable

    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(jsonable(obj)), encoding="utf-8")
    os.replace(tmp, path)


def reference_fit(X: np.ndarray, y: np.ndarray) -> list[float]:
    """Seconds of ``SVC()`` fits on the standardised ``X``: one, or three if it is short."""
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    Xs = StandardScaler().fit_transform(X)
    times: list[float] = []
    while not times or (times[0] < SHORT_FIT and len(times) < 3):
        t0 = time.perf_counter()
        SVC().fit(Xs, y)
        times.append(time.perf_counter() - t0)
    return times


def child(args) -> None:
    """One cell in this (fresh) process: load, fit the method, predict, then the reference
    ``SVC()`` fit; each phase's result goes to a file in ``args.dir`` as it finishes."""
    from threadpoolctl import threadpool_info

    from svmtune.bench.measure import environment

    cell = Path(args.dir)
    X, y, Xt, yt, meta = cell_data(args.set, args.size, args.seed)
    fit, fields = method_fit(args.method)
    blas = [
        {k: i.get(k) for k in ("user_api", "internal_api", "num_threads")}
        for i in threadpool_info()
    ]
    _put(cell / "started.json", {**meta, **environment(), "blas": blas, "started": time.time()})
    t0 = time.perf_counter()
    model, extra = fit(X, y, args.seed)
    wall = time.perf_counter() - t0
    rec = fields(model, extra)
    t1 = time.perf_counter()
    accuracy = float(np.mean(model.predict(Xt) == yt))
    rec.update(fit_wall_s=wall, predict_s=time.perf_counter() - t1, accuracy=accuracy)
    rec["peak_rss_method_mib"] = _maxrss_mib()
    _put(cell / "method.json", rec)
    if args.method == "default":
        times = [rec["final_fit_s"]]
    else:
        times = reference_fit(X, y)
    _put(cell / "ref.json", {"ref_fit_s": min(times), "ref_fit_times": times})


# --------------------------------------------------------------------------- parent cell
def _read(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _watch(proc, cell: Path, timeout: float):
    """Wait for the child; kill its process group when a phase (loading the data, the
    method, the reference fit) outlives ``timeout`` (loading: :data:`LOAD_LIMIT` if longer).
    Returns (exit status, rusage, the phase killed or None)."""
    phase, deadline = "load", time.time() + max(timeout, LOAD_LIMIT)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage, None
        if phase == "load" and (s := _read(cell / "started.json")) is not None:
            phase, deadline = "method", s["started"] + timeout
        if phase == "method" and (cell / "method.json").exists():
            phase, deadline = "ref", time.time() + timeout
        if time.time() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage, phase
        time.sleep(0.05)


def run_cell(name: str, size: str, method: str, seed: int, timeout: float, work: Path) -> dict:
    """Run one cell in a fresh process under ``timeout`` and return its result row."""
    cell = work / f"{name}-{size}-{method}-{seed}"
    shutil.rmtree(cell, ignore_errors=True)
    cell.mkdir(parents=True)
    load_start, t_spawn = os.getloadavg(), time.time()
    cmd = [sys.executable, str(Path(__file__).resolve()), "cell", "--set", name, "--size", size]
    cmd += ["--method", method, "--seed", str(seed), "--dir", str(cell)]
    with open(cell / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        try:
            code, usage, killed = _watch(proc, cell, timeout)
        except BaseException:  # Ctrl-C or a failure here: no cell left running on its own
            if proc.returncode is None:
                os.killpg(proc.pid, signal.SIGKILL)
                os.waitpid(proc.pid, 0)
            raise
    started, res, ref = (_read(cell / f) for f in ("started.json", "method.json", "ref.json"))
    row: dict = {"set": name, "size": size, "method": method, "seed": seed, "timeout_s": timeout}
    started = started or {}
    t_start = started.pop("started", t_spawn)
    row.update({k: started.pop(k) for k in list(started) if k not in ("machine", "blas")})
    row["machine"] = {
        **started.get("machine", {}),
        "blas": started.get("blas"),
        "loadavg_start": list(load_start),
        "loadavg_end": list(os.getloadavg()),
    }
    row["peak_rss_mib"] = usage.ru_maxrss / 1024.0
    row["exit_code"] = code
    if res is not None:
        row.update(res)
        row["cost_s"] = res["selection_s"] + res["final_fit_s"]
    if res is not None and row["cost_s"] <= timeout:
        row["status"] = "ok"
    elif killed == "method" or (res is not None and row["cost_s"] > timeout):
        row["status"] = "timeout"
        row["cost_s"] = row.get("cost_s", time.time() - t_start)
        row["message"] = f"could not finish in {timeout:g} s"
        for k in ("accuracy", "selection_s", "final_fit_s"):
            row.pop(k, None)
    else:
        row["status"] = "error"
        tail = (cell / "stderr.txt").read_text(errors="replace").strip().splitlines()
        row["message"] = (tail[-1] if tail else f"exit code {code}")[:500]
        if killed == "load":
            row["message"] = f"loading the data did not finish in {max(timeout, LOAD_LIMIT):g} s"
    if row["status"] == "ok":
        if ref is not None and ref["ref_fit_s"] <= timeout:
            row.update(ref, ref_status="ok", svc_units=row["cost_s"] / ref["ref_fit_s"])
        else:
            row["ref_status"] = "timeout" if killed == "ref" or ref is not None else "error"
    row["timestamp"] = datetime.now(UTC).isoformat(timespec="seconds")
    shutil.rmtree(cell, ignore_errors=True)
    return row


# ----------------------------------------------------------------------------------- run
def plan(sets, sizes, methods, seeds) -> list[tuple[str, str, str, int]]:
    """The cells, by set, seed and growing size: a numeric size below the set's training
    part, and ``full``."""
    cells = []
    sizes = sorted(set(sizes), key=lambda s: math.inf if s == "full" else int(s))
    for name in sets:
        for seed in seeds:
            n_full = n_train_full(name, seed)
            for size in sizes:
                if size == "full" or int(size) < n_full:
                    cells += [(name, size, m, seed) for m in methods]
    return cells


def _done(row: dict | None, timeout: float, retry_errors: bool) -> bool:
    if row is None:
        return False
    if row["status"] == "timeout":
        return row["timeout_s"] >= timeout
    return row["status"] == "ok" or not retry_errors


def cmd_run(args) -> None:
    from svmtune.bench.store import ResultStore, cell_key

    sets, methods = _csv(args.sets), _csv(args.methods)
    sizes = ["full" if s == "full" else str(int(s)) for s in _csv(args.sizes)]
    for m in methods:
        if m not in METHODS:
            raise SystemExit(f"unknown method {m!r}: choose from {', '.join(METHODS)}")
    seeds = [int(s) for s in _csv(args.seeds)]
    out = Path(args.out)
    timed_out: dict[tuple, int] = {}  # (set, method, seed) -> training rows it timed out at
    work = Path(tempfile.mkdtemp(prefix="scaling_auto-"))  # the cells' phase files
    with ResultStore(out) as store, contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, work, ignore_errors=True)
        stored = {r["key"]: r for r in store.rows()}
        for name, size, method, seed in plan(sets, sizes, methods, seeds):
            key = cell_key(set=name, size=size, method=method, seed=seed)
            row = stored.get(key)
            if args.force or not _done(row, args.timeout, args.retry_errors):
                if args.skip_after_timeout and (name, method, seed) in timed_out:
                    print(
                        f"{name} {size} {method} seed={seed}: not run (timed out at n = "
                        f"{timed_out[name, method, seed]:,})",
                        flush=True,
                    )
                    continue
                row = run_cell(name, size, method, seed, args.timeout, work)
                store.append({"key": key, "benchmark": "scaling_auto", **row})
                print(_summary(row), flush=True)
            if row["status"] == "timeout" and row["timeout_s"] >= args.timeout:
                timed_out.setdefault((name, method, seed), row.get("n_train", 0))


def _summary(r: dict) -> str:
    acc = f"{100 * r['accuracy']:.2f} %" if "accuracy" in r else "-"
    cost = f"{r['cost_s']:.1f} s" if "cost_s" in r else "-"
    units = f"{r['svc_units']:.1f} SVC() fits" if "svc_units" in r else "-"
    return f"{r['set']} n={r.get('n_train', r['size'])} {r['method']} seed={r['seed']}: " + (
        f"{r['status']} {acc} {cost} {units} {r.get('message', '')}"
    )


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the cells not stored yet")
    run.add_argument("--sets", default=",".join(SETS))
    run.add_argument("--sizes", default=",".join(SIZES))
    run.add_argument("--methods", default=",".join(METHODS))
    run.add_argument("--seeds", default="0")
    run.add_argument("--timeout", type=float, default=900.0, help="seconds per cell phase")
    run.add_argument("--out", default=str(HERE / "results" / "scaling_auto"))
    run.add_argument("--force", action="store_true", help="rerun stored cells too")
    run.add_argument("--retry-errors", action="store_true", help="rerun cells that failed")
    run.add_argument(
        "--skip-after-timeout",
        action="store_true",
        help="do not run (nor store) a method on a set's larger sizes once it timed out there",
    )
    tab = sub.add_parser("table", help="write the table and the figure from the results")
    tab.add_argument("--out", default=str(HERE / "results" / "scaling_auto"))
    tab.add_argument("--md", default=str(HERE / "scaling_auto.md"))
    tab.add_argument("--png", default=str(HERE / "scaling_auto.png"))
    cell = sub.add_parser("cell", help=argparse.SUPPRESS)
    for opt in ("--set", "--size", "--method", "--dir"):
        cell.add_argument(opt, required=True)
    cell.add_argument("--seed", type=int, required=True)
    args = ap.parse_args(argv)
    # the repository's data sets, wherever the script is run from (children inherit it)
    from svmtune.datasets import DATA_ENV

    os.environ[DATA_ENV] = os.pathsep.join([str(HERE / "data"), os.environ.get(DATA_ENV, "")])
    if args.command == "cell":
        child(args)
    elif args.command == "run":
        cmd_run(args)
    else:
        from _scaling_auto_table import write_outputs

        print(write_outputs(Path(args.out), Path(args.md), Path(args.png)))


if __name__ == "__main__":
    main()
