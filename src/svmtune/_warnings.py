"""Per-thread recording of warnings (:func:`recorded_warnings`), and where svmtune's warnings
point (:func:`user_stacklevel`)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

__all__ = ["recorded_warnings", "user_stacklevel"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: frames that belong to svmtune's call although their code is not svmtune's: scikit-learn's
#: callbacks decorator around ``SVMTuner.fit`` (``sklearn.callback.with_callbacks``)
_WRAPPER_SUFFIX = os.path.join("sklearn", "callback", "_callback_support.py")


def _inside(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_PACKAGE_DIR) or path.endswith(_WRAPPER_SUFFIX)


def user_stacklevel() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` in the calling function that names the
    first frame outside svmtune: the user's line that called svmtune (or the library that
    did), however deep inside svmtune the warning is raised (as pandas does).

    Call it in the ``warnings.warn`` call itself: ``warnings.warn(msg, stacklevel=
    user_stacklevel())``.
    """
    frame = sys._getframe(1)  # the function that warns
    level = 1
    while frame is not None and _inside(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level


_WARN_LOCK = threading.Lock()
_WARN_LOCAL = threading.local()
_warn_saved: dict[str, Any] = {}  # the process's warning state while any recorder is open
_DEFAULT_SHOW = warnings.showwarning  # the handler when this module was imported


def _show_in_thread(message, category, filename, lineno, file=None, line=None) -> None:
    logs = getattr(_WARN_LOCAL, "logs", None)
    if logs:
        logs[-1].append(warnings.WarningMessage(message, category, filename, lineno, file, line))
        return
    handler = _warn_saved.get("showwarning")  # a thread that records nothing
    if handler is None or handler is _show_in_thread:  # installed again by a late catch_warnings
        handler = _DEFAULT_SHOW
    handler(message, category, filename, lineno, file, line)


@contextlib.contextmanager
def recorded_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Record every warning raised in the calling thread into the list this yields.

    :class:`warnings.catch_warnings` swaps process-wide state on entry and puts back what it
    saw on exit; cells running at once in the threads of one process (a Dask worker with
    several threads, an in-process ``LocalCluster``) would then record each other's warnings
    and, exiting out of order, leave a dead recorder installed.  Here the first recorder to
    open installs one handler that sends each warning to the list of the thread raising it
    (warnings of other threads go to the handler saved at that moment), with the filter
    ``"always"`` in front; the last one to close restores the saved filters and handler.
    Recorders nest within a thread (the innermost open one gets the warnings).

    The filters stay process-wide: a :class:`warnings.catch_warnings` block running in
    another thread meanwhile changes them for every thread, as it always does.
    """
    with _WARN_LOCK:
        if not _warn_saved:
            _warn_saved.update(filters=warnings.filters[:], showwarning=warnings.showwarning)
            warnings.showwarning = _show_in_thread
            warnings.simplefilter("always")
        _warn_saved["open"] = _warn_saved.get("open", 0) + 1
    if not hasattr(_WARN_LOCAL, "logs"):
        _WARN_LOCAL.logs = []
    log: list[warnings.WarningMessage] = []
    _WARN_LOCAL.logs.append(log)
    try:
        yield log
    finally:
        _WARN_LOCAL.logs.pop()
        with _WARN_LOCK:
            _warn_saved["open"] -= 1
            if _warn_saved["open"] == 0:
                warnings.resetwarnings()  # also makes the registries of "once" stale
                warnings.filters[:] = _warn_saved["filters"]
                warnings.showwarning = _warn_saved["showwarning"]
                _warn_saved.clear()
