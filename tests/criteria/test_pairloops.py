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


def _gram_tolerance(X, codes, w, sigmas, k):
    """The documented error of the Gram-expansion distances: |K - K_ref| <= K t |dD| with
    |dD| <= (d + 2) eps (||x||^2 + ||x'||^2) for the centred X, summed like R."""
    Xc = X - X.mean(axis=0)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    dD = (X.shape[1] + 2) * np.finfo(float).eps * (sq[:, None] + sq[None, :])
    D = cdist(X, X, "sqeuclidean")
    W = np.zeros((X.shape[0], k))
    W[np.arange(X.shape[0]), codes] = np.abs(w)
    out = []
    for s in sigmas:
        t = 1.0 / (2.0 * s * s)
        out.append((np.exp(-t * D) * t * dD) @ W)
    return np.stack(out)


def _weights(kind, codes, rng):
    if kind == "unit":
        return np.ones(codes.size)
    if kind == "classwise":  # as class_weight gives: constant within each class
        return rng.uniform(0.2, 3.0, size=codes.max() + 1)[codes]
    return rng.uniform(0.2, 3.0, size=codes.size)


@pytest.mark.parametrize("weights", ["unit", "classwise", "sample"])
@pytest.mark.parametrize("k, block_pairs", [(2, 2**18), (3, 2**18), (2, 200)])
def test_rbf_class_sums_equal_kernel_matrix_products(k, block_pairs, weights, monkeypatch):
    monkeypatch.setattr(P, "_BLOCK_PAIRS", block_pairs)  # 200: row blocks of 2 rows
    rng = np.random.default_rng(k)
    X = rng.normal(size=(90, 4))
    X[30] = X[60]  # a duplicate: kernel 1 at every width
    codes = rng.integers(0, k, size=90)
    codes[:k] = np.arange(k)
    w = _weights(weights, codes, rng)
    # a sqrt(2) chain (squared kernels), an out-of-chain width, unsorted order
    sigmas = np.r_[2.0 * 2.0 ** -np.arange(0, 4, 0.5), 0.77, 5.0][::-1]
    R = rbf_class_sums_multi(X, codes, w, sigmas, k)
    np.testing.assert_allclose(R, _reference(X, codes, w, sigmas, k), rtol=1e-12, atol=0)


def _forbid(monkeypatch, name):
    def refuse(*args):
        raise AssertionError(f"{name} was called")

    monkeypatch.setattr(P, name, refuse)


def test_rbf_class_sums_chain_only_and_far_from_the_origin(monkeypatch):
    """Only squared widths (no distances kept), data offset by 1e6: the expansion runs on the
    centred data, so the offset neither costs accuracy nor forces the slower differences."""
    _forbid(monkeypatch, "_rows_sqdist")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(70, 3))
    codes = np.arange(70) % 2
    w = np.ones(70)
    sigmas = 2.0 * 2.0 ** -np.arange(0, 3, 0.5)
    R = rbf_class_sums_multi(X + 1e6, codes, w, sigmas, 2)
    np.testing.assert_allclose(R, _reference(X + 1e6, codes, w, sigmas, 2), rtol=1e-12)


def test_rbf_class_sums_features_of_very_different_scales_use_the_differences(monkeypatch):
    """A feature at scale 1e8 next to unit ones: the expansion's error (about 1e-16 times the
    squared norms, ~1e16) would swamp the unit-scale distances, so the differences are used
    and the sums stay exact."""
    _forbid(monkeypatch, "_gram_sqdist")
    rng = np.random.default_rng(5)
    X = np.column_stack([1e8 * (np.arange(60) % 3), rng.normal(size=(60, 2))])
    codes = np.arange(60) % 2
    w = rng.uniform(0.5, 2.0, size=60)
    sigmas = np.array([2.0, 2.0**0.5, 1.0])
    R = rbf_class_sums_multi(X, codes, w, sigmas, 2)
    np.testing.assert_allclose(R, _reference(X, codes, w, sigmas, 2), rtol=1e-12)


def test_rbf_class_sums_huge_values_use_the_differences():
    """Squared norms that would overflow: the distances are the differences themselves
    (infinite, kernel 0), repeated rows keep kernel 1."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 2)) * 1e160
    X[5] = X[9]
    codes = np.arange(30) % 2
    w = rng.uniform(0.5, 2.0, size=30)
    sigmas = np.array([1.0, 2.0**-0.5, 0.3])
    with np.errstate(over="ignore"):
        ref = _reference(X, codes, w, sigmas, 2)
    np.testing.assert_array_equal(rbf_class_sums_multi(X, codes, w, sigmas, 2), ref)


def test_rbf_class_sums_flush_only_negligible_entries():
    """Narrow widths: entries below TINY are dropped, nothing else (no subnormals)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 2)) * 10.0
    codes = np.arange(40) % 2
    w = np.ones(40)
    sigmas = 0.5 * 2.0 ** -np.arange(0, 6, 0.5)
    R = rbf_class_sums_multi(X, codes, w, sigmas, 2)
    ref = _reference(X, codes, w, sigmas, 2)
    tol = 1e-12 * ref + _gram_tolerance(X, codes, w, sigmas, 2) + 40 * TINY
    assert np.all(np.abs(R - ref) <= tol)
    # the diagonal alone remains at the narrowest width: every other entry underflows
    np.testing.assert_array_equal(R[-1], np.eye(2)[codes])


def test_without_a_writable_numba_cache_the_loops_compile_uncached():
    """numba raises at decoration time (the first call of a loop) when it finds no writable
    cache directory (a read-only installation without a user cache); the loops then compile
    in-process."""
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
from svmtune.criteria._pairloops import rbf_class_sums_multi
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
codes = np.arange(40) % 2
with warnings.catch_warnings(record=True) as caught:  # numba is applied at the first call
    warnings.simplefilter("always")
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


def test_warm_up_leaves_nothing_to_compile():
    """In a fresh process warm_up compiles the loops asked for; after it every compiled loop
    has its signature, and the criteria's own calls (S&S, the ESDR pair histogram, sample
    weights) compile nothing more."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import svmtune

    code = """
import numpy as np
import svmtune.criteria._pairloops as P
from svmtune.criteria.blocks import build_pair_histogram
from svmtune.methods.ss_ratio import SSRatio
loops = [P._pair_bin_counts, P._coarsen_bins, P._rows_sqdist, P._gram_sqdist,
         P._accumulate_rows]
P.warm_up(histogram=False, rbf=False)
assert not any(f.signatures for f in loops)
P.warm_up(rbf=False)  # only the histogram loops
assert [bool(f.signatures) for f in loops] == [True, True, False, False, False]
P.warm_up()
before = [len(f.signatures) for f in loops]
rng = np.random.default_rng(0)
X = rng.normal(size=(60, 3))
y = np.arange(60) % 3
w = rng.uniform(0.5, 2.0, size=60)
SSRatio().select(X, y)
SSRatio().select(X, y, w)
SSRatio().select(X * 1e160, y)
build_pair_histogram(X, y, sample_weight=w)
after = [len(f.signatures) for f in loops]
assert min(before) >= 1 and after == before, (before, after)
"""
    # the subprocess imports the svmtune this test imported
    env = dict(os.environ, PYTHONPATH=str(Path(svmtune.__file__).parents[1]))
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300, env=env)
