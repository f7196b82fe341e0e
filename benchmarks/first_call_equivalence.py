"""Same results before and after the L2-SVM factor's updates left numba.

Runs, in one process per code tree (``PYTHONPATH`` chooses it), the factor updates on fixed
matrices (sequences of :meth:`svmtune._factor.ExtendedFactor.remove` / ``add``, and
:func:`svmtune._factor.mirror_lower`) and ``SVMTuner(method=...)`` for ``rbsvm``, ``span``,
``radius_margin`` and ``auto`` on a few bundled data sets (``preprocess="auto"``, seed 0), and
compares the two: the largest relative difference of the factors, of ``best_params_`` and of
``estimate_``.  The solver also chooses between an update and a fresh factorisation by a
cost estimate that changed with the update (:func:`svmtune.svm._update_is_cheaper`), so the
two trees may take different (equally exact) paths: differences at round-off are expected,
not zero.

Usage (the old tree exported from git, read-only)::

    git archive <old-commit> src | tar -x -C /tmp/old
    OPENBLAS_NUM_THREADS=1 python benchmarks/first_call_equivalence.py \
        --old /tmp/old/src --new src --control --out benchmarks/first_call_equivalence.json

``--control`` adds a run of the new tree with the old update-or-refactor estimate: both
trees then take the same paths, and the differences are the rotations' round-off alone.

``--worker`` is the per-tree process (prints one JSON document).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

DATASETS = ["parkinsons", "breast_cancer", "australian", "appendicitis"]
METHODS = ["rbsvm", "span", "radius_margin", "auto"]


def worker(control: bool = False) -> dict:
    """Factors and selections of the svmtune on ``sys.path``; ``control`` sets the solver's
    update-or-refactor estimate to the old one (``GIVENS_COST = 24``, no per-column term), so
    that both trees take the same paths and differ by the rotations' round-off alone."""
    import svmtune
    import svmtune.svm as svm_module

    if control:
        svm_module.GIVENS_COST = 24.0
        svm_module.GIVENS_COLUMN_COST = 0.0
    from svmtune import SVMTuner
    from svmtune._factor import ExtendedFactor, mirror_lower
    from svmtune.datasets import load_dataset

    out: dict = {"svmtune": svmtune.__file__, "factors": {}, "selections": {}}
    rng = np.random.default_rng(0)
    for m in (100, 400, 1500):
        A = rng.normal(size=(m, m + 5))
        H = A @ A.T / m + 0.05 * np.eye(m)
        idx = np.arange(m)
        fac = ExtendedFactor.from_block(H, idx)
        # remove a tenth of the points in three batches, at the front, middle and end
        for part in (idx[: m // 30], idx[m // 2 : m // 2 + m // 30], idx[-(m // 30) :]):
            fac = fac.remove(part)
        back = idx[m // 2 : m // 2 + m // 30]
        fac = fac.add(back, H[np.ix_(fac.index, back)], H[np.ix_(back, back)])
        out["factors"][str(m)] = {
            "L": np.tril(fac.chol[0]).tolist(),
            "inverse": fac.inverse().tolist(),
        }
        low = np.tril(rng.normal(size=(m, m)))
        out["factors"][f"mirror{m}"] = {"A": mirror_lower(np.asfortranarray(low)).tolist()}
    for name in DATASETS:
        X, y, _ = load_dataset(name)
        for method in METHODS:
            t = SVMTuner(method=method, preprocess="auto", random_state=0)
            t = t.fit(X, y)
            out["selections"][f"{name}/{method}"] = {
                "params": {k: v for k, v in t.best_params_.items() if k != "kernel"},
                "estimate": t.estimate_,
                "n_svm_fits": t.selection_.n_svm_fits,
            }
    return out


def _rel(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))


def compare(old: dict, new: dict) -> dict:
    """Largest relative differences, per factor and per selection."""
    res: dict = {"factors": {}, "selections": {}}
    for key, o in old["factors"].items():
        n = new["factors"][key]
        res["factors"][key] = {k: _rel(n[k], o[k]) for k in o}
    for key, o in old["selections"].items():
        n = new["selections"][key]
        res["selections"][key] = {
            "params": max(_rel(n["params"][k], o["params"][k]) for k in o["params"]),
            "estimate": None if o["estimate"] is None else _rel(n["estimate"], o["estimate"]),
            "n_svm_fits": [o["n_svm_fits"], n["n_svm_fits"]],
        }
    return res


def _run_tree(src: str, control: bool = False) -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(src).resolve()))
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    out = subprocess.run(
        [sys.executable, __file__, "--worker", *(["--control"] if control else [])],
        env=env,
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise RuntimeError(f"worker on {src} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", action="store_true")
    ap.add_argument(
        "--control",
        action="store_true",
        help="also run the new tree with the old update-or-refactor estimate",
    )
    ap.add_argument("--old", help="src directory of the code before")
    ap.add_argument("--new", default="src", help="src directory of the code after")
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).with_name("first_call_equivalence.json")
    )
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.control)))
        return
    if not args.old:
        ap.error("--old SRC is required (see the module docstring)")
    old = _run_tree(args.old)
    res = {"new": compare(old, _run_tree(args.new))}
    if args.control:
        res["new, old estimate"] = compare(old, _run_tree(args.new, control=True))
    args.out.write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
