"""The report's model (tables, figures, sections) and how it formats numbers.

A report (:func:`svmtune.bench.report.build_report`) is a list of :class:`Section`, each with
paragraphs, :class:`Table` and :class:`Figure`; the renderers
(:mod:`svmtune.bench.report_render`) write them as markdown or HTML.  Report-section hooks of
suite directories build the same objects.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Table", "Figure", "Section", "PUBLISHED_METRICS", "NOT_RUN", "fmt_num"]

#: published metric -> (result column, aggregate, scale to the paper's unit)
PUBLISHED_METRICS: dict[str, tuple[str, str, float]] = {
    "accuracy": ("accuracy", "mean", 100.0),
    "accuracy_std": ("accuracy", "std", 100.0),
    "f1": ("f1", "mean", 100.0),
    "error": ("accuracy", "error", 100.0),
    "log_loss": ("log_loss", "mean", 1.0),
    "brier": ("brier", "mean", 1.0),
    "entropy": ("entropy", "mean", 1.0),
    "time": ("selection_time", "mean", 1.0),
    "n_svm_fits": ("n_svm_fits", "mean", 1.0),
}

NOT_RUN = "not run"


# ----------------------------------------------------------------------------- model
@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Figure:
    title: str
    path: Path


@dataclass
class Section:
    title: str
    text: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    #: non-PNG outputs of a suite's figure callables: (file name, its text)
    files: list[tuple[str, str]] = field(default_factory=list)
    #: a suite's table in the report's opening summary (:func:`summary_table`), not rendered
    #: in the section itself
    summary: Table | None = None


# ----------------------------------------------------------------------------- formatting
def _isnum(v: Any) -> bool:
    return (
        v is not None and isinstance(v, (int, float, np.floating, np.integer)) and math.isfinite(v)
    )


def _pct(v, digits: int = 2) -> str:
    return f"{100 * v:.{digits}f}" if _isnum(v) else "—"


def _read_note(read) -> str:
    """How a ``--data`` file was read (a row's ``data_read``), for the task's caption."""
    if not isinstance(read, dict):
        return ""
    parts = [f"label {read['target']!r}"] if "target" in read else []
    parts += [f"format {read['format']}"] if "format" in read else []
    if read.get("drop"):
        parts.append("without " + ", ".join(repr(c) for c in read["drop"]))
    if read.get("groups"):
        parts.append(f"groups {read['groups']!r}")
    return f": {'; '.join(parts)}" if parts else ""


def _num(v, digits: int = 3) -> str:
    if not _isnum(v):
        return "—"
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 10**-digits):
        return f"{v:.{digits}g}"
    return f"{v:.{digits}f}"


def _ratio(v) -> str:
    if not _isnum(v):
        return "—"
    return f"×{v:.3g}"


def _signed_pp(v) -> str:
    if not _isnum(v):
        return "—"
    return f"{0.0 if abs(v) < 5e-7 else 100 * v:+.2f}"  # no "-0.00" from float noise


def _pm(values: pd.Series, fmt: Callable[[Any], str]) -> str:
    """``mean ± std`` (sample std over splits; 0 for a single split) of a column."""
    v = values.dropna()
    if v.empty:
        return "—"
    return f"{fmt(v.mean())} ± {fmt(v.std(ddof=1) if len(v) > 1 else 0.0)}"


def _pval(p) -> str:
    if not _isnum(p):
        return "—"
    return f"{p:.5f}" if p >= 1e-5 else f"{p:.2e}"


def _slug(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s)


def _digests(files: list[Path]) -> list[tuple[Path, str]]:
    return [(f, hashlib.sha256(f.read_bytes()).hexdigest()) for f in files]


def _environment_summary(df: pd.DataFrame) -> str:
    parts = []
    for col in ("versions", "machine"):
        if col in df:
            vals = {str(v) for v in df[col].dropna()}
            if vals:
                shown = sorted(vals)[:3]
                parts.append(f"{col}: " + " | ".join(shown) + (" ..." if len(vals) > 3 else ""))
    return "; ".join(parts)


#: a number as the report prints it (``digits`` decimals, or significant digits for very large
#: or small values; "—" for None and non-finite values), for report-section hooks
fmt_num = _num
