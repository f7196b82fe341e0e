"""The report section of one suite: accuracy and cost tables against the two yardsticks,
per-task tables, paired Wilcoxon signed-rank tests, the papers' numbers beside ours, failed
cells, and figures (the cost-accuracy figure and the suite's own)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from svmtune.bench import stats
from svmtune.bench.report_model import (
    NOT_RUN,
    PUBLISHED_METRICS,
    Figure,
    Section,
    Table,
    _digests,
    _environment_summary,
    _num,
    _pct,
    _pm,
    _pval,
    _ratio,
    _read_note,
    _signed_pp,
    _slug,
)
from svmtune.bench.report_summary import summary_table
from svmtune.bench.suite import Suite
from svmtune.methods.base import YARDSTICKS

__all__ = ["cost_accuracy_figure", "suite_section"]


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


@dataclass
class _SuiteCells:
    """What a suite section is built from: the suite's rows in suite order, its tasks and
    methods (the suite's, then those found only in the rows), yardsticks and split count."""

    df: pd.DataFrame
    tasks: list[str]
    methods: list[str]
    yard: dict[str, str]
    n_expected: int | None

    @property
    def grid(self) -> str | None:
        return self.yard.get("grid")


def _protocol_text(suite: Suite) -> str:
    p = suite.protocol
    sizes = ", ".join(f"{k} {v}" for k, v in (("train", p.train_size), ("test", p.test_size)) if v)
    proto = {
        "kfold": f"{p.n_splits}-fold stratified CV x {p.n_repeats}",
        "split": f"{p.n_repeats} stratified random splits ({sizes})",
        "train_test": "fixed train/test files",
    }[p.kind]
    return f"Protocol: {proto}; seed {suite.seed}."


def _suite_cells(name: str, df: pd.DataFrame, suite: Suite | None, sec: Section) -> _SuiteCells:
    """The cells of a suite section (:class:`_SuiteCells`); appends the suite's description
    and protocol (or that no definition is registered) to ``sec``."""
    if suite is not None:
        sec.text.append(suite.description)
        sec.text.append(_protocol_text(suite))
        tasks = [t.name for t in suite.tasks]
        methods = [m.label for m in suite.methods]
        yard = suite.yardstick_labels()
        n_expected: int | None = suite.protocol.n_splits_per_task
    else:
        sec.text.append(
            f"(No suite definition named {name!r} is registered: cells are taken from the rows.)"
        )
        tasks = list(dict.fromkeys(df["task"]))
        methods = list(dict.fromkeys(df["method"]))
        yard = {}
        names = df.drop_duplicates("method").set_index("method")["method_name"]
        grids = [m for m, mn in names.items() if mn == YARDSTICKS["grid"]]
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
    return _SuiteCells(df, tasks, methods, yard, n_expected)


_YARDSTICK_TEXT = (
    "; SVC() = one scikit-learn `SVC()` (gamma='scale', C=1) fitted on the same "
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


def _rows_text(c: _SuiteCells, files: list[Path]) -> list[str]:
    """The section's paragraphs on its rows, their environment and the yardsticks."""
    df = c.df
    n_ok = int((df["status"] == "ok").sum())
    out = [
        f"{len(df)} result rows ({n_ok} ok, {len(df) - n_ok} errors) from "
        + ", ".join(f"`{f.name}` (sha256 {d[:12]})" for f, d in _digests(files))
        + "."
    ]
    env = _environment_summary(df)
    if env:
        out.append(env)
    grid = c.grid
    out.append(
        "Yardsticks: "
        + (f"grid search = `{grid}`" if grid else "no 10-fold grid search in this suite")
        + _YARDSTICK_TEXT
    )
    return out


def _overview_tables(c: _SuiteCells, rel_idx: pd.DataFrame | None) -> list[Table]:
    """Accuracy per task and method, then accuracy and cost relative to both yardsticks."""
    df, tasks, methods, n_expected = c.df, c.tasks, c.methods, c.n_expected
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
    tables = [
        Table(
            "Test accuracy (%) by task and method (mean over splits)",
            ["method", *tasks, "mean"],
            acc_rows,
            "Cells marked 'not run' have no result row; 'k/n splits' ran partly.",
        )
    ]
    for col, title in (
        ("d_acc_grid", "Accuracy − grid search (pp)"),
        ("time_ratio_grid", "Selection time ÷ grid-search selection time"),
        ("d_acc_default", "Accuracy − SVC() defaults (pp), same splits"),
        ("time_ratio_default", "Selection time ÷ one SVC() fit, same splits"),
    ):
        if col.endswith("grid") and not c.grid:
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
        tables.append(Table(title, ["method", *tasks], rows))
    return tables


_TASK_COLUMNS = [
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
]


def _task_row(c: _SuiteCells, rel_idx, ok: pd.DataFrame, t: str, m: str, paper: str) -> list:
    """One method's row of a task's table."""
    st = _cell_status(c.df, t, m, c.n_expected, short=False)
    if rel_idx is None or (t, m) not in rel_idx.index:
        return [m, "0", st or NOT_RUN, paper] + ["—"] * 9
    r = rel_idx.loc[(t, m)]
    sub = ok[(ok["task"] == t) & (ok["method"] == m)]
    return [
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


def _task_data_note(df: pd.DataFrame, t: str) -> str:
    """The data sets (and their versions, and how they were read) of a task's rows."""
    dsub = df[df["task"] == t]
    if "dataset_version" not in dsub:
        return ""
    return ", ".join(
        f"{a} ({str(v)[:12]}){r}"
        for a, v, r in dsub.reindex(columns=["dataset", "dataset_version", "data_read"])
        .assign(data_read=lambda d: d["data_read"].map(_read_note))
        .drop_duplicates()
        .itertuples(index=False)
    )


def _task_tables(c: _SuiteCells, rel_idx, published: dict) -> list[Table]:
    """One table per task: every method's accuracy, the paper's, costs and ratios."""
    ok = c.df[c.df["status"] == "ok"]
    tables = []
    for t in c.tasks:
        rows = []
        for m in c.methods:
            pub = published.get((t, m, "accuracy"))
            paper = _num(pub["value"], 2) if pub else ""
            rows.append(_task_row(c, rel_idx, ok, t, m, paper))
        ds = _task_data_note(c.df, t)
        tables.append(Table(f"Task `{t}`", list(_TASK_COLUMNS), rows, f"data: {ds}" if ds else ""))
    return tables


def _wilcoxon_table(tests: pd.DataFrame) -> Table:
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
    return Table(
        "Paired Wilcoxon signed-rank tests over tasks (accuracy)",
        ["method", "reference", "tasks", "win/tie/loss", "mean Δ pp", "R+", "R−", "z", "p"],
        rows,
        "One pair per task (mean over splits); zero differences dropped; z from the "
        "normal approximation on min(R+, R−), tie-corrected, two-sided p "
        "(RBSVM Table IV convention).",
    )


def _published_table(c: _SuiteCells, suite: Suite) -> Table:
    """The papers' numbers of ``suite.published`` beside ours."""
    rows = []
    for p in suite.published:
        metric = p["metric"]
        known = metric in PUBLISHED_METRICS or _wilcoxon_metric(p) is not None
        mine = _ours_published(c.df, p) if known else None
        st = _cell_status(c.df, p["task"], p["method"], c.n_expected)
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
    return Table(
        "Published numbers beside ours",
        ["paper table", "task", "method", "metric", "paper", "ours", "ours − paper"],
        rows,
        "Accuracy-type metrics in percent as the papers print them.  Wilcoxon "
        "entries (wilcoxon_<metric>_<statistic>) test the entry's reference against "
        "the method over the tasks both ran: R+ sums the ranks where the reference is "
        "larger.",
    )


def _errors_table(df: pd.DataFrame) -> Table | None:
    bad = df[df["status"] != "ok"]
    if bad.empty:
        return None
    rows = [
        [
            m,
            str(len(g)),
            "; ".join(dict.fromkeys(g["status"].fillna("(no status)").astype(str)))[:300],
        ]
        for m, g in bad.groupby("method", sort=False)
    ]
    return Table("Cells that failed", ["method", "rows", "status"], rows)


def _add_figures(
    sec: Section,
    name: str,
    c: _SuiteCells,
    suite: Suite | None,
    workdir: Path,
    experiment_files: dict[str, list[Path]],
) -> None:
    """The cost-accuracy figure and the suite's own figures (PNGs; other files as text)."""
    figdir = workdir / _slug(name)
    figdir.mkdir(parents=True, exist_ok=True)
    for path in cost_accuracy_figure(c.df, figdir, c.yard):
        sec.figures.append(Figure("Accuracy vs selection cost relative to the yardsticks", path))
    if suite is None:
        return
    for fn in suite.figures:
        paths, err = _run_figure(fn, c.df.copy(), figdir, experiment_files)
        if err:
            sec.text.append(err)
        for pth in paths:
            if pth.suffix.lower() == ".png":
                sec.figures.append(Figure(pth.stem.replace("_", " "), pth))
            else:
                # read now: the figure folder is temporary
                sec.files.append((pth.name, pth.read_text(errors="replace")))


def suite_section(
    name: str,
    df: pd.DataFrame,
    suite: Suite | None,
    files: list[Path],
    workdir: Path,
    experiment_files: dict[str, list[Path]] | None = None,
    draw: bool = True,
) -> Section:
    """The report section of one suite.

    Parameters
    ----------
    name : str
        The suite's name in the rows.
    df : DataFrame
        Its cell rows (:func:`svmtune.bench.stats.cells_frame`).
    suite : Suite or None
        Its definition (tasks and methods not run, published numbers, figures); None takes
        the cells from the rows.
    files : list of Path
        The result files the rows come from (their SHA-256 is printed).
    workdir : Path
        Where figures are drawn (a temporary directory).
    experiment_files : dict, optional
        Files of the suite's stored experiments, by experiment name (for its figures).
    draw : bool, default=True
        Draw the figures.

    Returns
    -------
    Section
        Its ``summary`` is the suite's table of the report's opening summary.
    """
    sec = Section(title=f"Suite `{name}`")
    c = _suite_cells(name, df, suite, sec)
    sec.text += _rows_text(c, files)
    rel = stats.relative_table(c.df, c.yard)
    rel_idx = rel.set_index(["task", "method"]) if not rel.empty else None
    sec.tables += _overview_tables(c, rel_idx)
    sec.tables += _task_tables(c, rel_idx, _published_lookup(suite))
    tests = stats.paired_tests(c.df, c.yard, "accuracy")
    sec.summary = summary_table(name, c.methods, c.tasks, rel, tests, c.grid)
    if not tests.empty:
        sec.tables.append(_wilcoxon_table(tests))
    if suite is not None and suite.published:
        sec.tables.append(_published_table(c, suite))
    errors = _errors_table(c.df)
    if errors is not None:
        sec.tables.append(errors)
    if draw:
        _add_figures(sec, name, c, suite, workdir, experiment_files or {})
    return sec
