"""Sparse X (scipy CSR/CSC) through SVMTuner: kept sparse, same selection as dense X."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from sklearn.datasets import dump_svmlight_file
from sklearn.svm import SVC

from svmtune import SVMTuner, kernels
from svmtune.cli import main
from svmtune.kernels import sparse_row_norms, sparse_squared_distances, squared_distances
from svmtune.lowrank import pivoted_cholesky_landmarks
from svmtune.methods import DefaultSVC
from svmtune.methods.base import available_methods, get_selector
from tests.conftest import assert_params_close

SPARSE_METHODS = [
    "auto",
    "cv_cv",
    "default",
    "grid",
    "halving",
    "optuna",
    "random",
    "rbsvm_lowrank",
    "tpe",
]
#: the searches on a Nystroem kernel (auto on sparse X: its low-rank path); dense X takes the
#: same path with exact_rows=0
_LOWRANK = {"rbsvm_lowrank": {"max_eval": 12}, "auto": {"exact_rows": 0}}
_LIGHT = {
    "grid": {"log2_sigma": (0, 4, 1), "log2_C": (-1, 3, 1), "n_splits": 4},
    "cv_cv": {"log2_sigma": (0, 4, 2), "log2_C": (-1, 3, 2), "n_splits": 3},
    "random": {"n_iter": 5, "n_splits": 4},
    "halving": {"log2_sigma": (0, 3, 1), "log2_C": (0, 2, 1)},
    "tpe": {"max_evals": 4, "n_startup": 2, "n_splits": 3},
    "optuna": {"n_trials": 4, "n_startup": 2, "n_splits": 3},
}


def _data(n_classes: int = 2, n: int = 80, d: int = 30):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.2)  # 80 % zeros
    if n_classes == 2:
        y = (X[:, :5].sum(axis=1) + 0.3 * rng.normal(size=n) > 0).astype(int)
    else:
        y = np.argmax(X[:, :n_classes] + 0.2 * rng.normal(size=(n, n_classes)), axis=1)
    return X, y


def test_the_sparse_methods_are_those_that_say_so():
    assert [m for m in available_methods() if get_selector(m).accepts_sparse] == SPARSE_METHODS


@pytest.mark.parametrize("method", [m for m in SPARSE_METHODS if m in _LIGHT])
@pytest.mark.parametrize("case", ["binary", "three_ovr", "three_ovo", "weighted", "csc"])
def test_sparse_and_dense_select_the_same(method, case, request):
    X, y = _data(3 if case.startswith("three") else 2)
    kw = {"multiclass": "ovo"} if case == "three_ovo" else {}
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y)) if case == "weighted" else None
    S = sp.csc_matrix(X) if case == "csc" else sp.csr_matrix(X)
    dense = SVMTuner(method=method, method_params=_LIGHT[method], random_state=0, **kw)
    dense.fit(X, y, sample_weight=w)
    request.getfixturevalue("no_densifying")
    sparse = SVMTuner(method=method, method_params=_LIGHT[method], random_state=0, **kw)
    sparse.fit(S, y, sample_weight=w)
    # the kernel is the same: an RBF kernel does not see the centring scaling leaves out
    assert_params_close(sparse.best_params_, dense.best_params_, rel=1e-12)
    assert sparse.criterion_ == pytest.approx(dense.criterion_, abs=1e-8)
    np.testing.assert_allclose(
        sparse.cv_results_["mean_test_score"], dense.cv_results_["mean_test_score"], atol=1e-8
    )
    np.testing.assert_array_equal(sparse.predict(S), dense.predict(X))
    np.testing.assert_allclose(sparse.decision_function(S), dense.decision_function(X), atol=1e-8)
    assert sparse.preprocessor_.with_mean is False and sp.issparse(
        sparse.preprocessor_.transform(S)
    )


def test_default_sparse_is_svc_scale_on_the_uncentred_matrix(no_densifying):
    X, y = _data()
    S = sp.csr_matrix(X)
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    for weights in (None, w):
        got = DefaultSVC().select(S, y, weights).params["sigma"]
        want = DefaultSVC().select(X, y, weights).params["sigma"]  # X as given: not centred
        assert got == pytest.approx(want, rel=1e-10)
    t = SVMTuner(method="default").fit(S, y)
    scaled = t.preprocessor_.transform(S)
    # scikit-learn's SVC(gamma="scale") on the same sparse matrix
    gamma = 1.0 / (S.shape[1] * (scaled.multiply(scaled).mean() - scaled.mean() ** 2))
    assert t.best_params_["gamma"] == pytest.approx(gamma, rel=1e-10)


@pytest.mark.parametrize("method", sorted(set(available_methods()) - set(SPARSE_METHODS)))
def test_dense_only_methods_refuse_sparse_x_clearly(method):
    X, y = _data()
    with pytest.raises(ValueError, match=f"method '{method}' .* takes no sparse X; .*grid"):
        SVMTuner(method=method).fit(sp.csr_matrix(X), y)


def test_sparse_refusals_of_options():
    X, y = _data()
    S = sp.csr_matrix(X)
    with pytest.raises(TypeError, match="dense data is required"):  # tables only
        SVMTuner(method="grid", preprocess="auto").fit(S, y)
    with pytest.raises(ValueError, match="L2-SVM .* takes no sparse X"):
        SVMTuner(method="grid", final_model="l2").fit(S, y)
    with pytest.raises(ValueError, match="L2-SVM .* takes no sparse X"):
        SVMTuner(method="grid", method_params={"final_model": "l2"}).fit(S, y)


def test_sparse_tag_follows_the_method():
    assert SVMTuner(method="grid").__sklearn_tags__().input_tags.sparse
    assert SVMTuner().__sklearn_tags__().input_tags.sparse  # auto: the low-rank path
    assert SVMTuner(method="rbsvm_lowrank").__sklearn_tags__().input_tags.sparse
    assert not SVMTuner(method="rbsvm").__sklearn_tags__().input_tags.sparse
    assert not SVMTuner(final_model="l2").__sklearn_tags__().input_tags.sparse
    assert not SVMTuner(method="grid", final_model="l2").__sklearn_tags__().input_tags.sparse


# ------------------------------------------------------------------ Nystroem searches (low rank)
@pytest.mark.parametrize("method", sorted(_LOWRANK))
@pytest.mark.parametrize("case", ["binary", "three_ovr", "weighted", "csc", "groups"])
def test_lowrank_sparse_and_dense_select_the_same(method, case, request):
    """The same kernel, the same pivoted-Cholesky landmarks: the same selection, criterion and
    estimate to round-off.  rbsvm_lowrank: standardised (an RBF kernel does not see the
    centring sparse scaling leaves out); auto: unscaled, since its SVC() candidate's
    gamma='scale' is a statistic of the matrix as it is (centred or not)."""
    X, y = _data(3 if case.startswith("three") else 2, n=120)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y)) if case == "weighted" else None
    S = sp.csc_matrix(X) if case == "csc" else sp.csr_matrix(X)
    kw = {"groups": np.arange(len(y)) // 4} if case == "groups" else {}
    prep = "none" if method == "auto" else "standard"
    dense = SVMTuner(method=method, method_params=_LOWRANK[method], preprocess=prep, random_state=0)
    dense.fit(X, y, sample_weight=w, **kw)
    request.getfixturevalue("no_densifying")
    params = {"max_eval": 12} if method == "rbsvm_lowrank" else None
    sparse = SVMTuner(method=method, method_params=params, preprocess=prep, random_state=0)
    sparse.fit(S, y, sample_weight=w, **kw)
    assert_params_close(sparse.best_params_, dense.best_params_, rel=1e-8)
    assert sparse.criterion_ == pytest.approx(dense.criterion_, abs=1e-8)
    assert sparse.estimate_ == pytest.approx(dense.estimate_, abs=1e-8)
    assert sparse.n_svm_fits_ == dense.n_svm_fits_
    if method == "auto":
        assert sparse.selection_.info["path"] == dense.selection_.info["path"] == "lowrank"
        assert sparse.final_model_ == dense.final_model_
        for a, b in zip(sparse.history_, dense.history_, strict=True):
            assert a["origin"] == b["origin"]
            assert a["sigma"] == pytest.approx(b["sigma"], rel=1e-8)
            assert a["estimate_l2"] == pytest.approx(b["estimate_l2"], abs=1e-8)
    else:
        assert sparse.selection_.info["rank"] == dense.selection_.info["rank"]
    np.testing.assert_array_equal(sparse.predict(S), dense.predict(X))
    # libsvm stops at a KKT tolerance of 1e-3: at C = 256 its fits on the (centred) dense
    # and the (uncentred) sparse rows agree to about that, not to round-off
    np.testing.assert_allclose(sparse.decision_function(S), dense.decision_function(X), atol=1e-2)
    assert sp.issparse(sparse.preprocessor_.transform(S)) or prep == "none"


def test_auto_on_sparse_x_takes_the_low_rank_path_at_any_size(no_densifying):
    X, y = _data(n=60)
    S = sp.csr_matrix(X)
    t = SVMTuner(random_state=0).fit(S, y)  # 60 rows: the exact path for dense X
    assert t.selection_.info["path"] == "lowrank" and t.final_model_ == "l1"
    assert SVMTuner(random_state=0).fit(X, y).selection_.info["path"] == "exact"
    # SVC()'s candidate: gamma='scale' of the (uncentred) sparse matrix, as scikit-learn's SVC
    scaled = t.preprocessor_.transform(S)
    gamma = 1.0 / (S.shape[1] * (scaled.multiply(scaled).mean() - scaled.mean() ** 2))
    svc = [c for c in t.history_ if c["origin"] == "default"][0]
    assert svc["C"] == 1.0
    assert 1.0 / (2.0 * svc["sigma"] ** 2) == pytest.approx(gamma, rel=1e-10)
    assert gamma == pytest.approx(SVC().fit(scaled, y)._gamma, rel=1e-12)
    # the median-width candidate: the median squared distance of the (sub)sample's pairs
    median = [c for c in t.history_ if c["origin"] == "median"][0]
    D2 = squared_distances(X * (1.0 / t.preprocessor_.scale_))
    assert median["sigma"] ** 2 == pytest.approx(np.median(D2[np.triu_indices(60, 1)]), rel=1e-10)


def test_auto_on_sparse_x_skips_the_dense_starts(no_densifying):
    X, y = _data(n=60)
    sel = get_selector("auto", {"starts": ("median", "ld", "ss")}).select(
        sp.csr_matrix(X), y, random_state=0
    )
    assert [c["origin"] for c in sel.history][:2] == ["default", "median"]
    assert not {"ld", "ss"} & {c["origin"] for c in sel.history}


def test_lowrank_sparse_refuses_the_l2_final_model():
    X, y = _data()
    S = sp.csr_matrix(X)
    with pytest.raises(ValueError, match="L2-SVM .* takes no sparse X"):
        SVMTuner(final_model="l2").fit(S, y)
    with pytest.raises(ValueError, match="L2-SVM .* takes no sparse X"):
        SVMTuner(method="rbsvm_lowrank", method_params={"final_model": "l2"}).fit(S, y)


def test_sparse_squared_distances_match_the_dense_ones(no_densifying):
    X, _ = _data(n=50)
    S = sp.csr_matrix(X)
    np.testing.assert_allclose(squared_distances(S), squared_distances(X), atol=1e-10)
    np.testing.assert_allclose(
        sparse_squared_distances(S, S[7:12]), squared_distances(X, X[7:12]), atol=1e-10
    )
    D = sparse_squared_distances(S)
    assert np.all(np.diag(D) == 0.0) and np.array_equal(D, D.T) and np.all(D >= 0)
    np.testing.assert_allclose(sparse_row_norms(S), (X**2).sum(axis=1), rtol=1e-12)


def test_sparse_products_by_blocks_of_rows_are_the_same(monkeypatch, no_densifying):
    X, _ = _data(n=50)
    S = sp.csr_matrix(X)
    whole = sparse_squared_distances(S, S[:9])
    monkeypatch.setattr(kernels, "SPARSE_PRODUCT_BLOCK", 20)  # blocks of 2 rows
    np.testing.assert_array_equal(sparse_squared_distances(S, S[:9]), whole)


def test_pivoted_cholesky_landmarks_are_the_same_on_sparse_x(no_densifying):
    X, _ = _data(n=150)
    for sigma, max_rank in ((3.0, 500), (1.5, 40)):
        got = pivoted_cholesky_landmarks(sp.csr_matrix(X), sigma, max_rank=max_rank)
        want = pivoted_cholesky_landmarks(X, sigma, max_rank=max_rank)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == pytest.approx(want[1], abs=1e-10)


@pytest.mark.parametrize("method", ["auto", "rbsvm_lowrank"])
def test_svmlight_file_stays_sparse_for_the_lowrank_selectors(method, tmp_path, monkeypatch):
    X, y = _data(n=60, d=40)
    X[:, 0] = 0.0  # 1-based file: no index 0
    train = tmp_path / "train.svm"
    dump_svmlight_file(X[:, 1:], y, str(train), zero_based=False)
    args = ["select", str(train), "--method", method, "--random-state", "3", "--json"]
    for cls in (sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array):
        monkeypatch.setattr(cls, "toarray", _refuse)
        monkeypatch.setattr(cls, "todense", _refuse)
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    monkeypatch.undo()
    assert doc["data"]["sparse"] is True and doc["data"]["nnz"] == int((X != 0).sum())
    ref = SVMTuner(method=method, random_state=3).fit(sp.csr_matrix(X[:, 1:]), y)
    assert doc["best_params"] == pytest.approx(ref.best_params_)
    assert doc["criterion"] == pytest.approx(ref.criterion_, abs=1e-8)


def _refuse(self, *a, **kw):
    raise AssertionError("a sparse matrix was densified")


@pytest.mark.parametrize("preprocess", ["standard", "none"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_sparse_rows_after_a_dense_fit_predict_as_the_dense_rows(preprocess, n_classes):
    # the centring scaler of a dense fit cannot take a sparse matrix, and the dense-fitted
    # SVM takes dense rows: the rows are made dense, so every output is the dense one
    X, y = _data(n_classes)
    tuner = SVMTuner(method="default", preprocess=preprocess).fit(X, y)
    for Xs in (sp.csr_matrix(X), sp.csc_matrix(X)):
        np.testing.assert_array_equal(tuner.predict(Xs), tuner.predict(X))
        np.testing.assert_allclose(tuner.decision_function(Xs), tuner.decision_function(X))
        np.testing.assert_allclose(tuner.predict_proba(Xs), tuner.predict_proba(X))


def test_sparse_rows_after_a_dense_fit_are_made_dense_within_a_bound(monkeypatch):
    from svmtune import preprocess

    X, y = _data()
    tuner = SVMTuner(method="default").fit(X, y)
    monkeypatch.setattr(preprocess, "MAX_DENSIFY_BYTES", 8 * X.shape[1] * 10)
    np.testing.assert_array_equal(tuner.predict(sp.csr_matrix(X[:10])), tuner.predict(X[:10]))
    with pytest.raises(
        ValueError, match=r"fitted on dense X.*predict fewer rows at a time \(at most 10\)"
    ):
        tuner.predict(sp.csr_matrix(X[:11]))


def test_a_sparse_fit_keeps_sparse_rows_to_predict_sparse(no_densifying):
    X, y = _data()
    tuner = SVMTuner(method="default").fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(tuner.predict(sp.csr_matrix(X)), tuner.predict(X))
    # a model saved without the record of its sparse fit: its uncentred scaler tells
    del tuner._fitted_sparse
    np.testing.assert_array_equal(tuner.predict(sp.csr_matrix(X)), tuner.predict(X))


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_huge_sparse_values_are_refused_as_the_dense_ones_are(scale):
    X, y = _data()
    for Xs in (X * scale, sp.csr_matrix(X * scale)):
        with pytest.raises(ValueError, match="too large or too small to standardise"):
            SVMTuner(method="default").fit(Xs, y)


def test_a_sparse_x_past_the_column_bound_is_refused_before_allocating(monkeypatch):
    import tracemalloc

    from svmtune import preprocess

    y = [0, 1, 0, 1]
    for d in (2**31 + 1, preprocess.MAX_SPARSE_FEATURES + 1):
        X = sp.csr_matrix((np.ones(4), [0, 1, d - 1, 0], [0, 1, 2, 3, 4]), shape=(4, d))
        tracemalloc.start()
        with pytest.raises(ValueError, match=f"{d:,} columns, more than the 8,388,608"):
            SVMTuner(method="default").fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 2**20  # bytes: nothing of one entry per column was made
    # the bound itself, scaled down: at it a sparse X is taken
    monkeypatch.setattr(preprocess, "MAX_SPARSE_FEATURES", 40)
    X, y = _data(d=41)
    with pytest.raises(ValueError, match="41 columns, more than the 40"):
        SVMTuner(method="default").fit(sp.csr_matrix(X), y)
    SVMTuner(method="default").fit(sp.csr_matrix(X[:, :40]), y)
