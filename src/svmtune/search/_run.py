"""The book-keeping of one call of :func:`svmtune.search.gradient.minimize_log_params`.

:class:`_Run` wraps the objective for L-BFGS-B: it records every evaluation, keeps the best
point seen, stops a line search whose trial points close in on a jump of a piecewise smooth
objective (``xtol``) and abandons a continuation across a jump that finds nothing lower within
its probe budget (the module docstring of :mod:`svmtune.search.gradient`).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from svmtune._progress import current as current_progress
from svmtune._progress import describe
from svmtune._warnings import user_stacklevel

#: ``fun(theta, state) -> (value, grad, new_state)`` (:func:`minimize_log_params`)
Objective = Callable[[np.ndarray, Any], tuple[float, np.ndarray, Any]]

_LN2 = float(np.log(2.0))


def _scalar_items(state: Any) -> dict[str, Any]:
    if not isinstance(state, Mapping):
        return {}
    out = {}
    for k, v in state.items():
        if isinstance(v, bool | int | float | str | np.integer | np.floating | np.bool_):
            out[str(k)] = v.item() if isinstance(v, np.generic) else v
    return out


class _StepTooSmall(Exception):
    """Raised inside a line search whose trial point is closer than ``xtol`` to the iterate."""


class _NoGain(Exception):
    """Raised when a continuation across a jump has not improved within its probe budget."""


class _Stopped(Exception):
    """Raised when the objective's state asks to end the search (``"stop_search"``)."""


#: evaluations a continuation across a jump may spend before it must have found a value below
#: the best of its start (otherwise it is abandoned)
_PROBE = 5


