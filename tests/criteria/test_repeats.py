"""Exact repeats and the within-class similarity they carry (:mod:`svmtune.criteria.repeats`)."""

from __future__ import annotations

import numpy as np
import pytest

from svmtune.criteria.repeats import repeat_floor, repeat_share


def _with_repeats(n_distinct=40, copies=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_distinct, 3))
    y = (X[:, 0] > 0).astype(int)
    idx = np.r_[np.arange(n_distinct), rng.integers(0, n_distinct, copies * 5)]
    return X[idx], y[idx]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("max_share", [0.2, 0.5, 0.9])
def test_repeat_floor_is_the_first_width_below_the_share(seed, max_share):
    X, y = _with_repeats(seed=seed)
    sigmas = 2.0 ** np.arange(-8, 9.01, 0.5)
    shares = repeat_share(X, y, None, sigmas)
    assert np.all(np.diff(shares) <= 1e-12)  # not increasing with the width
    start, share = repeat_floor(X, y, None, sigmas, max_share)
    below = np.flatnonzero(shares < max_share)
    assert start == (below[0] if below.size else sigmas.size)
    assert share == pytest.approx(shares[min(start, sigmas.size - 1)])


def test_repeat_floor_without_repeats_or_with_every_width_dominated():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.arange(30) % 2
    assert repeat_floor(X, y, None, np.array([0.1, 1.0, 10.0]), 0.5) == (0, 0.0)
    # one distinct row per class, repeated: only repeats, at every width
    Xr, yr = np.repeat([[0.0, 0.0], [5.0, 5.0]], 10, axis=0), np.repeat([0, 1], 10)
    start, share = repeat_floor(Xr, yr, None, np.array([0.1, 1.0, 10.0]), 0.5)
    assert start == 3 and share == pytest.approx(1.0)
    # a zero weight removes a row from both sums
    w = np.ones(len(yr))
    w[1:10] = 0.0
    assert repeat_floor(Xr, yr, w, np.array([0.1, 1.0]), 0.5)[0] == 2  # class 1 still repeats
    with pytest.raises(ValueError, match="increasing"):
        repeat_floor(X, y, None, np.array([1.0, 0.5]), 0.5)
