"""Reports from result files: one self-contained HTML page and/or a markdown file.

Everything in a report is computed from the result rows (``*.jsonl`` under the results
directory); the suite definitions (``svmtune.bench.suite.SUITES``) contribute only what is
not a result: the list of (task, method) cells a suite defines (so those without any row are
marked "not run"), the papers' published numbers printed beside ours, and the suite's figure
callables, which draw from the result rows and from the files the suite's stored experiments
wrote.

Per suite the report shows, for every task, each method's accuracy (mean +- std over
splits) and its accuracy and selection cost relative to the 10-fold grid search and to one
``SVC()`` fit with scikit-learn's defaults measured on the same split; overview tables over
tasks; paired Wilcoxon signed-rank tests against both yardsticks (RBSVM Table IV
conventions, see :mod:`svmtune.bench.stats`); the published numbers next to ours; a cost vs
accuracy figure plus the suite's own figures; the experiments that ran; the errors.  The
report opens with a summary of every suite's methods against both yardsticks
(:func:`summary_table`), and a last section shows the large-n benchmark from
``<results>/scaling`` (:func:`scaling_section`).
"""

from __future__ import annotations

import base64
import hashlib
import html as htmlmod
import inspect
import json
import math
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from svmtune.bench import stats
from svmtune.bench.store import load_results
from svmtune.bench.suite import Suite, get_suite

__all__ = [
    "Table",
    "Figure",
    "Section",
    "build_report",
    "render_markdown",
    "render_html",
    "PUBLISHED_METRICS",
    "cost_accuracy_figure",
    "scaling_section",
    "summary_table",
]

#: published metric -> (result column, aggregate, scale to the paper's unit)
PUBLISHED_METRICS: dict[str, tuple[str, str, float]] = {
    "accuracy": ("accuracy", "mean", 100.0),
    "accuracy_std": ("accuracy", "std", 100.0),
    "f1": ("f1", "mean", 100.0),
    "error": ("accuracy", "error", 100.0),
    "log_loss": ("log_loss", "mean", 1.0),
    "brier": ("brier", "mean", 1.0),
    "entropy": ("entropy", "mean", 1.0),
    "time": ("selection_time", "mean", 1.0),
    "n_svm_fits": ("n_svm_fits", "mean", 1.0),
}

NOT_RUN = "not run"


# ----------------------------------------------------------------------------- model
@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Figure:
    title: str
    path: Path


@dataclass
class Section:
    title: str
    text: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    #: non-PNG outputs of a suite's figure callables: (file name, its text)
    files: list[tuple[str, str]] = field(default_factory=list)
    #: a suite's table in the report's opening summary (:func:`summary_table`), not rendered
    #: in the section itself
    summary: Table | None = None


# ----------------------------------------------------------------------------- formatting
def _isnum(v: Any) -> bool:
    return (
        v is not None and isinstance(v, (int, float, np.floating, np.integer)) and math.isfinite(v)
    )


def _pct(v, digits: int = 2) -> str:
    return f"{100 * v:.{digits}f}" if _isnum(v) else "—"


def _read_note(read) -> str:
    """How a ``--data`` file was read (a row's ``data_read``), for the task's caption."""
    if not isinstance(read, dict):
        return ""
    parts = [f"label {read['target']!r}"] if "target" in read else []
    parts += [f"format {read['format']}"] if "format" in read else []
    if read.get("drop"):
        parts.append("without " + ", ".join(repr(c) for c in read["drop"]))
    if read.get("groups"):
        parts.append(f"groups {read['groups']!r}")
    return f": {'; '.join(parts)}" if parts else ""


def _num(v, digits: int = 3) -> str:
    if not _isnum(v):
        return "—"
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 10**-digits):
        return f"{v:.{digits}g}"
    return f"{v:.{digits}f}"


def _ratio(v) -> str:
    if not _isnum(v):
        return "—"
    return f"×{v:.3g}"


def _signed_pp(v) -> str:
    if not _isnum(v):
        return "—"
    return f"{0.0 if abs(v) < 5e-7 else 100 * v:+.2f}"  # no "-0.00" from float noise


def _pm(values: pd.Series, fmt: Callable[[Any], str]) -> str:
    """``mean ± std`` (sample std over splits; 0 for a single split) of a column."""
    v = values.dropna()
    if v.empty:
        return "—"
    return f"{fmt(v.mean())} ± {fmt(v.std(ddof=1) if len(v) > 1 else 0.0)}"


def _pval(p) -> str:
    if not _isnum(p):
        return "—"
    return f"{p:.5f}" if p >= 1e-5 else f"{p:.2e}"


