"""The landmark search shared by the low-rank selectors (svmtune.methods._lowrank_search)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmtune.methods.base import get_selector


def _with_zero_weight_rows(k=2, seed=0):
    """60 rows of weight 1 and 15 far-out rows of weight 0 interleaved with them."""
    rs = np.random.RandomState(seed)
    y = rs.randint(0, k, 60)
    X = rs.randn(60, 3) + y[:, None]
    X = np.vstack([X, 3 * rs.randn(15, 3)])
    y = np.r_[y, rs.randint(0, k, 15)]
    w = np.r_[np.ones(60), np.zeros(15)]
    perm = rs.permutation(75)
    return X[perm], y[perm], w[perm]


def _key(sel):
    info = {k: v for k, v in sel.info.items() if not k.endswith("time")}
    return sel.params, sel.estimate, sel.criterion, sel.n_svm_fits, info


@pytest.mark.parametrize("k", [2, 3], ids=["binary", "3 classes"])
@pytest.mark.parametrize("method", ["span_lowrank", "radius_margin_lowrank", "rbsvm_lowrank"])
def test_rows_of_weight_0_are_as_if_removed(method, k):
    """Landmarks, rank and trace residual come from the rows of positive weight only: a row
    of weight 0 changes nothing (it used to be a landmark candidate and count in the rank
    rule's trace residual, raising the rank and moving the choice)."""
    X, y, w = _with_zero_weight_rows(k)
    keep = w > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = get_selector(method, {"max_iter": 15})
        zero = sel.select(X, y, w, random_state=0)
        removed = sel.select(X[keep], y[keep], w[keep], random_state=0)
        unweighted = sel.select(X[keep], y[keep], random_state=0)
    assert _key(zero) == _key(removed)
    assert zero.params == unweighted.params and zero.criterion == unweighted.criterion
