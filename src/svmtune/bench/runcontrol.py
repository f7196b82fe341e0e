"""How a suite run is driven: where its rows go, what it reports, its progress bar, SIGTERM
as an exit that stops the workers, and the cells a concurrent run stores meanwhile."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from svmtune.bench.store import ResultStore, counts_as_done
from svmtune.bench.suite import Suite

__all__ = ["RunSummary", "suite_dir"]


def suite_dir(out: str | Path, suite: Suite | str) -> Path:
    """The output directory of a suite: ``<out>/<suite name>``."""
    return Path(out) / (suite if isinstance(suite, str) else suite.name)


@dataclass
class RunSummary:
    """What one invocation of :func:`run_suite` did."""

    path: Path
    n_cells: int
    n_skipped: int
    n_run: int = 0
    n_ok: int = 0
    n_error: int = 0
    n_remaining: int = 0
    experiments: list[dict[str, Any]] = field(default_factory=list)


def _progress(enabled: bool):
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[last]}"),
        console=Console(stderr=True),
        disable=not enabled,
    )


@contextlib.contextmanager
def _sigterm_as_exit():
    """Within the block, SIGTERM raises ``SystemExit(143)`` in the main thread.

    By default SIGTERM ends the parent at once and joblib's loky workers are orphaned: they
    go on computing their cells (whose rows only the parent writes) until they finish.  As an
    exception, the signal unwinds through joblib's result generator, which terminates the
    workers, and through the result store, which closes cleanly.  Outside the main thread
    (where handlers cannot be installed) this does nothing.  The previous handler is restored
    on exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _exit(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _not_stored_meanwhile(
    cells: Sequence[Any],
    store: ResultStore,
    ok_only: bool,
    skipped: list[Any],
    since: datetime | None = None,
) -> Iterable[Any]:
    """``cells`` (:class:`svmtune.bench.runner.Cell`) less those a concurrent run has stored
    since this run read the store.

    Follows the store's file (:meth:`~svmtune.bench.store.ResultStore.rows_from`): each row,
    of any run, is parsed once; the cells left out are added to ``skipped``.
    """
    offset, done = 0, set()
    for cell in cells:
        rows, offset = store.rows_from(offset)
        done.update(r.get("key") for r in rows if counts_as_done(r, ok_only, since))
        if cell.key in done:
            skipped.append(cell)
        else:
            yield cell
