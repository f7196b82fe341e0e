"""Experiments of the ``span-paper`` suite at the paper's Table 1 sizes (Sarafis, Diou &
Delopoulos, Weighted span, JMLR): Tables 2-6 and Fig. 2-6 (see ``span_paper.py``).
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from svmtune.bench.checkpoint import Checkpoint
from svmtune.bench.markdown import markdown_table
from svmtune.bench.suite import Task

from . import _span_experiments as X
from ._span_tables import (
    T2_COLS,
    TABLE2,
    TABLE3,
    TABLE4,
    TABLE5,
    TABLE6,
    TASK_NOTES,
    TASKS,
    with_test_file,
)

__all__ = [
    "GRID_PROFILE",
    "MNIST_PROFILE",
    "PAPER_GRID",
    "PAPER_GRID_PROFILE",
    "PAPER_INSTANCE_GRID",
    "run_grid_study",
    "run_mnist_efficiency",
    "run_ringnorm_scaling",
    "grid_study_tables",
    "grid_study_paper_grid",
    "grid_study_mnist",
    "mnist_efficiency",
    "ringnorm_scaling",
]

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
    t0 = time.perf_counter()
    if "n_train" in spec:  # a smaller training set than Table 1's
        task = replace(task, options={**task.options, "n_train": int(spec["n_train"])})
    data = X.load_paper_split(with_test_file(task), seed, loader)
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


def _col(r: dict, c: str):
    return r.get(c, np.nan) if r.get("status") == "ok" else np.nan


def _table_rows(summary: list[dict]) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """Rows of Tables 2-3, 4, 5 and 6 (ours beside the paper's) from the grid study's
    per-task summary rows."""
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
                    f"{lab} ours": _col(r, f"sel_{c}")
                    for lab, c in zip(T2_COLS, ("span_rule", "span_bound", "cv", "xi_alpha"))
                },
                "Min. error ours": _col(r, "min_error"),
                **{f"{lab} paper": v for lab, v in zip(T2_COLS, paper)},
            }
        )
        p4 = TABLE4[name]
        t4.append(
            {
                "task": name,
                "status": r["status"],
                "Span-rule ours": _col(r, "rmse_span_rule"),
                "K-fold CV ours": _col(r, "rmse_cv"),
                "xi-alpha ours": _col(r, "rmse_xi_alpha"),
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
                "empty ours": _col(r, "empty_mean"),
                "empty std ours": _col(r, "empty_std"),
                "n* ours": _col(r, "inbound_mean"),
                "n ours": _col(r, "sv_mean"),
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
                "span-rule s/model ours (fit+spans)": _col(r, "time_span_rule"),
                "spans only ours": _col(r, "time_spans"),
                "5-fold CV s/model ours": _col(r, "time_cv"),
                "span-rule paper": p6[0],
                "K-fold CV paper": p6[1],
            }
        )
    return t2, t4, t5, t6


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

    t2, t4, t5, t6 = _table_rows(summary)
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
    from svmtune.methods.span_rule import class_weight_params

    t = replace(task, options={**task.options, "n_train": int(n)})
    data = X.load_paper_split(with_test_file(t), seed, loader)
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
