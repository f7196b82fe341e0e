"""``cv_results_`` in scikit-learn's shape (svmtune._results) for every method."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC
from sklearn.utils.validation import check_random_state

from svmtune import SVMTuner
from svmtune._results import format_results, search_results
from svmtune.methods import available_methods
from svmtune.methods.base import Selection, get_selector
from svmtune.search.cv import make_folds

from .conftest import make_problem
from .test_all_methods import _LIGHT

#: methods whose mean_test_score is an accuracy (CV or closed-form leave-one-out)
_SCORED = {"auto", "grid", "random", "tpe", "optuna", "halving", "cv_cv", "span_rule"}
_SCORED |= {"esdr", "dbtc", "j4", "ld"}  # on the rows of their C stage
#: K-fold searches: split<k>_test_score for every row
_FOLDED = {"grid", "random", "tpe", "optuna", "halving", "cv_cv"}
#: width by a data index, C by K-fold CV
_C_BY_CV = {"esdr", "dbtc", "j4", "ld"}


@pytest.fixture(scope="module")
def data():
    X, y = make_problem(60, 3, 0)
    return X, y


def _fit(method, X, y, **kw):
    params = dict(_LIGHT.get(method, {}))
    if method in _FOLDED:
        params["n_splits"] = 3
    t = SVMTuner(method=method, method_params=params or None, random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.fit(X, y)


@pytest.mark.parametrize("method", available_methods())
def test_cv_results_keys_and_shapes(method, data):
    X, y = data
    t = _fit(method, X, y)
    res = t.cv_results_
    n = len(res["params"])
    assert n == max(1, len(t.history_))  # one row per evaluated candidate (default: its point)
    assert all(isinstance(p, dict) for p in res["params"])
    for key in ("mean_fit_time", "mean_test_score", "rank_test_score", "param_sigma"):
        assert np.shape(res[key]) == (n,), key
    assert isinstance(res["param_sigma"], np.ma.MaskedArray)
    assert res["rank_test_score"].dtype == np.int32 and res["rank_test_score"].min() == 1
    for i, p in enumerate(res["params"]):  # param_<name> masked exactly where a row lacks it
        for name in ("sigma", "C"):
            if f"param_{name}" in res:
                col = res[f"param_{name}"]
                assert bool(np.ma.getmaskarray(col)[i]) == (name not in p)
                if name in p:
                    assert col[i] == p[name]
    df = pd.DataFrame(res)
    assert len(df) == n
    assert 0 <= t.best_index_ < n
    chosen = res["params"][t.best_index_]
    assert chosen["sigma"] == pytest.approx(t.best_params_["sigma"], rel=1e-9)
    if "C" in chosen:
        assert chosen["C"] == pytest.approx(t.best_params_["C"], rel=1e-9)
    assert t.refit_time_ == t.final_fit_time_ > 0
    best = res["mean_test_score"][t.best_index_]
    if method in _SCORED:
        assert 0 <= t.best_score_ <= 1 and t.best_score_ == best
        if method == "halving":  # the best of the last round, as in scikit-learn
            last = res["iter"] == res["iter"].max()
            assert t.best_score_ == np.nanmax(res["mean_test_score"][last])
        else:
            assert res["rank_test_score"][t.best_index_] == 1
    else:  # no per-candidate score: NaN, not an invented number, except the chosen row's
        # 1 - estimate_ where the method estimates the error of its choice
        others = np.arange(n) != t.best_index_
        assert np.isnan(res["mean_test_score"][others]).all()
        if t.estimate_ is None:
            assert np.isnan(t.best_score_)
        else:
            assert t.best_score_ == best == pytest.approx(1 - t.estimate_)
    if method in _FOLDED:
        assert t.n_splits_ == 3
        splits = np.column_stack([res[f"split{k}_test_score"] for k in range(3)])
        assert "split3_test_score" not in res
        np.testing.assert_allclose(splits.mean(axis=1), res["mean_test_score"], atol=1e-12)
        np.testing.assert_allclose(splits.std(axis=1), res["std_test_score"], atol=1e-12)
        ok = np.isfinite(res["mean_test_score"])  # halving: NaN where a fit failed
        assert ok.any()
        np.testing.assert_allclose(1 - res["mean_test_score"][ok], res["cv_loss"][ok], atol=1e-12)
        assert np.all(res["mean_fit_time"] > 0)
    elif method in _C_BY_CV:  # the C stage's rows are cross-validated, the width's not
        c_rows = res["stage"] == "C"
        assert t.n_splits_ == t.selection_.info["n_folds"]
        splits = np.column_stack([res[f"split{k}_test_score"] for k in range(t.n_splits_)])
        assert np.isnan(splits[~c_rows]).all() and np.isfinite(splits[c_rows]).all()
        np.testing.assert_allclose(
            splits[c_rows].mean(axis=1), res["mean_test_score"][c_rows], atol=1e-12
        )
        assert np.all(res["mean_fit_time"][c_rows] > 0)
    else:
        assert t.n_splits_ is None
        assert not any(k.startswith("split") for k in res)


def test_criterion_in_its_own_column(data):
    X, y = data
    t = _fit("rbsvm", X, y)
    np.testing.assert_array_equal(t.cv_results_["value"], [h["value"] for h in t.history_])
    assert t.cv_results_["value"][t.best_index_] == pytest.approx(t.criterion_)
    e = _fit("esdr", X, y)
    res = e.cv_results_
    width = res["stage"] == "sigma"
    assert width.any() and (~width).any()
    assert np.ma.getmaskarray(res["param_C"])[width].all()  # the width stage has no C
    assert np.isnan(res["mean_test_score"][width]).all()
    assert np.isfinite(res["esdr"][width]).all() and np.isnan(res["esdr"][~width]).all()
    # the C stage ran at the chosen width
    assert np.all(res["param_sigma"][~width] == e.best_params_["sigma"])
    a = _fit("auto", X, y)
    assert a.history_[a.best_index_]["chosen"]
    best_family = np.fmin(a.cv_results_["estimate_l1"], a.cv_results_["estimate_l2"])
    np.testing.assert_allclose(a.cv_results_["mean_test_score"], 1 - best_family, atol=1e-12)
    assert a.best_score_ == pytest.approx(1 - a.estimate_)


def test_history_kept_as_it_was(data):
    X, y = data
    t = _fit("grid", X, y)
    assert t.history_ == list(t.selection_.history)
    assert all({"sigma", "C", "cv_loss"} <= set(h) for h in t.history_)


@pytest.mark.parametrize("multiclass", [False, True])
def test_grid_cv_results_equal_gridsearchcv(multiclass):
    """The grid search's cv_results_ equal scikit-learn's GridSearchCV on the same folds,
    candidates and SVC: same candidates, fold scores, means, stds and ranks."""
    X, y = make_problem(72, 3, 4)
    if multiclass:
        y = np.where(X[:, 1] > 0.4, 2.0, y)
    sigmas, Cs = 2.0 ** np.arange(-1, 3), 2.0 ** np.arange(-2, 5, 2)
    params = {"sigmas": sigmas, "Cs": Cs, "n_splits": 4}
    # libsvm's own multiclass SVM (one-vs-one) is what GridSearchCV(SVC()) scores
    t = SVMTuner(
        method="grid", method_params=params, preprocess="none", random_state=3, multiclass="ovo"
    ).fit(X, y)
    # the tuner's folds: make_folds with the seed it draws from random_state
    seed = int(check_random_state(3).randint(np.iinfo(np.int32).max))
    folds = make_folds(np.unique(y, return_inverse=True)[1], 4, seed)
    ref = GridSearchCV(
        SVC(),
        {"gamma": list(1.0 / (2.0 * sigmas**2)), "C": list(Cs)},
        cv=folds,
        scoring="accuracy",
    ).fit(X, y)
    ours, theirs = t.cv_results_, ref.cv_results_
    key = {
        (round(1.0 / (2.0 * p["sigma"] ** 2), 12), p["C"]): i for i, p in enumerate(ours["params"])
    }
    order = [key[(round(p["gamma"], 12), p["C"])] for p in theirs["params"]]
    assert sorted(order) == list(range(len(ours["params"])))  # the same candidates
    for col in ["mean_test_score", "std_test_score"] + [f"split{k}_test_score" for k in range(4)]:
        np.testing.assert_allclose(ours[col][order], theirs[col], atol=1e-12, err_msg=col)
    # scikit-learn's ranks, with ties that rounding noise (1 - 2/18 against 16/18) breaks
    # in its floats kept as ties
    tied = rankdata(-np.round(theirs["mean_test_score"], 12), method="min")
    np.testing.assert_array_equal(ours["rank_test_score"][order], tied)
    assert t.n_splits_ == ref.n_splits_ == 4
    assert t.best_score_ == pytest.approx(ref.best_score_, abs=1e-12)
    assert order[ref.best_index_] == t.best_index_
    assert t.best_params_["C"] == ref.best_params_["C"]
    assert 1.0 / (2.0 * t.best_params_["sigma"] ** 2) == pytest.approx(ref.best_params_["gamma"])


def test_format_results_rank_and_masks():
    rows = [
        {"params": {"sigma": 1.0}, "score": np.nan, "split_scores": None,
         "fit_time": np.nan, "extra": {"stage": "sigma", "esdr": 0.5}},
        {"params": {"sigma": 1.0, "C": 2.0}, "score": 0.8, "split_scores": [0.7, 0.9],
         "fit_time": 0.1, "extra": {"stage": "C", "cv_loss": 0.2}},
        {"params": {"sigma": 1.0, "C": 4.0}, "score": 0.8, "split_scores": [0.8, 0.8],
         "fit_time": 0.2, "extra": {"stage": "C", "cv_loss": 0.2}},
        {"params": {"sigma": 1.0, "C": 8.0}, "score": 0.9, "split_scores": [0.9, 0.9],
         "fit_time": 0.3, "extra": {"stage": "C", "cv_loss": 0.1}},
    ]  # fmt: skip
    res = format_results(rows)
    # scikit-learn's ranks: 1 best, ties share the lower rank, NaN last
    np.testing.assert_array_equal(res["rank_test_score"], [4, 2, 2, 1])
    np.testing.assert_array_equal(np.ma.getmaskarray(res["param_C"]), [True, False, False, False])
    assert res["param_C"].dtype == float
    np.testing.assert_array_equal(res["split0_test_score"], [np.nan, 0.7, 0.8, 0.9])
    np.testing.assert_allclose(res["std_test_score"], [np.nan, 0.1, 0.0, 0.0])
    np.testing.assert_array_equal(res["esdr"], [0.5, np.nan, np.nan, np.nan])
    assert list(res["stage"]) == ["sigma", "C", "C", "C"]
    every_nan = format_results([dict(rows[0]), dict(rows[0])])
    np.testing.assert_array_equal(every_nan["rank_test_score"], [1, 1])  # as scikit-learn


def test_hinge_and_f1_scores_keep_higher_is_better():
    hist = [{"sigma": 1.0, "C": 1.0, "cv_loss": 0.25, "split_losses": [0.2, 0.3]}]
    sel = Selection(params={"sigma": 1.0, "C": 1.0}, history=hist)
    hinge, _, k = search_results(sel, get_selector("grid"), scoring="hinge")
    assert hinge["mean_test_score"][0] == -0.25 and k == 2
    np.testing.assert_allclose([hinge["split0_test_score"][0], hinge["split1_test_score"][0]],
                               [-0.2, -0.3])  # fmt: skip
    f1, _, _ = search_results(sel, get_selector("grid"), scoring="f1")
    assert f1["mean_test_score"][0] == 0.75


def test_halving_best_index_in_last_round(data):
    X, y = data
    t = _fit("halving", X, y)
    res = t.cv_results_
    assert res["iter"][t.best_index_] == res["iter"].max()
    assert res["mean_test_score"][t.best_index_] == t.best_score_


def test_auto_low_rank_path_scores_by_the_l2_estimate(data):
    X, y = data
    t = SVMTuner(method="auto", method_params={"exact_rows": 0}, random_state=0).fit(X, y)
    res = t.cv_results_
    assert t.selection_.info["path"] == "lowrank"
    assert all(v is None for v in res["estimate_l1"])  # no libsvm estimate on this path
    np.testing.assert_allclose(res["mean_test_score"], 1 - res["estimate_l2"].astype(float))
    assert res["rank_test_score"][t.best_index_] == 1 and t.history_[t.best_index_]["chosen"]


#: every registered method, and span_rule in each search mode and criterion
_SPAN_RULE_MODES = [
    {"search": "class_weights", "log2_C_pos": (-2, 2, 2), "log2_C_neg": (-2, 2, 2)},
    {"search": "instance_weights", "A_values": (1.0, 2.0), "B_values": (0.0, 0.5),
     "log2_C": (-2, 2, 2)},
    {**_LIGHT["span_rule"], "criterion": "cv"},
    {**_LIGHT["span_rule"], "criterion": "span_bound"},
    {**_LIGHT["span_rule"], "criterion": "xi_alpha"},
]  # fmt: skip
_EVERY_SEARCH = [(m, None) for m in available_methods()] + [
    ("span_rule", p) for p in _SPAN_RULE_MODES
]


@pytest.fixture(scope="module")
def fitted(data):
    """Each method (and span_rule mode) fitted once, with string-free float labels."""
    X, y = data
    out = {}
    for method, params in _EVERY_SEARCH:
        kw = dict(params or _LIGHT.get(method, {}))
        if kw.get("search") == "instance_weights":
            kw["scores"] = np.linspace(0.1, 1.0, len(y))
        if method in _FOLDED:
            kw["n_splits"] = 3
        t = SVMTuner(method=method, method_params=kw or None, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[(method, repr(params))] = t.fit(X, y)
    return out


@pytest.mark.parametrize(("method", "params"), _EVERY_SEARCH, ids=lambda v: str(v))
def test_params_of_best_index_are_best_params(method, params, fitted):
    """``cv_results_["params"][best_index_]`` is ``best_params_`` for every method and
    search mode: every searched hyperparameter (a fixed C, a class weight keyed by the
    user's labels) and the chosen row, which ranks first (halving: in its last round)."""
    t = fitted[(method, repr(params))]
    res = t.cv_results_
    row = res["params"][t.best_index_]
    keys = {"sigma", "C", "class_weight", "degree", "coef0"} & set(t.best_params_)
    if "param_kernel" in res:
        keys.add("kernel")
    assert set(row) == keys
    for k in keys:
        if isinstance(row[k], float):
            assert row[k] == pytest.approx(t.best_params_[k], rel=1e-12), k
        else:
            assert row[k] == t.best_params_[k], k
    if method == "halving":
        last = res["iter"] == res["iter"].max()
        assert res["rank_test_score"][t.best_index_] == res["rank_test_score"][last].min()
    else:
        assert res["rank_test_score"][t.best_index_] == 1


@pytest.mark.parametrize(("method", "params"), _EVERY_SEARCH, ids=lambda v: str(v))
def test_best_score_is_one_minus_the_estimate(method, params, fitted):
    """``best_score_`` is the accuracy ``1 - estimate_`` wherever the method estimates the
    error of its choice (span_rule with criterion="cv" ranks by CV accuracy instead), the
    chosen row's ``mean_test_score``, and NaN only where there is no estimate and no score."""
    t = fitted[(method, repr(params))]
    assert t.best_score_ == t.cv_results_["mean_test_score"][t.best_index_] or (
        np.isnan(t.best_score_) and np.isnan(t.cv_results_["mean_test_score"][t.best_index_])
    )
    if t.estimate_ is None:
        if np.isnan(t.best_score_):
            assert method in ("default", "ss", "ld_c1", "radius_margin", "radius_margin_lowrank")
    elif (params or {}).get("criterion") == "cv":
        assert t.best_score_ == pytest.approx(1 - t.criterion_, abs=1e-12)
    else:
        assert t.best_score_ == pytest.approx(1 - t.estimate_, abs=1e-12)