# ----------------------------------------------------------------------------- figures
def cost_accuracy_figure(
    df: pd.DataFrame, outdir: Path, yardsticks: dict[str, str], name: str = "cost_accuracy"
) -> list[Path]:
    """Mean accuracy difference to the grid search (or to SVC() without a grid method)
    against the selection-time ratio, one point per method, averaged over tasks."""
    from matplotlib.figure import Figure as MplFigure

    rel = stats.relative_table(df, yardsticks)
    if rel.empty:
        return []
    use_grid = rel["d_acc_grid"].notna().any()
    dcol, tcol = (
        ("d_acc_grid", "time_ratio_grid") if use_grid else ("d_acc_default", "time_ratio_default")
    )
    agg = (
        rel.groupby("method", sort=False)
        .agg(
            d=(dcol, "mean"), t=(tcol, lambda s: float(np.exp(np.log(s.clip(lower=1e-12)).mean())))
        )
        .dropna()
    )
    if agg.empty:
        return []
    fig = MplFigure(figsize=(7, 4.5), dpi=110)
    ax = fig.subplots()
    ax.scatter(agg["t"], 100 * agg["d"], s=30, color="tab:blue")
    for m, r in agg.iterrows():
        ax.annotate(
            str(m), (r["t"], 100 * r["d"]), fontsize=7, xytext=(3, 3), textcoords="offset points"
        )
    ax.set_xscale("log")
    ax.axhline(0.0, color="grey", lw=0.8)
    ref = f"grid search ({yardsticks['grid']})" if use_grid else "SVC() defaults"
    ax.set_xlabel(
        "selection time / "
        + ("grid-search selection time" if use_grid else "one SVC() fit")
        + " (geometric mean over tasks)"
    )
    ax.set_ylabel(f"accuracy − {ref} (pp, mean over tasks)")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    path = Path(outdir) / f"{name}.png"
    fig.savefig(path)
    return [path]


def _run_figure(
    fn: Callable, df: pd.DataFrame, outdir: Path, experiment_files: dict[str, list[Path]]
) -> tuple[list[Path], str | None]:
    """Call a suite figure ``fn(results, outdir)``; one that declares a keyword
    ``experiment_files`` also gets the files of the suite's stored experiments (name -> paths),
    so that it can draw what an experiment computed instead of recomputing it."""
    kwargs = {}
    if "experiment_files" in inspect.signature(fn).parameters:
        kwargs["experiment_files"] = experiment_files
    try:
        return [Path(p) for p in (fn(df, outdir, **kwargs) or [])], None
    except Exception as exc:
        return [], f"figure {getattr(fn, '__name__', fn)!r} failed: {type(exc).__name__}: {exc}"


# ----------------------------------------------------------------------------- sections
def _cell_status(
    df: pd.DataFrame, task: str, method: str, n_expected: int | None, *, short: bool = True
) -> str | None:
    """None if the cell has successful rows for every expected split, else a status:
    "not run", "error" (the message unless ``short``) or "k/n splits"."""
    sub = df[(df["task"] == task) & (df["method"] == method)]
    if sub.empty:
        return NOT_RUN
    n_ok = int((sub["status"] == "ok").sum())
    if n_ok == 0:
        if short:
            return "error"
        msg = str(sub["status"].iloc[-1])
        return msg if len(msg) <= 120 else msg[:117] + "..."
    if n_expected is not None and n_ok < n_expected:
        return f"{n_ok}/{n_expected} splits"
    return None


_WILCOXON_FIELDS = ("r_plus", "r_minus", "z", "p")


def _wilcoxon_metric(p: dict) -> tuple[str, str] | None:
    """``(metric, field)`` of a published ``wilcoxon_<metric>_<field>`` entry with a reference."""
    name = p["metric"]
    if not name.startswith("wilcoxon_") or "reference" not in p:
        return None
    for f in _WILCOXON_FIELDS:
        if name.endswith("_" + f):
            return name[len("wilcoxon_") : -len(f) - 1], f
    return None


def _ours_published(df: pd.DataFrame, p: dict) -> float | None:
    """Our value of one published entry (a per-task aggregate or a Wilcoxon statistic)."""
    wm = _wilcoxon_metric(p)
    if wm is None:
        return _ours(df, p["task"], p["method"], p["metric"], p.get("unit"))
    metric, f = wm
    _, w = stats.reference_test(df, metric, p["reference"], p["method"])
    return None if w is None else float(getattr(w, f))


def _ours(df: pd.DataFrame, task: str, method: str, metric: str, unit: str | None) -> float | None:
    col, agg, scale = PUBLISHED_METRICS[metric]
    if unit == "fraction":
        scale = 1.0
    sub = df[(df["task"] == task) & (df["method"] == method) & (df["status"] == "ok")][col]
    sub = sub.dropna()
    if sub.empty:
        return None
    if agg == "mean":
        v = sub.mean()
    elif agg == "std":
        v = sub.std(ddof=1) if len(sub) > 1 else 0.0
    else:
        v = 1.0 - sub.mean()
    return float(v) * scale


def _published_lookup(suite: Suite | None) -> dict[tuple[str, str, str], dict]:
    if suite is None:
        return {}
    return {(p["task"], p["method"], p["metric"]): p for p in suite.published}


