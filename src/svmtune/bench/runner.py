"""The benchmark runner: a suite becomes cells (task x split x method), each cell one row.

For every cell the runner loads and prepares the task's data (the task's classes, positive
class for one-vs-rest binary tasks, stratified subsample with the suite's seed, dropped
columns), splits it by the suite's protocol, fits :class:`svmtune.SVMTuner` on the training
part and scores it on the test part.  Only the selection (``tuner.selection_time_``) and the
final fit are timed, plus one ``SVC()`` fit with scikit-learn's defaults on the same
preprocessed training part (the fastest of three repeats), so that costs read as ratios.
A failing cell becomes a row with ``status = "error: ..."``; it never stops the run.

Rows are appended by the parent process, one at a time, to the suite's
:class:`~svmtune.bench.store.ResultStore` as workers finish (joblib,
``return_as="generator_unordered"``); a restarted run skips the cells already stored.

Seeds: subsamples and the protocol's splits use ``suite.seed``; a cell's ``random_state``
(passed to the tuner) is derived from (suite seed, task, split) and is therefore the same for
every method on the same split -- CV-based methods see the same inner folds.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from svmtune._warnings import recorded_warnings, user_stacklevel
from svmtune.bench.measure import (
    _entropy,
    _error_status,
    _metrics,
    _timed_default_fit,
    environment,
)
from svmtune.bench.runcontrol import (
    RunSummary,
    _not_stored_meanwhile,
    _progress,
    _sigterm_as_exit,
    suite_dir,
)
from svmtune.bench.store import (
    ResultStore,
    StoreBusy,
    cell_key,
    jsonable,
    parse_time,
)
from svmtune.bench.suite import MethodSpec, Suite, Task
from svmtune.bench.tasks import (
    Loader,
    TaskData,
    _info_get,
    _prepared,
    default_loader,
    derive_seed,
    prepare_task,
    split_indices,
)
from svmtune.criteria._pairloops import warm_up
from svmtune.methods.base import get_selector
from svmtune.preprocess import transform_as_fitted

__all__ = [
    "Cell",
    "TaskData",
    "RunSummary",
    "default_loader",
    "derive_seed",
    "prepare_task",
    "split_indices",
    "build_cells",
    "run_cell",
    "run_suite",
    "environment",
    "suite_dir",
]


# ----------------------------------------------------------------------------- cells
@dataclass(frozen=True)
class Cell:
    """One (task, split, method) unit of work; ``key`` identifies its row in the store."""

    suite: Suite
    task: Task
    split: int
    method: MethodSpec
    seed: int
    key: str

    def describe(self) -> str:
        return f"{self.task.name} #{self.split} {self.method.label}"


def _select(items: Sequence, wanted: Iterable[str] | None, names, what: str) -> list:
    if wanted is None:
        return list(items)
    wanted = [w for w in wanted if w]
    known = {n for it in items for n in names(it)}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise ValueError(f"unknown {what} {unknown}; the suite has: {sorted(known)}")
    return [it for it in items if any(w in names(it) for w in wanted)]


def build_cells(
    suite: Suite,
    *,
    tasks: Iterable[str] | None = None,
    methods: Iterable[str] | None = None,
) -> list[Cell]:
    """All cells of ``suite`` in a fixed order (task, split, method), optionally filtered by
    task names and by method labels or method names."""
    ts = _select(suite.tasks, tasks, lambda t: {t.name}, "tasks")
    ms = _select(suite.methods, methods, lambda m: {m.label, m.method}, "methods")
    # cells travel to worker processes, which may not import the modules of a suite file's
    # figures and experiments (those run in the main process): the cells' suite has none
    cell_suite = replace(suite, figures=[], experiments=[])
    cells = []
    for t in ts:
        for s in range(suite.protocol.n_splits_per_task):
            seed = derive_seed(suite.seed, t.name, s)
            for m in ms:
                key = cell_key(
                    suite=suite.name,
                    task=t.name,
                    split=s,
                    label=m.label,
                    method=m.method,
                    params=m.params,
                    tuner_params=m.tuner_params,
                    seed=seed,
                    # task-level tuner arguments join the key only when set, so the keys of
                    # the cells stored before the field existed stay valid
                    **({"task_tuner_params": t.tuner_params} if t.tuner_params else {}),
                    # the contents of a task's file, for tasks on the user's data (on_data)
                    **({"data_sha256": t.options["sha256"]} if "sha256" in t.options else {}),
                    # ... and how it is read (label column, format, dropped columns) if given
                    **({"data_read": t.options["read"]} if "read" in t.options else {}),
                )
                cells.append(Cell(cell_suite, t, s, m, seed, key))
    return cells


#: a method whose selection plus final fit takes less than this (seconds) is timed like the
#: SVC() yardstick: the fastest of ``TIMING_REPEATS`` identical fits
CHEAP_CELL_SECONDS = 1.0
TIMING_REPEATS = 3


def _timed_tuner_fit(tuner, X, y, groups=None) -> tuple[float, float, int]:
    """Fit ``tuner`` (with ``groups``, if given); return its selection time, final-fit time
    and the number of fits timed.

    Cheap methods (under :data:`CHEAP_CELL_SECONDS`) are refitted from scratch up to
    :data:`TIMING_REPEATS` times and the fastest selection and final fit are kept, the same
    rule as the ``SVC()`` yardstick's fit time, so that millisecond timings compare like with
    like.  Selection is deterministic given ``random_state``; a refit that chooses other
    hyperparameters is an error.  The fitted ``tuner`` is the first fit.
    """
    from sklearn.base import clone

    fit_kw = {} if groups is None else {"groups": groups}

    def once(est):
        t0 = time.perf_counter()
        est.fit(X, y, **fit_kw)
        wall = time.perf_counter() - t0
        final = getattr(est, "final_fit_time_", None)
        # without a timer of its own, the final fit is the rest of fit() (no selection work)
        return float(est.selection_time_), float(
            final if final is not None else wall - est.selection_time_
        )

    sel, final = once(tuner)
    repeats = 1
    while repeats < TIMING_REPEATS and sel + final < CHEAP_CELL_SECONDS:
        again = clone(tuner)
        s2, f2 = once(again)
        if again.best_params_ != tuner.best_params_:
            raise RuntimeError(
                f"refitting {tuner.method!r} with the same random_state chose "
                f"{again.best_params_}, not {tuner.best_params_}: selection is not reproducible"
            )
        sel, final, repeats = min(sel, s2), min(final, f2), repeats + 1
    return sel, final, repeats


def run_cell(
    cell: Cell,
    loader: Loader | None = None,
    *,
    entropy: bool = True,
    blas_threads: int | None = 1,
) -> dict:
    """Run one cell and return its result row (never raises: failures become the status).

    ``blas_threads`` caps the BLAS/OpenMP threads of the cell (default 1: cells are the unit
    of parallelism, and times are single-core times whether cells run in this process or in
    workers); None leaves the libraries' defaults.

    The cap is process-wide (threadpoolctl).  In the main thread (a serial run, loky worker
    processes) it is lifted when the cell ends.  In any other thread -- e.g. a Dask worker
    running several cells at once in its threads -- it is set and kept: lifting it when one
    cell ends would change the thread count, and with it the round-off, of a cell still
    running in another thread, so that cell's refit could choose other hyperparameters.
    """
    from threadpoolctl import threadpool_limits

    if blas_threads is None:
        row = _run_cell(cell, loader, entropy=entropy)
    elif threading.current_thread() is not threading.main_thread():
        threadpool_limits(limits=int(blas_threads))
        row = _run_cell(cell, loader, entropy=entropy)
    else:
        with threadpool_limits(limits=int(blas_threads)):
            row = _run_cell(cell, loader, entropy=entropy)
    row["blas_threads"] = blas_threads  # the times depend on it
    return row


_WARMED_UP = False


def _warm_up_compiled() -> None:
    """Compile (or load from the disk cache) svmtune's numba loops once per process, before
    any clock starts: the first use otherwise adds a one-time second or more to whichever
    cell of a data criterion comes first (:func:`svmtune.criteria._pairloops.warm_up`).  The
    L2-SVM solver and the default selection use no compiled code."""
    global _WARMED_UP
    if not _WARMED_UP:
        warm_up()
        _WARMED_UP = True


def _cell_row(cell: Cell) -> dict[str, Any]:
    """The row of a cell before it runs: what it is, and the environment."""
    m = cell.method
    return {
        "kind": "cell",
        "key": cell.key,
        "suite": cell.suite.name,
        "task": cell.task.name,
        "dataset": cell.task.dataset,
        # a --data task's file version is part of the cell's key, so its rows carry it
        # whatever happens (the report rebuilds the task from it)
        "dataset_version": cell.task.options.get("sha256"),
        "split": cell.split,
        "protocol": cell.suite.protocol.kind,
        "method": m.label,
        "method_name": m.method,
        "method_params": m.params,
        "tuner_params": {**cell.task.tuner_params, **m.tuner_params},
        **({"data_read": cell.task.options["read"]} if "read" in cell.task.options else {}),
        "seed": cell.seed,
        "status": "ok",
        "jit_warmed_up": True,  # svmtune's numba loops were loaded before the clocks
        **environment(),
    }


def _cell_data(cell: Cell, loader: Loader, row: dict) -> tuple[TaskData, Any, Any, Any, Any, Any]:
    """The task's prepared data and the cell's split ``(data, train indices, X_train,
    y_train, X_test, y_test)``; records the data versions and sizes in ``row``."""
    data, splits = _prepared(cell.suite, cell.task, loader)
    version = _info_get(data.info, "version")
    expected = cell.task.options.get("sha256")
    if expected is not None and version != expected:
        raise RuntimeError(
            f"{cell.task.dataset} changed since the run started (SHA-256 "
            f"{str(version)[:12]}... now, {expected[:12]}... when its cells were "
            "defined): its cells are not run on other contents; run the command again"
        )
    row["dataset_version"] = version
    if data.test_info is not None:
        row["test_dataset"] = cell.task.test_dataset
        row["test_dataset_version"] = _info_get(data.test_info, "version")
    train, test = splits[cell.split]
    Xtr, ytr = data.X.iloc[train], data.y[train]
    if test is None:
        Xte, yte = data.X_test, data.y_test
    else:
        Xte, yte = data.X.iloc[test], data.y[test]
    row.update(n_train=len(ytr), n_test=len(yte), n_classes=len(np.unique(ytr)))
    return data, train, Xtr, ytr, Xte, yte


def _fit_groups(cell: Cell, data: TaskData, train: Any, row: dict):
    """The training part's groups for the methods that cross-validate or hold out whole
    groups in closed form (rbsvm); None for the others, which hold out single rows or
    nothing (SVMTuner refuses or ignores groups for them).  Records in ``row`` the groups
    column and whether the method's selection saw the groups."""
    if data.groups is None:
        return None
    m = cell.method
    fit_groups = None
    if get_selector(m.method, dict(m.params)).holdout() in ("folds", "groups"):
        fit_groups = data.groups[train]
    row["groups"] = cell.task.groups
    # whether the method's selection saw the groups (by K-fold CV or by the
    # leave-one-group-out closed form)
    row["cv_groups"] = fit_groups is not None
    return fit_groups


