from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.utils.estimator_checks import parametrize_with_checks

from svmtune.estimators import (
    L2SVC,
    OvRSVC,
    class_weight_vector,
    make_final_estimator,
    ovo_tanh_proba,
    ovo_to_ovr_decision,
    tanh_proba,
)
from svmtune.kernels import Kernel, KernelColumns
from svmtune.svm import LIBSVM_MAX_ITER, fit_l1_svm, fit_l2_svm

from .conftest import make_problem


@parametrize_with_checks(
    [L2SVC(), L2SVC(kernel="linear", C=0.5), OvRSVC()],
    expected_failed_checks=lambda est: (
        {
            "check_sample_weight_equivalence_on_dense_data": "libsvm tolerance 1e-3, as for SVC",
            "check_sample_weight_equivalence_on_sparse_data": "libsvm tolerance 1e-3, as for SVC",
        }
        if isinstance(est, OvRSVC)
        else {}
    ),
)
def test_sklearn_contract(estimator, check):
    check(estimator)


def test_l2svc_equals_solver():
    X, y = make_problem(50, 3, 2)
    clf = L2SVC(C=3.0, sigma=0.7).fit(X, y)
    K = Kernel("rbf", sigma=0.7)(X)
    sol = fit_l2_svm(K, y, 3.0)
    assert np.allclose(clf.decision_function(X), sol.decision_function(K), atol=1e-10)
    P = clf.predict_proba(X)
    assert np.allclose(P[:, 1], 0.5 * (1 + np.tanh(clf.decision_function(X))))