def _suite_section(
    name: str,
    df: pd.DataFrame,
    suite: Suite | None,
    files: list[Path],
    workdir: Path,
    experiment_files: dict[str, list[Path]] | None = None,
    draw: bool = True,
) -> Section:
    sec = Section(title=f"Suite `{name}`")
    if suite is not None:
        sec.text.append(suite.description)
        p = suite.protocol
        sizes = ", ".join(
            f"{k} {v}" for k, v in (("train", p.train_size), ("test", p.test_size)) if v
        )
        proto = {
            "kfold": f"{p.n_splits}-fold stratified CV x {p.n_repeats}",
            "split": f"{p.n_repeats} stratified random splits ({sizes})",
            "train_test": "fixed train/test files",
        }[p.kind]
        sec.text.append(f"Protocol: {proto}; seed {suite.seed}.")
        tasks = [t.name for t in suite.tasks]
        methods = [m.label for m in suite.methods]
        yard = suite.yardstick_labels()
        n_expected: int | None = p.n_splits_per_task
    else:
        sec.text.append(
            f"(No suite definition named {name!r} is registered: cells are taken from the rows.)"
        )
        tasks = list(dict.fromkeys(df["task"]))
        methods = list(dict.fromkeys(df["method"]))
        yard = {}
        names = df.drop_duplicates("method").set_index("method")["method_name"]
        grids = [m for m, mn in names.items() if mn == "grid"]
        if grids:
            yard["grid"] = grids[0]
        yard["default"] = "SVC()"
        n_expected = None
    # tasks/methods that appear only in the rows (e.g. renamed since) are shown too
    tasks += [t for t in dict.fromkeys(df["task"]) if t not in tasks]
    methods += [m for m in dict.fromkeys(df["method"]) if m not in methods]
    # rows in suite order, whatever order parallel workers finished in
    order = {"task": tasks, "method": methods}
    df = df.sort_values(
        ["task", "method", "split"],
        key=lambda s: s.map({v: i for i, v in enumerate(order[s.name])}) if s.name in order else s,
        kind="stable",
    ).reset_index(drop=True)
    yard.setdefault("default", "SVC()")

    n_ok = int((df["status"] == "ok").sum())
    sec.text.append(
        f"{len(df)} result rows ({n_ok} ok, {len(df) - n_ok} errors) from "
        + ", ".join(f"`{f.name}` (sha256 {d[:12]})" for f, d in _digests(files))
        + "."
    )
    env = _environment_summary(df)
    if env:
        sec.text.append(env)
    grid = yard.get("grid")
    sec.text.append(
        "Yardsticks: "
        + (f"grid search = `{grid}`" if grid else "no 10-fold grid search in this suite")
        + "; SVC() = one scikit-learn `SVC()` (gamma='scale', C=1) fitted on the same "
        "preprocessed training part of every cell (fit time: fastest of 3; a method whose "
        "selection plus final fit took under 1 s is timed the same way, rows with "
        "timing_repeats = 3, while older rows without it were timed once; in rows with "
        "jit_warmed_up svmtune's compiled (numba) loops were loaded before the clocks, "
        "while in older rows a process's first data-criterion cell, if it took over 1 s, "
        "may include that one-time load of a second or so). Accuracies in "
        "%, Δ in percentage points (mean over shared splits); '×' = mean selection time "
        "relative to the grid search's mean selection time on the task / to the mean SVC() "
        "fit time on the same splits."
    )
    published = _published_lookup(suite)
    rel = stats.relative_table(df, yard)
    rel_idx = rel.set_index(["task", "method"]) if not rel.empty else None
    ok = df[df["status"] == "ok"]

    # ---- overview: accuracy per task and method
    acc_rows = []
    for m in methods:
        row = [m]
        vals = []
        for t in tasks:
            st = _cell_status(df, t, m, n_expected)
            if rel_idx is not None and (t, m) in rel_idx.index:
                v = rel_idx.loc[(t, m), "accuracy_mean"]
                vals.append(v)
                row.append(_pct(v) + (f" ({st})" if st else ""))
            else:
                row.append(st or NOT_RUN)
        row.append(_pct(np.mean(vals)) if len(vals) == len(tasks) and vals else "—")
        acc_rows.append(row)
    sec.tables.append(
        Table(
            "Test accuracy (%) by task and method (mean over splits)",
            ["method", *tasks, "mean"],
            acc_rows,
            "Cells marked 'not run' have no result row; 'k/n splits' ran partly.",
        )
    )

    # ---- overview: cost relative to grid and to SVC()
    for col, title in (
        ("d_acc_grid", "Accuracy − grid search (pp)"),
        ("time_ratio_grid", "Selection time ÷ grid-search selection time"),
        ("d_acc_default", "Accuracy − SVC() defaults (pp), same splits"),
        ("time_ratio_default", "Selection time ÷ one SVC() fit, same splits"),
    ):
        if col.endswith("grid") and not grid:
            continue
        fmt = _signed_pp if col.startswith("d_acc") else _ratio
        rows = []
        for m in methods:
            row = [m]
            for t in tasks:
                if rel_idx is not None and (t, m) in rel_idx.index:
                    row.append(fmt(rel_idx.loc[(t, m), col]))
                else:
                    row.append(_cell_status(df, t, m, n_expected) or NOT_RUN)
            rows.append(row)
        sec.tables.append(Table(title, ["method", *tasks], rows))

    # ---- per task detail
    for t in tasks:
        rows = []
        for m in methods:
            st = _cell_status(df, t, m, n_expected, short=False)
            pub = published.get((t, m, "accuracy"))
            paper = _num(pub["value"], 2) if pub else ""
            if rel_idx is None or (t, m) not in rel_idx.index:
                rows.append([m, "0", st or NOT_RUN, paper] + ["—"] * 9)
                continue
            r = rel_idx.loc[(t, m)]
            sub = ok[(ok["task"] == t) & (ok["method"] == m)]
            rows.append(
                [
                    m,
                    str(int(r["n"])) + (f" ({st})" if st else ""),
                    f"{_pct(r['accuracy_mean'])} ± {_pct(r['accuracy_std'])}",
                    paper,
                    _pm(sub["f1"], _pct),
                    _num(sub["log_loss"].mean()),
                    _num(sub["entropy"].mean()),
                    _signed_pp(r["d_acc_grid"]),
                    _signed_pp(r["d_acc_default"]),
                    _pm(sub["selection_time"], _num),
                    _ratio(r["time_ratio_grid"]),
                    _ratio(r["time_ratio_default"]),
                    _pm(sub["n_svm_fits"], lambda v: _num(v, 1)),
                ]
            )
        dsub = df[df["task"] == t]
        ds = (
            ", ".join(
                f"{a} ({str(v)[:12]}){r}"
                for a, v, r in dsub.reindex(columns=["dataset", "dataset_version", "data_read"])
                .assign(data_read=lambda d: d["data_read"].map(_read_note))
                .drop_duplicates()
                .itertuples(index=False)
            )
            if "dataset_version" in dsub
            else ""
        )
        sec.tables.append(
            Table(
                f"Task `{t}`",
                [
                    "method",
                    "splits",
                    "accuracy %",
                    "paper",
                    "F1 %",
                    "log-loss",
                    "entropy",
                    "Δ grid",
                    "Δ SVC()",
                    "sel. time s",
                    "× grid",
                    "× SVC() fit",
                    "SVM fits",
                ],
                rows,
                f"data: {ds}" if ds else "",
            )
        )

    # ---- Wilcoxon tests over tasks
    tests = stats.paired_tests(df, yard, "accuracy")
    sec.summary = summary_table(name, methods, tasks, rel, tests, grid)
    if not tests.empty:
        rows = [
            [
                r["method"],
                r["reference"],
                str(r["n_tasks"]),
                f"{r['wins']}/{r['n_zero']}/{r['losses']}",
                _signed_pp(r["mean_diff"]),
                _num(r["r_plus"], 1),
                _num(r["r_minus"], 1),
                f"{r['z']:.3f}",
                _pval(r["p"]),
            ]
            for _, r in tests.iterrows()
        ]
        sec.tables.append(
            Table(
                "Paired Wilcoxon signed-rank tests over tasks (accuracy)",
                ["method", "reference", "tasks", "win/tie/loss", "mean Δ pp", "R+", "R−", "z", "p"],
                rows,
                "One pair per task (mean over splits); zero differences dropped; z from the "
                "normal approximation on min(R+, R−), tie-corrected, two-sided p "
                "(RBSVM Table IV convention).",
            )
        )

    # ---- published numbers beside ours
    if suite is not None and suite.published:
        rows = []
        for p in suite.published:
            metric = p["metric"]
            known = metric in PUBLISHED_METRICS or _wilcoxon_metric(p) is not None
            mine = _ours_published(df, p) if known else None
            st = _cell_status(df, p["task"], p["method"], n_expected)
            rows.append(
                [
                    str(p.get("table", "")),
                    p["task"],
                    p["method"],
                    metric,
                    _num(p["value"], 3),
                    _num(mine, 3)
                    if mine is not None
                    else (st or NOT_RUN)
                    if known
                    else "unknown metric",
                    _num(mine - p["value"], 3) if mine is not None else "—",
                ]
            )
        sec.tables.append(
            Table(
                "Published numbers beside ours",
                ["paper table", "task", "method", "metric", "paper", "ours", "ours − paper"],
                rows,
                "Accuracy-type metrics in percent as the papers print them.  Wilcoxon "
                "entries (wilcoxon_<metric>_<statistic>) test the entry's reference against "
                "the method over the tasks both ran: R+ sums the ranks where the reference is "
                "larger.",
            )
        )

    # ---- errors
    bad = df[df["status"] != "ok"]
    if not bad.empty:
        rows = [
            [
                m,
                str(len(g)),
                "; ".join(dict.fromkeys(g["status"].fillna("(no status)").astype(str)))[:300],
            ]
            for m, g in bad.groupby("method", sort=False)
        ]
        sec.tables.append(Table("Cells that failed", ["method", "rows", "status"], rows))

    # ---- figures
    if not draw:
        return sec
    figdir = workdir / _slug(name)
    figdir.mkdir(parents=True, exist_ok=True)
    for path in cost_accuracy_figure(df, figdir, yard):
        sec.figures.append(Figure("Accuracy vs selection cost relative to the yardsticks", path))
    if suite is not None:
        for fn in suite.figures:
            paths, err = _run_figure(fn, df.copy(), figdir, experiment_files or {})
            if err:
                sec.text.append(err)
            for pth in paths:
                if pth.suffix.lower() == ".png":
                    sec.figures.append(Figure(pth.stem.replace("_", " "), pth))
                else:
                    # read now: the figure folder is temporary
                    sec.files.append((pth.name, pth.read_text(errors="replace")))
    return sec


