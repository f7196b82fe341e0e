"""Metamorphic tests: the selection is the same whatever the labels are called (issue 63).

A selection may depend on the data and on ``random_state``, nothing else.  Renaming the
classes (``1 - y``, strings), permuting the classes of a multiclass problem, rescaling a
feature before the standardisation of the default preprocessing and -- for the methods
that draw nothing from the order of the rows -- permuting the rows must give the same
``(sigma, C)`` to rounding and the same predictions, for every registered method.

The binary SVM problem is symmetric under swapping the signs of the labels, and the
one-vs-rest and one-vs-one tasks of a multiclass problem are the same set under a
permutation of the classes: every method's criterion is, so only a random draw tied to the
classes' sorted order (or a tie broken by it), or a solver whose path depends on the
labels' orientation, could tell the cases apart.  The cases for every method are small (80
to 90 rows, small budgets); ``auto``'s subsamples take a few hundred rows (360, and the
issue's breast cancer data), the smallest that make it subsample.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

from svmtune import SVMTuner
from svmtune.methods import available_methods

from .conftest import assert_params_close

#: small budgets for the searches (their defaults evaluate hundreds of candidates)
_LIGHT = {
    "auto": {"max_eval": 5},
    "grid": {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 2, 2), "n_splits": 3},
    "cv_cv": {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 2, 2), "n_splits": 3},
    "halving": {"log2_sigma": (-2, 2, 1), "log2_C": (-2, 2, 1), "n_splits": 3},
    "random": {"n_iter": 4, "n_splits": 3},
    "tpe": {"max_evals": 4, "n_startup": 2, "n_splits": 3},
    "optuna": {"n_trials": 4, "n_startup": 2, "n_splits": 3},
    "span_rule": {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 2, 2)},
    "esdr": {"n_splits": 3},
    "dbtc": {"n_splits": 3},
    "j4": {"n_splits": 3},
    "ld": {"n_splits": 3},
    "rbsvm": {"max_eval": 8},
    "span": {"max_eval": 8},
    "radius_margin": {"max_eval": 8},
    "rbsvm_lowrank": {"max_eval": 8},
    "span_lowrank": {"max_eval": 8},
    "radius_margin_lowrank": {"max_eval": 8},
}

#: the optional dependency behind a method, if any
_NEEDS = {"tpe": "hyperopt", "optuna": "optuna"}

#: methods that draw nothing from the order of the rows: no folds, no shuffles, no random
#: subsample at this size.  auto: below its first stage's ``MIN_FIRST`` rows every stage
#: holds all rows (its random order of the rows then changes nothing); the low-rank
#: methods: all rows below ``start_sample`` start the search, and the landmarks' first
#: pivot is the row nearest the mean, not the first row; span_rule: its default criterion
#: is the closed-form span-rule, not K-fold CV.  Not order-free: the K-fold searches (grid,
#: cv_cv, random, halving, tpe, optuna) and the width rules that choose C by K-fold CV
#: (esdr, dbtc, j4, ld) deal the rows into folds by position, as ``random_state`` says, so
#: a permutation of the rows is another draw of the folds.
_ORDER_FREE = (
    "auto",
    "default",
    "ld_c1",
    "ss",
    "rbsvm",
    "span",
    "radius_margin",
    "span_rule",
    "rbsvm_lowrank",
    "span_lowrank",
    "radius_margin_lowrank",
)

#: relative tolerance of (sigma, C): the cases differ only in rounding
_RTOL = 1e-6


def _binary():
    """80 rows, 3 features, two overlapping classes 0/1 (about 40 % class 1)."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(80, 3))
    score = X[:, 0] + 0.5 * np.sin(2 * X[:, 1]) + 0.6 * rng.normal(size=80)
    y = (score > np.quantile(score, 0.6)).astype(int)
    return X, y


def _three_classes():
    """90 rows, 3 features, three overlapping classes 0/1/2 of unequal sizes."""
    rng = np.random.default_rng(12)
    y = np.repeat([0, 1, 2], [40, 30, 20])
    X = rng.normal(size=(90, 3)) + 1.2 * np.eye(3)[y]
    perm = rng.permutation(90)
    return X[perm], y[perm]


