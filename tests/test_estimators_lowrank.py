"""LowRankL2SVC against its definition: the exact L2-SVM (RBSVM eq. (6)-(7)) on the Nystroem
kernel of svmtune.lowrank, kept as landmark rows and ``W = R^{-1} v``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.optimize as opt
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.utils.estimator_checks import parametrize_with_checks

import svmtune
import svmtune.estimators as est_module
import svmtune.estimators_lowrank as lowrank_module
import svmtune.lowrank._blocked_solver as blocked
from svmtune.estimators import L2SVC, class_weight_vector, tanh_proba
from svmtune.estimators_lowrank import LANDMARK_ROWS, LowRankL2SVC, lowrank_fit_flops
from svmtune.kernels import squared_distances
from svmtune.lowrank import fit_l2_svm_lowrank, nystroem_factor, pivoted_cholesky_landmarks
from svmtune.lowrank._nystroem import landmark_subsample

from .conftest import make_problem

#: a rank below n that binds before the residual rule (the landmarks then do not depend on
#: the weights' totals, only on which rows have positive weight)
_CAPPED = {"rank": 15, "rank_tol": 1e-9}


# below full rank too: the landmarks start from the row nearest the weighted mean, not the
# first row, so the weight checks' shuffled repetitions give the same landmarks
@parametrize_with_checks([LowRankL2SVC(), LowRankL2SVC(rank=5, C=10.0, sigma=2.0)])
def test_sklearn_contract(estimator, check):
    check(estimator)


def _reference(X, y, C, sigma, *, rank, rank_tol, jitter=1e-8, w=None):
    """The low-rank model built from svmtune.lowrank's functions alone, as the selection
    builds it: landmarks, ``Z`` from ``nystroem_factor`` on the full distance matrix, the
    primal vector ``v = Z_S^T beta`` and ``b`` of ``fit_l2_svm_lowrank``."""
    idx, _ = pivoted_cholesky_landmarks(X, sigma, tol=rank_tol, max_rank=rank, sample_weight=w)
    D2_nm = squared_distances(X, X[idx])
    nf = nystroem_factor(D2_nm, D2_nm[idx], sigma, jitter=jitter, landmarks=idx)
    sol = fit_l2_svm_lowrank(nf.Z, y, C, sample_weight=w)
    S = np.flatnonzero(sol.support)
    return idx, nf, nf.Z[S].T @ sol.extra["beta"], sol.b


@pytest.mark.parametrize("weighted", [False, True])
def test_decision_on_training_rows_is_z_v_plus_b(weighted):
    X, y = make_problem(120, 4, 1)
    w = np.random.default_rng(0).uniform(0.2, 3.0, size=120) if weighted else None
    clf = LowRankL2SVC(C=5.0, sigma=1.3, rank=25, rank_tol=1e-3).fit(X, y, sample_weight=w)
    idx, nf, v, b = _reference(X, y, 5.0, 1.3, rank=25, rank_tol=1e-3, w=w)
    assert np.array_equal(clf.landmarks_, idx) and clf.rank_ == idx.size
    np.testing.assert_array_equal(clf.landmark_points_, X[idx])
    np.testing.assert_allclose(clf.decision_function(X), nf.Z @ v + b, rtol=1e-10, atol=1e-10)
    # the stored W is R^{-1} v and the intercept b
    np.testing.assert_allclose(nf.R @ clf.coef_[0], v, rtol=1e-10, atol=1e-10)
    assert clf.intercept_[0] == pytest.approx(b, rel=1e-10, abs=1e-12)
    if not weighted:
        assert clf.trace_residual_ == pytest.approx(nf.trace_residual, rel=1e-8, abs=1e-14)


def test_solution_is_the_primal_optimum_on_z():
    """Zero gradient of ``1/2 |v|^2 + C/2 sum_i w_i max(0, 1 - y_i (z_i^T v + b))^2`` and the
    same point as a general optimiser (BFGS on the same primal)."""
    X, y = make_problem(150, 3, 2, imbalance=0.35)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=150)
    C = 4.0
    clf = LowRankL2SVC(C=C, sigma=0.9, rank=20, rank_tol=1e-6).fit(X, y, sample_weight=w)
    _, nf, _, _ = _reference(X, y, C, 0.9, rank=20, rank_tol=1e-6, w=w)
    Z, cw = nf.Z, C * w
    v, b = nf.R @ clf.coef_[0], clf.intercept_[0]

    def primal(p):
        xi = np.maximum(1.0 - y * (Z @ p[:-1] + p[-1]), 0.0)
        g = -cw * y * xi
        return 0.5 * p[:-1] @ p[:-1] + 0.5 * cw @ xi**2, np.append(p[:-1] + Z.T @ g, g.sum())

    value, grad = primal(np.append(v, b))
    assert np.max(np.abs(grad)) < 1e-8 * max(1.0, value)
    res = opt.minimize(primal, np.zeros(Z.shape[1] + 1), jac=True, method="BFGS", tol=1e-13)
    assert res.fun == pytest.approx(value, rel=1e-10)
    np.testing.assert_allclose(res.x, np.append(v, b), atol=1e-6)


@pytest.mark.parametrize("case", ["binary", "weighted_balanced", "iris"])
def test_full_rank_is_the_exact_l2svc(case):
    """Every row a landmark and no jitter: the Nystroem kernel is the kernel, the model is
    L2SVC's."""
    if case == "iris":
        X, y = load_iris(return_X_y=True)
        X = X[::2]
        y = y[::2]
    else:
        X, y = make_problem(70, 3, 3, imbalance=0.3)
    w, cw = None, None
    if case == "weighted_balanced":
        w = np.random.default_rng(2).uniform(0.5, 2.0, size=y.size)
        cw = "balanced"
    params = {"C": 7.0, "sigma": 1.1, "class_weight": cw}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no raised jitter: the exact kernel matrix
        clf = LowRankL2SVC(rank=1000, rank_tol=1e-15, jitter=0.0, **params)
        clf.fit(X, y, sample_weight=w)
    assert clf.rank_ == len(np.unique(X, axis=0))
    exact = L2SVC(**params).fit(X, y, sample_weight=w)
    X_new = np.random.default_rng(3).normal(size=(40, X.shape[1])) + X.mean(axis=0)
    for Xe in (X, X_new):
        np.testing.assert_allclose(
            clf.decision_function(Xe), exact.decision_function(Xe), atol=1e-6
        )
    assert np.array_equal(clf.predict(X), exact.predict(X))
    assert clf.n_support_.tolist() == exact.n_support_.tolist()