SUMMARY_TITLE = "Summary: every method against the two yardsticks"


def summary_table(
    name: str,
    methods: list[str],
    tasks: list[str],
    rel: pd.DataFrame,
    tests: pd.DataFrame,
    grid: str | None,
) -> Table | None:
    """One suite's table in the report's opening summary.

    Per method: the tasks it ran, its accuracy against ``SVC()`` and against the grid search
    (mean difference over the tasks both ran, and win/tie/loss, from
    :func:`svmtune.bench.stats.paired_tests`) and the median over tasks of its selection time
    relative to one ``SVC()`` fit and to the grid search's selection.

    Parameters
    ----------
    name : str
        The suite.
    methods, tasks : list of str
        Method labels in the order to show, and the suite's tasks.
    rel : DataFrame
        :func:`svmtune.bench.stats.relative_table` of the suite's rows.
    tests : DataFrame
        :func:`svmtune.bench.stats.paired_tests` of the same rows (accuracy).
    grid : str or None
        The grid-search yardstick's label; None drops the grid columns.

    Returns
    -------
    Table or None
        None when no cell succeeded.
    """
    if rel.empty:
        return None
    by = rel.groupby("method", sort=False)
    ref = {"SVC() defaults": "default", f"grid: {grid}": "grid"}
    vs: dict[tuple[str, str], Any] = {}
    for _, r in tests.iterrows():
        if r["reference"] in ref:
            vs[(r["method"], ref[r["reference"]])] = r

    def versus(m: str, which: str) -> list[str]:
        r = vs.get((m, which))
        if r is None:
            return ["—", "—"]
        return [_signed_pp(r["mean_diff"]), f"{r['wins']}/{r['n_zero']}/{r['losses']}"]

    rows = []
    for m in methods:
        if m not in by.groups:
            continue
        g = by.get_group(m)
        rows.append(
            [
                m,
                f"{len(g)}/{len(tasks)}",
                *versus(m, "default"),
                *(versus(m, "grid") if grid else []),
                _ratio(g["time_ratio_default"].median()),
                *([_ratio(g["time_ratio_grid"].median())] if grid else []),
            ]
        )
    cols = ["method", "tasks", "Δ SVC() pp", "w/t/l vs SVC()"]
    if grid:
        cols += ["Δ grid pp", "w/t/l vs grid"]
    cols += ["× SVC() fit"] + (["× grid"] if grid else [])
    note = "" if grid else "No 10-fold grid search in this suite."
    return Table(f"Suite `{name}`", cols, rows, note)


