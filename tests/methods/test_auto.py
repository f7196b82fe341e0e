"""method="auto": starts, refinement and referee composed; the default of SVMTuner."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from svmtune import SVMTuner
from svmtune.kernels import Kernel
from svmtune.loo.referee import l1_loo_outputs, l2_loo_outputs, ovo_loo_outputs, referee_error
from svmtune.methods._fidelity import ALL_ROWS_PATH
from svmtune.methods.auto import Auto
from svmtune.methods.base import get_selector, ovr_tasks
from tests.conftest import make_problem


def _binary(n=80, seed=0):
    X, y = make_problem(n, 3, seed, noise=0.8)
    return X, (y > 0).astype(int)


def _three_classes(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(n, 2)) + 1.5 * np.column_stack([np.cos(y), np.sin(y)])
    return X, y


def test_default_point_is_always_a_candidate_and_history_is_complete():
    X, y = _binary()
    sel = Auto().select(X, y, random_state=0)
    origins = [c["origin"] for c in sel.history]
    assert origins[0] == "default"
    assert set(origins) <= {"default", "median", "ld", "ss", "rbsvm", "span"}
    assert "rbsvm" in origins
    for c in sel.history:
        assert {"sigma", "C", "estimate_l1", "estimate_l2", "n_svm_fits", "time"} <= set(c)
        assert c["sigma"] > 0 and c["C"] > 0 and c["n_svm_fits"] >= 1
    assert sum(c["chosen"] for c in sel.history) == 1
    assert sel.n_svm_fits == 1 + sum(c["n_svm_fits"] for c in sel.history)  # and the probe
    default = get_selector("default").select(X, y).params
    assert sel.history[0]["sigma"] == pytest.approx(default["sigma"])


def test_referee_estimate_is_the_chosen_candidates_lowest():
    X, y = _binary(seed=1)
    sel = Auto().select(X, y, random_state=0)
    chosen = next(c for c in sel.history if c["chosen"])
    fam = sel.final_model
    assert sel.estimate == chosen[f"estimate_{fam}"]
    best = min(
        c[f"estimate_{f}"]
        for c in sel.history
        for f in ("l1", "l2")
        if c[f"estimate_{f}"] is not None
    )
    assert sel.estimate == best
    # and it is the closed-form estimate of that model at that point
    K = Kernel("rbf", sigma=sel.params["sigma"])(X)
    if fam == "l1":
        outs, _ = l1_loo_outputs(K, ovr_tasks(y), sel.params["C"])
    else:
        outs = l2_loo_outputs(K, ovr_tasks(y), sel.params["C"])
    assert referee_error(y, outs) == pytest.approx(sel.estimate)


def test_deterministic_under_random_state():
    X, y = _binary(seed=2)
    a = SVMTuner(method="auto", random_state=3).fit(X, y)
    b = SVMTuner(method="auto", random_state=3).fit(X, y)
    assert a.best_params_ == b.best_params_
    assert a.estimate_ == b.estimate_
    assert [c["origin"] for c in a.history_] == [c["origin"] for c in b.history_]


def test_svmtuner_default_method_is_auto():
    assert SVMTuner().method == "auto"
    X, y = _binary(n=50)
    tuner = SVMTuner(random_state=0).fit(X, y)
    assert tuner.selection_.info["chosen"] in [c["origin"] for c in tuner.history_]
    assert tuner.final_model_ == tuner.selection_.final_model


@pytest.mark.parametrize("multiclass", ["ovr", "ovo"])
def test_multiclass(multiclass):
    X, y = _three_classes()
    tuner = SVMTuner(method="auto", multiclass=multiclass, random_state=0).fit(X, y)
    assert tuner.score(X, y) > 0.7
    default = tuner.history_[0]
    K = Kernel("rbf", sigma=default["sigma"])(tuner.preprocessor_.transform(X))
    pairwise = multiclass == "ovo"
    outs = ovo_loo_outputs(K, y, 1.0) if pairwise else l1_loo_outputs(K, ovr_tasks(y), 1.0)[0]
    assert len(outs) == 3
    assert default["estimate_l1"] == pytest.approx(referee_error(y, outs, pairwise=pairwise))


def test_weights_reach_the_fits_and_weigh_the_referees_error():
    X, y = _binary(n=40, seed=4)
    w = np.ones(len(y))
    w[:10] = 2.0
    w[-3:] = 0.0  # rows of weight 0 enter no fit and no count
    sel = Auto(starts=(), refine=()).select(X, y, w, random_state=0)
    (c,) = sel.history
    K = Kernel("rbf", sigma=c["sigma"])(X)
    l2 = l2_loo_outputs(K, ovr_tasks(y), c["C"], w)
    l1, _ = l1_loo_outputs(K, ovr_tasks(y), c["C"], w)
    assert c["estimate_l2"] == pytest.approx(referee_error(y, l2, w))
    assert c["estimate_l1"] == pytest.approx(referee_error(y, l1, w))
    # and the weights matter: without them the fits and counts differ
    unweighted = Auto(starts=(), refine=()).select(X, y, random_state=0).history[0]
    assert (unweighted["estimate_l1"], unweighted["estimate_l2"]) != (
        c["estimate_l1"],
        c["estimate_l2"],
    )
    tuner = SVMTuner(method="auto", class_weight="balanced", random_state=0).fit(X, y)
    assert 0.0 <= tuner.estimate_ <= 1.0


def test_groups_use_leave_one_group_out_and_the_l2_family():
    X, y = _binary(n=60, seed=5)
    groups = np.arange(len(y)) // 3
    sel = Auto().select(X, y, random_state=0, groups=groups)
    assert sel.final_model == "l2"
    assert all(c["estimate_l1"] is None for c in sel.history)
    assert "span" not in [c["origin"] for c in sel.history]
    assert sel.info["n_groups"] == 20
    tuner = SVMTuner(method="auto", random_state=0).fit(X, y, groups=groups)
    assert tuner.final_model_ == "l2"


def test_low_rank_path_when_no_row_may_be_exact():
    X, y = _binary(n=120, seed=6)
    sel = Auto(exact_rows=0, rank=40).select(X, y, random_state=0)
    assert sel.info["path"] == "lowrank"
    assert sel.final_model in ("l1", "lowrank")
    assert "ld" not in [c["origin"] for c in sel.history]
    assert all(c["estimate_l2"] is not None for c in sel.history)
    assert Auto().select(X, y, random_state=0).info["path"] == "exact"


def _large(n=3000, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    score = X[:, 0] + np.sin(2 * X[:, 1]) + 0.6 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def _rows_by_stage(sel):
    return {c["stage"]: c["rows"] for c in sel.history}


def test_stages_follow_the_plan_and_the_budget_holds():
    """Count the work: every candidate is scored on its stage's rows, each stage refines at
    most its planned steps, and the plan's predicted cost is within the budget."""
    from svmtune.methods._auto_final import Probe

    X, y = _large()
    for budget in (2.0, 5.0):
        auto = Auto(budget=budget, rank=60)
        sel = auto.select(X, y, random_state=0)
        f = sel.info["svc_sv_fraction"]
        assert 0.0 < f < 1.0
        probe = Probe(**sel.info["probe"])  # the probes the run fitted
        assert f == probe.fraction_at(len(y))
        plan = auto.plan(*X.shape, 1, probe=probe)
        assert sel.info["plan"] == [vars(s) for s in plan.stages]
        assert sel.info["predicted_cost"] == pytest.approx(plan.cost)
        assert plan.cost <= budget + 1e-9 or plan.stages[0].size == 200
        assert _rows_by_stage(sel) == {i: s.size for i, s in enumerate(plan.stages)}
        assert plan.stages[0].size < len(y)  # a small budget: the first stage subsamples
        for i, stage in enumerate(plan.stages):
            refined = [c for c in sel.history if c["stage"] == i and c["origin"] == "rbsvm"]
            # later stages refine with the evaluations the racing candidates leave
            assert len(refined) == 1 if i == 0 else len(refined) <= (1 if stage.steps else 0)
    small = Auto(budget=2.0, rank=60).plan(*X.shape, 1)
    large = Auto(budget=50.0, rank=60).plan(*X.shape, 1)
    assert large.stages[-1].size >= small.stages[-1].size
    assert sum(s.size * (s.steps + s.scores) for s in large.stages) > sum(
        s.size * (s.steps + s.scores) for s in small.stages
    )