class _Run:
    """Book-keeping of one call of :func:`minimize_log_params`: evaluations, history, best."""

    def __init__(self, fun: Objective, names, lo, hi, xtol: float):
        self.fun, self.names, self.lo, self.hi, self.xtol = fun, names, lo, hi, xtol
        self.history: list[dict[str, Any]] = []
        self.best: dict[str, Any] = {"value": np.inf}
        self.counters = {"evals": 0, "fits": 0, "iter": 0}
        self.t_start = time.perf_counter()
        self.worst_finite = 0.0
        self.nonfinite_warned = False
        self.stop_reason: str | None = None

    def new_start(self, index: int, x0: np.ndarray) -> None:
        self.start = index
        self.segment = 0
        self.start_best = np.inf
        self.probe_left = 0  # 0: no probe running
        self.to_beat = np.inf
        self.state: Any = None
        self.anchor = np.clip(np.asarray(x0, dtype=float), self.lo, self.hi)
        self.last_x: np.ndarray | None = None
        self.last_out: tuple[float, np.ndarray] | None = None
        self.seen: dict[bytes, int] = {}
        self.new_line_search(np.inf)

    def new_segment(self, x0: np.ndarray) -> None:
        """Continue the current start from ``x0`` (keeps the warm-start state); the segment is
        abandoned unless one of its first ``_PROBE`` evaluations beats the start's best."""
        self.segment += 1
        self.anchor = np.clip(np.asarray(x0, dtype=float), self.lo, self.hi)
        self.probe_left = _PROBE
        self.to_beat = self.start_best
        self.new_line_search(np.inf if self.last_out is None else self.last_out[0])

    def new_line_search(self, anchor_value: float) -> None:
        """Forget the trial points of the last line search; the new one starts at the anchor."""
        self.anchor_value = anchor_value
        self.trials: list[tuple[np.ndarray, tuple[float, np.ndarray]]] = []
        self.stall: tuple[np.ndarray, tuple[float, np.ndarray]] | None = None

    def check_step(self, x: np.ndarray) -> None:
        """Raise :class:`_StepTooSmall` if ``x`` is closer than ``xtol`` to the iterate (a
        backtrack shrinking onto it) or to an earlier trial point of the same line search (a
        bracket shrinking onto a jump).  For a bracket, ``stall`` is set to the latest trial
        point above the iterate's value and its output: the far side of the jump, where the
        continuation starts (after a backtrack that is the last trial point, the default)."""
        if self.xtol <= 0:
            return
        if 0 < np.max(np.abs(x - self.anchor)) < self.xtol:
            raise _StepTooSmall
        for p, _ in self.trials:
            if 0 < np.max(np.abs(x - p)) < self.xtol:
                above = [t for t in self.trials if t[1][0] > self.anchor_value]
                self.stall = above[-1] if above else None
                raise _StepTooSmall

    def evaluate(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        x = np.clip(np.asarray(x, dtype=float), self.lo, self.hi)
        if self.last_x is not None and np.array_equal(x, self.last_x):
            return self.last_out
        self.check_step(x)
        dim = x.shape[0]
        t0 = time.perf_counter()
        value, grad, new_state = self.fun(x.copy(), self.state)
        eval_time = time.perf_counter() - t0
        value = float(value)
        grad = np.asarray(grad, dtype=float).reshape(dim)
        finite = bool(np.isfinite(value) and np.all(np.isfinite(grad)))
        self.counters["evals"] += 1
        nf = 1
        if isinstance(new_state, Mapping) and "n_fits" in new_state:
            nf = int(new_state["n_fits"])
        self.counters["fits"] += nf
        rec: dict[str, Any] = {
            "start": self.start,
            "segment": self.segment,
            "eval": self.counters["evals"],
            "theta": x.tolist(),
        }
        for j, nm in enumerate(self.names):
            rec[nm] = float(np.exp(x[j]))
            rec[f"log2_{nm}"] = float(x[j] / _LN2)
        rec["value"] = value
        rec["grad_norm"] = float(np.linalg.norm(grad)) if finite else float("nan")
        rec["time"] = time.perf_counter() - self.t_start
        rec["eval_time"] = eval_time
        rec["accepted"] = False
        rec.update(_scalar_items(new_state))
        self.history.append(rec)
        reporter = current_progress()
        if reporter is not None:
            reporter.advance(1, "gradient steps")
            reporter.line(f"step {rec['eval']}: {describe(rec)}: objective {value:.6g}")
        self.seen[x.tobytes()] = len(self.history) - 1
        if isinstance(new_state, Mapping) and new_state.get("stop_search"):
            self.stop_reason = str(new_state["stop_search"])
            if not np.isfinite(self.best["value"]):
                raise ValueError(
                    "the objective asked to stop the search before any finite evaluation"
                )
            raise _Stopped
        if finite:
            self.worst_finite = max(self.worst_finite, value)
            self.state = new_state
            self.start_best = min(self.start_best, value)
            if value < self.best["value"]:
                self.best.update(
                    value=value, theta=x.copy(), grad=grad.copy(), state=new_state, start=self.start
                )
            out = (value, grad)
        else:
            # L-BFGS-B cannot digest inf/NaN: report a value above everything seen so far
            # with a zero gradient, so that the line search backtracks.
            if not self.nonfinite_warned:
                warnings.warn(
                    "objective returned a non-finite value at "
                    f"{dict(zip(self.names, np.exp(x).round(6).tolist()))}; treating the point "
                    "as infeasible",
                    RuntimeWarning,
                    stacklevel=user_stacklevel(),
                )
                self.nonfinite_warned = True
            out = (self.worst_finite + abs(self.worst_finite) + 1.0, np.zeros(dim))
        self.last_x, self.last_out = x, out
        self.trials.append((x, out))
        if self.probe_left:
            if finite and value < self.to_beat:
                self.probe_left = 0
            else:
                self.probe_left -= 1
                if not self.probe_left:
                    raise _NoGain
        return out

    def callback(self, xk) -> None:
        self.counters["iter"] += 1
        xk = np.clip(np.asarray(getattr(xk, "x", xk), dtype=float), self.lo, self.hi)
        self.anchor = xk
        idx = self.seen.get(xk.tobytes())
        if idx is not None:
            self.history[idx]["accepted"] = True
        self.new_line_search(self.history[idx]["value"] if idx is not None else np.inf)
