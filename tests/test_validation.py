"""Bad input gives one clear error naming the problem, library side.

The same cases through the command line are in ``tests/cli/test_commands.py``.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from svmtune import SVMTuner
from svmtune._option_values import check_positive
from svmtune._validation import check_feature_values, check_min_class_count, validate_sample_weight


def _data(n=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.array(["neg", "pos"] * (n // 2))
    return X, y


def _with(X, value):
    X = X.copy()
    X[2, 1] = value
    return X


@pytest.mark.parametrize("preprocess", ["standard", "auto"])
def test_infinity(preprocess):
    X, y = _data()
    with pytest.raises(ValueError, match="infinity"):
        SVMTuner(method="default", preprocess=preprocess).fit(_with(X, np.inf), y)
    df = pd.DataFrame(_with(X, -np.inf), columns=["a", "b", "c"])
    with pytest.raises(ValueError, match="infinity"):
        SVMTuner(method="default", preprocess=preprocess).fit(df, y)


def test_nan_rejected_unless_auto():
    X, y = _data()
    with pytest.raises(ValueError, match="NaN"):
        SVMTuner(method="default").fit(_with(X, np.nan), y)
    tuner = SVMTuner(method="default", preprocess="auto").fit(_with(X, np.nan), y)
    assert np.all(np.isfinite(tuner.decision_function(_with(X, np.nan))))


@pytest.mark.parametrize("preprocess", ["standard", "auto"])
def test_one_class(preprocess):
    X, _ = _data()
    with pytest.raises(ValueError, match=r"y has 1 class \('only'\).*at least two classes"):
        SVMTuner(method="default", preprocess=preprocess).fit(X, np.array(["only"] * len(X)))
    with pytest.raises(ValueError, match=r"y has 1 class \(3\)"):
        SVMTuner(method="default").fit(X, np.full(len(X), 3.0))


def test_fewer_than_two_samples_per_class():
    X, y = _data()
    y = y.astype(object)
    y[0] = "rare"
    with pytest.raises(ValueError, match="at least 2 samples.*class 'rare' has 1"):
        SVMTuner(method="default").fit(X, y)


@pytest.mark.parametrize("preprocess", ["standard", "auto"])
def test_mismatched_lengths(preprocess):
    X, y = _data()
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples|X has 12 .* y has 11"):
        SVMTuner(method="default", preprocess=preprocess).fit(X, y[:-1])


@pytest.mark.parametrize(
    "bad,match",
    [(-1.0, "negative"), (np.nan, "NaN"), (np.inf, "infinity")],
)
def test_bad_sample_weights(bad, match):
    X, y = _data()
    w = np.ones(len(y))
    w[4] = bad
    with pytest.raises(ValueError, match=match):
        SVMTuner(method="default").fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="expected \\(12,\\)"):
        SVMTuner(method="default").fit(X, y, sample_weight=np.ones(5))


def test_unknown_method_lists_choices():
    X, y = _data()
    with pytest.raises(ValueError, match="unknown method 'nope'; choose one of: .*default.*grid"):
        SVMTuner(method="nope").fit(X, y)


def test_nan_message_names_the_column_and_the_fix():
    X, y = _data()
    df = pd.DataFrame(_with(X, np.nan), columns=["a", "b", "c"])
    tuner = SVMTuner(method="default")
    with pytest.raises(ValueError, match=r"NaN \(1 cell missing, columns 'b'\).*preprocess='auto'"):
        tuner.fit(df, y)
    tuner.fit(X, y)
    with pytest.raises(ValueError, match=r"NaN \(1 cell missing.*preprocess='auto'"):
        tuner.predict(_with(X, np.nan))


def test_categorical_columns_need_auto():
    X, y = _data()
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(
        colour=["red", "blue"] * 6, size=pd.Categorical(["S", "M", "L"] * 4)
    )
    with pytest.raises(
        ValueError, match=r"non-numeric \(categorical\) columns: 'colour', 'size'; .*'auto'"
    ):
        SVMTuner(method="default").fit(df, y)
    with pytest.raises(ValueError, match=r"non-numeric \(categorical\) columns: 3\b"):
        SVMTuner(method="default").fit(df.drop(columns="size").to_numpy().astype(str), y)
    tuner = SVMTuner(method="default", preprocess="auto").fit(df, y)
    with pytest.raises(ValueError, match="'colour', 'size'"):
        SVMTuner(method="default").fit(df.iloc[:, :3], y).predict(df)
    assert tuner.predict(df).shape == (12,)
    # numeric strings and booleans are numbers
    ok = pd.DataFrame({"a": X[:, 0], "flag": [True, False] * 6, "s": [str(v) for v in X[:, 1]]})
    assert SVMTuner(method="default").fit(ok, y).predict(ok).shape == (12,)


def test_continuous_target():
    X, _ = _data()
    with pytest.raises(ValueError, match="continuous"):
        SVMTuner(method="default").fit(X, np.linspace(0, 1, len(X)))


def test_check_feature_values_names_columns():
    df = pd.DataFrame({"a": [1.0, np.nan], "b": [np.inf, 1.0], "s": ["x", None]})
    with pytest.raises(ValueError, match=r"infinity \(1 cell, columns 'b'\)"):
        check_feature_values(df, allow_nan=True)
    with pytest.raises(ValueError, match=r"NaN \(1 cell missing, columns 'a'\)"):
        check_feature_values(df[["a", "s"]])
    check_feature_values(df[["a", "s"]], allow_nan=True)  # categorical column skipped
    check_feature_values(np.zeros((2, 2)))


def test_small_helpers():
    check_min_class_count(np.array([0, 0, 1, 1]), np.array(["a", "b"]))
    with pytest.raises(ValueError, match="class 'b' has 1"):
        check_min_class_count(np.array([0, 0, 1]), np.array(["a", "b"]))
    y, labels = np.array([0, 0, 1, 1, 1]), np.array(["a", "b"])
    check_min_class_count(y, labels, sample_weight=np.array([1.0, 2.0, 0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="positive sample_weight; class 'a' has 1"):
        check_min_class_count(y, labels, sample_weight=np.array([0.0, 2.0, 1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="needs a sample with positive sample_weight; class 'b'"):
        check_min_class_count(y, labels, 1, sample_weight=np.array([1.0, 1.0, 0.0, 0.0, 0.0]))
    assert validate_sample_weight(None, 3) is None
    with pytest.raises(ValueError, match="all zero"):
        validate_sample_weight(np.zeros(3), 3)
    assert check_positive("C", 2) == 2.0 and check_positive("C", None, allow_none=True) is None
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="C must be a positive finite number"):
            check_positive("C", bad)
    for bad in ("x", True, [1.0], None):  # no number: a TypeError and a ValueError
        with pytest.raises(TypeError, match="C must be a real number"):
            check_positive("C", bad)
        with pytest.raises(ValueError, match="C must be a real number"):
            check_positive("C", bad)


@pytest.mark.parametrize(
    "method, alternative",
    [
        ("rbsvm", "rbsvm_lowrank"),
        ("span", "span_lowrank"),
        ("radius_margin", "radius_margin_lowrank"),
        ("span_rule", "K-fold search"),
    ],
)
def test_dense_methods_refuse_data_whose_matrices_cannot_fit(method, alternative, monkeypatch):
    import svmtune._validation as v

    X, y = _data()
    monkeypatch.setattr(v, "available_memory", lambda: 1000)  # bytes
    with pytest.raises(MemoryError, match=rf"'{method}' keeps at least .*n = 12 .*{alternative}"):
        SVMTuner(method=method).fit(X, y)
    monkeypatch.setattr(v, "available_memory", lambda: None)  # unknown: no check
    grid = {"log2_sigma": (-1, 1, 1), "log2_C": (-1, 1, 1)} if method == "span_rule" else None
    SVMTuner(method=method, method_params=grid).fit(X, y)


def test_available_memory_reads_the_system():
    from svmtune._validation import available_memory

    avail = available_memory()
    assert avail is None or avail > 2**20


@pytest.mark.parametrize("scale", [1e200, 1e160, 1e-160, 1e-200])
def test_columns_beyond_float64_standardisation_are_named(scale):
    X, y = _data(n=20)
    Xs = X * [1.0, scale, 1.0]
    for preprocess in ("standard", "auto"):
        with pytest.raises(ValueError, match=r"too large or too small .*: 1 \(largest \|x\|"):
            SVMTuner(preprocess=preprocess).fit(Xs, y)


def test_large_but_representable_columns_are_standardised_like_others():
    X, y = _data(n=20)
    for factor in (1e140, 1e-140):
        a = SVMTuner().fit(X * [1.0, factor, 1.0], y)
        b = SVMTuner().fit(X, y)
        np.testing.assert_allclose(
            a.decision_function(X * [1.0, factor, 1.0]), b.decision_function(X), atol=1e-8
        )


@pytest.mark.parametrize(
    "labels, match",
    [
        (
            np.array([None, "a", "b", "a"] * 3, dtype=object),
            r"3 missing label\(s\) .* rows 0, 4, 8",
        ),
        ([np.nan, "a", "b", "a"] * 3, "missing label"),
        (pd.Series(pd.array(["a", None, "b", "a"] * 3, dtype="string")), "missing label"),
        # numbers: NaN in floats, pd.NA in a nullable integer column
        (np.array([0.0, 1.0, np.nan, 1.0] * 3), r"3 missing label\(s\) .* rows 2, 6, 10"),
        (pd.Series([0, 1, None, 1] * 3, dtype="Int64"), r"rows 2, 6, 10"),
        (np.array([1, "b", 1, "b"] * 3, dtype=object), r"mixes label types \(number, str\)"),
    ],
)
def test_missing_or_mixed_labels_are_named(labels, match):
    from svmtune import L2SVC

    X, _ = _data()
    for est in (SVMTuner(), L2SVC()):
        with pytest.raises(ValueError, match=match):
            est.fit(X, labels)


def test_date_time_and_complex_columns():
    X, y = _data()
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    for col in (
        pd.date_range("2020-01-01", periods=len(y)),
        pd.to_timedelta(np.arange(len(y)), unit="s"),
    ):
        with pytest.raises(ValueError, match="date/time columns: 't'; .*preprocess='auto'"):
            SVMTuner().fit(df.assign(t=col), y)
        # "auto" reads them as nanoseconds: the same model as the column of numbers
        a = SVMTuner(preprocess="auto").fit(df.assign(t=col), y)
        b = SVMTuner(preprocess="auto").fit(df.assign(t=np.asarray(col).astype("int64")), y)
        np.testing.assert_allclose(
            a.decision_function(df.assign(t=col)),
            b.decision_function(df.assign(t=np.asarray(col).astype("int64"))),
        )
    with pytest.raises(ValueError, match="Complex data not supported"):
        SVMTuner(preprocess="auto").fit(df.assign(z=1j), y)


@pytest.mark.parametrize(
    "class_weight,match",
    [
        ({"z": 1}, "names labels that are not classes of y: 'z' (the classes are 'a', 'b')"),
        ({"a": 0}, "class_weight['a'] must be a finite number > 0, got 0"),
        ({"a": np.inf}, "finite number > 0"),
        ({"a": "2"}, "finite number > 0"),
        ("equal", "class_weight must be None, 'balanced' or a dict"),
        ([1, 2], "class_weight must be None, 'balanced' or a dict"),
    ],
)
def test_bad_class_weight_is_a_clear_error(class_weight, match):
    X, y = _data()
    y = np.where(y == "neg", "a", "b")
    with pytest.raises(ValueError, match=re.escape(match)):
        SVMTuner(class_weight=class_weight).fit(X, y)


# ------------------------------------------------------------------ hardening regressions
_INTEGER_OPTIONS = [
    (method, option)
    for method, options in {
        "rbsvm": ["max_iter", "restarts", "jump_restarts", "max_eval"],
        "span": ["max_iter", "restarts", "jump_restarts", "max_eval"],
        "radius_margin": ["max_iter", "restarts", "jump_restarts", "max_eval"],
        "rbsvm_lowrank": ["rank", "refresh", "start_sample", "max_iter", "max_eval"],
        "span_lowrank": ["rank", "refresh", "start_sample", "restarts", "jump_restarts"],
        "radius_margin_lowrank": ["rank", "refresh", "start_sample", "max_iter"],
        "span_rule": ["n_splits"],
        "ss": ["n_components", "max_exact", "max_samples"],
    }.items()
    for option in options
]


@pytest.mark.parametrize("method, option", _INTEGER_OPTIONS)
def test_integer_option_given_infinity_names_the_option(method, option):
    from svmtune.methods.base import get_selector

    for value in (float("inf"), -float("inf"), 1e999, np.float64("inf"), 2.5, True):
        with pytest.raises(ValueError, match=rf"^{option}\b.* must be an integer >= "):
            get_selector(method, {option: value})
    get_selector(method, {option: 100.0})  # an integral float (JSON, CLI) is an integer


def test_check_int_and_bool_option():
    from svmtune._option_values import check_bool_option, check_int_option

    assert check_int_option("k", np.int64(3), minimum=1) == 3
    assert check_int_option("k", 3.0, minimum=1) == 3
    assert check_int_option("k", None, minimum=1, allow_none=True) is None
    for bad in (None, "3", float("nan"), float("inf"), 0, 0.5, np.bool_(True), [3]):
        with pytest.raises(ValueError, match="k must be an integer >= 1"):
            check_int_option("k", bad, minimum=1)
    assert check_bool_option("b", np.bool_(True)) is True
    for bad in ("false", "", 0, 1, float("nan"), None, []):
        with pytest.raises(ValueError, match="b must be True or False"):
            check_bool_option("b", bad)


def test_ss_rescale_accepts_only_booleans():
    X, y = _data(40)
    for bad in ("x", "false", float("nan"), [], 0):
        with pytest.raises(ValueError, match="rescale must be True or False"):
            SVMTuner(method="ss", method_params={"rescale": bad}).fit(X, y)
    on = SVMTuner(method="ss", method_params={"rescale": True}).fit(X, y)
    off = SVMTuner(method="ss", method_params={"rescale": False}).fit(X, y)
    assert on.best_params_["C"] != off.best_params_["C"]


@pytest.mark.parametrize("min_resources", [1, 2, 10])
def test_halving_small_min_resources_says_what_it_must_be(min_resources):
    X, y = _data(60)
    grid = {"log2_sigma": (-1, 1, 1), "log2_C": (-1, 1, 1), "min_resources": min_resources}
    with pytest.raises(ValueError, match=r"min_resources=\d+ .* must lie between 40 and 60"):
        SVMTuner(method="halving", method_params=grid).fit(X, y)
    with pytest.raises(ValueError, match="min_resources must be 'exhaust', 'smallest' or a"):
        SVMTuner(method="halving", method_params={**grid, "min_resources": True}).fit(X, y)
    with pytest.raises(ValueError, match=r"must lie between 40 and 60"):
        SVMTuner(method="halving", method_params={**grid, "min_resources": 61}).fit(X, y)
    t = SVMTuner(method="halving", method_params={**grid, "min_resources": 40}).fit(X, y)
    assert t.selection_.info["n_resources_per_iter"][0] == 40


def test_lowrank_search_with_huge_uniform_weights_names_sample_weight():
    from .conftest import make_problem

    X, y = make_problem(60, 3, 0)
    with pytest.raises(ValueError, match=r"sample_weight up to 1e\+12 .* divide sample_weight"):
        SVMTuner(method="radius_margin_lowrank").fit(X, y, sample_weight=np.full(60, 1e12))
    # the same weights divided by their mean: a search
    t = SVMTuner(method="radius_margin_lowrank").fit(X, y, sample_weight=np.ones(60))
    assert np.isfinite(t.best_params_["C"])


@pytest.mark.parametrize("scale", [1e101, 1e-101])
def test_sample_weights_beyond_float_range_of_c_times_w_are_refused(scale):
    X, y = _data(20)
    w = np.ones(20)
    w[3] = scale
    with pytest.raises(ValueError, match="sample_weight has positive values from .* must lie"):
        SVMTuner().fit(X, y, sample_weight=w)


@pytest.mark.parametrize("method", ["rbsvm", "span"])
def test_tiny_uniform_weights_keep_the_estimate_an_error_rate(method):
    """sum(w * wrong) / sum(w) rounds past 1 by an ulp for some tiny weights: the estimate
    stays in [0, 1] instead of failing Selection's check."""
    from .conftest import make_problem

    X, y = make_problem(60, 3, 0)
    t = SVMTuner(method=method).fit(X, y, sample_weight=np.full(60, 1e-12))
    assert 0.0 <= t.estimate_ <= 1.0


