"""``svmtune datasets``: the bundled data sets."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from svmtune.cli._common import echo_json, short
from svmtune.datasets import datasets_table


@click.command("datasets")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def datasets_cmd(as_json: bool) -> None:
    """List the bundled data sets (n, d, classes, source; from MANIFEST.md)."""

    rows = datasets_table()
    if as_json:
        echo_json({"datasets": rows})
        return

    table = Table(title=f"{len(rows)} bundled data sets (provenance: datasets/data/MANIFEST.md)")
    for col, kw in (
        ("name", {"style": "bold", "no_wrap": True}),
        ("n", {"justify": "right"}),
        ("d", {"justify": "right"}),
        ("classes", {"justify": "right"}),
        ("source", {"overflow": "fold"}),
    ):
        table.add_column(col, **kw)
    for r in rows:
        table.add_row(r["name"], short(r["n"]), short(r["d"]), short(r["n_classes"]), r["source"])
    Console().print(table)
