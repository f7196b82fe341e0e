from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.utils.estimator_checks import parametrize_with_checks

from svmtune import SVMTuner

from .conftest import assert_params_close, make_problem

SMALL_GRID = {"log2_sigma": (-1, 1, 1), "log2_C": (0, 1, 1), "n_splits": 2}


def _expected_failures(estimator):
    # As for scikit-learn's own SVC: libsvm stops at tolerance 1e-3, so weight 2 and a
    # repeated row agree only to about 1e-4; cross-validated selection can also put the
    # repeated row in another fold.
    if estimator.method == "default" and estimator.final_model == "l2":
        return {}  # data-only selection + exact L2 solver: weights must act as repeated rows
    failures = {
        "check_sample_weight_equivalence_on_dense_data": "libsvm tolerance; CV folds differ"
        if estimator.method != "auto"
        # leave-one-out holds out a weighted row whole, but one copy of a repeated row
        else "leave-one-out of a weighted row vs of one copy of a repeated row"
    }
    # sparse input (methods on libsvm's sparse rows): the same reasons
    failures["check_sample_weight_equivalence_on_sparse_data"] = failures[
        "check_sample_weight_equivalence_on_dense_data"
    ]
    if estimator.multiclass == "ovo":
        # libsvm's one-vs-one prediction is a vote; the coupled pairwise probabilities can
        # rank a near-tie differently (as for SVC(probability=True))
        failures["check_classifiers_train"] = "one-vs-one vote vs coupled probabilities"
    return failures


