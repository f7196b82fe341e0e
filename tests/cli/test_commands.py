"""The command line: datasets, select, demo, and one-line errors for bad input."""

from __future__ import annotations

import json

import click
import joblib
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from svmtune import SVMTuner, __version__
from svmtune.cli import main, parse_param, to_jsonable
from svmtune.datasets import datasets_table

ENV = {"COLUMNS": "200"}  # wide rich tables in the captured output
TINY_GRID = ["--param", "log2_sigma=(0,1,1)", "--param", "log2_C=(-1,0,1)", "--param", "n_splits=3"]


def run(*args, ok=True):
    result = CliRunner().invoke(main, [str(a) for a in args], env=ENV)
    if ok:
        assert result.exit_code == 0, result.output
        assert result.exception is None
    return result


def assert_one_line_error(result, match: str, code: int = 1):
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    errors = [ln for ln in result.output.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1, result.output
    assert match in errors[0], errors[0]


@pytest.fixture
def csv_file(tmp_path):
    rng = np.random.default_rng(0)
    n = 40
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, "yes", "no")
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path, df


# ---------------------------------------------------------------------------- basics
def test_help_version_and_group():
    out = run("--help").output
    for cmd in ("datasets", "select", "demo", "predict"):
        assert cmd in out
    assert __version__ in run("--version").output
    assert isinstance(main, click.Group)

    @click.command("extra-test-cmd")
    def extra():
        click.echo("extra ran")

    main.add_command(extra)
    try:
        assert "extra ran" in run("extra-test-cmd").output
    finally:
        main.commands.pop("extra-test-cmd")


def test_parse_param_and_json_helpers():
    assert parse_param("log2_C=(-2,2,1)") == ("log2_C", (-2, 2, 1))
    assert parse_param("scoring=f1") == ("scoring", "f1")
    assert parse_param("n_splits = 5") == ("n_splits", 5)
    with pytest.raises(click.BadParameter):
        parse_param("no-equals-sign")
    with pytest.raises(click.BadParameter, match=r"log2_C=\(-2,2: not a Python literal"):
        parse_param("log2_C=(-2,2")
    assert parse_param("x=") == ("x", "")
    doc = to_jsonable({0: np.float64(np.nan), "a": np.arange(2), "t": (np.int64(1), "x")})
    assert doc == {"0": None, "a": [0, 1], "t": [1, "x"]}


def test_datasets_table_and_json():
    out = run("datasets").output
    for name in ("pima", "banknote", "mnist_2v9_test", "ijcnn1_train"):
        assert name in out
    doc = json.loads(run("datasets", "--json").output)
    assert doc["datasets"] == json.loads(json.dumps(datasets_table()))


# ---------------------------------------------------------------------------- select
def test_select_json(csv_file):
    path, df = csv_file
    doc = json.loads(run("select", path, "--method", "default", "--json").output)
    assert doc["data"]["n"] == 40 and doc["data"]["d"] == 3
    assert doc["data"]["classes"] == {
        "no": int((df.label == "no").sum()),
        "yes": int((df.label == "yes").sum()),
    }
    ref = SVMTuner(method="default", random_state=0).fit(df[["a", "b", "c"]], df.label)
    assert doc["best_params"] == pytest.approx(ref.best_params_)
    assert doc["estimate"] is None and doc["n_svm_fits"] == 0
    assert doc["preprocess"] == "standard" and doc["selection_time"] >= 0


def test_select_table_with_method_params_and_info(csv_file):
    path, _ = csv_file
    out = run("select", path, "--method", "grid", *TINY_GRID).output
    for key in ("sigma", "gamma", "estimate", "criterion", "selection_time", "n_svm_fits"):
        assert key in out
    assert "12" in out  # 2 x 2 candidates x 3 folds
    doc = json.loads(run("select", path, "--method", "grid", *TINY_GRID, "--json").output)
    assert doc["n_svm_fits"] == 12 and doc["method_params"]["log2_C"] == [-1, 0, 1]
    assert 0.0 <= doc["estimate"] <= 1.0
    assert isinstance(doc["info"], dict)


def test_select_out_round_trip(csv_file, tmp_path):
    path, df = csv_file
    model = tmp_path / "model.joblib"
    run("select", path, "--method", "grid", *TINY_GRID, "--random-state", 3, "--out", model)
    tuner = joblib.load(model)
    X = df[["a", "b", "c"]]
    ref = SVMTuner(
        method="grid",
        method_params={"log2_sigma": (0, 1, 1), "log2_C": (-1, 0, 1), "n_splits": 3},
        random_state=3,
    ).fit(X, df.label)
    assert tuner.best_params_ == ref.best_params_
    assert np.array_equal(tuner.predict(X), ref.predict(X))


# ---------------------------------------------------------------------------- predict
@pytest.fixture
def saved_model(csv_file, tmp_path):
    path, df = csv_file
    model = tmp_path / "model.joblib"
    run("select", path, "--method", "grid", *TINY_GRID, "--out", model)
    return model, joblib.load(model), path, df


