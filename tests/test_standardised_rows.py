"""A dense X standardised as its rows are read (issue 64): the rows of the standardised copy,
bit for bit, and ``auto`` and the low-rank model on them as on the copy, without the copy."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.preprocessing import StandardScaler

import svmtune.estimators as est_module
import svmtune.methods._auto_rows as rows_module
from svmtune import SVMTuner
from svmtune._door import prepare_training
from svmtune._standardised_rows import StandardisedRows
from svmtune.estimators_lowrank import LowRankL2SVC
from svmtune.methods.auto import Auto
from svmtune.methods.base import TrainingData, get_selector
from svmtune.preprocess import transform_validated

from .conftest import make_problem


def _X(dtype=np.float64, n: int = 50, seed: int = 0):
    X, y = make_problem(n, 3, seed)
    return (X * [1.0, 30.0, 0.01] + [5.0, -2.0, 0.0]).astype(dtype), y


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_rows_are_the_standardised_copy_s_rows_bit_for_bit(dtype):
    X, _ = _X(dtype)
    scaler = StandardScaler().fit(X)
    whole = np.asarray(transform_validated(scaler, X), dtype=np.float64)
    rows = StandardisedRows(X, scaler)
    assert rows.shape == X.shape and len(rows) == 50 and rows.ndim == 2
    for key in (slice(None), slice(3, 40, 7), np.array([9, 2, 2, 31]), X[:, 0] > X[0, 0]):
        got = rows[key]
        assert got.dtype == np.float64 and np.array_equal(got, whole[key])
    assert np.array_equal(np.asarray(rows), whole)
    assert X[0, 0] == _X(dtype)[0][0, 0]  # X itself is never changed


def test_rows_are_read_whole_or_not_at_all():
    X, _ = _X()
    rows = StandardisedRows(X, StandardScaler().fit(X))
    for key in ((slice(None), 0), 3):
        with pytest.raises(TypeError, match="whole rows"):
            rows[key]


def test_auto_gets_the_rows_and_a_method_that_reads_x_whole_the_copy():
    X, y = _X()
    lazy = prepare_training(SVMTuner(), X, y, selector=get_selector("auto"))
    copy = prepare_training(SVMTuner(method="rbsvm"), X, y, selector=get_selector("rbsvm"))
    assert isinstance(lazy.data.X, StandardisedRows) and lazy.data.X.X is X
    assert isinstance(copy.data.X, np.ndarray)
    assert np.array_equal(np.asarray(lazy.data.X), copy.data.X)


@pytest.mark.parametrize("n", [300, 2600])  # one stage; the low-rank model's rule at 2,600
def test_auto_selects_and_predicts_as_on_the_standardised_copy(monkeypatch, n):
    X, y = _X(n=n, seed=4)
    lazy = SVMTuner(random_state=0).fit(X, y)
    monkeypatch.setattr(Auto, "accepts_lazy_rows", False)
    copy = SVMTuner(random_state=0).fit(X, y)
    assert lazy.best_params_ == copy.best_params_
    assert lazy.estimate_ == copy.estimate_ and lazy.final_model_ == copy.final_model_
    assert np.array_equal(lazy.decision_function(X), copy.decision_function(X))


def test_svc_width_over_blocks_is_the_width_of_the_copy(monkeypatch):
    X, _ = _X(n=203)
    w = np.random.default_rng(1).uniform(0.5, 2.0, 203)
    rows = StandardisedRows(X, StandardScaler().fit(X, sample_weight=w))
    whole = TrainingData(np.asarray(rows), np.zeros(203, dtype=int), w)
    want = rows_module.default_sigma(whole)
    assert rows_module.default_sigma(TrainingData(rows, whole.y, w)) == want  # one block
    monkeypatch.setattr(rows_module, "SIGMA_BLOCK_VALUES", 3 * 20)  # blocks of 20 rows
    assert rows_module.default_sigma(TrainingData(rows, whole.y, w)) == pytest.approx(
        want, rel=1e-12
    )


def test_the_low_rank_model_reads_the_rows_in_blocks_never_whole(monkeypatch):
    X, y = _X(n=400, seed=2)
    rows = StandardisedRows(X, StandardScaler().fit(X))
    # the landmark rule on a subsample of 100 rows: all rows would be read whole
    lr = LowRankL2SVC(C=10.0, sigma=1.5, rank=40, landmark_rows=100, random_state=0)
    want = lr.fit(np.asarray(rows), y)
    monkeypatch.setattr(est_module, "DECISION_BLOCK", 40 * 37)

    def refuse(self, dtype=None, copy=None):
        raise AssertionError("X was made whole")

    monkeypatch.setattr(StandardisedRows, "__array__", refuse)
    read = []
    getitem = StandardisedRows.__getitem__
    monkeypatch.setattr(
        StandardisedRows, "__getitem__", lambda self, k: read.append(k) or getitem(self, k)
    )
    got = clone(lr).fit(rows, y)
    block = (40 * 37) // got.rank_  # rows a block: at most 40 x 37 kernel values
    assert max(k.stop - k.start for k in read if isinstance(k, slice)) == block < 400
    np.testing.assert_array_equal(got.landmarks_, want.landmarks_)
    np.testing.assert_allclose(got.coef_, want.coef_, rtol=1e-9, atol=1e-12)
    assert got.n_features_in_ == 3
