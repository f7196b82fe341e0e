"""Progress of a selection on standard error (``SVMTuner(verbose=...)``).

``verbose=1`` draws one status line: a bar with the share done and the time left (ETA) where
the amount of work is known in advance (the folds of a cross-validated search, ``auto``'s
candidates), else the count done and the time spent (gradient steps, whose number the search
decides as it goes).  On a terminal the line is redrawn in place (``\\r``); elsewhere (a log
file, a captured stream) it is written once per tenth of the work, so that logs stay short.
``verbose=2`` writes a line per evaluated candidate with its score instead.

The selection code reports through :func:`current`, which is None unless a selection runs
inside :func:`progress`; the reports happen in the process that runs the selection (joblib
workers report nothing themselves: their results are counted as they come back).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import IO

__all__ = ["Progress", "current", "describe", "progress"]

_CURRENT: ContextVar[Progress | None] = ContextVar("svmtune_progress", default=None)


def current() -> Progress | None:
    """The reporter of the selection running in this context, or None."""
    return _CURRENT.get()


def describe(params: dict) -> str:
    """A candidate's hyperparameters in a line: ``sigma=0.5 C=2``."""
    shown = [k for k in ("sigma", "C", "degree", "coef0", "class_weight") if k in params]
    return " ".join(
        f"{k}={params[k]:.4g}" if isinstance(params[k], float) else f"{k}={params[k]}"
        for k in shown
    )


def _seconds(t: float) -> str:
    if t < 60:
        return f"{t:.1f} s"
    m, s = divmod(int(round(t)), 60)
    return f"{m} min {s:02d} s" if m < 60 else f"{m // 60} h {m % 60:02d} min"


class Progress:
    """Counts of the work done, by unit (``"CV fits"``, ``"candidates"``, ``"gradient
    steps"``), drawn on ``stream``.

    Parameters
    ----------
    verbose : {1, 2}
        1: the status line; 2: a line per candidate (:meth:`line`) and a summary at the end.
    stream : file, default=sys.stderr
    label : str
        What the line starts with (the method's name).
    width : int
        Characters of the bar.
    """

    def __init__(
        self, verbose: int, stream: IO[str] | None = None, label: str = "", width: int = 24
    ):
        self.verbose = int(verbose)
        self.stream = sys.stderr if stream is None else stream
        self.label = label
        self.width = width
        self.t0 = time.perf_counter()
        self.done: dict[str, int] = {}
        self.total: dict[str, int] = {}
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_draw = -1.0
        self._last_tenth = -1
        self._drawn = False

    # ---------------------------------------------------------------- reports
    def expect(self, n: int, unit: str) -> None:
        """``n`` more ``unit`` are to come (they make the bar and the ETA)."""
        self.total[unit] = self.total.get(unit, 0) + int(n)
        self.done.setdefault(unit, 0)

    def cover(self, n: int, unit: str) -> None:
        """``n`` more ``unit`` are to come now: the total grows only where it was smaller than
        the work done and to come (an amount announced at the start keeps its ETA)."""
        need = self.done.get(unit, 0) + int(n)
        if need > self.total.get(unit, 0):
            self.total[unit] = need
        self.done.setdefault(unit, 0)

    def advance(self, n: int = 1, unit: str = "steps") -> None:
        """``n`` more ``unit`` are done."""
        self.done[unit] = self.done.get(unit, 0) + int(n)
        if self.verbose == 1:
            self._draw()

    def line(self, text: str) -> None:
        """A line of its own (``verbose >= 2``): one evaluated candidate and its score."""
        if self.verbose >= 2:
            self.stream.write(f"{self.label}: {text}\n" if self.label else f"{text}\n")
            self.stream.flush()

    # ---------------------------------------------------------------- drawing
    def fraction(self) -> float | None:
        """Share of the announced work done (None: nothing announced)."""
        known = [u for u in self.total if self.total[u] > 0]
        if not known:
            return None
        return min(1.0, sum(self.done[u] for u in known) / sum(self.total[u] for u in known))

    def status(self, final: bool = False) -> str:
        """The status line: bar, counts, time spent and left."""
        elapsed = time.perf_counter() - self.t0
        counts = ", ".join(
            f"{self.done[u]}/{self.total[u]} {u}" if self.total.get(u) else f"{self.done[u]} {u}"
            for u in self.done
        )
        frac = self.fraction()
        parts = [self.label] if self.label else []
        if frac is not None:
            fill = int(round(frac * self.width))
            parts.append(f"[{'#' * fill}{'.' * (self.width - fill)}] {100 * frac:3.0f}%")
        if counts:
            parts.append(counts)
        timing = _seconds(elapsed)
        if not final and frac is not None and 0 < frac < 1:
            timing += f", ETA {_seconds(elapsed * (1 - frac) / frac)}"
        parts.append(timing)
        return "  ".join(parts)

    def _draw(self, final: bool = False) -> None:
        now = time.perf_counter()
        if self._tty:
            if not final and now - self._last_draw < 0.1:
                return
            self.stream.write("\r" + self.status(final) + "\033[K")
        else:  # a log: a line per tenth of the known work (or per 10 s without any)
            frac = self.fraction()
            tenth = int(10 * frac) if frac is not None else int((now - self.t0) // 10)
            if tenth == self._last_tenth and (not final or frac == 1.0):
                return  # nothing new (a finished bar is not written twice)
            self._last_tenth = tenth
            self.stream.write(self.status(final) + "\n")
        self._last_draw = now
        self._drawn = True
        self.stream.flush()

    def close(self, summary: str = "") -> None:
        """The final status (and ``summary``), ending the redrawn line."""
        if self.verbose == 1:
            self._draw(final=True)
            if self._tty:
                self.stream.write("\n")
        if summary:
            self.stream.write(f"{self.label}: {summary}\n" if self.label else f"{summary}\n")
        self.stream.flush()


@contextlib.contextmanager
def progress(
    verbose: int, stream: IO[str] | None = None, label: str = ""
) -> Iterator[Progress | None]:
    """Report the selection run inside to ``stream`` (``verbose`` 0: nothing, None)."""
    if not verbose:
        yield None
        return
    reporter = Progress(verbose, stream=stream, label=label)
    token = _CURRENT.set(reporter)
    try:
        yield reporter
    finally:
        _CURRENT.reset(token)
