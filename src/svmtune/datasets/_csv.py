"""The CSV/TSV reader: delimiter sniffing, header or data in the first row, row-name and
row-index columns, decimal commas (format rules: :mod:`svmtune.datasets.loaders`)."""

from __future__ import annotations

import csv
import io
import numbers
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from svmtune._warnings import user_stacklevel
from svmtune.datasets._text import column_list, first_lines, line_number
from svmtune.exceptions import DataFileError

_NA = ["", "?", "NA", "N/A", "n/a", "NaN", "nan", "null", "NULL", "<null>", "None"]


#: longest CSV field (Python's ``csv`` module's default limit); lines may be longer
MAX_CSV_FIELD = csv.field_size_limit()
_FIELD_HINT = (
    f" (a CSV field may hold at most {MAX_CSV_FIELD:,} characters: is the delimiter or a "
    "closing quote missing?)"
)


_DECIMAL_COMMA = r"[-+]?(\d+(,\d*)?|,\d+)([eE][-+]?\d+)?"


#: most fields a CSV/TSV line may hold, and so most columns a file may have.  pandas builds
#: one Series per column while parsing, whatever the rows: a few KiB each
#: (``docs/notes/cost_measurements.md``), so a small file of short fields (a file of B bytes
#: holds up to B/2 of them) would otherwise cost gigabytes; 2^16 columns keep a parse within
#: a few hundred MiB.  Wider data are sparse in practice: write them as svmlight/LIBSVM
MAX_CSV_COLUMNS = 1 << 16

#: cells of each sample row that decide between delimiters that split the rows alike
_SNIFF_CELLS = 256


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
            cells = [c.strip() for r in rows for c in r[:_SNIFF_CELLS]]
            return float(np.mean([is_number(c, decimal_comma=delim != ",") for c in cells]))

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


def _long_field(path: Path, text: str, lines: list[str]) -> None:
    """Raise a ``DataFileError`` naming the first of ``lines`` that holds a field longer
    than :data:`MAX_CSV_FIELD` whatever the delimiter (a line of one such field)."""
    for line in lines:
        if len(line) > MAX_CSV_FIELD and max(map(len, re.split(r"[,;\t|\s]", line))) > (
            MAX_CSV_FIELD
        ):
            raise DataFileError(
                f"cannot parse {path} as CSV: line {line_number(text, line)} holds a field "
                f"of more than {MAX_CSV_FIELD:,} characters, the most a CSV field may hold; "
                "is the delimiter or a closing quote missing?"
            )


def _long_lines(text: str, width: int):
    """``(number, line)`` of the lines of ``text`` at least ``width`` characters long, found
    from the line starts alone (no list of every line of a large file is built); the line
    breaks before one (``\\n``, ``\\r\\n`` or ``\\r``) are counted by ``str.count``."""
    number, pos = 1, 0
    for m in re.finditer(rf"(?:^|(?<=\r))[^\r\n]{{{width},}}", text, re.M):
        start = m.start()
        breaks = text.count("\n", pos, start) + text.count("\r", pos, start)
        number += breaks - text.count("\r\n", pos, start)
        pos = start
        yield number, m.group()


def _check_widths(path: Path, text: str, delimiter: str) -> None:
    """Raise a ``DataFileError`` naming the first line of ``text`` with more than
    :data:`MAX_CSV_COLUMNS` fields under ``delimiter``, before pandas builds a column for
    each; counted from the delimiters (a quoted delimiter recounted by the ``csv`` module)."""
    if len(text) < MAX_CSV_COLUMNS:
        return  # every field but the last ends with a delimiter: no line is that wide
    for i, line in _long_lines(text, MAX_CSV_COLUMNS):
        if delimiter == r"\s+":
            n = len(line.split())
        else:
            n = line.count(delimiter) + 1
            if n > MAX_CSV_COLUMNS and '"' in line:
                try:
                    n = len(next(csv.reader([line], delimiter=delimiter)))
                except csv.Error:  # a field past MAX_CSV_FIELD: the parser says which
                    continue
        if n > MAX_CSV_COLUMNS:
            shown = "tab" if delimiter == "\t" else "blanks" if delimiter == r"\s+" else delimiter
            raise DataFileError(
                f"cannot parse {path} as CSV: line {i} has {n:,} fields (delimiter "
                f"{shown!r}), more than the {MAX_CSV_COLUMNS:,} columns svmtune reads from a "
                "CSV/TSV file (pandas builds each column whatever the rows); select the "
                "columns you need first, or write wide sparse data as svmlight/LIBSVM"
            )


def is_number(cell: str, *, decimal_comma: bool = False) -> bool:
    """Whether ``cell`` is a number (also ``1,5`` with ``decimal_comma``)."""
    if decimal_comma and re.fullmatch(_DECIMAL_COMMA, cell):
        return True
    try:
        float(cell)
    except ValueError:
        return False
    return True


def read_csv(path: Path, text: str, delimiter: str | None) -> pd.DataFrame:
    lines = first_lines(text, 50)
    if not lines:
        raise DataFileError(f"cannot parse {path}: the file is empty")
    _long_field(path, text, lines)
    if delimiter is None:
        try:
            delimiter = _sniff_delimiter(lines)
        except DataFileError as exc:
            raise DataFileError(f"cannot parse {path} as CSV: {exc}") from None
    _check_widths(path, text, delimiter)

    def fields(line: str) -> list[str]:
        if delimiter == r"\s+":
            return line.split()
        try:
            return next(csv.reader([line], delimiter=delimiter, skipinitialspace=True))
        except csv.Error as exc:
            raise DataFileError(
                f"cannot parse {path} as CSV: line {line_number(text, line)}: {exc}"
                + _FIELD_HINT * ("field larger" in str(exc))
            ) from None

    first = fields(lines[0])
    decimal_comma = delimiter != ","  # possible unless the comma separates the fields
    headerless = all(is_number(c.strip(), decimal_comma=decimal_comma) for c in first if c.strip())
    if len(lines) == 1 and not headerless:  # said before pandas builds the header's columns
        raise DataFileError(f"cannot parse {path} as CSV: no data rows (only the header)")
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
    names = f"{len(first)} column{'' if len(first) == 1 else 's'} ({column_list(first, 6)})"
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
    numbers = [is_number(c, decimal_comma=decimal_comma) for c in cells]
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
