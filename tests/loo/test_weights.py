"""Instance weights from importance scores (Weighted span eq. (39))."""

from __future__ import annotations

import math

import numpy as np
import pytest

from svmtune.loo.weights import (
    DEFAULT_FLOOR,
    PAPER_A_VALUES,
    PAPER_B_VALUES,
    check_scores,
    minmax_scores,
    sigmoid_sample_weights,
    sigmoid_weights,
)


def eq39(q, A, B, C, floor=0.01):
    return max(C / (1.0 + math.exp(-A * (q - B))), floor)


@pytest.mark.parametrize("A,B,C", [(1.0, 0.0, 1.0), (5.0, 0.3, 0.02), (10.0, 0.9, 1024.0)])
def test_sigmoid_weights_equal_eq39(A, B, C):
    q = np.linspace(0.0, 1.0, 21)
    got = sigmoid_weights(q, A, B, C)
    expected = [eq39(v, A, B, C) for v in q]
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)


def test_sigmoid_weight_shape():
    q = np.linspace(0, 1, 11)
    w = sigmoid_weights(q, 4.0, 0.5, 8.0)
    assert w[5] == pytest.approx(4.0)  # q = B gives C / 2
    assert np.all(np.diff(w) > 0)  # increasing in q for A > 0
    assert np.all(w <= 8.0) and np.all(w >= DEFAULT_FLOOR)
    np.testing.assert_allclose(sigmoid_weights(q, 0.0, 0.5, 8.0), 4.0)  # A = 0: flat
    low = sigmoid_weights(np.array([0.0, 1.0]), 10.0, 0.9, 1.0 / 64, floor=0.01)
    assert low[0] == 0.01  # floored (the paper's sigma)
    assert sigmoid_weights(np.array([-50.0]), 50.0, 0.0, 1.0, floor=0.0)[0] == 0.0


def test_sample_weights_are_weights_over_C():
    q = np.random.default_rng(0).random(30)
    for A, B, C in [(3.0, 0.2, 0.25), (7.0, 0.6, 64.0)]:
        w = sigmoid_sample_weights(q, A, B, C)
        np.testing.assert_allclose(w * C, sigmoid_weights(q, A, B, C), rtol=1e-15)


def test_custom_weight_fn():
    q = np.array([0.0, 0.5, 1.0])
    w = sigmoid_sample_weights(q, 2.0, 0.0, 4.0, weight_fn=lambda q, A, B, C: C * (q + A))
    np.testing.assert_allclose(w, q + 2.0)
    with pytest.raises(ValueError, match="shape"):
        sigmoid_sample_weights(q, 1.0, 0.0, 1.0, weight_fn=lambda q, A, B, C: q[:2])
    with pytest.raises(ValueError, match="non-negative"):
        sigmoid_sample_weights(q, 1.0, 0.0, 1.0, weight_fn=lambda q, A, B, C: q - 1.0)


def test_paper_grid_has_1700_models():
    # A = 1..10, B = 0..0.9, log2 C = -6..10 (Weighted span Section 6.3).
    assert PAPER_A_VALUES == tuple(float(a) for a in range(1, 11))
    np.testing.assert_allclose(PAPER_B_VALUES, np.arange(10) / 10)
    assert len(PAPER_A_VALUES) * len(PAPER_B_VALUES) * len(range(-6, 11)) == 1700


def test_minmax_scores():
    np.testing.assert_allclose(minmax_scores([2.0, 4.0, 6.0]), [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(minmax_scores([3.0, 3.0]), [1.0, 1.0])


def test_validation():
    with pytest.raises(ValueError, match="finite"):
        check_scores([0.1, np.nan])
    with pytest.raises(ValueError, match="1-D"):
        check_scores(np.ones((2, 2)))
    with pytest.raises(ValueError, match="array of numbers, one importance score per sample"):
        check_scores("auto")
    with pytest.raises(ValueError, match="3 entries"):
        check_scores([0.1, 0.2, 0.3], n=4)
    q = np.array([0.1, 0.9])
    with pytest.raises(ValueError, match="scale C"):
        sigmoid_weights(q, 1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="floor"):
        sigmoid_weights(q, 1.0, 0.0, 1.0, floor=-1.0)
    with pytest.raises(ValueError, match="slope"):
        sigmoid_weights(q, np.inf, 0.0, 1.0)