def test_predict_writes_the_models_predictions_and_scores_labelled_rows(saved_model, tmp_path):
    model, tuner, path, df = saved_model
    X = df[["a", "b", "c"]]
    r = run("predict", "--trust-pickle", model, path)
    lines = r.output.splitlines()  # the CSV, then the note (standard error)
    assert lines[0] == "prediction" and lines[1 : len(df) + 1] == list(tuner.predict(X))
    acc = float(np.mean(tuner.predict(X) == df.label))
    assert f"{len(df)} rows predicted with {model}; accuracy {acc:.4f} on the 40 rows" in r.output
    # columns matched by name: reordered, an extra column, no label column, --proba
    other = tmp_path / "new.csv"
    df[["c", "label", "a", "b"]].assign(extra=1.0).iloc[:7].drop(columns="label").to_csv(
        other, index=False
    )
    out = tmp_path / "pred.csv"
    r = run("predict", "--trust-pickle", model, other, "--proba", "--out", out)
    assert "accuracy" not in r.output and f"written to {out}" in r.output
    got = pd.read_csv(out)
    assert list(got.columns) == ["prediction", "p(no)", "p(yes)"]
    assert list(got.prediction) == list(tuner.predict(X.iloc[:7]))
    np.testing.assert_allclose(got[["p(no)", "p(yes)"]], tuner.predict_proba(X.iloc[:7]))
    # --target names the label column (any name); labels given as numbers are compared as
    # numbers
    df.assign(truth=np.where(df.label == "yes", "yes", "no")).drop(columns="label").to_csv(
        other, index=False
    )
    assert (
        f"accuracy {acc:.4f} on the 40 rows labelled in 'truth'"
        in run("predict", "--trust-pickle", model, other, "--target", "truth").output
    )


def test_predict_numeric_labels_svmlight_and_bundled(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4))
    X[:, 3] = np.where(X[:, 3] > 0.5, X[:, 3], 0.0)
    y = np.where(X[:, 0] > 0, 1, -1)
    train = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(train))
    model = tmp_path / "m.joblib"
    run("select", train, "--method", "default", "--out", model)
    tuner = joblib.load(model)
    # a file whose last feature column is all zero: svmlight leaves it out, it is 0
    test = tmp_path / "test.svm"
    X0 = X.copy()
    X0[:, 3] = 0.0
    dump_svmlight_file(X0[:5], y[:5].astype(float), str(test))
    out = tmp_path / "p.csv"
    r = run("predict", "--trust-pickle", model, test, "--out", out)
    names = [f"f{j + 1}" for j in range(4)]
    assert list(pd.read_csv(out).prediction) == list(
        tuner.predict(pd.DataFrame(X0[:5], columns=names))
    )
    acc = float(np.mean(tuner.predict(pd.DataFrame(X0[:5], columns=names)) == y[:5]))
    assert f"accuracy {acc:.4f} on the 5 rows labelled in 'target'" in r.output
    # labels read as floats (a missing one makes the column float) are the classes -1, 1
    csv = tmp_path / "test.csv"
    pd.DataFrame(X0[:5], columns=names).assign(target=[1.0, -1.0, np.nan, 1.0, -1.0]).to_csv(
        csv, index=False
    )
    pred = tuner.predict(pd.DataFrame(X0[:5], columns=names))
    keep = [0, 1, 3, 4]
    acc = float(np.mean(pred[keep] == np.array([1, -1, 1, -1])))
    assert (
        f"accuracy {acc:.4f} on the 4 rows labelled in 'target'"
        in run("predict", "--trust-pickle", model, csv).output
    )
    # KEEL: the @outputs attribute holds the labels, whatever its name
    rows = "".join(f"{a:.3f},{b:.3f},{'p' if a > 0 else 'n'}\n" for a, b in X[:, :2])
    keel = (
        "@relation r\n@attribute a real\n@attribute b real\n@attribute Type {n,p}\n"
        "@inputs a, b\n@outputs Type\n@data\n" + rows
    )
    keel_file = tmp_path / "k.dat"
    keel_file.write_text(keel)
    run("select", keel_file, "--method", "default", "--out", model)
    assert (
        "on the 30 rows labelled in 'Type'"
        in run("predict", "--trust-pickle", model, keel_file).output
    )
    # a bundled data set by name
    run("select", "iris", "--method", "default", "--out", model)
    assert "150 rows predicted" in run("predict", "--trust-pickle", model, "iris").output


def test_predict_errors(saved_model, tmp_path):
    model, _, path, df = saved_model
    lacking = tmp_path / "lacking.csv"
    df.drop(columns="b").to_csv(lacking, index=False)
    assert_one_line_error(
        run("predict", "--trust-pickle", model, lacking, ok=False),
        "lacks 1 of the model's feature columns: 'b'",
    )
    assert_one_line_error(
        run("predict", "--trust-pickle", path, path, ok=False),
        "(not a model saved by `svmtune select --out`?)",
    )
    other = tmp_path / "other.joblib"
    joblib.dump({"not": "a model"}, other)
    assert_one_line_error(
        run("predict", "--trust-pickle", other, path, ok=False), "holds a dict, not a fitted"
    )
    joblib.dump(SVMTuner(), other)
    assert_one_line_error(
        run("predict", "--trust-pickle", other, path, ok=False), "holds a SVMTuner, not a fitted"
    )
    assert_one_line_error(
        run("predict", "--trust-pickle", model, path, "--target", "nope", ok=False),
        "target column 'nope'",
    )
    assert_one_line_error(
        run("predict", "--trust-pickle", model, tmp_path / "nope.csv", ok=False), "not found"
    )
    assert_one_line_error(
        run("predict", "--trust-pickle", model, path, "--target", "a", ok=False),
        "--target 'a' names 'a', one of the model's feature columns",
        code=2,
    )
    # labels none of which the model knows: the accuracy says so
    relabelled = tmp_path / "relabelled.csv"
    df.assign(label=np.where(df.label == "yes", "Y", "N")).to_csv(relabelled, index=False)
    note = run("predict", "--trust-pickle", model, relabelled).output.splitlines()[-1]
    assert note.endswith("(no label there is one of the model's classes: 'no', 'yes')")
    assert "model's classes" not in run("predict", "--trust-pickle", model, path).output