def _yardstick_and_entropy(
    svc_class, tuner, Xtr, ytr, Xte, yte, row: dict, notes: dict, entropy: bool
) -> None:
    """The yardstick, one SVC() with scikit-learn's defaults on the same preprocessed
    training part, and the model entropy of the chosen model, into ``row``."""
    Xp_tr = transform_as_fitted(tuner.preprocessor_, Xtr)
    Xp_te = transform_as_fitted(tuner.preprocessor_, Xte)
    ytr_enc = np.searchsorted(tuner.classes_, ytr)
    row["n_features"] = int(Xp_tr.shape[1])
    row["default_fit_time"], svc = _timed_default_fit(svc_class, Xp_tr, ytr_enc)
    row["default_accuracy"] = float(np.mean(tuner.classes_[svc.predict(Xp_te)] == yte))
    if entropy:
        sw = getattr(tuner.selection_, "sample_weight", None)
        # the selection's own params: a chosen class_weight keyed by encoded labels
        row["entropy"], note = _entropy(Xp_tr, ytr_enc, tuner.selection_.params, sw)
        if note:
            notes["entropy"] = note
    else:
        row["entropy"], notes["entropy"] = None, "not computed (entropy=False)"


def _run_cell(cell: Cell, loader: Loader | None, *, entropy: bool) -> dict:
    from sklearn.svm import SVC

    from svmtune.tuner import SVMTuner

    loader = loader or default_loader
    t_start, cpu_start = time.perf_counter(), time.process_time()
    m = cell.method
    row = _cell_row(cell)
    caught: list[str] = []
    try:
        with recorded_warnings() as wlist:
            _warm_up_compiled()  # before the tuner's clocks; a failure is this cell's status
            data, train, Xtr, ytr, Xte, yte = _cell_data(cell, loader, row)
            tuner_kw = {
                "preprocess": data.preprocess,
                "n_jobs": 1,
                **cell.task.tuner_params,
                **m.tuner_params,
            }
            row["preprocess"] = tuner_kw["preprocess"]
            tuner = SVMTuner(
                method=m.method,
                method_params=dict(m.params),
                random_state=cell.seed,
                **tuner_kw,
            )
            fit_groups = _fit_groups(cell, data, train, row)
            sel_time, final_time, repeats = _timed_tuner_fit(tuner, Xtr, ytr, fit_groups)
            row["selection_time"] = sel_time
            row["final_fit_time"] = final_time
            row["timing_repeats"] = repeats
            row.update(
                params=tuner.best_params_,
                estimate=tuner.estimate_,
                criterion=tuner.criterion_,
                n_svm_fits=int(tuner.n_svm_fits_),
                final_model=getattr(tuner, "final_model_", None),
                selection_info=tuner.selection_.info,
            )
            metrics, notes = _metrics(tuner, Xte, yte)
            row.update(metrics)
            _yardstick_and_entropy(SVC, tuner, Xtr, ytr, Xte, yte, row, notes, entropy)
            row["notes"] = notes
        caught = [str(w.message) for w in wlist]
    except Exception as exc:
        row["status"] = _error_status(exc)
        row["traceback"] = traceback.format_exc()[-3000:]
    if caught:
        uniq = list(dict.fromkeys(" ".join(c.split())[:300] for c in caught))
        row["warnings"] = uniq[:10]
        row["n_warnings"] = len(caught)
    row["cell_time"] = time.perf_counter() - t_start
    row["cell_cpu_time"] = time.process_time() - cpu_start
    row["timestamp"] = datetime.now(UTC).isoformat(timespec="seconds")
    return jsonable(row)


