"""ESDR-CV, DBTC-CV and J4-CV selectors: width rule, C search through the shared CV path."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmtune import SVMTuner
from svmtune.criteria.blocks import rbf_block_stats
from svmtune.criteria.esdr import index_values
from svmtune.kernels import rbf_params
from svmtune.methods.base import get_selector
from svmtune.methods.esdr import DBTCCV, ESDRCV, J4CV, WidthIndexSelector
from svmtune.search.cv import cv_errors, make_folds


def ring(n=80, seed=0):
    """A non-linear binary problem: inside vs outside a circle (index with an interior peak)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (np.sum(X**2, axis=1) + 0.3 * rng.normal(size=n) > 1.4).astype(int)
    return X, y


def blobs(n=60, seed=1, k=2, gap=3.0):
    """Well separated Gaussian blobs: ESDR rises monotonically to its input-space plateau."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    return rng.normal(size=(n, 2)) + gap * y[:, None], y


def test_esdr_cv_defaults_are_consistent():
    X, y = ring()
    sel = ESDRCV(n_splits=5).select(X, y, random_state=3)
    sigma, C = sel.params["sigma"], sel.params["C"]
    info = sel.info
    # criterion is the index at the chosen width, not below the grid maximum (argmax + golden)
    crit = index_values(rbf_block_stats(X, y, [sigma]), "esdr")[0]
    assert sel.criterion == pytest.approx(crit, rel=1e-12)
    assert sel.criterion >= max(info["index_curve"])
    assert len(info["sigma_grid"]) == 35
    np.testing.assert_allclose(info["sigma_grid"], 2.0 ** np.arange(-8, 9.01, 0.5))
    assert info["n_objective_evals"] > 35 and info["sigma_rule"].startswith("argmax")
    assert 2.0**-8 <= sigma <= 2.0**9 and 2.0**-1 <= C <= 2.0**16
    # estimate = CV error of the chosen (sigma, C) on the same folds, through cv_errors
    folds = make_folds(y, 5, 3)
    err = cv_errors(X, y, [rbf_params(sigma, C)], folds=folds)[0]
    assert sel.estimate == pytest.approx(err)
    assert sel.n_svm_fits == info["n_C_candidates"] * 5
    assert info["n_C_candidates"] < 20  # coarse grid (9) + golden refinement
    c_hist = [h for h in sel.history if h["stage"] == "C"]
    assert sel.estimate == min(h["cv_loss"] for h in c_hist)
    assert info["block_method"] == "exact" and info["index_bound"] == 0.0


def test_paper_procedure_grid_argmax_then_c_grid():
    X, y = ring(seed=2)
    sel = ESDRCV(refine="none", plateau="argmax", c_search="grid", n_splits=4).select(
        X, y, random_state=0
    )
    grid = 2.0 ** np.arange(-8, 9.01, 0.5)
    curve = index_values(rbf_block_stats(X, y, grid), "esdr")
    assert sel.params["sigma"] == grid[np.argmax(curve)]
    Cs = 2.0 ** np.arange(-1, 16.01, 0.5)
    errs = cv_errors(
        X, y, [rbf_params(sel.params["sigma"], c) for c in Cs], folds=make_folds(y, 4, 0)
    )
    assert sel.params["C"] == Cs[np.argmin(errs)]
    assert sel.estimate == pytest.approx(errs.min())
    assert sel.n_svm_fits == 35 * 4


@pytest.mark.parametrize("scoring", ["f1", "f1_macro"])
def test_c_grid_scores_through_the_shared_cv_path(scoring):
    """The C search's losses are cv_errors' with the same scoring (no error estimate)."""
    X, y = ring(seed=2)
    y[np.flatnonzero(y == 1)[::2]] = 0  # unbalanced: the two F1s differ
    sel = ESDRCV(refine="none", c_search="grid", n_splits=4, scoring=scoring).select(
        X, y, random_state=0
    )
    Cs = 2.0 ** np.arange(-1, 16.01, 0.5)
    cands = [rbf_params(sel.params["sigma"], c) for c in Cs]
    losses = cv_errors(X, y, cands, folds=make_folds(y, 4, 0), scoring=scoring)
    assert [h["cv_loss"] for h in sel.history if h["stage"] == "C"] == pytest.approx(losses)
    assert sel.params["C"] == Cs[np.argmin(losses)] and sel.estimate is None
    other = cv_errors(X, y, cands, folds=make_folds(y, 4, 0), scoring="error")
    assert not np.allclose(losses, other)


def test_plateau_rules():
    X, y = blobs()
    grid = 2.0 ** np.arange(-8, 9.01, 0.5)
    curve = index_values(rbf_block_stats(X, y, grid), "esdr")
    assert np.argmax(curve) >= len(grid) - 2  # the argmax sits at the top: a plateau
    with pytest.warns(UserWarning, match="the widest width scanned"):  # the argmax at the top
        am = ESDRCV(c_search="fixed", plateau="argmax").select(X, y)
    fr = ESDRCV(c_search="fixed", plateau="fraction", plateau_fraction=0.95).select(X, y)
    au = ESDRCV(c_search="fixed", plateau="auto", plateau_fraction=0.95).select(X, y)
    level = curve.min() + 0.95 * (curve.max() - curve.min())  # 95% of the rise
    s = fr.params["sigma"]
    assert fr.criterion >= level
    below = index_values(rbf_block_stats(X, y, [s * 2.0**-0.01]), "esdr")[0]
    assert below < level  # the smallest width reaching the level (to xtol = 0.01 in log2)
    assert s < am.params["sigma"] / 4
    assert au.params["sigma"] == s and au.info["plateau_detected"]
    assert "smallest sigma" in au.info["sigma_rule"]
    # DBTC has an interior maximum: "auto" keeps the argmax
    X2, y2 = ring(seed=4)
    d_auto = DBTCCV(c_search="fixed", plateau="auto").select(X2, y2)
    d_max = DBTCCV(c_search="fixed", plateau="argmax").select(X2, y2)
    assert not d_auto.info["plateau_detected"]
    assert d_auto.params["sigma"] == d_max.params["sigma"]


def test_coupled_c_range_follows_sigma_squared():
    X, y = blobs(seed=3)
    sel = ESDRCV(couple_C=True, log2_C=(-1, 3, 1), c_search="grid", n_splits=3).select(
        X, y, random_state=0
    )
    shift = 2 * np.log2(sel.params["sigma"])
    assert shift > 0
    np.testing.assert_allclose(sel.info["log2_C_range"], [-1 + shift, 3 + shift])
    assert -1 + shift - 1e-9 <= np.log2(sel.params["C"]) <= 3 + shift + 1e-9
    with pytest.raises(ValueError, match="couple_C"):
        ESDRCV(couple_C="yes")


@pytest.mark.parametrize("cls, index", [(DBTCCV, "dbtc"), (J4CV, "j4")])
def test_dbtc_and_j4_maximise_their_index(cls, index):
    X, y = ring(seed=5)
    sel = cls(c_search="fixed", C=2.0, plateau="argmax").select(X, y)
    assert sel.params["C"] == 2.0 and sel.estimate is None and sel.n_svm_fits == 0
    assert sel.criterion == pytest.approx(
        index_values(rbf_block_stats(X, y, [sel.params["sigma"]]), index)[0], rel=1e-12
    )
    assert sel.criterion >= max(sel.info["index_curve"])
    assert sel.info["index"] == index


def test_multiclass_uses_the_worst_class_pair():
    X, y = blobs(n=60, k=3, gap=2.0)
    sel = ESDRCV(c_search="fixed", refine="none").select(X, y)
    s = sel.params["sigma"]
    pairs = []
    for a, b in ((0, 1), (0, 2), (1, 2)):
        m = (y == a) | (y == b)
        pairs.append(index_values(rbf_block_stats(X[m], y[m], [s]), "esdr")[0])
    assert sel.criterion == pytest.approx(min(pairs), rel=1e-12)
    mean = ESDRCV(c_search="fixed", refine="none", multiclass="mean").select(X, y)
    pairs = []
    for a, b in ((0, 1), (0, 2), (1, 2)):
        m = (y == a) | (y == b)
        pairs.append(index_values(rbf_block_stats(X[m], y[m], [mean.params["sigma"]]), "esdr")[0])
    assert mean.criterion == pytest.approx(np.mean(pairs), rel=1e-12)


def test_histogram_and_subsample_paths():
    X, y = ring(n=90, seed=6)
    ex = ESDRCV(c_search="fixed").select(X, y)
    hi = ESDRCV(c_search="fixed", blocks="histogram").select(X, y)
    assert hi.info["block_method"] == "histogram"
    assert abs(np.log2(hi.params["sigma"] / ex.params["sigma"])) < 0.05
    assert abs(hi.criterion - ex.criterion) <= hi.info["index_bound"] * 1.1 + 1e-12
    sub = ESDRCV(c_search="fixed", max_pairs=4000).select(X, y, random_state=1)
    sub2 = ESDRCV(c_search="fixed", max_pairs=4000).select(X, y, random_state=1)
    assert sub.info["block_method"] == "subsample" and sub.info["index_se"] > 0
    assert sub.params == sub2.params


def test_options_are_validated():
    for bad, match in [
        ({"plateau": "first"}, "plateau"),
        ({"plateau_fraction": 1.5}, "plateau_fraction"),
        ({"C": 3.0}, "c_search='fixed'"),
        ({"c_search": "bayes"}, "c_search"),
        ({"log2_sigma": (3, 1)}, "log2_sigma"),
        ({"n_splits": 1}, "n_splits"),
        ({"refine": "newton"}, "refine"),
        ({"blocks": "gpu"}, "blocks"),
        ({"max_pairs": 0}, "max_pairs"),
        ({"sigma_xtol": -1}, "sigma_xtol"),
        ({"max_repeat_share": 0.0}, "max_repeat_share"),
        ({"max_repeat_share": True}, "max_repeat_share"),
    ]:
        with pytest.raises(ValueError, match=match):
            ESDRCV(**bad)
    with pytest.raises(ValueError, match="invalid method_params"):
        get_selector("esdr", {"sigma_grid": [1, 2]})
    with pytest.raises(ValueError, match="kernels"):
        ESDRCV().select(*ring(), kernel="linear")


def test_registered_and_usable_through_svmtuner():
    X, y = ring(n=70, seed=7)
    for name in ("esdr", "dbtc", "j4"):
        t = SVMTuner(
            method=name, method_params={"n_splits": 3, "c_coarse_step": 4.0}, random_state=0
        )
        t.fit(X, y)
        assert set(t.best_params_) >= {"kernel", "sigma", "gamma", "C"}
        assert 0 <= t.estimate_ <= 1 and t.criterion_ == t.selection_.criterion
        assert t.n_svm_fits_ > 0 and t.predict(X).shape == (70,)


def test_degenerate_data_does_not_crash():
    rng = np.random.default_rng(8)
    X = np.repeat(rng.normal(size=(6, 3)), 3, axis=0)  # every point three times
    X[:, 2] = 0.0  # a constant feature
    y = np.repeat([0, 1], 9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        sel = ESDRCV(n_splits=3).select(X, y, random_state=0)
    assert np.isfinite(sel.params["sigma"]) and np.isfinite(sel.criterion)
    assert all(np.isfinite(sel.info["index_curve"]))


def repeated_categories(seed=0):
    """Categorical-looking rows (three features with four levels), most of them repeated,
    with a label that depends on the first two features and noise."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(150, 3)).astype(float)
    y = ((X[:, 0] + X[:, 1] + rng.normal(scale=1.0, size=150)) > 3).astype(int)
    return (X - X.mean(0)) / X.std(0), y


