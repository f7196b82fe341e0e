"""User-file loaders: CSV/TSV, svmlight/LIBSVM, ARFF and KEEL .dat, on small files."""

from __future__ import annotations

import codecs
import gzip
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import dump_svmlight_file

from svmtune.datasets import DataFileError, load_dataset, load_file, load_table, loaders
from svmtune.datasets import _text as text_module
from svmtune.datasets.loaders import detect_format, parse_arff


def _write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- CSV / TSV
def test_csv_with_class_column_categories_and_missing(tmp_path):
    f = _write(
        tmp_path / "d.csv",
        "x1,colour,x2,Class\n1.5,red,2,yes\n,blue,3,no\n2.5, red ,?,yes\n3.5,,4,no\n",
    )
    X, y = load_file(f)
    assert list(X.columns) == ["x1", "colour", "x2"]
    assert list(y) == ["yes", "no", "yes", "no"]
    assert np.isnan(X.loc[1, "x1"]) and np.isnan(X.loc[2, "x2"])
    assert X["x1"].dtype == float and X["x2"].dtype == float
    assert X.loc[2, "colour"] == "red"  # blanks stripped
    assert pd.isna(X.loc[3, "colour"])


def test_csv_semicolon_sniffed_and_target_by_name_or_position(tmp_path):
    f = _write(tmp_path / "d.csv", "a;b;outcome\n1;2;0\n3;4;1\n5;6;0\n")
    X, y = load_file(f, target="outcome")
    assert list(X.columns) == ["a", "b"] and list(y) == [0, 1, 0]
    X2, y2 = load_file(f, target="OUTCOME")  # case-insensitive
    X3, y3 = load_file(f, target=-1)  # position
    X4, y4 = load_file(f, target="0")  # position as text (the CLI passes strings)
    assert list(y2) == list(y3) == [0, 1, 0] and list(y4) == [1, 3, 5]
    assert list(X4.columns) == ["b", "outcome"]


def test_tsv_by_extension(tmp_path):
    f = _write(tmp_path / "d.tsv", "a\tb c\tlabel\n1\t2,5\tu\n3\t4,5\tv\n")
    X, y = load_file(f)
    assert list(X.columns) == ["a", "b c"] and list(y) == ["u", "v"]
    # the tab decides, not the comma, which is then a decimal comma
    assert list(X["b c"]) == [2.5, 4.5]


@pytest.mark.parametrize(
    "text,target,expected",
    [
        # semicolons with a header; a missing cell stays missing
        ("a;b;label\n1,5;2,25;0\n3,0;;1\n", None, [[1.5, 2.25], [3.0, np.nan]]),
        # no header: the first row of decimal-comma numbers is data
        ("1,5;2,25;0\n3,0;4,75;1\n", -1, [[1.5, 2.25], [3.0, 4.75]]),
        # one decimal comma on every line: the comma also splits every line in two, but
        # the semicolon makes every field a number
        ("1,5;2;0\n3,0;4;1\n2,5;7;0\n", -1, [[1.5, 2.0], [3.0, 4.0], [2.5, 7.0]]),
        # tab-separated, integers and a decimal comma in one column
        ("a\tb\tlabel\n3\t-0,5\t0\n1,25\t2E3\t1\n", None, [[3.0, -0.5], [1.25, 2000.0]]),
    ],
)
def test_decimal_comma_numbers(tmp_path, text, target, expected):
    X, y = load_file(_write(tmp_path / "d.csv", text), target=target)
    assert all(t.kind in "if" for t in X.dtypes)
    np.testing.assert_array_equal(X.to_numpy(dtype=float), np.array(expected))
    assert y.dtype.kind == "i"


def test_comma_that_may_separate_thousands_stays_text(tmp_path):
    f = _write(tmp_path / "d.csv", "a;b;label\n1,234;0,5;0\n12;1,25;1\n-3,500;2;0\n")
    with pytest.warns(UserWarning, match=r"column 'a' holds numbers such as '1,234'") as rec:
        X, _ = load_file(f)
    assert len(rec) == 1 and list(X["a"]) == ["1,234", "12", "-3,500"]
    assert list(X["b"]) == [0.5, 1.25, 2.0]  # other digits after the comma: decimal