def _sparse_data(n_classes=2, n=90, d=25):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.25)
    y = np.argmax(X[:, :n_classes] + 0.3 * rng.normal(size=(n, n_classes)), axis=1)
    return X, y


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_sparse_x_gives_the_dense_model_and_is_never_densified(fmt, n_classes, request):
    X, y = _sparse_data(n_classes)
    w = np.random.default_rng(5).uniform(0.5, 2.0, size=y.size)
    w[:3] = 0.0
    params = {"C": 3.0, "sigma": 2.5, "rank": 30, "rank_tol": 1e-3}
    dense = LowRankL2SVC(**params).fit(X, y, sample_weight=w)
    S = sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)
    request.getfixturevalue("no_densifying")
    sparse = LowRankL2SVC(**params).fit(S, y, sample_weight=w)
    assert np.array_equal(sparse.landmarks_, dense.landmarks_)
    assert sp.issparse(sparse.landmark_points_) and sparse.landmark_points_.format == "csr"
    assert sparse.landmark_points_.shape == (dense.rank_, X.shape[1])
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(sparse.intercept_, dense.intercept_, rtol=1e-8, atol=1e-8)
    want = dense.decision_function(X)
    np.testing.assert_allclose(sparse.decision_function(S), want, atol=1e-8)
    np.testing.assert_allclose(sparse.decision_function(X), want, atol=1e-8)  # dense rows
    np.testing.assert_allclose(dense.decision_function(S), want, atol=1e-8)  # sparse rows
    assert np.array_equal(sparse.predict(S), dense.predict(X))


def test_the_fitted_model_keeps_no_training_rows_but_the_landmarks():
    X, y = make_problem(200, 3, 17)
    clf = LowRankL2SVC(C=2.0, sigma=1.0, rank=12, rank_tol=1e-9).fit(X, y)
    fitted = {k: v for k, v in vars(clf).items() if k.endswith("_")}
    assert set(fitted) == {
        "n_features_in_",
        "classes_",
        "landmarks_",
        "landmark_points_",
        "coef_",
        "intercept_",
        "n_support_",
        "n_iter_",
        "rank_",
        "trace_residual_",
        "jitter_",
    }
    assert all(200 not in np.shape(v) for v in fitted.values())
    assert clf.landmark_points_.shape == (12, 3) and clf.coef_.shape == (1, 12)