def test_a_stage_is_freed_before_the_next_is_made(monkeypatch):
    """When a stage's rows and distances are made, no stage before it is alive (issue 64: the
    exact stage's matrices stayed alive through the low-rank stage at 10^6 rows)."""
    import gc
    import weakref

    from svmtune.methods import _auto_stage

    X, y = _large()
    made, alive_at = [], []
    of = _auto_stage.StageData.of.__func__

    def spy(cls, *args, **kwargs):
        gc.collect()
        alive_at.append(sum(r() is not None for r in made))
        st = of(cls, *args, **kwargs)
        made.append(weakref.ref(st))
        return st

    monkeypatch.setattr(_auto_stage.StageData, "of", classmethod(spy))
    Auto(budget=5.0, rank=60).select(X, y, random_state=0)
    assert len(made) >= 2
    assert alive_at == [0] * len(made)


def test_C_is_carried_from_the_last_stage_to_all_rows():
    X, y = _large(n=2500, seed=3)
    sel = Auto(budget=1.5, rank=60).select(X, y, random_state=0)
    chosen = next(c for c in sel.history if c["chosen"])
    assert chosen["rows"] < len(y)
    a = sel.info["carry_exponent"]
    assert -1.0 <= a <= 1.0
    assert sel.params["C"] == pytest.approx(chosen["C"] * (len(y) / chosen["rows"]) ** a)
    assert sel.params["sigma"] == chosen["sigma"]
    # a later stage races candidates of the one before (its winner among them), C carried
    # the same way
    for c in sel.history:
        if c["origin"] == "carried":
            before = [h for h in sel.history if h["stage"] == c["stage"] - 1]
            assert any(c["sigma"] == h["sigma"] for h in before)