def test_decimal_comma_only_where_every_value_is_a_number(tmp_path):
    # a column with one text value stays text; a comma-delimited file's quoted "1,5" is
    # not a decimal comma (it may be a thousands separator)
    X, _ = load_file(_write(tmp_path / "d.csv", "a;b;label\n1,5;x,y;0\nz;1,0;1\n"))
    assert list(X["a"]) == ["1,5", "z"] and list(X["b"]) == ["x,y", "1,0"]
    X, _ = load_file(_write(tmp_path / "e.csv", 'a,b,label\n"1,5",2,0\n"3,5",4,1\n'))
    assert list(X["a"]) == ["1,5", "3,5"]


def test_whitespace_separated_and_headerless(tmp_path):
    f = _write(tmp_path / "d.data", "1.0 2.0 0\n3.0 4.0 1\n5.0 6.0 1\n")
    X, y = load_file(f, target="-1")
    assert list(X.columns) == ["0", "1"] and list(y) == [0, 1, 1]
    assert X.to_numpy().tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def test_compressed_csv(tmp_path):
    f = tmp_path / "d.csv.gz"
    with gzip.open(f, "wt") as fh:
        fh.write("a,b,target\n1,2,x\n3,4,y\n")
    X, y = load_file(f)
    assert X.shape == (2, 2) and list(y) == ["x", "y"]


def test_row_index_column_is_dropped(tmp_path):
    df = pd.DataFrame({"a": [0.5, 1.5, 2.5, 3.5], "label": [0, 0, 1, 1]})
    df.to_csv(tmp_path / "d.csv")  # pandas writes the index as an unnamed first column
    with pytest.warns(UserWarning, match="dropped the first column: .* rows 0, 1, ..."):
        X, y = load_file(tmp_path / "d.csv")
    assert list(X.columns) == ["a"] and list(y) == [0, 0, 1, 1]
    df.index = df.index + 1  # R's write.csv numbers the rows from 1
    df.to_csv(tmp_path / "e.csv", sep=";")
    with pytest.warns(UserWarning, match="rows 1, 2, ..."):
        X, _ = load_file(tmp_path / "e.csv")
    assert list(X.columns) == ["a"]
    # kept: a named first column, or an unnamed one that is not a row count
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X, _ = load_file(_write(tmp_path / "f.csv", "id,a,label\n0,1,0\n1,2,1\n"))
        assert list(X.columns) == ["id", "a"]
        X, _ = load_file(_write(tmp_path / "g.csv", ",a,label\n0,1,0\n0,2,1\n"))
        assert list(X.columns) == ["Unnamed: 0", "a"]


def test_shuffled_or_filtered_row_index_column_is_dropped(tmp_path):
    df = pd.DataFrame({"a": np.arange(8) / 2, "label": [0, 1] * 4})
    for name, rows in (("shuffled", [5, 2, 7, 0, 3, 6, 1, 4]), ("filtered", [0, 2, 3, 6, 7])):
        df.iloc[rows].to_csv(tmp_path / f"{name}.csv")
        with pytest.warns(
            UserWarning,
            match=r"dropped the first column: it has no name .* "
            rf"distinct whole numbers \({rows[0]}, {rows[1]}, {rows[2]}, \.\.\.\)",
        ):
            X, y = load_file(tmp_path / f"{name}.csv")
        assert list(X.columns) == ["a"] and list(X["a"]) == list(df["a"].iloc[rows])


def test_first_row_with_text_is_data_when_its_text_recurs_below(tmp_path):
    # UCI's iris.data: no header, a text label in every row
    rows = ["5.1,3.5,Iris-setosa", "4.9,3.0,Iris-setosa", "7.0,3.2,Iris-versicolor"] * 4
    f = _write(tmp_path / "iris.data", "\n".join(rows) + "\n")
    X, y = load_file(f, target=-1)
    assert list(X.columns) == ["0", "1"] and len(y) == 12 and y[0] == "Iris-setosa"
    assert X.iloc[0].tolist() == [5.1, 3.5]
    with pytest.raises(DataFileError, match=r"last column '2' .* pass --target '2'"):
        load_file(f)
    # headers stay headers: names that are numbers (MNIST's label,0,1,...), a text name
    # that never recurs in its column
    X, y = load_file(_write(tmp_path / "m.csv", "label,0,1\n3,0,5\n7,1,0\n3,2,2\n"))
    assert list(X.columns) == ["0", "1"] and list(y) == [3, 7, 3]
    f = _write(tmp_path / "h.csv", "1,2,outcome\n1,2,yes\n3,4,no\n5,6,yes\n")
    X, y = load_file(f, target="outcome")
    assert list(X.columns) == ["1", "2"] and list(y) == ["yes", "no", "yes"]
    # ambiguous (the text of the first row does not recur): read as the header, and the
    # hint does not offer a --target that would lose the row
    f = _write(tmp_path / "a.data", "5.1,3.5,odd\n4.9,3.0,x\n7.0,3.2,y\n")
    with pytest.raises(DataFileError, match="if it is a data row, add a header line") as err:
        load_file(f)
    assert "--target 'odd'" not in str(err.value)


