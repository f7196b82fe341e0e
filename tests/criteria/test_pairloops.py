"""Compiled pair loops against their matrix definitions (binning: see test_blocks.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from svmtune.criteria import _pairloops as P
from svmtune.criteria._pairloops import TINY, rbf_class_sums_multi


def _reference(X, codes, w, sigmas, k):
    D = cdist(X, X, "sqeuclidean")
    W = np.zeros((X.shape[0], k))
    W[np.arange(X.shape[0]), codes] = w
    return np.stack([np.exp(-D / (2.0 * s * s)) @ W for s in sigmas])


@pytest.mark.parametrize("k, block_pairs", [(2, 2**18), (3, 2**18), (2, 200)])
def test_rbf_class_sums_equal_kernel_matrix_products(k, block_pairs, monkeypatch):
    monkeypatch.setattr(P, "_BLOCK_PAIRS", block_pairs)  # 200: row blocks of 2 rows
    rng = np.random.default_rng(k)
    X = rng.normal(size=(90, 4))
    X[30] = X[60]  # a duplicate: kernel 1 at every width
    codes = rng.integers(0, k, size=90)
    codes[:k] = np.arange(k)
    w = rng.uniform(0.2, 3.0, size=90)
    # a sqrt(2) chain (squared kernels), an out-of-chain width, unsorted order
    sigmas = np.r_[2.0 * 2.0 ** -np.arange(0, 4, 0.5), 0.77, 5.0][::-1]
    R = rbf_class_sums_multi(X, codes, w, sigmas, k)
    np.testing.assert_allclose(R, _reference(X, codes, w, sigmas, k), rtol=1e-12, atol=0)


def test_rbf_class_sums_flush_only_negligible_entries():
    """Narrow widths: entries below TINY are dropped, nothing else (no subnormals)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 2)) * 10.0
    codes = np.arange(40) % 2
    w = np.ones(40)
    sigmas = 0.5 * 2.0 ** -np.arange(0, 6, 0.5)
    R = rbf_class_sums_multi(X, codes, w, sigmas, 2)
    ref = _reference(X, codes, w, sigmas, 2)
    assert np.all(np.abs(R - ref) <= 1e-12 * ref + 40 * TINY)
    # the diagonal alone remains at the narrowest width: every other entry underflows
    np.testing.assert_array_equal(R[-1], np.eye(2)[codes])
