"""Preprocessing is fitted on training data only and handles mixed, missing, unseen values."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from svmtune import SVMTuner
from svmtune.exceptions import UnseenCategoryWarning
from svmtune.preprocess import (
    PREPROCESS_MODES,
    categorical_columns,
    make_preprocessor,
    needs_auto,
    transform_validated,
    unseen_categories,
)

from .conftest import assert_params_close


def _train_test():
    train = pd.DataFrame(
        {
            "num": [1.0, 2.0, 4.0, np.nan, 10.0, 3.0],
            "cat": ["a", "b", "a", "b", None, "a"],
        }
    )
    test = pd.DataFrame({"num": [np.nan, 100.0], "cat": ["zzz", None]})
    return train, test


def test_auto_is_fitted_on_train_only():
    train, test = _train_test()
    pre = make_preprocessor("auto", train).fit(train)
    Zt = pre.transform(test)
    assert Zt.shape == (2, 3)  # num + one-hot(a, b)
    observed = np.array([1.0, 2.0, 4.0, 10.0, 3.0])
    median = np.median(observed)  # 3.0, the training median
    filled = np.array([1.0, 2.0, 4.0, median, 10.0, 3.0])  # training column after imputation
    mean, std = filled.mean(), filled.std()
    # NaN in the test set -> the TRAINING median, standardised with TRAINING mean/std
    assert Zt[0, 0] == pytest.approx((median - mean) / std)
    assert Zt[1, 0] == pytest.approx((100.0 - mean) / std)
    # unseen category -> all-zero one-hot block; missing category -> training mode "a"
    assert np.array_equal(Zt[0, 1:], [0.0, 0.0])
    assert np.array_equal(Zt[1, 1:], [1.0, 0.0])
    # transforming the test set does not refit anything
    again = pre.transform(train)
    assert np.allclose(again, make_preprocessor("auto", train).fit_transform(train))


def test_tuner_auto_predicts_on_unseen_category_and_nan():
    rng = np.random.default_rng(0)
    n = 60
    train = pd.DataFrame({"x": rng.normal(size=n), "c": rng.choice(["u", "v", "w"], n)})
    y = np.where(train["x"] + (train["c"] == "u") > 0.3, "pos", "neg")
    train.loc[[3, 7], "x"] = np.nan
    train.loc[5, "c"] = None
    tuner = SVMTuner(preprocess="auto").fit(train, y)
    test = pd.DataFrame({"x": [np.nan, 0.5], "c": ["never-seen", None]})
    with pytest.warns(UnseenCategoryWarning, match="column 'c': 'never-seen'"):
        pred = tuner.predict(test)
    assert set(pred) <= {"pos", "neg"} and len(pred) == 2
    with pytest.warns(UnseenCategoryWarning):
        assert np.all(np.isfinite(tuner.decision_function(test)))


def _tuner_with_two_categorical_columns():
    rng = np.random.default_rng(0)
    n = 60
    train = pd.DataFrame(
        {"x": rng.normal(size=n), "c": rng.choice(["u", "v", "w"], n), "d": ["p", "q"] * 30}
    )
    y = np.where(train["x"] + (train["c"] == "u") > 0.3, "pos", "neg")
    return SVMTuner(method="default", preprocess="auto").fit(train, y), train


def test_unseen_categories_warn_once_per_call_naming_columns_and_values():
    tuner, train = _tuner_with_two_categorical_columns()
    test = pd.DataFrame(
        {"x": [0.1, 0.2, 0.3, 0.4], "c": ["teal", "u", "teal", None], "d": ["p", "r", "s", "q"]}
    )
    for call in (tuner.predict, tuner.predict_proba, tuner.decision_function):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call(test)
        unseen = [w for w in caught if issubclass(w.category, UnseenCategoryWarning)]
        assert len(unseen) == 1, [str(w.message) for w in caught]
        message = str(unseen[0].message)
        # each column once, each of its unseen values once; a missing value is imputed
        assert "column 'c': 'teal'; column 'd': 'r', 's'" in message
        assert "None" not in message and "'u'" not in message
        assert unseen[0].filename == __file__  # points at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # categories seen in training: no warning
        tuner.predict(train.iloc[:5])
    assert unseen_categories(tuner.preprocessor_, test) == {"c": ["teal"], "d": ["r", "s"]}


def test_unseen_categories_of_an_array_are_named_by_position():
    tuner, train = _tuner_with_two_categorical_columns()
    arr = train.to_numpy(dtype=object)
    y = tuner.predict(train)
    fitted = SVMTuner(method="default", preprocess="auto").fit(arr, y)
    new = arr[:3].copy()
    new[0, 2] = 7  # a number in a text column: the category "7"
    new[1, 2], new[2, 2] = 7.0, True  # 7.0 is 7 to a hash table, not to the encoder
    with pytest.warns(UnseenCategoryWarning, match=r"column 2: '7', '7.0', 'True'$"):
        fitted.predict(new)
    # standard preprocessing has no categories
    assert unseen_categories(SVMTuner(method="default").fit(arr[:, :1], y).preprocessor_, arr) == {}


def test_nullable_pandas_dtypes():
    df = pd.DataFrame(
        {
            "i": pd.array([1, None, 3, 4], dtype="Int64"),
            "s": pd.array(["x", None, "y", "x"], dtype="string"),
            "b": pd.array([True, None, False, True], dtype="boolean"),
            "k": pd.Categorical(["u", "v", None, "u"]),
        }
    )
    assert needs_auto(df)
    assert categorical_columns(df) == ["s", "b", "k"]
    Z = make_preprocessor("auto", df).fit_transform(df)
    assert Z.shape == (4, 1 + 2 + 2 + 2) and np.all(np.isfinite(Z))


def test_object_arrays():
    A = np.array([[1.0, "a"], [None, "b"], [3.0, "a"]], dtype=object)
    assert categorical_columns(A) == [1] and needs_auto(A)
    Z = make_preprocessor("auto", A).fit_transform(A)
    assert Z.shape == (3, 3) and np.all(np.isfinite(Z))


def test_needs_auto():
    X = np.arange(6.0).reshape(3, 2)
    assert not needs_auto(X) and categorical_columns(X) == []
    X[1, 1] = np.nan
    assert needs_auto(X)
    assert not needs_auto(pd.DataFrame({"a": [1.0, 2.0]}))
    assert needs_auto(pd.DataFrame({"a": [1.0, 2.0], "c": ["x", "y"]}))


def test_infinity_is_rejected_with_the_column():
    df = pd.DataFrame({"ok": [1.0, 2.0, 3.0], "bad": [1.0, np.inf, 2.0]})
    with pytest.raises(ValueError, match="infinity in column.*bad"):
        make_preprocessor("auto", df).fit(df)


def test_degenerate_columns_give_no_nan():
    df = pd.DataFrame({"const": [5.0] * 4, "empty": [np.nan] * 4, "x": [1.0, 2.0, 3.0, 4.0]})
    with pytest.warns(UserWarning, match="'empty' have no observed value"):
        pre = make_preprocessor("auto", df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # kept as a constant: no warning at fit or transform
        Z = pre.fit_transform(df)
        Z2 = pre.transform(df.iloc[:2])
    assert np.all(np.isfinite(Z)) and np.allclose(Z[:, :2], 0.0) and Z.shape == (4, 3)
    np.testing.assert_allclose(Z2, Z[:2])
    Zs = make_preprocessor("standard").fit_transform(df[["const", "x"]].to_numpy())
    assert np.all(np.isfinite(Zs)) and np.allclose(Zs[:, 0], 0.0)


def test_modes():
    assert PREPROCESS_MODES == ("standard", "auto", "none")
    X = np.array([[1.0, 2.0], [3.0, 5.0]])
    assert np.array_equal(make_preprocessor("none").fit_transform(X), X)
    with pytest.raises(ValueError, match="preprocess must be one of"):
        make_preprocessor("minmax")


def test_many_categories_warn_once_at_fit():
    rng = np.random.default_rng(0)
    n = 60
    X = pd.DataFrame(
        {
            "amount": [f"{rng.integers(1, 9)},{rng.integers(100, 999)}" for _ in range(n)],
            "colour": rng.choice(["red", "green", "blue"], n),
            "x": rng.normal(size=n),
        }
    )
    with pytest.warns(UserWarning, match=r"'amount' \(\d+ distinct values\) in 60 rows") as rec:
        pre = make_preprocessor("auto", X)
    assert not any("colour" in str(r.message) for r in rec)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pre.fit(X).transform(X)  # fit and transform do not warn again
    # few rows: 20 distinct values are not "many"; an object array names the column index
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_preprocessor("auto", X.iloc[:20])
    with pytest.warns(UserWarning, match=r"column\(s\) 0 \("):
        make_preprocessor("auto", X[["amount", "x"]].to_numpy(dtype=object))


def test_the_warnings_point_at_the_caller():
    from svmtune import SVMTuner

    X = pd.DataFrame({"empty": [np.nan] * 8, "x": np.arange(8.0)})
    y = np.array([0, 1] * 4)
    with pytest.warns(UserWarning, match="no observed value") as rec:
        make_preprocessor("auto", X)
    assert rec[0].filename == __file__
    tuner = SVMTuner(method="default", preprocess="auto")
    with pytest.warns(UserWarning, match="no observed value") as rec:
        tuner.fit(X, y)
    assert [r.filename for r in rec if "no observed value" in str(r.message)] == [__file__]


@pytest.mark.parametrize("mode", PREPROCESS_MODES)
def test_a_row_number_column_is_warned_about(mode):
    rng = np.random.default_rng(0)
    n = 30
    df = pd.DataFrame(
        {
            "id": np.arange(1001, 1001 + 2 * n, 2),  # increasing, not consecutive (a split)
            "count": rng.integers(0, 50, n),
            "x": np.sort(rng.normal(size=n)),  # increasing, but not whole numbers
        }
    )
    with pytest.warns(UserWarning, match=r"column\(s\) 'id' hold whole numbers that increase"):
        make_preprocessor(mode, df)
    with pytest.warns(UserWarning, match=r"column\(s\) 0 hold"):
        make_preprocessor(mode, df.to_numpy(dtype=float))
    quiet = [
        df[["count", "x"]],
        df.iloc[::-1],  # decreasing
        df.iloc[:20],  # too few rows to tell
        df.assign(id=df["id"].where(df.index != 3, df["id"][2])),  # a repeated value
        df.assign(id=df["id"].astype(float).where(df.index != 3)),  # a missing value
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for X in quiet:
            make_preprocessor(mode, X)


def test_object_columns_of_numbers_are_numeric():
    from decimal import Decimal

    n = 30
    rng = np.random.default_rng(0)
    x = rng.normal(size=n)
    df = pd.DataFrame(
        {
            "num": pd.Series(list(x[:-1]) + [None], dtype=object),
            "dec": pd.Series([Decimal(str(round(v, 3))) for v in x], dtype=object),
            "text": pd.Series(["1", "2"] * (n // 2), dtype=object),  # digits as text: codes
            "flag": pd.Series([True, False] * (n // 2), dtype=object),
        }
    )
    assert categorical_columns(df) == ["text", "flag"]
    Z = make_preprocessor("auto", df).fit_transform(df)
    assert Z.shape == (n, 2 + 2 + 2)
    # the numeric columns are imputed and standardised, not one-hot encoded
    filled = np.r_[x[:-1], np.median(x[:-1])]
    np.testing.assert_allclose(Z[:, 0], (filled - filled.mean()) / filled.std())
    assert categorical_columns(df[["num", "dec"]]) == [] and needs_auto(df[["num", "dec"]])
    assert not needs_auto(df[["dec"]])


def test_integer_column_labels_are_not_positions():
    # pandas.read_csv(header=None) names columns 0, 1, 2, ...; after dropping the label
    # column the labels are no longer the positions
    rng = np.random.default_rng(0)
    n = 40
    raw = pd.DataFrame(
        {
            0: rng.normal(size=n),
            1: rng.choice(["red", "blue"], n),
            2: rng.integers(0, 2, n),  # the label
            3: rng.normal(size=n),
        }
    )
    X = raw.drop(columns=[2])  # columns 0, 1, 3
    Z = make_preprocessor("auto", X).fit_transform(X)
    assert Z.shape == (n, 2 + 2)
    np.testing.assert_allclose(Z[:, 1], (X[3] - X[3].mean()) / X[3].std(ddof=0))
    # labels that are a permutation of the positions: column 2 is the categorical one
    Y = pd.DataFrame({0: rng.normal(size=n), 2: rng.random(n) < 0.5, 1: rng.normal(size=n)})
    assert categorical_columns(Y) == [2]
    Z = make_preprocessor("auto", Y).fit_transform(Y)
    assert Z.shape == (n, 2 + 2)
    np.testing.assert_allclose(Z[:, 1], (Y[1] - Y[1].mean()) / Y[1].std(ddof=0))
    assert SVMTuner(preprocess="auto").fit(X, raw[2]).n_features_in_ == 3


def _with_missing(rng, n: int, d: int) -> np.ndarray:
    X = rng.integers(0, 5, (n, d)).astype(float)  # ties, so the median/mode rules matter
    X[rng.random((n, d)) < 0.3] = np.nan
    X[:, -1] = np.nan  # a column with no observed value
    return X


@pytest.mark.parametrize("n", [9, 10])
def test_weighted_imputer_is_simple_imputer_on_repeated_rows(n):
    from sklearn.impute import SimpleImputer

    from svmtune.preprocess import WeightedImputer

    rng = np.random.default_rng(n)
    X = _with_missing(rng, n, 4)
    # the categorical branch's input: strings, NaN for missing (see _as_categories)
    cats = np.where(np.isnan(X), "", np.nan_to_num(X).astype(int).astype(str)).astype(object)
    cats[np.isnan(X)] = np.nan
    test = _with_missing(rng, 5, 4)
    test_cats = np.full(test.shape, "0", dtype=object)
    test_cats[np.isnan(test)] = np.nan
    w = rng.integers(0, 4, n)  # 0 drops a row
    for strategy, A, B in [("median", X, test), ("most_frequent", cats, test_cats)]:
        simple = SimpleImputer(strategy=strategy, keep_empty_features=True)
        ours = WeightedImputer(strategy=strategy)
        # without weights: SimpleImputer's results
        np.testing.assert_array_equal(ours.fit(A).transform(B), simple.fit(A).transform(B))
        # integer weights: SimpleImputer on the rows repeated
        repeated = np.repeat(A, w, axis=0)
        np.testing.assert_array_equal(
            ours.fit(A, sample_weight=w).transform(B), simple.fit(repeated).transform(B)
        )
    with pytest.raises(ValueError, match="strategy must be"):
        WeightedImputer(strategy="mean").fit(X)


def test_auto_preprocessing_counts_rows_by_weight():
    from svmtune.preprocess import fit_preprocessor

    rng = np.random.default_rng(1)
    n = 30
    df = pd.DataFrame(
        {
            "x": np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 9, n)),
            "c": rng.choice(["a", "b", None], n),
        }
    )
    w = rng.integers(0, 3, n)
    repeated = df.loc[df.index.repeat(w)]
    ours = fit_preprocessor(make_preprocessor("auto", df), df, w)
    expected = make_preprocessor("auto", repeated).fit(repeated)
    np.testing.assert_allclose(ours.transform(df), expected.transform(df))


def test_tuner_auto_weights_act_as_in_standard_mode():
    rng = np.random.default_rng(0)
    n = 60
    y = (rng.random(n) < 0.25).astype(int)
    X = rng.normal(size=(n, 3)) * [1, 5, 0.2] + 2 * y[:, None]
    for kw in [{}, {"class_weight": "balanced"}]:
        a = SVMTuner(method="esdr", preprocess="standard", **kw).fit(X, y)
        b = SVMTuner(method="esdr", preprocess="auto", **kw).fit(X, y)
        assert a.best_params_ == b.best_params_
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))
    # rows of weight 0 are as if removed, outliers and an unseen category included
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(k=rng.choice(["u", "v"], n))
    junk = pd.DataFrame(rng.normal(size=(15, 3)) * 50, columns=["a", "b", "c"]).assign(k="w")
    both = pd.concat([df, junk], ignore_index=True)
    y_both = np.r_[y, rng.integers(0, 2, 15)]
    w = np.r_[np.ones(n), np.zeros(15)]
    # (a closed-form criterion: K-fold searches fold the rows of weight 0 too)
    a = SVMTuner(method="rbsvm", preprocess="auto").fit(df, y)
    b = SVMTuner(method="rbsvm", preprocess="auto").fit(both, y_both, sample_weight=w)
    assert_params_close(b.best_params_, a.best_params_, rel=1e-9)
    np.testing.assert_allclose(a.decision_function(df), b.decision_function(df), atol=1e-8)


def test_pd_na_in_object_columns_is_missing():
    rng = np.random.default_rng(0)
    n = 40
    y = np.arange(n) % 2
    df = pd.DataFrame(rng.normal(size=(n, 2)) + y[:, None], columns=["a", "b"])
    with_na = df.assign(b=pd.Series([pd.NA, *df["b"][1:]], dtype=object))
    with_none = df.assign(b=pd.Series([None, *df["b"][1:]], dtype=object))
    assert categorical_columns(with_na) == [] and needs_auto(with_na)
    arr = with_na.to_numpy(dtype=object)
    assert categorical_columns(arr) == []
    a = SVMTuner(preprocess="auto").fit(with_na, y)
    b = SVMTuner(preprocess="auto").fit(with_none, y)
    np.testing.assert_allclose(a.decision_function(with_na), b.decision_function(with_none))
    assert SVMTuner(preprocess="auto").fit(arr, y).n_features_in_ == 2
    for X in (with_na, with_none):  # standard mode names the column and the fix
        with pytest.raises(ValueError, match=r"X contains NaN \(1 cell missing, columns 'b'\)"):
            SVMTuner().fit(X, y)


@pytest.mark.parametrize("kind", ["float64", "float32", "int", "sparse", "weighted"])
def test_transform_validated_is_the_scalers_transform(kind):
    """The training rows scaled from the fitted scaler's statistics are exactly its
    ``transform``'s (same dtype, same bits): only the second ``check_array`` goes."""
    import scipy.sparse as sp
    from sklearn.preprocessing import StandardScaler

    rng = np.random.RandomState(3)
    X = rng.randn(40, 5) * [1.0, 3.0, 0.1, 10.0, 1.0] + 2.0
    X[:, 4] = 7.0  # a constant column: scale 1
    w = rng.uniform(0.1, 3.0, 40) if kind == "weighted" else None
    if kind == "float32":
        X = X.astype(np.float32)
    elif kind == "int":
        X = np.round(X).astype(int)
    elif kind == "sparse":
        X = sp.csr_matrix(np.where(X > 2.5, X, 0.0))
    scaler = StandardScaler(with_mean=kind != "sparse").fit(X, sample_weight=w)
    expected, got = scaler.transform(X), transform_validated(scaler, X)
    assert got.dtype == expected.dtype
    if kind == "sparse":
        assert sp.issparse(got) and (got != expected).nnz == 0
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("weighted", [False, True])
def test_a_large_dense_array_is_scaled_from_row_chunks(monkeypatch, weighted):
    """Above FIT_CHUNK_VALUES values a standard scaler is fitted chunk by chunk (no chunk
    above the limit; issue 64), with a single fit's mean and scale to rounding; at or below
    it, by one fit, bit for bit; a fitted scaler is refitted, not added to."""
    from sklearn.preprocessing import StandardScaler

    import svmtune.preprocess as pre_module

    rng = np.random.default_rng(0)
    X = rng.normal(3.0, 2.0, size=(1000, 4))
    w = rng.uniform(0.5, 2.0, 1000) if weighted else None
    whole = StandardScaler().fit(X, sample_weight=w)
    seen = []
    partial = StandardScaler.partial_fit

    def spy(self, Xc, y=None, sample_weight=None):
        seen.append(Xc.shape[0])
        return partial(self, Xc, y, sample_weight)

    monkeypatch.setattr(StandardScaler, "partial_fit", spy)
    one = pre_module.fit_preprocessor(StandardScaler(), X, w)
    assert np.array_equal(one.mean_, whole.mean_) and np.array_equal(one.scale_, whole.scale_)
    monkeypatch.setattr(pre_module, "FIT_CHUNK_VALUES", 4 * 300)
    fitted = StandardScaler().fit(X[:10] + 100.0)
    seen.clear()
    chunked = pre_module.fit_preprocessor(fitted, X, w)
    assert max(seen) <= 300 and len(seen) == 4  # fit's own partial_fit and three more
    np.testing.assert_allclose(chunked.mean_, whole.mean_, rtol=1e-13)
    np.testing.assert_allclose(chunked.scale_, whole.scale_, rtol=1e-13)
    assert chunked.n_samples_seen_ == pytest.approx(whole.n_samples_seen_, rel=1e-14)