def test_select_drop_columns(csv_file, tmp_path):
    path, df = csv_file
    f = tmp_path / "ids.csv"
    df.assign(id=[f"row{i}" for i in range(len(df))]).to_csv(f, index=False)
    rec = json.loads(run("select", f, "--method", "default", "--drop", "id", "--json").output)
    assert rec["data"]["d"] == 3 and rec["data"]["dropped"] == ["id"]
    # without --drop the identifier is warned about, as one plain line on stderr (a
    # separate process: pytest records warnings instead of printing them)
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "svmtune.cli", "select", str(f), "--method", "default"],
        capture_output=True,
        text=True,
        check=True,
    )
    warned = [ln for ln in proc.stderr.splitlines() if "'id'" in ln]
    assert len(warned) == 1 and warned[0].startswith("warning: categorical column(s) 'id'")
    assert ".py:" not in proc.stderr
    model = tmp_path / "m.joblib"
    run("select", f, "--method", "default", "--drop", "id", "--drop", "c", "--out", model)
    assert list(joblib.load(model).feature_names_in_) == ["a", "b"]
    assert (
        "rows predicted" in run("predict", "--trust-pickle", model, f).output
    )  # id and c are ignored
    assert_one_line_error(
        run("select", f, "--method", "default", "--drop", "nope", ok=False),
        "no column 'nope' in the features",
        code=2,
    )
    assert_one_line_error(
        run(
            "select",
            f,
            *[x for c in "abc" for x in ("--drop", c)],
            "--drop",
            "id",
            "--method",
            "default",
            ok=False,
        ),
        "drops every feature column",
        code=2,
    )


def test_select_bundled_name_and_auto_preprocess(tmp_path):
    doc = json.loads(run("select", "iris", "--method", "default", "--json").output)
    assert doc["data"]["dataset"] == "iris" and doc["data"]["n"] == 150
    assert len(doc["data"]["version"]) == 64
    mixed = tmp_path / "mixed.csv"
    mixed.write_text(
        "x,colour,target\n"
        + "".join(f"{i % 7},{'red' if i % 3 else 'blue'},{i % 2}\n" for i in range(30))
        + ",green,1\n"
    )
    doc = json.loads(run("select", mixed, "--method", "default", "--json").output)
    assert doc["preprocess"] == "auto" and doc["data"]["n"] == 31


def test_select_other_formats_and_weights(tmp_path):
    arff = tmp_path / "d.arff"
    rows = "".join(f"{i / 10},{'a' if i % 2 else 'b'},{'p' if i % 3 else 'q'}\n" for i in range(24))
    arff.write_text(
        "@relation r\n@attribute x numeric\n@attribute c {a,b}\n@attribute y {p,q}\n@data\n" + rows
    )
    doc = json.loads(run("select", arff, "--method", "default", "--json").output)
    assert doc["data"]["classes"] == {"p": 16, "q": 8}
    w = tmp_path / "w.csv"
    w.write_text("a,wt,target\n" + "".join(f"{i},{1 + i % 2},{i % 2}\n" for i in range(20)))
    doc = json.loads(
        run("select", w, "--method", "default", "--sample-weight", "wt", "--json").output
    )
    assert doc["data"]["d"] == 1 and doc["data"]["sample_weight"] == "wt"


def test_select_class_weight(tmp_path, csv_file):
    path, df = csv_file
    y = df["label"].to_numpy()
    import joblib

    for given, as_dict in (("yes=3", {"yes": 3.0}), ("balanced", "balanced")):
        out = tmp_path / "model.joblib"
        args = ["--class-weight", given, "--json", "--out", out]
        doc = json.loads(run("select", path, "--method", "default", *args).output)
        assert doc["class_weight"] == given
        got = joblib.load(out)
        assert got.class_weight == as_dict
        want = SVMTuner(method="default", class_weight=as_dict).fit(df[["a", "b", "c"]], y)
        plain = SVMTuner(method="default").fit(df[["a", "b", "c"]], y)
        np.testing.assert_allclose(got.estimator_.dual_coef_, want.estimator_.dual_coef_)
        assert got.estimator_.dual_coef_.shape != plain.estimator_.dual_coef_.shape or not (
            np.allclose(got.estimator_.dual_coef_, plain.estimator_.dual_coef_)
        )
    # numeric labels are matched as written (1 is the class 1)
    w = _csv(tmp_path, "a,target\n" + "".join(f"{i},{i % 2}\n" for i in range(20)), "n.csv")
    args = ["--method", "default", "--class-weight", "1=2"]
    assert json.loads(run("select", w, *args, "--json").output)["class_weight"] == "1=2"
    # float labels: as the table prints them ("1.0") or without ".0"
    f = _csv(tmp_path, "a,target\n" + "".join(f"{i},{i % 2}.0\n" for i in range(20)), "f.csv")
    for given in ("1.0=2", "1=2"):
        out = tmp_path / "f.joblib"
        run("select", f, "--method", "default", "--class-weight", given, "--out", out)
        assert joblib.load(out).class_weight == {1.0: 2.0}
    r = run("select", f, "--method", "default", "--class-weight", "2=1", ok=False)
    assert_one_line_error(r, "'2' is not a class of the data (classes: 0.0, 1.0)", code=2)
    assert "class weight" in run("select", w, "--method", "default", "--class-weight", "1=2").output
    for bad, match in (
        ("3=2", "'3' is not a class of the data (classes: 0, 1)"),
        ("1=x", "the weight of class '1' must be a number"),
        ("bal", "LABEL=WEIGHT pairs"),
        ("1=-1", "class_weight[1] must be a finite number > 0"),
    ):
        r = run("select", w, "--method", "default", "--class-weight", bad, ok=False)
        assert_one_line_error(r, match, code=2 if "must be a finite" not in match else 1)