def test_final_model_rule_both_ways():
    """libsvm's fit at a large C on noisy rows takes many more iterations than SVC()'s: with
    the budget spent and a cheap low-rank model it gives way; with budget left it is kept."""
    from svmtune.exceptions import BudgetWarning
    from svmtune.kernels import rbf_params
    from svmtune.methods._fidelity import nested_subsample

    X, y = _large(n=2000, seed=5)
    order = nested_subsample(y, 0)
    large_C = rbf_params(1.0, 2.0**10)
    auto = Auto(rank=20)
    tight = dataclasses.replace(auto.plan(*X.shape, 1), budget=1.0)
    rule = auto._final_rule(tight, large_C, auto.rank, X, y, None, order, "ovr")
    assert rule["final_model"] == "lowrank" and "libsvm's fit predicted at" in rule["why"]
    ratio = float(rule["why"].split("predicted at ")[1].split(" ")[0])
    assert ratio > 2.0
    ample = dataclasses.replace(auto.plan(*X.shape, 1), budget=1e6)
    assert (
        auto._final_rule(ample, large_C, auto.rank, X, y, None, order, "ovr")["final_model"] == "l1"
    )
    # the plan reserves the cheaper final model's cost: here the low-rank one's
    assert tight.final_cost < 1.0
    # the low-rank model is costed on the landmarks the last stage used, not the cap
    with pytest.warns(BudgetWarning, match="beyond the tolerance"):  # 5 are far too few
        few = auto._final_rule(tight, large_C, 5, X, y, None, order, "ovr")
    lowrank_cost = lambda r: float(r["why"].split("L2-SVM predicted at ")[1].split(" ")[0])  # noqa: E731
    assert lowrank_cost(few) < lowrank_cost(rule) and "(5 landmarks)" in few["why"]
    # after an exact last stage, the trace rule's landmarks at the chosen width on the rows
    # the libsvm fit is predicted from
    from svmtune.lowrank import pivoted_cholesky_landmarks
    from svmtune.methods._fidelity import rule_rows, stage_rows
    from svmtune.methods.auto import LANDMARK_TOL

    rows = stage_rows(order, rule_rows(X.shape[0], tight.stages[0].size))
    k = pivoted_cholesky_landmarks(X[rows], 1.0, tol=LANDMARK_TOL, max_rank=20)[0].size
    derived = auto._final_rule(tight, large_C, None, X, y, None, order, "ovr")
    assert f"({k} landmarks)" in derived["why"]


