"""The fuzz suite's contract and its record of every generated case.

Each case runs inside :func:`case`, which

* fails the case when it runs longer than :data:`HANG_SECONDS` (a ``SIGALRM`` watchdog: a
  hang is a failure, not a stuck CI job);
* classifies its outcome: ``"ok"``, or the type of the exception raised, which must be one of
  the expected types (``ValueError``, ``TypeError`` and their subclasses such as
  :class:`svmtune.datasets.DataFileError`, or those the caller allows) and name the offending
  argument (one of ``names``);
* with ``SVMTUNE_FUZZ_LOG=FILE`` in the environment, appends one JSON line per case to
  ``FILE`` (suite, outcome, exception type, duration, non-finite output seen), from which
  ``benchmarks/fuzz_long.py`` writes its summary.

Outputs are checked by the test bodies; a non-finite one is recorded (:func:`finite`) and
fails the case.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import time
from collections.abc import Iterable

import numpy as np

#: a case running longer than this is a hang (the issue's acceptance bound)
HANG_SECONDS = 60

EXPECTED = (ValueError, TypeError)


class Hang(Exception):
    """A fuzz case ran past :data:`HANG_SECONDS`."""


class Outcome:
    """What the case body reports back: set ``nonfinite`` when an output was not finite."""

    def __init__(self) -> None:
        self.nonfinite = False
        #: an infinite criterion where the method defines one (S&S = +-inf dB)
        self.criterion_inf = False
        #: which output was not finite
        self.what = ""


def _alarm(signum, frame):
    raise Hang(f"a fuzz case ran longer than {HANG_SECONDS} s")


def _record(entry: dict) -> None:
    path = os.environ.get("SVMTUNE_FUZZ_LOG")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")


def names_argument(message: str, names: Iterable[str]) -> bool:
    """Whether ``message`` names one of ``names`` as a word (``X``, ``sample_weight``, an
    option, a file)."""
    return any(re.search(rf"(?<![\w]){re.escape(str(n))}(?![\w])", message) for n in names)


@contextlib.contextmanager
def case(suite: str, names: Iterable[str], *, expected: tuple[type, ...] = EXPECTED):
    """Run one generated case under the contract (see the module docstring)."""
    names = list(names)
    out = Outcome()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    t0 = time.perf_counter()
    kind, error = "ok", None
    try:
        yield out
    except expected as exc:
        kind, error = type(exc).__name__, exc
    except Hang:
        kind = "hang"
        raise
    except BaseException as exc:  # unexpected: recorded, then the case fails
        kind = "unexpected:" + type(exc).__name__
        raise
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        _record(
            {
                "suite": suite,
                "outcome": kind,
                "seconds": round(time.perf_counter() - t0, 4),
                "nonfinite": out.nonfinite,
                "criterion_inf": out.criterion_inf,
                "test": os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0],
                "what": out.what,
                "message": None if error is None else str(error)[:200],
            }
        )
    assert not out.nonfinite, f"a non-finite output: {out.what}"
    if error is not None:
        msg = str(error)
        assert names_argument(msg, names), (
            f"{type(error).__name__} does not name the offending argument (one of {names}): "
            f"{msg[:300]}"
        )


def finite(out: Outcome, value, what: str) -> bool:
    """Whether ``value`` (an array or a number) is finite; records ``what`` was not in
    ``out``."""
    a = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(a)):
        out.nonfinite = True
        out.what = out.what or f"{what} = {np.array2string(a.ravel()[:6], precision=3)}"
        return False
    return True


def examples(ci: int, long: int):
    """Hypothesis settings of a test that runs ``ci`` examples in the CI profile and
    ``long`` times ``SVMTUNE_FUZZ_SCALE`` in the long one (cheap tests take more)."""
    from hypothesis import settings

    if os.environ.get("SVMTUNE_FUZZ_PROFILE", "ci") == "long":
        scale = float(os.environ.get("SVMTUNE_FUZZ_SCALE", "1"))
        return settings(max_examples=max(1, int(long * scale)))
    return settings(max_examples=ci)