# ---------------------------------------------------------------------------- errors
def _csv(tmp_path, text, name="bad.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "text,extra,match",
    [
        ("a,b,target\n1,inf,0\n2,3,0\n3,4,1\n5,5,1\n", [], "infinity"),
        ("a,b,target\n1,,0\n2,3,0\n3,4,1\n5,5,1\n", ["--preprocess", "standard"], "NaN"),
        ("a,b,target\n1,2,0\n2,3,0\n3,4,0\n", [], "1 class"),
        ("a,b,target\n1,2,0\n2,3,0\n3,4,1\n", [], "at least 2 samples"),
        ("a,b,species\n1,2,x\n2,3,y\n3,4,x\n4,5,y\n", [], "--target 'species'"),
        ("a,b,target\n1,2,0\n2,3,0\n", ["--target", "zz"], "target column 'zz' not found"),
        ("a,b,target\n1,2,0\n2,3,0\n3,4,1\n", ["--preprocess", "none"], "at least 2 samples"),
        ("a,c,target\n1,x,0\n2,y,0\n3,x,1\n4,y,1\n", ["--preprocess", "standard"], "categorical"),
        ("a,w,target\n1,-1,0\n2,1,0\n3,1,1\n4,1,1\n", ["--sample-weight", "w"], "negative"),
        ("a,w,target\n1,,0\n2,1,0\n3,1,1\n4,1,1\n", ["--sample-weight", "w"], "NaN"),
        ("a,w,target\n1,x,0\n2,1,0\n3,1,1\n4,1,1\n", ["--sample-weight", "w"], "not numeric"),
        ("a,b,target\n1,2,0\n2,3,0,5,6\n3,4\n", [], "cannot parse"),
        ("a,target\n0.1,0.2\n0.3,0.4\n0.5,0.6\n", [], "continuous"),
    ],
)
def test_select_bad_data(tmp_path, text, extra, match):
    path = _csv(tmp_path, text)
    assert_one_line_error(run("select", path, "--method", "default", *extra, ok=False), match)


def test_select_unparsable_and_missing_files(tmp_path):
    junk = tmp_path / "junk.csv"
    junk.write_bytes(bytes(np.random.default_rng(1).integers(0, 256, 3000, dtype=np.uint8)))
    assert_one_line_error(run("select", junk, "--method", "default", ok=False), "cannot parse")
    arff = _csv(
        tmp_path, "@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\nq,x\n", "b.arff"
    )
    assert_one_line_error(run("select", arff, "--method", "default", ok=False), "not a number")
    missing = tmp_path / "nope.csv"
    assert_one_line_error(run("select", missing, "--method", "default", ok=False), "file not found")
    r = run("select", "pimaa", "--method", "default", ok=False)
    assert_one_line_error(r, "file not found")
    assert "pima" in r.output


def test_select_unknown_method_and_bad_params(csv_file):
    path, _ = csv_file
    r = run("select", path, "--method", "nope", ok=False)
    assert_one_line_error(r, "unknown method 'nope'", code=2)
    for name in ("default", "grid", "rbsvm", "span_rule", "ss"):
        assert name in r.output
    r = run("select", path, "--method", "rbsv", ok=False)
    assert_one_line_error(r, "did you mean rbsvm", code=2)
    r = run("select", path, "--method", "grid", "--param", "bogus=1", ok=False)
    assert_one_line_error(r, "bogus")
    assert r.output.count("n_splits") == 1  # the method's options are listed, once
    r = run("select", path, "--method", "grid", "--param", "n_splits=1", ok=False)
    assert_one_line_error(r, "n_splits must be")
    assert "options of 'grid': log2_sigma" in r.output
    # options passed on through **options to a base class are listed too
    r = run("select", path, "--method", "span_lowrank", "--param", "bogus=1", ok=False)
    assert_one_line_error(r, "bogus")
    assert "eta" in r.output and "rank_tol" in r.output and "max_iter" in r.output
    assert_one_line_error(
        run("select", path, "--method", "grid", "--param", "x", ok=False), "key=value", code=2
    )
    assert_one_line_error(
        run("select", path, "--method", "default", "--kernel", "nope", ok=False), "kernel"
    )


def test_debug_shows_the_exception(tmp_path):
    path = _csv(tmp_path, "a,b,target\n1,2,0\n2,3,0\n3,4,0\n")
    r = CliRunner().invoke(main, ["--debug", "select", str(path), "--method", "default"])
    assert isinstance(r.exception, ValueError) and "1 class" in str(r.exception)


# ---------------------------------------------------------------------------- demo
def test_demo_json_with_a_cheap_method():
    doc = json.loads(run("demo", "--method", "default", "--no-grid", "--json").output)
    assert doc["data"]["dataset"] == "parkinsons"
    assert doc["data"]["n_train"] + doc["data"]["n_test"] == 195
    assert doc["data"]["n_test"] == 59  # 30 % held out, stratified
    assert 0.5 <= doc["test_accuracy"] <= 1.0
    assert 0.5 <= doc["default_svc"]["test_accuracy"] <= 1.0
    assert doc["default_svc"]["fit_time"] > 0
    # the default method IS the default SVC: same test accuracy
    assert doc["test_accuracy"] == pytest.approx(doc["default_svc"]["test_accuracy"])
    assert set(doc["comparison"]) == {"default", "SVC()"}


def test_demo_compares_auto_with_svc_and_the_grid():
    doc = json.loads(run("demo", "--json").output)
    assert doc["method"] == "auto"
    rows = doc["comparison"]
    assert set(rows) == {"auto", "SVC()", "grid (10-fold)"}
    assert rows["SVC()"]["test accuracy"] == doc["default_svc"]["test_accuracy"]
    assert rows["auto"]["test accuracy"] == doc["test_accuracy"]
    assert all(
        np.isfinite(r["cost (SVC() fits)"]) and r["cost (SVC() fits)"] > 0 for r in rows.values()
    )
    origins = [c["origin"] for c in doc["candidates"]]
    assert origins[0] == "default" and sum(c["chosen"] for c in doc["candidates"]) == 1


