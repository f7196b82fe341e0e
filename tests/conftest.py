"""Shared fixtures: small random classification problems with fixed seeds."""

from __future__ import annotations

import numpy as np
import pytest


def make_problem(n: int, d: int, seed: int, *, imbalance: float = 0.5, noise: float = 0.5):
    """Two Gaussian-ish classes in ``d`` dimensions with labels in {-1, +1}."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] + 0.5 * np.sin(2 * X[:, 1 % d]) + noise * rng.normal(size=n)
    thr = np.quantile(score, 1 - imbalance)
    y = np.where(score > thr, 1.0, -1.0)
    if np.all(y == y[0]):
        y[0] = -y[0]
    return X, y


def assert_params_close(got: dict, want: dict, rel: float) -> None:
    """``best_params_`` dicts equal: the same keys, text values and Nones, numbers to ``rel``
    (pytest >= 9.2 refuses ``approx(..., rel=...)`` of text or None, e.g. the kernel)."""
    assert got.keys() == want.keys()
    for key, value in want.items():
        if value is None or isinstance(value, str):
            assert got[key] == value, key
        else:
            assert got[key] == pytest.approx(value, rel=rel), key


@pytest.fixture
def problem():
    return make_problem(60, 3, 0)
