"""Bounded gradient search over log-hyperparameters, shared by RBSVM, SpanSVM and RMSVM.

The three gradient-based methods of the RBSVM paper (RBSVM, SpanSVM, RMSVM; RBSVM
Algorithm 1 and §IV-A) minimise a smooth estimate of the generalisation error over
``theta = (log sigma, log C)`` with its exact gradient.  :func:`minimize_log_params` is the one
optimiser they share:

* scipy's L-BFGS-B on ``theta`` in natural-log units (the paper uses Polak-Ribiere conjugate
  gradients without bounds; a bounded quasi-Newton method keeps the search inside the same box
  the grid baselines search, and needs fewer SVM fits);
* bounds given in log2 units (default ``[-8, 8]`` for every coordinate, the paper's grid range);
* stop when the relative change of the objective,
  ``(J_k - J_{k+1}) / max(|J_k|, |J_{k+1}|, 1)``, falls below ``tol`` (scipy's ``ftol``), or
  after ``max_iter`` iterations / ``max_eval`` objective evaluations;
* optional restarts from points drawn uniformly (in log2 units) in the box, with
  ``random_state``;
* continuation across jumps (``jump_restarts``, below);
* every evaluation is recorded (``theta``, value, gradient norm, elapsed time and the scalar
  entries of the objective's state such as ``n_sv``), and the best point *seen* is returned,
  which is not always the last iterate of a line search that ended abnormally.

The objective
-------------
``fun(theta, state) -> (value, grad, new_state)``.  ``theta`` is the natural-log
hyperparameter vector, ``state`` is whatever the *previous* evaluation returned (``None`` on
the first call of every start): objectives use it to warm-start the SVM solver from the
previous support set, since hyperparameters move smoothly along the path.  If ``new_state`` is
a mapping, its scalar entries (int, float, bool, str) are copied into the history and its
optional entry ``"n_fits"`` says how many SVM trainings the evaluation spent (default 1).
A true entry ``"stop_search"`` (a string saying why) ends the whole search at once: that
evaluation is recorded and counted but not used, and the result is the best point evaluated
before it, with ``stopped`` set to the reason (the low-rank searches use it to re-choose their
landmarks when an evaluated width needs finer ones).

Scale the objective so that its gradient is of order one (e.g. a mean over the training points
rather than a sum): L-BFGS-B's first step is ``-grad`` (then projected on the box), so a gradient
of order ``n`` sends the first trial point to a corner of the box.

Objectives built on a support set are only piecewise smooth: they may jump where the support
set changes.  A line search that meets such a jump shrinks its step towards zero and would
otherwise spend its whole budget of trial points there; the search therefore also stops when a
trial point comes closer than ``xtol`` (log2 units) to the current iterate, or to an earlier
trial point of the same line search.  The second case is a line search that brackets a jump
away from the iterate: the near side is lower than the iterate but, the objective being linear
there, never satisfies the curvature condition, the far side is higher, and the bracket closes
in on the jump from both sides (on the cmc task, fold 0, RBSVM spent 20 of its 60 evaluations
in one such bracket narrowing from 0.5 to 0.001 log2 units; with the test it needs 29 in all
and ends 0.006 (sigma) and 0.025 (C) log2 units from the old end point).

Such a stop (or scipy's "ABNORMAL" line-search termination, the same situation) is not a
minimum: the objective still decreases beyond the jump (the gradient on both sides typically
points the same way; on the balance-scale "B vs rest" task RBSVM's line search stalled at an
upward jump of 4 % of ``J`` and the objective fell from 0.234 to 0.156 beyond it).  After a
stall the search therefore starts L-BFGS-B again from a trial point on the far side of the
jump -- the last one evaluated when the steps shrank onto the iterate, the latest one above
the iterate's value when a bracket closed -- with the warm-start state of the last
evaluation, as long as the previous segment lowered the best value by more than ``tol``
(relative) and at most ``jump_restarts`` times per start.  A continuation that has not found
a value below the start's best within its first 5 evaluations is abandoned (on balance-2 the
second one already did), so a jump that hides nothing costs at most 5 evaluations.  The best
point seen over all segments is returned, so a continuation can only improve the result.

The data-driven start
---------------------
:func:`initial_sigma` gives the starting RBF width instead of the paper's ``sigma = 1``
(Algorithm 1, step 1), which ignores the scale of the data:

* ``"median"`` (default): the median heuristic, ``sigma0 = sqrt(median ||x_i - x_j||^2)`` over
  the pairs ``i < j`` at positive distance (duplicates excluded).  For standardised data with
  ``d`` roughly independent features this is close to ``sqrt(2 d)``.
* ``"sqrt_d"``: ``sigma0 = sqrt(d)``, the scale of distances between standardised points
  (``E ||x - x'||^2 = 2 d`` for independent standardised features, so ``sigma0^2 = d`` puts
  the typical kernel value near ``exp(-1)``).

and ``log C = 0`` (``C = 1``; the reading notes interpret Algorithm 1's "C = 0" as ``log C``).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import minimize
from sklearn.utils.validation import check_random_state

from svmtune._progress import current as current_progress
from svmtune._progress import describe
from svmtune._validation import check_dense_memory, validate_sample_weight
from svmtune._warnings import user_stacklevel
from svmtune.kernels import squared_distances
from svmtune.svm import ConvergenceWarning

__all__ = [
    "exact_search_start",
    "BoundWarning",
    "check_search_options",
    "GradientSearchResult",
    "initial_sigma",
    "minimize_log_params",
    "START_RULES",
]

#: rules accepted by :func:`initial_sigma`
START_RULES = ("median", "sqrt_d")

_LN2 = float(np.log(2.0))


def _check_box(name: str, box) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in box)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lo, hi) in log2 units, got {box!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"{name} must satisfy lo < hi (finite, log2 units), got {box!r}")
    return lo, hi


def _check_positive(name: str, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return v


def _check_int(name: str, value, minimum: int) -> int:
    from svmtune._validation import check_int_option

    return check_int_option(name, value, minimum=minimum)


def _check_start(start):
    msg = (
        f"start must be one of {START_RULES}, a pair (sigma, C) or a dict with keys "
        f"sigma and C; got {start!r}"
    )
    if isinstance(start, str):
        if start not in START_RULES:
            raise ValueError(msg)
        return start
    try:
        s0, c0 = (start["sigma"], start["C"]) if isinstance(start, dict) else start
        s0, c0 = float(s0), float(c0)
    except (TypeError, ValueError, KeyError):
        raise ValueError(msg) from None
    if not (np.isfinite(s0) and s0 > 0 and np.isfinite(c0) and c0 > 0):
        raise ValueError(f"start sigma and C must be positive and finite, got {start!r}")
    return (s0, c0)


def check_search_options(
    *, log2_sigma, log2_C, start, C0, restarts, tol, max_iter, max_eval, jump_restarts=3
) -> dict:
    """Validate the options shared by the gradient selectors (RBSVM, SpanSVM, RMSVM).

    Returns them normalised (boxes as float pairs in log2 units, ``start`` as a rule name or
    a ``(sigma, C)`` pair, integers as ``int``); raises ``ValueError`` naming the option.
    """
    return {
        "log2_sigma": _check_box("log2_sigma", log2_sigma),
        "log2_C": _check_box("log2_C", log2_C),
        "start": _check_start(start),
        "C0": _check_positive("C0", C0),
        "restarts": _check_int("restarts", restarts, 0),
        "jump_restarts": _check_int("jump_restarts", jump_restarts, 0),
        "tol": _check_positive("tol", tol),
        "max_iter": _check_int("max_iter", max_iter, 1),
        "max_eval": None if max_eval is None else _check_int("max_eval", max_eval, 1),
    }


Objective = Callable[[np.ndarray, Any], tuple[float, np.ndarray, Any]]


class BoundWarning(UserWarning):
    """A hyperparameter ended on a bound of its search range."""


# ---------------------------------------------------------------------------------------------
# Data-driven start
# ---------------------------------------------------------------------------------------------
def initial_sigma(
    D2: np.ndarray | None = None,
    *,
    rule: str = "median",
    n_features: int | None = None,
    max_pairs: int = 2_000_000,
    random_state: int | np.random.RandomState | None = 0,
) -> float:
    """Starting RBF width from the data (replaces RBSVM Algorithm 1's ``sigma = 1``).

    Parameters
    ----------
    D2 : ndarray (n, n), optional
        Pairwise squared distances (needed for ``rule="median"``).
    rule : {"median", "sqrt_d"}
        ``"median"``: ``sqrt`` of the median positive squared distance over pairs ``i < j``
        (the median heuristic).  ``"sqrt_d"``: ``sqrt(n_features)``.
    n_features : int, optional
        Number of features (needed for ``rule="sqrt_d"``).
    max_pairs : int
        Above this many pairs the median is taken over ``max_pairs`` random pairs (drawn with
        replacement; pairs ``i = j`` dropped).
    random_state : int, RandomState or None
        Used only for that subset.

    Returns
    -------
    float
        ``sigma0 > 0``.  If every pair of points coincides, 1.0 with a warning.

    Raises
    ------
    ValueError
        If ``D2`` is not a square matrix of at least two points, or the distances used hold
        NaN, infinity or negative values; if ``n_features`` or ``max_pairs`` is not a
        positive integer.
    """
    if rule not in START_RULES:
        raise ValueError(f"start rule must be one of {START_RULES}, got {rule!r}")
    if rule == "sqrt_d":
        if n_features is None:
            raise ValueError("rule='sqrt_d' needs n_features >= 1")
        return float(np.sqrt(_check_int("n_features", n_features, 1)))
    if D2 is None:
        raise ValueError("rule='median' needs the squared-distance matrix D2")
    max_pairs = _check_int("max_pairs", max_pairs, 1)
    D2 = np.asarray(D2, dtype=float)
    if D2.ndim != 2 or D2.shape[0] != D2.shape[1] or D2.shape[0] < 2:
        raise ValueError(
            f"D2 must be the square matrix of pairwise squared distances of at least two "
            f"points, got shape {D2.shape}"
        )
    n = D2.shape[0]
    if n * (n - 1) // 2 > max_pairs:
        rng = check_random_state(random_state)
        iu, ju = rng.randint(0, n, max_pairs), rng.randint(0, n, max_pairs)
        keep = iu != ju
        iu, ju = iu[keep], ju[keep]
    else:
        iu, ju = np.triu_indices(n, k=1)
    vals = D2[iu, ju]
    if not np.all(np.isfinite(vals)) or np.any(vals < 0):
        raise ValueError(
            "D2 holds NaN, infinity or negative values; squared distances are finite and >= 0"
        )
    vals = vals[vals > 0]
    if vals.size == 0:
        warnings.warn(
            "all training points coincide; starting from sigma = 1",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
        return 1.0
    return float(np.sqrt(np.median(vals)))


def initial_theta(
    D2: np.ndarray | None,
    start,
    C0: float,
    *,
    n_features: int,
    random_state=None,
    sample_weight: np.ndarray | None = None,
) -> np.ndarray:
    """Starting point ``theta = (log sigma0, log C0)`` of a gradient search over (sigma, C).

    ``start`` is a ``(sigma, C)`` pair, taken as it is, or a rule of :func:`initial_sigma`
    (then ``C0`` is the starting C).  With ``sample_weight`` the rule sees only the points
    of positive weight (a point of weight 0 is one left out).

    Raises
    ------
    ValueError
        If ``start`` is neither a rule nor a positive finite ``(sigma, C)`` pair, ``C0`` is
        not positive and finite, or ``sample_weight`` does not give one finite non-negative
        weight per row of ``D2``.
    """
    start = _check_start(start)
    if isinstance(start, tuple):
        return np.log(np.asarray(start, dtype=float))
    _check_positive("C0", C0)
    if D2 is not None and sample_weight is not None:
        pos = validate_sample_weight(sample_weight, np.shape(D2)[0]) > 0
        D2 = D2[np.ix_(pos, pos)]
    sigma0 = initial_sigma(D2, rule=start, n_features=n_features, random_state=random_state)
    return np.log([sigma0, C0])


#: lower estimate of the peak memory of an exact gradient search (RBSVM, smoothed span,
#: radius-margin) in dense n x n float64 matrices: peak resident memory over n^2 * 8 bytes
#: measured 8.2 (RBSVM), 10.2 (smoothed span) and 8.3 (radius-margin) at n = 3,000, 5
#: features, binary
EXACT_DENSE_MATRICES = 6


def exact_search_start(
    X: np.ndarray, start, C0: float, *, method: str, random_state=None, sample_weight=None
) -> tuple[np.ndarray, np.ndarray]:
    """``(D2, theta0)`` of an exact (n x n) gradient search named ``method``: the squared
    distances and the starting point of :func:`initial_theta`.

    Raises ``MemoryError`` first when the search's dense matrices cannot fit in the memory
    available (:func:`svmtune._validation.check_dense_memory`), naming the low-rank form of
    the method as the alternative.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise ValueError(
            f"X must be a finite 2-D array (n_samples, n_features), got shape {X.shape}"
        )
    check_dense_memory(
        X.shape[0],
        matrices=EXACT_DENSE_MATRICES,
        method=method,
        alternative=f"use method='{method}_lowrank' (O(n m) memory) or fewer samples",
    )
    D2 = squared_distances(X)
    theta0 = initial_theta(
        D2,
        start,
        C0,
        n_features=X.shape[1],
        random_state=random_state,
        sample_weight=sample_weight,
    )
    return D2, theta0


# ---------------------------------------------------------------------------------------------
# Result type
# ---------------------------------------------------------------------------------------------
@dataclass
class GradientSearchResult:
    """Outcome of :func:`minimize_log_params`.

    Attributes
    ----------
    theta : ndarray
        Best point seen, natural-log hyperparameters.
    value : float
        Objective at ``theta``.
    grad : ndarray
        Gradient at ``theta``.
    state : Any
        The objective's state at ``theta`` (e.g. the SVM solutions there).
    names : tuple of str
    n_evals : int
        Objective evaluations over all starts.
    n_fits : int
        SVM trainings spent (sum of the states' ``n_fits``, 1 per evaluation by default).
    n_iter : int
        L-BFGS-B iterations over all starts.
    converged : bool
        Whether the start that produced ``theta`` stopped on its tolerance (``False`` also
        when its line search could not make progress, typically at a kink of a piecewise
        smooth objective; ``message`` says which).
    message : str
        scipy's message for that start (of its last segment).
    segments : int
        L-BFGS-B runs of that start: 1 plus its continuations across jumps.
    at_bound : list of str
        ``"<name> (lower)"`` / ``"<name> (upper)"`` for coordinates of ``theta`` on a bound.
    starts : list of ndarray
        Starting points (natural log) in the order they were run.
    history : list of dict
        One flat dict per evaluation (see :func:`minimize_log_params`).
    stopped : str or None
        The objective's ``"stop_search"`` reason if it ended the search (module docstring).
    warnings : list of (category, message)
        The end-of-search warnings (the best point on a bound, its start out of iterations),
        emitted by :func:`minimize_log_params` unless ``emit_warnings=False``, then by
        :meth:`emit_warnings`.
    """

    theta: np.ndarray
    value: float
    grad: np.ndarray
    state: Any
    names: tuple[str, ...]
    n_evals: int
    n_fits: int
    n_iter: int
    converged: bool
    message: str
    segments: int = 1
    at_bound: list[str] = field(default_factory=list)
    starts: list[np.ndarray] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    stopped: str | None = None
    warnings: list[tuple[type[Warning], str]] = field(default_factory=list)

    def emit_warnings(self) -> None:
        """Emit :attr:`warnings`, attributed to the first line outside svmtune."""
        for category, message in self.warnings:
            warnings.warn(message, category, stacklevel=user_stacklevel())

    @property
    def params(self) -> dict[str, float]:
        """The best hyperparameters on their natural scale, ``{name: exp(theta)}``."""
        return {n: float(np.exp(t)) for n, t in zip(self.names, self.theta)}

    def diagnostics(self) -> dict[str, Any]:
        """The optimiser's diagnostics for a selection's ``info``: ``n_iter``, ``n_evals``,
        ``converged``, ``message``, ``segments``, ``at_bound``, ``start_<name>`` (the first
        start on the natural scale, clipped to the box) and ``grad_norm`` at ``theta``."""
        start = np.exp(self.starts[0])
        return {
            "n_iter": self.n_iter,
            "n_evals": self.n_evals,
            "converged": self.converged,
            "message": self.message,
            "segments": self.segments,
            "at_bound": list(self.at_bound),
            **{f"start_{n}": float(v) for n, v in zip(self.names, start)},
            "grad_norm": float(np.linalg.norm(self.grad)),
        }


# ---------------------------------------------------------------------------------------------
# Optimiser
# ---------------------------------------------------------------------------------------------
def _check_bounds(bounds, dim: int) -> np.ndarray:
    if bounds is None:
        bounds = [(-8.0, 8.0)] * dim
    b = np.asarray(bounds, dtype=float)
    if b.shape != (dim, 2):
        raise ValueError(f"bounds must be {dim} pairs (lo, hi) in log2 units, got shape {b.shape}")
    if not np.all(np.isfinite(b)) or np.any(b[:, 0] >= b[:, 1]):
        raise ValueError(f"every bound must be finite with lo < hi (log2 units), got {b.tolist()}")
    return b


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


def minimize_log_params(
    fun: Objective,
    theta0: Sequence[float] | np.ndarray,
    *,
    bounds: Sequence[tuple[float, float]] | None = None,
    names: Sequence[str] | None = None,
    tol: float = 1e-6,
    gtol: float = 1e-8,
    xtol: float = 1e-3,
    max_iter: int = 100,
    max_eval: int | None = None,
    restarts: int = 0,
    jump_restarts: int = 3,
    random_state: int | np.random.RandomState | None = None,
    warn_at_bound: bool = True,
    emit_warnings: bool = True,
) -> GradientSearchResult:
    """Minimise ``fun`` over natural-log hyperparameters inside a log2 box with L-BFGS-B.

    Parameters
    ----------
    fun : callable
        ``fun(theta, state) -> (value, grad, new_state)``; see the module docstring.
        ``grad`` is the gradient with respect to the natural-log ``theta``.
    theta0 : array of shape (p,)
        First starting point, natural log (e.g. ``[log sigma0, 0.0]``); clipped into the box.
    bounds : sequence of (lo, hi), optional
        Box in **log2** units per coordinate; default ``(-8, 8)`` each (RBSVM §IV-A).
    names : sequence of str, optional
        Coordinate names for the history and warnings; default ``("sigma", "C")`` when
        ``p == 2``, else ``("theta0", "theta1", ...)``.
    tol : float
        Stop when the relative change of the objective per iteration is below ``tol``.
    gtol : float
        Stop when the largest projected gradient component is below ``gtol`` (absolute).
    xtol : float
        Stop when a line search tries a point closer than ``xtol`` (log2 units, max over
        coordinates) to the current iterate or to one of its earlier trial points.
        Objectives built on a changing support set are only piecewise smooth and may jump
        where the support set changes; there L-BFGS-B's line search shrinks its step towards
        zero (or its bracket onto the jump) and would otherwise spend its whole budget of
        trial points.  ``xtol = 0`` disables the test.
    max_iter : int
        Iterations per start (all its segments together).
    max_eval : int, optional
        Objective evaluations per start, all its segments together (default ``5 * max_iter``).
    restarts : int
        Further starts drawn uniformly in the box (log2 units) from ``random_state``; each starts
        with ``state=None``.
    jump_restarts : int
        After a line search stalls (the ``xtol`` stop or scipy's abnormal line-search end)
        L-BFGS-B is started again from the stalled line search's trial point on the far side
        of the jump, at most this many times per start, only while the previous segment
        lowered the best value and abandoning a continuation that finds nothing lower within
        5 evaluations (module docstring).  0 disables.
    random_state : int, RandomState or None
    warn_at_bound : bool
        Warn (:class:`BoundWarning`) when the best point lies on a bound.  A
        :class:`~svmtune.svm.ConvergenceWarning` warns when the start that produced the best
        point ran out of iterations or evaluations.
    emit_warnings : bool
        Emit those end-of-search warnings here.  With False they are only kept in the result's
        ``warnings``, for a caller that runs several searches and reports the last one's
        (:meth:`GradientSearchResult.emit_warnings`).

    Returns
    -------
    GradientSearchResult
        Best point over all evaluations.  History entries hold ``start``, ``eval``,
        ``theta`` (list, natural log), ``<name>`` and ``log2_<name>`` per coordinate,
        ``segment`` (0, then 1, 2, ... after each continuation across a jump),
        ``value``, ``grad_norm``, ``time`` (seconds since the search began), ``eval_time``,
        ``accepted`` (the point became an L-BFGS-B iterate) and the state's scalar entries.
    """
    theta0 = np.asarray(theta0, dtype=float).ravel()
    dim = theta0.shape[0]
    if dim < 1 or not np.all(np.isfinite(theta0)):
        raise ValueError(f"theta0 must be a finite non-empty vector, got {theta0}")
    b2 = _check_bounds(bounds, dim)
    lo, hi = b2[:, 0] * _LN2, b2[:, 1] * _LN2
    if names is None:
        names = ("sigma", "C") if dim == 2 else tuple(f"theta{j}" for j in range(dim))
    names = tuple(str(n) for n in names)
    if len(names) != dim:
        raise ValueError(f"names has {len(names)} entries for a {dim}-dimensional theta")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol}")
    if not (np.isfinite(gtol) and gtol >= 0):
        raise ValueError(f"gtol must be a non-negative number, got {gtol}")
    if not (np.isfinite(xtol) and xtol >= 0):
        raise ValueError(f"xtol must be a non-negative number, got {xtol}")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter}")
    max_iter = int(max_iter)
    max_eval = 5 * max_iter if max_eval is None else max_eval
    if int(max_eval) != max_eval or max_eval < 1:
        raise ValueError(f"max_eval must be a positive integer, got {max_eval}")
    max_eval = int(max_eval)
    if int(restarts) != restarts or restarts < 0:
        raise ValueError(f"restarts must be a non-negative integer, got {restarts}")
    if int(jump_restarts) != jump_restarts or jump_restarts < 0:
        raise ValueError(f"jump_restarts must be a non-negative integer, got {jump_restarts}")
    rng = check_random_state(random_state)

    starts = [np.clip(theta0, lo, hi)]
    for _ in range(int(restarts)):
        starts.append(rng.uniform(b2[:, 0], b2[:, 1]) * _LN2)

    run = _Run(fun, names, lo, hi, xtol * _LN2)
    per_start: list[dict[str, Any]] = []
    stalled_msg = f"CONVERGENCE: line-search step below xtol = {xtol:g} (log2)"
    for s_idx, x0 in enumerate(starts):
        run.new_start(s_idx, x0)
        evals0, iter0 = run.counters["evals"], run.counters["iter"]
        x, before = x0, np.inf
        while True:
            budget = max_eval - (run.counters["evals"] - evals0)
            iters = max_iter - (run.counters["iter"] - iter0)
            if budget < 1 or iters < 1:
                status, message = 1, "STOP: iteration or evaluation budget used up by the segments"
                break
            try:
                res = minimize(
                    run.evaluate,
                    x,
                    jac=True,
                    method="L-BFGS-B",
                    bounds=list(zip(lo, hi)),
                    callback=run.callback,
                    options={"ftol": tol, "gtol": gtol, "maxiter": iters, "maxfun": budget},
                )
                status, message = int(res.status), str(res.message)
                if "ABNORMAL" not in message.upper():
                    break
                # scipy's line search gave up: a stall at a jump as well
            except _StepTooSmall:
                status, message = 0, stalled_msg
            except _NoGain:
                status, message = 0, stalled_msg + "; no lower value beyond the jump"
                break
            except _Stopped:
                status, message = 0, f"STOP: {run.stop_reason}"
                break
            # stalled at a jump: continue from the far side (``run.stall``, else the last
            # trial point) while the segment that just ended lowered the best value
            after = run.start_best
            if (
                run.segment >= jump_restarts
                or run.last_x is None
                or not before - after > tol * max(abs(after), 1.0)
            ):
                break
            before = after
            if run.stall is not None:  # the continuation's first call reuses its output
                run.last_x, run.last_out = run.stall
            x = run.last_x
            run.new_segment(x)
        per_start.append(
            {
                "converged": status == 0,
                "limit": status == 1,
                "message": message,
                "segments": run.segment + 1,
            }
        )
        if run.stop_reason is not None:
            break

    history, best, counters = run.history, run.best, run.counters
    if not np.isfinite(best["value"]):
        raise FloatingPointError(
            "the objective was non-finite at every evaluated point; check the data "
            "(constant features, NaN) and the bounds"
        )
    theta = best["theta"]
    sides = []
    for j in range(dim):
        t2 = theta[j] / _LN2
        if t2 <= b2[j, 0] + 1e-6:
            sides.append((j, "lower"))
        elif t2 >= b2[j, 1] - 1e-6:
            sides.append((j, "upper"))
    at_bound = [f"{names[j]} ({side})" for j, side in sides]
    notes: list[tuple[type[Warning], str]] = []
    if warn_at_bound:
        for j, side in sides:
            notes.append(
                (
                    BoundWarning,
                    f"{names[j]} = 2^{theta[j] / _LN2:.2f} = {np.exp(theta[j]):.4g} is on the "
                    f"{side} bound of its search range [2^{b2[j, 0]:g}, 2^{b2[j, 1]:g}]; the "
                    "optimum may lie outside it: widen the bounds or check the feature scaling",
                )
            )
    info = per_start[best["start"]]
    if info["limit"]:
        notes.append(
            (ConvergenceWarning, f"gradient search stopped before its tolerance: {info['message']}")
        )
    result = GradientSearchResult(
        theta=theta,
        value=float(best["value"]),
        grad=best["grad"],
        state=best["state"],
        names=names,
        n_evals=counters["evals"],
        n_fits=counters["fits"],
        n_iter=counters["iter"],
        converged=info["converged"],
        message=info["message"],
        segments=info["segments"],
        at_bound=at_bound,
        starts=starts[: len(per_start)],
        history=history,
        stopped=run.stop_reason,
        warnings=notes,
    )
    if emit_warnings:
        result.emit_warnings()
    return result
