"""The span-paper suite: Weighted span (Sarafis, Diou & Delopoulos, JMLR) Tables 2-6, Fig. 2-6.

Tasks: the 14 data sets of the paper's Table 1 as far as we have them (see ``TASK_NOTES``):
breast cancer (``breast_w``), mushrooms (``mushroom``, one-hot), the IDA pattern sets waveform,
banana, splice and image, skin-nonskin, adult (a9a), the four MNIST pairs, Parkinson speech
(UPDRS as importance score) and bank marketing (call duration as importance score).

Two parts:

**Cells** (``svmtune bench --suite span-paper``): every task x method through
:class:`svmtune.SVMTuner`, one stratified random split per task.  The harness has one
protocol per suite, so the cells cannot use the per-set sizes of Table 1; they train on
``CELL_TRAIN_SIZE`` = 400 samples (the paper's waveform/banana size; its sizes range from 100
to ~13000) and test on the rest of the file.  Methods: the four columns of Tables 2-3 on the
paper's class-weight grid (``C+``, ``C-`` with ``log2`` in ``[-6, 10]`` step 0.5, 1089
models, ``gamma = 1/d`` on ``[0, 1]``-scaled features): span-rule, span bound, 5-fold CV and
xi-alpha bound; the library's default span-rule search (RBF width and C on the log2 grid
``[-8, 8]^2``) and 5-fold CV over that same grid; and the two yardsticks, ``SVC()`` defaults
and the 10-fold grid search.  Table 2's numbers are ``published`` beside the cells.

**Experiments** (Table 1 sizes, written under ``experiments/<name>/``):

* :func:`grid_study_tables` -- Tables 2-5 and Fig. 2-4 the way the paper made them: every
  model of the grid trained once on the Table 1 training set, predicted by span-rule, span
  bound, xi-alpha and 5-fold CV and scored on the Table 1 test set; Table 3 (instance
  weights from importance scores, eq. (39)) for Parkinson speech and bank marketing.  The
  grid step and the set of data sets run are parameters; the default run profile
  (``GRID_PROFILE``) fits the CPU budget and marks the rest "not run".
* :func:`grid_study_paper_grid` -- the same with the paper's full 1089-model grid (log2 step
  0.5) on breast cancer, mushrooms and waveform (``PAPER_GRID_PROFILE``).
* :func:`grid_study_mnist` -- the same on the MNIST pairs with 1000 training samples (of
  Table 1's ~12000) and a 5 x 5 class-weight grid, without the span bound; the test sets are
  the official MNIST test digits of the two classes.
* :func:`mnist_efficiency` -- Table 6 on the MNIST pairs: seconds per model of span-rule
  (libsvm fit + closed-form spans) vs. 5-fold CV, at 2000 training samples and at the full
  Table 1 training sets (~12000).
* :func:`ringnorm_scaling` -- Section 6.7, Fig. 5-6: the paper's ringnorm generator,
  ``l = 2^7 .. 2^14``, ``d = 20, 40, 80``; the sizes run are a parameter (``2^7 .. 2^12``
  in the experiment), the others are listed as "not run".

Differences from the paper (also in each output file): our "breast cancer" is the Wisconsin
set with 699 rows, so its test set has 599 rows, not 783; our bank marketing is UCI
bank-full (45211 rows, no macro-economic columns), so its features are age, balance,
campaign, pdays, previous, marital (one-hot) and the default / housing / loan flags; the
MNIST pairs have 784 pixel columns (the paper 780); spans are closed forms, not MOSEK QPs
(Theorem 2), and the span bound's QPs are solved with clarabel.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from svmtune.bench.suite import MethodSpec, Protocol, Suite

from ._span_studies import (
    GRID_PROFILE,
    MNIST_PROFILE,
    PAPER_GRID_PROFILE,
    grid_study_mnist,
    grid_study_paper_grid,
    grid_study_tables,
    mnist_efficiency,
    ringnorm_scaling,
    run_grid_study,
    run_mnist_efficiency,
    run_ringnorm_scaling,
)
from ._span_tables import (
    CELL_TRAIN_SIZE,
    T2_COLS,
    TABLE2,
    TABLE3,
    TABLE4,
    TABLE5,
    TABLE6,
    TASK_NOTES,
    TASKS,
)

__all__ = [
    "SUITE",
    "TASKS",
    "TASK_NOTES",
    "METHODS",
    "PUBLISHED",
    "CELL_TRAIN_SIZE",
    "TABLE2",
    "TABLE3",
    "TABLE4",
    "TABLE5",
    "TABLE6",
    "GRID_PROFILE",
    "MNIST_PROFILE",
    "grid_study_mnist",
    "grid_study_paper_grid",
    "PAPER_GRID_PROFILE",
    "error_by_method",
    "grid_study_tables",
    "mnist_efficiency",
    "ringnorm_scaling",
    "run_grid_study",
    "run_mnist_efficiency",
    "run_ringnorm_scaling",
]
_CW = {"search": "class_weights"}
METHODS = [
    MethodSpec("Span-rule", "span_rule", dict(_CW)),
    MethodSpec("Span bound", "span_rule", {**_CW, "criterion": "span_bound"}),
    MethodSpec("K-fold CV", "span_rule", {**_CW, "criterion": "cv", "n_splits": 5}),
    MethodSpec("xi-alpha bound", "span_rule", {**_CW, "criterion": "xi_alpha"}),
    MethodSpec("Span-rule (sigma, C)", "span_rule", {}),
    MethodSpec("5-fold CV (sigma, C)", "span_rule", {"criterion": "cv", "n_splits": 5}),
    MethodSpec("default", "default"),
    MethodSpec("grid-10fold", "grid", {"n_splits": 10}),
]

# ---------------------------------------------------------------------------------------------
# The paper's numbers (transcribed from the text of Tables 2-6)
# ---------------------------------------------------------------------------------------------
PUBLISHED = [
    {
        "table": "2",
        "task": task,
        "method": label,
        "metric": "error",
        "unit": "fraction",
        "value": value,
    }
    for task, values in TABLE2.items()
    for label, value in zip(T2_COLS[:4], values[:4])
]


# ---------------------------------------------------------------------------------------------
# Figure from the cells
# ---------------------------------------------------------------------------------------------
def error_by_method(results: pd.DataFrame, outdir: Path) -> list[Path]:
    """Test error of every task's cell per method (Table 2 layout), beside Table 2's values."""
    from matplotlib.figure import Figure

    ok = results[results["status"] == "ok"]
    if ok.empty:
        return []
    tasks = list(dict.fromkeys(ok["task"]))
    methods = list(dict.fromkeys(ok["method"]))
    err = ok.assign(error=1.0 - ok["accuracy"]).pivot_table(
        index="task", columns="method", values="error", aggfunc="mean"
    )
    fig = Figure(figsize=(max(6.0, 0.9 * len(tasks) + 2), 4.0), dpi=100)
    ax = fig.subplots()
    width = 0.8 / max(1, len(methods))
    x = np.arange(len(tasks))
    for j, m in enumerate(methods):
        vals = [err.loc[t, m] if (t in err.index and m in err.columns) else np.nan for t in tasks]
        ax.bar(x + j * width, vals, width, label=m)
        paper = [
            TABLE2.get(t, (np.nan,) * 5)[T2_COLS.index(m)] if m in T2_COLS else np.nan
            for t in tasks
        ]
        ax.plot(x + j * width, paper, "k_", ms=8)
    ax.set_xticks(x + 0.4 - width / 2, tasks, rotation=40, ha="right", fontsize=7)
    ax.set_ylabel("test error (black dash: Table 2)")
    ax.legend(fontsize=6, ncol=2)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    path = Path(outdir) / "span_paper_error_by_method.png"
    fig.savefig(path)
    csv = Path(outdir) / "span_paper_error_by_method.csv"
    err.to_csv(csv)
    return [path, csv]


SUITE = Suite(
    name="span-paper",
    description=(
        "Weighted span (Sarafis et al., JMLR): span-rule, span bound, 5-fold CV and xi-alpha "
        "bound choosing class weights C+/C- (1089 models, gamma = 1/d) on the paper's 14 data "
        f"sets; cells train on {CELL_TRAIN_SIZE} samples (one split); experiments at Table 1 "
        "sizes: Tables 2-6, Fig. 2-6."
    ),
    tasks=TASKS,
    methods=METHODS,
    protocol=Protocol(kind="split", n_repeats=1, train_size=CELL_TRAIN_SIZE),
    seed=0,
    published=PUBLISHED,
    figures=[error_by_method],
    experiments=[
        grid_study_tables,
        grid_study_paper_grid,
        grid_study_mnist,
        mnist_efficiency,
        ringnorm_scaling,
    ],
    yardsticks={"grid": "grid-10fold", "default": "default"},
)