def test_header_with_fewer_names_than_fields(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3)).round(3)

    def write(name, first):
        rows = "".join(f"{first(i)},{a},{b},{c},{i % 2}\n" for i, (a, b, c) in enumerate(X))
        return _write(tmp_path / name, "b,c,d,label\n" + rows)

    # the header lost a name: an error, not a silently dropped column
    with pytest.raises(
        DataFileError,
        match=r"header names 4 columns \('b', 'c', 'd', 'label'\) but the rows have 5 fields",
    ):
        load_file(write("short.csv", lambda i: X[i, 0] + 1))
    with pytest.raises(
        DataFileError,
        match=r"header names 4 columns \('b', 'c', 'd', 'label'\) but the rows have 5 fields",
    ):
        load_file(write("dup.csv", lambda i: i % 3))
    # distinct row names (R's write.table): dropped with a warning
    for name, first in (("r.csv", lambda i: i + 1), ("s.csv", lambda i: f"car{i}")):
        with pytest.warns(
            UserWarning, match=r"header names 4 columns .* rows have 5 fields, .* R's write.table"
        ):
            got, y = load_file(write(name, first))
        assert list(got.columns) == ["b", "c", "d"] and np.allclose(got.to_numpy(), X)
    # a delimiter that ends every data row (not the header) adds no field
    rows = "".join(f"{i},{a},{b},{c},{i % 2},\n" for i, (a, b, c) in enumerate(X))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, y = load_file(_write(tmp_path / "t.csv", "a,b,c,d,label\n" + rows))
    assert list(got.columns) == ["a", "b", "c", "d"] and np.allclose(got.iloc[:, 1:], X)
    assert list(got["a"]) == list(range(30)) and list(y) == [0, 1] * 15


def test_load_table_keeps_every_column(tmp_path):
    t = load_table(_write(tmp_path / "d.csv", "a,b,label\n1,2,x\n3,4,y\n"))
    assert list(t.columns) == ["a", "b", "label"] and list(t["label"]) == ["x", "y"]
    t = load_table(_write(tmp_path / "n.csv", "a;b\n1,5;2\n3;4\n"))  # no label at all
    assert list(t.columns) == ["a", "b"] and list(t["a"]) == [1.5, 3.0]
    assert t.attrs == {"format": "csv"}  # no label column is known
    f = tmp_path / "d.svm"
    dump_svmlight_file(np.array([[0.5, 0.0], [0.0, 2.0]]), np.array([1, -1]), str(f))
    t = load_table(f)
    assert list(t.columns) == ["f1", "f2", "target"] and list(t["target"]) == [1, -1]
    assert t.attrs["label"] == "target" and t.attrs["format"] == "svmlight"
    arff = "@relation r\n@attribute a numeric\n@attribute c {u,v}\n@data\n1,u\n2,v\n"
    t = load_table(_write(tmp_path / "d.arff", arff))
    assert list(t.columns) == ["a", "c"] and list(t["c"]) == ["u", "v"]
    assert t.attrs["label"] == "c"  # load_file's default: the last attribute
    keel = arff.replace("@data", "@inputs c\n@outputs a\n@data")
    assert load_table(_write(tmp_path / "k.dat", keel)).attrs["label"] == "a"
    # two @outputs: no default label, and load_file asks for one
    two = _write(tmp_path / "two.dat", arff.replace("@data", "@outputs a, c\n@data"))
    assert "label" not in load_table(two).attrs
    with pytest.raises(DataFileError, match="several @outputs"):
        load_file(two)
    X, y = load_file(two, target="c")
    assert list(X.columns) == ["a"] and list(y) == ["u", "v"] and X.attrs == {}


def test_missing_labels_count_in_the_warning(tmp_path):
    f = _write(tmp_path / "d.csv", "a,target\n1,x\n2,\n3,\n4,y\n")
    with pytest.warns(UserWarning, match="dropped 2 rows with"):
        X, _ = load_file(f)
    assert list(X["a"]) == [1, 4]