@parametrize_with_checks(
    [
        SVMTuner(),
        SVMTuner(method="grid", method_params=SMALL_GRID),
        # the final-model and preprocessing options on SVC()'s point (method="auto", the
        # default, is checked above)
        SVMTuner(method="default", final_model="l2"),
        SVMTuner(method="default", multiclass="ovo"),
        SVMTuner(method="default", preprocess="auto"),
    ],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_contract(estimator, check):
    check(estimator)


def test_fitted_attributes_binary():
    X, y = make_problem(80, 3, 1)
    t = SVMTuner(method="grid", method_params=SMALL_GRID, random_state=0).fit(X, y)
    assert set(t.best_params_) >= {"kernel", "sigma", "gamma", "C"}
    assert 0 <= t.estimate_ <= 1
    assert t.n_svm_fits_ == 2 * 3 * 2
    assert t.selection_time_ > 0 and len(t.history_) == 6
    assert t.predict_proba(X).shape == (80, 2)
    assert t.score(X, y) > 0.7


def test_default_is_sklearn_default():
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    X, y = load_iris(return_X_y=True)
    t = SVMTuner().fit(X, y)
    Xs = StandardScaler().fit_transform(X)
    ref = SVC().fit(Xs, y)
    assert t.best_params_["gamma"] == pytest.approx(ref._gamma)
    assert np.array_equal(t.predict(X), ref.predict(Xs))


def test_ovo_with_a_final_l2_svm_warns_that_it_is_one_vs_rest():
    X, y = load_iris(return_X_y=True)
    grid = {"log2_sigma": (0, 1, 1), "log2_C": (0, 1, 1), "n_splits": 3}
    l2 = SVMTuner(method="grid", method_params={**grid, "final_model": "l2"}, multiclass="ovo")
    with pytest.warns(UserWarning, match="the final L2-SVM is one-vs-rest"):
        l2.fit(X, y)
    assert l2.decision_function(X).shape == (150, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # libsvm's one-vs-one, or an L2-SVM on two classes: nothing to say
        SVMTuner(method="grid", method_params=grid, multiclass="ovo").fit(X, y)
        SVMTuner(method="default", final_model="l2", multiclass="ovo").fit(X[y < 2], y[y < 2])


def test_multiclass_ovo_and_platt():
    X, y = load_iris(return_X_y=True)
    t = SVMTuner(multiclass="ovo", random_state=0).fit(X, y)
    assert t.probability_ == "tanh"  # pairwise tanh probabilities, coupled; no extra fits
    P = t.predict_proba(X)
    assert np.allclose(P.sum(1), 1) and np.all(P >= 0)
    assert np.mean(t.classes_[P.argmax(1)] == t.predict(X)) > 0.95
    dec = t.decision_function(X)
    assert dec.shape == (150, 3)
    np.testing.assert_array_equal(t.classes_[dec.argmax(1)], t.predict(X))
    assert t.final_fit_time_ > 0
    tp = SVMTuner(multiclass="ovo", probability="platt", random_state=0).fit(X, y)
    assert tp.probability_ == "platt" and np.allclose(tp.predict_proba(X).sum(1), 1)
    # Platt changes the probabilities only: predictions and decision values are the SVM's
    np.testing.assert_array_equal(tp.predict(X), t.predict(X))
    np.testing.assert_allclose(tp.decision_function(X), dec)
    assert t.calibrator_ is None and tp.calibrator_ is not None
    t2 = SVMTuner(random_state=0).fit(X, y)
    assert t2.decision_function(X).shape == (150, 3)


@pytest.mark.parametrize("k", [2, 3])
def test_platt_changes_predict_proba_only(k):
    rng = np.random.default_rng(0)
    y = np.arange(90) % k
    X = rng.normal(size=(90, 2)) + 0.8 * y[:, None]  # overlapping classes
    t = SVMTuner(method="default", random_state=0).fit(X, y)
    tp = SVMTuner(method="default", probability="platt", random_state=0).fit(X, y)
    np.testing.assert_array_equal(tp.predict(X), t.predict(X))
    np.testing.assert_allclose(tp.decision_function(X), t.decision_function(X))
    assert not np.allclose(tp.predict_proba(X), t.predict_proba(X))
    np.testing.assert_allclose(
        tp.predict_proba(X), tp.calibrator_.predict_proba(tp.preprocessor_.transform(X))
    )


def test_platt_with_an_l2_final_model_warns_and_keeps_tanh():
    rng = np.random.default_rng(0)
    y = np.arange(60) % 2
    X = rng.normal(size=(60, 2)) + 0.8 * y[:, None]
    with pytest.warns(UserWarning, match="calibrates libsvm final models only"):
        t = SVMTuner(probability="platt", final_model="l2", random_state=0).fit(X, y)
    assert t.probability_ == "tanh" and t.calibrator_ is None


@pytest.mark.parametrize("multiclass", ["ovr", "ovo"])
def test_cv_search_scores_the_final_multiclass_scheme(multiclass):
    """The grid's CV errors are those of SVMs built like the final model (ovr or ovo)."""
    from svmtune.methods import GridSearch
    from svmtune.search.cv import cv_errors, make_folds

    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    grid = {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 4, 3), "n_splits": 3}
    sel = GridSearch(**grid).select(X, y, random_state=1, multiclass=multiclass)
    cands = [{k: h[k] for k in ("kernel", "sigma", "C")} for h in sel.history]
    folds = make_folds(y, 3, 1)
    want = cv_errors(X, y, cands, folds=folds, multiclass=multiclass)
    np.testing.assert_allclose([h["cv_loss"] for h in sel.history], want)
    other = cv_errors(X, y, cands, folds=folds, multiclass={"ovr": "ovo", "ovo": "ovr"}[multiclass])
    assert not np.allclose(want, other)  # the schemes score differently on these candidates


def test_reproducible():
    X, y = make_problem(60, 2, 3)
    a = SVMTuner(method="grid", method_params=SMALL_GRID, random_state=4).fit(X, y)
    b = SVMTuner(method="grid", method_params=SMALL_GRID, random_state=4).fit(X, y)
    assert a.best_params_ == b.best_params_ and a.estimate_ == b.estimate_


@pytest.mark.parametrize(
    "kwargs,X,y,match",
    [
        ({}, [[0.0], [np.nan], [1.0], [2.0]], [0, 0, 1, 1], "NaN"),
        ({}, [[0.0], [np.inf], [1.0], [2.0]], [0, 0, 1, 1], "infinity"),
        ({}, [[0.0], [1.0], [2.0]], [1, 1, 1], "1 class"),
        ({}, [[0.0], [1.0], [2.0], [3.0]], [0, 0, 0, 1], "at least 2 samples"),
        ({}, [[0.0], [1.0], [2.0]], [0, 1], "inconsistent numbers of samples"),
        ({}, [[0.0], [1.0], [2.0], [3.0]], [0.1, 0.2, 0.3, 0.4], "continuous"),
        ({"method": "nope"}, [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1], "unknown method"),
        ({"preprocess": "x"}, [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1], "preprocess"),
        ({"multiclass": "x"}, [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1], "multiclass must"),
        ({"final_model": "x"}, [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1], "final_model must"),
        ({"probability": "x"}, [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1], "probability must"),
        ({"backend": 2}, [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1], "joblib backend name"),
        ({"n_jobs": "two"}, [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1], "n_jobs must be"),
        ({"n_jobs": 0}, [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1], "n_jobs must be"),
        (  # an object array whose first column holds strings
            {},
            np.array([["a", 1.0], ["b", 2.0], ["a", 3.0], ["b", 4.0]], dtype=object),
            [0, 0, 1, 1],
            r"non-numeric \(categorical\) columns: 0;",
        ),
        (
            {"method": "grid", "method_params": {"bogus": 1}},
            [[0.0], [1.0], [2.0], [3.0]],
            [0, 0, 1, 1],
            "invalid method_params",
        ),
    ],
)
def test_bad_input_messages(kwargs, X, y, match):
    with pytest.raises(ValueError, match=match):
        SVMTuner(**kwargs).fit(np.asarray(X), np.asarray(y))


@pytest.mark.parametrize(
    "w,match",
    [
        ([1, -1, 1, 1], "negative"),
        ([1, np.nan, 1, 1], "NaN"),
        ([1, 1], "shape"),
        ([0, 0, 0, 0], "all zero"),
        ([1, 1, 0, 0], "a sample with positive sample_weight; class 1 has 0"),
    ],
)
def test_bad_sample_weight(w, match):
    X, y = np.arange(4.0).reshape(-1, 1), np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match=match):
        SVMTuner().fit(X, y, sample_weight=np.asarray(w, dtype=float))


