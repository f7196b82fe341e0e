"""SpanRule selector: sigma/C, class-weight and instance-weight searches, through SVMTuner."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.datasets import load_iris

from svmtune import SVMTuner
from svmtune.kernels import Kernel
from svmtune.loo.span_bounds import estimate_span_bound, estimate_xi_alpha
from svmtune.loo.span_rule import estimate_span_rule, span_rule_loo_decision
from svmtune.loo.weights import sigmoid_sample_weights
from svmtune.methods import get_selector
from svmtune.methods.base import ovr_tasks
from svmtune.methods.span_rule import SpanRule, class_weight_params, unit_range_sigma
from svmtune.search.cv import cv_errors, make_folds
from svmtune.svm import fit_l1_svm

from ..conftest import make_problem

TINY = {"log2_sigma": (-1, 1, 1), "log2_C": (-1, 2, 1)}
TINY_CW = {"search": "class_weights", "log2_C_pos": (-1, 3, 2), "log2_C_neg": (-1, 3, 2)}


def data01(n=60, d=3, seed=0):
    X, y = make_problem(n, d, seed, imbalance=0.35)
    return X, (y > 0).astype(int)


def refit(X, y01, params, sample_weight=None):
    """The selected SVM re-trained from its parameters (the model the criterion scored)."""
    kern = Kernel.from_params(params)
    cw = params.get("class_weight") or {0: 1.0, 1: 1.0}
    w = np.where(y01 == 1, cw[1], cw[0])
    if sample_weight is not None:
        w = w * sample_weight
    K = kern(X)
    return fit_l1_svm(np.where(y01 == 1, 1.0, -1.0), params["C"], K=K, sample_weight=w), K


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "opts,match",
    [
        ({"search": "grid"}, "search must be one of"),
        ({"criterion": "loo"}, "criterion must be one of"),
        ({"search": "instance_weights"}, "needs scores"),
        ({"search": "class_weights", "scores": [0.1, 0.2]}, "scores are used by"),
        ({"weight_fn": lambda q, A, B, C: q}, "give scores"),
        ({"scores": [0.1], "weight_fn": 3}, "callable"),
        ({"search": "class_weights", "sigma": 1.0, "unit_gamma": 1.0}, "not both"),
        ({"sigma": 1.0}, "selects sigma on a grid"),
        ({"search": "class_weights", "sigma": -1.0}, "sigma must be a positive finite number"),
        ({"log2_sigma": (2, 1, 1)}, "lo <= hi"),
        ({"log2_sigma": (1,)}, r"log2_sigma must be a tuple \(lo, hi\) or \(lo, hi, step\)"),
        ({"Cs": [1.0, -2.0]}, "positive"),
        ({"n_splits": 1}, "n_splits"),
        ({"tol": 0.0}, "tol"),
        ({"floor": -0.1, "scores": [0.2]}, "floor"),
        ({"A_values": [], "scores": [0.2]}, "A_values"),
        ({"search": "class_weights", "sigmas": [1.0]}, "use sigma="),
    ],
)
def test_option_validation(opts, match):
    with pytest.raises(ValueError, match=match):
        SpanRule(**opts)


def test_registered_and_reaches_tuner_errors():
    assert isinstance(get_selector("span_rule", TINY), SpanRule)
    with pytest.raises(ValueError, match="criterion"):
        SVMTuner(method="span_rule", method_params={"criterion": "x"}).fit(*data01())


def test_defaults_are_the_papers_grids():
    assert SpanRule().sigmas.size == 17 and SpanRule().Cs.size == 17  # log2 in [-8, 8]
    cw = SpanRule(search="class_weights")
    assert cw.C_pos.size == cw.C_neg.size == 33  # 33 x 33 = 1089 models
    iw = SpanRule(scores=np.zeros(5))
    assert iw.search == "instance_weights"
    assert iw.A_values.size * iw.B_values.size * iw.Cs.size == 1700


# ---------------------------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------------------------
def test_unit_range_sigma_is_the_paper_heuristic_on_unit_data():
    rng = np.random.default_rng(0)
    U = rng.random((50, 4))
    U = (U - U.min(0)) / (U.max(0) - U.min(0))  # every feature spans exactly [0, 1]
    assert unit_range_sigma(U) == pytest.approx(np.sqrt(4 / 2))  # gamma = 1/d
    assert unit_range_sigma(U, unit_gamma=0.5) == pytest.approx(1.0)


def test_unit_range_sigma_reproduces_minmax_kernel_when_ranges_are_equal():
    # Standardised features with equal ranges: the isotropic kernel on X is exactly the
    # paper's exp(-(1/d) ||u - u'||^2) on the min-max scaled features.
    rng = np.random.default_rng(1)
    X = np.column_stack(
        [rng.uniform(-1, 1, 40), rng.uniform(-1, 1, 40) ** 3, np.sign(rng.normal(size=40))]
    )
    X[0], X[1] = 1.0, -1.0  # every feature spans [-1, 1]; the variances differ
    r = X.max(0) - X.min(0)
    np.testing.assert_allclose(r, r[0])
    U = (X - X.min(0)) / r
    K_paper = np.exp(-(1 / 3) * ((U[:, None, :] - U[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(Kernel("rbf", sigma=unit_range_sigma(X))(X), K_paper, atol=1e-12)


def test_unit_range_sigma_matches_mean_exponent_and_ignores_constant_features():
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(size=80), 5 * rng.standard_t(3, size=80), np.full(80, 2.0)])
    U = (X[:, :2] - X[:, :2].min(0)) / np.ptp(X[:, :2], axis=0)
    g_x = 1 / (2 * unit_range_sigma(X) ** 2)
    D2x = ((X[:, None] - X[None]) ** 2).sum(-1)
    D2u = ((U[:, None] - U[None]) ** 2).sum(-1)
    assert g_x * D2x.mean() == pytest.approx((1 / 3) * D2u.mean())
    with pytest.warns(RuntimeWarning, match="constant"):
        unit_range_sigma(np.ones((5, 2)))


def test_class_weight_params():
    C, cw = class_weight_params(8.0, 2.0)
    assert C == 2.0 and cw == {0: 1.0, 1: 4.0}
    with pytest.raises(ValueError):
        class_weight_params(0.0, 1.0)


# ---------------------------------------------------------------------------------------------
# sigma / C search
# ---------------------------------------------------------------------------------------------
def test_sigma_C_search_minimises_span_rule_and_reports_its_estimate():
    X, y = data01()
    sel = SpanRule(**TINY).select(X, y)
    assert len(sel.history) == 3 * 4 and sel.n_svm_fits == 12
    values = [h["span_rule"] for h in sel.history]
    assert sel.criterion == min(values) == sel.estimate
    sol, K = refit(X, y, sel.params)
    assert estimate_span_rule(sol, K) == sel.estimate
    assert sel.final_model == "l1" and set(sel.params) == {"kernel", "sigma", "gamma", "C"}
    for h in sel.history:
        assert {"n_sv", "n_inbound", "n_empty", "xi_alpha", "time_fit", "time_span"} <= set(h)


def test_ties_prefer_fewer_support_vectors():
    X, y = data01(seed=4)
    sel = SpanRule(**TINY).select(X, y)
    best = [h for h in sel.history if h["span_rule"] == sel.criterion]
    assert sel.info["n_sv"] == min(h["n_sv"] for h in best)


def test_tuner_fit_predict_and_estimate():
    X, y = make_problem(70, 3, 5)
    Xt, yt = make_problem(60, 3, 15)
    t = SVMTuner(method="span_rule", method_params=TINY, random_state=0).fit(X, y)
    assert t.predict(Xt).shape == (60,) and set(t.predict(Xt)) <= {-1.0, 1.0}
    assert 0.0 <= t.estimate_ <= 1.0 and t.score(Xt, yt) > 0.6
    assert t.n_svm_fits_ == 12 and len(t.history_) == 12


def test_extreme_widths_give_finite_results():
    X, y = data01(n=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sel = SpanRule(sigmas=[2.0**-8, 1.0, 2.0**8], Cs=[1.0, 256.0]).select(X, y)
    vals = np.array([[h["span_rule"], h["xi_alpha"]] for h in sel.history])
    assert np.all(np.isfinite(vals)) and np.all((vals >= 0) & (vals <= 1))


def test_multiclass_is_one_vs_rest_leave_one_out():
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    idx = np.r_[0:15, 50:65, 100:115]
    X, y = X[idx], y[idx]
    sel = SpanRule(sigmas=[1.0], Cs=[1.0, 8.0]).select(X, y)
    assert sel.n_svm_fits == 2 * 3
    for h in sel.history:
        K = Kernel("rbf", sigma=1.0)(X)
        F = np.column_stack(
            [span_rule_loo_decision(fit_l1_svm(t, h["C"], K=K), K) for t in ovr_tasks(y)]
        )
        assert h["span_rule"] == np.mean(np.argmax(F, axis=1) != y)
    with pytest.raises(ValueError, match="binary"):
        SpanRule(**TINY_CW).select(X, y)
    with pytest.raises(ValueError, match="binary"):
        SpanRule(sigmas=[1.0], Cs=[1.0], criterion="xi_alpha").select(X, y)


def test_parallel_equals_sequential():
    # The candidates are split into blocks for the workers and merged back in grid order
    # (threads here: a process pool would only add its start-up time to the test).
    X, y = data01(n=40)
    a = SpanRule(**TINY).select(X, y, n_jobs=1)
    with parallel_config(backend="threading"):
        b = SpanRule(**TINY).select(X, y, n_jobs=2)
    assert a.params == b.params
    assert [h["span_rule"] for h in a.history] == [h["span_rule"] for h in b.history]


def test_user_sample_weight_enters_the_fits():
    X, y = data01(n=40)
    w = np.linspace(0.5, 2.0, 40)
    sel = SpanRule(sigmas=[1.0], Cs=[2.0]).select(X, y, w)
    sol, K = refit(X, y, sel.params, sample_weight=w)
    assert estimate_span_rule(sol, K) == sel.estimate


# ---------------------------------------------------------------------------------------------
# Other criteria
# ---------------------------------------------------------------------------------------------
def test_cv_criterion_goes_through_shared_cv():
    X, y = data01(n=50)
    sel = SpanRule(criterion="cv", **TINY).select(X, y, random_state=3)
    folds = make_folds(y, 5, 3)
    cands = [{"kernel": "rbf", "sigma": h["sigma"], "C": h["C"]} for h in sel.history]
    errs = cv_errors(X, y, cands, folds=folds)
    np.testing.assert_allclose([h["cv"] for h in sel.history], errs)
    assert sel.criterion == errs.min()
    assert sel.n_svm_fits == len(cands) * 5 + 1
    sol, K = refit(X, y, sel.params)
    assert sel.estimate == estimate_span_rule(sol, K)


@pytest.mark.parametrize("criterion", ["xi_alpha", "span_bound"])
def test_bound_criteria(criterion):
    X, y = data01(n=40)
    sel = SpanRule(criterion=criterion, **TINY_CW).select(X, y)
    sol, K = refit(X, y, sel.params)
    fn = estimate_xi_alpha if criterion == "xi_alpha" else estimate_span_bound
    assert sel.criterion == pytest.approx(fn(sol, K), rel=1e-12)
    assert sel.criterion == min(h[criterion] for h in sel.history)
    assert sel.estimate == estimate_span_rule(sol, K)


# ---------------------------------------------------------------------------------------------
# Class weights
# ---------------------------------------------------------------------------------------------
def test_class_weight_search_final_model_reproduces_selected_svm():
    X, y = make_problem(60, 3, 7, imbalance=0.3)
    Xt, _ = make_problem(40, 3, 17)
    t = SVMTuner(method="span_rule", method_params=TINY_CW, random_state=0).fit(X, y)
    p = t.selection_.params  # class_weight keyed by the encoded labels the SVM saw
    info = t.selection_.info
    assert t.n_svm_fits_ == 9 and info["search"] == "class_weights"
    assert p["C"] == info["C_neg"] and p["class_weight"] == {
        0: 1.0,
        1: info["C_pos"] / info["C_neg"],
    }
    # best_params_ keys them by the labels of y (-1, +1), as SVC(class_weight=...) takes them
    assert t.best_params_["class_weight"] == {-1: 1.0, 1: info["C_pos"] / info["C_neg"]}
    Xp = t.preprocessor_.transform(X)
    assert p["sigma"] == pytest.approx(unit_range_sigma(Xp))
    y01 = (y > 0).astype(int)
    sol, K = refit(Xp, y01, p)
    assert estimate_span_rule(sol, K) == t.estimate_
    f_sel = sol.decision_function(Kernel.from_params(p)(t.preprocessor_.transform(Xt), Xp))
    np.testing.assert_allclose(t.decision_function(Xt), f_sel, atol=1e-6)


def test_class_weight_search_fixed_width():
    X, y = data01(n=40)
    sel = SpanRule(sigma=0.7, **TINY_CW).select(X, y)
    assert sel.params["sigma"] == 0.7 and sel.info["sigma_rule"] == "fixed"
    g = SpanRule(unit_gamma=0.25, **TINY_CW).select(X, y)
    assert g.params["sigma"] == pytest.approx(unit_range_sigma(X, 0.25))


# ---------------------------------------------------------------------------------------------
# Instance weights from scores
# ---------------------------------------------------------------------------------------------
IW = {"A_values": [1.0, 8.0], "B_values": [0.0, 0.5], "log2_C": (0, 2, 2)}


def scored_data():
    X, y = data01(n=50, seed=9)
    q = np.random.default_rng(9).random(50)
    return X, y, q


def test_instance_weight_search_carries_its_weights():
    X, y, q = scored_data()
    sel = SpanRule(scores=q, **IW).select(X, y)
    assert len(sel.history) == 2 * 2 * 2 and sel.info["search"] == "instance_weights"
    info = sel.info
    w = sigmoid_sample_weights(q, info["A"], info["B"], sel.params["C"])
    np.testing.assert_allclose(sel.sample_weight, w)
    sol, K = refit(X, y, sel.params, sample_weight=sel.sample_weight)
    assert estimate_span_rule(sol, K) == sel.estimate
    # an SVC refitted with these weights reproduces the selected SVM
    from svmtune.estimators import make_final_estimator

    est = make_final_estimator(sel.params).fit(X, y, sample_weight=sel.sample_weight)
    np.testing.assert_allclose(est.decision_function(X), sol.decision_function(K), atol=1e-6)


def test_instance_weights_combine_with_user_weights_and_custom_family():
    X, y, q = scored_data()
    u = np.linspace(0.5, 1.5, 50)
    fn = lambda q, A, B, C: C * (0.1 + q**A)  # noqa: E731
    sel = SpanRule(scores=q, weight_fn=fn, **IW).select(X, y, u)
    info = sel.info
    np.testing.assert_allclose(sel.sample_weight, u * (0.1 + q ** info["A"]))
    with pytest.raises(ValueError, match="50 samples"):
        SpanRule(scores=q[:10], **IW).select(X, y)


def test_tuner_final_fit_uses_selected_instance_weights():
    X, y, q = scored_data()
    t = SVMTuner(method="span_rule", method_params=dict(IW, scores=q), preprocess="none").fit(X, y)
    sol, K = refit(X, y, t.best_params_, sample_weight=t.selection_.sample_weight)
    np.testing.assert_allclose(t.decision_function(X), sol.decision_function(K), atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Samples of weight 0 are removed rows
# ---------------------------------------------------------------------------------------------
def with_junk(k, seed=0, n=60, n_junk=30, junk_scale=3.0):
    """``k``-class data, and the same with ``n_junk`` random rows of weight 0 appended."""
    rs = np.random.RandomState(seed)
    y = rs.randint(0, k, n)
    X = rs.randn(n, 3) + y[:, None]
    Xj, yj = rs.randn(n_junk, 3) * junk_scale, rs.randint(0, k, n_junk)
    return X, y, np.vstack([X, Xj]), np.r_[y, yj], np.r_[np.ones(n), np.zeros(n_junk)]


def assert_same_selection(a, b, keys=("span_rule",)):
    assert a.best_params_ == b.best_params_
    assert a.estimate_ == b.estimate_ and a.criterion_ == b.criterion_
    for ha, hb in zip(a.history_, b.history_, strict=True):
        assert ha["n_sv"] == hb["n_sv"]
        for key in keys:
            assert ha[key] == pytest.approx(hb[key], rel=1e-9), (key, ha, hb)


@pytest.mark.parametrize(
    "k, grid",
    [
        # the tester's reproducer: 0.133 instead of 0.200 (binary), 0.40 instead of 0.27
        (2, {"log2_sigma": (2, 4, 1), "log2_C": (3, 7, 1)}),
        (3, {"log2_sigma": (1, 3, 1), "log2_C": (5, 9, 1)}),
    ],
)
def test_weight_zero_rows_count_as_removed_rows(k, grid):
    X, y, Xa, ya, wa = with_junk(k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        a = SVMTuner(method="span_rule", method_params=grid).fit(X, y)
        b = SVMTuner(method="span_rule", method_params=grid).fit(Xa, ya, sample_weight=wa)
    assert_same_selection(a, b, ("span_rule", "xi_alpha") if k == 2 else ("span_rule",))


def test_weight_zero_rows_do_not_change_the_multiclass_selection():
    # seed 4 of the tester's p29.py: counting the weight-0 rows as errors picked C = 4, not 16
    rs = np.random.RandomState(4)
    y = rs.randint(0, 3, 60)
    X = rs.randn(60, 3) + y[:, None]
    Xa = np.vstack([X, rs.randn(40, 3) * 0.5])
    ya, wa = np.r_[y, rs.randint(0, 3, 40)], np.r_[np.ones(60), np.zeros(40)]
    grid = {"sigmas": [2.0], "log2_C": (1, 5, 1)}
    a = SVMTuner(method="span_rule", method_params=grid).fit(X, y)
    b = SVMTuner(method="span_rule", method_params=grid).fit(Xa, ya, sample_weight=wa)
    assert a.best_params_["C"] == 16.0
    assert_same_selection(a, b)


@pytest.mark.parametrize("sigma", [None, 1.0])
@pytest.mark.parametrize("criterion", ["span_rule", "xi_alpha", "span_bound"])
def test_weight_zero_rows_in_class_weight_search(criterion, sigma):
    # the unit-range width, the enclosing-sphere diameter D and R_Delta^2 are those of the
    # training set without the weight-0 rows
    X, y, Xa, ya, wa = with_junk(2, seed=1, n=40, n_junk=15)
    opts = dict(TINY_CW, criterion=criterion, sigma=sigma)
    a = SpanRule(**opts).select(X, y)
    b = SpanRule(**opts).select(Xa, ya, wa)
    assert a.params["sigma"] == pytest.approx(b.params["sigma"], rel=1e-12)
    assert a.params["C"] == b.params["C"] and a.params["class_weight"] == b.params["class_weight"]
    assert a.estimate == b.estimate
    assert a.criterion == pytest.approx(b.criterion, rel=1e-9)
    for ha, hb in zip(a.history, b.history, strict=True):
        for key in {"span_rule", "xi_alpha", criterion}:
            assert ha[key] == pytest.approx(hb[key], rel=1e-9), key


def test_weight_zero_rows_in_instance_weight_search():
    X, y, q = scored_data()
    rng = np.random.default_rng(2)
    Xa = np.vstack([X, 3.0 * rng.normal(size=(20, X.shape[1]))])
    ya, qa = np.r_[y, rng.integers(0, 2, 20)], np.r_[q, rng.random(20)]
    wa = np.r_[np.ones(50), np.zeros(20)]
    a = SpanRule(scores=q, **IW).select(X, y)
    b = SpanRule(scores=qa, **IW).select(Xa, ya, wa)
    assert a.params["sigma"] == pytest.approx(b.params["sigma"], rel=1e-12)
    assert a.info["A"] == b.info["A"] and a.info["B"] == b.info["B"]
    assert a.params["C"] == b.params["C"] and a.estimate == b.estimate
    np.testing.assert_allclose(b.sample_weight[:50], a.sample_weight)
    assert np.all(b.sample_weight[50:] == 0)
    for ha, hb in zip(a.history, b.history, strict=True):
        assert ha["span_rule"] == hb["span_rule"]
        assert ha["xi_alpha"] == pytest.approx(hb["xi_alpha"], rel=1e-9)


def test_candidate_weights_of_zero_are_removed_rows():
    # a weight family giving 0 to the samples with q < 0.3: every candidate is trained and
    # scored on the others only, as if those rows were not there
    X, y, q = scored_data()
    fn = lambda q, A, B, C: np.where(q < 0.3, 0.0, C * (0.1 + q**A))  # noqa: E731
    keep = q >= 0.3
    opts = dict(IW, weight_fn=fn, sigma=1.0, criterion="xi_alpha")
    a = SpanRule(scores=q[keep], **opts).select(X[keep], y[keep])
    b = SpanRule(scores=q, **opts).select(X, y)
    assert a.params == b.params and a.estimate == b.estimate
    for ha, hb in zip(a.history, b.history, strict=True):
        assert ha["span_rule"] == hb["span_rule"]
        assert ha["xi_alpha"] == pytest.approx(hb["xi_alpha"], rel=1e-9)
