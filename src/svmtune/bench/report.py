"""Reports from result files: one self-contained HTML page and/or a markdown file.

Everything in a report is computed from the result rows (``*.jsonl`` under the results
directory); the suite definitions (:func:`svmtune.bench.suite.get_suite`) contribute only
what is not a result: the list of (task, method) cells a suite defines (so those without any
row are marked "not run"), the papers' published numbers printed beside ours, and the suite's
figure callables, which draw from the result rows and from the files the suite's stored
experiments wrote.

Per suite the report shows, for every task, each method's accuracy (mean +- std over
splits) and its accuracy and selection cost relative to the 10-fold grid search and to one
``SVC()`` fit with scikit-learn's defaults measured on the same split; overview tables over
tasks; paired Wilcoxon signed-rank tests against both yardsticks (RBSVM Table IV
conventions, see :mod:`svmtune.bench.stats`); the published numbers next to ours; a cost vs
accuracy figure plus the suite's own figures; the experiments that ran; the errors
(:mod:`svmtune.bench.report_suite`).  The report opens with a summary of every suite's
methods against both yardsticks (:func:`~svmtune.bench.report_summary.summary_table`).

Report-section hooks add sections that are not built from result rows (e.g. from the files of
a repository's benchmark scripts): a suite file's module-level ``REPORT_SECTIONS`` adds its
sections after that suite's, and the ``REPORT_SECTIONS`` of a suite directory's
``_report_sections.py`` (:data:`SECTIONS_MODULE`) end the report.  Each hook is a callable
``(results: Path) -> Section | list[Section] | None`` called with the results directory.
"""

from __future__ import annotations

import importlib
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from svmtune.bench import stats
from svmtune.bench.report_model import NOT_RUN, PUBLISHED_METRICS, Figure, Section, Table
from svmtune.bench.report_render import render_html, render_markdown
from svmtune.bench.report_suite import cost_accuracy_figure, suite_section
from svmtune.bench.report_summary import (
    SUMMARY_TITLE,
    _experiment_files,
    _experiments_section,
    _summary_section,
    summary_table,
)
from svmtune.bench.runner import build_cells
from svmtune.bench.store import load_results
from svmtune.bench.suite import (
    DATA_SUFFIX,
    SUITES,
    Suite,
    data_task,
    get_suite,
    suite_dirs,
    suite_module,
    with_tasks,
)

__all__ = [
    "Table",
    "Figure",
    "Section",
    "build_report",
    "render_markdown",
    "render_html",
    "PUBLISHED_METRICS",
    "NOT_RUN",
    "SUMMARY_TITLE",
    "SECTIONS_MODULE",
    "cost_accuracy_figure",
    "summary_table",
]

#: module of a suite directory whose ``REPORT_SECTIONS`` end the report
SECTIONS_MODULE = "_report_sections"

#: a report-section hook: results directory -> section(s) or None
SectionHook = Callable[[Path], "Section | list[Section] | None"]


def _hook_sections(hooks: Sequence[SectionHook], results: Path) -> list[Section]:
    out: list[Section] = []
    for hook in hooks:
        got = hook(results)
        if isinstance(got, Section):
            out.append(got)
        elif got:
            out += list(got)
    return out


def _suite_hooks(name: str, results: Path) -> list[SectionHook]:
    """The ``REPORT_SECTIONS`` of the module of suite ``name`` (none for an unknown suite)."""
    try:
        if name in SUITES:
            module = importlib.import_module(SUITES[name])
        else:
            module = suite_module(name, search_from=results)
    except (ValueError, ImportError):
        return []
    return list(getattr(module, "REPORT_SECTIONS", []))


def directory_hooks(results: str | Path) -> list[SectionHook]:
    """The ``REPORT_SECTIONS`` of the :data:`SECTIONS_MODULE` of every suite directory
    (:func:`svmtune.bench.suite.suite_dirs`, searched also from ``results``)."""
    hooks: list[SectionHook] = []
    for d in suite_dirs(search_from=results):
        path = d / f"{SECTIONS_MODULE}.py"
        if path.is_file():
            hooks += list(getattr(suite_module(str(path)), "REPORT_SECTIONS", []))
    return hooks


def _sections_of_suite(
    name: str,
    rows: list[dict],
    results: Path,
    suites: dict[str, Suite] | None,
    workdir: Path,
    draw: bool,
) -> list[Section]:
    """The sections of one suite's rows: its own, its experiments', its hooks'."""
    suite = (suites or {}).get(name) or _registered_suite(name, rows, results)
    rows, n_stale = _current_rows(rows, suite)
    cells = stats.cells_frame(rows)
    exp = pd.DataFrame([r for r in rows if r.get("kind") == "experiment"])
    sfiles = sorted({Path(r["_file"]) for r in rows if "_file" in r})
    if cells.empty:
        sections = [Section(f"Suite `{name}`", ["No cell rows."])]
    else:
        sections = [
            suite_section(name, cells, suite, sfiles, workdir, _experiment_files(exp), draw=draw)
        ]
    if n_stale:
        sections[-1].text.insert(
            1,
            f"{n_stale} stored cell rows belong to an older definition of the suite "
            "(other parameters, seed or split count) and are left out.",
        )
    es = _experiments_section(name, exp, suite)
    if es is not None:
        sections.append(es)
    if results.is_dir():
        sections += _hook_sections(_suite_hooks(name, results), results)
    return sections


def build_report(
    results: str | Path,
    *,
    html: str | Path | None = None,
    md: str | Path | None = None,
    suites: dict[str, Suite] | None = None,
    hooks: Sequence[SectionHook] | None = None,
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
        Suite definitions by name (default: :func:`svmtune.bench.suite.get_suite` of each
        suite in the rows, looked up also from ``results`` upwards).
    hooks : sequence of callables, optional
        Report-section hooks whose sections end the report, called with ``results`` when it
        is a directory (default: :func:`directory_hooks`).

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
    draw = md is not None or html is not None
    workdir = Path(tempfile.mkdtemp(prefix="svmtune-report-"))
    try:
        if df_all.empty or "suite" not in df_all:
            sections.append(Section("No results", [f"No result rows found under `{results}`."]))
        else:
            for name in sorted(df_all["suite"].dropna().unique()):
                rows_s = [r for r in rows if r.get("suite") == name]
                sections += _sections_of_suite(name, rows_s, results, suites, workdir, draw)
        summary = _summary_section(sections)
        if summary is not None:
            sections.insert(0, summary)
        if results.is_dir():
            sections += _hook_sections(
                directory_hooks(results) if hooks is None else hooks, results
            )
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
    current = {c.key for c in build_cells(suite)}
    keep = [r for r in rows if r.get("kind", "cell") != "cell" or r.get("key") in current]
    return keep, len(rows) - len(keep)


def _registered_suite(name: str, rows: list[dict], results: Path | None = None) -> Suite | None:
    """The suite definition of ``name`` (looked up as :func:`svmtune.bench.suite.get_suite`
    does, also from ``results`` upwards); for a suite run on other data (``svmtune bench
    --data``) the suite with the tasks its rows record."""
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
    except ValueError:  # no suite file of that name (a broken one raises its own error)
        return None
