"""Progress of a selection (svmtune._progress, SVMTuner(verbose=...))."""

from __future__ import annotations

import dataclasses
import io
import re

import numpy as np
import pytest
from sklearn.datasets import make_classification

from svmtune import SVMTuner
from svmtune._progress import HAS_CALLBACKS, Progress, current, progress

GRID = {"log2_sigma": (-1, 1, 1), "log2_C": (-1, 1, 1), "n_splits": 3}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    return X, (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)


def test_verbose_0_is_silent(data, capsys):
    SVMTuner(method="grid", method_params=GRID, random_state=0).fit(*data)
    assert capsys.readouterr().err == ""
    assert current() is None


def test_grid_verbose_1_bar_counts_the_cv_fits(data, capsys):
    t = SVMTuner(method="grid", method_params=GRID, random_state=0, verbose=1).fit(*data)
    lines = capsys.readouterr().err.splitlines()
    bars = [ln for ln in lines if ln.startswith("svmtune grid  [")]
    # not a terminal: a line per tenth of the work, and the end of the final fit (issue 63)
    assert 2 <= len(bars) <= 13
    assert "ETA" in bars[0] and "1/27 CV fits" in bars[0]
    assert "100%" in bars[-1] and "27/27 CV fits" in bars[-1] and "ETA" not in bars[-1]
    done = [int(re.search(r"(\d+)/27 CV fits", b).group(1)) for b in bars]
    assert done == sorted(done)
    assert (
        lines[-1].startswith("svmtune grid: selected sigma=1 C=") and "(27 SVM fits)" in lines[-1]
    )
    assert t.n_svm_fits_ == 27


def test_grid_verbose_2_a_line_per_candidate_with_its_score(data, capsys):
    t = SVMTuner(method="grid", method_params=GRID, random_state=0, verbose=2).fit(*data)
    lines = capsys.readouterr().err.splitlines()
    cands = [ln for ln in lines if "over 3 folds" in ln]
    assert len(cands) == len(t.cv_results_["params"]) == 9
    for line, p, score in zip(cands, t.cv_results_["params"], t.cv_results_["mean_test_score"]):
        assert line == (
            f"svmtune grid: sigma={p['sigma']:.4g} C={p['C']:.4g}: "
            f"mean error {1 - score:.4f} over 3 folds"
        )
    assert not any("[" in ln for ln in lines)  # no bar at verbose=2


def test_tpe_announces_its_budget(data, capsys):
    params = {"max_evals": 4, "n_startup": 2, "n_splits": 3}
    SVMTuner(method="tpe", method_params=params, random_state=0, verbose=1).fit(*data)
    bars = [ln for ln in capsys.readouterr().err.splitlines() if "CV fits" in ln]
    assert "1/12 CV fits" in bars[0] and "ETA" in bars[0]  # the whole budget from the start
    assert "12/12 CV fits" in bars[-1]


@pytest.mark.filterwarnings("ignore:C = 2.*upper bound")
def test_gradient_steps_and_auto_candidates(data, capsys):
    r = SVMTuner(method="rbsvm", random_state=0, verbose=2).fit(*data)
    steps = [ln for ln in capsys.readouterr().err.splitlines() if ": step " in ln]
    assert len(steps) == len(r.history_)
    for line, h in zip(steps, r.history_):
        assert line.endswith(f"objective {h['value']:.6g}")
    a = SVMTuner(method="auto", random_state=0, verbose=2).fit(*data)
    lines = capsys.readouterr().err.splitlines()
    cands = [ln for ln in lines if "leave-one-out error" in ln]
    assert len(cands) == len(a.history_)
    for line, h in zip(cands, a.history_):
        assert line.startswith(
            f"svmtune auto: stage {h['stage']} ({h['rows']:,} rows) {h['origin']} "
            f"sigma={h['sigma']:.4g}"
        )
    a1 = SVMTuner(method="auto", random_state=0, verbose=1).fit(*data)
    bars = [ln for ln in capsys.readouterr().err.splitlines() if "candidates" in ln]
    n = len(a1.history_)
    assert f"{n} candidates" in bars[-1] and "gradient steps" in bars[-1]
    assert "100/100 % of the planned cost" in bars[-1]  # the bar weighs steps by their cost
    # the low-rank path too, whose refinement brings its own estimate
    params = {"exact_rows": 0, "rank": 10}
    lr = SVMTuner(method="auto", method_params=params, random_state=0, verbose=2).fit(*data)
    assert lr.selection_.info["path"] == "lowrank"
    lines = capsys.readouterr().err.splitlines()
    cands = [ln for ln in lines if "leave-one-out error" in ln]
    assert [ln.split()[6] for ln in cands] == [h["origin"] for h in lr.history_]


