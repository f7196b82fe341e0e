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


def assert_l2_kkt(sol, K, tol: float = 1e-8) -> None:
    """The KKT conditions of an L2-SVM solution on ``K`` to ``tol``: ``alpha >= 0``,
    ``y^T alpha = 0``, margins ``>= 1`` off the support set and ``= 1`` on it (of
    ``H = K + diag(1 / (C w))``)."""
    H = K + np.diag(sol.H_diag)
    margin = sol.y * (H @ sol.dual_coef + sol.b)
    assert np.all(sol.alpha >= 0)
    assert abs(sol.y @ sol.alpha) < tol * max(1.0, sol.alpha.sum())
    assert np.all(margin[~sol.support] >= 1 - tol)
    assert np.allclose(margin[sol.support], 1.0, atol=tol)


@pytest.fixture
def no_densifying(monkeypatch):
    """Any toarray/todense of a sparse matrix fails while the fixture is active (proves a
    sparse X is never densified)."""
    import scipy.sparse as sp

    def refuse(self, *a, **kw):
        raise AssertionError("a sparse matrix was densified")

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