def test_scalar_sample_weight_is_every_samples_weight():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), np.arange(30) % 2
    a = SVMTuner().fit(X, y, sample_weight=2.0)
    b = SVMTuner().fit(X, y, sample_weight=np.full(30, 2.0))
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_auto_preprocess_mixed_frame():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=40), "c": rng.choice(["u", "v"], 40)})
    df.loc[3, "a"] = np.nan
    y = (df["c"] == "u").astype(int).to_numpy()
    t = SVMTuner(preprocess="auto").fit(df, y)
    assert t.score(df, y) > 0.9
    with pytest.raises(ValueError, match="pass a DataFrame with the same columns \\('a', 'c'\\)"):
        t.predict(df.to_numpy())  # the categorical column is selected by its name
    with pytest.raises(ValueError):
        SVMTuner().fit(df, y)


def test_class_weight_multiplies_the_sample_weights():
    """``class_weight`` is a per-class factor on the sample weights: the same selection and
    model as those sample weights, and at the selected (gamma, C) the final SVM is
    scikit-learn's ``SVC(class_weight=...)`` ("balanced" counting the samples by weight)."""
    from sklearn.svm import SVC

    X, y = make_problem(90, 3, 4)
    y = np.where(y == 1, "pos", "neg")
    sw = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    balanced = {c: sw.sum() / (2 * sw[y == c].sum()) for c in ("pos", "neg")}
    for method, cw, per_class in (
        ("default", {"pos": 4.0}, {"pos": 4.0, "neg": 1.0}),
        ("ss", "balanced", balanced),
    ):
        factor = np.where(y == "pos", per_class["pos"], per_class["neg"])
        a = SVMTuner(method=method, class_weight=cw, random_state=0).fit(X, y, sw)
        b = SVMTuner(method=method, random_state=0).fit(X, y, sw * factor)
        # (the factors computed here and in the tuner may differ in the last bit)
        assert_params_close(a.best_params_, b.best_params_, rel=1e-12)
        assert_params_close({"criterion": a.criterion_}, {"criterion": b.criterion_}, 1e-12)
        # libsvm stops at tolerance 1e-3: weights a bit apart give decisions ~1e-3 apart
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=2e-3)
        # the final fit: SVC's class weights at the selected parameters
        Z = a.preprocessor_.transform(X)
        p = a.best_params_
        svc = SVC(C=p["C"], gamma=p["gamma"], class_weight=per_class)
        svc.fit(Z, y, sample_weight=sw)
        np.testing.assert_allclose(a.decision_function(X), svc.decision_function(Z), atol=2e-3)
    # a search over C sees them: the selection differs from the unweighted one
    grid = {**SMALL_GRID, "log2_C": (-4, 4, 2)}
    u = SVMTuner(method="grid", method_params=grid, random_state=0).fit(X, y)
    g = SVMTuner(method="grid", method_params=grid, class_weight={"pos": 20.0}, random_state=0)
    assert g.fit(X, y).history_ != u.history_


