"""Every registered method through SVMTuner on the small and awkward data users bring.

Each case once tripped a method: scikit-learn's successive halving refuses a first round
larger than the data (few samples, several classes), subsampled rounds can miss a rare
class, libsvm drops weight-0 samples (and scikit-learn's ``support_`` then indexes the
others), and K-fold CV can leave a training part without a positively weighted sample of
a class.  Searches run with small budgets; the check is that they finish with a usable
model, not what they choose.
"""

from __future__ import annotations

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


@pytest.mark.parametrize("method", available_methods())
def test_every_invalid_option_value_is_named(method):
    """A wrong type or value for any option is a ValueError that names the option (not,
    e.g., numpy's "could not convert string to float")."""
    from svmtune.methods.base import get_selector, method_options

    for option in method_options(method):
        for value in ("x", float("nan"), [], {"a": 1}, (1, 2, 3, 4)):
            try:
                get_selector(method, {option: value})
            except ValueError as exc:
                assert option in str(exc), (option, value, str(exc))
