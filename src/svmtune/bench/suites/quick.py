"""The quick suite: every registered method on five small bundled data sets, in minutes.

It is the smoke test of the whole library on real data (``svmtune bench --suite quick``):
two binary numeric sets (heart_statlog, sonar), one with categorical columns and missing
values (breast_cancer, exercising ``preprocess="auto"``), one multiclass set (iris) and
ionosphere (d = 34, one constant feature).  Protocol: 2 stratified 70/30 splits per set.

To keep the whole suite within minutes on two cores, the yardstick is a 10-fold grid
search on a coarser grid than the papers' (log2 sigma, log2 C in [-8, 8] with step 2:
9 x 9 = 81 candidates, 810 SVM fits, instead of step 1: 289 candidates), and the model-based
searches get 30 candidates each (300 fits); the LD paper's CV-CV grid is thinned the same
way (step 2: 6 x 7 candidates).  All other methods run with their defaults.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from svmtune.bench.suite import MethodSpec, Protocol, Suite, Task

__all__ = ["SUITE", "accuracy_by_method"]

_BOX = {"log2_sigma": (-8.0, 8.0), "log2_C": (-8.0, 8.0)}
_GRID = {"log2_sigma": (-8.0, 8.0, 2.0), "log2_C": (-8.0, 8.0, 2.0), "n_splits": 10}


def accuracy_by_method(results: pd.DataFrame, outdir: Path) -> list[Path]:
    """Test accuracy of every split, one panel per task, methods on the vertical axis."""
    from matplotlib.figure import Figure

    ok = results[results["status"] == "ok"]
    if ok.empty:
        return []
    tasks = list(dict.fromkeys(ok["task"]))
    methods = list(dict.fromkeys(ok["method"]))
    fig = Figure(figsize=(3.2 * len(tasks), 0.28 * len(methods) + 1.5), dpi=100)
    axes = np.atleast_1d(fig.subplots(1, len(tasks), sharey=True))
    for ax, t in zip(axes, tasks):
        sub = ok[ok["task"] == t]
        for i, m in enumerate(methods):
            v = 100 * sub.loc[sub["method"] == m, "accuracy"].to_numpy()
            ax.plot(v, np.full(v.shape, i), "o", ms=3, color="tab:blue", alpha=0.7)
            if v.size:
                ax.plot([v.mean()], [i], "|", ms=10, color="black")
        ax.set_title(t, fontsize=9)
        ax.set_xlabel("test accuracy (%)", fontsize=8)
        ax.grid(True, axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(methods)), methods, fontsize=7)
    axes[0].invert_yaxis()
    fig.tight_layout()
    path = Path(outdir) / "quick_accuracy_by_method.png"
    fig.savefig(path)
    return [path]


SUITE = Suite(
    name="quick",
    description=(
        "Every registered selection method on five small bundled data sets (2 stratified "
        "70/30 splits each): a few minutes on two cores. Grid yardstick: 10-fold CV on a "
        "9 x 9 log2 grid (step 2) over [2^-8, 2^8]."
    ),
    tasks=[
        Task("heart_statlog", "heart_statlog"),
        Task("sonar", "sonar"),
        Task("breast_cancer", "breast_cancer"),
        Task("iris", "iris"),
        Task("ionosphere", "ionosphere"),
    ],
    methods=[
        MethodSpec("default", "default"),
        MethodSpec("auto", "auto"),
        MethodSpec("grid-10fold", "grid", dict(_GRID)),
        MethodSpec("random", "random", {"n_iter": 30, **_BOX}),
        MethodSpec("tpe", "tpe", {"max_evals": 30, "n_startup": 10, **_BOX}),
        MethodSpec("optuna", "optuna", {"n_trials": 30, "n_startup": 10, **_BOX}),
        MethodSpec(
            "halving", "halving", {"log2_sigma": (-8.0, 8.0, 2.0), "log2_C": (-8.0, 8.0, 2.0)}
        ),
        MethodSpec("rbsvm", "rbsvm"),
        MethodSpec("rbsvm_lowrank", "rbsvm_lowrank"),
        MethodSpec("span", "span"),
        MethodSpec("radius_margin", "radius_margin"),
        MethodSpec("span_lowrank", "span_lowrank"),
        MethodSpec("radius_margin_lowrank", "radius_margin_lowrank"),
        MethodSpec("esdr", "esdr"),
        MethodSpec("dbtc", "dbtc"),
        MethodSpec("j4", "j4"),
        MethodSpec("ld", "ld"),
        MethodSpec("ld_c1", "ld_c1"),
        MethodSpec("cv_cv", "cv_cv", {"log2_sigma": (-6.0, 4.0, 2.0), "log2_C": (-5.0, 8.0, 2.0)}),
        MethodSpec("span_rule", "span_rule"),
        MethodSpec("ss", "ss"),
    ],
    protocol=Protocol(kind="split", n_repeats=2, test_size=0.3),
    seed=0,
    figures=[accuracy_by_method],
    yardsticks={"grid": "grid-10fold", "default": "default"},
)