@pytest.mark.parametrize("multiclass", [False, True])
def test_l2svc_on_kernel_columns_equals_the_whole_matrix(monkeypatch, multiclass):
    """Above FULL_KERNEL_MAX_N points L2SVC trains on a kernel by columns (libsvm start):
    the same model up to round-off; decision values in blocks equal one block."""
    import svmtune.estimators as est

    if multiclass:
        X, y = load_iris(return_X_y=True)
    else:
        X, y = make_problem(200, 3, 4, imbalance=0.3)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=y.size)
    w[:4] = 0.0
    params = {"C": 20.0, "sigma": 0.9, "class_weight": "balanced"}
    ref = L2SVC(**params).fit(X, y, sample_weight=w)
    monkeypatch.setattr(est, "FULL_KERNEL_MAX_N", 10)
    monkeypatch.setattr(est, "DECISION_BLOCK", 97)  # about one row per block
    made, of = [], KernelColumns.of

    def spy(X, kernel):
        made.append(X.shape[0])
        return of(X, kernel)

    monkeypatch.setattr(KernelColumns, "of", staticmethod(spy))
    clf = L2SVC(**params).fit(X, y, sample_weight=w)
    assert len(made) == 1  # the columns path ran
    assert np.array_equal(clf.support_, ref.support_)
    np.testing.assert_allclose(clf.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(clf.intercept_, ref.intercept_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(
        clf.decision_function(X), ref.decision_function(X), rtol=1e-8, atol=1e-10
    )
    assert np.array_equal(clf.predict(X), ref.predict(X))


def _arrays(obj, seen=None):
    """Every ndarray reachable from ``obj``'s attributes, lists, tuples and dicts."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, (list, tuple)):
        items = obj
    elif isinstance(obj, dict):
        items = obj.values()
    elif hasattr(obj, "__dict__"):
        items = vars(obj).values()
    else:
        return []
    return [a for item in items for a in _arrays(item, seen)]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_l2svc_keeps_only_what_prediction_reads(n_classes):
    """The fitted L2SVC holds its support rows, their coefficients and per-task scalars:
    no solver state (the factor of the support-set matrix is |S|^2 values; issue #63)."""
    X, y = make_problem(300, 4, seed=5)
    if n_classes == 3:
        y = np.where(X[:, 1] > 0.5, 2.0, y)
    clf = L2SVC(C=5.0, sigma=1.2).fit(X, y)
    n_sv, n_tasks = clf.support_vectors_.shape[0], clf.dual_coef_.shape[0]
    assert n_tasks == (1 if n_classes == 2 else n_classes)
    held = sum(a.nbytes for a in _arrays(clf))
    assert held <= 8 * n_sv * (X.shape[1] + n_tasks + 1) + 64 * (n_tasks + n_classes)
    assert clf.n_support_.shape == clf.n_iter_.shape == (n_tasks,)
    assert clf.n_support_.max() <= n_sv <= clf.n_support_.sum()
    # prediction reads exactly those arrays
    K = Kernel("rbf", sigma=1.2)(X, clf.support_vectors_)
    F = K @ clf.dual_coef_.T + clf.intercept_
    np.testing.assert_array_equal(clf.decision_function(X), F[:, 0] if n_tasks == 1 else F)


def test_l2svc_multiclass_ovr():
    X, y = load_iris(return_X_y=True)
    clf = L2SVC(C=10.0, sigma=1.0).fit(X, y)
    assert clf.decision_function(X).shape == (150, 3)
    assert clf.score(X, y) > 0.9
    assert np.allclose(clf.predict_proba(X).sum(1), 1.0)


def test_l2svc_sigmoid_kernel_that_is_not_psd_is_a_clear_error():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    K = np.tanh(X @ X.T)  # gamma = 1, coef0 = 0
    assert np.linalg.eigvalsh(K).min() < -1.0  # far from positive semi-definite
    with pytest.raises(ValueError, match="not positive semi-definite .* C=1.0"):
        L2SVC(kernel="sigmoid", gamma=1.0, C=1.0).fit(X, y)
    # a small C makes K + I / C positive definite: a convex problem, solved
    clf = L2SVC(kernel="sigmoid", gamma=1.0, C=1e-3).fit(X, y)
    assert np.all(np.isfinite(clf.decision_function(X)))


def test_tanh_proba_and_class_weights():
    P = tanh_proba(np.array([-50.0, 0.0, 50.0]))
    assert np.allclose(P, [[1, 0], [0.5, 0.5], [0, 1]])
    y = np.array([0, 0, 0, 1])
    assert np.allclose(class_weight_vector(y, np.array([0, 1]), "balanced"), [2 / 3] * 3 + [2])
    assert np.allclose(class_weight_vector(y, np.array([0, 1]), {1: 5.0}), [1, 1, 1, 5])
    with pytest.raises(ValueError, match="class_weight"):
        class_weight_vector(y, np.array([0, 1]), "other")


def test_class_weight_vector_as_scikit_learn_computes_it():
    from sklearn.utils.class_weight import compute_sample_weight

    y = np.array(["a"] * 7 + ["b"] * 3 + ["c"] * 2)
    classes, y_enc = np.unique(y, return_inverse=True)
    assert list(class_weight_vector(y_enc, classes, None)) == [1.0] * 12
    np.testing.assert_allclose(
        class_weight_vector(y_enc, classes, "balanced"), compute_sample_weight("balanced", y)
    )
    np.testing.assert_allclose(
        class_weight_vector(y_enc, classes, {"b": 4, "c": 0.5}),
        compute_sample_weight({"a": 1, "b": 4, "c": 0.5}, y),
    )
    # numeric labels: 1, 1.0 and numpy integers name the same class
    num = np.array([0, 1, 1, 2])
    assert list(class_weight_vector(num, np.array([0, 1, 2]), {1.0: 3})) == [1, 3, 3, 1]
    assert list(class_weight_vector(num, np.array([0, 1, 2]), {np.int64(2): 3})) == [1, 1, 1, 3]


def test_make_final_estimator_options():
    p = {"kernel": "rbf", "sigma": 2.0, "C": 3.0}
    svc = make_final_estimator(p)
    assert svc.gamma == pytest.approx(1 / 8) and svc.C == 3.0
    assert type(make_final_estimator(p, n_classes=3)).__name__ == "OvRSVC"
    assert type(make_final_estimator(p, final_model="l2")).__name__ == "L2SVC"
    with pytest.raises(ValueError, match="final_model"):
        make_final_estimator(p, final_model="l3")
    svc = make_final_estimator(p, n_classes=3, multiclass="ovo")
    assert type(svc).__name__ == "SVC" and svc.decision_function_shape == "ovo"
    with pytest.raises(ValueError, match="multiclass must be 'ovr' or 'ovo', got 'ovx'"):
        make_final_estimator(p, n_classes=3, multiclass="ovx")


def test_libsvm_fits_carry_libsvm_iteration_cap():
    """Every libsvm model svmtune builds stops after libsvm's own 10^7 iterations (sklearn's
    SVC has no cap), and a capped fit says so with sklearn's ConvergenceWarning."""
    from sklearn.exceptions import ConvergenceWarning

    params = {"kernel": "rbf", "sigma": 1.0, "C": 2.0}
    assert make_final_estimator(params).max_iter == LIBSVM_MAX_ITER == 10**7
    ovr = make_final_estimator(params, n_classes=3)
    assert isinstance(ovr, OvRSVC) and ovr.max_iter == LIBSVM_MAX_ITER
    X, y = load_iris(return_X_y=True)
    with pytest.warns(ConvergenceWarning):
        m = OvRSVC(C=1e4, max_iter=2).fit(X, y)
    assert all(e.max_iter == 2 for e in m.estimators_)
    # the selection-time fits (span-rule, span bound) share the cap
    yb = np.where(y == 0, 1, -1)
    _, svc = fit_l1_svm(yb, 1.0, X=X, kernel=Kernel("rbf", sigma=1.0), return_estimator=True)
    assert svc.max_iter == LIBSVM_MAX_ITER
    _, svc = fit_l1_svm(yb, 1.0, K=Kernel("rbf", sigma=1.0)(X), return_estimator=True)
    assert svc.max_iter == LIBSVM_MAX_ITER


def test_ovo_decision_transform_equals_svc_ovr_shape():
    from sklearn.svm import SVC

    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    pair = SVC(C=3.0, decision_function_shape="ovo").fit(X, y)
    ovr = SVC(C=3.0, decision_function_shape="ovr").fit(X, y)
    np.testing.assert_allclose(
        ovo_to_ovr_decision(pair.decision_function(X), 3), ovr.decision_function(X), atol=1e-12
    )
    est = make_final_estimator(
        {"kernel": "rbf", "sigma": 1.0, "C": 1.0}, multiclass="ovo", n_classes=3
    )
    assert est.decision_function_shape == "ovo"
    platt = make_final_estimator(
        {"kernel": "rbf", "sigma": 1.0, "C": 1.0}, multiclass="ovo", n_classes=3, probability=True
    )
    assert platt.estimator.decision_function_shape == "ovr"  # calibration needs (n, k) scores


def test_ovo_tanh_coupling_recovers_consistent_pairs_and_solves_its_qp():
    from scipy.optimize import minimize

    rng = np.random.default_rng(0)
    k = 4
    a, b = np.triu_indices(k, 1)
    # consistent pairwise probabilities r_ij = p_i / (p_i + p_j) are reproduced exactly
    P = rng.dirichlet(np.ones(k), size=6)
    r = P[:, a] / (P[:, a] + P[:, b])
    f = np.arctanh(2 * r - 1)
    np.testing.assert_allclose(ovo_tanh_proba(f, k), P, atol=1e-9)
    # arbitrary pairwise values: the coupling is the minimiser of Wu-Lin-Weng's method-2 QP
    f = rng.normal(scale=1.5, size=(5, a.size))
    got = ovo_tanh_proba(f, k)
    assert np.all(got >= 0) and np.allclose(got.sum(1), 1.0)
    for row, g in zip(f, got):
        R = np.zeros((k, k))
        R[a, b] = 0.5 * (1 + np.tanh(row))
        R[b, a] = 1 - R[a, b]

        def obj(p, R=R):
            return sum(
                (R[j, i] * p[i] - R[i, j] * p[j]) ** 2 for i in range(k) for j in range(k) if i != j
            )

        ref = minimize(
            obj,
            np.full(k, 1.0 / k),
            constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1}],
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 500},
        )
        np.testing.assert_allclose(g, ref.x, atol=1e-5)
    with pytest.raises(ValueError, match="one-vs-one"):
        ovo_tanh_proba(np.zeros((2, 3)), 4)