# ----------------------------------------------------------------------------- suites


def _run_experiment(fn, outdir: Path, seed: int) -> tuple[str, list[str], float]:
    t0 = time.perf_counter()
    try:
        paths = fn(outdir, seed) or []
        status = "ok"
    except Exception as exc:
        paths, status = [], _error_status(exc)
    return status, [str(p) for p in paths], time.perf_counter() - t0


def _run_experiments(
    suite: Suite,
    store: ResultStore,
    directory: Path,
    retry_errors: bool,
    rerun: set[str],
    summary: RunSummary,
) -> None:
    """Run the suite's experiments not yet stored (or, with ``retry_errors``, stored as errors,
    or named in ``rerun``); the stored and the new records go to ``summary.experiments``."""
    for fn in suite.experiments:
        name = getattr(fn, "__name__", repr(fn))
        key = cell_key(suite=suite.name, experiment=name, seed=suite.seed)
        stored = {r["key"]: r for r in store.rows()}
        keep = stored.get(key, {}).get("status") == "ok" or not retry_errors
        if key in stored and name not in rerun and keep:
            summary.experiments.append(stored[key])
            continue
        exp_dir = directory / "experiments" / name
        exp_dir.mkdir(parents=True, exist_ok=True)
        status, paths, took = _run_experiment(fn, exp_dir, suite.seed)
        rec = {
            "kind": "experiment",
            "key": key,
            "suite": suite.name,
            "experiment": name,
            "status": status,
            "files": [os.path.relpath(p, directory) for p in paths],
            "time": took,
            "seed": suite.seed,
            "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
            **environment(),
        }
        store.append(rec)
        summary.experiments.append(jsonable(rec))