def test_demo_table_with_tiny_grid_on_mixed_data():
    out = run("demo", "--method", "grid", *TINY_GRID, "--dataset", "tic-tac-toe").output
    for key in (
        "tic_tac_toe",
        "auto",
        "test accuracy",
        "cost (SVC() fits)",
        "default SVC fit time",
        "selection_time",
        "sigma",
    ):
        assert key in out


def test_demo_errors():
    assert_one_line_error(run("demo", "--dataset", "pimaa", ok=False), "Did you mean: pima", code=2)
    assert_one_line_error(run("demo", "--method", "nope", ok=False), "unknown method", code=2)


def test_select_and_demo_take_the_final_model_options(tmp_path):
    model = tmp_path / "m.joblib"
    args = ["select", "iris", "--method", "default", "--multiclass", "ovo"]
    rec = json.loads(run(*args, "--probability", "platt", "--json", "--out", model).output)
    assert rec["multiclass"] == "ovo" and rec["probability"] == "platt"
    assert rec["final_model"] == "l1"
    tuner = joblib.load(model)
    assert tuner.multiclass == "ovo" and tuner.probability_ == "platt"
    assert "│ multiclass" in run(*args).output  # shown when it is not the default
    rec = json.loads(run("demo", "--method", "default", "--final-model", "l2", "--json").output)
    assert rec["final_model"] == "l2"
    with pytest.warns(UserWarning, match="the final L2-SVM is one-vs-rest"):
        rec = json.loads(run(*args, "--final-model", "l2", "--json").output)
    assert rec["final_model"] == "l2"
    assert (
        run("select", "iris", "--method", "default", "--multiclass", "ovx", ok=False).exit_code == 2
    )


# ---------------------------------------------------------------------------- file reading
def test_select_reads_a_headerless_first_row_with_text_as_data(tmp_path):
    # UCI's iris.data layout: no header, a text label in every row
    rows = [
        f"{5 + i / 10},{3 + (i % 4) / 10},{'Iris-setosa' if i % 2 else 'Iris-virginica'}"
        for i in range(12)
    ]
    f = _csv(tmp_path, "\n".join(rows) + "\n", "iris.data")
    doc = json.loads(run("select", f, "--method", "default", "--target", "-1", "--json").output)
    assert doc["data"]["n"] == 12 and doc["data"]["d"] == 2
    # the hint names a column of the data, not a value of the first row
    r = run("select", f, "--method", "default", ok=False)
    assert_one_line_error(r, "pass --target '2'")
    assert "Iris-virginica'" not in r.output


def test_select_header_with_fewer_names_than_fields_is_an_error(tmp_path):
    rng = np.random.default_rng(0)
    rows = "".join(
        f"{a:.3f},{b:.3f},{c:.3f},{i % 2}\n" for i, (a, b, c) in enumerate(rng.normal(size=(30, 3)))
    )
    f = _csv(tmp_path, "b,c,label\n" + rows, "short.csv")
    r = run("select", f, "--method", "default", ok=False)
    assert_one_line_error(
        r, "the header names 3 columns ('b', 'c', 'label') but the rows have 4 fields"
    )


def test_select_drops_a_shuffled_row_index_column_with_a_warning(tmp_path, csv_file):
    _, df = csv_file
    f = tmp_path / "shuffled.csv"
    df.sample(frac=1, random_state=0).to_csv(f)  # the shuffled index: an unnamed column
    with pytest.warns(UserWarning, match="dropped the first column: it has no name in the header"):
        doc = json.loads(run("select", f, "--method", "default", "--json").output)
    assert doc["data"]["d"] == 3


# ---------------------------------------------------------------------------- svmlight predict
def test_predict_an_svmlight_file_needs_a_model_of_svmlight_columns(saved_model, tmp_path):
    from sklearn.datasets import dump_svmlight_file

    model, _, _, df = saved_model  # trained on the columns a, b, c
    f = tmp_path / "new.svm"
    dump_svmlight_file(df[["a", "b", "c"]].to_numpy(), (df.label == "yes").astype(int), str(f))
    r = run("predict", "--trust-pickle", model, f, ok=False)
    assert_one_line_error(r, "lacks 3 of the model's feature columns: 'a', 'b', 'c'")
    assert "prediction" not in r.output


def test_predict_reads_svmlight_files_with_the_training_files_index_base(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 1] + X[:, 2] > 0, 1, -1)
    train = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(train), zero_based=True)  # index 0 occurs: 0-based
    model = tmp_path / "m.joblib"
    r = run("select", train, "--method", "default", "--out", model)
    assert "0-based (index 0 occurs)" in r.output
    tuner = joblib.load(model)
    assert tuner.svmlight_zero_based_ is True
    # new rows whose feature 0 is 0 throughout: no index 0 in the file, still 0-based
    X0 = X[:8].copy()
    X0[:, 0] = 0.0
    test = tmp_path / "test.svm"
    dump_svmlight_file(X0, y[:8], str(test), zero_based=True)
    out = tmp_path / "p.csv"
    run("predict", "--trust-pickle", model, test, "--out", out)
    want = tuner.predict(pd.DataFrame(X0, columns=["f1", "f2", "f3"]))
    assert list(pd.read_csv(out).prediction) == list(want)
    # a model of a 1-based file refuses a file with index 0
    one = tmp_path / "one.svm"
    dump_svmlight_file(X, y, str(one), zero_based=False)
    doc = json.loads(run("select", one, "--method", "default", "--json", "--out", model).output)
    assert doc["data"]["index_base"] == 1
    r = run("predict", "--trust-pickle", model, train, ok=False)
    assert_one_line_error(r, "the model's training file numbered the features from 1")
    # a model saved without the record (older svmtune): the file decides ("auto")
    del tuner.svmlight_zero_based_
    joblib.dump(tuner, model)
    assert "8 rows predicted" in run("predict", "--trust-pickle", model, test).output


