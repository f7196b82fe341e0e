"""``svmtune bench`` and ``svmtune report``: click commands attached to the main CLI group."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import click
from joblib import parallel_config
from rich.console import Console
from rich.table import Table

from svmtune.bench.report import SUMMARY_TITLE, build_report
from svmtune.bench.runner import run_suite
from svmtune.bench.store import NotAResultsFile
from svmtune.bench.suite import DataLoader, get_suite, on_data
from svmtune.cli._source import load_source, pop_column, without_columns

__all__ = ["bench", "report"]


def _split_list(value: str | None, option: str = "--tasks") -> list[str] | None:
    """Comma-separated names; a comma inside parentheses belongs to the name (method labels
    such as ``"Span-rule (sigma, C)"``).  None (the option not given): all; a value that
    names nothing (``""``) is a usage error of ``option``."""
    if value is None:
        return None
    # a comma followed by ")" before any "(" is inside parentheses
    items = [v.strip() for v in re.split(r",(?![^(]*\))", value) if v.strip()]
    if not items:
        raise click.BadParameter(
            f"{value!r} names nothing; give comma-separated names, or leave {option} out to "
            "run all",
            param_hint=f"'{option}'",
        )
    return items


@click.command("bench")
@click.option(
    "--suite",
    "suite_name",
    required=True,
    help="Suite name ('quick', or e.g. 'rbsvm-paper', looked up in benchmarks/suites of the "
    "current directory or a parent, and in $SVMTUNE_SUITES) or a suite file's path.",
)
@click.option(
    "--out",
    default="benchmarks/results",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Results root; rows go to OUT/<suite>/results.jsonl (appended, resumable; several "
    "runs may append at once).",
)
@click.option("--n-jobs", default=1, show_default=True, type=int, help="Cells run in parallel.")
@click.option("--tasks", default=None, help="Comma-separated task names to run (default: all).")
@click.option(
    "--methods", default=None, help="Comma-separated method labels or names (default: all)."
)
@click.option("--max-cells", default=None, type=click.IntRange(min=0), help="Run at most N cells.")
@click.option("--retry-errors", is_flag=True, help="Rerun cells whose stored row is an error.")
@click.option(
    "--rerun-before",
    default=None,
    metavar="TIME",
    help="Also rerun the selected cells whose stored row was written before TIME (ISO 8601, "
    "UTC unless a zone is given; e.g. the time of a code change); new rows supersede old "
    "ones, and the same command resumes.",
)
@click.option(
    "--experiments/--no-experiments",
    default=True,
    show_default=True,
    help="Run the suite's stand-alone experiments.",
)
@click.option(
    "--rerun-experiment",
    "rerun_experiments",
    multiple=True,
    metavar="NAME",
    help="Run this experiment again although it is stored (repeatable).",
)
@click.option(
    "--entropy/--no-entropy",
    default=True,
    show_default=True,
    help="Record the RBSVM model entropy of every chosen model.",
)
@click.option(
    "--blas-threads",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="BLAS threads per cell (times are then single-core times).",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Address of a dask.distributed scheduler (e.g. tcp://host:8786): the cells run on its "
    "workers through joblib's dask backend (needs svmtune[dask]); --n-jobs then defaults to "
    "all workers.",
)
@click.option(
    "--data",
    "data_sources",
    multiple=True,
    metavar="FILE",
    help="Run the suite's methods and protocol on this data file or bundled data set instead "
    "of the suite's own tasks (repeatable); rows go to OUT/<suite>+data/.",
)
@click.option(
    "--target",
    default=None,
    help="Label column of the --data files (name or position, e.g. -1); default: the column "
    "named target/class/label.",
)
@click.option(
    "--format",
    "fmt",
    default=None,
    type=click.Choice(["csv", "tsv", "svmlight", "libsvm", "arff", "keel"]),
    help="Format of the --data files (default: from the extension or the content).",
)
@click.option(
    "--drop",
    "drop_columns",
    multiple=True,
    metavar="COLUMN",
    help="Column of the --data files that is not a feature (e.g. an identifier); repeatable.",
)
@click.option(
    "--groups",
    "group_column",
    default=None,
    metavar="COLUMN",
    help="Column of the --data files naming each row's group (a subject, a recording; not a "
    "feature): the splits keep groups whole, and cross-validated methods and rbsvm(_lowrank) "
    "get them.",
)
@click.option("--progress/--no-progress", default=True, show_default=True)
def bench(
    suite_name,
    out,
    n_jobs,
    tasks,
    methods,
    max_cells,
    retry_errors,
    rerun_before,
    experiments,
    rerun_experiments,
    entropy,
    blas_threads,
    scheduler,
    data_sources,
    target,
    fmt,
    drop_columns,
    group_column,
    progress,
):
    """Run (or resume) a benchmark suite; each finished cell is appended to the result store.

    A killed run restarted with the same command continues where it stopped.  With --data
    the suite's methods and protocol run on your own files (e.g. `svmtune bench --suite
    quick --data mine.csv --target label`).
    """

    try:
        suite = get_suite(suite_name)
    except ValueError as exc:  # unknown name (the message lists where it looked)
        raise click.UsageError(str(exc)) from None
    except ModuleNotFoundError as exc:
        raise click.ClickException(
            f"suite {suite_name!r} is registered but its module is not available ({exc.name})"
        ) from None
    if n_jobs == 0:
        raise click.UsageError("--n-jobs must be a positive number of processes or -1 (all)")
    task_names, method_names = _split_list(tasks, "--tasks"), _split_list(methods, "--methods")
    loader = None
    if data_sources:
        suite, loader = _on_data(suite, data_sources, target, fmt, drop_columns, group_column)
    elif target is not None or fmt is not None or drop_columns or group_column is not None:
        raise click.UsageError("--target, --format, --drop and --groups apply to --data files only")
    backend = contextlib.nullcontext()
    client = None
    if scheduler:
        try:
            from dask.distributed import Client  # optional: svmtune[dask]
        except ImportError:
            raise click.UsageError(
                "--scheduler needs dask.distributed: pip install 'svmtune[dask]'"
            ) from None
        try:
            client = Client(scheduler, timeout="30s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise click.ClickException(
                f"cannot connect to scheduler {scheduler!r}: {exc}"
            ) from None
        backend = parallel_config(backend="dask")
        if n_jobs == 1:
            n_jobs = -1
    try:
        with backend:
            summary = run_suite(
                suite,
                out,
                loader=loader,
                n_jobs=n_jobs,
                tasks=task_names,
                methods=method_names,
                max_cells=max_cells,
                retry_errors=retry_errors,
                rerun_before=rerun_before,
                experiments=experiments,
                rerun_experiments=rerun_experiments,
                entropy=entropy,
                progress=progress,
                blas_threads=blas_threads,
            )
    except (ValueError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:  # e.g. an --out that cannot be created or written
        raise click.ClickException(f"cannot read or write a file: {exc}") from None
    finally:
        if client is not None:
            client.close()
    con = Console()
    con.print(
        f"suite [bold]{suite.name}[/]: {summary.n_cells} cells, {summary.n_skipped} already "
        f"stored, {summary.n_run} run ({summary.n_ok} ok, {summary.n_error} errors), "
        f"{summary.n_remaining} left"
    )
    for e in summary.experiments:
        con.print(f"experiment {e['experiment']}: {e['status']}")
    if summary.path.exists():
        try:  # the rows are stored already: a summary that fails must not fail the run
            _print_summary(con, build_report(summary.path, suites={suite.name: suite}))
        except Exception as exc:
            con.print(f"[yellow]no summary ({type(exc).__name__}: {exc}); see svmtune report[/]")
    con.print(f"results: {summary.path}")
    if summary.n_error:
        con.print("[yellow]some cells failed; their status is in the result rows[/]")


def _on_data(suite, sources, target, fmt, drop, groups=None):
    """The suite on the --data sources, and their loader; each source is read once here
    (as `svmtune select` reads it, with its messages) so that an unreadable file or a wrong
    --target, --drop or --groups stops the run before any cell."""

    try:
        derived = on_data(suite, sources, target=target, fmt=fmt, drop=drop, groups=groups)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    for task in derived.tasks:
        X, _, _ = load_source(task.dataset, target, fmt, groups)
        if drop:
            X = without_columns(X, drop)
        # the split sizes count rows, or with --groups groups (GroupShuffleSplit)
        units, have = "rows", len(X)
        if groups is not None:
            X, col = pop_column(X, groups, "--groups")
            units, have = "groups", col.nunique()
        p = derived.protocol
        need = sum(int(v) for v in (p.train_size, p.test_size) if isinstance(v, int))
        if p.kind == "split" and need > have:
            raise click.UsageError(
                f"suite {suite.name!r} draws {need} {units} per split (train_size="
                f"{p.train_size}, test_size={p.test_size}); {task.dataset} has {have}: "
                "use a suite with fractional splits or K-fold CV (e.g. 'quick', 'rbsvm-paper')"
            )
    return derived, DataLoader(target=target, fmt=fmt)


def _print_summary(con, sections) -> None:
    """The report's opening summary (:func:`svmtune.bench.report.summary_table`) as console
    tables; nothing when no cell succeeded."""

    for sec in sections:
        if sec.title != SUMMARY_TITLE:
            continue
        for tab in sec.tables:
            out = Table(
                title=f"{tab.title}: accuracy and selection time against the yardsticks",
                caption=tab.note or None,
            )
            for c, col in enumerate(tab.columns):
                out.add_column(col, justify="left" if c == 0 else "right")
            for row in tab.rows:
                out.add_row(*row)
            # as wide as the cells need, also where the console is narrow or not a terminal
            # (rich renders at most the console's width and cuts the cells short)
            widths = [max(len(str(v)) for v in col) for col in zip(tab.columns, *tab.rows)]
            need = sum(widths) + 3 * len(widths) + 1
            wide = con if need <= con.width else Console(file=con.file, width=need)
            wide.print(out)


@click.command("report")
@click.argument("results_dir", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write one self-contained HTML page here.",
)
@click.option(
    "--md",
    "md_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write markdown here (figures go to <stem>_files/ beside it).",
)
def report(results_dir, html_path, md_path):
    """Tables and figures of the results under RESULTS_DIR, papers' numbers beside ours."""

    if html_path is None and md_path is None:
        raise click.UsageError("give --html FILE and/or --md FILE")

    try:
        sections = build_report(results_dir, html=html_path, md=md_path)
    except (FileNotFoundError, NotAResultsFile) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"cannot write the report: {exc}") from None
    _print_summary(Console(), sections)
    for p in (html_path, md_path):
        if p is not None:
            click.echo(f"wrote {p}")