def test_decision_values_in_blocks_equal_one_block(monkeypatch):
    X, y = make_problem(90, 3, 6)
    clf = LowRankL2SVC(C=2.0, sigma=1.0, rank=12, rank_tol=1e-9).fit(X, y)
    whole = clf.decision_function(X)
    monkeypatch.setattr(est_module, "DECISION_BLOCK", 25)  # two rows of 12 a block
    np.testing.assert_allclose(clf.decision_function(X), whole, rtol=1e-12, atol=1e-13)
    refit = LowRankL2SVC(C=2.0, sigma=1.0, rank=12, rank_tol=1e-9).fit(X, y)  # Z by blocks
    np.testing.assert_allclose(refit.coef_, clf.coef_, rtol=1e-10, atol=1e-12)


def test_multiclass_is_one_vs_rest_of_binary_models():
    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    params = {"C": 2.0, "sigma": 0.8, **_CAPPED}
    clf = LowRankL2SVC(**params).fit(X, labels)
    F = clf.decision_function(X)
    assert F.shape == (150, 3) and clf.coef_.shape == (3, clf.rank_)
    assert clf.intercept_.shape == (3,) and clf.n_support_.shape == (3,)
    for k, name in enumerate(clf.classes_):
        binary = LowRankL2SVC(**params).fit(X, labels == name)  # classes_[1] = True
        assert np.array_equal(binary.landmarks_, clf.landmarks_)
        np.testing.assert_allclose(F[:, k], binary.decision_function(X), atol=1e-10)
    assert np.array_equal(clf.predict(X), clf.classes_[np.argmax(F, axis=1)])
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(P, tanh_proba(F), rtol=1e-14)


def test_binary_probabilities_are_the_tanh_mapping():
    X, y = make_problem(60, 3, 7)
    clf = LowRankL2SVC(C=3.0, sigma=1.2, rank=10, rank_tol=1e-9).fit(X, y)
    f = clf.decision_function(X)
    P = clf.predict_proba(X)
    assert P.shape == (60, 2)
    np.testing.assert_allclose(P[:, 1], 0.5 * (1.0 + np.tanh(f)), rtol=1e-14)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-14)
    assert np.array_equal(clf.predict(X), clf.classes_[(f > 0).astype(int)])


@pytest.mark.parametrize("params", [_CAPPED, {"rank": 500, "rank_tol": 5e-2}])
def test_rows_of_weight_zero_take_no_part(params):
    X, y = make_problem(100, 3, 8)
    w = np.random.default_rng(9).uniform(0.5, 2.0, size=100)
    w[[0, 5, 17, 40, 41]] = 0.0  # row 0: the unweighted rule's first landmark
    keep = w > 0
    a = LowRankL2SVC(C=5.0, sigma=1.0, **params).fit(X, y, sample_weight=w)
    b = LowRankL2SVC(C=5.0, sigma=1.0, **params).fit(X[keep], y[keep], sample_weight=w[keep])
    assert np.array_equal(a.landmarks_, np.flatnonzero(keep)[b.landmarks_])
    X_new = np.random.default_rng(10).normal(size=(30, 3))
    np.testing.assert_allclose(a.decision_function(X_new), b.decision_function(X_new), atol=1e-8)
    assert a.trace_residual_ == pytest.approx(b.trace_residual_, rel=1e-10)


@pytest.mark.parametrize("params", [_CAPPED, {"rank": 500, "rank_tol": 5e-2}])
def test_integer_weights_are_repeated_rows(params):
    X, y = make_problem(80, 3, 11)
    w = np.random.default_rng(12).integers(0, 4, size=80)
    rep = np.repeat(np.arange(80), w)  # the rows repeated in place
    a = LowRankL2SVC(C=2.0, sigma=0.8, **params).fit(X, y, sample_weight=w)
    b = LowRankL2SVC(C=2.0, sigma=0.8, **params).fit(X[rep], y[rep])
    assert np.array_equal(a.landmarks_, rep[b.landmarks_])
    X_new = np.random.default_rng(13).normal(size=(30, 3))
    for Xe in (X, X_new):
        np.testing.assert_allclose(a.decision_function(Xe), b.decision_function(Xe), atol=1e-8)
    assert a.trace_residual_ == pytest.approx(b.trace_residual_, rel=1e-8, abs=1e-14)


