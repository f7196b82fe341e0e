"""``auto`` past one machine: 10^5-10^7 rows in memory and on a Dask ``LocalCluster`` (issue 64).

The data come from a generator with a known error rate, made block by block so that the
in-memory array and the dask array are the same numbers and a 10^7-row array is never made
whole: ``d = 20`` standard normal features, the label the sign of a smooth nonlinear rule of
eight of them,

    f(x) = x0^2 + x1^2 - 1.4 + 0.8 sin(2 x2) + x3 x4 + 0.5 x5 - 0.6 x6 x7,

and 8 % of the labels flipped at random: the Bayes rule is ``sign f`` and its accuracy is
92 %.  Block ``b`` of :data:`BLOCK` rows draws its features from ``default_rng([seed, b, 0])``
and its flips from ``default_rng([seed, b, 1])``; the training rows use ``seed = 0``, the
100,000 test rows ``seed = 1``.

Cells (``--kinds``):

* ``svc_20k``: scikit-learn's ``SVC()`` on the first 20,000 training rows (a user's shortcut;
  the rows are in random order already);
* ``memory``: ``SVMTuner(random_state=0).fit(X, y)`` with ``X`` a NumPy array;
* ``dask``: the same with ``X``, ``y`` dask arrays of :data:`BLOCK`-row chunks made lazily from
  the generator and persisted on a ``LocalCluster`` of ``--workers`` worker processes (one
  thread each, ``--worker-memory`` each).  The client may gather at most
  ``--client-gather`` bytes (the door's rule, :func:`svmtune._dask_inputs.gather_limit`,
  otherwise a quarter of the memory available: on this 24 GiB machine every ``X`` up to
  10^7 rows would be gathered and fitted on the client), standing for a client machine
  that cannot hold ``X``: where ``X`` is larger the final model is fitted in ``X``'s chunks on
  the workers.

Each cell runs in its own process (so that its peak resident memory, ``ru_maxrss``, is its
own) under ``--timeout`` seconds; the finished cell is appended to
``benchmarks/results/scale_out/results.jsonl`` with the machine, the versions, the git
commit and the load average before it started, and a cell already there is not run again.
``benchmarks/scale_out.md`` is generated from that file (``report``).  The ``memory`` and
``dask`` cells at the same ``n`` are compared: the selected ``sigma`` and ``C`` (relative
difference) and the test predictions (rows that differ; the ``memory`` cell's are kept as
``pred_memory_<n>.npy``).  E.g.::

    OPENBLAS_NUM_THREADS=1 python benchmarks/scale_out.py run --sizes 1e5,1e6 --kinds svc_20k,memory
    python benchmarks/scale_out.py run --sizes 1e6,1e7 --kinds dask --timeout 3600
    python benchmarks/scale_out.py report
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "scale_out"
RESULTS = OUT / "results.jsonl"
MD = HERE / "scale_out.md"
#: rows per generated block (and per dask chunk: 16 MB of float64 at 20 features)
BLOCK = 100_000
D = 20
FLIP = 0.08
TEST_ROWS = 100_000
SVC_ROWS = 20_000


# ------------------------------------------------------------------------------ the data
def block_X(seed: int, b: int, rows: int) -> np.ndarray:
    """The features of block ``b``: ``rows x D`` standard normal."""
    return np.random.default_rng([seed, b, 0]).standard_normal((rows, D))


def block_y(seed: int, b: int, rows: int) -> np.ndarray:
    """The labels of block ``b`` (0/1): the rule's sign, ``FLIP`` of them flipped."""
    X = block_X(seed, b, rows)
    f = (
        X[:, 0] ** 2
        + X[:, 1] ** 2
        - 1.4
        + 0.8 * np.sin(2 * X[:, 2])
        + X[:, 3] * X[:, 4]
        + 0.5 * X[:, 5]
        - 0.6 * X[:, 6] * X[:, 7]
    )
    flip = np.random.default_rng([seed, b, 1]).random(rows) < FLIP
    return ((f > 0) ^ flip).astype(np.int64)