def _summary_section(sections: list[Section]) -> Section | None:
    """The report's opening section: the summary tables of every suite section."""
    tables = [s.summary for s in sections if s.summary is not None]
    if not tables:
        return None
    return Section(
        SUMMARY_TITLE,
        [
            "Per suite, every method's test accuracy against the two yardsticks: one "
            "scikit-learn `SVC()` fitted on the same training part ('SVC()') and the "
            "suite's 10-fold grid search on the same splits ('grid'). Δ is the mean over the "
            "tasks both ran of the method's mean accuracy minus the yardstick's (percentage "
            "points); w/t/l counts the tasks where it is higher / equal / lower. '× SVC() "
            "fit' and '× grid' are the median over those tasks of the method's mean "
            "selection time divided by the mean time of one SVC() fit, and by the grid "
            "search's mean selection time. Suites differ in tasks, protocol and method "
            "options (their sections say which), so compare methods within a suite.",
        ],
        tables,
    )


def _experiment_files(exp: pd.DataFrame) -> dict[str, list[Path]]:
    """Files of the suite's successful experiment rows, by experiment name (paths resolved
    against the directory of the result file that holds the row)."""
    out: dict[str, list[Path]] = {}
    if exp.empty or "_file" not in exp:
        return out
    for _, r in exp[exp["status"] == "ok"].iterrows():
        base = Path(r["_file"]).parent
        out[str(r["experiment"])] = [base / f for f in (r.get("files") or [])]
    return out


def _experiments_section(name: str, exp: pd.DataFrame, suite: Suite | None) -> Section | None:
    names = [getattr(f, "__name__", repr(f)) for f in (suite.experiments if suite else [])]
    if exp.empty and not names:
        return None
    sec = Section(title=f"Experiments of suite `{name}`")
    rows = []
    seen = set()
    for _, r in exp.iterrows():
        seen.add(r["experiment"])
        files = r.get("files") or []
        rows.append(
            [
                str(r["experiment"]),
                str(r["status"]),
                _num(r.get("time")),
                ", ".join(map(str, files)),
            ]
        )
    for n in names:
        if n not in seen:
            rows.append([n, NOT_RUN, "—", ""])
    sec.tables.append(Table("Experiments", ["experiment", "status", "time s", "files"], rows))
    return sec


def _scaling_options(cell: dict) -> str:
    """The options of a scaling cell that differ from the defaults, as text ("—" if none)."""
    opts = []
    box = cell.get("log2_C_box")
    if box and tuple(float(v) for v in box) != (-8.0, 8.0):
        opts.append(f"log2 C in [{box[0]:g}, {box[1]:g}]")
    if cell.get("nonsupport", "model") != "model":
        opts.append(f"nonsupport={cell['nonsupport']}")
    return ", ".join(opts) or "—"


