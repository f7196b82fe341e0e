"""RMSVMLowRank selector: through SVMTuner, equivalence with RMSVM at full rank, options."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmtune import SVMTuner
from svmtune.kernels import squared_distances
from svmtune.loo.radius_margin_lowrank import lowrank_radius_margin_objective
from svmtune.lowrank import pivoted_cholesky_landmarks
from svmtune.methods.base import Selection, available_methods, get_selector, ovr_tasks
from svmtune.methods.gradient_baselines import RMSVM
from svmtune.methods.radius_margin_lowrank import RMSVMLowRank

from ..conftest import make_problem

INFO = {
    "R2",
    "w2",
    "n_ball",
    "bound",
    "rank",
    "rank_residual",
    "landmark_sigma",
    "n_refresh",
    "n_support",
    "n_iter",
    "n_evals",
    "converged",
    "grad_norm",
}


def _data(n=60, seed=0):
    X, y = make_problem(n, 3, seed)
    return X, (y > 0).astype(int)


def test_registered_and_runs_through_the_tuner():
    assert "radius_margin_lowrank" in available_methods()
    X, y = _data(120, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = SVMTuner(
            method="radius_margin_lowrank",
            method_params={"rank": 20, "max_iter": 10},
            random_state=0,
        ).fit(X, y)
    assert t.final_model_ == "l1"
    assert set(t.best_params_) >= {"kernel", "sigma", "gamma", "C"}
    pred = t.predict(X)
    assert pred.shape == y.shape and set(np.unique(pred)) <= {0, 1}
    assert t.score(X, y) > 0.7
    assert t.estimate_ is None and t.criterion_ > 0
    info = t.selection_.info
    assert INFO <= set(info)
    assert 2 <= info["rank"] <= 20 and 0.0 <= info["rank_residual"] < 1.0
    assert info["landmark_sigma"] > 0 and info["n_refresh"] in (0, 1)
    assert 0.0 <= info["bound"] <= 1.0
    assert t.n_svm_fits_ >= 1 and len(t.history_) == t.n_svm_fits_
    assert all(h["value"] == pytest.approx(np.log(h["T"])) for h in t.history_)
    assert all("stage" in h and "rank" in h for h in t.history_)


def test_full_rank_selection_is_that_of_exact_rmsvm():
    X, y = _data(50, 1)
    opts = dict(start=(1.5, 1.0), max_iter=15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo = RMSVMLowRank(rank=50, rank_tol=1e-12, jitter=0.0, refresh=0, **opts).select(X, y)
        ex = RMSVM(**opts).select(X, y)
    assert lo.info["rank"] == 50
    assert lo.params["sigma"] == pytest.approx(ex.params["sigma"], rel=1e-4)
    assert lo.params["C"] == pytest.approx(ex.params["C"], rel=1e-4)
    assert lo.criterion == pytest.approx(ex.criterion, rel=1e-6)
    for key in ("R2", "w2", "bound"):
        assert lo.info[key] == pytest.approx(ex.info[key], rel=1e-6)
    assert lo.estimate is None and ex.estimate is None


def test_low_rank_contract_determinism_and_criterion():
    X, y = _data(150, 3)
    sel = RMSVMLowRank(rank=15, max_iter=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = sel.select(X, y, random_state=3)
        b = sel.select(X, y, random_state=3)
    assert isinstance(a, Selection) and a.params == b.params
    assert a.final_model == "l1" and a.n_svm_fits == len(a.history)
    # the criterion is T of the final landmarks at the chosen point
    idx, _ = pivoted_cholesky_landmarks(
        X, a.info["landmark_sigma"], tol=1e-2, max_rank=15, min_rank=a.info["rank"]
    )
    D2 = squared_distances(X, X[idx])
    theta = np.log([a.params["sigma"], a.params["C"]])
    T = lowrank_radius_margin_objective(D2, D2[idx], ovr_tasks(y), theta, gradient=False).value
    assert a.criterion == pytest.approx(T, rel=1e-8)


def test_landmarks_are_refreshed_when_sigma_moves():
    X, y = _data(100, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = RMSVMLowRank(rank=25, start=(0.1, 1.0), max_iter=10).select(X, y)
    assert s.info["n_refresh"] == 1
    assert s.info["landmark_sigma"] != pytest.approx(0.1)
    assert {h["stage"] for h in s.history} == {0, 1}


def test_multiclass_and_sample_weight():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(90, 2))
    y = np.digitize(X[:, 0], [-0.4, 0.4])
    w = rng.uniform(0.5, 2.0, size=90)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = RMSVMLowRank(rank=15, max_iter=8).select(X, y, sample_weight=w, random_state=0)
    assert np.isfinite(s.criterion) and s.criterion > 0 and s.info["n_support"] >= 3


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"rank": 1}, "rank"),
        ({"rank": 2.5}, "rank"),
        ({"rank": "big"}, "rank"),
        ({"rank_tol": 0.0}, "rank_tol"),
        ({"rank_tol": 1.0}, "rank_tol"),
        ({"jitter": -1.0}, "jitter"),
        ({"jitter": np.nan}, "jitter"),
        ({"refresh": -1}, "refresh"),
        ({"start_sample": 1}, "start_sample"),
        ({"final_model": "l3"}, "final_model"),
        ({"log2_C": (3, 1)}, "log2_C"),
        ({"start": "mean"}, "start"),
        ({"max_iter": 0}, "max_iter"),
    ],
)
def test_options_are_validated(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RMSVMLowRank(**kwargs)


def test_unknown_option_and_non_rbf_kernel():
    with pytest.raises(ValueError, match="radius_margin_lowrank"):
        get_selector("radius_margin_lowrank", {"loss": "squared"})
    X, y = _data(30, 5)
    with pytest.raises(ValueError, match="kernel"):
        RMSVMLowRank().select(X, y, kernel="linear")
