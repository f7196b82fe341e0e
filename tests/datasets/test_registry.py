"""The bundled data sets: every file loads and agrees with its MANIFEST.md row."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pandas as pd
import pytest

from svmtune.datasets import (
    DATA_DIR,
    DatasetInfo,
    dataset_path,
    datasets_table,
    list_datasets,
    load_dataset,
    manifest,
)
from svmtune.datasets.registry import DATA_ENV, data_dirs, parse_class_counts

NAMES = list_datasets()


def test_names_are_the_file_stems_and_have_manifest_rows():
    stems = sorted(p.name[: -len(".csv.gz")] for d in data_dirs() for p in d.glob("*.csv.gz"))
    assert NAMES == stems  # no name in two directories
    assert len(NAMES) >= 79  # run from the repository: its benchmarks/data too
    assert sorted(manifest()) == NAMES
    for must in ("pima", "ijcnn1_train", "mnist_2v9_test", "banknote"):
        assert must in NAMES


# the sets the package ships: its demo, the quick suite and the library's tests use them
SHIPPED = {
    "balance_scale", "banana", "banknote", "breast_cancer", "crx", "glass", "hayes_roth",
    "heart_statlog", "ionosphere", "iris", "parkinson_speech_train", "parkinsons", "pima",
    "sonar", "spect", "tic_tac_toe",
}  # fmt: skip


def test_outside_a_repository_only_the_shipped_sets(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(DATA_ENV, raising=False)
    assert data_dirs() == [DATA_DIR]
    assert set(list_datasets()) == SHIPPED
    assert sorted(manifest()) == sorted(SHIPPED)
    with pytest.raises(ValueError, match="unknown data set 'ijcnn1_train'") as err:
        load_dataset("ijcnn1_train")
    assert str(DATA_DIR) in str(err.value) and "SVMTUNE_DATA" in str(err.value)


def test_more_data_directories_from_the_environment(tmp_path, monkeypatch):
    repo_data = next(d for d in data_dirs() if d != DATA_DIR)
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "toy.csv.gz").write_bytes((DATA_DIR / "iris.csv.gz").read_bytes())
    monkeypatch.setenv(DATA_ENV, os.pathsep.join([str(mine), str(repo_data)]))
    assert data_dirs() == [DATA_DIR, mine, repo_data]
    names = list_datasets()
    assert "toy" in names and "ijcnn1_train" in names
    X, y, info = load_dataset("toy")
    assert info.path == str(mine / "toy.csv.gz") and len(y) == 150
    assert info.version == hashlib.sha256((mine / "toy.csv.gz").read_bytes()).hexdigest()
    assert info.source == ""  # no manifest row
    assert load_dataset("ijcnn1_train")[2].path.startswith(str(repo_data))


def test_the_repository_data_from_a_subdirectory(monkeypatch):
    repo_data = next(d for d in data_dirs() if d != DATA_DIR)
    monkeypatch.chdir(repo_data.parent / "suites")
    monkeypatch.delenv(DATA_ENV, raising=False)
    assert data_dirs() == [DATA_DIR, repo_data]
    assert load_dataset("mnist_2v9_test")[2].path == str(repo_data / "mnist_2v9_test.csv.gz")


@pytest.mark.parametrize("name", NAMES)
def test_dataset_matches_manifest(name):
    entry = manifest()[name]
    X, y, info = load_dataset(name)
    assert isinstance(X, pd.DataFrame) and "target" not in X.columns
    assert y.ndim == 1 and len(y) == len(X)
    assert X.shape == (entry.n, entry.d)
    assert (info.n, info.d, info.n_classes) == (entry.n, entry.d, entry.n_classes)
    labels, counts = np.unique(y, return_counts=True)
    assert {str(lab): int(c) for lab, c in zip(labels, counts)} == entry.class_counts
    assert {str(k): v for k, v in info.class_counts.items()} == entry.class_counts
    if entry.missing is not None:
        assert int(X.isna().to_numpy().sum()) == entry.missing == info.missing
    digest = hashlib.sha256(dataset_path(name).read_bytes()).hexdigest()
    assert info.version == digest
    assert info.source == entry.source and info.source
    for kind, path in info.side_files.items():
        arrays = info.load_side(kind)
        assert arrays, f"{path} is empty"


def test_side_files():
    _, _, info = load_dataset("spect")
    splits = info.load_side("splits")
    idx = np.sort(np.concatenate([splits["train_idx"], splits["test_idx"]]))
    assert np.array_equal(idx, np.arange(info.n))
    _, _, info = load_dataset("parkinson_speech_train")
    groups = info.load_side("groups")
    assert all(len(v) == info.n for v in groups.values())
    with pytest.raises(KeyError, match="no 'splits' side file"):
        info.load_side("splits")
    assert load_dataset("pima")[2].side_files == {}


def test_a_side_groups_array_becomes_a_column_on_request():
    X, _, info = load_dataset("parkinson_speech_train")
    got = info.add_group_column(X, "subject_id")
    assert list(got.columns) == [*X.columns, "subject_id"]
    np.testing.assert_array_equal(got["subject_id"], info.load_side("groups")["subject_id"])
    assert got["subject_id"].nunique() == 40
    assert info.add_group_column(X, "no such array") is X
    assert info.add_group_column(got, "subject_id") is got  # already a column
    Xp, _, pima = load_dataset("pima")
    assert pima.add_group_column(Xp, "subject_id") is Xp  # no side file


def test_categorical_columns_and_missing_kept():
    X, y, info = load_dataset("crx")
    assert info.categorical and set(info.categorical) <= set(X.columns)
    assert X["A1"].isna().any()  # empty cells -> NaN, not a category
    assert info.missing == 67
    assert y.dtype == object and set(y) == {"+", "-"}


def test_copies_not_views_of_the_cache():
    X, y, _ = load_dataset("iris")
    X.iloc[0, 0] = -999.0
    y[0] = "changed"
    X2, y2, _ = load_dataset("iris")
    assert X2.iloc[0, 0] != -999.0 and y2[0] != "changed"


def test_as_frame_false():
    X, y, _ = load_dataset("banknote", as_frame=False)
    assert isinstance(X, np.ndarray) and X.dtype == float and X.shape == (1372, 4)
    with pytest.raises(ValueError, match="categorical columns"):
        load_dataset("tic_tac_toe", as_frame=False)


def test_unknown_name_lists_close_matches():
    with pytest.raises(ValueError, match="Did you mean: pima"):
        load_dataset("pimaa")
    with pytest.raises(ValueError, match="unknown data set"):
        load_dataset("no_such_thing_at_all")
    with pytest.raises(TypeError):
        load_dataset(3)


def test_forgiving_names():
    assert load_dataset("Tic-Tac-Toe")[2].name == "tic_tac_toe"
    assert load_dataset("iris.csv.gz")[2].name == "iris"


def test_info_reads_like_a_mapping_and_serialises():
    _, _, info = load_dataset("banana")
    assert isinstance(info, DatasetInfo)
    assert info["version"] == info.version and info.get("nope", 1) == 1
    assert set(info.keys()) >= {"name", "n", "d", "n_classes", "class_counts", "version"}
    d = json.loads(json.dumps(info.to_dict()))
    assert d["class_counts"] == {"-1.0": 2924, "1.0": 2376}
    with pytest.raises(KeyError):
        info["nope"]


def test_table_comes_from_manifest():
    rows = datasets_table()
    assert [r["name"] for r in rows] == NAMES
    for r in rows:
        e = manifest()[r["name"]]
        assert (r["n"], r["d"], r["n_classes"], r["source"]) == (e.n, e.d, e.n_classes, e.source)


def test_parse_class_counts():
    k, counts = parse_class_counts("2: <=50K: 24720; >50K: 7841")
    assert k == 2 and counts == {"<=50K": 24720, ">50K": 7841}
    k, counts = parse_class_counts("3: build wind float: 70; containers: 13; x: 1")
    assert k == 3 and counts["build wind float"] == 70
    with pytest.raises(ValueError):
        parse_class_counts("3: a: 1; b: 2")
