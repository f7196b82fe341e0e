"""The default fit on 2,000 rows before and after issue 55 (check once at the door), and the
time its checks take, measured in one run.

Each tree (``--before``: a worktree of the revision before the issue; ``--after``: this one)
runs in its own Python process (``PYTHONPATH=<tree>/src``), alternately, ``--rounds`` times:
one warm-up fit, then ``--fits`` timed ``SVMTuner(random_state=0).fit`` on 2,000 rows drawn
with a fixed seed from each data set, then one fit under ``cProfile`` whose check functions'
time is summed: every function named ``check_*``, ``validate_*``, ``_check_*`` or
``_validate_*`` (svmtune's, scikit-learn's ``check_array``, ``check_X_y``, ``validate_data``
...), counted once where checks call checks (the time of its calls from non-check callers).
The profiled fit is slower than the timed ones; its share of check time is what it shows.

    git worktree add /tmp/before <rev>
    python benchmarks/door_timing.py run --before /tmp/before --after . \\
        --out benchmarks/door_timing/results.json
    python benchmarks/door_timing.py table benchmarks/door_timing/results.json \\
        > benchmarks/door_timing.md
    # and at other sizes: --rows 1000 / 4000 --rounds 3 --fits 2 --out
    # benchmarks/door_timing/results_<rows>.json, tables benchmarks/door_timing_<rows>.md

Run it alone on the machine: these are wall seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np

DATASETS = ("waveform_5000", "ijcnn1_train")
ROWS = 2000

_WORKER = r"""
import cProfile, json, pstats, re, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from svmtune import SVMTuner
from svmtune.datasets import load_dataset

name, rows, fits = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
X, y, _ = load_dataset(name)
y = np.asarray(y)
idx = np.random.RandomState(0).permutation(len(y))[:rows]
X, y = X.iloc[idx].to_numpy(dtype=float), y[idx]
SVMTuner(random_state=0).fit(X, y)  # warm-up: imports, caches
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
Xs = StandardScaler().fit_transform(X)
svc = []
for _ in range(fits):  # the unit of cost: one default SVC() fit on the same rows
    t0 = time.perf_counter()
    SVC().fit(Xs, y)
    svc.append(time.perf_counter() - t0)
times = []
for _ in range(fits):
    t0 = time.perf_counter()
    tuner = SVMTuner(random_state=0).fit(X, y)
    times.append(time.perf_counter() - t0)
prof = cProfile.Profile()
t0 = time.perf_counter()
prof.enable()
SVMTuner(random_state=0).fit(X, y)
prof.disable()
profiled = time.perf_counter() - t0
CHECK = re.compile(r"^_?(check|validate)_|^check_array$|^check_X_y$|^validate_data$")
stats = pstats.Stats(prof).stats
check_time, calls = 0.0, 0
for func, (cc, nc, tt, ct, callers) in stats.items():
    if not CHECK.search(func[2]):
        continue
    for caller, (_, c_nc, _, c_ct) in callers.items():
        if not CHECK.search(caller[2]):
            check_time += c_ct
            calls += c_nc