# ---------------------------------------------------------------------------- --out, options
def test_select_out_is_checked_before_the_selection(csv_file, tmp_path, monkeypatch):
    import svmtune.cli._select as select_module

    path, _ = csv_file
    fits = []
    real_fit = select_module.fit_tuner
    monkeypatch.setattr(
        select_module, "fit_tuner", lambda *a, **kw: fits.append(1) or real_fit(*a, **kw)
    )
    r = run("select", path, "--method", "default", "--out", tmp_path / "no" / "m.joblib", ok=False)
    assert_one_line_error(r, "directory", code=2)
    assert f"{tmp_path / 'no'} does not exist" in r.output and fits == []
    # writing fails after the selection all the same: the result is printed first
    monkeypatch.setattr(
        joblib, "dump", lambda *a, **kw: (_ for _ in ()).throw(OSError("disk full"))
    )
    r = run(
        "select", path, "--method", "default", "--out", tmp_path / "m.joblib", "--json", ok=False
    )
    assert_one_line_error(r, "cannot write --out (the result is above): disk full")
    doc = json.loads(r.output[: r.output.index("Error:")])
    assert doc["best_params"]["C"] == 1.0 and "saved_to" not in doc


def test_select_shows_the_final_model_options_as_applied(tmp_path):
    # Platt scaling is for libsvm final models: a final L2-SVM has tanh probabilities
    args = ["select", "iris", "--method", "default", "--final-model", "l2"]
    with pytest.warns(UserWarning, match="calibrates libsvm final models only"):
        rec = json.loads(run(*args, "--probability", "platt", "--json").output)
    assert rec["probability"] == "tanh" and rec["final_model"] == "l2"
    with pytest.warns(UserWarning):
        out = run(*args, "--probability", "platt").output
    assert "│ probability" in out and "tanh (platt requested" in out
    # one-vs-one is libsvm's: the final L2-SVM is one-vs-rest on three classes
    with pytest.warns(UserWarning, match="the final L2-SVM is one-vs-rest"):
        rec = json.loads(run(*args, "--multiclass", "ovo", "--json").output)
    assert rec["multiclass"] == "ovr"
    with pytest.warns(UserWarning):
        out = run(*args, "--multiclass", "ovo").output
    assert "ovr (ovo requested" in out


def test_select_groups(tmp_path):
    rng = np.random.default_rng(0)
    rows = "".join(
        f"{rng.normal():.4f},{rng.normal():.4f},p{i // 4},{(i // 4) % 2}\n" for i in range(48)
    )
    path = _csv(tmp_path, "a,b,patient,target\n" + rows)
    out = tmp_path / "m.joblib"
    args = ["--method", "grid", *TINY_GRID, "--groups", "patient", "--json", "--out", out]
    doc = json.loads(run("select", path, *args).output)
    assert doc["data"]["groups"] == "patient" and doc["data"]["d"] == 2
    import joblib

    tuner = joblib.load(out)
    assert list(tuner.feature_names_in_) == ["a", "b"]
    table = run("select", path, "--method", "grid", *TINY_GRID, "--groups", "patient").output
    assert "groups" in table and "patient" in table
    r = run("select", path, "--method", "grid", "--groups", "nope", ok=False)
    assert r.exit_code == 2 and "no column 'nope'" in r.output
    r = run("select", path, "--method", "span", "--groups", "patient", ok=False)
    assert_one_line_error(r, "leave-one-out", code=r.exit_code)
    assert r.exit_code != 0
    # rbsvm leaves one patient out at a time
    args = ["--method", "rbsvm", "--groups", "patient", "--json"]
    doc = json.loads(run("select", path, *args).output)
    assert doc["data"]["groups"] == "patient"


def test_select_groups_of_a_bundled_data_set_from_its_side_file():
    from svmtune.datasets import load_dataset

    X, _, _ = load_dataset("parkinson_speech_train")
    args = ["--method", "rbsvm", "--groups", "subject_id", "--json"]
    doc = json.loads(run("select", "parkinson_speech_train", *args).output)
    assert doc["data"]["groups"] == "subject_id" and doc["data"]["d"] == X.shape[1]
    assert doc["estimate"] > 0.3  # one subject out at a time: new subjects are hard to call
    r = run("select", "parkinson_speech_train", "--method", "grid", "--groups", "UPDRS_x", ok=False)
    assert r.exit_code == 2 and "no column 'UPDRS_x'" in r.output


# ---------------------------------------------------------------------------- hardening
def test_param_infinity_for_an_integer_option_is_a_one_line_error(csv_file):
    path, _ = csv_file
    for method, option in (
        ("rbsvm", "max_iter"),
        ("ss", "n_components"),
        ("span_rule", "n_splits"),
    ):
        r = run("select", path, "--method", method, "--param", f"{option}=1e999", ok=False)
        assert_one_line_error(r, f"{option} must be an integer >= ")


def test_param_booleans_are_parsed(csv_file):
    path, df = csv_file
    assert parse_param("rescale=false") == ("rescale", False)
    assert parse_param("rescale=True") == ("rescale", True)
    assert parse_param("max_samples=none") == ("max_samples", None)
    r = run("select", path, "--method", "ss", "--param", "rescale=false", "--json")
    got = json.loads(r.output)["best_params"]["C"]
    X, y = df[["a", "b", "c"]], df["label"].to_numpy()
    want = SVMTuner(method="ss", method_params={"rescale": False}).fit(X, y).best_params_["C"]
    assert got == pytest.approx(want)
    on = SVMTuner(method="ss", method_params={"rescale": True}).fit(X, y).best_params_["C"]
    assert got != pytest.approx(on)
    r = run("select", path, "--method", "ss", "--param", "rescale=yes", ok=False)
    assert_one_line_error(r, "rescale must be True or False")