def scaling_section(directory: Path) -> Section | None:
    """The large-n benchmark (issue #10) from ``benchmarks/scaling.py``'s result files.

    Reads ``<directory>/<dataset>_n<n>_<method><tag>.json`` (one per cell) and the
    ``probe_*.jsonl`` lines of ``benchmarks/lowrank_probe.py`` and the ``shift_*.json`` files
    of ``benchmarks/shift_probe.py``; shows ``scaling.png`` if present.  None when the
    directory holds no cell file.
    """
    directory = Path(directory)
    cells = [json.loads(f.read_text()) for f in sorted(directory.glob("*_n*_*.json"))]
    if not cells:
        return None
    sec = Section(
        title="Scaling (issue #10): selection time, peak memory and test accuracy against n",
        text=[
            f"From `{directory}` (`benchmarks/scaling.py`, one process per cell, one BLAS "
            "thread). 'sel. s' is wall time, 'CPU s' its process CPU time, 'peak MB' the "
            "cell's peak resident memory after selection; the test accuracy is libsvm's `SVC` "
            "refitted with the chosen (sigma, C) (the official test file for ijcnn1). "
            "Extrapolated grid times are marked. The data-criterion cells (esdr, dbtc, j4, "
            "ld) choose the width only and fix C = 1 (their own C search is a CV grid); "
            "'_sub' cells use a random subsample of the pairs. The data-criterion cells, "
            "and the ss cells up to its exact-path size, load svmtune's compiled (numba) "
            "loops before the clock starts; numba and those loops count in their 'peak MB', "
            "as they would in a user's process. For "
            "the low-rank gradient methods 'rank' is the final number of landmarks and "
            "'re-chosen' how often the "
            "landmarks were re-chosen as the search moved. A suffix after a method's name "
            "marks a variant run (`--tag`); 'options' lists the options recorded in its cell "
            "file that differ from the defaults (log2 C box, `nonsupport`).",
        ],
    )
    cells.sort(key=lambda r: (r["dataset"], r["method"], r.get("tag", ""), r["n"]))
    rows = []
    for r in cells:
        params = r.get("params") or {}
        info = r.get("info") or {}
        rows.append(
            [
                str(r["dataset"]),
                str(r["n"]),
                f"{r['method']}{r.get('tag', '')}",
                _num(r.get("selection_time_s"))
                + (" (extrapolated)" if r.get("extrapolated") else ""),
                _num(r.get("selection_cpu_s")),
                _num(r.get("peak_rss_selection_mb", r.get("peak_rss_mb"))),
                _num(r.get("test_accuracy"), 4),
                _num(params.get("sigma"), 3),
                _num(params.get("C"), 3),
                str(info.get("rank", "—")),
                str(info.get("n_refresh", "—")),
                _scaling_options(r),
            ]
        )
    sec.tables.append(
        Table(
            "Cells",
            [
                "data",
                "n",
                "method",
                "sel. s",
                "CPU s",
                "peak MB",
                "test acc.",
                "sigma",
                "C",
                "rank",
                "re-chosen",
                "options",
            ],
            rows,
        )
    )
    probes = []
    for f in sorted(directory.glob("probe_*.jsonl")):
        probes += [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    if probes:
        sec.tables.append(
            Table(
                "Criterion probes (`benchmarks/lowrank_probe.py`)",
                [
                    "data",
                    "n",
                    "sigma",
                    "C",
                    "rank",
                    "residual",
                    "J/n",
                    "LOO err.",
                    "exact J/n",
                    "exact LOO err.",
                    "test acc.",
                ],
                [
                    [
                        str(r["dataset"]),
                        str(r["n"]),
                        _num(r["sigma"], 3),
                        _num(r["C"], 3),
                        str(r["rank"]),
                        _num(r["rank_residual"], 4),
                        _num(r["J_over_n"], 4),
                        _num(r["loo_error"], 4),
                        _num(r.get("exact_J_over_n"), 4),
                        _num(r.get("exact_loo_error"), 4),
                        _num(r.get("test_accuracy"), 4),
                    ]
                    for r in probes
                ],
                note="RBSVM criterion J / n (eq. (33)) and the closed-form LOO error of the "
                "low-rank L2-SVM, landmarks re-chosen at each point's width (rank and trace "
                "residual / n shown); 'exact' = the same on the n x n kernel matrix; test "
                "accuracy of libsvm's SVC refitted at the point.",
            )
        )
    sec.tables += _shift_tables(directory)
    sec.tables += _blocked_tables(directory)
    png = directory / "scaling.png"
    if png.is_file():
        sec.figures.append(Figure("Selection time and peak memory against n", png))
    return sec


def _shift_tables(directory: Path) -> list[Table]:
    """Tables of ``benchmarks/shift_probe.py``'s ``shift_<dataset>_n<n>.json`` files: how
    well a classifier tells the training file from the test file, and CV on the training file
    (shuffled and blocked folds) against the test file at given (sigma, C)."""
    recs = [json.loads(f.read_text()) for f in sorted(directory.glob("shift_*.json"))]
    if not recs:
        return []

    def auc(r: dict, part: str) -> str:
        a = r["auc"].get(part)
        return "—" if a is None else f"{a['auc']:.3f} ± {a['auc_std']:.3f} ({a['n_each']})"

    two_sample = [
        [
            str(r["dataset"]),
            str(r["n"]),
            str(r["n_test"]),
            f"{r['positive_rate_train']:.4f} / {r['positive_rate_test']:.4f}",
            auc(r, "all"),
            auc(r, "class 0"),
            auc(r, "class 1"),
            ", ".join(
                f"{f['feature']}: {f['auc']:.3f} ({f['mean_shift_sd']:+.2f} sd)"
                for f in r.get("feature_auc", [])
            )
            or "—",
        ]
        for r in recs
    ]
    points = [
        [
            str(r["dataset"]),
            str(r["n"]),
            _num(p["sigma"], 3),
            _num(p["C"], 3),
            _num(p["cv_shuffled"], 4),
            _num(p["cv_blocked"], 4),
            _num(p["test_accuracy"], 4),
        ]
        for r in recs
        for p in r.get("points", [])
    ]
    tables = [
        Table(
            "Training file vs test file (`benchmarks/shift_probe.py`): two-sample test",
            [
                "data",
                "n",
                "test n",
                "positive rate train / test",
                "AUC all",
                "AUC class 0",
                "AUC class 1",
                "features with the highest AUC alone",
            ],
            two_sample,
            note="5-fold ROC AUC (mean ± sd, rows per file in brackets) of a gradient-boosted "
            "classifier telling training-file rows from test-file rows: 0.5 when the files "
            "share one distribution. Features by 0-based column index, with the test file's mean "
            "shift in training-file sd.",
        )
    ]
    if points:
        tables.append(
            Table(
                "Training file vs test file: cross-validation against the test file",
                ["data", "n", "sigma", "C", "CV shuffled", "CV blocked", "test acc."],
                points,
                note="libsvm's SVC at (sigma, C): mean accuracy of 5-fold CV on the training "
                "file with shuffled stratified folds (the suites' protocol) and with "
                "contiguous blocks of the file as folds, and the test-file accuracy of the "
                "SVC trained on the whole training file.",
            )
        )
    return tables


def _blocked_tables(directory: Path) -> list[Table]:
    """The table of ``benchmarks/ijcnn1_blocked.py``'s ``ijcnn1_blocked.json``: RBSVM (low
    rank) leaving out single rows or blocks of consecutive rows, beside ``SVC()``."""
    path = directory / "ijcnn1_blocked.json"
    if not path.is_file():
        return []
    r = json.loads(path.read_text())
    rows = [
        [
            f"rbsvm_lowrank, leave-one-{unit}-out",
            _num(r[key]["log2_sigma"], 3),
            _num(r[key]["log2_C"], 3),
            _num(r[key]["estimate"], 4),
            _num(r[key]["selection_s"], 3),
            _num(r[key]["test_accuracy"], 4),
        ]
        for key, unit in (("rows", "row"), ("blocks", "block"))
    ]
    rows.append(["SVC()", "gamma='scale'", "0", "—", "—", _num(r["svc"]["test_accuracy"], 4)])
    return [
        Table(
            "ijcnn1: RBSVM holding out single rows or blocks of the file "
            "(`benchmarks/ijcnn1_blocked.py`)",
            ["selection", "log2 sigma", "log2 C", "estimate", "selection s", "test acc."],
            rows,
            note=f"The {r['n']:,} training rows in file order; groups: blocks of "
            f"{r['block']:,} consecutive rows ({r['n_groups']} groups); test: the official "
            f"file ({r['n_test']:,} rows); one process, one run.",
        )
    ]


def _slug(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s)


def _digests(files: list[Path]) -> list[tuple[Path, str]]:
    return [(f, hashlib.sha256(f.read_bytes()).hexdigest()) for f in files]


def _environment_summary(df: pd.DataFrame) -> str:
    parts = []
    for col in ("versions", "machine"):
        if col in df:
            vals = {str(v) for v in df[col].dropna()}
            if vals:
                shown = sorted(vals)[:3]
                parts.append(f"{col}: " + " | ".join(shown) + (" ..." if len(vals) > 3 else ""))
    return "; ".join(parts)


# ----------------------------------------------------------------------------- build
def build_report(
    results: str | Path,
    *,
    html: str | Path | None = None,
    md: str | Path | None = None,
    suites: dict[str, Suite] | None = None,
) -> list[Section]:
    """Build the report of every suite found under ``results`` and write it.

    Parameters
    ----------
    results : path
        A results directory (all ``*.jsonl`` below it are read) or one result file.
    html : path, optional
        Self-contained HTML page (figures embedded as base64 PNGs).
    md : path, optional
        Markdown file; its figures are written to ``<md stem>_files/`` beside it.  With
        neither ``html`` nor ``md`` nothing is written and no figure is drawn: the sections
        hold the tables only (e.g. to print the summary).
    suites : dict, optional
        Suite definitions by name (default: the registered suites).

    Returns
    -------
    list of Section
    """
    if "matplotlib.pyplot" not in sys.modules:
        import matplotlib

        matplotlib.use("Agg")
    results = Path(results)
    rows = load_results(results)
    df_all = pd.DataFrame(rows)
    sections: list[Section] = []
    workdir = Path(tempfile.mkdtemp(prefix="svmtune-report-"))
    try:
        if df_all.empty or "suite" not in df_all:
            sections.append(Section("No results", [f"No result rows found under `{results}`."]))
        else:
            for name in sorted(df_all["suite"].dropna().unique()):
                rows_s = [r for r in rows if r.get("suite") == name]
                suite = (suites or {}).get(name) or _registered_suite(name, rows_s, results)
                rows_s, n_stale = _current_rows(rows_s, suite)
                cells = stats.cells_frame(rows_s)
                exp = pd.DataFrame([r for r in rows_s if r.get("kind") == "experiment"])
                sfiles = sorted({Path(r["_file"]) for r in rows_s if "_file" in r})
                if cells.empty:
                    sections.append(Section(f"Suite `{name}`", ["No cell rows."]))
                else:
                    sections.append(
                        _suite_section(
                            name,
                            cells,
                            suite,
                            sfiles,
                            workdir,
                            _experiment_files(exp),
                            draw=md is not None or html is not None,
                        )
                    )
                if n_stale:
                    sections[-1].text.insert(
                        1,
                        f"{n_stale} stored cell rows belong to an older definition of the suite "
                        "(other parameters, seed or split count) and are left out.",
                    )
                es = _experiments_section(name, exp, suite)
                if es is not None:
                    sections.append(es)
        summary = _summary_section(sections)
        if summary is not None:
            sections.insert(0, summary)
        if results.is_dir():
            sc = scaling_section(results / "scaling")
            if sc is not None:
                sections.append(sc)
        n_files = len({r["_file"] for r in rows})  # files holding result rows
        header = f"Results: `{results}` ({n_files} result file(s), {len(rows)} rows)."
        if md is not None:
            Path(md).parent.mkdir(parents=True, exist_ok=True)
            Path(md).write_text(render_markdown(sections, header, Path(md)))
        if html is not None:
            Path(html).parent.mkdir(parents=True, exist_ok=True)
            Path(html).write_text(render_html(sections, header))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return sections


def _current_rows(rows: list[dict], suite: Suite | None) -> tuple[list[dict], int]:
    """The rows of ``suite``'s current cells (and its experiment records), and how many cell
    rows were dropped because the suite definition has changed since they were written."""
    if suite is None:
        return rows, 0
    from svmtune.bench.runner import build_cells

    current = {c.key for c in build_cells(suite)}
    keep = [r for r in rows if r.get("kind", "cell") != "cell" or r.get("key") in current]
    return keep, len(rows) - len(keep)


def _registered_suite(name: str, rows: list[dict], results: Path | None = None) -> Suite | None:
    """The suite definition of ``name`` (looked up as :func:`svmtune.bench.suite.get_suite`
    does, also from ``results`` upwards); for a suite run on other data (``svmtune bench
    --data``) the suite with the tasks its rows record."""
    from svmtune.bench.suite import DATA_SUFFIX, data_task, with_tasks

    try:
        if name.endswith(DATA_SUFFIX):  # the latest contents of each task's file
            tasks = {
                r["task"]: data_task(
                    r["task"], r["dataset"], r["dataset_version"], r.get("data_read")
                )
                for r in sorted(rows, key=lambda r: str(r.get("timestamp", "")))
                if r.get("kind", "cell") == "cell" and "task" in r and "dataset" in r
            }
            base = get_suite(name.removesuffix(DATA_SUFFIX), search_from=results)
            return with_tasks(base, list(tasks.values()))
        return get_suite(name, search_from=results)
    except Exception:
        return None


# ----------------------------------------------------------------------------- renderers
def _md_cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def render_markdown(sections: Sequence[Section], header: str, md_path: Path) -> str:
    """Markdown text; figures are copied to ``<md stem>_files/`` and linked relatively."""
    out = ["# svmtune benchmark report", "", header, ""]
    assets = md_path.parent / f"{md_path.stem}_files"
    if any(s.figures or s.files for s in sections):
        if assets.exists():
            shutil.rmtree(assets)
        assets.mkdir(parents=True)
    for sec in sections:
        out += [f"## {sec.title}", ""]
        for t in sec.text:
            out += [t, ""]
        for tab in sec.tables:
            out += [f"### {tab.title}", ""]
            out.append("| " + " | ".join(_md_cell(c) for c in tab.columns) + " |")
            out.append("|" + "---|" * len(tab.columns))
            for r in tab.rows:
                out.append("| " + " | ".join(_md_cell(c) for c in r) + " |")
            out.append("")
            if tab.note:
                out += [f"*{tab.note}*", ""]
        for fig in sec.figures:
            dest = assets / f"{_slug(sec.title)}-{fig.path.name}"
            shutil.copyfile(fig.path, dest)
            out += [f"![{fig.title}]({assets.name}/{dest.name})", ""]
        for fname, text in sec.files:
            if fname.endswith(".md"):
                out += [text.strip(), ""]
            else:
                assets.mkdir(parents=True, exist_ok=True)
                dest = assets / f"{_slug(sec.title)}-{fname}"
                dest.write_text(text)
                out += [f"- output file: [{fname}]({assets.name}/{dest.name})", ""]
    return "\n".join(out).rstrip() + "\n"


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:110em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em 0;font-size:0.85em}
th,td{border:1px solid #ccc;padding:0.2em 0.5em;text-align:right}
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}
.note{color:#555;font-size:0.85em}h2{border-bottom:2px solid #888;margin-top:2em}
img{max-width:100%}
"""


def render_html(sections: Sequence[Section], header: str) -> str:
    """One self-contained HTML page (figures embedded as base64 PNGs)."""
    e = htmlmod.escape
    out = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        "<title>svmtune benchmark report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>svmtune benchmark report</h1>",
        f"<p>{e(header)}</p>",
    ]
    for sec in sections:
        out.append(f"<h2>{e(sec.title)}</h2>")
        for t in sec.text:
            out.append(f"<p>{e(t)}</p>")
        for tab in sec.tables:
            out.append(f"<h3>{e(tab.title)}</h3><table><thead><tr>")
            out.append("".join(f"<th>{e(str(c))}</th>" for c in tab.columns))
            out.append("</tr></thead><tbody>")
            for r in tab.rows:
                out.append("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>")
            out.append("</tbody></table>")
            if tab.note:
                out.append(f"<p class='note'>{e(tab.note)}</p>")
        for fig in sec.figures:
            data = base64.b64encode(fig.path.read_bytes()).decode()
            out.append(
                f"<figure><img alt='{e(fig.title)}' src='data:image/png;base64,{data}'>"
                f"<figcaption>{e(fig.title)}</figcaption></figure>"
            )
        for fname, text in sec.files:
            out.append(f"<details><summary>{e(fname)}</summary><pre>{e(text)}</pre></details>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
