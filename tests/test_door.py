"""The tuner's door (:mod:`svmtune._door`): one call from the user's data to the selector's.

Each test builds what the selector must receive from scikit-learn's own pieces (``validate_data``,
``LabelEncoder``, ``StandardScaler`` fitted with the weights on the rows of positive weight) and
compares it with :func:`~svmtune._door.prepare_training`'s :class:`TrainingData`.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.preprocessing import StandardScaler

from svmtune import SVMTuner
from svmtune._door import PreparedTraining, prepare_training
from svmtune.methods.base import TrainingData, get_selector
from svmtune.preprocess import fit_preprocessor, make_preprocessor

from .conftest import make_problem


def _door(tuner: SVMTuner, X, y, sample_weight=None, groups=None) -> PreparedTraining:
    return prepare_training(
        tuner, X, y, sample_weight, groups, selector=get_selector(tuner.method, None)
    )


def _data(n: int = 60, d: int = 4, seed: int = 0):
    X, y = make_problem(n, d, seed)
    return X * [1.0, 10.0, 0.1, 3.0][:d] + 2.0, np.where(y > 0, "pos", "neg")


def test_numpy_rows_are_standardised_and_labels_encoded():
    X, y = _data()
    door = _door(SVMTuner(method="rbsvm"), X, y)
    assert isinstance(door.data, TrainingData)
    np.testing.assert_allclose(door.data.X, StandardScaler().fit_transform(X), rtol=1e-12)
    np.testing.assert_array_equal(door.classes, ["neg", "pos"])
    np.testing.assert_array_equal(door.data.y, (y == "pos").astype(int))
    assert door.data.sample_weight is None and door.data.groups is None
    assert door.fitted_sparse is False and door.n_features_in == 4
    assert door.feature_names_in is None
    assert door.data.X.dtype == np.float64


def test_weights_times_class_weights_and_statistics_on_positive_rows():
    X, y = _data()
    w = np.linspace(0.5, 2.0, len(y))
    w[:3] = 0.0  # left out of the statistics
    tuner = SVMTuner(method="rbsvm", class_weight={"pos": 3.0})
    door = _door(tuner, X, y, sample_weight=w)
    expected_w = w * np.where(y == "pos", 3.0, 1.0)
    np.testing.assert_allclose(door.data.sample_weight, expected_w)
    keep = expected_w > 0
    scaler = StandardScaler().fit(X[keep], sample_weight=expected_w[keep])
    np.testing.assert_allclose(door.data.X, scaler.transform(X), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(door.preprocessor.mean_, scaler.mean_, rtol=1e-13)


def test_balanced_class_weight_counts_samples_by_weight():
    X, y = _data()
    w = np.where(np.arange(len(y)) % 3 == 0, 2.0, 1.0)
    door = _door(SVMTuner(method="rbsvm", class_weight="balanced"), X, y, sample_weight=w)
    per_class = {c: w[y == c].sum() for c in ("neg", "pos")}
    cw = np.array([w.sum() / (2 * per_class[c]) for c in y])
    np.testing.assert_allclose(door.data.sample_weight, w * cw)


def test_sparse_rows_stay_csr_scaled_without_centring():
    X, y = _data()
    Xs = sp.csc_matrix(X)
    door = _door(SVMTuner(method="default"), Xs, y)
    assert sp.isspmatrix_csr(door.data.X) and door.fitted_sparse
    expected = StandardScaler(with_mean=False).fit(X).transform(X)
    np.testing.assert_allclose(door.data.X.toarray(), expected, rtol=1e-12)


def test_sparse_refusal_comes_from_the_door():
    X, y = _data()
    with pytest.raises(ValueError, match="takes no sparse X"):
        _door(SVMTuner(method="rbsvm"), sp.csr_matrix(X), y)


def test_table_with_categories_is_encoded_as_the_auto_preprocessor_does():
    X, y = _data()
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["colour"] = np.where(np.arange(len(y)) % 3 == 0, "red", "blue")
    df.loc[4, "a"] = np.nan
    tuner = SVMTuner(method="rbsvm", preprocess="auto")
    door = _door(tuner, df, y)
    pre = fit_preprocessor(make_preprocessor("auto", df), df)
    np.testing.assert_allclose(door.data.X, pre.transform(df), rtol=1e-12)
    assert door.data.X.shape == (len(y), 6)  # four numeric columns, two categories
    np.testing.assert_array_equal(door.feature_names_in, df.columns)
    np.testing.assert_array_equal(tuner.feature_names_in_, df.columns)  # validate_data's
    assert tuner.n_features_in_ == 5


def test_groups_are_coded_and_dropped_with_a_warning_where_nothing_is_held_out():
    X, y = _data()
    groups = np.array([f"g{i % 6}" for i in range(len(y))])
    door = _door(SVMTuner(method="grid"), X, y, groups=groups)
    np.testing.assert_array_equal(door.data.groups, np.arange(len(y)) % 6)
    with pytest.warns(UserWarning, match="holds no rows out"):
        door = _door(SVMTuner(method="default"), X, y, groups=groups)
    assert door.data.groups is None


def test_fit_hands_the_door_result_to_the_selector(monkeypatch):
    """``fit`` calls the door once, and the selector runs on the door's TrainingData."""
    import svmtune._door as door_module
    import svmtune.tuner as tuner_module
    from svmtune.methods.default import DefaultSVC

    calls, seen = [], []
    real = door_module.prepare_training

    def spy(*args, **kwargs):
        calls.append(real(*args, **kwargs))
        return calls[-1]

    real_run = DefaultSVC.run

    def run(self, data, context):
        seen.append(data)
        return real_run(self, data, context)

    monkeypatch.setattr(tuner_module, "prepare_training", spy)
    monkeypatch.setattr(DefaultSVC, "run", run)
    X, y = _data()
    tuner = SVMTuner(method="default").fit(X, y)
    assert len(calls) == 1 and seen == [calls[0].data]
    assert tuner.preprocessor_ is calls[0].preprocessor
    np.testing.assert_array_equal(tuner.classes_, calls[0].classes)


def test_label_errors_name_the_users_labels():
    X, y = _data()
    y = y.astype(object)
    y[5] = None
    with pytest.raises(ValueError, match=r"y has 1 missing label\(s\) \(None/NaN\) at rows 5"):
        _door(SVMTuner(method="default"), X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="class 'b' has 1"):
            _door(SVMTuner(method="default"), X[:5], np.array(["a", "a", "b", "c", "c"]))
