from __future__ import annotations

import warnings

import numpy as np
import pytest

import svmtune.methods.gradient_baselines as gb
from svmtune import SVMTuner
from svmtune.exceptions import BoundWarning, ConvergenceWarning
from svmtune.kernels import rbf_from_sqdist, squared_distances
from svmtune.loo.radius_margin import radius_margin
from svmtune.loo.span import smoothed_span, span_rule_error_ovr
from svmtune.methods.base import get_selector, ovr_tasks
from svmtune.methods.gradient_baselines import RMSVM, SpanSVM
from svmtune.svm import fit_l2_svm

from ..conftest import make_problem


def binary_data(n=60, seed=0):
    X, y = make_problem(n, 3, seed)
    return X, (y > 0).astype(int)


def three_classes(n_per=15, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [2.5, 0.0], [0.0, 2.5]])
    X = np.vstack([rng.normal(size=(n_per, 2)) + c for c in centres])
    return X, np.repeat(np.arange(3), n_per)


@pytest.mark.parametrize("method", ["span", "radius_margin"])
def test_tuner_fits_and_predicts(method):
    X, y = binary_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundWarning)  # legitimate on tiny data
        t = SVMTuner(method=method, random_state=0).fit(X, y)
    assert t.final_model_ == "l2"
    assert set(t.best_params_) >= {"kernel", "sigma", "gamma", "C"}
    for name in ("sigma", "C"):
        assert 2.0**-8 * (1 - 1e-9) <= t.best_params_[name] <= 2.0**8 * (1 + 1e-9)
    pred = t.predict(X)
    assert pred.shape == y.shape and set(np.unique(pred)) <= {0, 1}
    assert t.score(X, y) > 0.7
    proba = t.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert t.n_svm_fits_ >= 1 and len(t.history_) == t.n_svm_fits_
    # the shared optimiser's history: log2 coordinates and the accepted iterates
    assert {"log2_sigma", "log2_C", "value", "accepted", "n_sv"} <= set(t.history_[0])
    # the search decreased the criterion from its start (RMSVM optimises log T)
    start = t.history_[0]["value"] if method == "span" else np.exp(t.history_[0]["value"])
    assert t.criterion_ <= start * (1 + 1e-12)
    if method == "span":
        assert 0.0 <= t.estimate_ <= 1.0
    else:
        assert t.estimate_ is None and t.criterion_ > 0
        assert 0.0 <= t.selection_.info["bound"] <= 1.0
        assert all(h["value"] == pytest.approx(np.log(h["T"])) for h in t.history_)


@pytest.mark.parametrize("method", ["span", "radius_margin"])
def test_multiclass_and_sample_weight(method):
    X, y = three_classes()
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundWarning)
        # radius_margin warns about unequal weights (tested below); it does fine here
        warnings.filterwarnings("ignore", message="the positive sample weights differ")
        t = SVMTuner(method=method, random_state=0).fit(X, y, sample_weight=w)
    assert t.decision_function(X).shape == (len(y), 3)
    assert t.score(X, y) > 0.7
    assert t.selection_.info["n_support"] >= 3


def test_span_estimate_and_criterion_are_those_of_the_chosen_point():
    X, y = binary_data(50, 3)
    sel = SpanSVM().select(X, y, random_state=0)
    K = rbf_from_sqdist(squared_distances(X), sel.params["sigma"])
    sols = [fit_l2_svm(K, t, sel.params["C"]) for t in ovr_tasks(y)]
    assert sel.estimate == pytest.approx(span_rule_error_ovr(sols, K, y))
    assert sel.criterion == pytest.approx(sum(smoothed_span(K, s).value for s in sols), rel=1e-9)
    assert sel.final_model == "l2"
    assert sel.info["eta"] == 0.1 and sel.info["A"] == 5.0 and sel.info["B"] == 0.0


def test_rm_criterion_is_that_of_the_chosen_point():
    X, y = three_classes(12, 2)
    sel = RMSVM().select(X, y, random_state=0)
    K = rbf_from_sqdist(squared_distances(X), sel.params["sigma"])
    sols = [fit_l2_svm(K, t, sel.params["C"]) for t in ovr_tasks(y)]
    rm = radius_margin(K, sols)
    assert sel.criterion == pytest.approx(rm.value, rel=1e-9)
    assert sel.info["R2"] == pytest.approx(rm.R2, rel=1e-9)
    assert sel.estimate is None


