from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from svmtune.estimators import make_final_estimator
from svmtune.search.cv import cv_errors, make_folds

PARAMS = {"kernel": "rbf", "sigma": 1.0, "C": 1.0}
PAIRS = ((0, 1), (0, 2), (1, 2))


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def test_cv_error_equals_manual_fold_loop(iris):
    X, y = iris
    folds = make_folds(y, 3, random_state=0)
    got = cv_errors(X, y, [PARAMS], folds=folds)[0]
    errs = []
    for tr, te in folds:
        est = make_final_estimator(PARAMS, n_classes=3).fit(X[tr], y[tr])
        errs.append(np.mean(est.predict(X[te]) != y[te]))
    assert got == pytest.approx(np.mean(errs))


def test_hinge_scoring_binary_and_one_vs_rest(iris):
    X, y = iris
    folds = make_folds(y, 3, random_state=0)
    got = cv_errors(X, y, [PARAMS], folds=folds, scoring="hinge")[0]
    ref = []
    for tr, te in folds:
        F = np.column_stack(
            [
                SVC(gamma=0.5).fit(X[tr], (y[tr] == k).astype(int)).decision_function(X[te])
                for k in range(3)
            ]
        )
        T = np.where(y[te][:, None] == np.arange(3), 1.0, -1.0)
        ref.append(np.mean(np.maximum(0, 1 - T * F)))
    assert got == pytest.approx(np.mean(ref))
    yb = (y == 2).astype(int)
    fb = make_folds(yb, 3, random_state=0)
    gotb = cv_errors(X, yb, [PARAMS], folds=fb, scoring="hinge")[0]
    refb = np.mean(
        [
            np.mean(
                np.maximum(
                    0,
                    1
                    - np.where(yb[te] == 1, 1, -1)
                    * SVC(gamma=0.5).fit(X[tr], yb[tr]).decision_function(X[te]),
                )
            )
            for tr, te in fb
        ]
    )
    assert gotb == pytest.approx(refb)


def test_folds_capped_by_smallest_class():
    y = np.array([0] * 10 + [1] * 3)
    with pytest.warns(UserWarning, match="3-fold"):
        assert len(make_folds(y, 10, random_state=0)) == 3
    with pytest.raises(ValueError, match="at least 2 samples"):
        make_folds(np.array([0, 0, 0, 1]), 5)


def test_hinge_scoring_one_vs_one(iris):
    """One-vs-one: each pairwise SVM scored on the samples of its two classes."""
    X, y = iris
    folds = make_folds(y, 3, random_state=0)
    got = cv_errors(X, y, [PARAMS], folds=folds, scoring="hinge", multiclass="ovo")[0]
    ref, ref_pairs = [], []
    for tr, te in folds:
        F = SVC(gamma=0.5, decision_function_shape="ovo").fit(X[tr], y[tr]).decision_function(X[te])
        T = np.column_stack(
            [np.where(y[te] == a, 1.0, np.where(y[te] == b, -1.0, 0.0)) for a, b in PAIRS]
        )
        ref.append(np.maximum(0, 1 - T * F)[T != 0].mean())
        terms = []
        for a, b in PAIRS:
            keep_tr = np.isin(y[tr], (a, b))
            keep_te = np.isin(y[te], (a, b))
            svm = SVC(gamma=0.5).fit(X[tr][keep_tr], (y[tr][keep_tr] == a).astype(int))
            f = svm.decision_function(X[te][keep_te])  # positive: class a
            t = np.where(y[te][keep_te] == a, 1.0, -1.0)
            terms.append(np.maximum(0, 1 - t * f))
        ref_pairs.append(np.mean(np.concatenate(terms)))
    assert got == pytest.approx(np.mean(ref), rel=1e-12)
    # the same as separately trained pairwise SVMs, up to libsvm's stopping tolerance
    assert got == pytest.approx(np.mean(ref_pairs), rel=1e-3)