def test_the_tuner_fits_and_can_force_the_low_rank_final_model():
    X, y = _large(n=600, seed=5)
    opts = {"exact_rows": 0, "rank": 20, "max_eval": 2}
    lr = SVMTuner(method_params=opts, final_model="lowrank", random_state=0).fit(X, y)
    assert lr.final_model_ == "lowrank"
    assert lr.estimator_.rank_ <= 20
    np.testing.assert_allclose(lr.predict_proba(X[:5]).sum(axis=1), 1.0)
    assert lr.decision_function(X[:5]).shape == (5,)
    assert (
        SVMTuner(method_params=opts, final_model="l1", random_state=0).fit(X, y).final_model_
        == "l1"
    )


def test_multistage_is_deterministic_and_takes_weights_groups_multiclass_sparse():
    import scipy.sparse as sp

    X, y = _large(n=1500, seed=7, n_classes=3)
    opts = {"budget": 15.0, "rank": 40}
    a = Auto(**opts).select(X, y, random_state=4)
    b = Auto(**opts).select(X, y, random_state=4)
    assert a.params == b.params and a.estimate == b.estimate
    assert [c["rows"] for c in a.history] == [c["rows"] for c in b.history]
    assert len({c["stage"] for c in a.history}) >= 2
    w = np.where(y == 0, 2.0, 1.0)
    t = SVMTuner(method_params=opts, random_state=0).fit(X, y, sample_weight=w)
    assert t.predict(X[:3]).shape == (3,)
    groups = np.arange(len(y)) // 5
    g = Auto(**opts).select(X, y, random_state=0, groups=groups)
    assert all(c["estimate_l1"] is None for c in g.history)
    assert g.info["n_groups"] == 300
    s = SVMTuner(method_params=opts, random_state=0).fit(sp.csr_matrix(X), y)
    assert s.selection_.info["path"] == "lowrank"
    assert s.predict(sp.csr_matrix(X[:4])).shape == (4,)


@pytest.mark.parametrize(
    "option, value",
    [
        ("starts", ("grid",)),
        ("starts", "median,ld"),
        ("refine", ("cv",)),
        ("refine", ("rbsvm", "rbsvm")),
        ("families", ()),
        ("families", ("l3",)),
        ("max_eval", 0),
        ("max_eval", 2.5),
        ("max_eval", float("inf")),
        ("exact_rows", True),
        ("budget", 0),
        ("budget", -1.0),
        ("rank", -1),
        ("log2_sigma", (4, -4)),
    ],
)
def test_bad_options_name_the_option(option, value):
    with pytest.raises(ValueError, match=option):
        SVMTuner(method="auto", method_params={option: value}).fit(*_binary(n=30))


def test_a_choice_on_the_box_bound_is_the_bound():
    """The bound itself (not ``exp(log(2^8))``); no warning where the referee scores C one
    octave beyond it no lower (issue 63: ``test_bound_warning_only_where_the_bound_bit``)."""
    import warnings

    from svmtune.exceptions import BoundWarning

    X, y = _binary(seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundWarning)
        t = SVMTuner(random_state=3).fit(X, y)
    assert t.best_params_["C"] == 256.0


