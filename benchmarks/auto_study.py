"""Design study of ``method="auto"``: every candidate's referee estimates and test accuracy.

For every task and split of the quick suite run on the bundled data sets of
``benchmarks/results/quick+data/`` (the same splits as the stored cells, so that the stored
grid, ``SVC()``, optuna and single-method cells are on the same data), and of the
rbsvm-paper tasks with at most 5,000 training rows, ``auto`` runs with every start, both
refinements and both final-model families; each candidate's final model of each family is
then fitted on the training part and scored on the test part.  The rules ``auto`` could use
(which starts, which refinement, tie order) are then compared offline by
``benchmarks/auto_rules.py``, choosing by leave-one-data-set-out cross-validation.

    python benchmarks/auto_study.py --n-jobs 2

Units are checkpointed (``benchmarks/results/auto_study/units.jsonl``): a killed run resumes.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from _units import run_units
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from svmtune import SVMTuner
from svmtune.bench.checkpoint import Checkpoint
from svmtune.bench.runner import _prepared, _timed_default_fit, default_loader, environment
from svmtune.bench.suite import get_suite, on_data
from svmtune.estimators import make_final_estimator
from svmtune.preprocess import transform_as_fitted

OUT = Path(__file__).parent / "results" / "auto_study"
STUDY = {"starts": ["median", "ld", "ss"], "refine": ["rbsvm", "span"]}


def quick_data_names() -> list[str]:
    """The data sets of the stored quick+data cells."""
    rows = Path(__file__).parent / "results" / "quick+data" / "results.jsonl"
    names = [json.loads(line)["dataset"] for line in rows.open() if '"kind": "cell"' in line]
    return sorted(set(names))


def units(max_n: int = 5000) -> list[tuple[str, str, int]]:
    out = []
    qd = on_data(get_suite("quick"), quick_data_names())
    for t in qd.tasks:
        out += [("quick+data", t.name, s) for s in range(qd.protocol.n_splits_per_task)]
    rp = get_suite("rbsvm-paper", search_from=Path(__file__).parent)
    for t in rp.tasks:
        if t.options.get("large") or t.subsample is not None and t.subsample > max_n:
            continue
        data, splits = _prepared(rp, t, default_loader)
        if len(splits[0][0]) > max_n:
            continue
        out += [("rbsvm-paper", t.name, s) for s in range(len(splits))]
    return out


def _suite(name: str):
    return (
        on_data(get_suite("quick"), quick_data_names())
        if name == "quick+data"
        else get_suite(name, search_from=Path(__file__).parent)
    )


def unit_data(suite_name: str, task_name: str, split: int):
    """``(data, Xtr, ytr, Xte, yte)`` of one unit: the task's prepared data and the split's
    training and test rows."""
    suite = _suite(suite_name)
    task = next(t for t in suite.tasks if t.name == task_name)
    data, splits = _prepared(suite, task, default_loader)
    train, test = splits[split]
    return data, data.X.iloc[train], data.y[train], data.X.iloc[test], data.y[test]


def run_unit(suite_name: str, task_name: str, split: int, max_eval: int = 10) -> dict:
    data, Xtr, ytr, Xte, yte = unit_data(suite_name, task_name, split)
    with threadpool_limits(1):
        tuner = SVMTuner(
            method="auto",
            method_params={**STUDY, "max_eval": max_eval},
            preprocess=data.preprocess,
            random_state=0,
        )
        t0 = time.perf_counter()
        tuner.fit(Xtr, ytr)
        total = time.perf_counter() - t0
        Xp_tr = transform_as_fitted(tuner.preprocessor_, Xtr)
        Xp_te = transform_as_fitted(tuner.preprocessor_, Xte)
        y_enc = np.searchsorted(tuner.classes_, ytr)
        default_time, _ = _timed_default_fit(SVC, Xp_tr, y_enc)
        k = len(tuner.classes_)
        cands = []
        for c in tuner.history_:
            c = dict(c)
            for fam in ("l1", "l2"):
                est = make_final_estimator(
                    {"kernel": "rbf", "sigma": c["sigma"], "C": c["C"]},
                    final_model=fam,
                    n_classes=k,
                )
                est.fit(Xp_tr, y_enc)
                c[f"test_{fam}"] = float(np.mean(tuner.classes_[est.predict(Xp_te)] == yte))
            cands.append(c)
    return {
        "suite": suite_name,
        "task": task_name,
        "split": split,
        "n_train": len(ytr),
        "n_classes": k,
        "default_fit_time": default_time,
        "auto_time": total,
        "candidates": cands,
        **environment(),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-jobs", type=int, default=1, help="units run at once")
    ap.add_argument("--max-eval", type=int, default=10, help="SVM trainings per refinement")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    name = "units.jsonl" if args.max_eval == 10 else f"units_e{args.max_eval}.jsonl"
    spec = {"study": {**STUDY, "max_eval": 10}, "version": 1}
    if args.max_eval != 10:
        spec["study"]["max_eval"] = args.max_eval
    ck = Checkpoint(OUT / name, spec=spec)
    us = [(*u, args.max_eval) for u in units()]
    print(len(us), "units", flush=True)
    run_units(ck, us, run_unit, args.n_jobs, key=lambda u: u[:3])


if __name__ == "__main__":
    main()