def test_auto_mode_validates_X_and_y_as_standard_mode_does():
    import scipy.sparse as sp

    X, y = make_problem(n=40, d=3, seed=0)
    auto = SVMTuner(preprocess="auto")
    with pytest.raises(ValueError, match="Expected 2D array"):
        auto.fit(X[:, 0], y)
    with pytest.raises(ValueError, match="requires y to be passed"):
        auto.fit(X, None)
    with pytest.raises(TypeError, match="dense data is required"):
        auto.fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        auto.fit(X, y[:-1])

    class OnlyArray:  # array-likes without len(), as scikit-learn's checks use
        def __init__(self, a):
            self.a = a

        def __array__(self, dtype=None, copy=None):
            return self.a

    fitted = auto.fit(OnlyArray(X), OnlyArray(y))
    assert fitted.n_features_in_ == 3
    with pytest.raises(ValueError, match="Expected 2D array"):
        fitted.predict(X[0])


def test_chosen_class_weights_are_keyed_by_the_labels():
    from sklearn.svm import SVC

    X, y = make_problem(n=50, d=2, seed=1)
    labels = np.array(["neg", "pos"])[(y > 0).astype(int)]
    grid = {"search": "class_weights", "log2_C_pos": (-2, 4, 2), "log2_C_neg": (-2, 4, 2)}
    tuner = SVMTuner(method="span_rule", method_params=grid, random_state=0).fit(X, labels)
    cw = tuner.best_params_["class_weight"]
    assert set(cw) == {"neg", "pos"}
    assert set(tuner.selection_.params["class_weight"]) == {0, 1}  # what the SVM saw
    params = {k: v for k, v in tuner.best_params_.items() if k != "sigma"}
    Xp = tuner.preprocessor_.transform(X)
    svc = SVC(**params).fit(Xp, labels)
    np.testing.assert_allclose(svc.decision_function(Xp), tuner.decision_function(X), atol=1e-6)


def test_standard_mode_names_dataframe_columns():
    import pandas as pd

    X, y = make_problem(n=30, d=2, seed=0)
    df = pd.DataFrame(X, columns=["a", "b"]).assign(id=np.arange(1001, 1031))
    with pytest.warns(UserWarning, match=r"column\(s\) 'id' hold whole numbers"):
        SVMTuner().fit(df, y)
    with pytest.raises(ValueError, match=r"'a' \(largest \|x\|"):
        SVMTuner().fit(df.assign(a=df["a"] * 1e200), y)


