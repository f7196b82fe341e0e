"""method="auto": starts, refinement and referee composed; the default of SVMTuner."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from svmtune import SVMTuner
from svmtune.kernels import Kernel
from svmtune.loo.referee import l1_loo_outputs, l2_loo_outputs, ovo_loo_outputs, referee_error
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
    X, y = _large()
    for budget in (2.0, 5.0):
        auto = Auto(budget=budget, rank=60)
        sel = auto.select(X, y, random_state=0)
        f = sel.info["svc_sv_fraction"]
        assert 0.0 < f < 1.0
        plan = auto.plan(*X.shape, 1, sv_fraction=f)
        assert sel.info["plan"] == [vars(s) for s in plan.stages]
        assert sel.info["predicted_cost"] == pytest.approx(plan.cost)
        assert plan.cost <= budget + 1e-9 or plan.stages[0].size == 200
        assert _rows_by_stage(sel) == {i: s.size for i, s in enumerate(plan.stages)}
        assert plan.stages[0].size < len(y)  # a small budget: the first stage subsamples
        for i, stage in enumerate(plan.stages):
            refined = [c for c in sel.history if c["stage"] == i and c["origin"] == "rbsvm"]
            assert len(refined) == (1 if stage.steps or i == 0 else 0)
    small = Auto(budget=2.0, rank=60).plan(*X.shape, 1)
    large = Auto(budget=50.0, rank=60).plan(*X.shape, 1)
    assert large.stages[-1].size >= small.stages[-1].size
    assert sum(s.size * (s.steps + s.scores) for s in large.stages) > sum(
        s.size * (s.steps + s.scores) for s in small.stages
    )


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
    few = auto._final_rule(tight, large_C, 5, X, y, None, order, "ovr")
    lowrank_cost = lambda r: float(r["why"].split("L2-SVM predicted at ")[1].split(" ")[0])  # noqa: E731
    assert lowrank_cost(few) < lowrank_cost(rule) and "(5 landmarks)" in few["why"]
    # after an exact last stage, the trace rule's landmarks at the chosen width on the rows
    # the libsvm fit is predicted from
    from svmtune.lowrank import pivoted_cholesky_landmarks
    from svmtune.methods._fidelity import stage_rows
    from svmtune.methods.auto import LANDMARK_TOL

    rows = stage_rows(order, max(tight.stages[0].size, X.shape[0] // 8))
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


def test_a_choice_on_the_box_bound_is_the_bound_and_warned():
    from svmtune.exceptions import BoundWarning

    X, y = _binary(seed=2)
    with pytest.warns(BoundWarning, match="auto chose C = 256, the upper bound"):
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
        assert 0 < calls[i] <= stage["steps"] + stage["scores"]


def test_the_final_model_is_chosen_by_accuracy_as_well_as_cost():
    """With the budget spent, the low-rank L2-SVM is returned only where its error on
    held-out rows is within the tolerance of libsvm's at the same point: two landmarks on a
    nonlinear problem are far too few, and libsvm is kept; the estimate is the held-out
    error of the model returned."""
    from sklearn.svm import SVC

    from svmtune._labels import first_seen_codes
    from svmtune.kernels import rbf_params
    from svmtune.methods._fidelity import nested_subsample, stage_rows
    from svmtune.methods.auto import HELD_OUT_ROWS, LOWRANK_TOLERANCE

    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(2000, 2))
    y = ((np.sin(3 * X[:, 0]) * np.sin(3 * X[:, 1])) > 0).astype(int)
    order = nested_subsample(y, 0)
    params = rbf_params(0.3, 2.0**6)
    auto = Auto(rank=2)
    tight = dataclasses.replace(auto.plan(*X.shape, 1), budget=1e-3)
    rule = auto._final_rule(tight, params, 2, X, y, None, order, "ovr")
    assert rule["final_model"] == "l1" and "beyond the tolerance" in rule["why"]
    rows = stage_rows(order, max(tight.stages[0].size, X.shape[0] // 8))
    held = np.sort(order[rows.size : rows.size + min(rows.size, HELD_OUT_ROWS)])
    # fitted on the labels' first-seen codes, as the cost probe fits it
    codes = first_seen_codes(y[rows])
    svc = SVC(C=params["C"], gamma=params["gamma"]).fit(X[rows], codes)
    held_codes = np.where(y[held] == y[rows][0], codes[0], 1 - codes[0])
    assert rule["estimate"] == pytest.approx(np.mean(svc.predict(X[held]) != held_codes))
    # more landmarks: beyond the tolerance at 30, within it at 60 (and cheaper than libsvm)
    for rank, final in ((30, "l1"), (60, "lowrank")):
        more = Auto(rank=rank)
        plan = dataclasses.replace(more.plan(*X.shape, 1), budget=1e-3)
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
