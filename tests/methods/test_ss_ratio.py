"""S&S-RB selector (method "ss"): kernel and C from the S&S ratio, no SVM fits."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmtune import SVMTuner
from svmtune.criteria.ss_copt import PAPER_CURVE, c_opt, load_copt_table
from svmtune.criteria.ss_kernel import kernel_ss_ratio, min_pairwise_ss
from svmtune.exceptions import BoundWarning
from svmtune.kernels import Kernel
from svmtune.methods.base import get_selector
from svmtune.methods.ss_ratio import SSRatio, repeat_share


def rings(n=120, seed=0):
    """Two concentric rings: not linearly separable, easy for an RBF kernel."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 2 * np.pi, n)
    r = np.where(np.arange(n) < n // 2, 1.0, 3.0) + 0.2 * rng.normal(size=n)
    X = np.column_stack([r * np.cos(t), r * np.sin(t)])
    y = (np.arange(n) >= n // 2).astype(int)
    return (X - X.mean(0)) / X.std(0), y


def blobs3(seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    y = np.repeat([0, 1, 2], [30, 25, 35])
    X = centres[y] + 0.7 * rng.normal(size=(90, 2))
    return (X - X.mean(0)) / X.std(0), y


def test_registered_and_validates_options():
    assert isinstance(get_selector("ss"), SSRatio)
    bad = [
        {"kernels": "sigmoid"},
        {"kernels": ("rbf", "tanh")},
        {"kernels": ()},
        {"sigmas": [1.0, -2.0]},
        {"log2_sigma": (3.0, 1.0, 0.5)},
        {"log2_sigma": 5},
        {"degrees": (0, 2)},
        {"degrees": (2.5,)},
        {"spread": "total"},
        {"estimator": "jackknife"},
        {"feature_map": "svd"},
        {"n_components": 1},
        {"curve": "fit"},
        {"threshold": np.nan},
        {"max_samples": 2},
        {"max_exact": -1},
    ]
    for params in bad:
        with pytest.raises(ValueError):
            get_selector("ss", params)
    for degrees in ("23", "x", [np.nan]):  # named, not numpy's ufunc message
        with pytest.raises(ValueError, match="degrees must be positive integers"):
            get_selector("ss", {"degrees": degrees})
    with pytest.raises(ValueError, match="invalid method_params"):
        get_selector("ss", {"no_such_option": 1})


def test_rbf_selection_is_the_argmax_and_c_follows_the_curve():
    X, y = rings()
    sel = SSRatio().select(X, y, random_state=0)
    assert sel.n_svm_fits == 0 and sel.final_model == "l1" and sel.estimate is None
    assert sel.params["kernel"] == "rbf"
    scores = [h["ss"] for h in sel.history]
    ok = [s for s in scores if s > -5]
    assert sel.criterion == pytest.approx(max(ok) if ok else max(scores))
    assert sel.info["ss"] == sel.criterion
    assert set(sel.info) >= {"d", "sigma", "ss", "kernel_scores", "C_opt"}
    assert len(sel.info["kernel_scores"]) == 15
    # recompute from the definitions: exact kernel matrix of the chosen width
    res = kernel_ss_ratio(Kernel("rbf", sigma=sel.params["sigma"])(X), y)
    assert res.ss == pytest.approx(sel.criterion)
    assert sel.info["d"] == pytest.approx(res.d)
    assert sel.info["sigma"] == pytest.approx(res.sigma)
    # every candidate's score is the S&S of its exact kernel matrix (the selector builds the
    # RBF matrices of the sqrt(2)-spaced grid by squaring the previous one)
    for h in sel.history:
        direct = kernel_ss_ratio(Kernel("rbf", sigma=h["sigma"])(X), y).ss
        assert h["ss"] == pytest.approx(direct, rel=1e-9, abs=1e-9)
    C = c_opt(res.ss, d=res.d, curve=load_copt_table())
    assert sel.params["C"] == pytest.approx(C) == pytest.approx(sel.info["C_opt"])
    # the rings need a kernel: the linear S&S is far below the chosen RBF one
    lin = SSRatio().select(X, y, kernel="linear")
    assert lin.info["admissible"] is False and lin.info["regime"] == "kernel"
    assert lin.params == {"kernel": "linear", "C": lin.params["C"]}
    assert lin.criterion < sel.criterion - 5


def test_options_change_c_as_documented():
    X, y = rings(seed=1)
    a = SSRatio(curve="paper").select(X, y)
    b = SSRatio(curve="paper", rescale=False).select(X, y)
    assert a.params["sigma"] == b.params["sigma"]
    assert b.params["C"] == pytest.approx(c_opt(b.criterion, curve=PAPER_CURVE, rescale=False))
    assert a.params["C"] == pytest.approx(b.params["C"] / a.info["d"] ** 2)
    s = SSRatio(sigmas=[0.3, 1.0]).select(X, y)
    assert s.params["sigma"] in (0.3, 1.0) and len(s.history) == 2


def test_kernel_families():
    X, y = rings(seed=2)
    poly = SSRatio().select(X, y, kernel="poly")
    assert poly.params["kernel"] == "poly" and poly.params["degree"] in (2, 3)
    assert poly.params["gamma"] == pytest.approx(0.5) and poly.params["coef0"] == 1.0
    allk = SSRatio(kernels="all").select(X, y, kernel="rbf")
    labels = list(allk.info["kernel_scores"])
    assert labels[0] == "linear" and labels[1:3] == ["poly(degree=2)", "poly(degree=3)"]
    assert all(k.startswith("rbf") for k in labels[3:])
    best = max(allk.info["kernel_scores"].values())
    assert allk.criterion == pytest.approx(best)
    two = SSRatio(kernels=("linear", "poly"), degrees=[2]).select(X, y)
    assert list(two.info["kernel_scores"]) == ["linear", "poly(degree=2)"]
    with pytest.raises(ValueError, match="kernels"):
        SSRatio().select(X, y, kernel="sigmoid")


def test_linear_and_poly_scores_equal_their_kernel_matrices(monkeypatch):
    """The exact path never stores a linear / polynomial kernel matrix (X (X^T W), row
    blocks); its scores equal the S&S of the explicit matrices."""
    import svmtune.methods.ss_ratio as M

    monkeypatch.setattr(M, "_BLOCK_ENTRIES", 7 * 120)  # 7-row blocks
    X, y = rings(seed=4)
    sel = SSRatio(kernels=("linear", "poly"), degrees=[2, 3]).select(X, y)
    kernels = [Kernel("linear")] + [Kernel("poly", degree=d, gamma=0.5, coef0=1.0) for d in (2, 3)]
    for kern, score in zip(kernels, sel.info["kernel_scores"].values()):
        assert score == pytest.approx(kernel_ss_ratio(kern(X), y).ss, rel=1e-9, abs=1e-9)


def test_multiclass_uses_the_worst_pair():
    X, y = blobs3()
    sel = SSRatio().select(X, y)
    K = Kernel("rbf", sigma=sel.params["sigma"])(X)
    pair, res = min_pairwise_ss(y, K=K)
    assert sel.info["pair"] == list(pair)
    assert sel.criterion == pytest.approx(res.ss)


@pytest.mark.parametrize(
    "opts",
    [
        {"feature_map": "approx"},
        {"feature_map": "nystroem", "n_components": 50},
        {"spread": "isotropic"},
        {"spread": "isotropic", "feature_map": "exact"},
        {"estimator": "plain"},
        {"max_samples": 60},
        {"kernels": "all", "feature_map": "approx", "n_components": 64},
    ],
)
def test_feature_space_variants_are_seeded_and_finite(opts):
    X, y = rings(seed=3)
    a = SSRatio(**opts).select(X, y, random_state=7)
    b = SSRatio(**opts).select(X, y, random_state=7)
    assert a.params == b.params and a.criterion == b.criterion
    assert np.isfinite(a.params["C"]) and a.params["C"] > 0
    assert all(not np.isnan(h["ss"]) for h in a.history)


def test_sample_weight_is_used():
    X, y = rings(seed=4)
    w = np.where(y == 1, 3.0, 1.0)
    a = SSRatio().select(X, y)
    b = SSRatio().select(X, y, w)
    sa = np.array([h["ss"] for h in a.history])
    sb = np.array([h["ss"] for h in b.history])
    finite = np.isfinite(sa) & np.isfinite(sb)
    assert finite.sum() > 5
    assert np.all(np.abs(sa[finite] - sb[finite]) > 1e-6)


def test_degenerate_data_warn_and_stay_finite():
    X = np.zeros((20, 3))
    y = np.r_[np.zeros(10, int), np.ones(10, int)]
    with pytest.warns(UserWarning, match="no candidate kernel"):
        sel = SSRatio().select(X, y)
    assert sel.criterion == -np.inf
    assert np.isfinite(sel.params["C"]) and sel.params["C"] > 0
    # duplicated rows
    Xr, yr = rings(n=40, seed=5)
    Xd, yd = np.vstack([Xr, Xr]), np.r_[yr, yr]
    sel = SSRatio().select(Xd, yd)
    assert np.isfinite(sel.params["C"])


def test_width_on_an_end_of_the_candidates_warns():
    X, y = rings(n=40, seed=5)
    with pytest.warns(BoundWarning, match="largest candidate width; the best width may be larger"):
        sel = SSRatio(sigmas=[0.05, 0.1]).select(X, y)
    assert sel.params["sigma"] == 0.1 and sel.info["width_at_bound"] == "upper"
    # every row twice: the repeats keep kernel 1 at any width, and the smaller width now wins
    Xd, yd = np.vstack([X, X]), np.r_[y, y]
    with pytest.warns(BoundWarning, match="40 of the 80 rows repeat another row exactly"):
        sel = SSRatio(sigmas=[0.05, 0.1]).select(Xd, yd)
    assert sel.params["sigma"] == 0.05 and sel.info["width_at_bound"] == "lower"
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundWarning)
        sel = SSRatio().select(X, y)
        lin = SSRatio().select(X, y, kernel="linear")
    assert 0.177 < sel.params["sigma"] < 22.6 and sel.info["width_at_bound"] is None
    assert lin.info["width_at_bound"] is None


def test_tuner_end_to_end():
    X, y = rings(n=160, seed=6)
    tuner = SVMTuner(method="ss", random_state=0).fit(X[:100], y[:100])
    assert tuner.n_svm_fits_ == 0
    assert tuner.criterion_ == tuner.selection_.info["ss"]
    assert tuner.best_params_["kernel"] == "rbf"
    assert tuner.score(X[100:], y[100:]) > 0.9
    Xm, ym = blobs3(seed=1)
    t3 = SVMTuner(method="ss", method_params={"kernels": "all"}).fit(Xm, ym)
    assert t3.score(Xm, ym) > 0.9


def test_repeat_share_by_hand():
    # class 0: rows a, a, b; class 1: rows a, c (a in class 1 is not a within-class repeat)
    X = np.array([[0.0], [0.0], [1.0], [0.0], [3.0]])
    y = np.array([0, 0, 0, 1, 1])
    sigma = 0.8
    k = lambda d: np.exp(-(d**2) / (2 * sigma**2))  # noqa: E731
    within = 2 * (1.0 + 2 * k(1.0)) + 2 * k(3.0)  # ordered pairs i != j of the same class
    assert repeat_share(X, y, None, sigma) == pytest.approx(2.0 / within)
    w = np.array([2.0, 1.0, 1.0, 1.0, 1.0])
    within_w = 2 * (2.0 + 2 * k(1.0) + 1 * k(1.0)) + 2 * k(3.0)
    assert repeat_share(X, y, w, sigma) == pytest.approx(4.0 / within_w)
    assert repeat_share(np.array([[0.0], [1e3], [2e3]]), [0, 0, 1], None, 1.0) == 0.0
    shares = repeat_share(X, y, None, np.array([sigma, 2 * sigma]))  # several widths at once
    assert shares.shape == (2,) and shares[0] == pytest.approx(2.0 / within)
    # rows of weight 0 count for nothing, also when a class has only such rows
    w0 = np.array([2.0, 1.0, 1.0, 0.0, 0.0])
    assert repeat_share(X, y, w0, sigma) == pytest.approx(4.0 / (2 * (2.0 + 3 * k(1.0))))
    # on a random subset of rows: the same expectation, the same value for the same seed
    Xr, yr = rings(n=200, seed=1)
    Xd, yd = np.vstack([Xr, Xr]), np.r_[yr, yr]
    full = repeat_share(Xd, yd, None, 0.2)
    part = [repeat_share(Xd, yd, None, 0.2, max_rows=200, random_state=s) for s in range(20)]
    assert abs(np.mean(part) - full) < 0.05 * full
    assert part[0] == repeat_share(Xd, yd, None, 0.2, max_rows=200, random_state=0)


def test_width_edge_warning_names_the_cause_that_applies():
    # glass (6 classes, 149 training rows, one exact repeat): every width is below -5 dB for
    # its worst pair, and S&S rises to the smallest width; the single repeat is not blamed
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from svmtune.datasets import load_dataset

    X, y, _ = load_dataset("glass")
    X, _, y, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    X = StandardScaler().fit_transform(X)
    assert X.shape[0] - np.unique(X, axis=0).shape[0] == 1
    with pytest.warns(BoundWarning) as rec:
        sel = SSRatio().select(X, y)
    assert sel.info["width_at_bound"] == "lower" and not sel.info["admissible"]
    msg = str(rec[0].message)
    assert "every candidate has S&S at or below -5 dB" in msg and "cross-validated" in msg
    assert "repeat another row" not in msg and "widen log2_sigma" not in msg


def test_widths_dominated_by_repeated_rows_are_discarded():
    from sklearn.preprocessing import StandardScaler

    from svmtune.datasets import load_dataset

    X, y, _ = load_dataset("hayes_roth")  # 160 rows, 84 distinct
    X = StandardScaler().fit_transform(X)
    paper = SSRatio(max_repeat_share=None).select(X, y)
    assert paper.params["sigma"] == pytest.approx(0.25)  # the smallest width, memorising repeats
    assert paper.info["n_discarded_for_repeats"] == 0  # and no share computed:
    assert np.isnan(paper.info["repeat_share"]) and repeat_share(X, y, None, 0.25) > 0.99
    sel = SSRatio().select(X, y)
    shares = np.array([h["repeat_share"] for h in sel.history])
    gone = np.array([h["discarded_for_repeats"] for h in sel.history])
    assert np.array_equal(gone, shares >= 0.5) and 0 < gone.sum() < len(gone)
    assert sel.info["n_discarded_for_repeats"] == gone.sum()
    assert sel.info["repeat_share"] < 0.5 and sel.params["sigma"] > paper.params["sigma"]
    kept = [h["ss"] for h in sel.history if not h["discarded_for_repeats"]]
    assert sel.criterion == max(kept)
    for h in sel.history:  # the shares are the function's
        assert h["repeat_share"] == pytest.approx(repeat_share(X, y, None, h["sigma"]))


def test_repeat_rule_leaves_data_without_repeats_and_all_repeat_widths_alone():
    X, y = rings(n=60, seed=2)
    a, b = SSRatio().select(X, y), SSRatio(max_repeat_share=None).select(X, y)
    assert a.params == b.params and a.info["repeat_share"] == 0.0
    # no repeats and widths so narrow that no two rows are similar at all (500 dimensions):
    # share 0 at every width, as repeat_share gives, not 0 / 0 with a numpy warning
    rng = np.random.default_rng(1)
    yw = np.arange(30) % 2
    Xw = rng.normal(size=(30, 500)) + 1.5 * yw[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", BoundWarning)
        wide = SSRatio().select(Xw, yw)
    assert [h["repeat_share"] for h in wide.history] == [0.0] * len(wide.history)
    # every row twice: every width is repeat-dominated, so none is discarded
    Xd, yd = np.vstack([X, X]), np.r_[y, y]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundWarning)
        c = SSRatio(sigmas=[0.05, 0.1]).select(Xd, yd)
    assert c.info["n_discarded_for_repeats"] == 0 and c.params["sigma"] == 0.05
    for bad in (0, 1.5, "half", -0.1):
        with pytest.raises(ValueError, match="max_repeat_share"):
            SSRatio(max_repeat_share=bad)


def test_identical_rows_with_unequal_weights_do_not_separate():
    """The class centres of identical rows coincide whatever the weights: d = 0 exactly, not
    a round-off residue that C = curve / d^2 would make astronomical."""
    X = np.ones((40, 3))
    y = np.zeros(40, int)
    y[:3] = 1
    for w in (None, np.linspace(0.5, 2.0, 40), np.where(y == 1, 40 / 6, 40 / 74)):
        K = np.ones((40, 40))
        res = kernel_ss_ratio(K, y, sample_weight=w)
        assert res.d == 0.0 and res.ss == -np.inf
        with pytest.warns(UserWarning, match="no candidate kernel"):
            sel = SSRatio().select(X, y, w)
        assert sel.criterion == -np.inf and sel.params["C"] < 1.0


def test_no_admissible_candidate_warns():
    """Classes that overlap in every candidate feature space (S&S <= -5 dB everywhere): the
    paper discards every kernel; the best is used, with a warning."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = np.arange(80) % 2  # labels unrelated to X
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sel = SSRatio(sigmas=[0.25, 0.5, 1.0, 2.0, 4.0]).select(X, y)
    assert sel.params["sigma"] == 0.5 and sel.info["admissible"] is False  # not on an end
    assert [type(w.message) for w in caught] == [UserWarning]
    assert "every candidate has S&S at or below -5 dB" in str(caught[0].message)
    X2, y2 = rings(n=60, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert SSRatio(sigmas=[0.25, 0.5, 1.0]).select(X2, y2).info["admissible"] is True


def test_smallest_width_with_a_two_sample_class_names_the_class():
    """With two samples in a class its leave-one-out spread rests on single rows: S&S can
    rise without limit as the width shrinks, and the edge warning says so."""
    rng = np.random.RandomState(2)
    y = np.array([0, 1, 0, 1])
    X = rng.randn(4, 2) + 1.5 * y[:, None]
    X = (X - X.mean(0)) / X.std(0)
    with pytest.warns(BoundWarning, match="class 0 has 2 samples, so its spread rests on"):
        sel = SSRatio().select(X, y)
    assert sel.params["sigma"] == pytest.approx(2.0**-2.5) and 200 < sel.criterion < np.inf
    Xr, yr = rings(n=40, seed=5)  # larger classes: the cause is not named
    Xd, yd = np.vstack([Xr, Xr]), np.r_[yr, yr]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SSRatio(sigmas=[0.05, 0.1]).select(Xd, yd)
    assert not any("samples, so its spread" in str(w.message) for w in caught)
