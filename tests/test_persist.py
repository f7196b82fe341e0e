"""Model files (svmtune.persist): skops round trips, the allow-list, trusted pickles."""

from __future__ import annotations

import os
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest

from svmtune import SVMTuner
from svmtune.persist import (
    UntrustedModelError,
    is_skops_file,
    load_model,
    save_model,
    trusted_types,
)

sio = pytest.importorskip("skops.io")


def _data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y2 = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, "yes", "no")
    y3 = np.array(["a", "b", "c"])[np.argmax(X + 0.3 * rng.normal(size=(60, 3)), axis=1)]
    return X, y2, y3


_CASES = {
    "auto": ({}, "y2"),
    "grid_platt_3_classes": (
        {
            "method": "grid",
            "probability": "platt",
            "method_params": {"log2_sigma": (0, 1, 1), "log2_C": (0, 1, 1), "n_splits": 3},
        },
        "y3",
    ),  # fmt: skip
    "l2_one_vs_rest": ({"method": "rbsvm", "final_model": "l2"}, "y3"),
    "one_vs_one": ({"method": "default", "multiclass": "ovo"}, "y3"),
    "preprocess_auto_categorical": ({"method": "default", "preprocess": "auto"}, "y2"),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_skops_round_trip_identical_predictions(case, tmp_path):
    X, y2, y3 = _data()
    kw, which = _CASES[case]
    y = {"y2": y2, "y3": y3}[which]
    if kw.get("preprocess") == "auto":  # a categorical column: the ColumnTransformer path
        X = pd.DataFrame(X, columns=["a", "b", "c"]).assign(k=np.array(["u", "v", "w"] * 20))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tuner = SVMTuner(random_state=0, **kw).fit(X, y)
    path = tmp_path / "m.skops"
    assert save_model(tuner, path) == "skops" and is_skops_file(path)
    got = load_model(path)
    assert type(got) is SVMTuner
    np.testing.assert_array_equal(got.predict(X), tuner.predict(X))
    np.testing.assert_array_equal(got.predict_proba(X), tuner.predict_proba(X))
    np.testing.assert_array_equal(got.decision_function(X), tuner.decision_function(X))
    assert got.best_params_ == tuner.best_params_
    np.testing.assert_array_equal(
        got.cv_results_["mean_test_score"], tuner.cv_results_["mean_test_score"]
    )
    # every type the file names beyond skops' defaults is svmtune's or scikit-learn's
    ok, bad = trusted_types(sio.get_untrusted_types(file=path))
    assert bad == [] and ok


def test_saving_leaves_the_model_as_it_was(tmp_path):
    X, y2, _ = _data()
    X = pd.DataFrame(X, columns=["a", "b", "c"]).assign(k=np.array(["u", "v"] * 30))
    tuner = SVMTuner(method="default", preprocess="auto").fit(X, y2)
    before = [vars(s).get("_metadata_request") for s in _steps(tuner.preprocessor_)]
    assert any(r is not None for r in before)  # set_fit_request's requests (a cycle)
    save_model(tuner, tmp_path / "m.skops")
    after = [vars(s).get("_metadata_request") for s in _steps(tuner.preprocessor_)]
    assert after == before


def _steps(est):
    out = [est]
    for v in est.get_params(deep=True).values():
        if hasattr(v, "get_params"):
            out.append(v)
    return out


def test_untrusted_type_refused(tmp_path):
    X, y2, _ = _data()
    tuner = SVMTuner(method="default").fit(X, y2)
    tuner.hook_ = os.system
    path = tmp_path / "crafted.skops"
    sio.dump(tuner, path)
    with pytest.raises(
        UntrustedModelError, match=r"neither svmtune's nor scikit-learn's: .*system"
    ):
        load_model(path)
    with pytest.raises(UntrustedModelError):  # trusting pickles does not widen the allow-list
        load_model(path, trust_pickle=True)


def test_pickle_needs_trust(tmp_path):
    X, y2, _ = _data()
    tuner = SVMTuner(method="default").fit(X, y2)
    path = tmp_path / "m.skops.joblib"
    assert save_model(tuner, path) == "joblib" and not is_skops_file(path)
    with pytest.raises(UntrustedModelError, match="can run any code.*--trust-pickle"):
        load_model(path)
    np.testing.assert_array_equal(load_model(path, trust_pickle=True).predict(X), tuner.predict(X))
    # a pickle named .skops is still a pickle: recognised by content, not by name
    fake = tmp_path / "fake.skops"
    joblib.dump(tuner, fake)
    with pytest.raises(UntrustedModelError, match="not a skops file"):
        load_model(fake)


def test_trusted_types_by_top_level_module():
    ok, bad = trusted_types(["svmtune.tuner.SVMTuner", "sklearn.svm._classes.SVC",
                             "scipy.sparse._csr.csr_matrix", "sklearnx.Evil", "posix.system",
                             "builtins.eval", "scipy.sparse.load_npz"])  # fmt: skip
    assert ok == [
        "svmtune.tuner.SVMTuner",
        "sklearn.svm._classes.SVC",
        "scipy.sparse._csr.csr_matrix",
    ]
    assert bad == ["sklearnx.Evil", "posix.system", "builtins.eval", "scipy.sparse.load_npz"]


def test_skops_round_trip_of_a_model_fitted_on_sparse_rows(tmp_path):
    import scipy.sparse as sp

    X, y2, _ = _data()
    S = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
    grid = {"log2_sigma": (0, 1, 1), "log2_C": (0, 1, 1), "n_splits": 3}
    tuner = SVMTuner(method="grid", method_params=grid, random_state=0).fit(S, y2)
    assert sp.issparse(tuner.estimator_.support_vectors_)
    save_model(tuner, tmp_path / "m.skops")
    got = load_model(tmp_path / "m.skops")
    np.testing.assert_array_equal(got.decision_function(S), tuner.decision_function(S))
