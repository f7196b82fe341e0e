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


# ----------------------------------------------------------------------------- groups
def _grouped(seed=0, n_groups=24, size=5):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n_groups * size)
    groups = np.repeat(np.arange(n_groups), size)
    return y, groups


def test_group_folds_keep_every_group_on_one_side():
    y, groups = _grouped()
    folds = make_folds(y, 5, random_state=0, groups=groups)
    assert len(folds) == 5
    seen = np.concatenate([te for _, te in folds])
    assert np.array_equal(np.sort(seen), np.arange(len(y)))  # a partition of the rows
    for tr, te in folds:
        assert not set(groups[tr]) & set(groups[te])
        assert set(y[tr]) == {0, 1}


def test_group_folds_are_scikit_learns_stratified_group_kfold():
    from sklearn.model_selection import StratifiedGroupKFold

    y, groups = _grouped(1)
    labels = np.array([f"g{g}" for g in groups], dtype=object)  # any labels, encoded
    got = make_folds(y, 4, random_state=3, groups=labels)
    ref = StratifiedGroupKFold(4, shuffle=True, random_state=3).split(y, y, groups)
    for (tr, te), (rtr, rte) in zip(got, ref, strict=True):
        assert np.array_equal(tr, rtr) and np.array_equal(te, rte)


def test_group_folds_capped_by_the_groups_of_a_class():
    y, groups = _grouped(2)
    y[groups >= 3] = 0  # class 1 lives in groups 0, 1 and 2 only
    y[groups < 3] = np.resize([0, 1], int(np.sum(groups < 3)))
    with pytest.warns(UserWarning, match="only 3 groups: using 3-fold instead of 5-fold"):
        folds = make_folds(y, 5, random_state=0, groups=groups)
    assert len(folds) == 3
    y[groups >= 1] = 0
    y[groups == 0] = [1, 1, 1, 1, 0]  # class 1 in group 0 alone
    with pytest.raises(ValueError, match="class 1 .* in one group"):
        make_folds(y, 4, random_state=0, groups=groups)


def test_group_folds_raise_when_a_training_part_misses_a_class():
    from sklearn.model_selection import StratifiedGroupKFold

    # three classes in four small groups: some shuffles put both groups of a class in one
    # validation part (which ones depends on scikit-learn's version: found here, not fixed)
    y = np.array([1, 2, 0, 1, 0, 1, 2, 1, 0, 1, 0])
    groups = np.array([0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    for seed in range(50):
        split = StratifiedGroupKFold(2, shuffle=True, random_state=seed).split(y, y, groups)
        lost = [(i, set(range(3)) - set(y[tr])) for i, (tr, _) in enumerate(split)]
        lost = [(i, min(c)) for i, c in lost if c]
        if lost:
            break
    assert lost, "no shuffle loses a class: the case needs other data"
    i, c = lost[0]
    with pytest.raises(ValueError, match=f"fold {i + 1} of 2 with no training sample of class {c}"):
        make_folds(y, 2, random_state=seed, groups=groups)


def test_group_folds_count_groups_of_positive_weight():
    y, groups = _grouped(3)
    y[:] = 0
    y[groups < 3] = np.resize([0, 1], int(np.sum(groups < 3)))
    w = np.ones(len(y))
    w[(groups == 2) & (y == 1)] = 0.0  # group 2's class-1 rows enter no fit
    with pytest.warns(UserWarning, match="positive weight in only 2 groups: using 2-fold"):
        folds = make_folds(y, 5, random_state=0, sample_weight=w, groups=groups)
    for tr, _ in folds:
        assert np.any((y[tr] == 1) & (w[tr] > 0))


@pytest.mark.parametrize(
    "groups, match",
    [
        (np.arange(5), r"shape \(5,\), expected \(10,\)"),
        (np.zeros((10, 1)), r"shape \(10, 1\)"),
        ("patient", "one group label per sample"),
        ([1, 2, None, 1, 2, 1, 2, 1, 2, 1], "1 missing value.*position.* 2"),
        (np.r_[np.ones(9), np.nan], "missing value.*position.* 9"),
    ],
)
def test_bad_groups(groups, match):
    y = np.array([0, 1] * 5)
    with pytest.raises(ValueError, match=match):
        make_folds(y, 2, groups=groups)


def test_cv_errors_with_groups(iris):
    X, y = iris
    groups = np.arange(len(y)) // 10
    folds = make_folds(y, 3, random_state=0, groups=groups)
    got = cv_errors(X, y, [PARAMS], n_splits=3, random_state=0, groups=groups)
    assert got == pytest.approx(cv_errors(X, y, [PARAMS], folds=folds))
    with pytest.raises(ValueError, match="groups or folds, not both"):
        cv_errors(X, y, [PARAMS], folds=folds, groups=groups)


def test_f1_scorings_binary_and_multiclass(iris):
    """ "f1" scores the F1 of class code 1 on binary tasks, "f1_macro" the mean F1 of both
    classes; on multiclass tasks both are macro-F1 (the same loss)."""
    from sklearn.metrics import f1_score

    X, y = iris
    yb = (y == 2).astype(int)
    folds = make_folds(yb, 3, random_state=0)
    pred = [(te, SVC(gamma=0.5).fit(X[tr], yb[tr]).predict(X[te])) for tr, te in folds]
    got = cv_errors(X, yb, [PARAMS], folds=folds, scoring="f1")[0]
    assert got == pytest.approx(np.mean([1 - f1_score(yb[te], p) for te, p in pred]))
    got = cv_errors(X, yb, [PARAMS], folds=folds, scoring="f1_macro")[0]
    ref = np.mean([1 - f1_score(yb[te], p, average="macro") for te, p in pred])
    assert got == pytest.approx(ref)
    assert got != pytest.approx(cv_errors(X, yb, [PARAMS], folds=folds, scoring="f1")[0])
    folds = make_folds(y, 3, random_state=0)
    for multiclass in ("ovr", "ovo"):
        f1, macro = (
            cv_errors(X, y, [PARAMS], folds=folds, scoring=s, multiclass=multiclass)[0]
            for s in ("f1", "f1_macro")
        )
        assert f1 == macro
    with pytest.raises(ValueError, match="'f1_macro'"):
        cv_errors(X, y, [PARAMS], folds=folds, scoring="auc")
