"""The Weighted span paper's reproduction helpers (``benchmarks/suites/_span_study.py``):
holdout error and RMSE (Table 4), the worst case at the minimum (Tables 2-3), the best
slices (Fig. 2-4), Lemma 1 statistics (Table 5) and the ringnorm generator (Section 6.7)."""

from __future__ import annotations

import numpy as np
import pytest

from svmtune.bench.suite import suite_module
from svmtune.kernels import Kernel
from svmtune.svm import fit_l1_svm

from ..conftest import make_problem

S = suite_module("_span_study")
holdout_error, prediction_rmse = S.holdout_error, S.prediction_rmse
worst_case_at_minimum, best_slices = S.worst_case_at_minimum, S.best_slices
lemma1_statistics, make_ringnorm = S.lemma1_statistics, S.make_ringnorm


def test_holdout_error_and_rmse():
    X, y = make_problem(40, 2, 2)
    Xt, yt = make_problem(30, 2, 12)
    kern = Kernel("rbf", sigma=1.0)
    sol = fit_l1_svm(y, 1.0, K=kern(X))
    f = sol.decision_function(kern(Xt, X))
    assert holdout_error(sol, kern(Xt, X), yt) == np.mean(np.sign(f) != yt)
    assert prediction_rmse([0.1, 0.2], [0.1, 0.4]) == pytest.approx(np.sqrt(0.02))
    with pytest.raises(ValueError):
        prediction_rmse([0.1], [0.1, 0.2])
    with pytest.raises(ValueError, match="rows"):
        holdout_error(sol, kern(Xt, X), yt[:5])


def test_worst_case_at_minimum_and_best_slices():
    assert worst_case_at_minimum([0.2, 0.1, 0.1, 0.3], [0.0, 0.25, 0.3, 0.1]) == 0.3
    with pytest.raises(ValueError):
        worst_case_at_minimum([0.1], [])
    actual = np.array([[0.3, 0.2, 0.4], [0.25, 0.1, 0.5]])
    pred = actual + 0.01
    (a0, p0), (a1, p1) = best_slices(actual, pred)
    np.testing.assert_array_equal(a0, [0.2, 0.1])  # along axis 0 at column 1
    np.testing.assert_array_equal(a1, [0.25, 0.1, 0.5])  # along axis 1 at row 1
    np.testing.assert_allclose(p1, a1 + 0.01)
    with pytest.raises(ValueError, match="shape"):
        best_slices(actual, pred[:1])


def test_lemma1_statistics():
    s = lemma1_statistics([0, 1, 2], [4, 5, 6], [10, 10, 16])
    assert s["empty_mean"] == 1.0 and s["empty_std"] == pytest.approx(np.std([0, 1, 2]))
    assert s["inbound_mean"] == 5.0 and s["sv_mean"] == 12.0
    with pytest.raises(ValueError):
        lemma1_statistics([], [], [])


def test_ringnorm_generator_matches_section_6_7():
    X, y = make_ringnorm(40000, 3, random_state=0)
    pos, neg = X[y > 0], X[y < 0]
    assert np.mean(y > 0) == pytest.approx(0.3, abs=0.01)
    np.testing.assert_allclose(pos.mean(axis=0), 1.0, atol=0.03)
    np.testing.assert_allclose(neg.mean(axis=0), 0.0, atol=0.05)
    np.testing.assert_allclose(np.cov(pos.T), np.eye(3), atol=0.05)
    np.testing.assert_allclose(np.cov(neg.T), 4.0 * np.eye(3), atol=0.15)
    X2, y2 = make_ringnorm(40000, 3, random_state=0)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    with pytest.raises(ValueError):
        make_ringnorm(10, 0)
    with pytest.raises(ValueError):
        make_ringnorm(10, 2, p_positive=1.0)


def test_inputs_are_checked():
    X, y = make_problem(30, 2, 3)
    K = Kernel("rbf", sigma=1.0)(X)
    sol = fit_l1_svm(y, 1.0, K=K)
    with pytest.raises(ValueError, match="-1 and \\+1"):
        holdout_error(sol, K, (y > 0).astype(float))
    with pytest.raises(ValueError, match="one column per"):
        holdout_error(sol, K[:, :5], y)
    with pytest.raises(ValueError, match="NaN"):
        worst_case_at_minimum([np.nan, 1.0], [0.0, 1.0])