def test_missing_labels_are_dropped_with_a_warning(tmp_path):
    f = _write(tmp_path / "d.csv", "a,target\n1,x\n2,\n3,y\n")
    with pytest.warns(UserWarning, match="dropped 1 row with"):
        X, y = load_file(f)
    assert list(y) == ["x", "y"] and list(X["a"]) == [1, 3]
    # integer labels stay integers (pandas reads the column with a gap as float)
    f = _write(tmp_path / "i.csv", "a,target\n1,0\n2,\n3,1\n4,2.5\n")
    with pytest.warns(UserWarning, match="dropped 1 row with"):
        _, y = load_file(f)
    assert y.dtype.kind == "f"  # 2.5 is not an integer: the labels stay as read
    f = _write(tmp_path / "j.csv", "a,target\n1,0\n2,\n3,1\n")
    with pytest.warns(UserWarning, match="dropped 1 row with"):
        _, y = load_file(f)
    assert y.dtype.kind == "i" and list(y) == [0, 1]


def test_bundled_csv_reads_the_same_as_the_registry():
    from svmtune.datasets import dataset_path

    X, y = load_file(dataset_path("crx"))
    X0, y0, _ = load_dataset("crx")
    pd.testing.assert_frame_equal(X, X0, check_dtype=False)
    assert np.array_equal(y, y0)


# ---------------------------------------------------------------------------- svmlight
def test_svmlight_dense(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 4))
    X[X < 0] = 0.0  # absent entries of the sparse format
    X[:, -1] = 1.0 + rng.random(6)
    y = np.array([1, -1, 1, 1, -1, -1])
    f = tmp_path / "d.libsvm"
    dump_svmlight_file(X, y, str(f), zero_based=False)
    X1, y1 = load_file(f)
    assert list(X1.columns) == ["f1", "f2", "f3", "f4"]
    assert np.allclose(X1.to_numpy(), X)
    assert y1.dtype.kind == "i" and np.array_equal(y1, y)
    # a .txt file is recognised from its content
    g = _write(tmp_path / "d.txt", f.read_text())
    assert detect_format(g) == "svmlight"
    with pytest.raises(DataFileError, match="drop --target"):
        load_file(f, target="f1")


def test_svmlight_index_base(tmp_path):
    X = np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 0.0], [0.0, 0.0, 4.0]])
    y = np.array([1, -1, 1])
    f = tmp_path / "zero.svm"
    dump_svmlight_file(X, y, str(f), zero_based=True)  # index 0 never occurs
    # "auto": no index 0, so read as 1-based, shifted by one column
    t = load_table(f)
    assert list(t.columns) == ["f1", "f2", "target"] and t.attrs["zero_based"] is False
    X1, _ = load_file(f, zero_based=True)
    assert list(X1.columns) == ["f1", "f2", "f3"] and np.array_equal(X1.to_numpy(), X)
    assert load_table(f, zero_based=True).attrs["zero_based"] is True
    g = tmp_path / "with0.svm"
    dump_svmlight_file(X + 1, y, str(g), zero_based=True)
    assert load_table(g).attrs["zero_based"] is True
    with pytest.raises(DataFileError, match="1-based feature indices .* holds feature index 0"):
        load_file(g, zero_based=False)
    with pytest.raises(ValueError, match="zero_based must be"):
        load_file(g, zero_based="yes")


def test_svmlight_unparsable(tmp_path):
    f = _write(tmp_path / "bad.svm", "1 1:0.5 2:x\n")
    with pytest.raises(DataFileError, match="cannot parse .* as svmlight"):
        load_file(f)


# ---------------------------------------------------------------------------- ARFF / KEEL
WEKA = """% a Weka file
@RELATION weather
@ATTRIBUTE 'out look' {sunny, overcast, 'rainy day'}
@ATTRIBUTE temperature NUMERIC
@ATTRIBUTE humidity REAL
@attribute windy {TRUE, FALSE}
@ATTRIBUTE play {yes, no}

@DATA
sunny,85,85,FALSE,no
overcast,?,86,FALSE,yes
'rainy day',70,?,TRUE,yes
% comment inside the data
?,68,80,FALSE,no
"""


def test_weka_arff(tmp_path):
    X, y = load_file(_write(tmp_path / "w.arff", WEKA))
    assert list(X.columns) == ["out look", "temperature", "humidity", "windy"]
    assert list(y) == ["no", "yes", "yes", "no"]
    assert X.loc[2, "out look"] == "rainy day" and pd.isna(X.loc[3, "out look"])
    assert np.isnan(X.loc[1, "temperature"]) and np.isnan(X.loc[2, "humidity"])
    assert X["temperature"].dtype == float
    X2, y2 = load_file(tmp_path / "w.arff", target="windy")
    assert list(y2) == ["FALSE", "FALSE", "TRUE", "FALSE"] and "play" in X2.columns