@pytest.mark.parametrize("cls", [ESDRCV, DBTCCV, J4CV])
def test_repeat_dominated_widths_are_left_out(cls):
    from svmtune.criteria.repeats import repeat_share

    X, y = repeated_categories()
    grid = 2.0 ** np.arange(-8, 9.01, 0.5)
    shares = repeat_share(X, y, None, grid)
    start = int(np.flatnonzero(shares < 0.5)[0])
    assert start > 0  # the narrowest widths are repeat-dominated
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        sel = cls(n_splits=3).select(X, y, random_state=0)
    info = sel.info
    edge = [str(w.message) for w in rec if "narrowest width scanned" in str(w.message)]
    # a choice on the kept scan's lower edge says why the narrower widths were left out
    assert bool(edge) == (sel.params["sigma"] <= grid[start] * 2**0.01)
    assert all(f"the {start} narrower widths" in m and "max_repeat_share" in m for m in edge)
    assert info["widths_left_out"] == start and not info["every_width_repeat_dominated"]
    assert info["repeat_share_at_narrowest_kept"] == pytest.approx(shares[start])
    np.testing.assert_allclose(info["sigma_grid"], grid[start:])
    assert sel.params["sigma"] >= grid[start]
    # the paper's scan (max_repeat_share=None) keeps every width and records nothing of it
    off = cls(n_splits=3, max_repeat_share=None).select(X, y, random_state=0)
    assert len(off.info["sigma_grid"]) == 35 and "widths_left_out" not in off.info