print(json.dumps({
    "fit_seconds": times,
    "svc_seconds": svc,
    "profiled_fit_seconds": profiled,
    "check_seconds_profiled": check_time,
    "check_calls": calls,
    "best_params": {k: float(v) for k, v in tuner.best_params_.items() if k in ("sigma", "C")},
    "final_model": tuner.final_model_,
}))
"""


def _run_tree(tree: Path, name: str, fits: int, rows: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    out = subprocess.run(
        [sys.executable, "-c", _WORKER, name, str(rows), str(fits)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _revision(tree: Path) -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True
    ).stdout.strip()


def cmd_run(args) -> None:
    trees = {"before": Path(args.before).resolve(), "after": Path(args.after).resolve()}
    runs = []
    for r in range(args.rounds):
        for name in DATASETS:
            for label in ("before", "after") if r % 2 == 0 else ("after", "before"):
                res = _run_tree(trees[label], name, args.fits, args.rows)
                runs.append({"round": r, "data": name, "tree": label, **res})
                print(f"round {r} {name} {label}: median {np.median(res['fit_seconds']):.3f} s")
    record = {
        "rows": args.rows,
        "fits_per_process": args.fits,
        "revisions": {k: _revision(v) for k, v in trees.items()},
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_before": os.getloadavg(),
        },
        "runs": runs,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1), encoding="utf-8")
    tmp.replace(out)


def _runs(rec: dict, name: str, label: str) -> list[dict]:
    return [r for r in rec["runs"] if r["data"] == name and r["tree"] == label]


def cmd_table(args) -> None:
    rec = json.loads(Path(args.results).read_text(encoding="utf-8"))
    revs = rec["revisions"]
    print(f"# The default fit on {rec['rows']:,} rows before and after issue 55\n")
    print(
        f"Generated by `python benchmarks/door_timing.py table` from `{args.results}`: "
        f"before = `{revs['before']}`, after = `{revs['after']}`; "
        f"{rec['machine']['platform']}, Python {rec['machine']['python']}, "
        f"{rec['machine']['cpus']} CPUs, load average at the start "
        f"{', '.join(f'{v:.2f}' for v in rec['machine']['load_before'])}.  Wall seconds of "
        f"`SVMTuner(random_state=0).fit` (median over every timed fit of every process, and "
        f"the range of the processes' medians), the same in `SVC()` fits (each process's "
        f"median fit over its own median `SVC()` fit on the standardised rows; median and "
        f"range over the processes), and the check functions' share of one profiled fit.\n"
    )
    print(
        "| data | tree | fits | median fit (s) | process medians (s) | SVC() fits | "
        "check calls | checks, profiled (s) | profiled fit (s) | chosen (sigma, C), final |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    medians = {}
    for name in DATASETS:
        for label in ("before", "after"):
            rs = _runs(rec, name, label)
            secs = [t for r in rs for t in r["fit_seconds"]]
            per = [np.median(r["fit_seconds"]) for r in rs]
            ratios = [np.median(r["fit_seconds"]) / np.median(r["svc_seconds"]) for r in rs]
            chk = np.median([r["check_seconds_profiled"] for r in rs])
            prof = np.median([r["profiled_fit_seconds"] for r in rs])
            medians[name, label] = (np.median(secs), chk)
            p = rs[0]["best_params"]
            print(
                f"| {name} | {label} | {len(secs)} | {np.median(secs):.3f} | "
                f"{min(per):.3f}-{max(per):.3f} | {np.median(ratios):.1f} "
                f"({min(ratios):.1f}-{max(ratios):.1f}) | {rs[0]['check_calls']} | {chk:.3f} | "
                f"{prof:.3f} | ({p['sigma']:.4g}, {p['C']:.4g}), {rs[0]['final_model']} |"
            )
    print()
    for name in DATASETS:
        (fit_b, chk_b), (fit_a, chk_a) = medians[name, "before"], medians[name, "after"]
        print(
            f"- {name}: median fit {fit_b:.3f} -> {fit_a:.3f} s ({fit_a / fit_b:.3f} of "
            f"before); the profiled checks {chk_b:.3f} -> {chk_a:.3f} s."
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run")
    run.add_argument("--before", required=True)
    run.add_argument("--after", default=".")
    run.add_argument("--out", default="benchmarks/door_timing/results.json")
    run.add_argument("--rounds", type=int, default=3)
    run.add_argument("--rows", type=int, default=ROWS)
    run.add_argument("--fits", type=int, default=3)
    run.set_defaults(func=cmd_run)
    table = sub.add_parser("table")
    table.add_argument("results", nargs="?", default="benchmarks/door_timing/results.json")
    table.set_defaults(func=cmd_table)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