KEEL = """@relation toy-keel
@attribute At1 real [0.0, 1.0]
@attribute Id integer [1, 100]
@attribute Colour {red, green}
@attribute Class {1, 2}
@attribute At2 real[-5.5,5.5]
@inputs At1, Colour, At2
@outputs Class
@data
0.25, 1, red, 1, -1.5
<null>, 2, green, 2, 0.5
0.75, 3, <null>, 1, ?
0.5, 4, green, 2, 5.0
"""


def test_keel_dat_inputs_outputs_and_missing(tmp_path):
    f = _write(tmp_path / "toy.dat", KEEL)
    assert detect_format(f) == "arff"
    X, y = load_file(f)
    assert list(X.columns) == ["At1", "Colour", "At2"]  # Id is not an input
    assert y.dtype.kind == "i" and list(y) == [1, 2, 1, 2]  # numeric-looking nominal labels
    assert np.isnan(X.loc[1, "At1"]) and np.isnan(X.loc[2, "At2"])
    assert pd.isna(X.loc[2, "Colour"]) and X.loc[1, "Colour"] == "green"
    df, inputs, outputs = parse_arff(KEEL)
    assert inputs == ["At1", "Colour", "At2"] and outputs == ["Class"]
    assert df.shape == (4, 5)


@pytest.mark.parametrize(
    "text,match",
    [
        (
            "@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n1,x\nfoo,y\n",
            "line 6: value 'foo' of numeric attribute 'a' is not a number",
        ),
        (
            "@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n1,x,3\n",
            "line 5: expected 2 values",
        ),
        ("@relation r\n@attribute a numeric\n@attribute c {x,y}\n", "no @data"),
        ("@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n", "no data rows"),
        ("@relation r\n@attribute a relational\n@data\n1\n", "unsupported attribute type"),
        (
            "@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n{0 1, 1 x}\n",
            "sparse ARFF",
        ),
        (
            "@relation r\n@attribute a numeric\n@attribute c {x,y}\n@outputs d\n@data\n1,x\n",
            "'d' is no @attribute",
        ),
    ],
)
def test_arff_errors(tmp_path, text, match):
    with pytest.raises(DataFileError, match=match):
        load_file(_write(tmp_path / "bad.arff", text))


# ---------------------------------------------------------------------------- errors
def test_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="file not found"):
        load_file(tmp_path / "nope.csv")


def test_binary_file_is_unparsable(tmp_path):
    f = tmp_path / "junk.csv"
    f.write_bytes(bytes(np.random.default_rng(0).integers(0, 256, 4000, dtype=np.uint8)))
    with pytest.raises(DataFileError, match="binary file"):
        load_file(f)
    # UTF-16 without a byte-order mark cannot be told from binary data: the message says so
    f.write_bytes("a,target\n1,0\n2,1\n".encode("utf-16-le"))
    with pytest.raises(DataFileError, match="UTF-16 without a byte-order mark"):
        load_file(f)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
