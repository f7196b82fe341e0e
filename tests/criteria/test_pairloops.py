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


def test_without_a_writable_numba_cache_the_loops_compile_uncached():
    """numba raises at decoration time when it finds no writable cache directory (a
    read-only installation without a user cache); the loops then compile in-process."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    import svmtune

    code = """
import json, warnings
import numba
import numpy as np
_njit = numba.njit
def njit(*args, **kw):
    if kw.get("cache"):
        raise RuntimeError("cannot cache function 'f': no locator available for file 'x'")
    return _njit(*args, **kw)
numba.njit = njit
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from svmtune.criteria._pairloops import rbf_class_sums_multi
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
codes = np.arange(40) % 2
R = rbf_class_sums_multi(X, codes, np.ones(40), np.array([0.5, 2.0]), 2)
print(json.dumps({"warnings": [str(w.message) for w in caught], "R": R.tolist()}))
"""
    # the subprocess imports the svmtune this test imported
    env = dict(os.environ, PYTHONPATH=str(Path(svmtune.__file__).parents[1]))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert sum("NUMBA_CACHE_DIR" in w for w in doc["warnings"]) == 1  # one, not one per loop
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    codes = np.arange(40) % 2
    ref = _reference(X, codes, np.ones(40), [0.5, 2.0], 2)
    np.testing.assert_allclose(np.array(doc["R"]), ref, rtol=1e-12)
