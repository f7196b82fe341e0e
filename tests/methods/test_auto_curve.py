"""``auto``'s learning-curve test (:mod:`svmtune.methods._auto_curve`) against its definition:
libsvm fitted at both points on two nested subsamples, each held-out row's 0/1 loss extended
to ``n`` rows on the line in ``log`` rows, and the paired mean difference and its standard
error of those losses; and ``auto`` returning ``SVC()``'s point where the test does not keep
the referee's choice."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.svm import SVC

from svmtune import SVMTuner
from svmtune.kernels import rbf_params
from svmtune.loo.paired import PairedComparison
from svmtune.methods._auto_curve import curve_rows, curve_test, extrapolated_losses
from svmtune.methods._fidelity import nested_subsample


def test_extrapolated_losses_lie_on_the_line_in_log_rows():
    rng = np.random.default_rng(0)
    small, large = rng.uniform(size=7), rng.uniform(size=7)
    assert np.allclose(extrapolated_losses(small, large, 100, 400, 400), large)
    assert np.allclose(extrapolated_losses(small, large, 100, 400, 100), small)
    assert np.allclose(extrapolated_losses(small, large, 100, 400, 1600), 2 * large - small)
    # three sizes: the losses at n are collinear with the two given in (log rows, loss)
    n = 5000
    at_n = extrapolated_losses(small, large, 100, 400, n)
    slope = (large - small) / math.log(4)
    assert np.allclose(at_n, large + slope * math.log(n / 400))


def _by_hand(params, X, y, rows, held):
    svc = SVC(C=params["C"], gamma=params["gamma"]).fit(X[rows], y[rows])
    return (svc.predict(X[held]) != y[held]).astype(float)


def test_the_test_is_its_definition_by_refits():
    """Two points, both fitted by scikit-learn's SVC on the nested rows the test names; the
    held-out rows' 0/1 losses extended to n; the paired mean and its standard error."""
    X, y = make_classification(3000, 6, n_informative=4, flip_y=0.1, random_state=1)
    order = nested_subsample(y, 0)
    chosen, svc_point = rbf_params(4.0, 50.0), rbf_params(1.5, 1.0)
    test = curve_test(chosen, svc_point, X, y, None, None, order, 400, "ovr", 0.0)
    small, large, n_held = curve_rows(3000, 400)
    assert test.rows == (small, large) and test.held == n_held and test.fits == 4
    held = np.sort(order[large : large + n_held])
    losses = [
        [_by_hand(p, X, y, np.sort(order[:s]), held) for s in (small, large)]
        for p in (chosen, svc_point)
    ]
    for k, (a, b) in enumerate(zip(*losses, strict=True)):
        assert test.at_rows[k].mean == pytest.approx(np.mean(a - b))
    k = math.log(3000 / large) / math.log(large / small)
    diff = (1 + k) * (losses[0][1] - losses[1][1]) - k * (losses[0][0] - losses[1][0])
    assert test.at_n.mean == pytest.approx(diff.mean())
    assert test.at_n.se == pytest.approx(diff.std(ddof=1) / math.sqrt(diff.size))
    assert test.keep == (diff.mean() / (diff.std(ddof=1) / math.sqrt(diff.size)) <= 0.0)
    assert ("is kept" in test.describe()) == test.keep


def test_groups_stay_whole_and_weights_weigh_the_held_out_rows():
    X, y = make_classification(2400, 5, n_informative=3, flip_y=0.1, random_state=2)
    groups = np.arange(2400) // 6
    w = np.random.default_rng(0).uniform(0.5, 2.0, 2400)
    order = nested_subsample(y, 0, groups)
    chosen, svc_point = rbf_params(3.0, 30.0), rbf_params(1.2, 1.0)
    test = curve_test(chosen, svc_point, X, y, w, groups, order, 300, "ovr", 0.0)
    large = test.rows[1]
    fit_groups = set(groups[order[:large]])
    held = order[large : large + test.held]
    assert not fit_groups & set(groups[held])  # no group on both sides
    assert test.at_n.units == np.unique(groups[held]).size  # the error is taken over groups
    plain = curve_test(chosen, svc_point, X, y, None, groups, order, 300, "ovr", 0.0)
    assert plain.at_n.mean != pytest.approx(test.at_n.mean)  # the weights count


