"""Markdown tables of experiment result frames, shared by the suites' experiments."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["format_cell", "markdown_table"]


def format_cell(v: Any) -> str:
    """One table cell: whole numbers in full (a training size of 11906 stays ``11906``),
    other numbers to 4 significant digits, ``""`` for None and NaN, anything else as text."""
    if v is None:
        return ""
    if isinstance(v, bool | np.bool_):
        return str(bool(v))
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, float | np.floating):
        v = float(v)
        if math.isnan(v):
            return ""
        if math.isfinite(v) and v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.4g}"
    return str(v)


def markdown_table(df: pd.DataFrame) -> str:
    """``df`` as a markdown table (header, rule, one line per row), cells by
    :func:`format_cell`; ends with a newline."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(format_cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"