def test_class_weight_multiplies_c_per_class():
    """A class weight is C times that weight for the class's rows: the model of the same
    per-sample weights (at a rank that binds, the landmarks are the same either way)."""
    X, y = make_problem(90, 3, 14, imbalance=0.25)
    params = {"C": 3.0, "sigma": 1.0, **_CAPPED}
    a = LowRankL2SVC(class_weight={1.0: 4.0}, **params).fit(X, y)
    b = LowRankL2SVC(**params).fit(X, y, sample_weight=np.where(y == 1, 4.0, 1.0))
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-10)
    c = LowRankL2SVC(class_weight="balanced", **params).fit(X, y)
    n_pos = (y == 1).sum()
    want = np.where(y == 1, 90 / (2 * n_pos), 90 / (2 * (90 - n_pos)))
    d = LowRankL2SVC(**params).fit(X, y, sample_weight=want)
    np.testing.assert_allclose(c.decision_function(X), d.decision_function(X), atol=1e-10)
    assert not np.allclose(
        a.decision_function(X), LowRankL2SVC(**params).fit(X, y).decision_function(X)
    )


def test_clone_and_params():
    clf = LowRankL2SVC(
        C=2.0, sigma=0.5, rank=40, rank_tol=0.05, jitter=1e-6, class_weight="balanced"
    )
    params = clf.get_params()
    assert params == {
        "C": 2.0,
        "sigma": 0.5,
        "rank": 40,
        "rank_tol": 0.05,
        "jitter": 1e-6,
        "class_weight": "balanced",
        "landmark_rows": LANDMARK_ROWS,
        "random_state": None,
    }
    twin = clone(clf)
    assert twin is not clf and twin.get_params() == params
    X, y = make_problem(50, 3, 15)
    clf.fit(X, y)
    assert not hasattr(clone(clf), "coef_")
    assert svmtune.LowRankL2SVC is LowRankL2SVC


@pytest.mark.parametrize(
    "params, message",
    [
        ({"C": 0.0}, "C must be a positive finite number"),
        ({"sigma": -1.0}, "sigma .* must be a positive finite number"),
        ({"rank": 0}, "rank .* integer >= 1"),
        ({"rank": 2.5}, "rank .* integer >= 1"),
        ({"rank_tol": 1.0}, r"rank_tol .* \(0, 1\)"),
        ({"jitter": -1e-3}, "jitter must be a finite number >= 0"),
    ],
)
def test_parameters_are_checked_with_their_names(params, message):
    X, y = make_problem(30, 2, 16)
    with pytest.raises(ValueError, match=message):
        LowRankL2SVC(**params).fit(X, y)