# ---------------------------------------------------------------------------- cv_results_, skops
def test_select_json_and_results_csv_hold_cv_results(csv_file, tmp_path):
    path, df = csv_file
    args = ["select", path, "--method", "grid", *TINY_GRID, "--random-state", 3]
    results = tmp_path / "results.csv"
    doc = json.loads(run(*args, "--json", "--results", results).output)
    ref = SVMTuner(
        method="grid",
        method_params={"log2_sigma": (0, 1, 1), "log2_C": (-1, 0, 1), "n_splits": 3},
        random_state=3,
    ).fit(df[["a", "b", "c"]], df.label)
    cv = doc["cv_results"]
    assert cv["params"] == ref.cv_results_["params"]
    assert cv["mean_test_score"] == pytest.approx(list(ref.cv_results_["mean_test_score"]))
    assert cv["rank_test_score"] == list(ref.cv_results_["rank_test_score"])
    assert doc["results_to"] == str(results)
    table = pd.read_csv(results)
    assert len(table) == 4 and {"param_sigma", "param_C", "split2_test_score"} <= set(table)
    np.testing.assert_allclose(table.mean_test_score, ref.cv_results_["mean_test_score"])
    assert [json.loads(p) for p in table.params] == ref.cv_results_["params"]
    # a width-only row of esdr has no C: an empty cell, not a number
    run("select", path, "--method", "ld_c1", "--results", results)
    assert (pd.read_csv(results).param_C == 1.0).all()  # every width judged at its fixed C
    run("select", path, "--method", "ld", "--results", results)
    esdr = pd.read_csv(results)
    assert esdr.param_C[esdr.stage == "sigma"].isna().all()
    assert esdr.param_C[esdr.stage == "C"].notna().all()
    r = run("select", path, "--method", "default", "--results", tmp_path / "no" / "r.csv", ok=False)
    assert_one_line_error(r, "does not exist", code=2)


def test_skops_round_trip_through_select_and_predict(csv_file, tmp_path):
    pytest.importorskip("skops")
    path, df = csv_file
    model = tmp_path / "model.skops"
    r = run("select", path, "--method", "grid", *TINY_GRID, "--random-state", 3, "--out", model)
    assert "skops: " in r.output
    pickled = tmp_path / "model.joblib"
    run("select", path, "--method", "grid", *TINY_GRID, "--random-state", 3, "--out", pickled)
    ref = joblib.load(pickled)
    pred = run("predict", model, path, "--proba", "--out", tmp_path / "p.csv").output
    assert "40 rows predicted" in pred
    got = pd.read_csv(tmp_path / "p.csv")
    X = df[["a", "b", "c"]]
    assert list(got.prediction) == list(ref.predict(X))
    np.testing.assert_array_equal(got[["p(no)", "p(yes)"]], ref.predict_proba(X))


def test_predict_refuses_pickle_without_trust_pickle(saved_model):
    model, tuner, path, _ = saved_model
    r = run("predict", model, path, ok=False)
    assert_one_line_error(r, "loading one can run any code", code=2)
    assert "--trust-pickle" in r.output and "prediction" not in r.output
    assert "rows predicted" in run("predict", "--trust-pickle", model, path).output


def test_predict_refuses_a_skops_file_with_an_untrusted_type(csv_file, tmp_path):
    sio = pytest.importorskip("skops.io")
    import os

    path, _ = csv_file
    model = tmp_path / "model.skops"
    run("select", path, "--method", "default", "--out", model)
    tuner = sio.load(model, trusted=sio.get_untrusted_types(file=model))
    tuner.extra_ = os.system  # what an attacker would name: no model holds it
    crafted = tmp_path / "crafted.skops"
    sio.dump(tuner, crafted)
    (system,) = [t for t in sio.get_untrusted_types(file=crafted) if t.endswith(".system")]
    r = run("predict", crafted, path, ok=False)
    assert_one_line_error(r, f"types an svmtune model never holds: {system}", 2)
    # --trust-pickle concerns pickles only: it does not widen the skops allow-list
    assert run("predict", "--trust-pickle", crafted, path, ok=False).exit_code == 2


# ---------------------------------------------------------------------------- progress
def test_select_progress_bar_on_a_terminal_quiet_and_verbose(csv_file, monkeypatch):
    import svmtune.cli._options as options_module

    path, _ = csv_file
    args = ["select", path, "--method", "grid", *TINY_GRID, "--json"]
    r = run(*args)  # standard error is no terminal here: no bar
    assert "CV fits" not in r.stderr
    json.loads(r.stdout)
    monkeypatch.setattr(options_module, "stderr_is_terminal", lambda: True)
    r = run(*args)
    assert "12/12 CV fits" in r.stderr and "svmtune grid: selected" in r.stderr
    assert json.loads(r.stdout)["n_svm_fits"] == 12  # the result on standard output, intact
    assert "CV fits" not in run(*args, "--quiet").stderr
    r = run(*args, "--verbose")
    assert len([ln for ln in r.stderr.splitlines() if "over 3 folds" in ln]) == 4
    assert_one_line_error(run(*args, "-q", "-v", ok=False), "exclude each other", code=2)