def test_terminal_redraws_one_line():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    out = Tty()
    with progress(1, stream=out, label="x") as p:
        p.expect(4, "CV fits")
        for _ in range(4):
            p.advance(1, "CV fits")
        p.close("done")
    text = out.getvalue()
    assert text.startswith("\rx  [") and "4/4 CV fits" in text
    assert text.endswith("\nx: done\n") and text.count("\n") == 2
    assert current() is None  # the reporter ends with its block


def test_counts_without_a_total_and_cover():
    p = Progress(1, stream=io.StringIO())
    p.advance(3, "gradient steps")
    assert p.fraction() is None and p.status().startswith("3 gradient steps")
    p.expect(10, "CV fits")
    p.cover(4, "CV fits")  # within what was announced: the total stays
    assert p.total["CV fits"] == 10
    p.advance(8, "CV fits")
    p.cover(4, "CV fits")  # beyond it: the total grows to the work done and to come
    assert p.total["CV fits"] == 12 and p.fraction() == pytest.approx(8 / 12)


@pytest.mark.parametrize("bad", [3, -1, True, "1", 1.5])
def test_verbose_checked(data, bad):
    with pytest.raises(ValueError, match="verbose must be 0, 1 or 2"):
        SVMTuner(method="default", verbose=bad).fit(*data)


def test_span_rule_candidates_reported(data, capsys):
    grid = {"log2_sigma": (-1, 1, 1), "log2_C": (0, 1, 1)}
    t = SVMTuner(method="span_rule", method_params=grid, random_state=0, verbose=2).fit(*data)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ": span_rule " in ln]
    assert len(lines) == len(t.history_) == 6
    for line, h in zip(lines, t.history_):
        assert line == f"svmtune span_rule: sigma={h['sigma']:.4g} C={h['C']:.4g}: " + (
            f"span_rule {h['span_rule']:.4f}"
        )


# ---------------------------------------------------------------- scikit-learn's callbacks
class _Recorder:
    """A ``sklearn.callback`` fit callback that records the tasks it sees."""

    def __init__(self):
        self.events = []

    def setup(self, estimator, context):
        self.events.append(("setup", context.task_name))

    def on_fit_task_begin(self, estimator, context):
        self.events.append(("begin", context.task_name))

    def on_fit_task_end(self, estimator, context, *, fitted_estimator=None):
        self.events.append(("end", context.task_name, fitted_estimator is not None))

    def teardown(self, estimator, context):
        self.events.append(("teardown", context.task_name))


@pytest.mark.skipif(not HAS_CALLBACKS, reason="this scikit-learn has no sklearn.callback")
def test_sklearn_callbacks_see_every_unit_of_work_and_change_nothing():
    from sklearn.base import clone
    from sklearn.callback import ProgressBar

    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    params = {"log2_sigma": (-2.0, 2.0, 2.0), "log2_C": (-2.0, 2.0, 2.0), "n_splits": 3}
    plain = SVMTuner(method="grid", method_params=params, random_state=0).fit(X, y)
    rec = _Recorder()
    tuner = SVMTuner(method="grid", method_params=params, random_state=0).set_callbacks(rec)
    assert clone(tuner)._skl_callbacks == [rec]  # scikit-learn's clone keeps them
    tuner.fit(X, y)
    assert tuner.best_params_ == plain.best_params_
    ends = [e for e in rec.events if e[0] == "end"]
    # 9 candidates x 3 folds, each a finished subtask, then the fit itself (fitted)
    assert [e[1] for e in ends[:-1]] == ["CV fits"] * 27
    assert ends[-1] == ("end", "fit", True)
    assert rec.events[0] == ("setup", "fit") and rec.events[-1] == ("teardown", "fit")
    # scikit-learn's own progress bar runs on it (rich draws it; nothing to assert on)
    SVMTuner(method="rbsvm").set_callbacks(ProgressBar()).fit(X, y)
    with pytest.raises(TypeError, match="FitCallback"):
        SVMTuner().set_callbacks(object())


