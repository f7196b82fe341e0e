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

import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from svmtune.bench.suite import MethodSpec, Protocol, Suite, Task
from svmtune.bench.suites._markdown import markdown_table

from . import _span_experiments as X

__all__ = [
    "SUITE",
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

CELL_TRAIN_SIZE = 400

_BANK_DROP = ("job", "education", "contact", "day", "month", "duration", "poutcome")

#: Table 1: task -> (dataset, positive label, n_train, n_test, test file, extra options)
_TABLE1: dict[str, tuple] = {
    "breast cancer": ("breast_w", "malignant", 100, 783, None, {}),
    "mushrooms": ("mushroom", "p", 200, 7924, None, {}),
    "waveform": ("ida_waveform", 1, 400, 4600, None, {}),
    "banana": ("ida_banana", 1, 400, 4900, None, {}),
    "skin nonskin": ("skin_nonskin", 1, 500, 244557, None, {}),
    "splice": ("ida_splice", 1, 1000, 2175, None, {}),
    "image": ("ida_image", 1, 1300, 1010, None, {}),
    "adult": ("adult_a9a_train", 1, 1605, 30956, None, {}),
    "MNIST 2's vs. 9's": ("mnist_2v9_train", 2, 11907, 2041, "mnist_2v9_test", {}),
    "MNIST 1's vs. 7's": ("mnist_1v7_train", 1, 13007, 2163, "mnist_1v7_test", {}),
    "MNIST 3's vs. 6's": ("mnist_3v6_train", 3, 12049, 1968, "mnist_3v6_test", {}),
    "MNIST 0's vs. 8's": ("mnist_0v8_train", 0, 11774, 1954, "mnist_0v8_test", {}),
    "Parkinson's speech": (
        "parkinson_speech_train",
        1,
        520,
        520,
        None,
        {
            "score": "updrs",
            "subjects": (
                list(range(1, 11)) + list(range(21, 31)),
                list(range(11, 21)) + list(range(31, 41)),
            ),
        },
    ),
    "bank marketing": ("bank_marketing", 2, 300, 40888, None, {"score": "duration"}),
}


def _with_test_file(task: Task) -> Task:
    """``task`` with its Table 1 test file (MNIST pairs: the official MNIST test digits).

    The cells keep ``test_dataset=None``: their protocol splits the training file.
    """
    from dataclasses import replace

    test_ds = _TABLE1[task.name][4]
    return task if test_ds is None else replace(task, test_dataset=test_ds)


TASK_NOTES = {
    "breast cancer": "breast_w (Wisconsin, 699 rows, 16 missing cells imputed): test 599, not 783",
    "mushrooms": "UCI mushroom one-hot encoded (LIBSVM mushrooms = its one-hot encoding)",
    "adult": "a9a training file: 1605 for training, the other 30956 rows for testing (= a1a)",
    "Parkinson's speech": "training file's 40 subjects split by ID as in Section 6.1.2; "
    "in the cells a random split of recordings (subjects shared by train and test)",
    "bank marketing": "UCI bank-full (45211 rows), not bank-additional (41188): no "
    "macro-economic columns; features age, balance, campaign, pdays, previous, marital, "
    "default, housing, loan; call duration = importance score",
}


def _task(name: str) -> Task:
    ds, pos, n_tr, n_te, test_ds, extra = _TABLE1[name]
    opts = {"n_train": n_tr, "n_test": n_te, **extra}
    drop = _BANK_DROP if name == "bank marketing" else ()
    return Task(name, ds, positive=pos, drop_columns=drop, options=opts)


TASKS = [_task(n) for n in _TABLE1]

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
_T2_COLS = ("Span-rule", "Span bound", "K-fold CV", "xi-alpha bound", "Min. error")
#: Table 2: test error of the model each rule selects (class weights C+/C-)
TABLE2: dict[str, tuple[float, ...]] = {
    "breast cancer": (0.0360, 0.0395, 0.0377, 0.0360, 0.0292),
    "mushrooms": (0.0151, 0.0154, 0.0456, 0.0623, 0.0133),
    "waveform": (0.1141, 0.1226, 0.1104, 0.1422, 0.1052),
    "banana": (0.2324, 0.4476, 0.2324, 0.4476, 0.2324),
    "skin nonskin": (0.0086, 0.0143, 0.0131, 0.0104, 0.0061),
    "splice": (0.1080, 0.1237, 0.1085, 0.1591, 0.1016),
    "image": (0.0623, 0.1158, 0.0623, 0.0852, 0.0623),
    "adult": (0.1585, 0.2405, 0.1628, 0.2405, 0.1557),
    "MNIST 2's vs. 9's": (0.0049, 0.0103, 0.0059, 0.0103, 0.0049),
    "MNIST 1's vs. 7's": (0.0042, 0.0065, 0.0042, 0.0065, 0.0032),
    "MNIST 3's vs. 6's": (0.0020, 0.0030, 0.0030, 0.0091, 0.0020),
    "MNIST 0's vs. 8's": (0.0067, 0.0061, 0.0061, 0.0092, 0.0051),
}
#: Table 3: same for instance weights from scores (eq. (39))
TABLE3: dict[str, tuple[float, ...]] = {
    "Parkinson's speech": (0.3865, 0.5000, 0.4000, 0.5134, 0.3692),
    "bank marketing": (0.2218, 0.2801, 0.2297, 0.2803, 0.2218),
}
#: Table 4: RMSE between prediction and test error (span-rule, K-fold CV, xi-alpha bound)
TABLE4: dict[str, tuple[float, float, float]] = {
    "breast cancer": (0.0229, 0.0494, 0.0419),
    "mushrooms": (0.0151, 0.0384, 0.1046),
    "waveform": (0.0256, 0.0271, 0.0912),
    "banana": (0.0150, 0.0128, 0.2150),
    "skin nonskin": (0.0204, 0.0496, 0.0884),
    "splice": (0.0156, 0.0199, 0.2135),
    "image": (0.0134, 0.0213, 0.1251),
    "adult": (0.0066, 0.0136, 0.1495),
    "MNIST 2's vs. 9's": (0.0108, 0.0229, 0.0539),
    "MNIST 1's vs. 7's": (0.0060, 0.0198, 0.0404),
    "MNIST 3's vs. 6's": (0.0068, 0.0188, 0.0389),
    "MNIST 0's vs. 8's": (0.0077, 0.0182, 0.0420),
    "Parkinson's speech": (0.0152, 0.0134, 0.2167),
    "bank marketing": (0.0163, 0.0824, 0.1730),
}
#: Table 5: mean +- std of empty-Lambda_p occurrences, in-bound SVs, total SVs per model
TABLE5: dict[str, tuple[float, float, float, float, float, float]] = {
    "breast cancer": (0.128, 0.461, 4.6, 2.0, 33.3, 22.6),
    "mushrooms": (0.0, 0.0, 27.6, 10.1, 93.0, 35.9),
    "waveform": (0.003, 0.068, 16.0, 7.2, 188.7, 58.3),
    "banana": (0.0, 0.0, 17.2, 14.0, 277.3, 47.1),
    "skin nonskin": (0.197, 0.621, 7.3, 3.8, 167.9, 115.3),
    "splice": (0.0, 0.0, 148.2, 122.9, 581.3, 78.0),
    "image": (0.004, 0.074, 18.8, 7.0, 640.9, 160.2),
    "adult": (0.0, 0.0, 125.8, 83.0, 825.9, 289.3),
    "MNIST 2's vs. 9's": (0.0, 0.0, 134.6, 108.1, 2368.5, 1828.8),
    "MNIST 1's vs. 7's": (0.0, 0.0, 68.6, 44.4, 2210.4, 2056.2),
    "MNIST 3's vs. 6's": (0.0, 0.0, 105.8, 69.0, 1935.2, 1711.7),
    "MNIST 0's vs. 8's": (0.0, 0.0, 115.5, 88.4, 2028.6, 1721.1),
    "Parkinson's speech": (0.041, 0.428, 16.1, 10.4, 416.4, 45.8),
    "bank marketing": (0.222, 0.615, 12.5, 9.4, 250.9, 51.2),
}
#: Table 6: mean seconds per model, span-rule vs K-fold CV (Xeon E5-2650 v3, one core)
TABLE6: dict[str, tuple[float, float]] = {
    "breast cancer": (0.031, 0.011),
    "mushrooms": (0.104, 0.056),
    "waveform": (0.139, 0.090),
    "banana": (0.213, 0.096),
    "skin nonskin": (0.108, 0.088),
    "splice": (7.637, 1.136),
    "image": (0.416, 0.436),
    "adult": (5.567, 0.990),
    "MNIST 2's vs. 9's": (10.423, 123.380),
    "MNIST 1's vs. 7's": (3.069, 106.304),
    "MNIST 3's vs. 6's": (5.116, 108.798),
    "MNIST 0's vs. 8's": (6.410, 130.957),
    "Parkinson's speech": (0.278, 0.167),
    "bank marketing": (0.165, 0.060),
}

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
    for label, value in zip(_T2_COLS[:4], values[:4])
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
            TABLE2.get(t, (np.nan,) * 5)[_T2_COLS.index(m)] if m in _T2_COLS else np.nan
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


# ---------------------------------------------------------------------------------------------
# Experiments
# ---------------------------------------------------------------------------------------------
#: default run profile of :func:`grid_study_tables`: task -> grid; tasks absent are "not run"
GRID_PROFILE: dict[str, dict] = {
    "breast cancer": {"step": 2.0},
    "mushrooms": {"step": 2.0},
    "waveform": {"step": 2.0},
    "banana": {"step": 2.0},
    "skin nonskin": {"step": 2.0},
    "splice": {"step": 4.0, "span_bound": False},
    "image": {"step": 2.0, "span_bound": False},
    "adult": {"step": 4.0, "span_bound": False},
    "Parkinson's speech": {"A": (1, 4, 7, 10), "B": (0.0, 0.3, 0.6, 0.9), "log2_C": (-6, 10, 2)},
    "bank marketing": {"A": (1, 4, 7, 10), "B": (0.0, 0.3, 0.6, 0.9), "log2_C": (-6, 10, 2)},
}
#: run profile of :func:`grid_study_mnist`: the MNIST pairs on 1000 training samples
MNIST_PROFILE: dict[str, dict] = {
    t: {"step": 4.0, "span_bound": False, "n_train": 1000}
    for t in ("MNIST 2's vs. 9's", "MNIST 1's vs. 7's", "MNIST 3's vs. 6's", "MNIST 0's vs. 8's")
}
#: the paper's full grids (1089 / 1700 models)
PAPER_GRID = {"step": 0.5}
#: run profile of :func:`grid_study_paper_grid`: the paper's 1089-model class-weight grid on the
#: Table 2 sets whose step-2 study took about a minute or less (about 13x that at step 0.5)
PAPER_GRID_PROFILE: dict[str, dict] = {
    t: dict(PAPER_GRID) for t in ("breast cancer", "mushrooms", "waveform")
}
PAPER_INSTANCE_GRID = {
    "A": tuple(range(1, 11)),
    "B": tuple(round(0.1 * b, 1) for b in range(10)),
    "log2_C": (-6, 10, 1),
}
_FIGURES = {"image": "Fig. 2", "adult": "Fig. 3", "bank marketing": "Fig. 4"}


def _write_md(path: Path, title: str, notes: Sequence[str], df: pd.DataFrame) -> Path:
    lines = [f"# {title}", ""] + [f"- {n}" for n in notes] + ["", markdown_table(df)]
    path.write_text("\n".join(lines))
    return path


def _grid_study_task(task: Task, spec: dict, seed: int, loader) -> dict:
    """One task of :func:`run_grid_study`: ``{"row": summary row, "models": per-model rows}``."""
    import warnings
    from dataclasses import replace

    t0 = time.perf_counter()
    if "n_train" in spec:  # a smaller training set than Table 1's
        task = replace(task, options={**task.options, "n_train": int(spec["n_train"])})
    data = X.load_paper_split(_with_test_file(task), seed, loader)
    if "A" in spec:
        grid = X.instance_weight_grid(spec["A"], spec["B"], tuple(spec["log2_C"]))
    else:
        grid = X.class_weight_grid(float(spec["step"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = X.grid_study(data, grid, span_bound=spec.get("span_bound", True), seed=seed)
    row = {
        "task": task.name,
        "status": "ok",
        "n_train": len(data.y_train),
        "n_test": len(data.y_test),
        "d": data.X_train.shape[1],
        "grid": json.dumps(spec),
        "seconds": time.perf_counter() - t0,
        "notes": data.notes,
        **X.summarise_grid(g),
    }
    return {"row": row, "models": g.to_dict("records")}


def run_grid_study(
    outdir: Path,
    seed: int,
    profile: dict[str, dict] | None = None,
    *,
    loader=None,
) -> list[Path]:
    """Tables 2-5 (and the Table 6 times of these grids) and Fig. 2-4 at Table 1 sizes.

    ``profile`` maps task names to their grid: ``{"step": s}`` (class weights, log2 step;
    the paper's 0.5 gives 1089 models) or ``{"A": .., "B": .., "log2_C": (lo, hi, step)}``
    (instance weights, Parkinson speech and bank marketing); ``"span_bound": False`` skips
    the span bound's QPs; ``"n_train"`` replaces Table 1's training size (a stratified
    subset; the test set stays Table 1's).  Tasks not in ``profile`` are listed as
    "not run".
    """
    from svmtune.bench.checkpoint import Checkpoint

    outdir = Path(outdir)
    profile = GRID_PROFILE if profile is None else profile
    # the expensive part of a task, kept as it finishes: a stopped run resumes
    ck = Checkpoint.for_experiment(outdir, "grid_study", seed=seed)
    files: list[Path] = []
    summary = []
    for task in TASKS:
        name = task.name
        if name not in profile:
            summary.append({"task": name, "status": "not run"})
            continue
        spec = profile[name]
        done = ck.get_or_run([name, spec], _grid_study_task, task, spec, seed, loader)
        row, g = done["row"], pd.DataFrame(done["models"])
        summary.append(row)
        slug = "".join(ch if ch.isalnum() else "_" for ch in name).strip("_")
        csv = outdir / f"models_{slug}.csv"
        g.to_csv(csv, index=False)
        files.append(csv)
        if name in _FIGURES or len(files) <= 3:
            fig = outdir / f"error_curves_{slug}.png"
            label = _FIGURES.get(name, "cf. Fig. 2-4")
            axes = ("A", "B", "C") if "A" in spec else ("C_pos", "C_neg")
            X.plot_error_curves(g, axes, f"{name} ({label}; {len(g)} models)", fig)
            files.append(fig)
    S = pd.DataFrame(summary)
    files.append(outdir / "summary.csv")
    S.to_csv(files[-1], index=False)

    def col(r, c):
        return r.get(c, np.nan) if r.get("status") == "ok" else np.nan

    t2, t4, t5, t6 = [], [], [], []
    for r in summary:
        name = r["task"]
        paper = TABLE2.get(name) or TABLE3.get(name)
        tab = "2" if name in TABLE2 else "3"
        t2.append(
            {
                "table": tab,
                "task": name,
                "status": r["status"],
                **{
                    f"{lab} ours": col(r, f"sel_{c}")
                    for lab, c in zip(_T2_COLS, ("span_rule", "span_bound", "cv", "xi_alpha"))
                },
                "Min. error ours": col(r, "min_error"),
                **{f"{lab} paper": v for lab, v in zip(_T2_COLS, paper)},
            }
        )
        p4 = TABLE4[name]
        t4.append(
            {
                "task": name,
                "status": r["status"],
                "Span-rule ours": col(r, "rmse_span_rule"),
                "K-fold CV ours": col(r, "rmse_cv"),
                "xi-alpha ours": col(r, "rmse_xi_alpha"),
                "Span-rule paper": p4[0],
                "K-fold CV paper": p4[1],
                "xi-alpha paper": p4[2],
            }
        )
        p5 = TABLE5[name]
        t5.append(
            {
                "task": name,
                "status": r["status"],
                "empty ours": col(r, "empty_mean"),
                "empty std ours": col(r, "empty_std"),
                "n* ours": col(r, "inbound_mean"),
                "n ours": col(r, "sv_mean"),
                "empty paper": p5[0],
                "empty std paper": p5[1],
                "n* paper": p5[2],
                "n paper": p5[4],
            }
        )
        p6 = TABLE6[name]
        t6.append(
            {
                "task": name,
                "status": r["status"],
                "span-rule s/model ours (fit+spans)": col(r, "time_span_rule"),
                "spans only ours": col(r, "time_spans"),
                "5-fold CV s/model ours": col(r, "time_cv"),
                "span-rule paper": p6[0],
                "K-fold CV paper": p6[1],
            }
        )
    notes = [
        f"seed {seed}; Table 1 training/test sizes; features scaled to [0, 1], gamma = 1/d",
        "grids: see the 'grid' column of summary.csv (paper: class weights log2 C+/C- in "
        "[-6, 10] step 0.5 = 1089 models; instance weights A=1..10, B=0..0.9, log2 C=-6..10 "
        "= 1700 models)",
        "ties of a rule's minimum resolved to the worst test error, as in the paper",
    ] + [f"{k}: {v}" for k, v in TASK_NOTES.items()]
    for title, rows, fname in (
        ("Tables 2-3: test error of the selected model", t2, "table2_3.md"),
        ("Table 4: RMSE of predicted vs. test error", t4, "table4.md"),
        ("Table 5: Lemma 1 (empty Lambda_p) and SV counts per model", t5, "table5.md"),
        ("Table 6 (grid-study part): seconds per model", t6, "table6_grid.md"),
    ):
        df = pd.DataFrame(rows)
        df.to_csv(outdir / fname.replace(".md", ".csv"), index=False)
        files += [
            outdir / fname.replace(".md", ".csv"),
            _write_md(outdir / fname, title, notes, df),
        ]
    ck.discard()
    return files


def _mnist_efficiency_row(
    task: Task, n: int, log2_C: Sequence[tuple[float, float]], seed: int, loader
) -> dict:
    """One (MNIST pair, training size) row of :func:`run_mnist_efficiency`."""
    import warnings
    from dataclasses import replace

    from svmtune.methods.span_rule import class_weight_params

    t = replace(task, options={**task.options, "n_train": int(n)})
    data = X.load_paper_split(_with_test_file(t), seed, loader)
    grid = []
    for lp, ln in log2_C:
        C, cw = class_weight_params(2.0**lp, 2.0**ln)
        grid.append({"kind": "class", "C_pos": 2.0**lp, "C_neg": 2.0**ln, "C": C, "ratio": cw[1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = X.grid_study(data, grid, span_bound=False, seed=seed)
    s = X.summarise_grid(g)
    return {
        "task": task.name,
        "n_train": int(n),
        "n_models": len(log2_C),
        "status": "ok",
        "n_test": len(data.y_test),
        "d": data.X_train.shape[1],
        "span_rule_s": s["time_span_rule"],
        "spans_only_s": s["time_spans"],
        "kernel_once_s": float(g["time_kernel"].iloc[0]),
        "cv_s": s["time_cv"],
        "ratio_span_over_cv": s["time_span_rule"] / s["time_cv"],
        "n_inbound": s["inbound_mean"],
        "n_sv": s["sv_mean"],
        "test_error_mean": float(g["test_error"].mean()),
        "paper_span_rule_s": TABLE6[task.name][0],
        "paper_cv_s": TABLE6[task.name][1],
    }


def run_mnist_efficiency(
    outdir: Path,
    seed: int,
    *,
    sizes: Sequence[int | str] = (2000,),
    log2_C: Sequence[tuple[float, float]] = ((0.0, 0.0), (4.0, 4.0), (8.0, 2.0)),
    tasks: Sequence[str] | None = None,
    loader=None,
) -> list[Path]:
    """Table 6 on the MNIST pairs: seconds per model, span-rule (fit + spans) vs 5-fold CV.

    Trains the class-weight models ``(log2 C+, log2 C-)`` in ``log2_C`` on stratified
    training subsets of each size in ``sizes`` (``"full"``: the Table 1 size, ~12000, as in
    the paper; when it is not in ``sizes`` it is listed as not run), with the paper's
    ``gamma = 1/d``.
    """
    from svmtune.bench.checkpoint import Checkpoint

    outdir = Path(outdir)
    names = [t.name for t in TASKS if t.name.startswith("MNIST")] if tasks is None else list(tasks)
    ck = Checkpoint.for_experiment(outdir, "mnist_efficiency", log2_C=log2_C, seed=seed)
    rows = []
    for task in TASKS:
        if task.name not in names:
            continue
        full = int(task.options["n_train"])
        run = [full if n == "full" else int(n) for n in sizes]
        for n in dict.fromkeys(run + [full]):
            if n not in run:
                rows.append(
                    {
                        "task": task.name,
                        "n_train": int(n),
                        "n_models": len(log2_C),
                        "status": "not run (Table 1 size)",
                    }
                )
                continue
            rows.append(
                ck.get_or_run(
                    [task.name, int(n)], _mnist_efficiency_row, task, int(n), log2_C, seed, loader
                )
            )
    df = pd.DataFrame(rows)
    csv = outdir / "table6_mnist.csv"
    df.to_csv(csv, index=False)
    md = _write_md(
        outdir / "table6_mnist.md",
        "Table 6 on the MNIST pairs: seconds per model (one core)",
        [
            f"seed {seed}; models (log2 C+, log2 C-) = {list(log2_C)}; "
            "gamma = 1/d on [0, 1] pixels",
            "span-rule = libsvm fit on the precomputed kernel + closed-form spans + t_l; the "
            "kernel matrix is computed once per grid (kernel_once_s, not in span_rule_s); "
            "CV = 5 libsvm fits computing the kernel from X; CPU seconds (process_time)",
            "paper: full training sets (~12000), Xeon E5-2650 v3, MOSEK QPs for the spans",
        ],
        df,
    )
    ck.discard()
    return [csv, md]


def run_ringnorm_scaling(
    outdir: Path,
    seed: int,
    *,
    sizes: Sequence[int] = tuple(2**k for k in range(7, 15)),
    dims: Sequence[int] = (20, 40, 80),
    run_sizes: Sequence[int] = (2**7, 2**8, 2**9),
    step: float = 4.0,
) -> list[Path]:
    """Section 6.7, Fig. 5-6: seconds per model and SV counts vs ``l`` on ringnorm.

    ``sizes`` x ``dims`` is the paper's design; only ``run_sizes`` are computed (the rest
    are rows with status "not run"); ``step`` is the log2 step of the ``C+ / C-`` grid (the
    paper: 0.5, 1089 models per point).
    """
    from svmtune.bench.checkpoint import Checkpoint

    outdir = Path(outdir)
    grid = X.class_weight_grid(step)
    ck = Checkpoint.for_experiment(outdir, "ringnorm_scaling", step=step, seed=seed)
    df = X.ringnorm_study(sizes, dims, run_sizes=run_sizes, grid=grid, seed=seed, checkpoint=ck)
    csv = outdir / "ringnorm_scaling.csv"
    df.to_csv(csv, index=False)
    pngs = X.plot_ringnorm(
        df, outdir / "fig5_time_per_model.png", outdir / "fig6_support_vectors.png"
    )
    md = _write_md(
        outdir / "ringnorm_scaling.md",
        "Fig. 5-6: ringnorm scaling (span-rule vs 5-fold CV)",
        [
            f"seed {seed}; grid log2 C+/C- in [-6, 10] step {step} ({len(grid)} models per point; "
            "paper: step 0.5, 1089)",
            "priors 0.3 / 0.7; N(1, I) vs N(0, 4I); features scaled to [0, 1], gamma = 1/d",
        ],
        df,
    )
    ck.discard()
    return [csv, md, *pngs]


def grid_study_tables(outdir: Path, seed: int) -> list[Path]:
    """Experiment: Tables 2-5, Fig. 2-4 at Table 1 sizes, :data:`GRID_PROFILE` run profile."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return run_grid_study(outdir, seed)


def grid_study_paper_grid(outdir: Path, seed: int) -> list[Path]:
    """Experiment: Tables 2, 4-6 with the paper's full 1089-model grid (log2 step 0.5) on the
    sets of :data:`PAPER_GRID_PROFILE`, at Table 1 sizes."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return run_grid_study(outdir, seed, PAPER_GRID_PROFILE)


def grid_study_mnist(outdir: Path, seed: int) -> list[Path]:
    """Experiment: Tables 2, 4-6 on the MNIST pairs, 1000 training samples, 25 models."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return run_grid_study(outdir, seed, MNIST_PROFILE)


def mnist_efficiency(outdir: Path, seed: int) -> list[Path]:
    """Experiment: Table 6 on the MNIST pairs at 2000 and at the Table 1 training sizes."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return run_mnist_efficiency(outdir, seed, sizes=(2000, "full"))


def ringnorm_scaling(outdir: Path, seed: int) -> list[Path]:
    """Experiment: Fig. 5-6 (l = 2^7..2^12 run; 2^13 and 2^14, about 10 and 35 CPU minutes
    per dimension on this machine's cores, not run)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return run_ringnorm_scaling(outdir, seed, run_sizes=tuple(2**k for k in range(7, 13)))


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
