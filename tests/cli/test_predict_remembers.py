"""``svmtune predict`` remembers what ``select`` read: the label column it was given, and
the categories of the training rows (issue #63)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from svmtune.exceptions import UnseenCategoryWarning
from svmtune.persist import load_model

from .test_commands import run


@pytest.fixture
def labelled_csv(tmp_path):
    """A CSV whose labels are in 'diagnosis' (a name `predict` does not guess) beside a
    categorical column."""
    rng = np.random.default_rng(0)
    n = 40
    X = rng.normal(size=(n, 2))
    df = pd.DataFrame(X, columns=["a", "b"]).assign(
        colour=np.array(["red", "green", "blue", "red"] * 10),
        diagnosis=np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, "M", "B"),
    )
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path, df


@pytest.mark.parametrize("name", ["model.skops", "model.joblib"])
def test_predict_scores_the_label_column_select_was_given(labelled_csv, tmp_path, name):
    path, df = labelled_csv
    model = tmp_path / name
    run("select", path, "--target", "diagnosis", "--method", "default", "--out", model)
    tuner = load_model(model, trust_pickle=True)
    assert tuner.target_column_ == "diagnosis"
    features = df.drop(columns="diagnosis")
    acc = float(np.mean(tuner.predict(features) == df.diagnosis))
    r = run("predict", "--trust-pickle", model, path)
    assert f"accuracy {acc:.4f} on the 40 rows labelled in 'diagnosis'" in r.output
    assert list(pd.read_csv(path).columns) == ["a", "b", "colour", "diagnosis"]
    # a file without the column: predictions only
    new = tmp_path / "new.csv"
    features.to_csv(new, index=False)
    r = run("predict", "--trust-pickle", model, new)
    assert "40 rows predicted" in r.output and "accuracy" not in r.output
    # --target still names another column
    df.rename(columns={"diagnosis": "truth"}).to_csv(new, index=False)
    r = run("predict", "--trust-pickle", model, new, "--target", "truth")
    assert f"accuracy {acc:.4f} on the 40 rows labelled in 'truth'" in r.output


def test_predict_warns_once_about_unseen_categories(labelled_csv, tmp_path):
    path, df = labelled_csv
    model = tmp_path / "model.skops"
    run("select", path, "--target", "diagnosis", "--method", "default", "--out", model)
    new = tmp_path / "new.csv"
    df.assign(colour=["teal", "red", "mauve", "teal"] * 10).to_csv(new, index=False)
    with pytest.warns(UnseenCategoryWarning) as caught:
        r = run("predict", model, new, "--proba")
    assert "40 rows predicted" in r.output
    unseen = [w for w in caught if issubclass(w.category, UnseenCategoryWarning)]
    assert len(unseen) == 1  # predict and predict_proba: one warning
    assert str(unseen[0].message).endswith("column 'colour': 'teal', 'mauve'")
