"""Baselines: samplers (Monte Carlo), option validation, the shared CV path, SVMTuner."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import FitFailedWarning
from sklearn.svm import SVC
from sklearn.utils import check_random_state

from svmtune import SVMTuner
from svmtune._option_values import check_log2_range
from svmtune.methods import GridSearch, HalvingSearch, HyperoptTPE, OptunaTPE, RandomSearch
from svmtune.methods.base import get_selector
from svmtune.methods.baselines import sample_log2_box
from svmtune.search.cv import cv_errors, make_folds


def _data(n=60, k=2, seed=0, d=3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    X = rng.normal(size=(n, d)) + 1.2 * y[:, None]
    return (X - X.mean(0)) / X.std(0), y


# ----------------------------------------------------------------------- samplers
def test_loguniform_box_by_monte_carlo():
    rng = np.random.RandomState(0)
    s, c = sample_log2_box(20000, (-8.0, 8.0), (-2.0, 3.0), "loguniform", rng)
    assert s.min() >= 2.0**-8 and s.max() <= 2.0**8 and c.min() >= 0.25 and c.max() <= 8
    # log2 sigma ~ U(-8, 8) and log2 C ~ U(-2, 3)
    assert stats.kstest(np.log2(s), stats.uniform(-8, 16).cdf).pvalue > 0.01
    assert stats.kstest(np.log2(c), stats.uniform(-2, 5).cdf).pvalue > 0.01
    assert np.mean(s < 1.0) == pytest.approx(0.5, abs=0.02)


def test_uniform_box_is_the_rbsvm_papers_distribution():
    rng = np.random.RandomState(1)
    s, c = sample_log2_box(20000, (-8.0, 8.0), (-8.0, 8.0), "uniform", rng)
    lo, hi = 2.0**-8, 2.0**8
    assert stats.kstest(s, stats.uniform(lo, hi - lo).cdf).pvalue > 0.01
    assert stats.kstest(c, stats.uniform(lo, hi - lo).cdf).pvalue > 0.01
    # on [2^-8, 2^8] uniform draws land below 1 with probability ~1/256
    assert np.mean(s < 1.0) == pytest.approx((1 - lo) / (hi - lo), abs=0.003)
    with pytest.raises(ValueError, match="distribution"):
        sample_log2_box(3, (0, 1), (0, 1), "normal", rng)


def test_check_log2_range_messages():
    assert check_log2_range("r", (-1, 2)) == (-1.0, 2.0)
    assert check_log2_range("r", (-1, 2), with_step=True) == (-1.0, 2.0, 1.0)
    with pytest.raises(ValueError, match=r"log2_C must be a tuple \(lo, hi\)"):
        check_log2_range("log2_C", (-1, 2, 0.5))
    with pytest.raises(ValueError, match="lo <= hi"):
        check_log2_range("log2_C", (3, 2))
    with pytest.raises(ValueError, match="step must be positive"):
        check_log2_range("log2_C", (1, 2, 0), with_step=True)
    with pytest.raises(ValueError, match="log2 units"):
        check_log2_range("log2_C", 5)
    for bad in ("x", "12", ("a", 1)):  # a string is iterable, but not a range
        with pytest.raises(ValueError, match=r"log2_C must be a tuple .* log2 units"):
            check_log2_range("log2_C", bad)


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("random", {"n_iter": 0}, "n_iter must be a positive integer"),
        ("random", {"distribution": "gauss"}, "distribution must be one of"),
        ("random", {"n_splits": 1}, "n_splits must be an integer >= 2"),
        ("tpe", {"max_evals": 2.5}, "max_evals must be a positive integer"),
        ("tpe", {"scoring": "auc"}, "scoring must be one of"),
        ("optuna", {"n_trials": -1}, "n_trials must be a positive integer"),
        ("optuna", {"multivariate": "yes"}, "multivariate must be True or False"),
        ("halving", {"factor": 1}, "factor must be a number > 1"),
        ("halving", {"scoring": "hinge"}, "scoring must be one of"),
        ("halving", {"candidates": "all"}, "candidates must be one of"),
        ("halving", {"min_resources": 0}, "min_resources must be"),
        ("grid", {"final_model": "l3"}, "final_model must be one of"),
        ("tpe", {"final_model": None}, "final_model must be one of"),
        ("grid", {"Cs": [1.0, -1.0]}, "grid values of Cs must be .*positive"),
        ("grid", {"budget": 3}, "invalid method_params for method 'grid'"),
        ("grid", {"budget": 3}, "no option 'budget'; its options are: .*log2_C"),
        ("grid", [("n_splits", 3)], "a dict of its options is needed, got list"),
        ("default", {"C": 1.0}, "no option 'C'; it has no options"),
        # a failing conversion inside a method's checks: the failing option is named
        (
            "ss",
            {"poly_coef0": "x", "spread": "directional"},
            r"poly_coef0 must be a finite number, got 'x'",
        ),
        ("ss", {"n_components": "x"}, r"n_components must be an integer >= 2, got 'x'"),
        (
            "span_rule",
            {"floor": "x", "tol": 1e-3},
            r"floor must be a number >= 0 and finite, got 'x'",
        ),
        ("grid", {"sigmas": "x"}, "grid values of sigmas must be a non-empty sequence"),
        ("span_rule", {"log2_C_pos": 5}, r"log2_C_pos must be a tuple \(lo, hi\)"),
        ("span", {"eta": 0.1, "bogus": 1}, "no option 'bogus'; its options are: eta, .*max_iter"),
    ],
)
def test_options_are_validated(name, params, match):
    with pytest.raises(ValueError, match=match):
        get_selector(name, params)


# ----------------------------------------------------------------------- the shared CV path
def test_random_search_estimate_is_the_cv_error_of_its_choice():
    X, y = _data()
    sel = RandomSearch(n_iter=5, n_splits=4).select(X, y, random_state=7)
    assert len(sel.history) == 5 and sel.n_svm_fits == 5 * 4
    losses = [h["cv_loss"] for h in sel.history]
    assert sel.criterion == min(losses) == sel.estimate
    folds = make_folds(y, 4, 7)
    again = cv_errors(X, y, [sel.params], folds=folds)[0]
    assert again == sel.estimate
    # the draws follow the seed, a different seed draws other candidates
    rng = check_random_state(7)
    s, c = sample_log2_box(5, (-8, 8), (-8, 8), "loguniform", rng)
    assert np.allclose([h["sigma"] for h in sel.history], s)
    assert np.allclose([h["C"] for h in sel.history], c)
    other = RandomSearch(n_iter=5, n_splits=4).select(X, y, random_state=8)
    assert [h["sigma"] for h in other.history] != [h["sigma"] for h in sel.history]


@pytest.mark.parametrize(
    "method",
    [
        RandomSearch(n_iter=2, log2_sigma=(0.5, 0.5), log2_C=(1, 1), n_splits=5),
        HyperoptTPE(max_evals=2, n_startup=1, log2_sigma=(0.5, 0.5), log2_C=(1, 1), n_splits=5),
        OptunaTPE(n_trials=2, n_startup=1, log2_sigma=(0.5, 0.5), log2_C=(1, 1), n_splits=5),
        HalvingSearch(
            candidates="random",
            n_candidates=1,
            log2_sigma=(0.5, 0.5, 1),
            log2_C=(1, 1, 1),
            n_splits=5,
            min_resources=60,
        ),
    ],
    ids=["random", "tpe", "optuna", "halving"],
)
def test_every_search_scores_on_the_grid_searchs_folds(method):
    """On a one-point box every search must report the grid search's CV error of that point:
    same folds (make_folds with the same seed), same scoring."""
    X, y = _data(seed=3)
    ref = GridSearch(sigmas=[2**0.5], Cs=[2.0], n_splits=5).select(X, y, random_state=11)
    sel = method.select(X, y, random_state=11)
    assert sel.params["sigma"] == pytest.approx(2**0.5) and sel.params["C"] == pytest.approx(2)
    assert sel.estimate == pytest.approx(ref.estimate, abs=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: RandomSearch(n_iter=2, log2_sigma=(0.5, 0.5), log2_C=(1, 1), **kw),
        lambda **kw: HyperoptTPE(
            max_evals=2, n_startup=1, log2_sigma=(0.5, 0.5), log2_C=(1, 1), **kw
        ),
        lambda **kw: OptunaTPE(n_trials=2, n_startup=1, log2_sigma=(0.5, 0.5), log2_C=(1, 1), **kw),
        lambda **kw: HalvingSearch(
            candidates="random",
            n_candidates=1,
            log2_sigma=(0.5, 0.5, 1),
            log2_C=(1, 1, 1),
            min_resources=60,
            **kw,
        ),
    ],
    ids=["random", "tpe", "optuna", "halving"],
)
def test_f1_scorings_are_the_grid_searchs(make):
    """On a one-point box every search scores "f1" and "f1_macro" as the grid search does
    (halving through scikit-learn's scorers "f1" and "f1_macro"), and on an unbalanced
    binary task the two F1s differ."""
    X, y = _data(n=60, seed=3)
    y = np.where(np.arange(60) % 3 == 0, 1, 0)
    X[y == 1] += 0.8
    losses = {}
    for scoring in ("f1", "f1_macro"):
        kw = {"n_splits": 5, "scoring": scoring}
        ref = GridSearch(sigmas=[2**0.5], Cs=[2.0], **kw).select(X, y, random_state=11)
        sel = make(**kw).select(X, y, random_state=11)
        assert sel.criterion == pytest.approx(ref.criterion, abs=1e-12)
        assert sel.estimate is None
        losses[scoring] = sel.criterion
    assert losses["f1"] != pytest.approx(losses["f1_macro"])


_ONE_POINT = {"log2_sigma": (0.5, 0.5), "log2_C": (1, 1), "n_splits": 5, "final_model": "l2"}


@pytest.mark.parametrize(
    "method",
    [
        GridSearch(log2_sigma=(0.5, 0.5, 1), log2_C=(1, 1, 1), n_splits=5, final_model="l2"),
        RandomSearch(n_iter=2, **_ONE_POINT),
        HyperoptTPE(max_evals=2, n_startup=1, **_ONE_POINT),
        OptunaTPE(n_trials=2, n_startup=1, **_ONE_POINT),
        HalvingSearch(
            candidates="random",
            n_candidates=1,
            min_resources=60,
            **{**_ONE_POINT, "log2_sigma": (0.5, 0.5, 1), "log2_C": (1, 1, 1)},
        ),
    ],
    ids=["grid", "random", "tpe", "optuna", "halving"],
)
def test_l2_searches_score_the_l2_svm_by_brute_force(method):
    """``final_model="l2"``: the CV error is the L2-SVM's, refitted fold by fold here; on
    these data it differs from libsvm's (0.10 against 0.13), so an ignored option fails."""
    from svmtune.estimators import L2SVC

    X, y = _data(seed=1)
    sigma, C = 2**0.5, 2.0
    folds = make_folds(y, 5, 11)
    brute = np.mean(
        [
            np.mean(L2SVC(sigma=sigma, C=C).fit(X[tr], y[tr]).predict(X[te]) != y[te])
            for tr, te in folds
        ]
    )
    l1 = GridSearch(sigmas=[sigma], Cs=[C], n_splits=5).select(X, y, random_state=11)
    assert abs(l1.estimate - brute) > 0.02 and l1.final_model == "l1"
    sel = method.select(X, y, random_state=11)
    assert sel.params["sigma"] == pytest.approx(sigma) and sel.params["C"] == pytest.approx(C)
    assert sel.estimate == pytest.approx(brute, abs=1e-12)
    assert sel.final_model == "l2"


def test_l2_search_refits_the_l2_svm_through_svmtuner():
    X, y = _data(n=45, k=3, seed=4)
    params = {"log2_sigma": (-1, 1, 1), "log2_C": (0, 1, 1), "n_splits": 3, "final_model": "l2"}
    tuner = SVMTuner(method="grid", method_params=params, random_state=0).fit(X, y)
    assert tuner.final_model_ == "l2" and type(tuner.estimator_).__name__ == "L2SVC"
    p = tuner.best_params_
    assert (tuner.estimator_.sigma, tuner.estimator_.C) == (p["sigma"], p["C"])
    # final_model="l1" on the tuner still overrides the search's model
    forced = SVMTuner(method="grid", method_params=params, final_model="l1", random_state=0)
    assert forced.fit(X, y).final_model_ == "l1"


def test_tpe_and_optuna_are_seeded_and_stay_in_the_box():
    X, y = _data(seed=1)
    for cls, budget in ((HyperoptTPE, "max_evals"), (OptunaTPE, "n_trials")):
        opts = {budget: 6, "n_startup": 3, "log2_sigma": (-2, 2), "log2_C": (-1, 3), "n_splits": 3}
        a = cls(**opts).select(X, y, random_state=5)
        b = cls(**opts).select(X, y, random_state=5)
        assert [h["sigma"] for h in a.history] == [h["sigma"] for h in b.history]
        assert len(a.history) == 6 and a.n_svm_fits == 6 * 3
        s = np.array([h["sigma"] for h in a.history])
        c = np.array([h["C"] for h in a.history])
        assert np.all((s >= 0.25) & (s <= 4)) and np.all((c >= 0.5) & (c <= 8))
        assert a.criterion == min(h["cv_loss"] for h in a.history) == a.estimate


def test_optuna_logging_is_restored():
    import optuna

    optuna.logging.set_verbosity(optuna.logging.DEBUG)
    try:
        X, y = _data()
        OptunaTPE(n_trials=2, n_splits=3).select(X, y, random_state=0)
        assert optuna.logging.get_verbosity() == optuna.logging.DEBUG
    finally:
        optuna.logging.set_verbosity(optuna.logging.INFO)


def test_halving_counts_fits_from_cv_results():
    X, y = _data(n=90, k=3, seed=2)
    h = HalvingSearch(log2_sigma=(-2, 2, 1), log2_C=(-1, 1, 1), n_splits=3, factor=3)
    sel = h.select(X, y, random_state=0)
    info = sel.info
    assert info["n_candidates"] == 15 and info["n_candidates_per_iter"][0] == 15
    assert len(sel.history) == sum(info["n_candidates_per_iter"])
    assert sel.n_svm_fits == len(sel.history) * 3
    # rounds grow the resource and shrink the candidate set by the factor
    assert info["n_resources_per_iter"] == sorted(info["n_resources_per_iter"])
    last = max(r["iter"] for r in sel.history)
    final = [r for r in sel.history if r["iter"] == last]
    assert sel.criterion == min(r["cv_loss"] for r in final) == sel.estimate
    assert {r["sigma"] for r in sel.history if r["iter"] == 0} == set(2.0 ** np.arange(-2, 3))


# ----------------------------------------------------------------------- through SVMTuner
@pytest.mark.parametrize(
    "method, params, fits",
    [
        ("grid", {"log2_sigma": (-1, 1, 1), "log2_C": (0, 1, 1), "n_splits": 3}, 6 * 3),
        ("random", {"n_iter": 3, "n_splits": 3}, 3 * 3),
        ("tpe", {"max_evals": 3, "n_startup": 2, "n_splits": 3}, 3 * 3),
        ("optuna", {"n_trials": 3, "n_startup": 2, "n_splits": 3}, 3 * 3),
        ("halving", {"log2_sigma": (-1, 1, 1), "log2_C": (0, 1, 1), "n_splits": 3}, None),
        ("default", {}, 0),
    ],
)
@pytest.mark.parametrize("k", [2, 3])
def test_baselines_through_svmtuner(method, params, fits, k):
    X, y = _data(n=45, k=k, seed=4)
    labels = np.array(["a", "b", "c"])[y]
    w = np.linspace(0.5, 1.5, len(y))
    tuner = SVMTuner(method=method, method_params=params, random_state=0)
    tuner.fit(X, labels, sample_weight=w)
    assert set(tuner.best_params_) >= {"kernel", "sigma", "gamma", "C"}
    if fits is not None:
        assert tuner.n_svm_fits_ == fits
    else:
        assert tuner.n_svm_fits_ == len(tuner.history_) * 3 > 0
    if method != "default":
        assert 0.0 <= tuner.estimate_ <= 1.0 and len(tuner.history_) > 0
    assert tuner.score(X, labels) > 0.5
    P = tuner.predict_proba(X)
    assert P.shape == (45, k) and np.allclose(P.sum(1), 1.0)


def test_degenerate_data_do_not_crash():
    """Duplicated points and a box whose ends give K = I (sigma -> 0) and K = 11^T."""
    X, y = _data(n=30, seed=5)
    X = np.vstack([X, X[:10]])
    y = np.concatenate([y, y[:10]])
    for sel in (
        RandomSearch(n_iter=4, log2_sigma=(-30, 30), n_splits=3),
        HalvingSearch(log2_sigma=(-30, 30, 30), log2_C=(0, 0, 1), n_splits=3),
    ):
        out = sel.select(X, y, random_state=0)
        assert np.isfinite(out.criterion) and 0 <= out.estimate <= 1


def test_halving_on_too_few_samples_is_one_grid_round():
    # 40 samples of 3 classes with 10 folds: scikit-learn's smallest first round is
    # 2 * 10 * 3 = 60 samples, more than there are; one round on all samples instead,
    # which is the grid search on the same folds
    X, y = _data(n=40, k=3, seed=3)
    box = {"log2_sigma": (-2, 2, 1), "log2_C": (-1, 1, 1)}
    with pytest.warns(UserWarning, match="too few for successive halving"):
        sel = HalvingSearch(**box).select(X, y, random_state=0)
    grid = GridSearch(**box).select(X, y, random_state=0)
    assert sel.info["n_iterations"] == 1 and sel.info["n_resources_per_iter"] == [40]
    assert sel.params == grid.params and sel.criterion == pytest.approx(grid.criterion)


@pytest.mark.filterwarnings("ignore:smallest class has 3 samples")
def test_halving_first_round_holds_the_rare_class():
    # 3 of 40 samples in class 1: a first round of scikit-learn's 12 samples would subsample
    # training parts without it, and every fit of the round would fail
    X, y = _data(n=40, seed=6)
    y = (np.arange(40) < 3).astype(int)
    with pytest.warns(UserWarning, match="too few for successive halving"):
        sel = HalvingSearch(log2_sigma=(-2, 2, 1), log2_C=(-1, 1, 1)).select(X, y, random_state=0)
    assert np.isfinite(sel.criterion)
    # on more data the first round is raised only as far as the rare class needs
    X, y = _data(n=400, seed=6)
    y = (np.arange(400) < 20).astype(int)
    h = HalvingSearch(
        log2_sigma=(-2, 2, 1), log2_C=(-1, 1, 1), n_splits=5, min_resources="smallest"
    )
    sel = h.select(X, y, random_state=0)
    first = sel.info["n_resources_per_iter"][0]
    assert first == int(np.ceil(5 * 400 / (20 * 0.8)))  # > scikit-learn's 2 * 5 * 2 = 20
    assert np.isfinite(sel.criterion)


def test_folds_spread_the_samples_of_positive_weight():
    X, y = _data(n=60, seed=1)
    w = np.ones(60)
    assert all(
        np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        for a, b in zip(make_folds(y, 5, 0), make_folds(y, 5, 0, w))
    )
    w[(y == 1) & (np.arange(60) > 20)] = 0.0  # class 1 keeps 10 samples of positive weight
    for train, _ in make_folds(y, 10, 0, w):
        assert np.sum(w[train][y[train] == 1] > 0) >= 9
    w[(y == 1) & (np.arange(60) > 5)] = 0.0  # 3 left: 3-fold
    with pytest.warns(UserWarning, match="3 samples with positive weight: using 3-fold"):
        assert len(make_folds(y, 10, 0, w)) == 3
    w[(y == 1) & (np.arange(60) > 1)] = 0.0
    with pytest.raises(ValueError, match="2 samples with positive weight of every class"):
        make_folds(y, 10, 0, w)


@pytest.mark.filterwarnings("ignore:smallest class has")
def test_halving_scores_on_the_grid_searchs_folds_with_zero_weights():
    """With weights of 0 the folds are make_folds's (stratified by class and weight > 0), as
    in the grid search; a StratifiedKFold on y alone left class 1's only two samples of
    positive weight in one training part, every candidate failed a fit, scored 1.0, and the
    search returned the first grid point."""
    X, y = _data(n=60, seed=2)
    w = np.where(y == 1, 0.0, 1.0)
    # class 1 keeps two samples of positive weight, both in one test part of the old
    # StratifiedKFold(2, shuffle=True, random_state=0) on y
    w[[1, 7]] = 1.0
    box = {"log2_sigma": (-2, 2, 1), "log2_C": (-1, 1, 1)}
    with warnings.catch_warnings():
        warnings.simplefilter("error", FitFailedWarning)
        warnings.filterwarnings("ignore", message=".*too few for successive halving")
        sel = HalvingSearch(**box).select(X, y, w, random_state=0)
    grid = GridSearch(**box).select(X, y, w, random_state=0)
    assert sel.info["n_folds"] == 2 and sel.info["n_resources_per_iter"] == [60]
    assert [h["cv_loss"] for h in sel.history] == pytest.approx(
        [h["cv_loss"] for h in grid.history]
    )
    assert sel.params == grid.params and sel.criterion == pytest.approx(grid.criterion)
    # a third of class 1 at weight 0: the one-point box scores the grid search's folds
    w = np.ones(60)
    w[np.flatnonzero(y == 1)[::3]] = 0.0
    one = {"log2_sigma": (0.5, 0.5, 1), "log2_C": (1, 1, 1), "n_splits": 5}
    ref = GridSearch(**one).select(X, y, w, random_state=0)
    sel = HalvingSearch(min_resources=60, **one).select(X, y, w, random_state=0)
    assert sel.estimate == pytest.approx(ref.estimate, abs=1e-12)  # 0.2 on y's folds


def test_halving_folds_without_zero_weights_are_stratifiedkfolds():
    """Without zero weights halving's folds (make_folds) are those it had before it was given
    them: StratifiedKFold(shuffle=True) on y with the seed."""
    from sklearn.model_selection import StratifiedKFold

    X, y = _data(n=60, k=3, seed=4)
    skf = list(StratifiedKFold(5, shuffle=True, random_state=7).split(X, y))
    for w in (None, np.ones(60), np.linspace(0.5, 2, 60)):
        for (a, b), (c, d) in zip(make_folds(y, 5, 7, w), skf, strict=True):
            assert np.array_equal(a, c) and np.array_equal(b, d)


class _FailsWithMarkedRow(SVC):
    """An SVC whose fit fails when the marked row is in the training part."""

    def fit(self, X, y, sample_weight=None):
        if np.any(X[:, 0] == 1e6):
            raise ValueError("marked row in the training part")
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite")
def test_halving_raises_when_every_candidate_fails(monkeypatch):
    """Every candidate failing a fit is an error (the grid search's fits raise), not the
    first grid point chosen at loss 1."""
    import svmtune.methods.halving as halving

    monkeypatch.setattr(halving, "make_final_estimator", lambda params, **kw: _FailsWithMarkedRow())
    X, y = _data(n=30, seed=1)
    X[0, 0] = 1e6  # in the training part of 2 of the 3 folds: no candidate has a score
    h = HalvingSearch(log2_sigma=(0, 1, 1), log2_C=(0, 0, 1), n_splits=3, min_resources=30)
    with pytest.warns(FitFailedWarning), pytest.raises(ValueError, match="every candidate"):
        h.select(X, y, random_state=0)