def test_flop_model_bounds_the_newton_gram_rows(monkeypatch):
    """The Newton term of lowrank_fit_flops: the active set's Gram matrix is built from at
    most n rows an iteration (counted in the blocked solver), and the model grows as stated."""
    rows = []
    block = blocked._BlockedGram._block

    def spy(self, r):
        rows.append(r.size)
        return block(self, r)

    monkeypatch.setattr(blocked._BlockedGram, "_block", spy)
    X, y = load_iris(return_X_y=True)
    clf = LowRankL2SVC(C=100.0, sigma=0.7, rank=30, rank_tol=1e-9).fit(X, y)
    assert len(rows) > clf.n_iter_.sum()  # every task's first step and final support set
    # the final Gram matrix of the support set is one more pass of at most n rows a task
    assert sum(rows) <= 150 * (clf.n_iter_.sum() + 3)
    n, d, m = 10_000, 20, 300
    base = lowrank_fit_flops(n, d, m, 1, n_newton=1, gram_passes=1)
    gram = n * (2.0 * m**2 + (m + 2) ** 2)  # features of a row, then its rank-1 update
    assert lowrank_fit_flops(n, d, m, 1, n_newton=1, gram_passes=2) - base == pytest.approx(gram)
    per_task = lowrank_fit_flops(n, d, m, 2, n_newton=1, gram_passes=1) - base
    shared = base - per_task  # landmarks, kernel rows once, R's factors, the trace residual
    landmarks = 4 * n * m * d + n * m**2
    assert shared == pytest.approx(landmarks + 2 * n * m * d + 4 * m**3 / 3 + 2 * n * m**2)
    # kernel rows over the cache's budget: every pass computes them again, without R
    uncached = lowrank_fit_flops(n, d, m, 1, n_newton=1, gram_passes=1, cached=False)
    assert uncached - base == pytest.approx(3 * n * 2 * m * d)
    assert lowrank_fit_flops(10**7, d, 500) > lowrank_fit_flops(10**7, d, 500, cached=True)
    # from 65,536 rows at m = 500 the warm start adds the fit on every 16th row and a pass
    big, sub = 16 * 4096, 4096
    warm = lowrank_fit_flops(big, d, 500, n_newton=1, gram_passes=1, cached=True)
    monkeypatch.setattr("svmtune.estimators_lowrank.warm_start_stride", lambda n, m: None)
    cold = lowrank_fit_flops(big, d, 500, n_newton=1, gram_passes=1, cached=True)
    sub_task = (2 * 500**2 + 502**2) * 2 * sub + 501**3 / 3 + 4 * sub * 500 + 500**3 / 3
    extra = sub_task + 2 * sub * 500 * d + 2 * big * 500
    assert warm - cold == pytest.approx(extra, rel=1e-12)
    with pytest.raises(ValueError, match="m must be a positive integer"):
        lowrank_fit_flops(n, d, 0)
    with pytest.raises(ValueError, match="n_newton must be a positive number"):
        lowrank_fit_flops(n, d, m, n_newton=0)


def test_skops_round_trip(tmp_path):
    sio = pytest.importorskip("skops.io")
    X, y = _sparse_data(3)
    for Xf in (X, sp.csr_matrix(X)):
        clf = LowRankL2SVC(C=2.0, sigma=2.0, rank=20, rank_tol=1e-3).fit(Xf, y)
        path = tmp_path / "m.skops"
        sio.dump(clf, path)
        untrusted = sio.get_untrusted_types(file=path)
        # the types svmtune.persist must trust for this model, exactly
        want = {"svmtune.estimators_lowrank.LowRankL2SVC"}
        if sp.issparse(Xf):
            want.add("scipy.sparse._csr.csr_matrix")
        assert set(untrusted) == want
        got = sio.load(path, trusted=untrusted)
        assert type(got) is LowRankL2SVC
        np.testing.assert_array_equal(got.decision_function(Xf), clf.decision_function(Xf))
        np.testing.assert_array_equal(got.predict_proba(Xf), clf.predict_proba(Xf))
        assert sp.issparse(got.landmark_points_) == sp.issparse(Xf)


# ----------------------------------------------------------- the landmark rule's subsample
def _spy_landmark_rule(monkeypatch) -> list[tuple[tuple, np.ndarray | None]]:
    """Record the rows (shape) and weights each call of the fit's landmark rule is given."""
    calls: list[tuple[tuple, np.ndarray | None]] = []
    rule = lowrank_module.pivoted_cholesky_landmarks

    def spy(X, sigma, **kw):
        w = kw.get("sample_weight")
        calls.append((X.shape, None if w is None else np.array(w)))
        return rule(X, sigma, **kw)

    monkeypatch.setattr(lowrank_module, "pivoted_cholesky_landmarks", spy)
    return calls


def _weighted_problem(n: int, seed: int):
    X, y = make_problem(n, 4, seed, imbalance=0.3)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, n)
    w[::7] = 0.0
    return X, y, w


@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_at_most_landmark_rows_rows_is_the_rule_on_all_rows(class_weight, monkeypatch):
    """n <= landmark_rows: the landmarks of pivoted Cholesky on all rows (the rule before
    the subsample existed) and the same model, bit for bit, whatever the random_state."""
    X, y, w = _weighted_problem(400, 31)
    params = {"C": 2.0, "sigma": 1.2, "rank": 25, "rank_tol": 1e-3, "class_weight": class_weight}
    calls = _spy_landmark_rule(monkeypatch)
    base = LowRankL2SVC(landmark_rows=None, **params).fit(X, y, sample_weight=w)
    classes, y_enc = np.unique(y, return_inverse=True)
    weights = w * class_weight_vector(y_enc, classes, class_weight, w)
    idx, _ = pivoted_cholesky_landmarks(X, 1.2, tol=1e-3, max_rank=25, sample_weight=weights)
    assert np.array_equal(base.landmarks_, idx)
    for rows, seed in ((400, 0), (400, 5), (10**6, np.random.RandomState(2))):
        got = LowRankL2SVC(landmark_rows=rows, random_state=seed, **params)
        got.fit(X, y, sample_weight=w)
        assert np.array_equal(got.landmarks_, base.landmarks_)
        for attr in ("coef_", "intercept_", "trace_residual_", "n_iter_"):
            assert np.array_equal(getattr(got, attr), getattr(base, attr)), attr
    assert [shape for shape, _ in calls] == [X.shape] * 4  # all rows each time
    np.testing.assert_allclose(calls[0][1], weights, rtol=1e-12)


