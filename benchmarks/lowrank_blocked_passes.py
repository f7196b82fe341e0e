"""LowRankL2SVC.fit on 10^5 ... 10^6 synthetic rows: wall seconds, passes over the rows, peak RSS.

Issue 64: the passes of the blocked low-rank L2-SVM (:mod:`svmtune.lowrank._blocked_solver`)
over row blocks.  The data: ``X ~ N(0, 1)^{n x 20}``, ``y = sign(x0^2 + x1^2 - 1.4 +
0.8 sin(2 x2) + x3 x4 + 0.5 x5 - 0.6 x6 x7)`` with 8 % of the labels flipped, standardised;
``LowRankL2SVC(C=1, sigma=sqrt(20), rank=500)``.  Each ``n`` runs in a fresh process (its own
peak RSS, ``ru_maxrss``), which reports the fit's wall seconds, the landmark rule's share of
them, the passes of the row-block driver (all of them, and those over all rows), the Newton
iterations, the support vectors, the training accuracy and the load average (``--cold``:
the solver's warm start off).  Run it on one
BLAS thread, e.g.::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/lowrank_blocked_passes.py \\
        --n 100000 300000 1000000 --label after --out benchmarks/results/lowrank_passes

Each run is appended to ``<out>/<label>.jsonl``; ``--table`` writes ``<out>/README.md`` from
every ``*.jsonl`` there.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The synthetic problem of issue 64 (module docstring), standardised."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 20))
    x = X.T
    g = x[0] ** 2 + x[1] ** 2 - 1.4 + 0.8 * np.sin(2 * x[2]) + x[3] * x[4] + 0.5 * x[5]
    g -= 0.6 * x[6] * x[7]
    y = np.where(g > 0, 1, -1)
    flip = rng.random(n) < 0.08
    y[flip] = -y[flip]
    X -= X.mean(axis=0)
    X /= X.std(axis=0)
    return X, y


def run_one(n: int, cold: bool = False) -> dict:
    """Fit once on ``n`` rows in this process; the counts come from wrapping the driver
    (``cold``: the solver's warm start off, where the code has one)."""
    import svmtune.estimators_lowrank as el
    from svmtune.estimators_lowrank import LowRankL2SVC

    X, y = make_data(n)
    drivers, landmark_s = [], [0.0]
    make_rows, landmarks = el.row_blocks, el.pivoted_cholesky_landmarks

    def rows_spy(*args, **kwargs):
        rows = make_rows(*args, **kwargs)
        run = rows.run
        rows.full, rows.read = 0, 0

        def counted(ops, where=None):
            rows.full += where is None
            rows.read += rows.n if where is None else int(where.sum())
            return run(ops, where)

        rows.run = counted
        drivers.append(rows)
        return rows

    def landmarks_spy(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return landmarks(*args, **kwargs)
        finally:
            landmark_s[0] += time.perf_counter() - t0

    el.row_blocks, el.pivoted_cholesky_landmarks = rows_spy, landmarks_spy
    if cold:
        el.fit_l2_svm_blocks = partial(el.fit_l2_svm_blocks, warm_start=None)
    clf = LowRankL2SVC(C=1.0, sigma=float(np.sqrt(20)), rank=500)
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    clf.fit(X, y)
    wall = time.perf_counter() - t0
    rows = drivers[0]
    return {
        "n": n,
        "fit_s": round(wall, 2),
        "landmarks_s": round(landmark_s[0], 2),
        "passes": rows.passes,
        "full_passes": rows.full,
        "rows_read": round(rows.read / n, 2),
        "cold": cold,
        "n_iter": int(clf.n_iter_[0]),
        "n_support": int(clf.n_support_[0]),
        "rank": int(clf.rank_),
        "train_accuracy": round(float(clf.score(X[:100000], y[:100000])), 4),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
        "data_mb": round(X.nbytes / 2**20, 1),
        "load_before": [round(v, 2) for v in load0],
        "load_after": [round(v, 2) for v in os.getloadavg()],
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
    }


def table(out: Path) -> str:
    """A markdown table of every run in ``out/*.jsonl``."""
    lines = [
        "| label | n | fit s | landmarks s | passes (over all rows) | rows read / n | Newton its"
        " | SVs | peak RSS MB (data MB) | load 1-min before/after |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for path in sorted(out.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            r = json.loads(line)
            lines.append(
                f"| {path.stem} | {r['n']:,} | {r['fit_s']} | {r['landmarks_s']} | "
                f"{r['passes']} ({r['full_passes']}) | {r.get('rows_read', '')} | "
                f"{r['n_iter']} | {r['n_support']:,} | "
                f"{r['peak_rss_mb']} ({r['data_mb']}) | "
                f"{r['load_before'][0]}/{r['load_after'][0]} |"
            )
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="*", default=[100_000, 300_000, 1_000_000])
    ap.add_argument("--label", default="after")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/lowrank_passes"))
    ap.add_argument("--cold", action="store_true", help="the solver's warm start off")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child process
    ap.add_argument("--table", action="store_true", help="only write <out>/README.md")
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one, args.cold)))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.table:
        for n in args.n:
            cmd = [sys.executable, __file__, "--one", str(n)] + (["--cold"] if args.cold else [])
            res = subprocess.run(cmd, capture_output=True, text=True, check=True)
            record = json.loads(res.stdout.strip().splitlines()[-1])
            print(record, flush=True)
            with open(args.out / f"{args.label}.jsonl", "a") as fh:
                fh.write(json.dumps(record) + "\n")
    (args.out / "README.md").write_text(table(args.out))


if __name__ == "__main__":
    main()
