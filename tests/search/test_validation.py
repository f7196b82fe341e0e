"""Bad input to the public search helpers raises a ``ValueError`` that says what to fix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmtune.kernels import squared_distances
from svmtune.methods import get_selector
from svmtune.search.cv import cv_errors, make_folds
from svmtune.search.scalar import first_crossing, golden_section_max
from svmtune.search.start import exact_search_start, initial_sigma, initial_theta

rng = np.random.default_rng(0)
X = np.vstack([rng.normal(0, 1, (10, 2)), rng.normal(1.5, 1, (10, 2))])
y01 = np.r_[np.zeros(10, int), np.ones(10, int)]
D2 = squared_distances(X)
D2nan = D2.copy()
D2nan[0, 1] = D2nan[1, 0] = np.nan
CAND = [{"C": 1.0, "kernel": "rbf", "gamma": 0.5}]
W_NAN = np.r_[np.nan, np.ones(19)]


def _start(**kw):
    return exact_search_start(X, kw.pop("start", "median"), kw.pop("C0", 1.0), method="rbsvm", **kw)


CASES = [
    # 15: starting point of the exact gradient searches
    ("C0 negative", lambda: _start(C0=-1.0), "C0 must be a positive"),
    ("C0 zero", lambda: _start(C0=0.0), "C0 must be a positive"),
    ("start negative", lambda: _start(start=(-1.0, 1.0)), "positive and finite"),
    ("sample_weight length", lambda: _start(sample_weight=np.ones(5)), "expected (20,)"),
    ("initial_theta C0 nan", lambda: initial_theta(D2, "median", np.nan, n_features=2), "C0"),
    # 16: initial_sigma
    ("D2 NaN", lambda: initial_sigma(D2nan), "NaN, infinity or negative"),
    ("D2 negative", lambda: initial_sigma(-D2), "NaN, infinity or negative"),
    ("D2 empty", lambda: initial_sigma(np.zeros((0, 0))), "at least two"),
    ("D2 non-square", lambda: initial_sigma(D2[:5]), "square"),
    ("D2 1-D", lambda: initial_sigma(D2[0]), "square"),
    ("max_pairs 0", lambda: initial_sigma(D2, max_pairs=0), "max_pairs"),
    ("n_features 2.7", lambda: initial_sigma(rule="sqrt_d", n_features=2.7), "n_features"),
    # 17: cross-validation
    (
        "cv sample_weight NaN",
        lambda: cv_errors(X, y01, CAND, n_splits=2, sample_weight=W_NAN),
        "NaN",
    ),
    (
        "cv sample_weight inf",
        lambda: make_folds(y01, 2, 0, np.r_[np.inf, np.ones(19)]),
        "NaN or infinity",
    ),
    ("cv folds empty", lambda: cv_errors(X, y01, CAND, folds=[]), "folds is empty"),
    (
        "cv candidate without C",
        lambda: cv_errors(X, y01, [{"kernel": "rbf", "gamma": 1.0}]),
        "has no 'C'",
    ),
    # 35: make_folds / cv_errors shapes
    ("make_folds n_splits 1", lambda: make_folds(y01, 1), "n_splits must be an integer >= 2"),
    ("make_folds n_splits -3", lambda: make_folds(y01, -3), "n_splits must be an integer >= 2"),
    ("make_folds weight length", lambda: make_folds(y01, 2, 0, np.ones(3)), "expected (20,)"),
    (
        "make_folds None label",
        lambda: make_folds(np.array(["a", None] * 10, dtype=object), 2),
        "missing label",
    ),
    ("cv X shorter", lambda: cv_errors(X[:15], y01, CAND, n_splits=2), "X has 15 samples"),
    # 36: exact_search_start X, first_crossing grid_values
    (  # the exact searches' X is checked at their door (Selector.select, or the tuner's)
        "exact search X nan",
        lambda: get_selector("rbsvm").select([[np.nan, 1.0], [1.0, 2.0]], [0, 1]),
        "Input X contains NaN",
    ),
    (
        "first_crossing grid_values",
        lambda: first_crossing(lambda x: x, [0.0, 1.0, 2.0], 0.5, grid_values=[0.0, 1.0]),
        "one value per grid point",
    ),
    # 24: golden section on NaN bounds
    (
        "golden_section_max nan",
        lambda: golden_section_max(lambda x: -x * x, np.nan, 1.0),
        "finite ends",
    ),
]


@pytest.mark.parametrize("name, call, fragment", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises(name, call, fragment):
    with pytest.raises(ValueError) as err:
        call()
    assert fragment in str(err.value), str(err.value)


def test_make_folds_accepts_any_labels():
    ypm = 2 * y01 - 1
    strs = np.where(y01 == 1, "b", "a")
    ref = make_folds(y01, 5, 0)
    for y in (ypm, ypm.astype(float), strs):
        folds = make_folds(y, 5, 0)
        assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, ref))


def test_initial_sigma_warns_only_when_points_coincide():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        initial_sigma(D2)
    with pytest.warns(RuntimeWarning, match="coincide"):
        assert initial_sigma(np.zeros((3, 3))) == 1.0
