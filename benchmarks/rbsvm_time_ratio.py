"""The time criterion in one run: RBSVM's selection time over GridSearch's, same folds.

The rbsvm-paper report divides the mean selection times of cells stored by separate
``svmtune bench`` invocations.  This script measures both in one process instead: for each
task with n <= 2,000 and each requested outer fold it runs the rbsvm-paper cells of RBSVM,
GridSearch and RBSVM with eq. (27) read literally at the non-support vectors ("RBSVM (eq. 27
at non-SVs)") one after the other (the cells of ``svmtune bench``, without the entropy), and
records each cell's selection wall time (cheap selections: fastest of 3, as in the suite), its
process CPU time, its choice and test accuracy, and whether the choice equals the stored
cell's.  One JSON line per cell is appended to ``--out`` as it finishes (a rerun skips the
cells there); the markdown table of all of ``--out`` goes to standard output and ``--md``.
The committed ``benchmarks/rbsvm_time_ratio.md`` came from (these three with nothing else
running on the machine)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/rbsvm_time_ratio.py --splits 0 \\
        --out benchmarks/rbsvm_time_ratio.jsonl --md benchmarks/rbsvm_time_ratio.md
    OPENBLAS_NUM_THREADS=1 python benchmarks/rbsvm_time_ratio.py --splits 0,1,2,3,4 \\
        --tasks cmc --out benchmarks/rbsvm_time_ratio.jsonl --md benchmarks/rbsvm_time_ratio.md
    OPENBLAS_NUM_THREADS=1 python benchmarks/rbsvm_time_ratio.py --splits 5,6,7,8,9 \\
        --tasks cmc --out benchmarks/rbsvm_time_ratio.jsonl --md benchmarks/rbsvm_time_ratio.md

and then the other folds of the other 16 tasks (beside two other benchmark processes on the
two cores, so these times are slower; each ratio is still of two cells timed in one run)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/rbsvm_time_ratio.py --splits 1,2,3,4,5,6,7,8,9 \\
        --tasks hepatitis,thyroid,spect-heart,breast-cancer,monks-1,monks-2,monks-3,\\
    balance-1,balance-2,balance-3,australian,crx,diabetes,tic-tac-toe,german,adult \\
        --out benchmarks/rbsvm_time_ratio.jsonl --md benchmarks/rbsvm_time_ratio.md
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from svmtune.bench.runner import build_cells, run_cell
from svmtune.bench.store import read_rows
from svmtune.bench.suite import get_suite, suite_module

_RP = suite_module("rbsvm-paper", search_from=Path(__file__).parent)
LABEL_NONSV_LABEL, SMALL_TASKS = _RP.LABEL_NONSV_LABEL, _RP.SMALL_TASKS

HERE = Path(__file__).resolve().parent
METHODS = ("RBSVM", "GridSearch", LABEL_NONSV_LABEL)
LIMIT = 1 / 20


def _stored(store_path: Path) -> dict[str, dict]:
    if not store_path.exists():
        return {}
    return {r["key"]: r for r in read_rows(store_path) if r.get("status") == "ok"}


def run(splits: list[int], tasks: list[str], out: Path, stored_path: Path) -> None:
    suite = get_suite("rbsvm-paper", search_from=Path(__file__).parent)
    done = {r["key"] for r in read_rows(out)}
    stored = _stored(stored_path)
    wanted = set(splits)
    cells = [c for c in build_cells(suite, tasks=tasks, methods=METHODS) if c.split in wanted]
    for cell in cells:
        if cell.key in done:
            continue
        c0 = time.process_time()
        row = run_cell(cell, entropy=False)
        cpu = time.process_time() - c0
        if row["status"] != "ok":
            raise RuntimeError(f"{cell.describe()}: {row['status']}")
        old = stored.get(cell.key)
        rec = {
            "key": cell.key,
            "task": cell.task.name,
            "split": cell.split,
            "method": cell.method.label,
            "method_name": cell.method.method,
            "method_params": row["method_params"],
            "seed": cell.seed,
            "dataset_version": row["dataset_version"],
            "selection_time": row["selection_time"],
            "timing_repeats": row["timing_repeats"],
            "cell_cpu_time": cpu,
            "params": row["params"],
            "accuracy": row["accuracy"],
            "same_choice_as_stored": None
            if old is None
            else bool(
                np.allclose(
                    [old["params"]["sigma"], old["params"]["C"]],
                    [row["params"]["sigma"], row["params"]["C"]],
                    rtol=1e-6,
                )
            ),
            "stored_selection_time": None if old is None else old["selection_time"],
            "timestamp": row["timestamp"],
            "machine": row["machine"],
            "versions": row["versions"],
        }
        with open(out, "a") as fh:
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
        print(
            f"{cell.describe()}: {rec['selection_time']:.3f} s, same as stored: "
            f"{rec['same_choice_as_stored']}",
            flush=True,
        )


def table(out: Path) -> str:
    recs = read_rows(out)
    by = {(r["task"], r["split"], r["method"]): r for r in recs}
    lines = [
        "# RBSVM / GridSearch selection time, measured in one run",
        "",
        "From `"
        + str(out.relative_to(HERE.parent) if out.is_relative_to(HERE.parent) else out)
        + "` (`benchmarks/rbsvm_time_ratio.py`): the rbsvm-paper cells of each task run one "
        "after the other in one process, one BLAS thread; selection wall time (fastest of 3 "
        "for selections under 1 s, as in the suite). 'stored' = the ratio of the same cells "
        "stored in the suite's result file (separate invocations). The acceptance check asks "
        "for at most "
        f"{LIMIT:.2f} on every task with n <= 2,000.",
        "",
        "| task | fold | GridSearch s | RBSVM s | RBSVM / grid | stored | "
        "eq. 27 at non-SVs s | its ratio | stored | same choices as stored |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    worst = {}
    for task in SMALL_TASKS:
        for split in sorted({r["split"] for r in recs if r["task"] == task}):
            g = by.get((task, split, "GridSearch"))
            if g is None:
                continue
            cols, same = [], []
            for label in ("RBSVM", LABEL_NONSV_LABEL):
                r = by.get((task, split, label))
                if r is None:
                    cols += ["not run"] * 3
                    continue
                ratio = r["selection_time"] / g["selection_time"]
                worst[label] = max(worst.get(label, 0.0), ratio)
                st = (
                    "—"
                    if r["stored_selection_time"] is None or g["stored_selection_time"] is None
                    else f"{r['stored_selection_time'] / g['stored_selection_time']:.4f}"
                )
                cols += [f"{r['selection_time']:.3f}", f"{ratio:.4f}", st]
                same.append(r["same_choice_as_stored"])
            same.append(g["same_choice_as_stored"])
            lines.append(
                f"| {task} | {split} | {g['selection_time']:.1f} | "
                + " | ".join(cols)
                + f" | {'yes' if all(same) else 'no: ' + str(same)} |"
            )
    lines.append("")
    for label, w in worst.items():
        per_task = {}
        for task in SMALL_TASKS:
            pairs = [
                (
                    by[(task, s, label)]["selection_time"],
                    by[(task, s, "GridSearch")]["selection_time"],
                )
                for s in sorted({r["split"] for r in recs if r["task"] == task})
                if (task, s, label) in by and (task, s, "GridSearch") in by
            ]
            if pairs:
                m, g = np.mean(pairs, axis=0)
                per_task[task] = (m / g, len(pairs))
        top = max(per_task, key=lambda t: per_task[t][0])
        verdict = "yes" if w <= LIMIT else "NO"
        task_verdict = "yes" if per_task[top][0] <= LIMIT else "NO"
        lines.append(
            f"- {label}: largest ratio of one fold {w:.4f} (at most {LIMIT:.2f}: {verdict}); "
            f"largest ratio of a task's mean times {per_task[top][0]:.4f} ({top}, "
            f"{per_task[top][1]} folds; at most {LIMIT:.2f}: {task_verdict})"
        )
    machines = sorted({r["machine"]["platform"] for r in recs})
    lines.append(f"- machine: {', '.join(machines)}; {len(recs)} cells")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", default="0", help="comma-separated outer folds")
    ap.add_argument("--tasks", default=",".join(SMALL_TASKS))
    ap.add_argument("--out", default=str(HERE / "rbsvm_time_ratio.jsonl"))
    ap.add_argument("--md", default=None)
    ap.add_argument("--stored", default=str(HERE / "results" / "rbsvm-paper" / "results.jsonl"))
    args = ap.parse_args()
    out = Path(args.out).resolve()
    tasks = [t for t in args.tasks.split(",") if t]
    run([int(s) for s in args.splits.split(",")], tasks, out, Path(args.stored))
    md = table(out)
    print(md)
    if args.md:
        Path(args.md).write_text(md)


if __name__ == "__main__":
    main()
