"""The shared bounded L-BFGS-B search over log-hyperparameters."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmtune.exceptions import BoundWarning, ConvergenceWarning
from svmtune.kernels import squared_distances
from svmtune.search.gradient import minimize_log_params
from svmtune.search.start import initial_sigma, initial_theta

LN2 = np.log(2.0)


def quadratic(center, scale=(1.0, 3.0)):
    """Smooth test function with its minimum at ``center`` (natural log)."""
    center = np.asarray(center, float)
    A = np.diag(scale) + 0.5
    calls = {"n": 0, "states": []}

    def fun(theta, state):
        calls["n"] += 1
        calls["states"].append(state)
        d = theta - center
        return float(d @ A @ d + 1.0), 2.0 * A @ d, {"n_sv": calls["n"], "tag": "q"}

    return fun, calls


def test_converges_to_the_minimum_of_a_smooth_function():
    fun, calls = quadratic([0.7, -1.2])
    res = minimize_log_params(fun, [2.0, 2.0], tol=1e-12, gtol=1e-10, xtol=0)
    np.testing.assert_allclose(res.theta, [0.7, -1.2], atol=1e-5)
    assert res.value == pytest.approx(1.0, abs=1e-9)
    assert res.converged
    assert res.n_evals == calls["n"] == res.n_fits == len(res.history)
    assert res.params == pytest.approx({"sigma": np.exp(0.7), "C": np.exp(-1.2)}, rel=1e-4)
    h = res.history[0]
    assert {"theta", "sigma", "C", "log2_sigma", "log2_C", "value", "grad_norm", "time"} <= set(h)
    assert h["n_sv"] == 1 and h["tag"] == "q"  # scalar state entries are recorded
    assert any(r["accepted"] for r in res.history)
    # the state returned by one evaluation is passed to the next
    assert calls["states"][0] is None
    assert calls["states"][1] == {"n_sv": 1, "tag": "q"}


def test_rosenbrock_in_log_space():
    def rosen(theta, state):
        x, y = theta
        v = (1 - x) ** 2 + 100 * (y - x * x) ** 2
        g = np.array([-2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x)])
        return v, g, None

    res = minimize_log_params(rosen, [-1.0, 1.5], tol=1e-14, gtol=1e-9, max_iter=500, xtol=0)
    np.testing.assert_allclose(res.theta, [1.0, 1.0], atol=1e-3)


def test_bound_is_reported_with_a_warning():
    fun, _ = quadratic([12.0 * LN2, 0.0])  # sigma optimum at 2^12, outside [2^-8, 2^8]
    with pytest.warns(BoundWarning, match="sigma .* upper bound"):
        res = minimize_log_params(fun, [0.0, 0.0])
    assert res.theta[0] == pytest.approx(8 * LN2)
    assert res.at_bound == ["sigma (upper)"]
    fun, _ = quadratic([0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundWarning)
        res = minimize_log_params(fun, [1.0, 1.0], bounds=[(-2, 2), (-3, 3)])
    assert res.at_bound == []


def test_custom_bounds_and_clipped_start():
    fun, calls = quadratic([0.0, 0.0])
    res = minimize_log_params(fun, [10.0, 0.0], bounds=[(1, 3), (-1, 1)], warn_at_bound=False)
    assert res.starts[0][0] == pytest.approx(3 * LN2)
    assert res.theta[0] == pytest.approx(1 * LN2)
    assert all(LN2 - 1e-12 <= r["theta"][0] <= 3 * LN2 + 1e-12 for r in res.history)
    # the diagnostics a selection reports: the start as run (clipped), on the natural scale
    diag = res.diagnostics()
    assert diag["start_sigma"] == pytest.approx(2.0**3)
    assert diag["start_C"] == pytest.approx(1.0)
    assert diag["at_bound"] == res.at_bound == ["sigma (lower)"]
    assert diag["grad_norm"] == pytest.approx(np.linalg.norm(res.grad))
    assert (diag["n_iter"], diag["n_evals"]) == (res.n_iter, calls["n"])
    assert (diag["converged"], diag["segments"]) == (res.converged, res.segments)


def test_restarts_are_reproducible_and_return_the_best_point():
    def wavy(theta, state):
        x, y = theta
        v = np.sin(3 * x) + 0.1 * x * x + (y - 1) ** 2
        g = np.array([3 * np.cos(3 * x) + 0.2 * x, 2 * (y - 1)])
        return v, g, None

    single = minimize_log_params(wavy, [3.0, 0.0])
    r1 = minimize_log_params(wavy, [3.0, 0.0], restarts=6, random_state=5)
    r2 = minimize_log_params(wavy, [3.0, 0.0], restarts=6, random_state=5)
    assert len(r1.starts) == 7
    np.testing.assert_array_equal(r1.theta, r2.theta)
    assert [h["value"] for h in r1.history] == [h["value"] for h in r2.history]
    assert r1.value <= single.value
    assert r1.value == min(h["value"] for h in r1.history)
    assert {h["start"] for h in r1.history} == set(range(7))


def test_state_n_fits_is_counted():
    def fun(theta, state):
        return float(theta @ theta), 2 * theta, {"n_fits": 3}

    res = minimize_log_params(fun, [1.0, 1.0])
    assert res.n_fits == 3 * res.n_evals


def test_non_finite_values_are_survived():
    def fun(theta, state):
        if theta[0] > 1.0:
            return np.nan, np.array([np.nan, np.nan]), None
        d = theta - 2.0
        return float(d @ d), 2 * d, None

    with pytest.warns(RuntimeWarning, match="non-finite"):
        res = minimize_log_params(fun, [0.0, 0.0])
    assert np.isfinite(res.value)
    assert res.theta[0] <= 1.0 + 1e-12


def test_jumps_stop_the_line_search_instead_of_exhausting_it():
    def jumpy(theta, state):  # minimum of the smooth part sits on a jump
        d = theta - np.array([0.5, 0.5])
        v = float(d @ d) + (0.3 if theta[0] > 0.5 else 0.0)
        return v, 2 * d, None

    res = minimize_log_params(jumpy, [-1.0, -1.0], max_iter=50)
    assert res.value < 0.01
    assert res.n_evals < 60
    assert res.converged


def _wall(w, jump, slope):
    """1-D objective (log2 units) falling with ``slope`` and an upward jump at ``x = w``."""

    def fun(theta, state):
        x = theta[0] / LN2
        value = -slope * x + (jump if x > w else 0.0)
        return value, np.array([-slope / LN2]), {"side": int(x > w)}

    return fun


@pytest.mark.parametrize(
    "jump, slope, x0, xtol, stop",
    [
        (3.0, 0.5, 0.0, 1e-3, "xtol"),  # our stall tests
        (4.0, 1.0, -3.0, 1e-3, "xtol"),
        (4.0, 1.0, -3.0, 0.0, "ABNORMAL"),  # without them: scipy's line search gives up
    ],
)
def test_continuation_crosses_a_jump_to_the_lower_side(jump, slope, x0, xtol, stop):
    fun = _wall(1.0, jump, slope)
    kw = {"bounds": [(-8, 8)], "warn_at_bound": False, "xtol": xtol}
    stalled = minimize_log_params(fun, [x0 * LN2], jump_restarts=0, **kw)
    assert stop in stalled.message and stalled.segments == 1
    assert stalled.theta[0] / LN2 == pytest.approx(1.0, abs=0.1)  # stuck below the wall
    assert stalled.theta[0] / LN2 < 1.0
    res = minimize_log_params(fun, [x0 * LN2], **kw)
    # beyond the wall the objective keeps falling to the bound: -8 slope + jump < -slope
    assert res.theta[0] / LN2 == pytest.approx(8.0)
    assert res.value == pytest.approx(-8.0 * slope + jump)
    assert res.value < stalled.value
    assert res.segments >= 2
    segs = [h["segment"] for h in res.history]
    assert segs == sorted(segs) and segs[0] == 0 and segs[-1] == res.segments - 1
    # the first segment saw the far side of the wall, where the continuation starts
    first = [h for h in res.history if h["segment"] == 0]
    assert any(h["side"] == 1 for h in first)


def test_a_line_search_bracketing_a_jump_stops_when_its_trial_points_meet():
    # the line search brackets the wall from both sides (the near side is lower than the
    # iterate but the slope never flattens, so the Wolfe conditions never hold) and its
    # trial points close in on the wall far from the iterate: without the bracket test
    # scipy's line search runs until it gives up
    fun = _wall(1.0, 4.0, 1.0)
    kw = {"bounds": [(-8, 8)], "warn_at_bound": False, "jump_restarts": 0}
    long = minimize_log_params(fun, [-3.0 * LN2], xtol=0.0, **kw)
    short = minimize_log_params(fun, [-3.0 * LN2], **kw)
    assert "ABNORMAL" in long.message and "xtol" in short.message
    assert short.n_evals < long.n_evals
    x = [h["theta"][0] for h in short.history]
    assert x == [h["theta"][0] for h in long.history[: short.n_evals]]  # same path until then
    # the stop came from trial points meeting each other, away from the iterate
    accepted = [xi for xi, h in zip(x, short.history) if h["accepted"]]
    assert min(abs(xi - accepted[-1]) for xi in x[-3:]) / LN2 > 1e-3
    # the continuation starts at the latest trial point above the iterate (beyond the wall)
    # and goes on to the lower values there
    cont = minimize_log_params(fun, [-3.0 * LN2], bounds=[(-8, 8)], warn_at_bound=False)
    seg1 = [h for h in cont.history if h["segment"] == 1]
    assert seg1 and all(h["side"] == 1 for h in seg1)
    assert cont.theta[0] / LN2 == pytest.approx(8.0)


def test_continuation_stops_when_the_far_side_is_not_lower():
    def jumpy(theta, state):  # smooth minimum at the jump; the far side is higher everywhere
        d = theta - np.array([0.5, 0.5])
        return float(d @ d) + (0.3 if theta[0] > 0.5 else 0.0), 2 * d, None

    res = minimize_log_params(jumpy, [-1.0, -1.0], max_iter=50, jump_restarts=5)
    assert res.value < 0.01
    assert res.segments <= 2  # one look across the jump, then stop
    assert max(h["segment"] for h in res.history) == res.segments - 1
    # a continuation that finds nothing lower is abandoned after its probe of 5 evaluations
    assert sum(h["segment"] == 1 for h in res.history) <= 5


def test_iteration_limit_warns():
    fun, _ = quadratic([3.0, -2.0])
    with pytest.warns(ConvergenceWarning, match="before its tolerance"):
        res = minimize_log_params(fun, [-3.0, 3.0], max_iter=1, warn_at_bound=False)
    assert not res.converged


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"bounds": [(1, 0), (0, 1)]}, "lo <= hi"),
        ({"bounds": [(0, 1)]}, "pairs"),
        ({"tol": 0}, "tol"),
        ({"max_iter": 0}, "max_iter"),
        ({"restarts": -1}, "restarts"),
        ({"jump_restarts": -1}, "jump_restarts"),
        ({"jump_restarts": 1.5}, "jump_restarts"),
        ({"xtol": -1}, "xtol"),
        ({"names": ("a",)}, "names"),
    ],
)
def test_option_validation(kw, msg):
    fun, _ = quadratic([0.0, 0.0])
    with pytest.raises(ValueError, match=msg):
        minimize_log_params(fun, [0.0, 0.0], **kw)


def test_initial_sigma_rules():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    D2 = squared_distances(X)
    iu = np.triu_indices(50, 1)
    assert initial_sigma(D2) == pytest.approx(np.sqrt(np.median(D2[iu])))
    assert initial_sigma(D2, rule="sqrt_d", n_features=4) == 2.0
    sub = initial_sigma(D2, max_pairs=300, random_state=1)
    assert 0.5 * initial_sigma(D2) < sub < 2.0 * initial_sigma(D2)
    X2 = np.vstack([X, X])  # duplicates (zero distances) are ignored
    assert initial_sigma(squared_distances(X2)) == pytest.approx(initial_sigma(D2), rel=0.1)
    with pytest.warns(RuntimeWarning, match="coincide"):
        assert initial_sigma(np.zeros((5, 5))) == 1.0
    with pytest.raises(ValueError, match="start rule"):
        initial_sigma(D2, rule="mean")
    with pytest.raises(ValueError, match="n_features"):
        initial_sigma(D2, rule="sqrt_d")


def test_initial_theta_is_a_rule_with_C0_or_the_given_pair():
    rng = np.random.default_rng(0)
    D2 = squared_distances(rng.normal(size=(30, 3)))
    theta = initial_theta(D2, "median", 4.0, n_features=3)
    np.testing.assert_allclose(theta, np.log([initial_sigma(D2), 4.0]))
    theta = initial_theta(None, "sqrt_d", 0.5, n_features=9)
    np.testing.assert_allclose(theta, np.log([3.0, 0.5]))
    np.testing.assert_allclose(initial_theta(None, (2.0, 8.0), 1.0, n_features=3), np.log([2, 8]))


def test_stop_search_ends_the_search_at_once_and_returns_the_best_point_before():
    """A true ``"stop_search"`` entry ends every start; that evaluation is recorded and counted
    but not used, even when it is the lowest value."""
    values = []

    def fun(theta, state):
        n = len(values) + 1
        d = theta - 1.0
        v = float(d @ d) - (100.0 if n == 4 else 0.0)  # the stopping point is the lowest
        values.append(v)
        return v, 2 * d, ({"stop_search": "enough"} if n == 4 else {"n": n})

    res = minimize_log_params(fun, [3.0, 3.0], restarts=2, random_state=0, xtol=0)
    assert res.stopped == "enough"
    assert res.n_evals == len(res.history) == 4
    assert res.history[-1]["stop_search"] == "enough"
    assert res.value == min(values[:3])
    assert res.message == "STOP: enough"
    assert len(res.starts) == 1  # the restarts after the stop did not run


def test_stop_search_before_any_finite_value_is_an_error():
    def fun(theta, state):
        return 1.0, np.zeros(2), {"stop_search": "now"}

    with pytest.raises(ValueError, match="before any finite"):
        minimize_log_params(fun, [0.0, 0.0])


def test_end_of_search_warnings_kept_for_the_caller():
    """emit_warnings=False keeps the bound and iteration-limit warnings in the result, emitted
    later by emit_warnings(); the default emits the same ones at once."""
    fun, _ = quadratic([3.0, -2.0])
    kw = {"max_iter": 1, "warn_at_bound": False}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing escapes
        kept = minimize_log_params(fun, [-3.0, 3.0], emit_warnings=False, **kw)
    assert [c for c, _ in kept.warnings] == [ConvergenceWarning]
    with pytest.warns(ConvergenceWarning, match="before its tolerance") as rec:
        kept.emit_warnings()
    assert [str(w.message) for w in rec] == [m for _, m in kept.warnings]
    with pytest.warns(ConvergenceWarning) as now:
        res = minimize_log_params(fun, [-3.0, 3.0], **kw)
    assert res.warnings == kept.warnings and len(now) == 1
    at = minimize_log_params(fun, [2.0, 3.0], bounds=[(-8, 1), (-8, 8)], emit_warnings=False)
    assert [c for c, _ in at.warnings] == [BoundWarning] and "sigma = 2^1.00" in at.warnings[0][1]


def test_equal_bounds_fix_a_coordinate_without_a_bound_warning():
    """``lo == hi`` fixes a coordinate (``check_log2_range`` accepts it; L-BFGS-B keeps it):
    the search moves the other one only, and says nothing of the fixed one's bound."""

    def fun(theta, state):  # minimum at theta = (0, 0), outside the fixed first coordinate
        return float(theta @ theta), 2.0 * theta, None

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = minimize_log_params(
            fun, np.log([2.0, 8.0]), bounds=[(1.0, 1.0), (-4.0, 4.0)], names=("sigma", "C")
        )
    assert res.theta[0] == pytest.approx(np.log(2.0))
    assert abs(res.theta[1]) < 1e-4
    assert not [w for w in caught if issubclass(w.category, BoundWarning)]