def test_three_dimensional_X_gets_scikit_learns_message():
    X, y = _data(12)
    with pytest.raises(ValueError, match="Found array with dim 3"):
        SVMTuner().fit(X.reshape(12, 3, 1), y)
    with pytest.raises(ValueError, match="Found array with dim 3"):
        SVMTuner(preprocess="auto").fit(X.reshape(12, 3, 1), y)


def test_auto_preprocess_names_a_dict_in_an_object_column():
    X, y = _data(12)
    colour = ["red", "blue"] * 6
    colour[4] = {"foo": "bar"}
    frame = pd.DataFrame({"a": X[:, 0], "colour": pd.Series(colour, dtype=object)})
    with pytest.raises(TypeError, match=r"X column 'colour', row 4 holds a dict"):
        SVMTuner(preprocess="auto").fit(frame, y)
    arr = X.astype(object)
    arr[0, 0] = ["a"]
    with pytest.raises(TypeError, match=r"argument must be a string or a number"):
        SVMTuner(preprocess="auto").fit(arr, y)


def test_raw_features_whose_squared_distances_overflow_are_refused():
    """preprocess='none' hands X to the kernels as it is: values near 1e160 made squared
    distances infinite ("D2 holds NaN ..." or libsvm's "dual coefficients ... not finite",
    found by the fuzz suite); now X and preprocess are named."""
    X, y = _data(8)
    with pytest.raises(ValueError, match=r"X has values up to .* preprocess='none'"):
        SVMTuner(method="radius_margin", preprocess="none").fit(X * 1e160, y)
    SVMTuner(preprocess="none").fit(X * 1e100, y)  # squares up to 1e200: fine
    # squares below float64's smallest normal number are 0: "gamma ... got inf" before
    with pytest.raises(ValueError, match=r"X has values no larger than .* underflow to 0"):
        SVMTuner(preprocess="none").fit(X * 1e-160, y)
    SVMTuner(preprocess="none").fit(X * 1e-100, y)


def test_distance_range_reads_sparse_x_at_its_entries():
    import scipy.sparse as sp

    from svmtune._validation import check_distance_range

    X = sp.random(50, 400, density=0.01, format="csr", random_state=0)
    check_distance_range(X)  # ordinary values pass, without densifying
    X.data[0] = 1e160
    with pytest.raises(ValueError, match="preprocess='none'"):
        check_distance_range(X)
    check_distance_range(sp.csr_matrix((3, 4)))  # all zeros: nothing to overflow
