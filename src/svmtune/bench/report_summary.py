"""The report's opening summary (every suite's methods against both yardsticks) and the
table of a suite's stand-alone experiments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from svmtune.bench.report_model import NOT_RUN, Section, Table, _num, _ratio, _signed_pp
from svmtune.bench.suite import Suite

__all__ = ["SUMMARY_TITLE", "summary_table"]

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