@pytest.mark.parametrize("cls", [L2SVC, OvRSVC])
def test_class_without_positive_weight_is_a_clear_error(cls):
    X, y = make_problem(30, 2, 4)
    w = np.where(y > 0, 1.0, 0.0)
    with pytest.raises(ValueError, match="class -1 has 0"):
        cls().fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match=r"class_weight\[1\] must be a finite number > 0"):
        cls(class_weight={1.0: 0.0}).fit(X, y)


def test_balanced_class_weights_count_samples_by_their_weight():
    """A weight stands for repeated rows: "balanced" with integer sample weights gives the
    per-sample weights of the rows repeated, and rows of weight 0 are not counted."""
    from svmtune.estimators import class_weight_vector

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 30)
    w = rng.integers(0, 4, 30).astype(float)
    w[y == 2] = np.maximum(w[y == 2], 1.0)
    classes = np.arange(3)
    cw = class_weight_vector(y, classes, "balanced", w)
    rep = np.repeat(np.arange(30), w.astype(int))
    np.testing.assert_allclose(cw[rep], class_weight_vector(y[rep], classes, "balanced"))
    keep = w > 0
    np.testing.assert_allclose(cw[keep], class_weight_vector(y[keep], classes, "balanced", w[keep]))
    # without sample weights: scikit-learn's SVC counts
    np.testing.assert_allclose(
        class_weight_vector(y, classes, "balanced"), len(y) / (3 * np.bincount(y)[y])
    )


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("C", [1.0, 10.0])
def test_ovr_svc_weight_acts_as_repeated_rows(n_classes, C):
    """An integer sample weight k fits the model of the row repeated k times, for the binary
    and the one-vs-rest path of OvRSVC (the final model of every libsvm multiclass task).
    libsvm stops at a KKT violation of 1e-3 (SVC's tol), which moves decision values by
    about that much; 1e-2 is ten times it, and passing e.g. sqrt(w) instead of w moves them
    by 0.2 or more here."""
    X, y = load_iris(return_X_y=True)
    keep = y > 0 if n_classes == 2 else y >= 0  # binary: the two overlapping species
    X, y = X[keep], y[keep]
    w = np.random.default_rng(0).integers(1, 4, size=y.size)
    repeated = OvRSVC(C=C, gamma=0.5).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    weighted = OvRSVC(C=C, gamma=0.5).fit(X, y, sample_weight=w)
    F_rep, F_w = repeated.decision_function(X), weighted.decision_function(X)
    np.testing.assert_allclose(F_w, F_rep, atol=1e-2, rtol=0)
    np.testing.assert_array_equal(weighted.predict(X), repeated.predict(X))
    # the weights are not spread over the tasks some other way (sqrt(w) is far off)
    other = OvRSVC(C=C, gamma=0.5).fit(X, y, sample_weight=np.sqrt(w)).decision_function(X)
    assert np.abs(other - F_rep).max() > 10 * np.abs(F_w - F_rep).max()


def test_l2svc_refuses_an_infinite_kernel_from_finite_rows():
    """Finite rows can give a polynomial kernel matrix that overflows: the fit checks the
    matrix it built (the RBF one is finite by construction), with the kernel-matrix message."""
    X = np.random.RandomState(0).randn(40, 3)
    y = (X[:, 0] > 0).astype(int)
    with np.errstate(over="ignore"), pytest.raises(ValueError, match="K contains NaN or infinity"):
        L2SVC(kernel="poly", degree=200, gamma=100.0).fit(X, y)