@pytest.mark.parametrize("n_per_class", [2, 3, 4])
def test_platt_scaling_on_classes_smaller_than_five(n_per_class):
    rng = np.random.default_rng(n_per_class)
    y = np.repeat([0, 1], n_per_class)
    X = rng.normal(size=(y.size, 2)) + 1.5 * y[:, None]
    tuner = SVMTuner(method="default", probability="platt").fit(X, y)
    assert tuner.calibrator_.cv == n_per_class  # at most the smallest class's size
    P = tuner.predict_proba(X)
    assert P.shape == (y.size, 2) and np.allclose(P.sum(axis=1), 1.0)
    w = np.ones(y.size)
    w[np.flatnonzero(y == 1)[: n_per_class - 1]] = 0  # one sample of positive weight left
    with pytest.raises(ValueError, match="probability='platt' cross-validates"):
        SVMTuner(method="default", probability="platt").fit(X, y, sample_weight=w)
    assert SVMTuner(method="default").fit(X, y, sample_weight=w).predict_proba(X).shape == (
        y.size,
        2,
    )


def test_balanced_class_weights_and_weight_zero_rows():
    X, y = make_problem(n=60, d=2, seed=3, imbalance=0.3)
    w = np.ones(len(y))
    w[::4] = 0.0
    keep = w > 0
    kw = {"method": "rbsvm", "class_weight": "balanced", "random_state": 0}
    a = SVMTuner(**kw).fit(X, y, sample_weight=w)
    b = SVMTuner(**kw).fit(X[keep], y[keep])
    assert_params_close(a.best_params_, b.best_params_, rel=1e-8)


