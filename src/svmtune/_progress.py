"""Progress of a selection on standard error (``SVMTuner(verbose=...)``).

``verbose=1`` draws one status line: a bar with the share done and the time left (ETA) where
the amount of work is known in advance (the folds of a cross-validated search, ``auto``'s
candidates), else the count done and the time spent (gradient steps, whose number the search
decides as it goes).  The ETA is the announced work still to come at the pace of the part
done (:meth:`Progress.eta`), less the seconds since the last unit finished; a
selection whose units differ in cost announces them weighted by their predicted cost
(``auto``'s plan, :class:`svmtune.methods._auto_stage.PlanProgress`),
so that the pace of the cheap first units is not taken for that of the costly ones.  The
final fit on all rows is the bar's last step (:meth:`Progress.final_step`).  On a terminal
the line is redrawn in place (``\\r``); elsewhere (a log
file, a captured stream) it is written once per tenth of the work, so that logs stay short.
``verbose=2`` writes a line per evaluated candidate with its score instead.

Where the installed scikit-learn has its callbacks API (``sklearn.callback``), the same
reports reach the callbacks set with ``SVMTuner().set_callbacks(...)`` (e.g.
``sklearn.callback.ProgressBar()``): each unit of work is a finished subtask of the fit
(``on_advance``); :data:`CallbackSupportMixin` and :func:`with_callbacks` are scikit-learn's,
or do nothing where it has none.  A callback's stop request (its ``on_fit_task_end``
returns True) raises :class:`svmtune.exceptions.SelectionStopped` from ``on_advance``, so
the selection stops at that unit of work (``SVMTuner.fit`` re-raises it, unfitted).

The selection code reports through :func:`current`, which is None unless a selection runs
inside :func:`progress`; the reports happen in the process that runs the selection (joblib
workers report nothing themselves: their results are counted as they come back).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import IO

from svmtune.exceptions import SelectionStopped

try:  # scikit-learn's callbacks API (its public sklearn.callback module)
    from sklearn.callback import CallbackSupportMixin, with_callbacks

    HAS_CALLBACKS = True
except ImportError:  # pragma: no cover - scikit-learn without sklearn.callback
    HAS_CALLBACKS = False

    class CallbackSupportMixin:  # type: ignore[no-redef]
        """Nothing: this scikit-learn has no callbacks API."""

    def with_callbacks(method):  # type: ignore[no-redef]
        """The method as it is: this scikit-learn has no callbacks API."""
        return method


__all__ = [
    "HAS_CALLBACKS",
    "CallbackSupportMixin",
    "Progress",
    "current",
    "describe",
    "final_step",
    "progress",
    "with_callbacks",
    "forward_to_callbacks",
]

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
    verbose : {0, 1, 2}
        0: nothing drawn (the reports only reach ``on_advance``); 1: the status line; 2: a
        line per candidate (:meth:`line`) and a summary at the end.
    stream : file, default=sys.stderr
    label : str
        What the line starts with (the method's name).
    width : int
        Characters of the bar.
    on_advance : callable, optional
        ``on_advance(n, unit)`` at every :meth:`advance` (scikit-learn's callbacks).
    clock : callable, optional
        Seconds of a monotonic clock (default ``time.perf_counter``; tests pass a fake one).
    """

    def __init__(
        self,
        verbose: int,
        stream: IO[str] | None = None,
        label: str = "",
        width: int = 24,
        on_advance: Callable[[int, str], None] | None = None,
        clock: Callable[[], float] | None = None,
    ):
        self.verbose = int(verbose)
        self.clock = time.perf_counter if clock is None else clock
        self.on_advance = on_advance
        self.stream = sys.stderr if stream is None else stream
        self.label = label
        self.width = width
        self.t0 = self.clock()
        self.done: dict[str, int] = {}
        self.total: dict[str, int] = {}
        #: when the announced work began (the first :meth:`expect` or :meth:`cover`) and when
        #: its last unit finished: the pace of the ETA
        self.t_work: float | None = None
        self.t_unit: float | None = None
        #: units of the announced work kept for the final fit (:meth:`reserve_final`)
        self.final_units: tuple[int, str] | None = None
        self._listeners: dict[str, list[Callable[[int], None]]] = {}
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_draw = -1.0
        self._last_tenth = -1
        self._last_counts = ""
        self._drawn = False

    # ---------------------------------------------------------------- reports
    def expect(self, n: int, unit: str) -> None:
        """``n`` more ``unit`` are to come (they make the bar and the ETA)."""
        self._begin_work()
        self.total[unit] = self.total.get(unit, 0) + int(n)
        self.done.setdefault(unit, 0)

    def cover(self, n: int, unit: str) -> None:
        """``n`` more ``unit`` are to come now: the total grows only where it was smaller than
        the work done and to come (an amount announced at the start keeps its ETA)."""
        self._begin_work()
        need = self.done.get(unit, 0) + int(n)
        if need > self.total.get(unit, 0):
            self.total[unit] = need
        self.done.setdefault(unit, 0)

    def _begin_work(self) -> None:
        if self.t_work is None:
            self.t_work = self.clock()

    def reserve_final(self, n: int, unit: str) -> None:
        """``n`` of the announced ``unit`` are the final fit's: :meth:`final_step` counts them."""
        self.final_units = (int(n), unit)

    def rescale_final(self, n: int, unit: str) -> None:
        """The final fit is ``n`` of ``unit`` after all: the announced total becomes the work
        done and those ``n`` (a selection that learns which final model it fits, and so its
        cost, only at its end)."""
        self.total[unit] = self.done.get(unit, 0) + int(n)
        self.final_units = (int(n), unit)

    def listen(self, unit: str, fn: Callable[[int], None]) -> None:
        """Call ``fn(n)`` at every :meth:`advance` of ``n`` ``unit`` (a selection that weighs
        units of another part of the code, e.g. ``auto``'s plan its refinements' steps)."""
        self._listeners.setdefault(unit, []).append(fn)

    def advance(self, n: int = 1, unit: str = "steps") -> None:
        """``n`` more ``unit`` are done."""
        self.done[unit] = self.done.get(unit, 0) + int(n)
        if self.total.get(unit, 0) > 0:
            self.t_unit = self.clock()
        if self.on_advance is not None:
            self.on_advance(int(n), unit)
        for fn in self._listeners.get(unit, ()):
            fn(int(n))
        if self.verbose == 1:
            self._draw()

    @contextlib.contextmanager
    def final_step(self) -> Iterator[None]:
        """The final fit on all rows, the bar's last step: the units the selection reserved
        for it (:meth:`reserve_final`), else one ``"final fit"`` where the bar has a known
        total, are done when it ends.  scikit-learn's callbacks are not told (a stop request
        there could no longer stop anything)."""
        if self.final_units is None and self.fraction() is not None:
            self.cover(1, "final fit")
            self.final_units = (1, "final fit")
        self.note("final fit on all rows")
        yield
        if self.final_units is not None:
            n, unit = self.final_units
            self.done[unit] = self.done.get(unit, 0) + n
            self.t_unit = self.clock()
            self.final_units = None

    def note(self, text: str) -> None:
        """A line of its own from ``verbose >= 1`` (a stage of the plan, its size and cost),
        written above the status line."""
        if self.verbose >= 1:
            if self._tty and self._drawn:
                self.stream.write("\r\033[K")
            self.stream.write(f"{self.label}: {text}\n" if self.label else f"{text}\n")
            self.stream.flush()
            if self.verbose == 1 and self._drawn:
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

    def eta(self) -> float | None:
        """Seconds left: the seconds the finished part of the announced work took (from its
        start to its last unit), over the share it is of the work, times the share still to
        come, less the seconds since that last unit (not below 0).  None: no announced work,
        none of it done, or all of it.

        The pace is the finished work's, not the wall time's: between two units the time left
        falls with the clock, instead of climbing while a long step runs (issue 63), and
        units weighted by their predicted cost (``auto``'s plan) make a cheap unit's pace that
        of the whole.  (The pace of the later half of the finished work alone forgets the
        first calls' fixed costs sooner, but follows the cheaper steps of a warm-started
        refinement: on 20,000 rows its ETA before the final fit was 0.42 of the time left,
        the whole part's 0.71; ``docs/notes/auto_eta_budget.md``.)"""
        frac = self.fraction()
        if frac is None or not 0 < frac < 1 or self.t_unit is None:
            return None
        start = self.t0 if self.t_work is None else self.t_work
        took = self.t_unit - start
        return max(0.0, took * (1.0 - frac) / frac - (self.clock() - self.t_unit))

    def status(self, final: bool = False) -> str:
        """The status line: bar, counts, time spent and left."""
        elapsed = self.clock() - self.t0
        counts = self._counts()
        frac = self.fraction()
        parts = [self.label] if self.label else []
        if frac is not None:
            fill = int(round(frac * self.width))
            parts.append(f"[{'#' * fill}{'.' * (self.width - fill)}] {100 * frac:3.0f}%")
        if counts:
            parts.append(counts)
        timing = _seconds(elapsed)
        eta = None if final else self.eta()
        if eta is not None:
            timing += f", ETA {_seconds(eta)}"
        parts.append(timing)
        return "  ".join(parts)

    def _counts(self) -> str:
        return ", ".join(
            f"{self.done[u]}/{self.total[u]} {u}" if self.total.get(u) else f"{self.done[u]} {u}"
            for u in self.done
        )

    def _draw(self, final: bool = False) -> None:
        now = self.clock()
        if self._tty:
            if not final and now - self._last_draw < 0.1:
                return
            self.stream.write("\r" + self.status(final) + "\033[K")
        else:  # a log: a line per tenth of the known work (or per 10 s without any)
            frac = self.fraction()
            tenth = int(10 * frac) if frac is not None else int((now - self.t0) // 10)
            same = final and frac == 1.0 and self._last_counts == self._counts()
            if tenth == self._last_tenth and (not final or same):
                return  # nothing new (a finished bar is not written twice)
            self._last_tenth = tenth
            self._last_counts = self._counts()
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
        if summary and self.verbose:
            self.stream.write(f"{self.label}: {summary}\n" if self.label else f"{summary}\n")
        self.stream.flush()


def forward_to_callbacks(tuner, ctx, done: list[int], n: int, unit: str) -> None:
    """``n`` units of work done: ``n`` subtasks of the fit begun and ended for
    scikit-learn's callbacks.  A callback's stop request (its ``on_fit_task_end`` returns
    True, ``sklearn.callback``'s protocol) stops the selection here: raises
    :class:`~svmtune.exceptions.SelectionStopped`, which ``fit`` lets through.  ``done``
    counts the units finished in this fit."""
    for _ in range(n):
        sub = ctx.subcontext(task_name=unit)
        sub.call_on_fit_task_begin(estimator=tuner)
        done[0] += 1
        if sub.call_on_fit_task_end(estimator=tuner):
            raise SelectionStopped(
                f"a callback asked to stop the selection after {done[0]} units of work "
                f"(the last a {unit[:-1] if unit.endswith('s') else unit}); "
                f"{getattr(tuner, 'method', 'the method')!r} chooses its hyperparameters "
                f"only at the end of its search, so this SVMTuner is not fitted: remove the "
                f"callback's stop request, or bound the search (its budget options) instead",
                units_done=done[0],
            )


@contextlib.contextmanager
def progress(
    verbose: int,
    stream: IO[str] | None = None,
    label: str = "",
    on_advance: Callable[[int, str], None] | None = None,
    clock: Callable[[], float] | None = None,
) -> Iterator[Progress | None]:
    """Report the selection run inside to ``stream`` and ``on_advance`` (``verbose`` 0 and
    no ``on_advance``: nothing, None)."""
    if not verbose and on_advance is None:
        yield None
        return
    reporter = Progress(verbose, stream=stream, label=label, on_advance=on_advance, clock=clock)
    token = _CURRENT.set(reporter)
    try:
        yield reporter
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def final_step(reporter: Progress | None) -> Iterator[None]:
    """:meth:`Progress.final_step` of ``reporter``, or nothing (None: no progress shown)."""
    if reporter is None:
        yield
        return
    with reporter.final_step():
        yield
