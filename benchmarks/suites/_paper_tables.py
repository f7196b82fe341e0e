"""The papers' numbers of the suites, read from ``paper_tables/<suite file stem>.json``.

Each file records its ``source`` (the paper) and, per table, a ``caption`` saying what the
values are (and ``columns`` where a row has one value per column); the values are transcribed
from the papers' text as printed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["PAPER_TABLES_DIR", "paper_table", "paper_source"]

#: directory of the transcribed tables
PAPER_TABLES_DIR = Path(__file__).resolve().parent / "paper_tables"


def _document(suite: str) -> dict[str, Any]:
    return json.loads((PAPER_TABLES_DIR / f"{suite}.json").read_text(encoding="utf-8"))


def paper_source(suite: str) -> str:
    """The paper the tables of ``suite`` (a suite file's stem) are transcribed from."""
    return str(_document(suite)["source"])


def paper_table(suite: str, table: str) -> dict[str, Any]:
    """Table ``table`` of the paper of ``suite`` (a suite file's stem, e.g. ``"ld_paper"``).

    Returns
    -------
    dict
        Row name -> value, lists (also nested ones) as tuples, numbers as printed.
    """

    def tup(v: Any) -> Any:
        return tuple(tup(x) for x in v) if isinstance(v, list) else v

    return {k: tup(v) for k, v in _document(suite)["tables"][table]["values"].items()}