def test_multiclass_and_sparse_rows():
    X, y = make_classification(1800, 6, n_informative=4, n_classes=3, flip_y=0.05, random_state=3)
    order = nested_subsample(y, 0)
    chosen, svc_point = rbf_params(3.0, 20.0), rbf_params(1.7, 1.0)
    dense = curve_test(chosen, svc_point, X, y, None, None, order, 300, "ovr", 0.0)
    sparse = curve_test(chosen, svc_point, sp.csr_matrix(X), y, None, None, order, 300, "ovr", 0.0)
    assert dense.at_n.mean == pytest.approx(sparse.at_n.mean)
    assert curve_test(chosen, svc_point, X, y, None, None, order, 300, "ovo", 0.0) is not None


def test_no_test_without_held_out_rows_or_with_a_class_missing():
    X, y = make_classification(600, 4, random_state=4)
    order = nested_subsample(y, 0)
    pts = (rbf_params(3.0, 20.0), rbf_params(1.4, 1.0))
    assert curve_test(*pts, X, y, None, None, order, 600, "ovr", 0.0) is None  # all rows fit
    y_rare = y.copy()
    y_rare[order[300:]] = 2  # a class that none of the first 300 rows holds
    assert curve_test(*pts, X, y_rare, None, None, order, 150, "ovr", 0.0) is None


def _data():
    """Rows where a narrower width than ``SVC()``'s pays (a wavy boundary in 2 of 6
    features): ``auto`` moves away from ``SVC()``'s point on a subsample."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 6))
    y = np.sin(2.5 * X[:, 0]) + np.cos(2.5 * X[:, 1]) + 0.3 * rng.normal(size=4000) > 0
    return X, y.astype(int)


def _forced(keep: bool):
    """A stand-in for ``auto``'s test that runs the real one and sets its verdict."""
    import svmtune.methods._auto_curve as curve

    def forced(*args, **kwargs):
        test = curve.test_choice(*args, **kwargs)
        if test is None:
            return None
        z = -0.5 if keep else 5.0
        return dataclasses.replace(test, at_n=PairedComparison("0/1 at n", z, 1.0, z, 1))

    return forced


@pytest.mark.parametrize("keep", [False, True])
def test_auto_returns_svc_point_unless_the_test_keeps_the_choice(monkeypatch, keep):
    import svmtune.methods.auto as auto_module

    X, y = _data()
    free = SVMTuner(random_state=0).fit(X, y)
    info = free.selection_.info
    assert info["path"] != "exact" and info["chosen"] != "default"  # the test runs here
    monkeypatch.setattr(auto_module, "test_choice", _forced(keep))
    tuner = SVMTuner(random_state=0).fit(X, y)
    info = tuner.selection_.info
    assert info["curve_test"] is not None
    assert tuner.n_svm_fits_ == free.n_svm_fits_
    if keep:
        assert tuner.best_params_ == free.best_params_
        assert "is kept" in info["curve_test"]
        return
    Xs = (X - X.mean(0)) / X.std(0)
    assert info["chosen"] == "default" and "SVC()'s point" in info["curve_test"]
    assert tuner.best_params_["C"] == 1.0
    assert tuner.best_params_["gamma"] == pytest.approx(1.0 / (X.shape[1] * Xs.var()))
    chosen = [h for h in tuner.history_ if h["chosen"]]
    assert len(chosen) == 1 and chosen[0]["origin"] == "default"
    assert "at all rows" in chosen[0]["referee"]
    assert any("not at all rows" in (h["referee"] or "") for h in tuner.history_)


def test_no_test_where_the_last_stage_is_exact_on_all_rows():
    X, y = make_classification(300, 5, random_state=6)
    tuner = SVMTuner(random_state=0).fit(X, y)
    assert tuner.selection_.info["path"] == "exact"
    assert tuner.selection_.info["curve_test"] is None