@pytest.mark.filterwarnings("ignore::svmtune.svm.ConvergenceWarning")
def test_both_use_the_shared_optimiser(monkeypatch):
    calls = []
    real = gb.minimize_log_params

    def spy(fun, theta0, **kw):
        calls.append(kw)
        return real(fun, theta0, **kw)

    monkeypatch.setattr(gb, "minimize_log_params", spy)
    X, y = binary_data(30, 1)
    SpanSVM(max_iter=3).select(X, y, random_state=0)
    RMSVM(max_iter=3, log2_C=(-2, 6)).select(X, y, random_state=0)
    assert len(calls) == 2
    assert calls[0]["bounds"] == [(-8.0, 8.0), (-8.0, 8.0)]
    assert calls[1]["bounds"] == [(-8.0, 8.0), (-2.0, 6.0)]


@pytest.mark.filterwarnings("ignore::svmtune.svm.ConvergenceWarning")
def test_explicit_start_and_restarts_are_reproducible():
    X, y = binary_data(40, 2)
    a = SpanSVM(start=(1.0, 2.0), restarts=1, max_iter=5).select(X, y, random_state=3)
    b = SpanSVM(start={"sigma": 1.0, "C": 2.0}, restarts=1, max_iter=5).select(X, y, random_state=3)
    assert a.params == b.params
    assert a.info["start_sigma"] == pytest.approx(1.0) and a.info["start_C"] == pytest.approx(2.0)
    assert {h["start"] for h in a.history} == {0, 1}


@pytest.mark.parametrize(
    "method,params,match",
    [
        ("span", {"eta": -0.1}, "eta"),
        ("span", {"A": 0}, "slope"),
        ("span", {"B": float("nan")}, "offset"),
        ("span", {"log2_sigma": (3, 1)}, "log2_sigma"),
        ("radius_margin", {"log2_C": "wide"}, "log2_C"),
        ("radius_margin", {"start": "mean"}, "start"),
        ("radius_margin", {"start": (0.0, 1.0)}, "positive"),
        ("radius_margin", {"restarts": -1}, "restarts"),
        ("radius_margin", {"max_iter": 0}, "max_iter"),
        ("span", {"tol": 0.0}, "tol"),
        ("radius_margin", {"eta": 0.1}, "radius_margin"),  # span-only option
    ],
)
def test_options_are_validated(method, params, match):
    with pytest.raises(ValueError, match=match):
        get_selector(method, params)


def test_only_rbf_kernel():
    X, y = binary_data(20, 0)
    with pytest.raises(ValueError, match="rbf"):
        SpanSVM().select(X, y, kernel="linear")


@pytest.mark.parametrize("cls", [SpanSVM, RMSVM])
def test_duplicated_points_give_finite_results(cls):
    X, y = binary_data(20, 4)
    X = np.vstack([X, X])
    y = np.concatenate([y, y])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)  # max_iter=10
        sel = cls(max_iter=10).select(X, y, random_state=0)
    assert np.isfinite(sel.criterion)
    assert np.isfinite(sel.params["sigma"]) and np.isfinite(sel.params["C"])


@pytest.mark.parametrize("method", ["radius_margin", "radius_margin_lowrank"])
def test_rm_warns_when_the_weights_differ(method):
    X, y = binary_data(40, 3)
    wide = np.where(np.arange(len(y)) % 2 == 0, 0.5, 2.0)
    wide[0] = 0.0  # zero-weight points do not count in the spread
    equal = np.full(len(y), 2.0)
    equal[1] = 0.0
    sel = get_selector(method, {"max_iter": 5})
    messages = {}
    for name, w, spread in (("wide", wide, 4.0), ("equal", equal, 1.0), ("none", None, 1.0)):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            s = sel.select(X, y, sample_weight=w, random_state=0)
        messages[name] = [str(r.message) for r in rec if "weights differ" in str(r.message)]
        assert s.info["weight_spread"] == pytest.approx(spread)
    assert len(messages["wide"]) == 1
    assert "(by a factor of 4, class weights included)" in messages["wide"][0]
    assert messages["equal"] == [] and messages["none"] == []