def test_the_referee_keeps_SVC_point_unless_a_challenger_is_better_beyond_noise():
    """Each challenger carries its paired tests against SVC()'s point and the verdict; the
    choice is SVC()'s point exactly when no challenger passes, else the lowest error among
    those that do; an infinite threshold never moves, a zero threshold on the 0/1 loss is
    the minimum of the estimates (ties to SVC()'s point)."""
    from svmtune.loo.paired import paired_z

    X, y = _binary(n=120, seed=4)
    for z in (0.0, 1.645, 1e9):
        sel = Auto(noise_z=z, smooth=False).select(X, y, random_state=0)
        inc, *others = [h for h in sel.history if h["stage"] == 0]
        assert inc["origin"] == "default" and inc["referee"] == "incumbent"
        passed = []
        for h in others:
            assert {"paired_01_z", "paired_01_diff", "paired_xent_z"} <= set(h)
            beyond = h["paired_01_z"] < -z
            assert h["referee"].startswith("beyond noise") == beyond
            passed += [h] if beyond else []
        chosen = next(h for h in sel.history if h["chosen"])
        best = lambda h: min(h[f"estimate_{f}"] for f in ("l1", "l2"))  # noqa: E731
        if passed:
            assert best(chosen) == min(best(h) for h in passed)
        else:
            assert chosen["origin"] == "default"
        if z == 0.0:
            assert best(chosen) == min(best(h) for h in sel.history)
        if z == 1e9:
            assert chosen["origin"] == "default"
    # the recorded statistic is the paired z of the per-row 0/1 losses
    K = Kernel("rbf", sigma=inc["sigma"])(X)
    # each at its best family, equal estimates to the L2-SVM (the order of ``families``)
    e_inc = _row_errors(K, y, 1.0, "l1" if inc["estimate_l1"] < inc["estimate_l2"] else "l2")
    h = others[0]
    K = Kernel("rbf", sigma=h["sigma"])(X)
    e_h = _row_errors(K, y, h["C"], "l1" if h["estimate_l1"] < h["estimate_l2"] else "l2")
    assert h["paired_01_z"] == pytest.approx(paired_z(e_h - e_inc))


def _row_errors(K, y, C, family):
    from svmtune.loo.referee import row_losses

    outs = (
        l1_loo_outputs(K, ovr_tasks(y), C)[0]
        if family == "l1"
        else l2_loo_outputs(K, ovr_tasks(y), C)
    )
    return row_losses(y, outs)[0]


@pytest.mark.parametrize("z", [0.0, 1e9])
def test_racing_never_spends_more_evaluations_than_the_plan(monkeypatch, z):
    """Count the work: the referee's scores and the refinement steps of every stage stay
    within the plan's ``steps + scores`` however many candidates race (a threshold so high
    that nothing is separated keeps every candidate racing)."""
    X, y = _large(n=2400, seed=2)
    auto = Auto(budget=3.0, rank=40, noise_z=z, starts=("median", "ld"))
    calls: dict[int, int] = {}
    score, refine = Auto._score, Auto._refine

    def counted_score(self, cand, st, progress):
        calls[st.index] = calls.get(st.index, 0) + 1
        return score(self, cand, st, progress)

    def counted_refine(self, refiner, best, st, max_eval):
        calls[st.index] = calls.get(st.index, 0) + max_eval
        return refine(self, refiner, best, st, max_eval)

    monkeypatch.setattr(Auto, "_score", counted_score)
    monkeypatch.setattr(Auto, "_refine", counted_refine)
    sel = auto.select(X, y, random_state=0)
    assert len(sel.info["plan"]) >= 2
    for i, stage in enumerate(sel.info["plan"]):
        if stage["path"] == ALL_ROWS_PATH:  # C on all rows: one history row per evaluation
            calls[i] = sum(c["stage"] == i for c in sel.history)
        assert 0 < calls[i] <= stage["steps"] + stage["scores"]