def _check_run_options(
    suite: Suite, experiments: bool, rerun_experiments: Iterable[str] | None, max_cells
) -> set[str]:
    """The experiments to run again, after checking :func:`run_suite`'s options."""
    rerun = set(rerun_experiments or ())
    if rerun and not experiments:
        raise ValueError("rerun_experiments needs experiments=True (drop --no-experiments)")
    names = {getattr(fn, "__name__", repr(fn)) for fn in suite.experiments}
    if rerun - names:
        raise ValueError(
            f"suite {suite.name!r} has no experiment {sorted(rerun - names)}; "
            f"its experiments: {sorted(names) or 'none'}"
        )
    if max_cells is not None and int(max_cells) < 0:
        raise ValueError(f"max_cells must be >= 0, got {max_cells}")
    return rerun


def _run_cells(
    suite: Suite,
    todo: list[Cell],
    store: ResultStore,
    par: Any,
    run: Callable[..., dict],
    loader: Loader,
    retry_errors: bool,
    since: datetime | None,
    progress: bool,
    summary: RunSummary,
) -> None:
    """Run the cells ``todo`` with ``par`` (a joblib ``Parallel``) and ``run(cell, loader)``
    (:func:`run_cell`), storing each row as it comes and counting it in ``summary``; cells a
    concurrent run stores meanwhile are skipped."""
    from joblib import delayed

    meanwhile: list[Cell] = []  # stored by a concurrent run after this one started
    jobs = (
        delayed(run)(c, loader)
        for c in _not_stored_meanwhile(todo, store, retry_errors, meanwhile, since)
    )
    with _sigterm_as_exit(), _progress(progress) as bar:
        tid = bar.add_task(suite.name, total=len(todo), last="")
        for row in par(jobs):
            store.append(row)
            summary.n_run += 1
            ok = row.get("status") == "ok"
            summary.n_ok += ok
            summary.n_error += not ok
            last = f"{row['task']} #{row['split']} {row['method']}"
            bar.update(
                tid,
                advance=1,
                total=len(todo) - len(meanwhile),
                last=last + ("" if ok else " [red]error"),
            )
    summary.n_skipped += len(meanwhile)