class _StopAfter(_Recorder):
    """Asks to stop (scikit-learn's protocol: ``on_fit_task_end`` returns True) at the end of
    its ``k``-th unit of work."""

    def __init__(self, k):
        super().__init__()
        self.k = k

    def on_fit_task_end(self, estimator, context, *, fitted_estimator=None):
        super().on_fit_task_end(estimator, context, fitted_estimator=fitted_estimator)
        return sum(e[0] == "end" for e in self.events) >= self.k


@pytest.mark.skipif(not HAS_CALLBACKS, reason="this scikit-learn has no sklearn.callback")
@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("grid", {"log2_sigma": (-2.0, 2.0, 1.0), "log2_C": (-2.0, 2.0, 1.0), "n_splits": 3}),
        ("rbsvm", None),
    ],
)
def test_a_callback_stop_request_stops_the_selection(method, params):
    """A stop request ends the selection at that unit of work: no later unit is reported,
    ``fit`` raises SelectionStopped saying how far it got, and the tuner is not fitted."""
    from sklearn.exceptions import NotFittedError

    from svmtune.exceptions import SelectionStopped

    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    stop = _StopAfter(3)
    tuner = SVMTuner(method=method, method_params=params, random_state=0).set_callbacks(stop)
    with pytest.raises(SelectionStopped, match="after 3 units of work") as info:
        tuner.fit(X, y)
    assert info.value.units_done == 3
    assert [e[0] for e in stop.events].count("end") == 3  # nothing ran after the request
    assert stop.events[-1] == ("teardown", "fit")
    with pytest.raises(NotFittedError):
        tuner.predict(X)