def test_beyond_landmark_rows_the_landmarks_are_rows_of_a_seeded_subsample(monkeypatch):
    """n > landmark_rows: the rule runs on ``landmark_rows`` rows drawn among those of
    positive weight (their weights with them), its landmarks are rows of that subsample,
    the draw is the random_state's, and trace_residual_ is measured on all rows."""
    n, s = 1500, 300
    X, y, w = _weighted_problem(n, 32)
    params = {"C": 2.0, "sigma": 1.2, "rank": 30, "rank_tol": 1e-6}
    calls = _spy_landmark_rule(monkeypatch)
    a = LowRankL2SVC(landmark_rows=s, random_state=7, **params).fit(X, y, sample_weight=w)
    sub = landmark_subsample(n, s, w, 7)
    assert sub.size == s and np.all(np.diff(sub) > 0) and np.all(w[sub] > 0)
    assert calls[0][0] == (s, X.shape[1])
    np.testing.assert_array_equal(calls[0][1], w[sub])
    idx, _ = pivoted_cholesky_landmarks(X[sub], 1.2, tol=1e-6, max_rank=30, sample_weight=w[sub])
    assert np.array_equal(a.landmarks_, sub[idx])
    np.testing.assert_array_equal(a.landmark_points_, X[a.landmarks_])
    # the same seed (an int or a RandomState of it) draws the same rows; another seed others
    b = LowRankL2SVC(landmark_rows=s, random_state=np.random.RandomState(7), **params)
    b.fit(X, y, sample_weight=w)
    assert np.array_equal(b.landmarks_, a.landmarks_) and np.array_equal(b.coef_, a.coef_)
    c = LowRankL2SVC(landmark_rows=s, random_state=8, **params).fit(X, y, sample_weight=w)
    assert not np.array_equal(np.sort(c.landmarks_), np.sort(a.landmarks_))
    # the residual of these landmarks on all rows of positive weight, weighted
    D2 = squared_distances(X, X[a.landmarks_])
    nf = nystroem_factor(D2, D2[a.landmarks_], 1.2)
    assert nf.Z.shape == (n, a.rank_)
    resid = 1.0 - np.einsum("ij,ij->i", nf.Z, nf.Z)
    assert a.trace_residual_ == pytest.approx(w @ resid / w.sum(), rel=1e-6, abs=1e-9)


