"""The ``svmtune`` command group and its commands."""

from __future__ import annotations

import click

from svmtune import __version__
from svmtune.cli._bench import bench, report
from svmtune.cli._common import plain_warnings
from svmtune.cli._datasets import datasets_cmd
from svmtune.cli._demo import demo_cmd
from svmtune.cli._predict import predict_cmd
from svmtune.cli._select import select_cmd

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="svmtune")
@click.option("--debug", is_flag=True, hidden=True, help="Show tracebacks of errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """svmtune: fast, published hyperparameter selection for SVMs.

    Methods: see `svmtune select --help`; bundled data: `svmtune datasets`; the Python API:
    `svmtune.SVMTuner`.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    if not debug:
        ctx.with_resource(plain_warnings())


for _command in (datasets_cmd, select_cmd, demo_cmd, predict_cmd, bench, report):
    main.add_command(_command)
