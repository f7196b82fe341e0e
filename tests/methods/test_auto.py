"""method="auto": starts, refinement and referee composed; the default of SVMTuner."""

from __future__ import annotations

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
    assert sel.n_svm_fits == sum(c["n_svm_fits"] for c in sel.history)
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


def test_low_rank_path_above_max_dense():
    X, y = _binary(n=120, seed=6)
    sel = Auto(max_dense=100, rank=40).select(X, y, random_state=0)
    assert sel.info["path"] == "lowrank"
    assert sel.final_model == "l1"
    assert "ld" not in [c["origin"] for c in sel.history]
    assert all(c["estimate_l2"] is not None for c in sel.history)
    assert Auto(max_dense=120).select(X, y, random_state=0).info["path"] == "exact"


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
        ("max_dense", True),
        ("rank", -1),
        ("log2_sigma", (4, -4)),
    ],
)
def test_bad_options_name_the_option(option, value):
    with pytest.raises(ValueError, match=option):
        SVMTuner(method="auto", method_params={option: value}).fit(*_binary(n=30))