def test_repeat_rule_changes_nothing_without_repeats():
    X, y = ring()
    on = ESDRCV(n_splits=3).select(X, y, random_state=0)
    off = ESDRCV(n_splits=3, max_repeat_share=None).select(X, y, random_state=0)
    assert on.params == off.params and on.info["widths_left_out"] == 0


def test_a_choice_on_the_scan_edge_warns():
    from svmtune.exceptions import BoundWarning

    with pytest.warns(BoundWarning, match="ESDR chose sigma = 512, the widest width scanned"):
        ESDRCV(plateau="argmax", n_splits=3).select(*blobs(), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundWarning)
        ESDRCV(n_splits=3).select(*ring(), random_state=0)  # an interior peak: no warning


def test_an_edge_left_by_the_repeat_rule_says_so():
    """hayes-roth: 84 distinct rows of 160; DBTC rises to the narrowest width kept."""
    from svmtune.datasets import load_dataset
    from svmtune.exceptions import BoundWarning

    X, y, _ = load_dataset("hayes_roth")
    X = np.asarray(X, dtype=float)
    X = (X - X.mean(0)) / X.std(0)
    y = np.unique(np.asarray(y), return_inverse=True)[1]
    with pytest.warns(BoundWarning, match=r"the 15 narrower widths of log2_sigma were left out"):
        sel = DBTCCV(n_splits=3, c_search="fixed").select(X, y, random_state=0)
    assert sel.params["sigma"] == pytest.approx(2**-0.5) and sel.info["widths_left_out"] == 15