class _Clock:
    """A fake monotonic clock: the tests set its seconds."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_eta_is_the_work_left_at_the_pace_of_the_finished_part():
    """Issue 63: the ETA is (work left) x (seconds of the finished part / its work), less the
    seconds since its last unit; it falls with the clock while a long unit runs, instead of
    climbing with the elapsed time."""
    clock = _Clock()
    p = Progress(1, stream=io.StringIO(), clock=clock)
    clock.t = 4.0  # before the work is announced (a probe, the door): not its pace
    p.expect(100, "% of the planned cost")
    assert p.eta() is None  # nothing done: no pace yet
    clock.t = 9.0
    p.advance(10, "% of the planned cost")
    assert p.eta() == pytest.approx(5.0 * 90 / 10)
    clock.t = 12.0  # a long unit runs: the time left falls with the clock
    assert p.eta() == pytest.approx(45.0 - 3.0)
    assert "ETA 42.0 s" in p.status()
    clock.t = 100.0  # later than the pace foretold: 0, not a negative time
    assert p.eta() == 0.0
    clock.t = 13.0
    p.advance(10, "% of the planned cost")  # 20 % in 9 s since the work began
    assert p.eta() == pytest.approx(9.0 * 80 / 20)
    p.advance(80, "% of the planned cost")
    assert p.eta() is None and "ETA" not in p.status()


def _fake_plan(stage_costs, final_cost, steps=2, scores=2):
    from svmtune.methods._fidelity import Plan, Stage

    stages = tuple(
        Stage(100 * (i + 1), "exact", steps, scores, c) for i, c in enumerate(stage_costs)
    )
    return Plan(1000, 5, 1, sum(stage_costs) + final_cost, stages, final_cost)


def test_plan_progress_weighs_the_bar_by_the_plan_and_ends_on_the_final_fit():
    """Issue 63: the bar's units are the plan's predicted work, the final fit included (its
    share is done only by the final fit), and the ETA is the predicted work left at the pace
    of the finished part."""
    from svmtune.methods._auto_stage import PlanProgress

    clock = _Clock()
    out = io.StringIO()
    p = Progress(1, stream=out, label="auto", clock=clock)
    plan = _fake_plan([1.0, 3.0], 1.0)  # 20 %, 60 %, and 20 % for the final fit
    bar = PlanProgress(p, plan)
    unit = PlanProgress.PLAN_UNIT
    clock.t = 2.0
    bar.evaluated(plan.stages[0])  # a quarter of stage 0: 5 % of the plan
    assert p.done[unit] == 5 and p.eta() == pytest.approx(2.0 * 95 / 5)
    for _ in range(2):  # a refinement's gradient steps advance the bar as they come
        p.advance(1, "gradient steps")
    assert p.done[unit] == 15
    bar.evaluated(plan.stages[0], 2)  # the refinement's end: its steps are not counted twice
    assert p.done[unit] == 15
    clock.t = 10.0
    bar.stage_done(0, "stage 0")
    assert p.done[unit] == 20 and p.eta() == pytest.approx(10.0 * 80 / 20)
    clock.t = 40.0
    bar.stage_done(1, "stage 1")
    assert p.done[unit] == 80  # not 100: the final fit is still to come
    assert p.eta() == pytest.approx(40.0 * 20 / 80)
    with p.final_step():
        clock.t = 50.0
    assert p.done[unit] == 100 and p.eta() is None
    assert "auto: final fit on all rows" in out.getvalue()
    # the final-model rule's fits (after the last stage) are a step of their own
    p = Progress(1, stream=io.StringIO(), clock=clock)
    plan = dataclasses.replace(_fake_plan([1.0, 2.0], 1.0), rule_cost=1.0)
    bar = PlanProgress(p, plan)  # 20 %, 40 %, the rule 20 %, the final fit 20 %
    bar.stage_done(0, "stage 0")
    bar.stage_done(1, "stage 1")
    assert p.done[unit] == 60
    bar.rule_done()
    assert p.done[unit] == 80 and p.final_units == (20, unit)
    # the rule chose a final model of its own cost: the final fit's share follows it, at the
    # pace of the work before (4 of the plan's 5 fits made 80 units: 3 fits are 60 more)
    p = Progress(1, stream=io.StringIO(), clock=clock)
    bar = PlanProgress(p, plan)
    for i in (0, 1):
        bar.stage_done(i, f"stage {i}")
    bar.rule_done(final_cost=3.0)
    assert p.final_units == (60, unit) and p.total[unit] == 140
    with p.final_step():
        pass
    assert p.done[unit] == 140 == p.total[unit]


def test_the_bar_keeps_one_svc_fit_for_the_final_model_where_the_plan_reserves_less():
    """Issue 63: the plan reserves the cheaper final model (the low-rank one, 0.2 fits here),
    but libsvm's SVC, about one ``SVC()`` fit, is the final model unless the rule finds the
    low-rank one as accurate: the bar's final share is one fit until the rule has chosen."""
    from svmtune.methods._auto_stage import PlanProgress

    p = Progress(1, stream=io.StringIO(), clock=_Clock())
    plan = _fake_plan([1.0, 3.0], 0.2)
    PlanProgress(p, plan)
    assert p.final_units == (20, PlanProgress.PLAN_UNIT)  # 1 of 5 fits, not 0.2 of 4.2


def test_the_final_fit_is_a_step_of_the_bar(data, capsys):
    """Issue 63: ``auto``'s bar reaches 100 % at the end of the final fit, not before it; a
    method without a plan has its final fit counted as one more unit of its bar."""
    SVMTuner(method="auto", random_state=0, verbose=1).fit(*data)
    lines = capsys.readouterr().err.splitlines()
    at = lines.index("svmtune auto: final fit on all rows")
    before = [ln for ln in lines[:at] if "% of the planned cost" in ln]
    after = [ln for ln in lines[at:] if "% of the planned cost" in ln]
    assert before and "100/100" not in before[-1]
    assert after and "100/100 % of the planned cost" in after[-1]
    SVMTuner(method="grid", method_params=GRID, random_state=0, verbose=1).fit(*data)
    bars = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("svmtune grid  [")]
    assert "27/27 CV fits" in bars[-1] and "1/1 final fit" in bars[-1] and "100%" in bars[-1]
