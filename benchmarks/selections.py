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

``run-auto OUT.json`` does the same for ``auto`` on :data:`AUTO_CELLS` (its exact, subsampled,
low-rank, sparse and grouped paths), for a change that should not move its choices either.
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


#: ``auto`` on its paths: (data set, rows or None for all, what): the exact single stage and
#: the subsampled stages, each with and without sample weights, and on larger rows the
#: low-rank path (``exact_rows=0``), a sparse X and groups of three rows
AUTO_CELLS = (
    *((name, rows, kind) for name, rows in (("pima", None), ("wdbc", None),
      ("new_thyroid", None), ("waveform_5000", 3000), ("ijcnn1_train", 6000),
      ("banana", 4000)) for kind in ("plain", "weighted")),
    *((name, rows, kind) for name, rows in (("waveform_5000", 3000), ("ijcnn1_train", 6000))
      for kind in ("lowrank", "sparse", "groups")),
)  # fmt: skip


def cmd_run_auto(args) -> None:
    """``auto``'s choice on :data:`AUTO_CELLS`: to show that a change which should not move
    it (a refactor of its contract, say) moves none, where its plan is not the change."""
    import scipy.sparse as sp

    from svmtune import SVMTuner
    from svmtune.datasets import load_dataset

    out = {}
    for name, rows, kind in AUTO_CELLS:
        X, y, _ = load_dataset(name)
        y = np.asarray(y)
        if rows is not None and len(y) > rows:
            keep = np.random.RandomState(0).permutation(len(y))[:rows]
            X, y = X.iloc[keep], y[keep]
        w = np.random.RandomState(1).uniform(0.5, 2.0, len(y)) if kind == "weighted" else None
        groups = np.arange(len(y)) // 3 if kind == "groups" else None
        if kind == "sparse":
            X = sp.csr_matrix(X.to_numpy(dtype=float))
        params = {"exact_rows": 0} if kind == "lowrank" else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tuner = SVMTuner(random_state=0, method_params=params)
            tuner.fit(X, y, sample_weight=w, groups=groups)
        out[f"{name}:{rows}:{kind}"] = {
            "params": _plain(tuner.best_params_),
            "estimate": float(tuner.estimate_),
            "final_model": tuner.final_model_,
            "n_svm_fits": float(tuner.n_svm_fits_),
            "path": tuner.selection_.info["path"],
        }
    Path(args.out).write_text(json.dumps(out, indent=1, sort_keys=True), encoding="utf-8")
    print(f"{len(out)} auto selections -> {args.out}")


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
    auto = sub.add_parser("run-auto")
    auto.add_argument("out")
    auto.set_defaults(fn=cmd_run_auto)
    cmp = sub.add_parser("compare")
    cmp.add_argument("before")
    cmp.add_argument("after")
    cmp.set_defaults(fn=cmd_compare)
    args = ap.parse_args(argv)
    args.fn(args)


if __name__ == "__main__":
    main()
