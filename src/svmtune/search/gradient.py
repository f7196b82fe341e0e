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

Objectives built on a support set are only piecewise smooth: they jump where the support set
changes, and a line search that meets a jump either shrinks its step onto the iterate or
brackets the jump from both sides (the near side, linear there, never satisfies the curvature
condition) until its budget is spent.  The search therefore also stops when a trial point comes
closer than ``xtol`` (log2 units) to the current iterate or to an earlier trial point of the
same line search.  Such a stop, like scipy's "ABNORMAL" line-search end, is not a minimum: the
objective typically keeps falling beyond the jump.  So L-BFGS-B starts again from a trial point
on the far side (the last one evaluated when the steps shrank onto the iterate, the latest one
above the iterate's value when a bracket closed), with the warm-start state of the last
evaluation, while the previous segment lowered the best value by more than ``tol`` (relative)
and at most ``jump_restarts`` times per start.  A continuation that finds no value below the
start's best within its first 5 evaluations is abandoned, so a jump that hides nothing costs
at most 5 evaluations; the best point over all segments is returned, so a continuation can
only improve the result.  The cases that led to these rules (cmc, balance-scale) are in
``docs/notes/rbsvm_gradient.md``.

The data-driven start of the search is :func:`svmtune.search.start.initial_theta`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import minimize
from sklearn.utils.validation import check_random_state

from svmtune._option_values import check_int_option, check_log2_range, check_positive
from svmtune._warnings import user_stacklevel
from svmtune.exceptions import BoundWarning, ConvergenceWarning
from svmtune.search._run import _LN2, Objective, _NoGain, _Run, _StepTooSmall, _Stopped

__all__ = [
    "GradientSearchResult",
    "minimize_log_params",
]


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
    pairs = list(bounds) if isinstance(bounds, (list, tuple, np.ndarray)) else None
    if pairs is None or len(pairs) != dim:
        raise ValueError(f"bounds must be {dim} pairs (lo, hi) in log2 units, got {bounds!r}")
    return np.array([check_log2_range(f"bounds[{i}]", b) for i, b in enumerate(pairs)])


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
    theta0, b2, names, max_iter, max_eval = _check_search_args(
        theta0, bounds, names, tol, gtol, xtol, max_iter, max_eval, restarts, jump_restarts
    )
    lo, hi = b2[:, 0] * _LN2, b2[:, 1] * _LN2
    rng = check_random_state(random_state)
    starts = [np.clip(theta0, lo, hi)]
    for _ in range(int(restarts)):
        starts.append(rng.uniform(b2[:, 0], b2[:, 1]) * _LN2)

    run = _Run(fun, names, lo, hi, xtol * _LN2)
    options = {"ftol": tol, "gtol": gtol}
    stalled_msg = f"CONVERGENCE: line-search step below xtol = {xtol:g} (log2)"
    per_start: list[dict[str, Any]] = []
    for s_idx, x0 in enumerate(starts):
        per_start.append(
            _run_start(run, s_idx, x0, options, max_iter, max_eval, jump_restarts, stalled_msg)
        )
        if run.stop_reason is not None:
            break

    best, counters = run.best, run.counters
    if not np.isfinite(best["value"]):
        raise FloatingPointError(
            "the objective was non-finite at every evaluated point; check the data "
            "(constant features, NaN) and the bounds"
        )
    theta = best["theta"]
    at_bound, notes = _bound_notes(theta, b2, names, warn_at_bound)
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
        history=run.history,
        stopped=run.stop_reason,
        warnings=notes,
    )
    if emit_warnings:
        result.emit_warnings()
    return result


def _check_search_args(theta0, bounds, names, tol, gtol, xtol, max_iter, max_eval, restarts, jump):
    """The arguments of :func:`minimize_log_params`, checked: ``(theta0, bounds in log2 units,
    names, max_iter, max_eval)``; raises ``ValueError`` naming the argument."""
    theta0 = np.asarray(theta0, dtype=float).ravel()
    dim = theta0.shape[0]
    if dim < 1 or not np.all(np.isfinite(theta0)):
        raise ValueError(f"theta0 must be a finite non-empty vector, got {theta0}")
    b2 = _check_bounds(bounds, dim)
    if names is None:
        names = ("sigma", "C") if dim == 2 else tuple(f"theta{j}" for j in range(dim))
    names = tuple(str(n) for n in names)
    if len(names) != dim:
        raise ValueError(f"names has {len(names)} entries for a {dim}-dimensional theta")
    check_positive("tol", tol)
    if not (np.isfinite(gtol) and gtol >= 0):
        raise ValueError(f"gtol must be a non-negative number, got {gtol}")
    if not (np.isfinite(xtol) and xtol >= 0):
        raise ValueError(f"xtol must be a non-negative number, got {xtol}")
    max_iter = check_int_option("max_iter", max_iter, minimum=1)
    max_eval = (
        5 * max_iter if max_eval is None else check_int_option("max_eval", max_eval, minimum=1)
    )
    check_int_option("restarts", restarts, minimum=0)
    check_int_option("jump_restarts", jump, minimum=0)
    return theta0, b2, names, max_iter, max_eval


def _run_start(
    run: _Run,
    s_idx: int,
    x0: np.ndarray,
    options: dict[str, float],
    max_iter: int,
    max_eval: int,
    jump_restarts: int,
    stalled_msg: str,
) -> dict[str, Any]:
    """One start of :func:`minimize_log_params`: L-BFGS-B segments from ``x0``, continued
    across jumps (module docstring) within the start's budgets; returns its summary
    (``converged``, ``limit``, ``message``, ``segments``)."""
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
                bounds=list(zip(run.lo, run.hi)),
                callback=run.callback,
                options={**options, "maxiter": iters, "maxfun": budget},
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
            or not before - after > options["ftol"] * max(abs(after), 1.0)
        ):
            break
        before = after
        if run.stall is not None:  # the continuation's first call reuses its output
            run.last_x, run.last_out = run.stall
        x = run.last_x
        run.new_segment(x)
    return {
        "converged": status == 0,
        "limit": status == 1,
        "message": message,
        "segments": run.segment + 1,
    }


def _bound_notes(
    theta: np.ndarray, b2: np.ndarray, names: tuple[str, ...], warn_at_bound: bool
) -> tuple[list[str], list[tuple[type[Warning], str]]]:
    """The coordinates of ``theta`` on a bound of the log2 box ``b2`` (``"<name> (side)"``)
    and, with ``warn_at_bound``, a :class:`BoundWarning` message for each.  A coordinate with
    equal bounds is fixed by the caller, not stopped by its box: it is neither."""
    sides = []
    for j in range(theta.shape[0]):
        if b2[j, 0] == b2[j, 1]:
            continue
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
    return at_bound, notes
