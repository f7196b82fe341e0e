"""The quick suite on a Dask cluster chooses what the serial run chooses.

Runs every cell of the ``quick`` suite twice with the current code -- serially (``n_jobs=1``,
no joblib backend) and on a ``dask.distributed.LocalCluster`` (``--workers`` worker
processes, one thread each) through ``joblib.parallel_config(backend="dask")``, the path of
``svmtune bench --scheduler`` -- into two result stores under ``--work``, then compares the
chosen hyperparameters cell by cell (same cell key).  It also compares both with the
committed rows of ``--committed`` (rows written by earlier code versions may differ there;
that column is informative, not part of the check).

Writes ``--md`` (default ``benchmarks/dask_quick.md``): per method the number of cells, how
many have identical ``params`` (to the last digit) on Dask and serially, and how many equal
the committed rows, exactly and to a relative 1e-6; then every cell whose Dask choice differs.
Exit status 1 if there is one.  The run is resumable (the stores are the
benchmark's own), e.g.::

    OPENBLAS_NUM_THREADS=1 python benchmarks/dask_quick.py --work /tmp/dask_quick
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections import defaultdict
from pathlib import Path


def _chosen(path: Path) -> dict[str, dict]:
    from svmtune.bench.store import read_rows

    if not path.exists():
        return {}
    return {r["key"]: r for r in read_rows(path) if r.get("kind") == "cell"}


def _run(work: Path, backend: str, workers: int) -> dict:
    """Run (or resume) the quick suite on ``backend``; the wall time of the invocation that
    ran cells is kept in ``<work>/<backend>/run_time.json`` and returned."""
    from svmtune.bench.runner import run_suite
    from svmtune.bench.suites.quick import SUITE

    record = work / backend / "run_time.json"
    t0 = time.perf_counter()
    if backend == "serial":
        summary = run_suite(SUITE, work / "serial", n_jobs=1, experiments=False, progress=False)
    else:
        from dask.distributed import Client, LocalCluster
        from joblib import parallel_config

        with (
            LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as cl,
            Client(cl),
            parallel_config(backend="dask"),
        ):
            summary = run_suite(SUITE, work / "dask", n_jobs=-1, experiments=False, progress=False)
    if summary.n_run:
        info = {"wall_time": time.perf_counter() - t0, "n_run": summary.n_run}
        record.write_text(json.dumps(info))
    return json.loads(record.read_text()) if record.exists() else {}


def _close(a: dict, b: dict, rtol: float) -> bool:
    """Same keys and values, numbers equal to ``rtol``."""
    if a.keys() != b.keys():
        return False
    for k, v in a.items():
        w = b[k]
        if isinstance(v, float) and isinstance(w, float):
            if abs(v - w) > rtol * max(abs(v), abs(w)):
                return False
        elif v != w:
            return False
    return True


def compare(serial: dict, dask: dict, committed: dict, rtol: float = 1e-6):
    """Per-method counts and the differing cells: Dask against serial ``params`` exactly,
    the committed rows against serial both exactly and to ``rtol``."""
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    diffs = []
    for key, s in serial.items():
        d = dask.get(key)
        c = committed.get(key)
        counts = per[s["method"]]
        counts[0] += 1
        same = d is not None and d["status"] == s["status"] and d["params"] == s["params"]
        counts[1] += same
        counts[2] += c is not None
        counts[3] += c is not None and c["params"] == s["params"]
        counts[4] += c is not None and _close(c["params"], s["params"], rtol)
        if not same:
            dp = None if d is None else d["params"]
            diffs.append([s["task"], s["split"], s["method"], json.dumps(s["params"]), str(dp)])
    rows = [[m, *v] for m, v in sorted(per.items())]
    return rows, diffs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True, help="where the two stores go")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    ap.add_argument(
        "--committed", type=Path, default=Path("benchmarks/results/quick/results.jsonl")
    )
    ap.add_argument("--md", type=Path, default=Path("benchmarks/dask_quick.md"))
    args = ap.parse_args(argv)
    times = {b: _run(args.work, b, args.workers) for b in ("serial", "dask")}
    serial = _chosen(args.work / "serial" / "quick" / "results.jsonl")
    dask = _chosen(args.work / "dask" / "quick" / "results.jsonl")
    rows, diffs = compare(serial, dask, _chosen(args.committed))
    total = [sum(r[i] for r in rows) for i in range(1, 6)]

    def took(b: str) -> str:
        t = times[b]
        return f"{t['wall_time']:.0f} s for {t['n_run']} cells" if t else "not recorded"

    lines = [
        "# Quick suite: Dask vs serial",
        "",
        f"Generated by `benchmarks/dask_quick.py` on {platform.platform()} "
        f"({platform.machine()}); LocalCluster with {args.workers} worker processes x 1 "
        f"thread. Wall time of the runs: serial {took('serial')}, Dask {took('dask')} (a "
        "shared machine: other benchmarks ran beside them).",
        "",
        f"Cells: {total[0]}; chosen hyperparameters identical on Dask and serially: "
        f"{total[1]}. Committed rows (`{args.committed}`, written by earlier runs): "
        f"{total[2]}, of which identical to this serial run: {total[3]}, equal to a relative "
        f"1e-6: {total[4]}.",
        "",
        "| method | cells | Dask = serial | committed rows | committed = serial | committed "
        "= serial to 1e-6 |",
        "|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in rows]
    if diffs:
        lines += ["", "## Cells whose Dask choice differs", ""]
        lines += [
            "| task | split | method | serial params | Dask params |",
            "|---|---|---|---|---|",
        ]
        lines += ["| " + " | ".join(str(v) for v in d) + " |" for d in diffs]
    args.md.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if not diffs else 1


if __name__ == "__main__":
    raise SystemExit(main())