def run_suite(
    suite: Suite,
    out: str | Path,
    *,
    loader: Loader | None = None,
    n_jobs: int | None = 1,
    tasks: Iterable[str] | None = None,
    methods: Iterable[str] | None = None,
    max_cells: int | None = None,
    retry_errors: bool = False,
    rerun_before: str | datetime | None = None,
    experiments: bool = True,
    rerun_experiments: Iterable[str] | None = None,
    entropy: bool = True,
    progress: bool = True,
    blas_threads: int | None = 1,
) -> RunSummary:
    """Run (or resume) ``suite``, appending one row per cell to ``<out>/<suite>/results.jsonl``.

    Parameters
    ----------
    suite : Suite
    out : path
        Results root; the suite writes into ``<out>/<suite.name>/``.
    loader : callable ``name -> (X, y, info)``, optional
        Data loader (default :func:`svmtune.datasets.load_dataset`); must be picklable when
        ``n_jobs != 1``.
    n_jobs : int
        Cells run in parallel (joblib); each tuner itself runs single-threaded.
    tasks, methods : iterables of str, optional
        Run only these tasks / methods (labels or method names).
    max_cells : int, optional
        Run at most this many not-yet-stored cells in this invocation.
    retry_errors : bool
        Also rerun cells whose stored row is an error (the new row supersedes it).
    rerun_before : ISO 8601 time or datetime, optional
        Also rerun the selected cells whose stored row was written before this time (UTC if
        no zone is given), e.g. the time of a code change that alters them; the new rows
        supersede the old ones, and the same call resumes after an interruption (rows
        written since then count as done).
    experiments : bool
        Run the suite's ``experiments`` callables (each once; recorded in the store).
    rerun_experiments : iterable of str, optional
        Names of experiments to run again although they are stored (e.g. after raising a run
        limit of a resumable experiment); their new record supersedes the old one.
    entropy : bool
        Compute the RBSVM model entropy of every chosen model.
    progress : bool
        Show a rich progress bar with ETA on stderr.
    blas_threads : int or None
        BLAS threads per cell (see :func:`run_cell`).

    Notes
    -----
    While cells run, SIGTERM (``kill``) raises ``SystemExit(143)`` in the calling thread when
    that is the main thread, so the parallel workers are stopped with the run instead of being
    left computing; the rows already written stay, and the same call resumes after them.

    One run at a time writes a results directory: a run holds the store's ``"run"`` lock
    (:meth:`~svmtune.bench.store.ResultStore.exclusive`, a ``flock`` that a dead run releases)
    throughout, and a second run on the same ``out`` is refused at once with
    :class:`~svmtune.exceptions.StoreBusy` naming the holder's pid: no cell is computed twice.
    """
    from joblib import Parallel

    loader = loader or default_loader
    cells = build_cells(suite, tasks=tasks, methods=methods)
    rerun = _check_run_options(suite, experiments, rerun_experiments, max_cells)
    since = parse_time(rerun_before, "rerun_before")
    directory = suite_dir(out, suite)
    why = ": it is running this suite into this directory; wait for it, or give another --out"
    with ResultStore(directory) as store, store.exclusive("run", why):
        done = store.keys(ok_only=retry_errors, since=since)
        pending = [c for c in cells if c.key not in done]
        summary = RunSummary(store.path, len(cells), len(cells) - len(pending))
        todo = pending if max_cells is None else pending[: int(max_cells)]
        summary.n_remaining = len(pending) - len(todo)
        if todo:
            par = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
            run = functools.partial(run_cell, entropy=entropy, blas_threads=blas_threads)
            _run_cells(suite, todo, store, par, run, loader, retry_errors, since, progress, summary)
        if experiments and suite.experiments:
            try:
                with store.exclusive("experiments"):
                    _run_experiments(suite, store, directory, retry_errors, rerun, summary)
            except StoreBusy:
                warnings.warn(
                    f"suite {suite.name!r}: another run is running its experiments; skipped "
                    "here (run again afterwards to list them)",
                    RuntimeWarning,
                    stacklevel=user_stacklevel(),
                )
    return summary
