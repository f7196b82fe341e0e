"""SpanSVMLowRank: tuner contract, equivalence with SpanSVM at full rank, option validation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmtune import SVMTuner
from svmtune.kernels import squared_distances
from svmtune.loo.span_lowrank import lowrank_span_objective, lowrank_span_rule_error
from svmtune.lowrank import pivoted_cholesky_landmarks
from svmtune.methods.base import Selection, get_selector, ovr_tasks
from svmtune.methods.gradient_baselines import SpanSVM
from svmtune.methods.span_lowrank import SpanSVMLowRank

from ..conftest import make_problem


def _data(n=60, seed=0):
    X, y = make_problem(n, 3, seed)
    return X, (y > 0).astype(int)


def test_tuner_fits_and_predicts():
    X, y = _data(120, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bound / convergence warnings on tiny data
        t = SVMTuner(
            method="span_lowrank", method_params={"rank": 20, "max_iter": 15}, random_state=0
        ).fit(X, y)
    assert isinstance(t.selection_, Selection)
    assert t.final_model_ == "l1"
    assert set(t.best_params_) >= {"kernel", "sigma", "gamma", "C"}
    assert t.score(X, y) > 0.7
    assert 0.0 <= t.estimate_ <= 1.0
    assert t.n_svm_fits_ >= 1 and len(t.history_) == t.n_svm_fits_
    # the search decreased the criterion within its last stage (the criteria of different
    # landmark sets are not comparable)
    last = [h for h in t.history_ if h["stage"] == t.history_[-1]["stage"]]
    assert t.criterion_ <= last[0]["value"] * (1 + 1e-12)
    info = t.selection_.info
    for key in ("rank", "rank_residual", "landmark_sigma", "n_refresh", "span_rule_error"):
        assert key in info
    assert 2 <= info["rank"] <= 20 and info["n_refresh"] in (0, 1)
    assert (info["eta"], info["A"], info["B"]) == (0.1, 5.0, 0.0)
    assert info["span_rule_error"] == t.estimate_
    assert all("stage" in h and "rank" in h and "n_sv" in h for h in t.history_)


@pytest.mark.parametrize("multiclass", [False, True])
def test_full_rank_selection_equals_exact_span_svm(multiclass):
    if multiclass:
        rng = np.random.default_rng(4)
        X = rng.normal(size=(45, 3))
        y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=45), [-0.4, 0.4])
        w = rng.uniform(0.5, 2.0, size=45)
    else:
        X, y = _data(50, 1)
        w = None
    n = len(y)
    opts = dict(start=(1.5, 1.0), max_iter=15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo = SpanSVMLowRank(rank=n, rank_tol=1e-12, jitter=0.0, refresh=0, **opts).select(
            X, y, sample_weight=w
        )
        ex = SpanSVM(**opts).select(X, y, sample_weight=w)
    assert lo.info["rank"] == n
    assert lo.params["sigma"] == pytest.approx(ex.params["sigma"], rel=1e-4)
    assert lo.params["C"] == pytest.approx(ex.params["C"], rel=1e-4)
    assert lo.criterion == pytest.approx(ex.criterion, rel=1e-6)
    assert lo.estimate == pytest.approx(ex.estimate)


def test_low_rank_estimate_and_criterion_are_those_of_the_chosen_point():
    X, y = _data(150, 2)
    sel = SpanSVMLowRank(rank=15, max_iter=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = sel.select(X, y, random_state=3)
        b = sel.select(X, y, random_state=3)
    assert a.params == b.params  # deterministic
    assert a.info["rank"] <= 15 < len(y)
    idx, resid = pivoted_cholesky_landmarks(
        X, a.info["landmark_sigma"], tol=1e-2, max_rank=15, min_rank=a.info["rank"]
    )
    assert idx.size == a.info["rank"] and resid == pytest.approx(a.info["rank_residual"])
    D2_nm = squared_distances(X, X[idx])
    theta = np.log([a.params["sigma"], a.params["C"]])
    obj = lowrank_span_objective(D2_nm, D2_nm[idx], ovr_tasks(y), theta, gradient=False)
    assert a.criterion == pytest.approx(obj.value, rel=1e-8)
    assert a.estimate == pytest.approx(lowrank_span_rule_error(obj.solutions, obj.Z, y))


@pytest.mark.parametrize(
    "params,match",
    [
        ({"rank": 1}, "rank"),
        ({"rank": 2.5}, "rank"),
        ({"rank_tol": 0.0}, "rank_tol"),
        ({"jitter": -1.0}, "jitter"),
        ({"refresh": -1}, "refresh"),
        ({"start_sample": 1}, "start_sample"),
        ({"final_model": "l3"}, "final_model"),
        ({"eta": -0.1}, "eta"),
        ({"eta": "x"}, "eta"),
        ({"A": 0}, "slope"),
        ({"B": float("nan")}, "offset"),
        ({"log2_C": (3, 1)}, "log2_C"),
        ({"max_iter": 0}, "max_iter"),
        ({"loss": "squared"}, "loss"),  # an RBSVM option, not a span one
    ],
)
def test_options_are_validated(params, match):
    with pytest.raises(ValueError, match=match):
        get_selector("span_lowrank", params)


def test_registered_and_rbf_only():
    assert isinstance(get_selector("span_lowrank"), SpanSVMLowRank)
    assert SpanSVMLowRank.name == "span_lowrank"
    X, y = _data(20, 5)
    with pytest.raises(ValueError, match="rbf"):
        SpanSVMLowRank().select(X, y, kernel="linear")
