"""LD-C1, LD-CV and CV-CV selectors."""

from __future__ import annotations

import numpy as np
import pytest

from svmtune import SVMTuner
from svmtune.criteria.blocks import rbf_block_stats
from svmtune.criteria.likelihood import ld_curve, ld_objective
from svmtune.kernels import rbf_params
from svmtune.methods import GridSearch
from svmtune.methods.base import get_selector
from svmtune.methods.ld import CVCV, LDC1, LDCV
from svmtune.search.cv import cv_errors, make_folds


def spiral(n=80, seed=0):
    """Two interleaved spirals (the LD paper's Fig. 2 example), lightly noisy."""
    rng = np.random.default_rng(seed)
    t = np.sqrt(rng.uniform(0.05, 1.0, size=n)) * 3 * np.pi
    y = np.arange(n) % 2
    sign = np.where(y == 1, 1.0, -1.0)
    X = np.column_stack([sign * t * np.cos(t), sign * t * np.sin(t)]) / 4.0
    return X + 0.05 * rng.normal(size=X.shape), y


def test_ld_c1_width_is_the_dense_scan_argmax():
    X, y = spiral()
    sel = LDC1().select(X, y)
    assert sel.params["C"] == 1.0 and sel.estimate is None and sel.n_svm_fits == 0
    dense = np.linspace(-8.0, 9.0, 1000)
    curve = ld_curve(X, y, 2.0**dense)
    x_dense = dense[np.argmax(curve)]
    assert abs(np.log2(sel.params["sigma"]) - x_dense) <= (dense[1] - dense[0]) + 0.01
    assert sel.criterion >= curve.max() * (1 - 1e-5)  # within xtol of the peak
    assert sel.criterion == pytest.approx(
        ld_objective(rbf_block_stats(X, y, [sel.params["sigma"]]))[0], rel=1e-12
    )
    info = sel.info
    assert len(info["sigma_grid"]) == 18  # coarse scan, step 1 over [-8, 9]
    assert 18 < info["n_objective_evals"] < 18 + 30  # golden section to 0.01 in log2
    assert info["index"] == "ld" and info["c_search"] == "fixed"


def test_ld_cv_grid_over_c():
    X, y = spiral(seed=1)
    sel = LDCV(n_splits=4).select(X, y, random_state=2)
    assert sel.params["sigma"] == LDC1().select(X, y).params["sigma"]
    Cs = 2.0 ** np.arange(-5.0, 8.01)
    errs = cv_errors(
        X, y, [rbf_params(sel.params["sigma"], c) for c in Cs], folds=make_folds(y, 4, 2)
    )
    assert sel.params["C"] == Cs[np.argmin(errs)]
    assert sel.estimate == pytest.approx(errs.min())
    assert sel.n_svm_fits == 14 * 4 and sel.info["n_C_candidates"] == 14


def test_cv_cv_is_the_papers_grid_search():
    X, y = spiral(n=50, seed=2)
    sel = CVCV(n_splits=3).select(X, y, random_state=0)
    ref = GridSearch(log2_sigma=(-6, 4, 1), log2_C=(-5, 8, 1), n_splits=3).select(
        X, y, random_state=0
    )
    assert sel.params == ref.params and sel.estimate == ref.estimate
    assert sel.n_svm_fits == 11 * 14 * 3
    assert get_selector("cv_cv").name == "cv_cv"


def test_multiclass_width_maximises_the_mean_ovr_objective():
    rng = np.random.default_rng(3)
    y = np.arange(60) % 3
    X = rng.normal(size=(60, 2)) + 2.0 * np.column_stack([y == 1, y == 2])
    sel = LDC1().select(X, y)
    s = sel.params["sigma"]
    per_task = []
    for c in range(3):
        yb = np.where(y == c, 0, 1)
        per_task.append(ld_objective(rbf_block_stats(X, yb, [s]))[0])
    assert sel.criterion == pytest.approx(np.mean(per_task), rel=1e-12)
    worst = LDC1(multiclass="min").select(X, y)
    per_task = [
        ld_objective(rbf_block_stats(X, np.where(y == c, 0, 1), [worst.params["sigma"]]))[0]
        for c in range(3)
    ]
    assert worst.criterion == pytest.approx(min(per_task), rel=1e-12)


def test_one_vs_one_final_model_uses_class_pairs_and_ovo_cv(monkeypatch):
    rng = np.random.default_rng(5)
    y = np.arange(60) % 3
    X = rng.normal(size=(60, 2)) + 2.0 * np.column_stack([y == 1, y == 2])
    sel = LDC1().select(X, y, multiclass="ovo")
    s = sel.params["sigma"]
    per_pair = []
    for a, b in ((0, 1), (0, 2), (1, 2)):
        keep = (y == a) | (y == b)
        per_pair.append(ld_objective(rbf_block_stats(X[keep], y[keep] == b, [s]))[0])
    assert sel.criterion == pytest.approx(np.mean(per_pair), rel=1e-12)
    # LD-CV scores its C candidates with one-vs-one SVMs, as SVMTuner(multiclass="ovo") fits
    import svmtune.methods.esdr as esdr_module

    seen = []

    def spy(*args, **kwargs):
        seen.append(kwargs.get("multiclass"))
        return cv_errors(*args, **kwargs)

    monkeypatch.setattr(esdr_module, "cv_errors", spy)
    t = SVMTuner(method="ld", multiclass="ovo", method_params={"n_splits": 3}, random_state=0).fit(
        X, y
    )
    assert seen and set(seen) == {"ovo"}
    ref = LDC1().select(t.preprocessor_.transform(X), y, multiclass="ovo")
    assert t.best_params_["sigma"] == pytest.approx(ref.params["sigma"], rel=1e-12)


def test_ld_c1_fixes_c():
    for bad in ({"c_search": "grid"}, {"C": 10.0}, {"log2_C": (-1, 1)}, {"n_splits": 5}):
        with pytest.raises(ValueError, match="does not take"):
            LDC1(**bad)
    with pytest.raises(ValueError, match="does not take"):
        get_selector("ld_c1", {"C": 2.0})
    assert LDC1(sigma_xtol=0.1, log2_sigma=(-4, 4, 0.5)).sigma_xtol == 0.1


def test_through_svmtuner():
    X, y = spiral(n=60, seed=4)
    t = SVMTuner(method="ld_c1", random_state=0).fit(X, y)
    assert t.best_params_["C"] == 1.0 and t.estimate_ is None and t.n_svm_fits_ == 0
    t = SVMTuner(method="ld", method_params={"n_splits": 3}, random_state=0).fit(X, y)
    assert 2.0**-5 <= t.best_params_["C"] <= 2.0**8 and 0 <= t.estimate_ <= 1
    assert t.score(X, y) > 0.5
