"""Cost of the exact gradient methods (``rbsvm``, ``span``) before and after the
factor-update core, each selection as a ratio to one ``SVC()`` fit in the same process.

Two parts, one JSON line per selection appended to ``--out`` as it finishes:

* the quick+data cells: the 26 bundled data sets of
  ``benchmarks/results/quick+data/results.jsonl``, the quick suite's protocol (2 stratified
  70/30 splits, standardised features, the cells' seeds), run by
  :func:`svmtune.bench.runner.run_cell` (one BLAS thread; selections under 1 s are timed as
  the fastest of 3, as is the ``SVC()`` yardstick);
* ijcnn1 subsamples (``--ijcnn1 1000,2000,5000``): a stratified subsample of ``ijcnn1_train``
  of that many training rows (seed 0) and 5,000 other rows as test set, same timing rules.

Each row holds the code's label (``--label before|after``) and the git commit of the
``svmtune`` package that ran (so before and after can be run back to back by this script with
``PYTHONPATH`` pointing at two checkouts), the choice, the test accuracy, the selection time
over the ``SVC()`` fit time, and the counts of the solver's linear algebra per selection
(fresh factorisations of a support-set matrix, ``ExtendedFactor.from_H``, and factor updates,
``ExtendedFactor.add`` / ``remove`` where they exist), counted by wrapping those methods.  The
factorisations' achieved GFLOP/s (``m^3 / 3`` flops each, over the time spent in them) is set
against a plain ``numpy.linalg.cholesky`` of the largest size met, timed in the same process
with the same single BLAS thread.

``--table`` writes ``benchmarks/core_speed.md`` from the result file (never typed).  One
label per process (``PYTHONPATH`` chooses the code)::

    PYTHONPATH=/work/wt46-before/src python benchmarks/core_speed.py --label before
    PYTHONPATH=src python benchmarks/core_speed.py --label after
    python benchmarks/core_speed.py --table

or both, back to back set by set (``--pair BEFORE_SRC,AFTER_SRC``: for each data set, and then
each ijcnn1 size, a process on the old code and then one on the new), as the committed
table was made::

    OPENBLAS_NUM_THREADS=1 python benchmarks/core_speed.py \
        --pair /work/wt46-before/src,/work/wt46/src --ijcnn1 1000,2000,5000
    python benchmarks/core_speed.py --table
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

import svmtune
import svmtune.svm as svm_module
from svmtune.bench.runner import (
    _timed_default_fit,
    _timed_tuner_fit,
    build_cells,
    environment,
    run_cell,
)
from svmtune.bench.store import read_rows
from svmtune.bench.suite import DataLoader, get_suite, on_data

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "core_speed" / "results.jsonl"
MD = HERE / "core_speed.md"
QUICK_DATA = HERE / "results" / "quick+data" / "results.jsonl"
METHODS = ("rbsvm", "span")


# ------------------------------------------------------------------------ instrumentation
class Counter:
    """Counts and times ``ExtendedFactor.from_H`` (fresh factorisations) and the factor
    updates of the solver, if it has any, by wrapping them."""

    def __init__(self) -> None:
        self.reset()
        ef = svm_module.ExtendedFactor
        orig = ef.from_H.__func__

        def from_H(cls, H, *args, **kwargs):
            t0 = time.perf_counter()
            out = orig(cls, H, *args, **kwargs)
            m = H.shape[0]
            self.seconds += time.perf_counter() - t0
            self.flops += m**3 / 3.0
            self.n_fact += 1
            self.max_m = max(self.max_m, m)
            return out

        ef.from_H = classmethod(from_H)
        for name in ("add", "remove"):
            if hasattr(ef, name):
                setattr(ef, name, self._wrap_update(getattr(ef, name)))

    def _wrap_update(self, fn):
        def wrapped(*args, **kwargs):
            self.n_update += 1
            return fn(*args, **kwargs)

        return wrapped

    def reset(self) -> None:
        self.n_fact = self.n_update = self.max_m = 0
        self.seconds = self.flops = 0.0

    def snapshot(self, repeats: int) -> dict:
        return {
            "n_factorizations": self.n_fact / repeats,
            "n_updates": self.n_update / repeats,
            "max_factor_size": self.max_m,
            "factor_seconds": self.seconds / repeats,
            "factor_gflops": self.flops / self.seconds / 1e9 if self.seconds > 0 else None,
        }


def cholesky_peak(m: int) -> float | None:
    """GFLOP/s of ``numpy.linalg.cholesky`` on an ``m x m`` SPD matrix (best of 5)."""
    if m < 2:
        return None
    rng = np.random.default_rng(0)
    A = rng.standard_normal((m, m))
    A = A @ A.T + m * np.eye(m)
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        np.linalg.cholesky(A)
        best = min(best, time.perf_counter() - t0)
    return m**3 / 3.0 / best / 1e9


def code_version() -> dict:
    src = Path(svmtune.__file__).resolve().parent
    try:
        rev = subprocess.run(
            ["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = bool(
            subprocess.run(
                ["git", "-C", str(src), "status", "--porcelain", "--", "."],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        )
    except (OSError, subprocess.CalledProcessError):
        rev, dirty = None, None
    return {"svmtune_path": str(src), "commit": rev, "dirty": dirty}


# ------------------------------------------------------------------------ the two parts
def quick_data_tasks() -> list[str]:
    return sorted({r["task"] for r in read_rows(QUICK_DATA)})


def run_quick(
    label: str, tasks, splits, methods, counter: Counter, out: Path, done, rnd: int
) -> None:
    from threadpoolctl import threadpool_limits

    suite = on_data(get_suite("quick"), tasks)
    for cell in build_cells(suite, methods=methods):
        if cell.split not in splits or (label, cell.key, rnd) in done:
            continue
        counter.reset()
        row = run_cell(cell, DataLoader(), entropy=False)
        if row["status"] != "ok":
            raise RuntimeError(f"{cell.describe()}: {row['status']}")
        counts = counter.snapshot(row["timing_repeats"])
        with threadpool_limits(limits=1):
            peak = cholesky_peak(counts["max_factor_size"])
        rec = {
            "label": label,
            "round": rnd,
            "part": "quick+data",
            "key": cell.key,
            "task": cell.task.name,
            "split": cell.split,
            "method": cell.method.method,
            "seed": cell.seed,
            "n_train": row["n_train"],
            "params": {k: row["params"][k] for k in ("sigma", "C")},
            "accuracy": row["accuracy"],
            "selection_time": row["selection_time"],
            "default_fit_time": row["default_fit_time"],
            "ratio": row["selection_time"] / row["default_fit_time"],
            "timing_repeats": row["timing_repeats"],
            "n_svm_fits": row["n_svm_fits"],
            **counts,
            "cholesky_peak_gflops": peak,
            "code": code_version(),
            "machine": row["machine"],
            "versions": row["versions"],
        }
        _append(out, rec)


def ijcnn1_split(n: int, seed: int = 0, n_test: int = 5000):
    """A stratified subsample of ``n`` training rows of ijcnn1_train and ``n_test`` others."""
    from sklearn.model_selection import train_test_split

    from svmtune.datasets import load_dataset

    X, y, _ = load_dataset("ijcnn1_train")
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    Xtr, Xrest, ytr, yrest = train_test_split(X, y, train_size=n, stratify=y, random_state=seed)
    _, Xte, _, yte = train_test_split(
        Xrest, yrest, test_size=n_test, stratify=yrest, random_state=seed
    )
    return Xtr, ytr, Xte, yte


def run_ijcnn1(label: str, sizes, methods, counter: Counter, out: Path, done, rnd: int) -> None:
    from sklearn.svm import SVC
    from threadpoolctl import threadpool_limits

    from svmtune.preprocess import transform_as_fitted
    from svmtune.tuner import SVMTuner

    for n in sizes:
        Xtr, ytr, Xte, yte = ijcnn1_split(n)
        for method in methods:
            key = f"ijcnn1-{n}-{method}"
            if (label, key, rnd) in done:
                continue
            with threadpool_limits(limits=1):
                counter.reset()
                tuner = SVMTuner(method=method, random_state=0, preprocess="standard", n_jobs=1)
                sel, _final, repeats = _timed_tuner_fit(tuner, Xtr, ytr)
                counts = counter.snapshot(repeats)
                Xp = transform_as_fitted(tuner.preprocessor_, Xtr)
                fit_time, _svc = _timed_default_fit(SVC, Xp, ytr)
                acc = float(np.mean(tuner.predict(Xte) == yte))
                peak = cholesky_peak(counts["max_factor_size"])
            env = environment()
            rec = {
                "label": label,
                "round": rnd,
                "part": "ijcnn1",
                "key": key,
                "task": f"ijcnn1_{n}",
                "split": 0,
                "method": method,
                "seed": 0,
                "n_train": n,
                "params": {k: tuner.best_params_[k] for k in ("sigma", "C")},
                "accuracy": acc,
                "selection_time": sel,
                "default_fit_time": fit_time,
                "ratio": sel / fit_time,
                "timing_repeats": repeats,
                "n_svm_fits": int(tuner.n_svm_fits_),
                **counts,
                "cholesky_peak_gflops": peak,
                "code": code_version(),
                **env,
            }
            _append(out, rec)


def _append(out: Path, rec: dict) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "a") as fh:
        fh.write(json.dumps(rec) + "\n")
    print(
        f"{rec['label']} {rec['task']}/{rec['split']} {rec['method']}: "
        f"{rec['selection_time']:.3f} s = {rec['ratio']:.1f} SVC(), "
        f"{rec['n_factorizations']:.0f} fact, {rec['n_updates']:.0f} upd",
        flush=True,
    )


# ------------------------------------------------------------------------ the table
def _fmt(v, spec=".1f") -> str:
    return "—" if v is None else format(v, spec)


def table(out: Path) -> str:
    rows = read_rows(out)
    best: dict[tuple, dict] = {}
    rounds: dict[tuple, int] = defaultdict(int)
    for r in rows:  # over the rounds (--round): the fastest selection and fastest SVC() fit
        k = (r["label"], r["part"], r["task"], r["split"], r["method"])
        rounds[k] += 1
        if k not in best:
            best[k] = dict(r)
            continue
        b = best[k]
        if (r["params"], r["n_factorizations"]) != (b["params"], b["n_factorizations"]):
            raise ValueError(f"{k}: rounds differ in their choice or counts")
        b["selection_time"] = min(b["selection_time"], r["selection_time"])
        b["default_fit_time"] = min(b["default_fit_time"], r["default_fit_time"])
        b["ratio"] = b["selection_time"] / b["default_fit_time"]
    by = defaultdict(dict)
    for (label, part, task, split, method), r in best.items():
        by[(part, task, split, method)][label] = r
    n_rounds = sorted(set(rounds.values()))
    lines = [
        "# Exact core speed, before and after",
        "",
        f"Generated by `benchmarks/core_speed.py --table` from `{out.relative_to(HERE.parent)}`. "
        "Ratio = selection time / one `SVC()` fit on the same training set, measured in the "
        "same process (one BLAS thread). fact = fresh support-set factorisations per "
        "selection, upd = factor updates; GF/s = achieved GFLOP/s of the factorisations "
        "(m^3/3 flops each) / plain `numpy.linalg.cholesky` at the largest size. Each "
        f"selection ran {' or '.join(map(str, n_rounds))} times (rounds of `--pair`, each "
        "before and after back to back, on a machine shared with other jobs); the ratio is "
        "its fastest selection over the fastest `SVC()` fit of its rounds.",
        "",
    ]
    for method in METHODS:
        lines += [
            f"## {method}",
            "",
            "| set | split | n | before | after | after/before | fact before | fact after "
            "| upd after | GF/s after (peak) | same choice | acc before | acc after |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        summary = defaultdict(list)
        for (part, task, split, m), pair in sorted(by.items()):
            if m != method:
                continue
            b, a = pair.get("before"), pair.get("after")
            ref = a or b
            speed = None if a is None or b is None else a["ratio"] / b["ratio"]
            same = None
            if a is not None and b is not None:
                same = all(
                    np.isclose(a["params"][k], b["params"][k], rtol=1e-6) for k in ("sigma", "C")
                )
                dacc = a["accuracy"] - b["accuracy"]
                summary[part].append((b["ratio"], a["ratio"], speed, same, dacc))
            gf = (
                "—"
                if a is None or a["factor_gflops"] is None
                else f"{a['factor_gflops']:.2f} ({_fmt(a['cholesky_peak_gflops'], '.1f')})"
            )
            lines.append(
                f"| {task} | {split} | {ref['n_train']} | {_fmt(b and b['ratio'])} "
                f"| {_fmt(a and a['ratio'])} | {_fmt(speed, '.3f')} "
                f"| {_fmt(b and b['n_factorizations'], '.0f')} "
                f"| {_fmt(a and a['n_factorizations'], '.0f')} "
                f"| {_fmt(a and a['n_updates'], '.0f')} | {gf} "
                f"| {'—' if same is None else ('yes' if same else 'no')} "
                f"| {_fmt(b and 100 * b['accuracy'], '.2f')} "
                f"| {_fmt(a and 100 * a['accuracy'], '.2f')} |"
            )
        lines.append("")
        for part, vals in summary.items():
            br, ar, sp, same, dacc = (np.array(v, dtype=float) for v in zip(*vals))
            lines.append(
                f"- {part}: {len(vals)} selections; median ratio before {np.median(br):.1f}, "
                f"after {np.median(ar):.1f} (after / before "
                f"{np.median(ar) / np.median(br):.3f}); "
                f"after/before per selection: median {np.median(sp):.3f}, max {np.max(sp):.3f}; "
                f"same choice {int(same.sum())} of {len(vals)}; test accuracy after - before: "
                f"mean {100 * np.mean(dacc):+.2f} points."
            )
        lines.append("")
    return "\n".join(lines)


def run_pair(args: argparse.Namespace) -> None:
    """Each quick+data set, then each ijcnn1 size: one process on the old code (``before``),
    then one on the new (``after``), so that the two are measured back to back."""
    srcs = dict(zip(("before", "after"), args.pair.split(",")))
    common = ["--out", str(args.out), "--methods", args.methods, "--splits", args.splits]
    common += ["--round", str(args.round)]
    units = (
        []
        if args.no_quick
        else [["--tasks", t] for t in (args.tasks.split(",") if args.tasks else quick_data_tasks())]
    )
    units += [["--no-quick", "--ijcnn1", n] for n in args.ijcnn1.split(",") if n]
    for unit in units:
        for label, src in srcs.items():
            env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
            cmd = [sys.executable, __file__, "--label", label, *common, *unit]
            subprocess.run(cmd, env=env, check=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--label", choices=("before", "after"))
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--md", type=Path, default=MD)
    ap.add_argument("--tasks", default=None, help="comma-separated quick+data tasks")
    ap.add_argument("--splits", default="0,1")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--ijcnn1", default="", help="comma-separated subsample sizes")
    ap.add_argument("--no-quick", action="store_true")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--pair", default=None, help="BEFORE_SRC,AFTER_SRC: run both, set by set")
    ap.add_argument("--round", type=int, default=0, help="repeat number (rows are kept)")
    args = ap.parse_args(argv)
    if args.table:
        text = table(args.out)
        args.md.write_text(text + "\n", encoding="utf-8")
        print(text)
        return
    if args.pair:
        run_pair(args)
        return
    if args.label is None:
        ap.error("--label is needed to run")
    methods = tuple(args.methods.split(","))
    counter = Counter()
    done = set()
    if args.out.exists():
        done = {(r["label"], r["key"], r.get("round", 0)) for r in read_rows(args.out)}
    if not args.no_quick:
        tasks = args.tasks.split(",") if args.tasks else quick_data_tasks()
        splits = {int(s) for s in args.splits.split(",")}
        run_quick(args.label, tasks, splits, methods, counter, args.out, done, args.round)
    if args.ijcnn1:
        sizes = [int(s) for s in args.ijcnn1.split(",")]
        run_ijcnn1(args.label, sizes, methods, counter, args.out, done, args.round)


if __name__ == "__main__":
    main()
