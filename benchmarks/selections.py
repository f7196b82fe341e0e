"""Every method's selection on four small cells, to show that a change which should not move
a selection (a refactor of the checks, say) moves none.

Each method but ``auto`` (whose plan the cost issue changes) runs with the light options of
``tests/test_all_methods.py`` on 150 rows drawn with a fixed seed from pima, wdbc (binary),
new_thyroid (three classes) and pima with sample weights in [0.5, 2]; ``best_params_`` and
``estimate_`` go to a JSON file.  ``compare`` reports every value that differs by more than
1e-10 (relative), and every cell that errs in one run only.

    git worktree add /tmp/before <rev>
    (cd /tmp/before && PYTHONPATH=src python /path/to/benchmarks/selections.py run /tmp/before.json)
    python benchmarks/selections.py run /tmp/after.json
    python benchmarks/selections.py compare /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np

CELLS = ("pima", "wdbc", "new_thyroid", "pima-weighted")
ROWS = 150
TOL = 1e-10


def _plain(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def cmd_run(args) -> None:
    sys.path.insert(0, str(Path.cwd()))  # the tree under test: its tests/ and benchmarks/data
    from tests.test_all_methods import _LIGHT

    from svmtune import SVMTuner
    from svmtune.datasets import load_dataset
    from svmtune.methods import available_methods

    out = {}
    for cell in CELLS:
        X, y, _ = load_dataset(cell.split("-")[0])
        rows = np.random.RandomState(0).permutation(len(y))[:ROWS]
        X, y = X.iloc[rows], np.asarray(y)[rows]
        w = np.random.RandomState(1).uniform(0.5, 2.0, ROWS) if "weighted" in cell else None
        for method in available_methods():
            if method == "auto":
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tuner = SVMTuner(
                        method=method, method_params=_LIGHT.get(method), random_state=0
                    ).fit(X, y, sample_weight=w)
                est = tuner.estimate_
                out[f"{cell}:{method}"] = {
                    "params": _plain(tuner.best_params_),
                    "estimate": None if est is None else float(est),
                }
            except Exception as exc:  # recorded: a cell must err the same in both runs
                out[f"{cell}:{method}"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    Path(args.out).write_text(json.dumps(out, indent=1, sort_keys=True), encoding="utf-8")
    print(f"{len(out)} selections -> {args.out}")


def _differs(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() != b.keys() or any(_differs(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return not (math.isnan(a) and math.isnan(b))
        return abs(a - b) > TOL * max(1.0, abs(a))
    return a != b


def cmd_compare(args) -> None:
    a = json.loads(Path(args.before).read_text(encoding="utf-8"))
    b = json.loads(Path(args.after).read_text(encoding="utf-8"))
    bad = [k for k in sorted(a.keys() | b.keys()) if k not in a or k not in b]
    bad += [k for k in sorted(a.keys() & b.keys()) if _differs(a[k], b[k])]
    for k in bad:
        print(f"{k}: {a.get(k)} -> {b.get(k)}")
    print(f"{len(a.keys() & b.keys())} cells, {len(bad)} differ (tolerance {TOL:g})")
    raise SystemExit(1 if bad else 0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run")
    run.add_argument("out")
    run.set_defaults(fn=cmd_run)
    cmp = sub.add_parser("compare")
    cmp.add_argument("before")
    cmp.add_argument("after")
    cmp.set_defaults(fn=cmd_compare)
    args = ap.parse_args(argv)
    args.fn(args)


if __name__ == "__main__":
    main()
