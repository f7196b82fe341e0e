"""Every registered method through SVMTuner on the small and awkward data users bring.

Each case once tripped a method: scikit-learn's successive halving refuses a first round
larger than the data (few samples, several classes), subsampled rounds can miss a rare
class, libsvm drops weight-0 samples (and scikit-learn's ``support_`` then indexes the
others), and K-fold CV can leave a training part without a positively weighted sample of
a class.  Searches run with small budgets; the check is that they finish with a usable
model, not what they choose.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from svmtune import SVMTuner
from svmtune.methods import available_methods

#: small budgets for the searches (their defaults evaluate hundreds of candidates)
_LIGHT = {
    "grid": {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 2, 2)},
    "halving": {"log2_sigma": (-2, 2, 1), "log2_C": (-2, 2, 1)},
    "random": {"n_iter": 4},
    "tpe": {"max_evals": 4, "n_startup": 2},
    "optuna": {"n_trials": 4, "n_startup": 2},
    "cv_cv": {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 2, 2)},
    "span_rule": {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 2, 2)},
}


def _case(name: str):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 3))
    w = None
    if name == "three_classes_40":  # halving: 2 * 10 folds * 3 classes > 40 samples
        y = np.arange(40) % 3
        X += y[:, None]
    elif name == "rare_class":  # 3 of 40
        y = (np.arange(40) < 3).astype(int)
        X[:3] += 2.0
    elif name == "zero_weights":  # a quarter of each class left out by weight 0
        y = np.arange(40) % 2
        X += 1.5 * y[:, None]
        w = np.where(np.arange(40) % 8 < 2, 0.0, rng.uniform(0.5, 2.0, 40))
    elif name == "duplicated_rows":
        y = np.arange(40) % 2
        X[20:] = X[:20]
        X += y[:, None]
    else:  # string labels
        y = np.array(["no", "yes"])[np.arange(40) % 2]
        X += (y == "yes")[:, None]
    return X, y, w


_CASES = ("three_classes_40", "rare_class", "zero_weights", "duplicated_rows", "string_labels")


@pytest.mark.parametrize("case", _CASES)
@pytest.mark.parametrize("method", available_methods())
def test_method_fits_awkward_data(method, case):
    X, y, w = _case(case)
    tuner = SVMTuner(method=method, method_params=_LIGHT.get(method), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bound hits, fold caps, small-data notes
        tuner.fit(X, y, sample_weight=w)
    p = tuner.best_params_
    assert np.isfinite(p["C"]) and p["C"] > 0
    assert np.isfinite(p["sigma"]) and p["sigma"] > 0
    pred = tuner.predict(X)
    assert set(np.unique(pred)) <= set(np.unique(y))
    P = tuner.predict_proba(X)
    assert P.shape == (len(y), len(tuner.classes_)) and np.all(np.isfinite(P))
    assert np.allclose(P.sum(axis=1), 1.0)
    if w is not None:  # the weight-0 samples are left out, not mis-indexed
        assert tuner.score(X[w > 0], y[w > 0]) > 0.6


#: methods whose selection involves no folds: for them a sample of weight 0 must be exactly
#: a sample left out (the CV searches draw their folds over all samples; the low-rank
#: methods draw their landmarks and random starts among the samples of positive weight)
_NO_FOLDS = (
    "default",
    "ld_c1",
    "rbsvm",
    "span",
    "radius_margin",
    "span_rule",
    "ss",
    "rbsvm_lowrank",
    "span_lowrank",
    "radius_margin_lowrank",
)


@pytest.mark.parametrize("method", _NO_FOLDS)
def test_weight_zero_is_removal(method):
    X, y, w = _case("zero_weights")
    keep = w > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = SVMTuner(method=method, random_state=0).fit(X, y, sample_weight=w)
        b = SVMTuner(method=method, random_state=0).fit(X[keep], y[keep], sample_weight=w[keep])
    for key in ("sigma", "C"):
        assert a.best_params_[key] == pytest.approx(b.best_params_[key], rel=1e-6)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-6)


#: the tuner's options that change the final model or its probabilities
_OPTIONS = {
    "ovo": {"multiclass": "ovo"},
    "l2_final": {"final_model": "l2"},
    "l1_platt": {"final_model": "l1", "probability": "platt"},
}


@pytest.mark.parametrize("option", sorted(_OPTIONS))
@pytest.mark.parametrize("method", available_methods())
def test_method_with_each_final_model_option(method, option):
    X, y, _ = _case("three_classes_40")
    tuner = SVMTuner(
        method=method, method_params=_LIGHT.get(method), random_state=0, **_OPTIONS[option]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tuner.fit(X.astype(np.float32), y)
    assert tuner.score(X, y) > 0.6
    P = tuner.predict_proba(X)
    assert P.shape == (40, 3) and np.allclose(P.sum(axis=1), 1.0)
    assert tuner.decision_function(X).shape == (40, 3)
    if option == "l1_platt":  # predictions are the SVM's, not the argmax of Platt's
        assert tuner.calibrator_ is not None
        Xp = tuner.preprocessor_.transform(X)
        np.testing.assert_array_equal(
            tuner.predict(X), tuner.classes_[tuner.estimator_.predict(Xp)]
        )


@pytest.mark.parametrize("method", available_methods())
def test_same_random_state_same_selection(method):
    """Every random choice (folds, draws, landmarks, samplers) follows ``random_state``: the
    same seed twice, or a ``RandomState`` of it, gives the same model."""
    X, y, _ = _case("three_classes_40")
    fits = []
    for rs in (3, 3, np.random.RandomState(3)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(
                SVMTuner(method=method, method_params=_LIGHT.get(method), random_state=rs).fit(X, y)
            )
    a, b, c = fits
    assert a.best_params_ == b.best_params_ == c.best_params_
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.decision_function(X), c.decision_function(X))


#: values no option of any method accepts
_NEVER_VALID = ("x", float("nan"), float("inf"), [], {"a": 1})
#: (method, option, value) of _NEVER_VALID that an option does accept: auto's lists of
#: extra starts and refinements may be empty (SVC()'s point alone, no refinement)
_VALID_AFTER_ALL = {("auto", "starts", "[]"), ("auto", "refine", "[]")}


@pytest.mark.parametrize("method", available_methods())
def test_every_invalid_option_value_is_named(method):
    """A wrong type or value for any option is a ValueError that names the option (not,
    e.g., numpy's "could not convert string to float", nor a bare OverflowError for
    infinity); a value no option accepts is never taken silently."""
    from svmtune.methods.base import get_selector, method_options

    for option in method_options(method):
        for value in _NEVER_VALID:
            if (method, option, repr(value)) in _VALID_AFTER_ALL:
                get_selector(method, {option: value})
                continue
            with pytest.raises(ValueError) as info:
                get_selector(method, {option: value})
            assert re.search(rf"\b{option}\b", str(info.value)), (option, value, str(info.value))


def _boolean_options(method: str) -> list[str]:
    """The options of ``method`` whose default is True or False."""
    import inspect

    from svmtune.methods.base import method_options, selector_class

    klass = selector_class(method)
    defaults = {}
    for k in reversed(klass.__mro__):
        if "__init__" in vars(k):
            for p in inspect.signature(vars(k)["__init__"]).parameters.values():
                defaults[p.name] = p.default
    return [o for o in method_options(method) if isinstance(defaults.get(o), bool)]


def test_boolean_options_accept_only_booleans():
    """``bool(value)`` would read "false", NaN or 1 as a setting: every boolean option of
    every method refuses them, naming the option, and takes True and False."""
    from svmtune.methods.base import get_selector

    found = {m: _boolean_options(m) for m in available_methods()}
    assert found["ss"] == ["rescale"] and found["halving"] == ["aggressive_elimination"]
    assert found["optuna"] == ["multivariate"]
    for method, options in found.items():
        for option in options:
            for value in ("false", "True", 0, 1, float("nan"), None, [True]):
                with pytest.raises(ValueError, match=rf"{option} must be True or False"):
                    get_selector(method, {option: value})
            for value in (True, False, np.bool_(False)):
                assert bool(getattr(get_selector(method, {option: value}), option)) is bool(value)