@pytest.mark.parametrize("name", ["d.csv", "d.dat"])
def test_text_with_a_byte_order_mark(tmp_path, encoding, name):
    # a spreadsheet's "Unicode text" export is UTF-16 with a byte-order mark; .dat is
    # sniffed from the file's first bytes
    text = "a\tb\ttarget\n1.5\t2\tü\n3\t4\tx\n"
    raw = text.encode(encoding)
    if encoding == "utf-16-be":
        raw = codecs.BOM_UTF16_BE + raw
    f = tmp_path / name
    f.write_bytes(raw)
    X, y = load_file(f)
    assert list(X.columns) == ["a", "b"] and list(X["a"]) == [1.5, 3.0]
    assert list(y) == ["ü", "x"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
@pytest.mark.parametrize("name", ["d.svm", "d.svm.gz", "d.txt"])
def test_svmlight_with_a_byte_order_mark(tmp_path, encoding, name):
    raw = "1 1:0.5 3:2\n-1 2:1.5\n".encode(encoding)
    f = tmp_path / name
    f.write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
    X, y = load_file(f)
    assert list(y) == [1, -1] and X.to_numpy().tolist() == [[0.5, 0, 2], [0, 1.5, 0]]


def test_sniffing_utf16_tolerates_a_cut_character(tmp_path, monkeypatch):
    # the format is sniffed from the first _SNIFF_BYTES bytes: a character cut there
    # (here half of a surrogate pair) is dropped, and the whole file still reads
    monkeypatch.setattr(text_module, "SNIFF_BYTES", 2 + 2 * len("a,target\n1,") + 2)
    f = tmp_path / "d.dat"
    f.write_bytes("a,target\n1,\U0001f600\n2,x\n".encode("utf-16"))
    X, y = load_file(f)
    assert list(y) == ["\U0001f600", "x"]


def test_invalid_utf16_after_its_byte_order_mark(tmp_path):
    f = tmp_path / "d.csv"
    f.write_bytes(codecs.BOM_UTF16_LE + "a,target\n1,0\n".encode("utf-16-le") + b"\x00\xd8")
    with pytest.raises(DataFileError, match="not valid UTF-16 text"):
        load_file(f)


@pytest.mark.parametrize(
    "text,kwargs,match",
    [
        ("", {}, "empty"),
        ("a,b,target\n1,2,0\n2,3,0,5,6\n3,4\n", {}, "cannot parse"),
        ("onlyone\n1\n2\n", {}, "single column"),
        ("a,b,species\n1,2,x\n3,4,y\n", {}, "--target 'species'"),
        ("a,b,c\n1,2,3\n3,4,5\n", {}, "no label column named target, class or label"),
        ("a,b,target\n1,2,0\n", {"target": "zz"}, "target column 'zz' not found"),
        ("a,b,target\n1,2,0\n", {"target": 3}, r"position 3 is out of range for 3 columns"),
        ("a,b,target\n1,2,0\n", {"target": "-4"}, r"use 0\.\.2, or -3\.\.-1"),
        ("a,class,label\n1,2,0\n", {}, "several possible label columns"),
        ("a,target\n1,\n2,\n", {}, "target column 'target' is empty"),
        ("target\n1\n", {"fmt": "csv"}, "single column"),
        ("a,target\n1,0\n", {"fmt": "excel"}, "unknown data format"),
    ],
)
def test_csv_errors(tmp_path, text, kwargs, match):
    f = _write(tmp_path / "bad.csv", text)
    with pytest.raises(ValueError, match=match):
        load_file(f, **kwargs)


@pytest.mark.parametrize("name", ["d.xlsx", "d.parquet", "d.npy", "d.json.gz"])
def test_formats_not_read_are_named(tmp_path, name):
    f = tmp_path / name
    f.write_bytes(b"PK\x03\x04\x00\x00" * 10)
    with pytest.raises(DataFileError, match="it is an? .*save the data as CSV"):
        load_file(f)
    with pytest.raises(DataFileError, match="binary file|Not a gzipped file"):
        load_file(f, fmt="csv")  # an explicit format is tried


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(DataFileError, match="directory"):
        load_file(tmp_path)


def test_bom_crlf_and_latin1(tmp_path):
    f = tmp_path / "win.csv"
    f.write_bytes("\ufeffa,b,target\r\n1,2,x\r\n3,4,y\r\n".encode())
    X, y = load_file(f)
    assert list(X.columns) == ["a", "b"] and list(y) == ["x", "y"]
    g = tmp_path / "latin.csv"
    g.write_bytes("a,city,target\n1,Málaga,x\n2,Zürich,y\n".encode("latin-1"))
    X, _ = load_file(g)
    assert list(X["city"]) == ["Málaga", "Zürich"]


# ---------------------------------------------------------------------------- bounds
def test_csv_field_over_the_csv_limit_names_the_line(tmp_path):
    big = "x" * (loaders.MAX_CSV_FIELD + 10)
    for name, text in [
        ("field.csv", f"a,b,label\n1,2,0\n3,{big},1\n"),
        ("line.csv", f"{big}\n1\n"),
        ("blanks.txt", f"a b label\n1 2 0\n3 {big} 1\n"),
    ]:
        path = _write(tmp_path / name, text)
        with pytest.raises(DataFileError, match=rf"{name}.* line \d+ holds a field of more than"):
            load_file(path)


def test_wide_csv_lines_longer_than_the_field_limit_are_read(tmp_path):
    d = 30_000  # 120 KB of header and rows: longer than a field may be
    header = ",".join(f"c{j}" for j in range(d)) + ",label\n"
    rows = "".join(",".join(["1.5"] * d) + f",{i % 2}\n" for i in range(4))
    assert len(header) > loaders.MAX_CSV_FIELD
    X, y = load_file(_write(tmp_path / "wide.csv", header + rows))
    assert X.shape == (4, d) and list(y) == [0, 1, 0, 1]


def test_svmlight_index_bounds_name_the_line_and_allocate_nothing(tmp_path):
    import tracemalloc

    cases = [
        ("overflow", "1 1:0.5 100000000000000000000:1\n0 2:1\n", "line 1: feature index 1"),
        ("wide", "".join(f"{i % 2} 1:0.5 10000000:1\n" for i in range(200)), "line 1: .*1,048,576"),
        ("huge", "0 1:1\n1 2000000000:1\n", "line 2: feature index 2000000000 exceeds"),
        (
            "dense",
            "".join(f"{i % 2} 1:0.5 {500_000 if i == 7 else 3}:1\n" for i in range(400)),
            r"line 8: feature index 500000 makes 400 rows x 500,001 columns = 1.5 GiB",
        ),
    ]
    for name, text, match in cases:
        path = _write(tmp_path / f"{name}.svm", text)
        assert path.stat().st_size < 8_000
        tracemalloc.start()
        with pytest.raises(DataFileError, match=match):
            load_file(path)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 50 * 2**20, (name, peak)  # MiB, not the GiB the indices ask for
    # inside the bounds: read as before
    X, y = load_file(_write(tmp_path / "ok.svm", "0 1:1 1000:2\n1 2:1\n"))
    assert X.shape == (2, 1000) and X.loc[0, "f1000"] == 2.0


def test_decompressed_text_is_bounded(tmp_path, monkeypatch):
    path = tmp_path / "d.csv.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("a,b,label\n" + "1,2,0\n3,4,1\n" * 100)
    monkeypatch.setattr(text_module, "MAX_TEXT_BYTES", 500)
    with pytest.raises(DataFileError, match="more than .* GiB of text after decompression"):
        load_file(path)


def test_csv_integers_beyond_int64_are_numbers_or_text(tmp_path):
    """pandas keeps integers past int64 as Python ints in an object column, where
    ``.str.strip()`` failed with an AttributeError (found by the fuzz suite)."""
    X, y = load_file(_write(tmp_path / "a.csv", "0.0,-9223372036854775809\n"), target=-1)
    assert X.dtypes.tolist() == [np.float64] and y[0] == pytest.approx(-(2.0**63))
    X, _ = load_file(_write(tmp_path / "b.csv", "a,b,label\n1,99999999999999999999999,0\n2,3,1\n"))
    assert X["b"].tolist() == [1e23, 3.0]
    X, _ = load_file(_write(tmp_path / "c.csv", "a,b,label\n1,99999999999999999999999,0\n2,x,1\n"))
    assert X["b"].tolist() == ["99999999999999999999999", "x"]


def test_csv_lines_are_bounded_in_fields_before_pandas_builds_columns(tmp_path, monkeypatch):
    from svmtune.datasets import _csv

    monkeypatch.setattr(_csv, "MAX_CSV_COLUMNS", 6)
    ok = "a,b,c,d,e,label\n" + "1,2,3,4,5,0\n1,2,3,4,5,1\n" * 30
    assert load_file(_write(tmp_path / "ok.csv", ok))[0].shape == (60, 5)
    # a quoted delimiter is no field boundary
    quoted = 'a,b,c,d,e,label\n"1,5",2,3,4,5,0\n1,2,3,4,5,1\n'
    assert load_file(_write(tmp_path / "quoted.csv", quoted))[0].shape == (2, 5)
    wide = ok + "1,2,3,4,5,6,0\n"
    with pytest.raises(
        DataFileError, match=r"line 62 has 7 fields \(delimiter ','\), more than the 6 "
    ):
        load_file(_write(tmp_path / "wide.csv", wide))
    tabs = ok.replace(",", "\t").replace("label\n", "x\tlabel\n", 1)
    with pytest.raises(DataFileError, match=r"line 1 has 7 fields \(delimiter 'tab'\)"):
        load_file(_write(tmp_path / "wide.tsv", tabs))
    with pytest.raises(DataFileError, match=r"line 1 has 7 fields \(delimiter 'blanks'\)"):
        load_file(_write(tmp_path / "wide.txt", "1 2 3 4 5 6 0\n" * 3))


def test_a_header_only_csv_is_refused_before_its_columns_are_built(tmp_path, monkeypatch):
    import pandas

    def no_parse(*args, **kwargs):
        raise AssertionError("pandas parsed the file")

    monkeypatch.setattr(pandas, "read_csv", no_parse)
    for text in ("a,b,label\n", "a,b,label\n\n\n", ",".join(f"c{j}" for j in range(5000)) + "\n"):
        with pytest.raises(DataFileError, match=r"no data rows \(only the header\)"):
            load_file(_write(tmp_path / "h.csv", text))


def test_svmlight_columns_are_bounded_on_the_sparse_path(tmp_path, monkeypatch):
    from svmtune.datasets import _svmlight

    monkeypatch.setattr(_svmlight, "MAX_SPARSE_FEATURES", 10)
    one = _write(tmp_path / "one.svm", "1 1:1 10:2\n0 2:1\n")  # 1-based: 10 columns
    X, y, zero = _svmlight.read_svmlight_sparse(one)
    assert X.shape == (2, 10) and not zero and list(y) == [1, 0]
    zero_based = _write(tmp_path / "zero.svm", "1 0:1 9:2\n0 2:1\n")  # 0-based: 10 columns
    assert _svmlight.read_svmlight_sparse(zero_based)[0].shape == (2, 10)
    over = _write(tmp_path / "over.svm", "1 1:1\n0 2:1 11:2\n")
    with pytest.raises(DataFileError, match="line 2: feature index 11 exceeds the 10 "):
        _svmlight.read_svmlight_sparse(over)
    past = _write(tmp_path / "past.svm", "1 1:1\n0 2:1 99999999999999999999:2\n")
    int32 = _write(tmp_path / "int32.svm", "1 1:1\n0 2:1 2147483648:2\n")
    with pytest.raises(DataFileError, match="line 2: feature index 2147483648 is past"):
        _svmlight.read_svmlight_sparse(int32)
    with pytest.raises(DataFileError, match="line 2: feature index 9+ is past 2,147,483,647"):
        _svmlight.read_svmlight_sparse(past)


def test_a_compressed_file_expands_at_most_a_bounded_ratio(tmp_path, monkeypatch):
    monkeypatch.setattr(text_module, "EXPANSION_FLOOR", 4096)
    text = "a,b,label\n" + "0,0,0\n0,0,1\n" * 4000  # 48 KB of text, a few hundred bytes packed
    path = tmp_path / "bomb.csv.gz"
    with gzip.open(path, "wt") as fh:
        fh.write(text)
    ratio = len(text) / path.stat().st_size
    assert ratio > text_module.MAX_EXPANSION
    with pytest.raises(DataFileError, match="more than 64 times its size.*decompress it yourself"):
        load_file(path)
    plain = _write(tmp_path / "plain.csv", text)  # the same text, uncompressed: read
    assert load_file(plain)[0].shape == (8000, 2)
    monkeypatch.setattr(text_module, "EXPANSION_FLOOR", len(text))  # within the floor: read
    assert load_file(path)[0].shape == (8000, 2)


def test_arff_attributes_are_bounded_as_csv_columns_are(tmp_path, monkeypatch):
    from svmtune.datasets import _arff

    monkeypatch.setattr(_arff, "MAX_CSV_COLUMNS", 3)
    head = "@relation r\n" + "".join(f"@attribute a{j} numeric\n" for j in range(3))
    ok = head + "@data\n1,2,0\n3,4,1\n"
    assert load_file(_write(tmp_path / "ok.arff", ok))[0].shape == (2, 2)
    wide = head + "@attribute a3 numeric\n@data\n1,2,3,0\n3,4,5,1\n"
    with pytest.raises(DataFileError, match="line 5: more than 3 @attribute lines"):
        load_file(_write(tmp_path / "wide.arff", wide))


def test_svmlight_dense_table_is_bounded_by_the_file_size(tmp_path, monkeypatch):
    import tracemalloc

    # 200 short lines (2 KiB) asking for 200 x 100,001 dense values (160 MB, under 1 GiB):
    # more than 64 times the file's text (and 64 MiB)
    text = "".join(f"{i % 2} 1:0.5 {100_000 if i == 3 else 2}:1\n" for i in range(200))
    path = _write(tmp_path / "spread.svm", text)
    tracemalloc.start()
    with pytest.raises(DataFileError, match=r"line 4: feature index 100000 makes 200 rows x "):
        load_file(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * 2**20
    # the same values, compressed: bounded by the text, not the packed bytes
    packed = tmp_path / "spread.svm.gz"
    with gzip.open(packed, "wt") as fh:
        fh.write(text)
    with pytest.raises(DataFileError, match="64 times its 2 KiB of text"):
        load_file(packed)
    # a compressed svmlight file expands within the text bounds too
    monkeypatch.setattr(text_module, "EXPANSION_FLOOR", 1024)
    bomb = tmp_path / "bomb.svm.gz"
    with gzip.open(bomb, "wt") as fh:
        fh.write("1 1:1 2:1\n0 1:1\n" * 2000)
    with pytest.raises(DataFileError, match="more than 64 times its size"):
        load_file(bomb)