def _fit(method, X, y, **kw):
    if method in _NEEDS:
        pytest.importorskip(_NEEDS[method], reason=f"{method} needs {_NEEDS[method]}")
    tuner = SVMTuner(method=method, method_params=_LIGHT.get(method), random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bound hits, fold caps, small-data notes
        return tuner.fit(X, y)


@functools.cache
def _base(method, data):
    """The fit of ``method`` on the unchanged ``data`` ("binary" or "three"), shared by the
    tests (a fit is deterministic and the tests only read it)."""
    X, y = _binary() if data == "binary" else _three_classes()
    return _fit(method, X, y)


def _same_selection(a, b, mapping, X, X_b=None):
    """``a`` and ``b`` chose the same point and predict the same classes on ``X`` (``b`` on
    ``X_b`` if given), the labels of ``a`` mapped by ``mapping`` (old label -> new label)."""
    assert_params_close(b.best_params_, a.best_params_, rel=_RTOL)
    pa, pb = a.predict(X), b.predict(X if X_b is None else X_b)
    if mapping is not None:
        pa = np.array([mapping[v] for v in pa.tolist()])
    np.testing.assert_array_equal(pb, pa)


@pytest.mark.parametrize("method", available_methods())
def test_renamed_labels_same_selection(method):
    """``1 - y`` (the classes swapped) and strings in the reverse order of the codes give
    the selection of ``y``, and the same predictions under the renaming."""
    X, y = _binary()
    base = _base(method, "binary")
    swapped = _fit(method, X, 1 - y)
    _same_selection(base, swapped, {0: 1, 1: 0}, X)
    names = np.array(["pos", "neg"])  # 0 -> "pos", 1 -> "neg": sorted order reversed
    strings = _fit(method, X, names[y])
    _same_selection(base, strings, {0: "pos", 1: "neg"}, X)


@pytest.mark.parametrize("method", available_methods())
def test_permuted_classes_same_selection(method):
    """A permutation of the three classes' names (so of their sorted order, the
    one-vs-rest tasks' order and the one-vs-one pairs' orientation) gives the same
    selection and the same predictions under the permutation."""
    X, y = _three_classes()
    perm = np.array([2, 0, 1])
    base = _base(method, "three")
    permuted = _fit(method, X, perm[y])
    _same_selection(base, permuted, dict(enumerate(perm.tolist())), X)


@pytest.mark.parametrize("method", _ORDER_FREE)
def test_permuted_rows_same_selection(method):
    """Rows in another order, the same ``random_state``: the same selection where the
    method draws nothing from the rows' order (``_ORDER_FREE``)."""
    X, y = _binary()
    perm = np.random.default_rng(5).permutation(len(y))
    base = _base(method, "binary")
    permuted = _fit(method, X[perm], y[perm])
    _same_selection(base, permuted, None, X)


@pytest.mark.parametrize("method", available_methods())
def test_rescaled_feature_same_selection(method):
    """A feature multiplied by 1000 before the default preprocessing, which standardises
    every feature, gives the same selection."""
    X, y = _binary()
    base = _base(method, "binary")
    scaled = X.copy()
    scaled[:, 1] *= 1000.0
    _same_selection(base, _fit(method, scaled, y), None, X, scaled)


@pytest.mark.parametrize("classes", [2, 3])
def test_auto_on_a_subsample_same_selection_whatever_the_names(classes):
    """``auto`` on more rows than its first stage takes (a budget of 8 ``SVC()`` fits on 360
    rows: a stratified subsample of 200): the subsample, and so the selection, does not
    depend on the names or the sorted order of the classes."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(360, 3))
    if classes == 2:
        score = X[:, 0] + 0.5 * np.sin(2 * X[:, 1]) + 0.6 * rng.normal(size=360)
        y = (score > np.quantile(score, 0.6)).astype(int)
        perm = np.array([1, 0])
    else:
        y = rng.integers(0, 3, size=360)
        X += 1.2 * np.eye(3)[y]
        perm = np.array([2, 0, 1])
    params = {"max_eval": 5, "budget": 8}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = SVMTuner(method_params=params, random_state=0).fit(X, y)
        b = SVMTuner(method_params=params, random_state=0).fit(X, perm[y])
    assert a.selection_.info["plan"][0]["size"] < 360  # a subsample
    _same_selection(a, b, dict(enumerate(perm.tolist())), X)


#: options that make a method draw a random subset of rows or pairs, per class
_SUBSET_OPTIONS = {
    "ss": {"max_samples": 40},
    "esdr": {"max_pairs": 300, "n_splits": 3},
    "ld_c1": {"max_pairs": 300},
}


@pytest.mark.parametrize("method", sorted(_SUBSET_OPTIONS))
def test_random_subsets_do_not_depend_on_the_names(method):
    """A method's own stratified subsample (S&S's ``max_samples``) or sample of pairs (the
    width indices' ``max_pairs``) draws its random numbers for the rows, not for the classes
    in sorted order: swapped labels, the same selection."""
    X, y = _binary()
    params = _SUBSET_OPTIONS[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = SVMTuner(method=method, method_params=params, random_state=0).fit(X, y)
        b = SVMTuner(method=method, method_params=params, random_state=0).fit(X, 1 - y)
    _same_selection(a, b, {0: 1, 1: 0}, X)


def test_breast_cancer_same_answer_whatever_the_labels():
    """The issue's case: on the bundled breast cancer data (wdbc, 569 rows) ``y``, ``1 - y``
    and strings in the reverse order gave two selections at the same estimate; now one, and
    the same predictions, by default (all rows, the budget's floor) and on a subsample."""
    from svmtune.datasets import load_dataset

    X, labels = load_dataset("wdbc")[:2]
    y = (np.asarray(labels) == np.unique(labels)[1]).astype(int)
    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for budget in (None, 8.0):
            for name, target in (("y", y), ("1-y", 1 - y), ("names", np.array(["b", "a"])[y])):
                opts = {} if budget is None else {"budget": budget}
                fits[name] = SVMTuner(random_state=0, method_params=opts).fit(X, target)
            if budget is not None:
                assert fits["y"].selection_.info["plan"][0]["size"] < len(y)  # a subsample
            _same_selection(fits["y"], fits["1-y"], {0: 1, 1: 0}, X)
            _same_selection(fits["y"], fits["names"], {0: "b", 1: "a"}, X)