def test_the_final_model_is_chosen_by_accuracy_as_well_as_cost():
    """With the budget spent, the low-rank L2-SVM is returned only where its error on
    held-out rows is within the tolerance of libsvm's at the same point: two landmarks on a
    nonlinear problem are far too few, and libsvm is kept, unless its fit would cost more
    than the whole budget (then the low-rank model, with a BudgetWarning naming the budget
    that buys libsvm's); the estimate is the held-out error of the model returned."""
    from sklearn.svm import SVC

    from svmtune._labels import first_seen_codes
    from svmtune.exceptions import BudgetWarning
    from svmtune.kernels import rbf_params
    from svmtune.methods._auto_final import (
        HELD_OUT_ROWS,
        LOWRANK_TOLERANCE,
        libsvm_cost_ratio,
    )
    from svmtune.methods._fidelity import nested_subsample, rule_rows, stage_rows

    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(2000, 2))
    y = ((np.sin(3 * X[:, 0]) * np.sin(3 * X[:, 1])) > 0).astype(int)
    order = nested_subsample(y, 0)
    params = rbf_params(0.3, 2.0**6)
    auto = Auto(rank=2)
    plan = auto.plan(*X.shape, 1)
    rows = stage_rows(order, rule_rows(X.shape[0], plan.stages[0].size))
    held = np.sort(order[rows.size : rows.size + min(rows.size, HELD_OUT_ROWS)])
    ratio = libsvm_cost_ratio(params, X[rows], y[rows], None, "ovr")[0]
    # a budget whose remainder after the stages is below libsvm's fit, but not the whole
    tight = dataclasses.replace(plan, budget=ratio)
    assert tight.left < ratio
    rule = auto._final_rule(tight, params, 2, X, y, None, order, "ovr")
    assert rule["final_model"] == "l1" and "beyond the tolerance" in rule["why"]
    # below libsvm's fit as a whole: the low-rank model, said and warned
    with pytest.warns(BudgetWarning, match=r"pass a budget of at least"):
        spent = auto._final_rule(
            dataclasses.replace(plan, budget=0.99 * ratio), params, 2, X, y, None, order, "ovr"
        )
    assert spent["final_model"] == "lowrank" and "beyond the tolerance" in spent["why"]
    assert "more than the whole budget" in spent["why"]
    # fitted on the labels' first-seen codes, as the cost probe fits it
    codes = first_seen_codes(y[rows])
    svc = SVC(C=params["C"], gamma=params["gamma"]).fit(X[rows], codes)
    held_codes = np.where(y[held] == y[rows][0], codes[0], 1 - codes[0])
    assert rule["estimate"] == pytest.approx(np.mean(svc.predict(X[held]) != held_codes))
    # more landmarks: beyond the tolerance at 30, within it at 60 (and cheaper than libsvm)
    for rank, final in ((30, "l1"), (60, "lowrank")):
        more = Auto(rank=rank)
        plan = dataclasses.replace(more.plan(*X.shape, 1), budget=ratio)
        rule = more._final_rule(plan, params, rank, X, y, None, order, "ovr")
        gap = float(rule["why"].split("its error is ")[1].split(" ")[0])
        assert (gap <= LOWRANK_TOLERANCE) == (final == "lowrank") and rule["final_model"] == final


def test_small_data_are_selected_on_all_rows_by_default():
    """The default budget's floor in work (issue #62): up to 1,500 rows one exact stage holds
    every row, whatever the features and classes."""
    for n, d, k in ((300, 5, 2), (1_200, 40, 3), (1_500, 100, 2)):
        plan = Auto().plan(n, d, k if k > 2 else 1)
        assert [(s.size, s.path) for s in plan.stages] == [(n, "exact")]
    assert Auto().plan(3_000, 10, 1).stages[0].size < 3_000


# --------------------------------------------------------------------- issue 63, items 2 and 3
def _breast_cancer():
    from sklearn.datasets import load_breast_cancer

    return load_breast_cancer(return_X_y=True)


