"""Sparse X (scipy CSR/CSC) through SVMTuner: kept sparse, same selection as dense X."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from svmtune import SVMTuner
from svmtune.methods.base import available_methods, get_selector
from svmtune.methods.baselines import DefaultSVC
from tests.conftest import assert_params_close

SPARSE_METHODS = ["cv_cv", "default", "grid", "halving", "optuna", "random", "tpe"]
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


@pytest.fixture
def no_densifying(monkeypatch):
    """Any toarray/todense of a sparse matrix fails while the fixture is active."""

    def refuse(self, *a, **kw):
        raise AssertionError("a sparse matrix was densified")

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)


@pytest.mark.parametrize("method", [m for m in SPARSE_METHODS if m != "default"])
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
    assert not SVMTuner().__sklearn_tags__().input_tags.sparse  # auto: dense kernels
    assert not SVMTuner(method="grid", final_model="l2").__sklearn_tags__().input_tags.sparse