def test_the_landmark_rule_allocates_landmark_rows_by_m_not_n_by_m():
    """tracemalloc's peak of the landmark step: ``8 n m`` bytes (its factor) on all rows, at
    most a quarter of that on a subsample of a tenth of the rows."""
    import tracemalloc

    n, m = 20000, 100
    X, y = make_problem(n, 5, 33)
    peaks = {}
    for rows in (None, n // 10):
        clf = LowRankL2SVC(sigma=1.0, rank=m, rank_tol=1e-12, landmark_rows=rows, random_state=0)
        tracemalloc.start()
        try:
            idx, _ = clf._landmarks(X, None)
            peaks[rows] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert idx.size == m
    assert peaks[None] >= 8 * n * m, peaks
    assert peaks[n // 10] < 0.25 * 8 * n * m, peaks


@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_subsample_of_sparse_rows_gives_the_dense_model(n_classes, request):
    """CSR rows, weights (some zero) and class weights beyond landmark_rows: the dense
    model's landmarks and coefficients, X never densified."""
    X, y = _sparse_data(n_classes, n=300)
    w = np.random.default_rng(6).uniform(0.5, 2.0, size=y.size)
    w[:40] = 0.0
    params = {"C": 3.0, "sigma": 2.5, "rank": 30, "rank_tol": 1e-3, "class_weight": "balanced"}
    params |= {"landmark_rows": 150, "random_state": 3}
    dense = LowRankL2SVC(**params).fit(X, y, sample_weight=w)
    request.getfixturevalue("no_densifying")
    sparse = LowRankL2SVC(**params).fit(sp.csr_matrix(X), y, sample_weight=w)
    assert np.array_equal(sparse.landmarks_, dense.landmarks_)
    assert np.all(w[dense.landmarks_] > 0) and np.all(dense.landmarks_ >= 40)
    assert set(dense.landmarks_) <= set(landmark_subsample(y.size, 150, w, 3))
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(sparse.intercept_, dense.intercept_, rtol=1e-8, atol=1e-8)


def test_a_subsample_predicts_about_as_well_as_the_rule_on_all_rows():
    """On 4,000 training rows, landmarks from 400 of them: held-out accuracy within two
    points of the all-rows rule's (0.8375 there; half the rows are of each class), and the
    trace residual on all rows no more than a quarter above its (measured: 0.15 to 0.19
    against 0.29, greedy pivots on all rows chase outliers), for five draws."""
    X, y = make_problem(6000, 5, 21)
    params = {"C": 3.0, "sigma": 2.0, "rank": 40}
    ref = LowRankL2SVC(landmark_rows=None, **params).fit(X[:4000], y[:4000])
    ref_acc = (ref.predict(X[4000:]) == y[4000:]).mean()
    assert ref_acc > 0.8
    for seed in range(5):
        got = LowRankL2SVC(landmark_rows=400, random_state=seed, **params)
        got.fit(X[:4000], y[:4000])
        assert (got.predict(X[4000:]) == y[4000:]).mean() >= ref_acc - 0.02, seed
        assert got.trace_residual_ <= 1.25 * ref.trace_residual_, seed


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "all"])
def test_bad_landmark_rows_or_random_state_is_refused(bad):
    X, y = make_problem(40, 2, 34)
    with pytest.raises(ValueError, match="landmark_rows"):
        LowRankL2SVC(landmark_rows=bad).fit(X, y)
    with pytest.raises(ValueError, match="RandomState"):
        LowRankL2SVC(random_state="seed").fit(X, y)
    with pytest.raises(ValueError, match="landmark_rows"):
        lowrank_fit_flops(100, 2.0, 5, landmark_rows=bad)


def test_fit_flops_count_the_landmarks_on_landmark_rows_rows():
    n, d, m = 10**6, 20.0, 100
    full = lowrank_fit_flops(n, d, m, landmark_rows=None)
    part = lowrank_fit_flops(n, d, m, landmark_rows=10**4)
    assert full - part == pytest.approx((n - 10**4) * (4 * m * d + m**2))
    assert lowrank_fit_flops(n, d, m) == lowrank_fit_flops(n, d, m, landmark_rows=LANDMARK_ROWS)


def test_the_packages_low_rank_models_get_the_runs_random_state(monkeypatch):
    """The tuner's final low-rank model (svmtune._final.final_estimators) and auto's
    final-model rule (svmtune.methods._auto_final._blocked_rule) pass their seed on."""
    from types import SimpleNamespace

    import svmtune.methods._auto_final as auto_final
    from svmtune._final import final_estimators

    info = {"rank": 7, "rank_tol": 0.05}
    sel = SimpleNamespace(final_model="lowrank", params={"C": 2.0, "sigma": 1.0}, info=info)
    kw = {"multiclass": "ovr", "probability": "tanh", "n_classes": 2, "folds": 3}
    make = final_estimators(sel, "auto", np.zeros((4, 2)), seed=123, **kw)[2]
    model = make(False)
    assert (model.random_state, model.rank, model.rank_tol) == (123, 7, 0.05)
    seen: list[dict] = []
    fit = LowRankL2SVC.fit

    def spy(self, *args, **kwargs):
        seen.append(self.get_params())
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(LowRankL2SVC, "fit", spy)
    X, y = make_problem(120, 2, 35)
    params = {"C": 1.0, "sigma": 1.0}
    rows, held = (X[:80], y[:80], None), (X[80:], y[80:], None)
    out = auto_final._blocked_rule(params, 10, (10, 1e-2), *rows, *held, 9)
    assert out["final_model"] == "lowrank" and seen[0]["random_state"] == 9