# ----------------------------------------------------------------------------- groups
def _near_duplicate_groups(n_groups=30, size=6, seed=0):
    """Groups of near-identical rows whose labels are coin flips per group: a row's group
    mates give its label away, so only folds that keep groups whole see that nothing can be
    learned (true error 0.5)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_groups, 4))
    X = np.repeat(centres, size, axis=0) + 0.01 * rng.normal(size=(n_groups * size, 4))
    y = np.repeat(rng.integers(0, 2, n_groups), size)
    groups = np.repeat([f"patient {i}" for i in range(n_groups)], size)
    return X, y, groups


_GROUP_GRID = {"log2_sigma": (-4, 2, 2), "log2_C": (-2, 6, 2), "n_splits": 5}


def test_groups_make_the_cv_estimate_honest():
    X, y, groups = _near_duplicate_groups()
    plain = SVMTuner(method="grid", method_params=_GROUP_GRID, random_state=0).fit(X, y)
    grouped = SVMTuner(method="grid", method_params=_GROUP_GRID, random_state=0)
    grouped.fit(X, y, groups=groups)
    assert plain.estimate_ < 0.05  # shuffled folds: every held-out row has its twins in training
    assert grouped.estimate_ > 0.25


@pytest.mark.parametrize("method", ["rbsvm", "rbsvm_lowrank"])
def test_rbsvm_leaves_whole_groups_out_in_closed_form(method):
    X, y, groups = _near_duplicate_groups()
    plain = SVMTuner(method=method, random_state=0).fit(X, y)
    grouped = SVMTuner(method=method, random_state=0).fit(X, y, groups=groups)
    assert plain.estimate_ < 0.05  # leave-one-out: every row's twins stay in the training part
    assert grouped.estimate_ > 0.25  # leave-one-patient-out: the coin flips show
    assert grouped.selection_.info["n_groups"] == 30
    if method == "rbsvm":
        assert 0 < grouped.selection_.info["loo_exact_fraction"] <= 1
        assert 0 < plain.selection_.info["loo_exact_fraction"] <= 1
    with pytest.raises(ValueError, match="groups need nonsupport='model'"):
        params = {"nonsupport": "label"}
        SVMTuner(method=method, method_params=params).fit(X, y, groups=groups)
    # rows of weight 0 leave the low-rank search with their groups
    w = np.ones(len(y))
    w[groups == groups[0]] = 0.0
    got = SVMTuner(method=method, random_state=0).fit(X, y, sample_weight=w, groups=groups)
    assert got.selection_.info["n_groups"] == 29 or method == "rbsvm"


@pytest.mark.parametrize(
    "method, module, params",
    [
        ("grid", "baselines", _GROUP_GRID),
        ("random", "baselines", {"n_iter": 3, "n_splits": 4}),
        ("tpe", "baselines", {"max_evals": 3, "n_startup": 2, "n_splits": 4}),
        ("optuna", "baselines", {"n_trials": 3, "n_startup": 2, "n_splits": 4}),
        ("halving", "baselines", {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 2, 2), "n_splits": 4}),
        ("cv_cv", "baselines", {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 2, 2), "n_splits": 4}),
        ("esdr", "esdr", {"log2_C": (-2, 2, 2), "n_splits": 4}),
        ("ld", "esdr", {"log2_C": (-2, 2, 2), "n_splits": 4}),
        ("span_rule", "span_rule", {"criterion": "cv", "log2_sigma": (-1, 1, 2)}),
    ],
)
def test_cross_validated_methods_keep_groups_whole(monkeypatch, method, module, params):
    import importlib

    from svmtune.search import cv

    mod = importlib.import_module(f"svmtune.methods.{module}")
    calls = []

    def recording(y, n_splits, random_state, sample_weight=None, groups=None):
        folds = cv.make_folds(y, n_splits, random_state, sample_weight, groups)
        calls.append((groups, folds))
        return folds

    monkeypatch.setattr(mod, "make_folds", recording)
    X, y, groups = _near_duplicate_groups(n_groups=16, size=4)
    SVMTuner(method=method, method_params=params, random_state=0).fit(X, y, groups=groups)
    assert calls
    codes = np.unique(groups, return_inverse=True)[1]
    for g, folds in calls:
        assert g is not None and len(set(zip(g, codes))) == len(set(g)) == len(set(codes))
        for tr, te in folds:
            assert not set(codes[tr]) & set(codes[te])


@pytest.mark.parametrize(
    "method, params",
    [
        ("span", None),
        ("span_lowrank", None),
        ("radius_margin", None),
        ("radius_margin_lowrank", None),
        ("span_rule", None),
        ("span_rule", {"criterion": "xi_alpha"}),
    ],
)
def test_leave_one_out_methods_refuse_groups(method, params):
    X, y, groups = _near_duplicate_groups(n_groups=8, size=3)
    with pytest.raises(ValueError, match=f"method '{method}' holds out single rows .* no groups"):
        SVMTuner(method=method, method_params=params).fit(X, y, groups=groups)


@pytest.mark.parametrize(
    "method, params",
    [("default", None), ("ss", None), ("ld_c1", None), ("esdr", {"c_search": "fixed"})],
)
@pytest.mark.filterwarnings("ignore:S&S chose sigma")
def test_methods_that_hold_nothing_out_ignore_groups_with_a_warning(method, params):
    X, y, groups = _near_duplicate_groups(n_groups=10, size=3)
    ref = SVMTuner(method=method, method_params=params, random_state=0).fit(X, y)
    with pytest.warns(UserWarning, match=f"method '{method}' holds no rows out"):
        got = SVMTuner(method=method, method_params=params, random_state=0)
        got.fit(X, y, groups=groups)
    assert got.best_params_ == ref.best_params_


def test_bad_groups_are_refused_before_the_selection():
    X, y, groups = _near_duplicate_groups(n_groups=10, size=3)
    tuner = SVMTuner(method="grid", method_params=_GROUP_GRID)
    with pytest.raises(ValueError, match=r"groups has shape \(29,\), expected \(30,\)"):
        tuner.fit(X, y, groups=groups[:-1])
    bad = groups.astype(object)
    bad[4] = None
    with pytest.raises(ValueError, match="missing value"):
        tuner.fit(X, y, groups=bad)


def test_a_class_in_one_group_is_named_by_its_label():
    X, y, groups = _near_duplicate_groups(n_groups=10, size=3)
    labels = np.where(y == 1, "sick", "well")
    one_ward = np.where(labels == "sick", "ward A", groups)  # every sick row in one group
    grid = SVMTuner(method="grid", method_params=_GROUP_GRID)
    with pytest.raises(ValueError, match="class 'sick' has all its samples in one group"):
        grid.fit(X, labels, groups=one_ward)
    # leaving that group out leaves no 'sick' row to train on: rbsvm refuses as well
    with pytest.raises(ValueError, match="'sick' .* in one group.*leave-one-group-out"):
        SVMTuner(method="rbsvm").fit(X, labels, groups=one_ward)
    well = labels == "well"
    w = np.where(well & (groups != groups[well][0]), 0.0, 1.0)  # one group of well rows counts
    with pytest.raises(ValueError, match="'well' has all its samples of positive weight in one"):
        grid.fit(X, labels, sample_weight=w, groups=groups)


def test_groups_reach_the_tuner_through_scikit_learns_metadata_routing():
    import sklearn
    from sklearn.model_selection import GroupKFold, cross_validate

    X, y, groups = _near_duplicate_groups(n_groups=16, size=4)
    seen = []

    class Recording(SVMTuner):
        def fit(self, X, y, sample_weight=None, groups=None):
            seen.append(groups)
            return super().fit(X, y, sample_weight=sample_weight, groups=groups)

    with sklearn.config_context(enable_metadata_routing=True):
        est = Recording(method="grid", method_params=_GROUP_GRID, random_state=0)
        est.set_fit_request(groups=True, sample_weight=False)
        cross_validate(est, X, y, cv=GroupKFold(4), params={"groups": groups})
    assert len(seen) == 4
    for g in seen:  # each outer training part's groups, 12 of the 16
        assert g is not None and len(set(g)) == 12


@pytest.mark.parametrize("preprocess", ["standard", "auto", "sparse"])
def test_fit_checks_X_once_at_the_door(preprocess):
    """scikit-learn's ``check_array`` sees the ``(n, d)`` X at most three times in a default
    fit (issue 55's acceptance): at the door (``validate_data``; for a table, ``as_table``),
    in the preprocessing (the scaler's fit: its statistics are applied to the training rows
    by ``preprocess.transform_validated``) and in the final SVC's fit.  ``auto``'s probe
    ``SVC()``, on all rows up to 1,000, calls libsvm without ``SVC.fit``'s checks
    (``_auto_final.default_svc_fit``); before, the scaler's transform and the probe made it
    5, and ``_validation.validate_Xy`` 6.  Every call of ``check_array``'s code is counted,
    also through names other modules imported (a profile hook, not a patched attribute)."""
    import sys
    import traceback

    import scipy.sparse as sp
    import sklearn.utils.validation as skv

    X, y = make_problem(300, 5, 0)
    Xin = sp.csr_matrix(X) if preprocess == "sparse" else X
    callers = []

    def hook(frame, event, arg):
        if event == "call" and frame.f_code is skv.check_array.__code__:
            if np.shape(frame.f_locals.get("array")) == X.shape:
                stack = traceback.extract_stack(frame)
                where = [f for f in stack if "svmtune" in f.filename][-1]
                callers.append(f"{where.filename.rsplit('/', 1)[-1]}:{where.name}")

    mode = "standard" if preprocess == "sparse" else preprocess
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        previous = sys.getprofile()
        sys.setprofile(hook)
        try:
            SVMTuner(random_state=0, preprocess=mode).fit(Xin, y)
        finally:
            sys.setprofile(previous)
    door = "_validation.py:as_table" if preprocess == "auto" else "_door.py:_validate_Xy"
    assert callers.count(door) == 1, callers
    assert len(callers) == 3, callers