# ---------------------------------------------------------------------------- sparse svmlight
def test_svmlight_file_stays_sparse_through_select_and_predict(tmp_path, monkeypatch):
    import scipy.sparse as sp
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 40)) * (rng.random((60, 40)) < 0.2)
    X[:, 0] = 0.0  # 1-based file: no index 0
    y = (X[:, 1:6].sum(axis=1) > 0).astype(int)
    train = tmp_path / "train.svm"
    dump_svmlight_file(X[:, 1:], y, str(train), zero_based=False)
    model = tmp_path / "m.skops"
    args = ["select", train, "--method", "grid", *TINY_GRID, "--random-state", 3, "--json"]

    def refuse(self, *a, **kw):
        raise AssertionError("a sparse matrix was densified")

    with monkeypatch.context() as m:
        for cls in (sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array):
            m.setattr(cls, "toarray", refuse)
            m.setattr(cls, "todense", refuse)
        doc = json.loads(run(*args, "--out", model).stdout)
        pred = run("predict", model, train).stdout.splitlines()[1:]
    assert doc["data"]["sparse"] is True and doc["data"]["index_base"] == 1
    assert doc["data"]["d"] == 39 and doc["data"]["nnz"] == int((X != 0).sum())
    ref = SVMTuner(
        method="grid",
        method_params={"log2_sigma": (0, 1, 1), "log2_C": (-1, 0, 1), "n_splits": 3},
        random_state=3,
    ).fit(X[:, 1:], y)  # the same file read densely
    assert doc["best_params"] == pytest.approx(ref.best_params_)
    assert doc["criterion"] == pytest.approx(ref.criterion_, abs=1e-8)
    assert [int(p) for p in pred] == list(ref.predict(X[:, 1:]))
    # methods with dense kernels (and default's statistic) read the file densely, as before
    for method in ("default", "rbsvm"):
        doc = json.loads(run("select", train, "--method", method, "--json").stdout)
        assert "sparse" not in doc["data"]


def test_svmlight_indices_past_the_bounds_are_one_line_errors(tmp_path):
    # the sparse path (grid keeps an svmlight file sparse, and so does predict with its
    # model) bounds the columns and names the line, as the dense reader does
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] > 0, 1, 0)
    train = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(train))
    model = tmp_path / "m.joblib"
    run("select", train, "--method", "grid", *TINY_GRID, "--out", model)
    assert joblib.load(model).svmlight_sparse_
    rows = "1 1:0.5 2:1\n0 {index}:1\n1 2:1 3:2\n0 1:2 3:1\n" * 2
    for index in ("2000000000", "99999999999999999999"):
        bad = tmp_path / f"bad{len(index)}.svm"
        bad.write_text(rows.format(index=index))
        for args in (
            ("select", bad, "--method", "grid", *TINY_GRID),
            ("select", bad),
            ("predict", "--trust-pickle", model, bad),
        ):
            assert_one_line_error(run(*args, ok=False), f"line 2: feature index {index}")


# ---------------------------------------------------------------------------- output files
def _count_fits(monkeypatch):
    """Count the selections ``select`` starts."""
    import svmtune.cli._select as select_module

    calls = []
    real = select_module.fit_tuner

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(select_module, "fit_tuner", counting)
    return calls


@pytest.mark.parametrize(
    "options",
    [("--out", "x.joblib", "--results", "x.joblib"), ("--results", "x.png", "--plot", "x.png"),
     ("--out", "m.png", "--plot", "m"), ("--out", "sub/../x.csv", "--results", "x.csv")],
)  # fmt: skip
def test_select_refuses_two_outputs_to_one_file(csv_file, tmp_path, monkeypatch, options):
    """Two output options naming one file (as written) are refused before any work."""
    path, _ = csv_file
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    calls = _count_fits(monkeypatch)
    r = run("select", path, "--method", "default", *options, ok=False)
    assert_one_line_error(r, "give each output its own file", code=2)
    assert calls == []
    assert not (tmp_path / options[1]).exists() and not (tmp_path / options[3]).exists()


def test_select_plot_without_extension_reports_the_file_written(csv_file, tmp_path):
    pytest.importorskip("matplotlib")
    path, _ = csv_file
    r = run("select", path, "--method", "default", "--json", "--plot", tmp_path / "land")
    written = tmp_path / "land.png"
    assert written.is_file() and not (tmp_path / "land").exists()
    assert json.loads(r.output)["plot_to"] == str(written)


def test_select_plot_with_an_unknown_format_is_refused_before_the_selection(
    csv_file, tmp_path, monkeypatch
):
    pytest.importorskip("matplotlib")
    path, _ = csv_file
    calls = _count_fits(monkeypatch)
    r = run("select", path, "--plot", tmp_path / "land.v2", ok=False)
    assert_one_line_error(r, "matplotlib writes no .v2 files", code=2)
    assert calls == []


def test_select_plot_without_matplotlib_is_refused_before_the_selection(
    csv_file, tmp_path, monkeypatch
):
    """As ``--out x.skops`` without skops: a usage error saying how to install it, and no
    selection run (nor a traceback after one)."""
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    path, _ = csv_file
    calls = _count_fits(monkeypatch)
    r = run("select", path, "--plot", tmp_path / "land.png", ok=False)
    assert_one_line_error(r, "needs matplotlib: pip install 'svmtune[plot]'", code=2)
    assert calls == []


@pytest.mark.parametrize(("method", "module"), [("tpe", "hyperopt"), ("optuna", "optuna")])
def test_select_names_a_missing_extra_of_the_method_before_the_selection(
    csv_file, monkeypatch, method, module
):
    import sys

    monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    path, _ = csv_file
    calls = _count_fits(monkeypatch)
    r = run("select", path, "--method", method, ok=False)
    assert_one_line_error(r, f'needs {module}: pip install "svmtune[baselines]"')
    assert calls == []


def test_select_table_shows_a_long_rule_whole(tmp_path):
    """Issue 63: the table folds ``auto``'s ``final_rule`` over lines instead of cutting it
    ("its support ve...")."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(700, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=700) > 0, "yes", "no")
    path = tmp_path / "rows.csv"
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y).to_csv(path, index=False)
    doc = json.loads(run("select", path, "--random-state", 0, "--json").output)
    rule = doc["info"]["final_rule"]
    assert len(rule) > 60
    out = run("select", path, "--random-state", 0).output
    flat = "".join(ch for ch in out if not ch.isspace() and ch not in "│┃|")
    assert "".join(rule.split()) in flat