def n_below_d(seed=0):
    """10 rows in 200 dimensions, weakly separated (standardised): the nearest pair is so far
    apart that the kernel is the identity over the narrow half of the scan, where DBTC sits
    at its maximum 1/n1 + 1/n2 up to round-off."""
    rng = np.random.RandomState(seed)
    y = np.repeat([0, 1], 5)
    X = rng.randn(10, 200)
    X[y == 1, :5] += 1.0
    return (X - X.mean(0)) / X.std(0), y


def test_a_round_off_plateau_at_the_narrow_edge_warns():
    """The argmax and the refinement follow round-off along the plateau and may end inside
    the scan: the warning comes from the scan values tied with the maximum, not from where
    the refinement lands; the choice itself is unchanged."""
    from svmtune.exceptions import BoundWarning
    from svmtune.search.scalar import grid_then_refine_max

    X, y = n_below_d()
    grid = np.arange(-8, 9.01, 0.5)
    curve = index_values(rbf_block_stats(X, y, 2.0**grid), "dbtc")
    assert curve[:2] == pytest.approx([0.4, 0.4], abs=1e-14)  # the plateau at K = I
    with pytest.warns(BoundWarning, match="plateau .* down to the narrowest width") as rec:
        sel = DBTCCV(c_search="fixed").select(X, y, random_state=0)
    msg = str(next(w.message for w in rec if issubclass(w.category, BoundWarning)))
    assert "kernel value between distinct rows is 0" in msg and "keep rising" not in msg
    assert sel.info["sigma_rule"] == "argmax + golden refinement"
    ref = grid_then_refine_max(
        lambda x: index_values(rbf_block_stats(X, y, [2.0**x]), "dbtc")[0], grid, xtol=0.01
    )
    assert sel.params["sigma"] == 2.0**ref.x  # the same choice as without the warning


