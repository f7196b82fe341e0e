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
    never does); otherwise it is the header.  A header with fewer names than the rows have
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
    :data:`MAX_DENSE_BYTES` (1 GiB) of dense features; a file past either bound is refused
    naming the line of the offending index (so a small file cannot make the loader
    allocate gigabytes).  Feature indices start at 1 (LIBSVM's
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
:data:`MAX_TEXT_BYTES` (2 GiB) of text.  A CSV field may hold at most
:data:`MAX_CSV_FIELD` characters (Python's ``csv`` limit, 128 KiB); lines may be longer.
Text is UTF-8 (with or without a byte-order mark), else Latin-1; UTF-16 and UTF-32 text
is read when it starts with its byte-order mark (a spreadsheet's "Unicode text" export
does).
"""

from __future__ import annotations

import bz2
import codecs
import csv
import gzip
import io
import lzma
import numbers
import re
import warnings
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from svmtune._warnings import user_stacklevel
from svmtune.exceptions import DataFileError

__all__ = [
    "FORMATS",
    "DataFileError",
    "load_file",
    "load_table",
    "detect_format",
    "parse_arff",
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
_COMPRESSION = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
#: names of the default label column (any case)
TARGET_NAMES = ("target", "class", "label")
_NA = ["", "?", "NA", "N/A", "n/a", "NaN", "nan", "null", "NULL", "<null>", "None"]
_ARFF_NA = {"?", "<null>"}
_SVMLIGHT_LINE = re.compile(r"^\s*[-+]?[0-9.eE+-]+(\s+(qid:\S+|\d+:\S+))*\s*(#.*)?$")
_SNIFF_BYTES = 1 << 16
#: largest dense feature matrix (bytes of float64) an svmlight/LIBSVM file may make the loader
#: build: ``rows x (largest feature index) x 8``; a larger one is refused with a message
MAX_DENSE_BYTES = 1 << 30
#: largest number of feature columns an svmlight/LIBSVM file may declare (its largest index)
MAX_SVMLIGHT_FEATURES = 1 << 20
#: largest text (after decompression) read from a data file
MAX_TEXT_BYTES = 1 << 31
#: longest CSV field (Python's ``csv`` module's default limit); lines may be longer
MAX_CSV_FIELD = csv.field_size_limit()
_DECIMAL_COMMA = r"[-+]?(\d+(,\d*)?|,\d+)([eE][-+]?\d+)?"


# ---------------------------------------------------------------------------- helpers
def _compression(path: Path) -> str | None:
    return path.suffix.lower() if path.suffix.lower() in _COMPRESSION else None


def _base_suffix(path: Path) -> str:
    """Extension without a compression suffix (``data.csv.gz`` -> ``.csv``)."""
    stem = path.with_suffix("") if _compression(path) else path
    return stem.suffix.lower()


def _read_bytes(path: Path, limit: int | None = None) -> bytes:
    """The file's bytes (decompressed), its first ``limit`` only if given; more than
    :data:`MAX_TEXT_BYTES` is refused (a small compressed file can expand to any size)."""
    opener = _COMPRESSION.get(_compression(path) or "", open)
    try:
        with opener(path, "rb") as fh:
            if limit is not None:
                return fh.read(limit)
            if opener is open:
                size = path.stat().st_size
                if size <= MAX_TEXT_BYTES:
                    return fh.read()
            else:  # in pieces: the expanded size is known only by expanding
                chunks, size = [], 0
                while size <= MAX_TEXT_BYTES:
                    chunk = fh.read(1 << 20)
                    if not chunk:
                        return b"".join(chunks)
                    chunks.append(chunk)
                    size += len(chunk)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise DataFileError(f"cannot read {path}: {exc}") from None
    raise DataFileError(
        f"cannot read {path}: it holds more than {MAX_TEXT_BYTES / 2**30:g} GiB of text"
        f"{' after decompression' if _compression(path) else ''}, more than svmtune "
        "reads from one data file; select the rows and columns you need first"
    )


# byte-order marks of the UTF-16/32 text some tools write (e.g. a spreadsheet's "Unicode
# text" export); UTF-32's little-endian mark starts with UTF-16's, so it is tried first
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _decode(raw: bytes, path: Path, *, partial: bool = False) -> str:
    """Text of a data file: UTF-16/32 when it starts with their byte-order mark, else
    UTF-8 (with or without a mark), else Latin-1.  ``partial``: ``raw`` is the file's
    first bytes only, so a character cut at its end is dropped, not an error."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return codecs.getincrementaldecoder(encoding)().decode(raw, final=not partial)
            except UnicodeDecodeError as exc:
                raise DataFileError(
                    f"cannot parse {path}: it starts with a {encoding.upper()} byte-order mark "
                    f"but is not valid {encoding.upper()} text ({exc.reason} at byte "
                    f"{exc.start}); save it as UTF-8"
                ) from None
    if b"\x00" in raw[:_SNIFF_BYTES]:
        raise DataFileError(
            f"cannot parse {path}: it holds NUL bytes, so it is a binary file (not CSV/TSV, "
            "svmlight or ARFF text) or text in an encoding such as UTF-16 without a "
            "byte-order mark; save it as UTF-8 text"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _first_lines(text: str, k: int, comment: str | None = None) -> list[str]:
    out = []
    for line in text.splitlines():
        s = line.strip()
        if not s or (comment and s.startswith(comment)):
            continue
        out.append(line)
        if len(out) >= k:
            break
    return out


def _check_path(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if not p.exists():
        raise FileNotFoundError(f"file not found: {path}")
    if p.is_dir():
        raise DataFileError(f"{path} is a directory, not a data file")
    return p


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
    p = _check_path(path)
    by_ext = _EXT.get(_base_suffix(p))
    if by_ext is not None:
        return by_ext
    if _base_suffix(p) in _FOREIGN:
        raise DataFileError(
            f"cannot read {path}: it is {_FOREIGN[_base_suffix(p)]}, not one of the formats "
            "svmtune reads (CSV/TSV, svmlight/LIBSVM, ARFF/KEEL); save the data as CSV, or "
            "load them yourself and pass X and y to SVMTuner"
        )
    text = _decode(_read_bytes(p, _SNIFF_BYTES), p, partial=True)
    lines = _first_lines(text, 20, comment="%")
    if not lines:
        raise DataFileError(f"cannot parse {path}: the file is empty")
    if lines[0].lstrip().startswith("@"):
        return "arff"
    body = [ln for ln in lines if not ln.lstrip().startswith("#")]
    if body and all(_SVMLIGHT_LINE.match(ln) for ln in body) and any(":" in ln for ln in body):
        return "svmlight"
    return "csv"


# ---------------------------------------------------------------------------- target
def _column_list(columns: list[str], limit: int = 12) -> str:
    shown = ", ".join(repr(c) for c in columns[:limit])
    return shown + (f", ... ({len(columns)} columns)" if len(columns) > limit else "")


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
        numbers = [c for c in cols if _is_number(c.strip())]
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
            f"with --target COLUMN (target=...). Columns: {_column_list(cols)}.{hint}"
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
            f"{_column_list(cols)}"
        )
    raise DataFileError(f"{source}: target column {key!r} not found. Columns: {_column_list(cols)}")


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


# ---------------------------------------------------------------------------- CSV / TSV
def _sniff_delimiter(lines: list[str]) -> str:
    """The delimiter that splits every sample line into the same number (> 1) of fields.

    When several do (``1,5;2`` on every line: a comma or a semicolon), the one under which
    the most fields are numbers (with a decimal comma unless the delimiter is a comma);
    ties go to comma, tab, semicolon, bar in that order."""
    found = []
    for delim in (",", "\t", ";", "|"):
        try:
            rows = [next(csv.reader([ln], delimiter=delim)) for ln in lines]
        except csv.Error:  # a field over MAX_CSV_FIELD: this is not the delimiter
            continue
        if len({len(r) for r in rows}) == 1 and len(rows[0]) > 1:
            found.append((delim, rows))
    if found:

        def numeric_share(item) -> float:
            delim, rows = item
            cells = [c.strip() for r in rows for c in r]
            return float(np.mean([_is_number(c, decimal_comma=delim != ",") for c in cells]))

        return max(found, key=numeric_share)[0]
    counts = {len(ln.split()) for ln in lines}
    if len(counts) == 1 and counts.pop() > 1:
        return r"\s+"
    if not any(d in ln for d in ",\t;|" for ln in lines) and all(
        len(ln.split()) == 1 for ln in lines
    ):
        raise DataFileError(
            "found a single column: no comma, tab, semicolon, bar or blank separates fields"
        )
    try:
        return csv.Sniffer().sniff("\n".join(lines), delimiters=",;\t| ").delimiter
    except csv.Error:
        raise DataFileError(
            "cannot find the column delimiter (tried comma, tab, semicolon, bar and blanks; "
            "rows have differing numbers of fields)"
        ) from None


_FIELD_HINT = (
    f" (a CSV field may hold at most {MAX_CSV_FIELD:,} characters: is the delimiter or a "
    "closing quote missing?)"
)


def _line_number(text: str, line: str) -> int:
    """The 1-based number of the first line of ``text`` equal to ``line`` (for messages)."""
    for i, ln in enumerate(text.splitlines(), 1):
        if ln == line:
            return i
    return 0


def _long_field(path: Path, text: str, lines: list[str]) -> None:
    """Raise a ``DataFileError`` naming the first of ``lines`` that holds a field longer
    than :data:`MAX_CSV_FIELD` whatever the delimiter (a line of one such field)."""
    for line in lines:
        if len(line) > MAX_CSV_FIELD and max(map(len, re.split(r"[,;\t|\s]", line))) > (
            MAX_CSV_FIELD
        ):
            raise DataFileError(
                f"cannot parse {path} as CSV: line {_line_number(text, line)} holds a field "
                f"of more than {MAX_CSV_FIELD:,} characters, the most a CSV field may hold; "
                "is the delimiter or a closing quote missing?"
            )


def _is_number(cell: str, *, decimal_comma: bool = False) -> bool:
    """Whether ``cell`` is a number (also ``1,5`` with ``decimal_comma``)."""
    if decimal_comma and re.fullmatch(_DECIMAL_COMMA, cell):
        return True
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _read_csv(path: Path, text: str, delimiter: str | None) -> pd.DataFrame:
    lines = _first_lines(text, 50)
    if not lines:
        raise DataFileError(f"cannot parse {path}: the file is empty")
    _long_field(path, text, lines)
    if delimiter is None:
        try:
            delimiter = _sniff_delimiter(lines)
        except DataFileError as exc:
            raise DataFileError(f"cannot parse {path} as CSV: {exc}") from None

    def fields(line: str) -> list[str]:
        if delimiter == r"\s+":
            return line.split()
        try:
            return next(csv.reader([line], delimiter=delimiter, skipinitialspace=True))
        except csv.Error as exc:
            raise DataFileError(
                f"cannot parse {path} as CSV: line {_line_number(text, line)}: {exc}"
                + _FIELD_HINT * ("field larger" in str(exc))
            ) from None

    first = fields(lines[0])
    decimal_comma = delimiter != ","  # possible unless the comma separates the fields
    headerless = all(_is_number(c.strip(), decimal_comma=decimal_comma) for c in first if c.strip())
    kw: dict[str, Any] = {
        "sep": delimiter,
        "na_values": _NA,
        "keep_default_na": False,
        "header": None if headerless else 0,
        "skip_blank_lines": True,
    }
    if delimiter != r"\s+":
        kw["skipinitialspace"] = True

    def trailing_delimiter(row: list[str]) -> bool:
        return len(row) == len(first) + 1 and not row[-1].strip()

    # rows parsed one by one only while each ends with an empty field (rarely past the first)
    second = fields(lines[1]) if len(lines) > 1 else []
    trailing = trailing_delimiter(second) and all(
        trailing_delimiter(fields(line)) for line in lines[2:]
    )
    if trailing:
        kw["index_col"] = False  # a delimiter ends every row, not the header: no row names
    df = _parse_csv(path, text, kw)
    if not headerless:
        if not trailing:
            df = _row_names(path, df, first, len(second))
        if _first_row_is_data(first, df, decimal_comma):
            headerless, kw["header"] = True, None
            df = _parse_csv(path, text, kw)
    if headerless:
        df.columns = [str(j) for j in range(df.shape[1])]
    else:
        df.columns = [str(c).strip() for c in df.columns]
    if df.shape[1] < 2:
        raise DataFileError(
            f"cannot parse {path} as CSV: found a single column (no features besides a label?)"
        )
    if df.shape[0] == 0:
        raise DataFileError(f"cannot parse {path} as CSV: no data rows")
    if not headerless and not first[0].strip() and _is_row_index(df.iloc[:, 0]):
        # pandas' DataFrame.to_csv writes the index as a first column without a name; as a
        # feature it would tell the model where a row sits in the file
        values = df.iloc[:, 0].to_numpy()
        if np.all(values == values[0] + np.arange(values.size)):
            what = (
                f"numbers the rows {int(values[0])}, {int(values[0]) + 1}, ... (a row index, "
                "as DataFrame.to_csv writes)"
            )
        else:
            shown = ", ".join(str(v) for v in values[:3])
            what = (
                f"holds distinct whole numbers ({shown}, ...): a row index, as "
                "DataFrame.to_csv writes, of rows shuffled or filtered before"
            )
        warnings.warn(
            f"{path}: dropped the first column: it has no name in the header and {what}; "
            "name it in the header to keep it as a feature",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        df = df.iloc[:, 1:]
    for j, c in enumerate(df.columns):  # strip blanks around category strings
        col = df.iloc[:, j]
        if col.dtype == object or pd.api.types.is_string_dtype(col):
            col = _text_or_numbers(col)
            if col.dtype == object or pd.api.types.is_string_dtype(col):
                col = col.str.strip()
                if decimal_comma:
                    col = _decimal_comma_numbers(col, str(path))
            df[c] = col
    return df


def _text_or_numbers(col: pd.Series) -> pd.Series:
    """An ``object`` column as pandas parsed it: numbers beyond int64 (which pandas keeps as
    Python integers) as floats when the column holds only numbers, else every value as text
    (missing values kept)."""
    values = col.dropna()
    if values.map(lambda v: isinstance(v, str)).all():
        return col
    if values.map(lambda v: isinstance(v, numbers.Number)).all():
        return col.astype(float)
    return col.map(lambda v: v if isinstance(v, str) or pd.isna(v) else str(v))


def _parse_csv(path: Path, text: str, kw: dict[str, Any]) -> pd.DataFrame:
    try:
        return pd.read_csv(io.StringIO(text), **kw)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        msg = " ".join(str(exc).split())
        raise DataFileError(f"cannot parse {path} as CSV: {msg}") from None


def _row_names(path: Path, df: pd.DataFrame, first: list[str], fields: int) -> pd.DataFrame:
    """``df`` read with a header of names ``first`` above rows of ``fields`` fields (the
    first data row's).  When the header names fewer columns, pandas took the rows' first
    fields as its index: ``df`` without them, with a warning, when the header lacks one name
    and those fields are distinct whole numbers or texts (the row names R's ``write.table``
    writes); an error otherwise.  Any other ``df`` unchanged."""
    index = df.index
    default = index.nlevels == 1 and index.equals(pd.RangeIndex(len(df)))
    if default and not (fields > len(first) == df.shape[1]):
        return df  # pandas' own row numbers: the header names every field
    fields = len(first) + index.nlevels
    names = f"{len(first)} column{'' if len(first) == 1 else 's'} ({_column_list(first, 6)})"
    if index.nlevels == 1 and index.is_unique and not pd.api.types.is_float_dtype(index):
        shown = ", ".join(repr(v) for v in index[:3].tolist())
        warnings.warn(
            f"{path}: dropped the first column: the header names {names} but "
            f"the rows have {fields} fields, and the first field of each row is distinct "
            f"({shown}, ...): row names, as R's write.table writes; name the column in the "
            "header to keep it as a feature",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        return df.reset_index(drop=True)
    raise DataFileError(
        f"cannot parse {path} as CSV: the header names {names} but the rows have {fields} "
        "fields; give every column a name in the header (or remove the extra fields)"
    )


def _first_row_is_data(first: list[str], df: pd.DataFrame, decimal_comma: bool) -> bool:
    """Whether the first row of a file, read as the header of ``df``, is a data row, as in
    UCI's ``iris.data`` (``5.1,3.5,1.4,0.2,Iris-setosa``): it holds a number, and every
    other cell of it (but missing ones) occurs again below it in its column, as a category
    does and a column name practically never does."""
    cells = [c.strip() for c in first]
    if len(cells) != df.shape[1]:
        return False
    numbers = [_is_number(c, decimal_comma=decimal_comma) for c in cells]
    if not any(numbers):
        return False
    for j, (cell, number) in enumerate(zip(cells, numbers)):
        if number or cell in _NA:
            continue
        col = df.iloc[:, j]
        if pd.api.types.is_numeric_dtype(col) or not col.astype(str).str.strip().eq(cell).any():
            return False
    return True


def _is_row_index(col: pd.Series) -> bool:
    """Whether ``col`` holds distinct whole numbers (a row index: 0, 1, 2, ..., or in
    another order after rows were shuffled or filtered)."""
    if not pd.api.types.is_integer_dtype(col) or col.size == 0:
        return False
    return bool(col.is_unique)


def _decimal_comma_numbers(col: pd.Series, source: str) -> pd.Series:
    """A text column of numbers written with a decimal comma (``1,5``; common where the
    delimiter is ``;`` or a tab) as floats; any other column unchanged.  When every comma
    has three digits after it and at most three before (``1,234``), it may as well separate
    thousands: the column stays text, with a warning."""
    values = col.dropna()
    if values.empty or not values.str.fullmatch(_DECIMAL_COMMA).all():
        return col
    commas = values[values.str.contains(",", regex=False)]
    if commas.empty:
        return col
    if commas.str.fullmatch(r"[-+]?\d{1,3},\d{3}").all():
        warnings.warn(
            f"{source}: column {col.name!r} holds numbers such as {commas.iloc[0]!r}, where "
            "the comma may be a decimal comma or separate thousands; it is kept as text "
            "(categories). Convert it to numbers yourself, or write the file with a decimal "
            "point and no thousands separator.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        return col
    return pd.to_numeric(col.str.replace(",", ".", regex=False))


# ---------------------------------------------------------------------------- svmlight
def _read_svmlight(
    path: Path, zero_based: bool | str = "auto"
) -> tuple[pd.DataFrame, np.ndarray, bool]:
    """Features ``f1 ... fd``, labels, and whether the file's indices were read as 0-based
    (``zero_based``: True, False, or "auto": 0-based if index 0 occurs, as scikit-learn's
    ``load_svmlight_file`` decides)."""
    from sklearn.datasets import load_svmlight_file

    source: str | io.BytesIO = str(path)
    head = _read_bytes(path, 4)
    if head.startswith(codecs.BOM_UTF8) or any(head.startswith(bom) for bom, _ in _BOMS):
        # scikit-learn's parser reads bytes as UTF-8/ASCII without a byte-order mark
        source = io.BytesIO(_decode(_read_bytes(path), path).encode("utf-8"))
    try:
        # sparse (CSR): memory grows with the values the file holds, not with its indices
        Xs, y = load_svmlight_file(source, zero_based=True)  # column j: the file's index j
    except OverflowError:  # an index past int64
        _svmlight_bound_error(path, 2**63 - 1, "is too large for a 64-bit integer")
    except (ValueError, RuntimeError, OSError) as exc:
        msg = " ".join(str(exc).split())
        raise DataFileError(f"cannot parse {path} as svmlight/LIBSVM: {msg}") from None
    if Xs.shape[0] == 0:
        raise DataFileError(f"cannot parse {path} as svmlight/LIBSVM: no data rows")
    # the loader densifies: bound the dense matrix before building it
    width = Xs.shape[1]
    if width > MAX_SVMLIGHT_FEATURES:
        _svmlight_bound_error(
            path,
            MAX_SVMLIGHT_FEATURES - 1,
            f"exceeds the {MAX_SVMLIGHT_FEATURES:,} feature columns svmtune reads from an "
            "svmlight/LIBSVM file",
        )
    if Xs.shape[0] * width * 8 > MAX_DENSE_BYTES:
        cap = MAX_DENSE_BYTES // (8 * Xs.shape[0])
        _svmlight_bound_error(
            path,
            cap - 1,
            f"makes {Xs.shape[0]:,} rows x {width:,} columns = "
            f"{Xs.shape[0] * width * 8 / 2**30:.1f} GiB of dense features, more than the "
            f"{MAX_DENSE_BYTES / 2**30:g} GiB svmtune builds from a file ({cap:,} columns at "
            f"{Xs.shape[0]:,} rows)",
        )
    has_zero = Xs.nnz == 0 or Xs.indices.min() == 0
    if zero_based == "auto":
        zero_based = has_zero
    elif not zero_based and Xs.nnz and Xs.indices.min() == 0:
        raise DataFileError(
            f"cannot parse {path} as svmlight/LIBSVM with 1-based feature indices (LIBSVM's "
            "numbering): it holds feature index 0"
        )
    if not zero_based:
        Xs = Xs[:, 1:]
    X = pd.DataFrame(Xs.toarray(), columns=[f"f{j + 1}" for j in range(Xs.shape[1])])
    if np.all(np.isfinite(y)) and np.all(y == np.round(y)):
        y = y.astype(np.int64)
    return X, y, bool(zero_based)


_SVMLIGHT_INDEX = re.compile(rb"(?:^|\s)(\d+):")


def _svmlight_bound_error(path: Path, bound: int, why: str) -> None:
    """Raise a ``DataFileError`` naming the first line of svmlight file ``path`` with a
    feature index above ``bound`` (the largest index of the file when none is), and
    ``why`` it is refused."""
    where = ""
    data = _read_bytes(path)
    for i, line in enumerate(data.splitlines(), 1):
        body = line.split(b"#", 1)[0]
        for m in _SVMLIGHT_INDEX.finditer(body):
            idx = int(m.group(1))
            if idx > bound:
                where = f"line {i}: feature index {idx}"
                break
        if where:
            break
    raise DataFileError(
        f"cannot parse {path} as svmlight/LIBSVM: {where or 'its largest feature index'} "
        f"{why}; renumber the features compactly (1, 2, ...), or read the file with "
        "sklearn.datasets.load_svmlight_file (sparse) and select the columns you need"
    )


# ---------------------------------------------------------------------------- ARFF / KEEL
_ATTR = re.compile(r"""^@attribute\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S+)\s*(.*)$""", re.I)


def _unquote(token: str) -> str:
    token = token.strip()
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1].replace("\\" + token[0], token[0])
    return token


def _split_values(line: str) -> list[str]:
    """Comma-separated ARFF values, honouring single and double quotes."""
    if "'" not in line and '"' not in line:
        return [v.strip() for v in line.split(",")]
    out, cur, quote, i = [], [], None, 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\" and i + 1 < len(line):
                cur.append(line[i + 1])
                i += 1
            elif ch == quote:
                quote = None
            else:
                cur.append(ch)
        elif ch in "'\"" and not "".join(cur).strip():
            quote, cur = ch, []
        elif ch == ",":
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    if quote:
        raise ValueError("unterminated quote")
    out.append("".join(cur).strip())
    return out


def _attribute_kind(spec: str) -> tuple[str, list[str] | None]:
    s = spec.strip()
    if s.startswith("{"):
        if not s.endswith("}"):
            raise ValueError(f"nominal attribute type {spec!r} lacks a closing brace")
        return "nominal", [_unquote(v) for v in _split_values(s[1:-1]) if v != ""]
    word = s.split()[0].lower() if s else ""
    word = word.split("[")[0]
    if word in ("numeric", "real", "integer"):
        return "numeric", None
    if word in ("string", "date"):
        return "string", None
    raise ValueError(f"unsupported attribute type {spec!r}")


def _names_list(rest: str) -> list[str]:
    return [_unquote(v) for v in _split_values(rest) if v]


def parse_arff(text: str, source: str = "<arff>") -> tuple[pd.DataFrame, list[str], list[str]]:
    """Parse ARFF / KEEL ``.dat`` text.

    Returns
    -------
    df : DataFrame
        One column per attribute: float for numeric attributes, strings (NaN for missing)
        otherwise.
    inputs : list of str
        KEEL ``@inputs`` (empty when absent).
    outputs : list of str
        KEEL ``@outputs`` (empty when absent).
    """
    names: list[str] = []
    kinds: list[str] = []
    inputs: list[str] = []
    outputs: list[str] = []
    rows: list[list[str]] = []
    line_no: list[int] = []
    in_data = False
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        if not in_data:
            low = line.lower()
            if low.startswith("@relation"):
                continue
            if low.startswith("@attribute"):
                m = _ATTR.match(line)
                if not m or not m.group(2):
                    raise DataFileError(f"{source}: line {no}: malformed @attribute: {line!r}")
                try:
                    kind, _ = _attribute_kind(m.group(2))
                except ValueError as exc:
                    raise DataFileError(f"{source}: line {no}: {exc}") from None
                names.append(_unquote(m.group(1)))
                kinds.append(kind)
            elif re.match(r"@inputs?\b", low):
                inputs = _names_list((line.split(None, 1) + [""])[1])
            elif re.match(r"@outputs?\b", low):
                outputs = _names_list((line.split(None, 1) + [""])[1])
            elif low.startswith("@data"):
                in_data = True
            else:
                raise DataFileError(f"{source}: line {no}: unexpected header line {line!r}")
            continue
        if line.startswith("{"):
            raise DataFileError(f"{source}: line {no}: sparse ARFF rows are not supported")
        try:
            values = _split_values(line)
        except ValueError as exc:
            raise DataFileError(f"{source}: line {no}: {exc}") from None
        if len(values) != len(names):
            raise DataFileError(
                f"{source}: line {no}: expected {len(names)} values (one per @attribute), "
                f"got {len(values)}"
            )
        rows.append(values)
        line_no.append(no)
    if not names:
        raise DataFileError(f"cannot parse {source} as ARFF: no @attribute lines")
    if not in_data:
        raise DataFileError(f"cannot parse {source} as ARFF: no @data section")
    if not rows:
        raise DataFileError(f"cannot parse {source} as ARFF: no data rows")
    if len(set(names)) != len(names):
        raise DataFileError(f"{source}: duplicate attribute names")
    for declared in inputs + outputs:
        if declared not in names:
            raise DataFileError(f"{source}: @inputs/@outputs name {declared!r} is no @attribute")
    cols = list(zip(*rows))
    data: dict[str, Any] = {}
    for name, kind, col in zip(names, kinds, cols):
        raw = pd.Series(col, dtype=object)
        missing = raw.isin(_ARFF_NA)
        if kind == "numeric":
            num = pd.to_numeric(raw.mask(missing), errors="coerce").astype(float)
            bad = num.isna() & ~missing
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                raise DataFileError(
                    f"{source}: line {line_no[i]}: value {col[i]!r} of numeric attribute "
                    f"{name!r} is not a number"
                )
            data[name] = num
        else:
            data[name] = raw.mask(missing, np.nan)
    return pd.DataFrame(data), inputs, outputs


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
        X, y, zero = _read_svmlight(p, zero_based)
        table = X.assign(target=y)
        table.attrs.update(label="target", zero_based=zero)
    elif kind == "arff":
        table, inputs, outputs = parse_arff(_decode(_read_bytes(p), p), source=str(p))
        table.attrs.update(inputs=list(inputs), outputs=list(outputs))
        if len(outputs) <= 1:
            table.attrs["label"] = outputs[0] if outputs else str(table.columns[-1])
    else:
        table = _read_csv(p, _decode(_read_bytes(p), p), "\t" if kind == "tsv" else None)
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
    p = _check_path(path)
    kind = _normalise_fmt(fmt) if fmt is not None else detect_format(p)
    return _read_table(p, kind, _check_zero_based(zero_based))


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
    if kind == "svmlight" and target is not None:
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
        tcol = table.attrs["label"]
    else:
        tcol = pick_target(table, target, source)
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
    p = _check_path(path)
    kind = _normalise_fmt(fmt) if fmt is not None else detect_format(p)
    return split_table(_read_table(p, kind, _check_zero_based(zero_based)), target, str(path))
