"""Readers for the user's data files: CSV/TSV, svmlight/LIBSVM and ARFF (Weka and KEEL).

:func:`load_file` returns ``(X, y)``: ``X`` a DataFrame (categorical string columns kept,
missing values as NaN), ``y`` a 1-D ndarray of the labels as the file gives them.  Hand
``X`` to ``SVMTuner(preprocess="auto")`` when it has categorical columns or missing values
(:func:`svmtune.preprocess.needs_auto`).

Formats
-------
``"csv"`` / ``"tsv"``
    Delimited text with a header row; the delimiter is taken from the extension (``.tsv``,
    ``.tab``) or sniffed (``,`` ``;`` tab ``|`` or runs of blanks).  The first row is read as
    data, and the columns are named ``"0"``, ``"1"``, ..., when it is made only of numbers,
    or when it holds a number and each of its other cells (a category such as
    ``Iris-setosa``) occurs again in its column further down (a header name practically
    never does); otherwise it is the header.  A line of more than :data:`MAX_CSV_COLUMNS`
    (2^16) fields is refused naming the line, before any column is built (pandas' cost
    grows with the columns, not with the bytes), and so is a file of only a header line.
    A header with fewer names than the rows have
    fields is an error, unless it lacks just the name of a first column of distinct whole
    numbers or texts (the row names R's ``write.table`` writes): that column is dropped with
    a warning.  Empty cells,
    ``?``, ``NA``, ``NaN``, ``null`` and ``<null>`` are missing.  The label column is
    ``target`` (a column name or an integer position such as ``-1``); by default the one
    column named ``target``, ``class`` or ``label`` (any case).  With a delimiter other than
    ``,`` a column whose values are all numbers with a decimal comma (``1,5``) is numeric
    (unless every comma could separate thousands, ``1,234``: then it stays text, with a
    warning).
    An unnamed first column of distinct whole numbers (the row index ``DataFrame.to_csv``
    and R's ``write.csv`` write: 0, 1, ... or 1, 2, ..., or in any order after rows were
    shuffled or filtered) is dropped with a warning.
``"svmlight"``
    ``label index:value ...`` lines (:func:`sklearn.datasets.load_svmlight_file`, sparse),
    densified; columns ``f1 ... fd``, ``f1`` the first feature.  The largest index bounds
    what is built: at most :data:`MAX_SVMLIGHT_FEATURES` (2^20) columns and
    :data:`MAX_DENSE_BYTES` (1 GiB) of dense features, and no more than
    :data:`MAX_EXPANSION` (64) times the file's text (or 64 MiB); a file past a bound is refused
    naming the line of the offending index (so a small file cannot make the loader
    allocate gigabytes), and so is an index past 2^31 - 1 (LIBSVM's C int).  ``svmtune select`` and
    ``predict`` keep the file sparse where the method takes sparse rows: there the bound is
    :data:`svmtune.preprocess.MAX_SPARSE_FEATURES` (2^23) columns, whatever the rows.
    Feature indices start at 1 (LIBSVM's
    numbering) unless index 0 occurs in the file (``zero_based="auto"``, as scikit-learn
    decides), so a 0-based file in which feature 0 is never given reads shifted by one:
    pass ``zero_based=True`` (or ``False``) when the numbering is known.  ``svmtune
    predict`` reads a file with the numbering of the model's training file.
``"arff"``
    Weka ARFF and KEEL ``.dat`` files: ``@relation``, ``@attribute name type`` (``numeric``,
    ``real``/``integer`` with KEEL's optional ``[lo, hi]`` range, nominal ``{a, b}``,
    ``string``, ``date``), KEEL's ``@inputs``/``@outputs``, then ``@data`` rows.  ``?`` and
    ``<null>`` are missing.  The label is ``target`` if given, else the ``@outputs``
    attribute, else the last attribute.  Numeric-looking nominal labels (``{0, 1}``) become
    numbers.

Compressed files (``.gz``, ``.bz2``, ``.xz``) are read transparently, up to
:data:`MAX_TEXT_BYTES` (2 GiB) of text, and up to :data:`MAX_EXPANSION` (64) times their
size (or 64 MiB, :data:`EXPANSION_FLOOR`): a small compressed file cannot stand for
gigabytes.  A CSV field may hold at most
:data:`MAX_CSV_FIELD` characters (Python's ``csv`` limit, 128 KiB); lines may be longer.
Text is UTF-8 (with or without a byte-order mark), else Latin-1; UTF-16 and UTF-32 text
is read when it starts with its byte-order mark (a spreadsheet's "Unicode text" export
does).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from svmtune._warnings import user_stacklevel
from svmtune.datasets import _text
from svmtune.datasets._arff import parse_arff
from svmtune.datasets._csv import MAX_CSV_COLUMNS, MAX_CSV_FIELD, is_number, read_csv
from svmtune.datasets._svmlight import (
    MAX_DENSE_BYTES,
    MAX_SVMLIGHT_FEATURES,
    SVMLIGHT_LINE,
    read_svmlight,
)
from svmtune.datasets._text import (
    EXPANSION_FLOOR,
    MAX_EXPANSION,
    MAX_TEXT_BYTES,
    base_suffix,
    check_path,
    column_list,
    decode,
    first_lines,
    read_bytes,
)
from svmtune.exceptions import DataFileError

__all__ = [
    "EXPANSION_FLOOR",
    "MAX_CSV_COLUMNS",
    "MAX_CSV_FIELD",
    "MAX_DENSE_BYTES",
    "MAX_EXPANSION",
    "MAX_SVMLIGHT_FEATURES",
    "MAX_TEXT_BYTES",
    "TARGET_NAMES",
    "FORMATS",
    "DataFileError",
    "load_file",
    "load_table",
    "detect_format",
    "parse_arff",
    "label_column",
    "pick_target",
    "split_table",
]

#: accepted ``fmt`` values (the aliases below map onto them)
FORMATS = ("csv", "tsv", "svmlight", "arff")
_ALIASES = {"libsvm": "svmlight", "svm": "svmlight", "keel": "arff", "dat": "arff"}
_EXT = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".arff": "arff",
    ".svm": "svmlight",
    ".svmlight": "svmlight",
    ".libsvm": "svmlight",
}
# formats users may try that are not read here, for a clearer error than "binary file"
_FOREIGN = {
    ".xlsx": "an Excel workbook",
    ".xlsm": "an Excel workbook",
    ".xls": "an Excel workbook",
    ".ods": "an OpenDocument spreadsheet",
    ".parquet": "a Parquet file",
    ".feather": "a Feather file",
    ".npy": "a NumPy array file",
    ".npz": "a NumPy archive",
    ".mat": "a MATLAB file",
    ".h5": "an HDF5 file",
    ".hdf5": "an HDF5 file",
    ".pkl": "a pickle",
    ".pickle": "a pickle",
    ".joblib": "a joblib pickle",
    ".json": "a JSON file",
}
#: names of the default label column (any case)
TARGET_NAMES = ("target", "class", "label")


def _normalise_fmt(fmt: str) -> str:
    key = str(fmt).strip().lower().lstrip(".")
    key = _ALIASES.get(key, key)
    if key not in FORMATS:
        raise ValueError(
            f"unknown data format {fmt!r}; use one of {', '.join(FORMATS)} "
            f"(aliases: {', '.join(sorted(_ALIASES))})"
        )
    return key


def detect_format(path: str | Path) -> str:
    """Format of a data file from its extension, else from its first lines.

    ``.csv``, ``.tsv``/``.tab``, ``.arff``, ``.svm``/``.svmlight``/``.libsvm`` decide by
    name; ``.dat`` (KEEL) and anything else are sniffed: a first line starting with ``@``
    means ARFF, ``label index:value ...`` lines mean svmlight, otherwise CSV.
    """
    p = check_path(path)
    by_ext = _EXT.get(base_suffix(p))
    if by_ext is not None:
        return by_ext
    if base_suffix(p) in _FOREIGN:
        raise DataFileError(
            f"cannot read {path}: it is {_FOREIGN[base_suffix(p)]}, not one of the formats "
            "svmtune reads (CSV/TSV, svmlight/LIBSVM, ARFF/KEEL); save the data as CSV, or "
            "load them yourself and pass X and y to SVMTuner"
        )
    text = decode(read_bytes(p, _text.SNIFF_BYTES), p, partial=True)
    lines = first_lines(text, 20, comment="%")
    if not lines:
        raise DataFileError(f"cannot parse {path}: the file is empty")
    if lines[0].lstrip().startswith("@"):
        return "arff"
    body = [ln for ln in lines if not ln.lstrip().startswith("#")]
    if body and all(SVMLIGHT_LINE.match(ln) for ln in body) and any(":" in ln for ln in body):
        return "svmlight"
    return "csv"


def _looks_non_numeric(series: pd.Series) -> bool:
    return not pd.api.types.is_numeric_dtype(series)


def pick_target(df: pd.DataFrame, target: str | int | None, source: str) -> str:
    """Name of the label column of ``df``.

    ``target`` may be a column name (exact, else case-insensitive) or an integer position
    (``-1`` = last column); None picks the one column named target/class/label (any case).
    """
    cols = [str(c) for c in df.columns]
    if target is None:
        found = [c for c in cols if c.strip().lower() in TARGET_NAMES]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise DataFileError(
                f"{source}: several possible label columns {found}; choose one with --target "
                "(target=...)"
            )
        hint = ""
        last = df.columns[-1]
        numbers = [c for c in cols if is_number(c.strip())]
        headerless = cols == [str(j) for j in range(len(cols))]
        if numbers and not headerless and df.attrs.get("format", "csv") in ("csv", "tsv"):
            # the first line, read as the header, may be a data row: naming a column of it
            # with --target would lose that row
            shown = ", ".join(repr(c) for c in numbers[:3]) + (", ..." if len(numbers) > 3 else "")
            hint = (
                f" The first line, read as the header, holds numbers ({shown}): if it is a data "
                "row, add a header line naming the columns (one of them label) so that it is "
                "read as data; if it is the header, name the label column with --target."
            )
        elif _looks_non_numeric(df[last]):
            hint = (
                f" The last column {str(last)!r} holds non-numeric values; if it is the label, "
                f"pass --target {str(last)!r}."
            )
        raise DataFileError(
            f"{source}: no label column named target, class or label; name the label column "
            f"with --target COLUMN (target=...). Columns: {column_list(cols)}.{hint}"
        )
    key = str(target)
    if key in cols:
        return key
    folded = [c for c in cols if c.strip().lower() == key.strip().lower()]
    if len(folded) == 1:
        return folded[0]
    if re.fullmatch(r"[-+]?\d+", key.strip()):
        pos = int(key)
        if -len(cols) <= pos < len(cols):
            return cols[pos]
        raise DataFileError(
            f"{source}: target position {pos} is out of range for {len(cols)} columns (use "
            f"0..{len(cols) - 1}, or -{len(cols)}..-1 from the end). Columns: "
            f"{column_list(cols)}"
        )
    raise DataFileError(f"{source}: target column {key!r} not found. Columns: {column_list(cols)}")


def _split_target(df: pd.DataFrame, target: str, source: str) -> tuple[pd.DataFrame, np.ndarray]:
    missing = df[target].isna().to_numpy()
    if missing.all():
        raise DataFileError(f"{source}: the target column {target!r} is empty")
    if missing.any():
        k = int(missing.sum())
        warnings.warn(
            f"{source}: dropped {k} row{'' if k == 1 else 's'} with a missing label in {target!r}",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        df = df.loc[~missing].reset_index(drop=True)
    X = df.drop(columns=[target])
    if X.shape[1] == 0:
        raise DataFileError(f"{source}: no feature columns besides the target {target!r}")
    y = df[target].to_numpy()
    if missing.any() and y.dtype.kind == "f" and np.all(y == np.round(y)):
        # the missing labels made an integer column float: the labels are the integers
        y = y.astype(np.int64)
    return X, y


def _numeric_labels(y: np.ndarray) -> np.ndarray:
    """Strings that all look like numbers -> ints (or floats); anything else unchanged."""
    if y.dtype.kind in "iuf":
        if y.dtype.kind == "f" and np.all(np.isfinite(y)) and np.all(y == np.round(y)):
            return y.astype(np.int64)
        return y
    try:
        num = pd.to_numeric(pd.Series(y), errors="raise").to_numpy()
    except (ValueError, TypeError):
        return y
    return _numeric_labels(num.astype(float)) if num.dtype.kind in "iuf" else y


# ---------------------------------------------------------------------------- entry points
def _read_table(p: Path, kind: str, zero_based: bool | str = "auto") -> pd.DataFrame:
    """Every column of file ``p`` in format ``kind``.  ``attrs``: ``"format"``; ``"label"``,
    the default label column where the format names one (svmlight: ``"target"``;
    ARFF/KEEL: the one ``@outputs`` attribute, else the last attribute when there are no
    ``@outputs``); for ARFF/KEEL ``"inputs"`` and ``"outputs"`` (KEEL's lists, maybe
    empty); for svmlight ``"zero_based"``, whether the file's indices were read as
    0-based."""
    if kind == "svmlight":
        X, y, zero = read_svmlight(p, zero_based)
        table = X.assign(target=y)
        table.attrs.update(label="target", zero_based=zero)
    elif kind == "arff":
        table, inputs, outputs = parse_arff(decode(read_bytes(p), p), source=str(p))
        table.attrs.update(inputs=list(inputs), outputs=list(outputs))
        if len(outputs) <= 1:
            table.attrs["label"] = outputs[0] if outputs else str(table.columns[-1])
    else:
        table = read_csv(p, decode(read_bytes(p), p), "\t" if kind == "tsv" else None)
    table.attrs["format"] = kind
    return table


def _check_zero_based(zero_based: bool | str) -> bool | str:
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    return zero_based


def load_table(
    path: str | Path, *, fmt: str | None = None, zero_based: bool | str = "auto"
) -> pd.DataFrame:
    """Read a user's data file with every column, the label's among them.

    For applying a fitted model to new rows, which may or may not carry labels: CSV/TSV as
    :func:`load_file` reads them, ARFF/KEEL with every attribute, svmlight/LIBSVM as
    features ``f1 ... fd`` followed by the labels in column ``"target"``.
    ``attrs["format"]`` is the format read; ``attrs["label"]`` names the column
    :func:`load_file` takes the labels from by default where the format says (svmlight's
    ``"target"``; KEEL's one ``@outputs`` attribute, or an ARFF file's last attribute);
    for svmlight ``attrs["zero_based"]`` says whether the indices were read as 0-based.

    Parameters
    ----------
    path : str or Path
    fmt : {"csv", "tsv", "svmlight", "arff"}, optional
        As in :func:`load_file`.
    zero_based : bool or "auto", default="auto"
        As in :func:`load_file`.

    Returns
    -------
    DataFrame
    """
    p = check_path(path)
    kind = _normalise_fmt(fmt) if fmt is not None else detect_format(p)
    return _read_table(p, kind, _check_zero_based(zero_based))


def label_column(table: pd.DataFrame, target: str | int | None = None, source: str = "<table>"):
    """The name of the label column of a :func:`load_table` table that :func:`split_table`
    takes: ``target`` (:func:`pick_target`), else the file's own (svmlight's labels, the
    ARFF/KEEL output attribute), else the one column named target, class or label.

    Raises
    ------
    DataFileError
        ``target`` given for an svmlight file (its labels have no column name), several
        KEEL outputs and no ``target``, or no such column (:func:`pick_target`).
    """
    if table.attrs.get("format") == "svmlight" and target is not None:
        raise DataFileError(
            f"{source}: svmlight/LIBSVM files keep the label in the first field of each "
            "line; drop --target (target=...)"
        )
    outputs = table.attrs.get("outputs", [])
    if target is None and len(outputs) > 1:
        raise DataFileError(
            f"{source}: several @outputs {outputs}; choose the label with --target (target=...)"
        )
    if target is None and "label" in table.attrs:
        return table.attrs["label"]
    return pick_target(table, target, source)


def split_table(
    table: pd.DataFrame, target: str | int | None = None, source: str = "<table>"
) -> tuple[pd.DataFrame, np.ndarray]:
    """Features and labels of a :func:`load_table` table, as :func:`load_file` returns them.

    Parameters
    ----------
    table : DataFrame
        As :func:`load_table` returns it (its ``attrs`` name the format and label column).
    target : str or int, optional
        As in :func:`load_file`.
    source : str
        The file's name, for messages.

    Returns
    -------
    X : DataFrame of shape (n, d)
    y : ndarray of shape (n,)
    """
    kind = table.attrs.get("format")
    tcol = label_column(table, target, source)
    inputs = table.attrs.get("inputs")
    if inputs:  # KEEL: the attributes neither input nor label are left out
        table = table[[c for c in table.columns if c in inputs or c == tcol]]
    X, y = _split_target(table, tcol, source)
    X.attrs = {}
    return X, (_numeric_labels(y) if kind == "arff" else y)


def load_file(
    path: str | Path,
    *,
    target: str | int | None = None,
    fmt: str | None = None,
    zero_based: bool | str = "auto",
) -> tuple[pd.DataFrame, np.ndarray]:
    """Read a user's data file into features and labels.

    Parameters
    ----------
    path : str or Path
        CSV/TSV, svmlight/LIBSVM or ARFF/KEEL file, optionally ``.gz``/``.bz2``/``.xz``.
    target : str or int, optional
        Label column: a name, or an integer position (``-1`` = last).  Defaults: CSV/TSV the
        column named target/class/label; ARFF the ``@outputs`` attribute or the last one;
        svmlight files carry the label in each line (``target`` must be None).
    fmt : {"csv", "tsv", "svmlight", "arff"}, optional
        Format; by default from the extension or the content (:func:`detect_format`).
        Aliases: "libsvm", "svm", "keel", "dat".
    zero_based : bool or "auto", default="auto"
        svmlight/LIBSVM only: whether the feature indices start at 0 (True) or at 1
        (False, LIBSVM's numbering); "auto": at 0 when index 0 occurs in the file, else at
        1.  Column ``f1`` holds the first feature either way.

    Returns
    -------
    X : DataFrame of shape (n, d)
        Feature columns; categorical string columns kept; missing values NaN.
    y : ndarray of shape (n,)
        Labels as the file gives them; rows with a missing label are dropped with a warning.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    DataFileError (a ValueError)
        Unparsable content, no label column, an unknown target column, ...
    """
    p = check_path(path)
    kind = _normalise_fmt(fmt) if fmt is not None else detect_format(p)
    return split_table(_read_table(p, kind, _check_zero_based(zero_based)), target, str(path))