class _PeakAt(WidthIndexSelector):
    """A made-up index of log2 sigma with its maximum at ``peak``."""

    name = "peak_at"
    index = "peak"
    peak = -7.8

    def objective(self, stats, scheme="ovr"):
        return -((np.log2(stats.sigmas) - self.peak) ** 2)


def test_an_edge_grid_point_warns_wherever_the_refinement_lands():
    from svmtune.exceptions import BoundWarning

    X, y = ring(n=20)
    # best scan point -8 (the first), refined to -7.8: 0.2 > sigma_xtol inside the scan
    with pytest.warns(BoundWarning, match="next to the narrowest width scanned"):
        sel = _PeakAt(c_search="fixed", plateau="argmax").select(X, y)
    assert np.log2(sel.params["sigma"]) == pytest.approx(-7.8, abs=0.01)
    assert sel.info["sigma_rule"] == "argmax + golden refinement"
    peak_wide = type("_PeakWide", (_PeakAt,), {"peak": 8.8})
    with pytest.warns(BoundWarning, match="next to the widest width scanned"):
        peak_wide(c_search="fixed", plateau="argmax").select(X, y)
    interior = type("_PeakInside", (_PeakAt,), {"peak": 0.3})
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundWarning)
        sel = interior(c_search="fixed", plateau="argmax").select(X, y)
    assert np.log2(sel.params["sigma"]) == pytest.approx(0.3, abs=0.01)


def contradictory(n=40, seed=0):
    """Every row twice, once per class: the index does not depend on the width."""
    X0 = np.random.RandomState(seed).randn(n // 2, 3)
    return np.vstack([X0, X0]), np.repeat([0, 1], n // 2)


@pytest.mark.parametrize("method", ["esdr", "dbtc", "j4", "ld_c1"])
def test_a_flat_index_says_it_cannot_identify_a_width(method):
    from svmtune.exceptions import BoundWarning

    X, y = contradictory()
    params = {} if method == "ld_c1" else {"c_search": "fixed"}
    with pytest.warns(BoundWarning) as rec:
        sel = get_selector(method, params).select(X, y, random_state=0)
    msgs = [str(w.message) for w in rec if issubclass(w.category, BoundWarning)]
    assert len(msgs) == 1
    assert "does not depend on the width" in msgs[0] and "keep rising" not in msgs[0]
    assert np.ptp(sel.info["index_curve"]) == 0.0
    assert sel.params["sigma"] == 2.0**-8  # the choice is unchanged: ties to the narrowest


def test_a_strict_interior_maximum_keeps_its_choice_without_warning():
    from svmtune.exceptions import BoundWarning
    from svmtune.search.scalar import grid_then_refine_max

    X, y = ring()
    grid = np.arange(-8, 9.01, 0.5)
    for cls, index in [(DBTCCV, "dbtc"), (ESDRCV, "esdr")]:
        with warnings.catch_warnings():
            warnings.simplefilter("error", BoundWarning)
            sel = cls(c_search="fixed", plateau="argmax").select(X, y, random_state=0)
        ref = grid_then_refine_max(
            lambda x, index=index: index_values(rbf_block_stats(X, y, [2.0**x]), index)[0],
            grid,
            xtol=0.01,
        )
        assert 0 < np.argmax(ref.grid_values) < grid.size - 1
        assert sel.params["sigma"] == 2.0**ref.x
