"""The ARFF (Weka) and KEEL ``.dat`` reader."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from svmtune.datasets._csv import MAX_CSV_COLUMNS
from svmtune.exceptions import DataFileError

# ---------------------------------------------------------------------------- ARFF / KEEL
_ATTR = re.compile(r"""^@attribute\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S+)\s*(.*)$""", re.I)

_ARFF_NA = {"?", "<null>"}


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
                if len(names) == MAX_CSV_COLUMNS:  # the CSV reader's bound, for its reason
                    raise DataFileError(
                        f"{source}: line {no}: more than {MAX_CSV_COLUMNS:,} @attribute lines, "
                        "the most columns svmtune reads from a file; select the attributes "
                        "you need first"
                    )
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