def _blocks(n: int) -> list[tuple[int, int]]:
    return [(b, min(BLOCK, n - b * BLOCK)) for b in range(-(-n // BLOCK))]


def numpy_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows as NumPy arrays."""
    X, y = np.empty((n, D)), np.empty(n, dtype=np.int64)
    start = 0
    for b, r in _blocks(n):  # filled in place: the process never holds X twice
        X[start : start + r], y[start : start + r] = block_X(seed, b, r), block_y(seed, b, r)
        start += r
    return X, y


def dask_data(n: int, seed: int):
    """``n`` rows as dask arrays of :data:`BLOCK`-row chunks, each made on a worker."""
    import dask
    import dask.array as da

    parts = _blocks(n)
    X = da.concatenate(
        [da.from_delayed(dask.delayed(block_X)(seed, b, r), (r, D), float) for b, r in parts]
    )
    y = da.concatenate(
        [da.from_delayed(dask.delayed(block_y)(seed, b, r), (r,), np.int64) for b, r in parts]
    )
    return X, y


# ------------------------------------------------------------------------------ one cell
def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _tuner_record(tuner, wall: float, Xt, yt) -> dict:
    info = tuner.selection_.info
    pred = np.asarray(tuner.predict(Xt))
    return {
        "wall_s": wall,
        "selection_s": tuner.selection_time_,
        "final_fit_s": tuner.final_fit_time_,
        "sigma": float(tuner.best_params_["sigma"]),
        "C": float(tuner.best_params_["C"]),
        "final_model": str(tuner.final_model_),
        "plan": str(info.get("plan")),
        "final_rule": str(info.get("final_rule")),
        "estimate": None if tuner.estimate_ is None else float(tuner.estimate_),
        "test_accuracy": float(np.mean(pred == yt)),
    }, pred


def run_cell(kind: str, n: int, args) -> dict:
    """One cell in this process; returns its record."""
    from sklearn.svm import SVC

    from svmtune import SVMTuner

    Xt, yt = numpy_data(TEST_ROWS, 1)
    # the process before the cell's data: the interpreter, numpy, scipy, scikit-learn,
    # svmtune and the test rows
    rec: dict = {"kind": kind, "n": n, "baseline_rss_mb": _peak_mb()}
    if kind == "svc_20k":
        X, y = numpy_data(min(n, SVC_ROWS), 0)
        t0 = time.perf_counter()
        svc = SVC().fit(X, y)
        rec.update(wall_s=time.perf_counter() - t0, test_accuracy=float(svc.score(Xt, yt)))
    elif kind == "memory":
        X, y = numpy_data(n, 0)
        rec["data_mb"] = X.nbytes / 2**20
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tuner = SVMTuner(random_state=0).fit(X, y)
        more, pred = _tuner_record(tuner, time.perf_counter() - t0, Xt, yt)
        rec.update(more, warnings=sorted({str(w.message)[:160] for w in caught}))
        np.save(OUT / f"pred_memory_{n}.npy", pred.astype(np.int8))
    elif kind == "dask":
        rec.update(_dask_cell(n, args, Xt, yt))
    else:
        raise ValueError(f"unknown kind {kind!r}")
    rec["peak_rss_mb"] = _peak_mb()
    return rec


def _dask_cell(n: int, args, Xt, yt) -> dict:
    from dask.distributed import Client, LocalCluster

    import svmtune._dask_inputs as door
    from svmtune import SVMTuner

    limit = float(args.client_gather)
    door.gather_limit = lambda: limit  # a client that gathers at most this (module docstring)
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            memory_limit=args.worker_memory,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        X, y = dask_data(n, 0)
        X, y = client.persist([X, y])
        before = set(client.scheduler_info()["workers"])
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tuner = SVMTuner(random_state=0).fit(X, y)
        rec, pred = _tuner_record(tuner, time.perf_counter() - t0, Xt, yt)
        after = set(client.scheduler_info()["workers"])
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)
    rec.update(
        warnings=sorted({str(w.message)[:160] for w in caught}),
        data_mb=8.0 * n * D / 2**20,
        workers=args.workers,
        worker_memory=args.worker_memory,
        client_gather_mb=limit / 2**20,
        worker_peak_rss_mb=sorted(peaks.values()),
        workers_restarted=len(before - after),
    )
    ref = OUT / f"pred_memory_{n}.npy"
    if ref.exists():
        rec["pred_differ_from_memory"] = int(np.sum(np.load(ref) != pred))
    return rec


# ------------------------------------------------------------------------------ the runner
def _git() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE)
        return out.stdout.strip()
    except OSError:
        return ""


def read_results() -> list[dict]:
    if not RESULTS.exists():
        return []
    rows = []
    for line in RESULTS.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut short by a stopped run
            pass
    return rows


def _append(rec: dict) -> None:
    """Append one record and flush it to disk (a killed run loses no finished cell)."""
    with RESULTS.open("a", encoding="utf-8") as f:
        f.write(json.dumps(rec, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())


def run(args) -> None:
    from svmtune.bench.runner import environment

    OUT.mkdir(parents=True, exist_ok=True)
    done = {(r["kind"], r["n"]) for r in read_results() if "error" not in r}
    for n in [int(float(s)) for s in args.sizes.split(",")]:
        for kind in args.kinds.split(","):
            if (kind, n) in done and not args.force:
                continue
            load = os.getloadavg()
            cmd = [sys.executable, __file__, "cell", kind, str(n)] + _cell_args(args)
            t0 = time.perf_counter()
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
                rec = (
                    json.loads(out.stdout.strip().splitlines()[-1])
                    if out.returncode == 0
                    else {"kind": kind, "n": n, "error": out.stderr.strip()[-2000:]}
                )
            except subprocess.TimeoutExpired:
                rec = {"kind": kind, "n": n, "error": f"timeout after {args.timeout} s"}
            rec.update(
                process_s=time.perf_counter() - t0,
                load_before=load,
                load_after=os.getloadavg(),
                commit=_git(),
                blas_threads=os.environ.get("OPENBLAS_NUM_THREADS"),
                **environment(),
            )
            _append(rec)
            print(
                json.dumps(
                    {
                        k: rec.get(k)
                        for k in ("kind", "n", "wall_s", "test_accuracy", "peak_rss_mb", "error")
                    }
                ),
                flush=True,
            )
    report()


def _cell_args(args) -> list[str]:
    return [
        "--workers",
        str(args.workers),
        "--worker-memory",
        args.worker_memory,
        "--client-gather",
        str(args.client_gather),
    ]


# ------------------------------------------------------------------------------ the report
def _latest() -> dict:
    out = {}
    for r in read_results():
        out[(r["kind"], r["n"])] = r
    return out


def report() -> None:
    """``benchmarks/scale_out.md`` from the result file."""
    cells = _latest()
    machine = next(iter(cells.values()), {}).get("machine", {}) if cells else {}
    lines = [
        "# `auto` past one machine: 10^5-10^7 rows",
        "",
        "Generated by `benchmarks/scale_out.py report` from "
        "`benchmarks/results/scale_out/results.jsonl` (the newest record of each cell). "
        f"Machine: {machine.get('platform', '?')}, {machine.get('cpu_count', '?')} cores. "
        "Data: the generator of the script's docstring (20 features, 8 % of labels flipped: "
        "the Bayes rule's accuracy is 92 %); accuracy on 100,000 test rows.",
        "",
        "| rows | cell | wall s | selection s | final fit s | peak RSS MB | data MB | "
        "final model | sigma | C | test accuracy | load before | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (kind, n), r in sorted(cells.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        load = r.get("load_before", [float("nan")])[0]
        if "error" in r:
            lines.append(
                f"| {n:,} | {kind} | - | - | - | - | - | - | - | - | - | {load:.2f} | "
                f"{r['error'].splitlines()[-1][:120]} |"
            )
            continue
        peak = f"{r['peak_rss_mb']:,.0f}"
        note = ""
        if kind == "dask":
            peak += " (workers " + ", ".join(f"{p:,.0f}" for p in r["worker_peak_rss_mb"]) + ")"
            note = (
                f"{r['workers']} workers of {r['worker_memory']}, client gathers at most "
                f"{r['client_gather_mb']:,.0f} MB; restarted: {r['workers_restarted']}"
            )
            mem = cells.get(("memory", n))
            if mem and "error" not in mem:
                dsig = abs(r["sigma"] - mem["sigma"]) / mem["sigma"]
                dC = abs(r["C"] - mem["C"]) / mem["C"]
                note += (
                    f"; vs memory: sigma {dsig:.1e}, C {dC:.1e} relative, "
                    f"{r.get('pred_differ_from_memory', '?')} predictions differ"
                )
        lines.append(
            f"| {n:,} | {kind} | {r['wall_s']:.1f} | {_f(r.get('selection_s'))} | "
            f"{_f(r.get('final_fit_s'))} | {peak} | {_f(r.get('data_mb'), '.0f')} | "
            f"{r.get('final_model', 'SVC()')} | {_f(r.get('sigma'), '.3g')} | "
            f"{_f(r.get('C'), '.3g')} | {r['test_accuracy']:.4f} | {load:.2f} | {note} |"
        )
    lines += _memory_growth(cells)
    lines += ["", "Plans and final-model rules of the `auto` cells:", ""]
    for (kind, n), r in sorted(cells.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if kind in ("memory", "dask") and "error" not in r:
            lines.append(f"- {n:,} rows, {kind}: stages {_stages(r['plan'])}; {r['final_rule']}")
    MD.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


def _memory_growth(cells: dict) -> list[str]:
    """The in-memory cells' peak RSS above the process before its data (``baseline_rss_mb``:
    the interpreter, the libraries and the test rows) against the data's MB, and the least
    squares line through them: its slope is the memory a further MB of data costs."""
    mem = sorted(
        (r for (kind, _), r in cells.items() if kind == "memory" and "error" not in r),
        key=lambda r: r["n"],
    )
    if len(mem) < 2:
        return []
    data = np.array([r["data_mb"] for r in mem])
    above = np.array([r["peak_rss_mb"] - r["baseline_rss_mb"] for r in mem])
    slope, intercept = np.polyfit(data, above, 1)
    lines = [
        "",
        "Peak memory of the in-memory cells above the process before its data (baseline: "
        "the interpreter, the libraries and the test rows):",
        "",
        "| rows | data MB | baseline MB | peak RSS MB | above baseline MB | above / data |",
        "|---|---|---|---|---|---|",
    ]
    for r, a in zip(mem, above):
        lines.append(
            f"| {r['n']:,} | {r['data_mb']:.0f} | {r['baseline_rss_mb']:.0f} | "
            f"{r['peak_rss_mb']:,.0f} | {a:,.0f} | {a / r['data_mb']:.2f} |"
        )
    lines += [
        "",
        f"Least squares over these {len(mem)} cells: above baseline = {intercept:,.0f} MB + "
        f"{slope:.2f} x data.",
    ]
    return lines


def _stages(plan: str) -> str:
    """The plan's stages (``info["plan"]``, stored as its repr) as "rows path (steps)"."""
    try:
        stages = ast.literal_eval(plan)
        return " -> ".join(f"{s['size']:,} {s['path']} ({s['steps']} steps)" for s in stages)
    except (ValueError, SyntaxError, TypeError, KeyError):
        return plan


def _f(v, fmt: str = ".1f") -> str:
    return "-" if v is None else format(v, fmt)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["run", "cell", "report"])
    ap.add_argument("kind", nargs="?")
    ap.add_argument("n", nargs="?", type=int)
    ap.add_argument("--sizes", default="1e5,1e6")
    ap.add_argument("--kinds", default="svc_20k,memory,dask")
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker-memory", default="4GiB")
    ap.add_argument("--client-gather", type=float, default=2.0**30, help="bytes")
    ap.add_argument("--force", action="store_true", help="run stored cells again")
    args = ap.parse_args(argv)
    if args.what == "cell":
        rec = run_cell(args.kind, args.n, args)
        rec["python"] = platform.python_version()
        print(json.dumps(rec))
    elif args.what == "run":
        run(args)
    else:
        report()


if __name__ == "__main__":
    main()
