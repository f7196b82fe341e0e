"""Helpers every command shares: ``--param`` parsing, JSON output, one-line errors,
the method check, tables, and the plain warning format."""

from __future__ import annotations

import ast
import contextlib
import difflib
import json
import math
import warnings
from typing import Any

import click
import numpy as np
from rich.console import Console
from rich.table import Table

from svmtune.methods import available_methods, get_selector, method_options

METHOD_LIST = ", ".join(available_methods())


#: words a shell user writes for Python's True, False and None (any case)
_WORDS = {"true": True, "false": False, "none": None, "null": None}


def parse_param(text: str) -> tuple[str, Any]:
    """``"key=value"`` -> ``(key, value)``; the value through ``ast.literal_eval``, else a str.

    ``true``/``false`` and ``none``/``null`` (any case) are ``True``/``False`` and ``None``,
    so that ``rescale=false`` turns an option off rather than passing the string
    ``'false'``.

    ``log2_C="(-2,2,1)"`` gives ``("log2_C", (-2, 2, 1))``; ``scoring=f1`` gives
    ``("scoring", "f1")``.  A value that opens a tuple, list, dict or string literal but is
    not one (``log2_C="(-2,2"``) is an error rather than a string.
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise click.BadParameter(f"expected key=value, got {text!r}", param_hint="'--param'")
    raw = raw.strip()
    if raw.lower() in _WORDS:  # rescale=false: a boolean, not the (true) string 'false'
        return key, _WORDS[raw.lower()]
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        if raw and raw[0] in "([{'\"":
            raise click.BadParameter(
                f"{key}={raw}: not a Python literal ({exc.__class__.__name__}); quote it for "
                f"the shell, e.g. {key}='(-2, 2, 1)'",
                param_hint="'--param'",
            ) from None
        value = raw
    return key, value


def parse_params(items: tuple[str, ...]) -> dict[str, Any]:
    """Several ``--param key=value`` options -> a dict (a repeated key is an error)."""
    out: dict[str, Any] = {}
    for item in items:
        key, value = parse_param(item)
        if key in out:
            raise click.BadParameter(f"{key!r} given twice", param_hint="'--param'")
        out[key] = value
    return out


def to_jsonable(value: Any) -> Any:
    """Python/numpy values -> JSON-safe ones (non-finite floats become None, keys strings)."""
    if isinstance(value, dict):
        return {str(to_jsonable(k)): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def short(value: Any, width: int = 60) -> str:
    """A table cell for ``value``: long arrays summarised, floats with 6 significant digits,
    dicts and lists cut at ``width`` characters; a string whole (a sentence such as
    ``auto``'s ``final_rule`` tells its reason at its end; the table folds it)."""
    if isinstance(value, np.ndarray) and value.size > 8:
        if value.dtype.kind in "iuf" and value.size:
            return f"array{value.shape} min={np.nanmin(value):.4g} max={np.nanmax(value):.4g}"
        return f"array{value.shape}"
    if isinstance(value, (list, tuple)) and len(value) > 8:
        head = ", ".join(short(v, 12) for v in value[:3])
        return f"{type(value).__name__} of {len(value)}: [{head}, ...]"
    value = to_jsonable(value)
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        text = f"{value:.6g}"
    elif value is None:
        text = "-"
    elif isinstance(value, (dict, list)):
        text = json.dumps(value)
    else:
        text = str(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def one_line(exc: BaseException) -> str:
    """The first line of an exception message (sklearn's NaN message runs to a paragraph)."""
    text = str(exc).strip() or type(exc).__name__
    first = text.splitlines()[0].strip()
    return first


def fail(exc: BaseException, prefix: str = "") -> click.ClickException:
    ctx = click.get_current_context(silent=True)
    if ctx is not None and (ctx.find_root().obj or {}).get("debug"):
        raise exc
    return click.ClickException(prefix + one_line(exc))


def options_hint(name: str, params: dict[str, Any]) -> str:
    """`` (options of 'grid': log2_sigma, ...)``, or "" when the method has none or
    ``params`` has an unknown one (whose error lists them already)."""

    try:
        names = method_options(name)
    except (ImportError, AttributeError, TypeError, ValueError):
        return ""
    if not names or set(params) - set(names):
        return ""
    return f" (options of {name!r}: {', '.join(names)})"


def check_method(name: str, params: dict[str, Any]):
    """The selector for ``--method`` (and ``--param``s), or a one-line CLI error."""

    names = available_methods()
    if name not in names:
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise click.BadParameter(
            f"unknown method {name!r}{hint}; choose one of: {', '.join(names)}",
            param_hint="'--method'",
        )
    try:
        selector = get_selector(name, params)
        selector.check_requirements()  # an optional extra, before the data is even read
        return selector
    except ImportError as exc:
        raise click.ClickException(
            f"method {name!r} is registered but not available in this installation "
            f"({one_line(exc)}); try another --method"
        ) from None
    except ValueError as exc:
        raise click.ClickException(one_line(exc) + options_hint(name, params)) from None


def print_table(title: str, sections: list[tuple[str, dict[str, Any]]]) -> None:

    table = Table(title=title, show_header=True, header_style="bold")
    table.add_column("", style="bold")
    table.add_column("value", overflow="fold")
    for i, (name, rows) in enumerate(sections):
        if not rows:
            continue
        if i:
            table.add_section()
        for key, value in rows.items():
            table.add_row(f"{name}{key}" if name else str(key), short(value))
    Console().print(table)


def echo_json(record: dict[str, Any]) -> None:
    click.echo(json.dumps(to_jsonable(record), indent=2, allow_nan=False))


@contextlib.contextmanager
def plain_warnings():
    """Warnings as ``warning: message`` lines on stderr while a command runs: the file and
    line a Python warning names belong to the library, not to the command's user (--debug
    keeps them)."""
    saved = warnings.formatwarning

    def plain(message, category, filename, lineno, line=None) -> str:
        kind = "" if category is UserWarning else f" ({category.__name__})"
        return f"warning{kind}: {message}\n"

    warnings.formatwarning = plain
    try:
        yield
    finally:
        warnings.formatwarning = saved


format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "tsv", "svmlight", "libsvm", "arff", "keel"]),
    default=None,
    help="File format (default: from the extension or the content).",
)


def choice_option(flag: str, choices: tuple[str, ...], text: str):
    """An option choosing one of ``choices``, the first being the default."""
    return click.option(
        flag, type=click.Choice(choices), default=choices[0], show_default=True, help=text
    )