@pytest.mark.parametrize("budget", [1e-9, 3.0, 7.0])
def test_a_budget_below_the_plans_least_warns_before_the_work(budget):
    """Issue 63: a budget the plan cannot keep to warns when the plan is made, before its
    work, naming the least budget; the final rule never reads a negative amount left."""
    import warnings

    from svmtune.exceptions import BudgetWarning

    X, y = _breast_cancer()
    work_began = []
    auto = Auto(budget=budget)
    plan_of = auto.plan

    def plan(*args, **kwargs):  # the warning comes from the plan, before any candidate
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = plan_of(*args, **kwargs)
        assert not work_began
        work_began.append(caught)
        return out

    auto.plan = plan
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        sel = auto.run(*_data_and_context(X, y))
    [caught] = work_began
    [w] = [c for c in caught if issubclass(c.category, BudgetWarning)]
    least = sel.info["min_budget"]
    assert budget < least and f"at least {least:.3g}" in str(w.message)
    assert sel.info["predicted_cost"] >= least - 1e-9
    rule = sel.info["final_rule"]
    assert "nothing left of the budget" in rule and not re.search(r"(?<!e)-\d", rule)


def test_the_default_budget_does_not_warn_and_costs_are_recorded():
    """Issue 63: the default budget warns of nothing; ``info`` keeps the measured seconds of
    the probes, of each stage and of the final rule beside the plan's predicted costs."""
    import warnings

    from svmtune.exceptions import BudgetWarning

    X, y = _large(n=2500)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BudgetWarning)
        sel = Auto(rank=60).select(X, y, random_state=0)
    pred, meas = sel.info["predicted_costs"], sel.info["measured_seconds"]
    assert len(pred["stages"]) == len(meas["stages"]) == len(sel.info["plan"])
    assert all(t >= 0 for t in meas["stages"]) and meas["probe"] >= 0
    assert sel.info["predicted_cost"] == pytest.approx(
        pred["probe"] + sum(pred["stages"]) + pred["final_rule"] + pred["final_fit"]
    )
    probe = sel.info["probe"]
    assert probe["rows"] == (1000, 2000)  # two nested probes: the share of SVs at all rows
    assert pred["probe"] > 0 and pred["final_rule"] > 0  # the fits the plan did not count


def _data_and_context(X, y):
    from svmtune.methods.base import SelectionContext, TrainingData

    return TrainingData(X, y), SelectionContext(random_state=0)


def test_final_rule_says_when_the_users_final_model_overrode_it():
    """Issue 63: ``final_rule`` explains auto's own choice and, where ``final_model`` forced
    another, says so."""
    X, y = _large(n=1200)
    own = SVMTuner(random_state=0).fit(X, y)
    forced = SVMTuner(random_state=0, final_model="lowrank").fit(X, y)
    rule = own.selection_.info["final_rule"]
    mine = own.final_model_
    assert mine in ("l1", "l2") and forced.final_model_ == "lowrank"
    assert forced.selection_.info["final_rule"] == (
        f"final_model='lowrank' given, overriding the method's own rule, which chose '{mine}': "
        f"{rule}"
    )
    same = SVMTuner(random_state=0, final_model=mine).fit(X, y)
    assert same.selection_.info["final_rule"].startswith(f"final_model='{mine}' given, as the")


def test_bound_warning_only_where_the_bound_bit():
    """Issue 63: RBSVM's refinement ends on C's upper bound (nearly separable rows) while the
    referee scores C beyond it no lower: no warning; where the referee scores the point past
    the bound lower (noisy labels, a box above their C), the warning stays."""
    import warnings

    from svmtune.exceptions import BoundWarning

    X, y = _binary(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundWarning)
        t = SVMTuner(random_state=0).fit(X, y)
    assert t.best_params_["C"] == 256.0  # on the bound, and no warning
    # the rule itself: the warning where the referee scores the point past the bound lower
    from svmtune.methods._auto_stage import on_bound

    point, box = {"sigma": 1.0, "C": 2.0**8 * (1 - 1e-15)}, (-8.0, 8.0)
    tried = []
    with pytest.warns(BoundWarning, match=r"C = 256, the upper bound .* C = 512 beyond it lower"):
        out = on_bound(point, box, box, better_outside=lambda p: tried.append(p) or True)
    assert out["C"] == 256.0 and tried == [{"sigma": 1.0, "C": 512.0}]
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundWarning)
        assert on_bound(point, box, box, better_outside=lambda p: False)["C"] == 256.0
