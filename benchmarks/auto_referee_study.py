"""Design study of auto's referee: per-row leave-one-out losses of every candidate.

For every cell of the 43 small bundled sets (the units of ``benchmarks/auto_study.py``: the
quick suite's 26 bundled sets, 2 splits, and the rbsvm-paper tasks up to 5,000 training rows,
10 folds), on all training rows: ``SVC()``'s point, the median width at ``C = 1``, RBSVM's
refinement (10 steps) from each of the two, a longer one (30 steps) and the smoothed span's
(10 steps) from the median start.  For each candidate and final-model family (libsvm's SVC,
the L2-SVM) it stores the referee's per-row leave-one-out 0/1 losses and cross-entropies
(RBSVM eq. (28), ``log(1 + exp(-2 y r))`` summed over the one-vs-rest tasks) and the test
accuracy of that final model.  ``benchmarks/auto_referee_rules.py`` then compares referee
rules offline (which test, which threshold) by nested leave-one-data-set-out.

    python benchmarks/auto_referee_study.py --n-jobs 2

Units are checkpointed (``benchmarks/results/auto_referee/units.jsonl``): a killed run resumes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _units import run_units
from auto_study import unit_data, units
from threadpoolctl import threadpool_limits

from svmtune import SVMTuner
from svmtune.bench.checkpoint import Checkpoint
from svmtune.bench.runner import environment
from svmtune.estimators import make_final_estimator
from svmtune.kernels import _squared_distances, rbf_from_sqdist
from svmtune.loo.referee import _l1_loo_outputs, _l2_loo_outputs, _ovo_loo_outputs, row_losses
from svmtune.methods.base import SelectionContext, TrainingData, get_selector, ovr_tasks
from svmtune.preprocess import transform_as_fitted
from svmtune.search.start import initial_sigma

OUT = Path(__file__).parent / "results" / "auto_referee"
#: (name, refiner, start, steps) of the refinements
REFINEMENTS = (
    ("rbsvm_default", "rbsvm", "default", 10),
    ("rbsvm_median", "rbsvm", "median", 10),
    ("rbsvm30_median", "rbsvm", "median", 30),
    ("span_median", "span", "median", 10),
)


def run_unit(suite_name: str, task_name: str, split: int) -> dict:
    data, Xtr, ytr, Xte, yte = unit_data(suite_name, task_name, split)
    with threadpool_limits(1):
        t0 = time.perf_counter()
        tuner = SVMTuner(method="default", preprocess=data.preprocess, random_state=0)
        tuner.fit(Xtr, ytr)
        X = transform_as_fitted(tuner.preprocessor_, Xtr)
        Xt = transform_as_fitted(tuner.preprocessor_, Xte)
        y = np.searchsorted(tuner.classes_, ytr)
        k = len(tuner.classes_)
        D2 = _squared_distances(X)
        tdata = TrainingData(X, y, None, sqdist=D2)
        ctx = SelectionContext(random_state=0)
        points = {
            "default": (float(tuner.best_params_["sigma"]), 1.0),
            "median": (float(initial_sigma(D2, rule="median")), 1.0),
        }
        for name, refiner, start, steps in REFINEMENTS:
            sel = get_selector(
                refiner, {"start": points[start], "max_eval": steps, "jump_restarts": 0}
            ).run(tdata, ctx)
            points[name] = (float(sel.params["sigma"]), float(sel.params["C"]))
        tasks = ovr_tasks(y)
        cands = []
        for name, (sigma, C) in points.items():
            K = rbf_from_sqdist(D2, sigma)
            c = {"origin": name, "sigma": sigma, "C": C}
            for fam in ("l1", "l2"):
                if fam == "l1" and k > 2:
                    outs, pairwise = _ovo_loo_outputs(K, y, C, None), True
                elif fam == "l1":
                    outs, pairwise = _l1_loo_outputs(K, tasks, C, None)[0], False
                else:
                    outs, pairwise = _l2_loo_outputs(K, tasks, C, None), False
                err, xent = row_losses(y, outs, pairwise=pairwise)
                est = make_final_estimator(
                    {"kernel": "rbf", "sigma": sigma, "C": C}, final_model=fam, n_classes=k
                ).fit(X, y)
                c[f"err01_{fam}"] = err.tolist()
                c[f"xent_{fam}"] = np.round(xent, 6).tolist()
                c[f"test_{fam}"] = float(np.mean(tuner.classes_[est.predict(Xt)] == yte))
            cands.append(c)
    return {
        "suite": suite_name,
        "task": task_name,
        "split": split,
        "n_train": len(ytr),
        "n_test": len(yte),
        "n_classes": k,
        "seconds": time.perf_counter() - t0,
        "candidates": cands,
        **environment(),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-jobs", type=int, default=1, help="units run at once")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    spec = {"refinements": [list(r) for r in REFINEMENTS], "version": 1}
    ck = Checkpoint(OUT / "units.jsonl", spec=spec)
    us = units()
    print(len(us), "units", flush=True)
    run_units(ck, us, run_unit, args.n_jobs, key=lambda u: u[:3])


if __name__ == "__main__":
    main()
