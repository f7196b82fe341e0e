"""The ``svmtune`` command line.

``svmtune datasets``          the bundled data sets (from MANIFEST.md)
``svmtune select FILE ...``   select hyperparameters for a file or a bundled data set
``svmtune demo``              a short selection on a bundled data set, with test accuracy
``svmtune predict MODEL FILE`` apply a model saved by ``select --out`` to new rows

``main`` is a :class:`click.Group`: further commands (``bench``, ``report``) are attached with
``main.add_command(...)``.  Expected failures (missing file, unparsable data, unknown method,
bad labels, ...) end with a one-line ``Error: ...`` message and exit status 1 (2 for usage
errors); ``svmtune --debug ...`` shows the traceback instead.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import difflib
import functools
import json
import math
import os
import re
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import numpy as np
import scipy.sparse as sp

from svmtune import __version__
from svmtune._factor import warm_up as warm_up_factor
from svmtune.bench.cli import bench, report
from svmtune.criteria._pairloops import warm_up as warm_up_loops
from svmtune.methods.base import available_methods

__all__ = ["main", "parse_param", "parse_params", "to_jsonable"]

_METHOD_LIST = ", ".join(available_methods())


# ---------------------------------------------------------------------------- helpers
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


def _short(value: Any, width: int = 60) -> str:
    """A table cell for ``value``: long arrays summarised, floats with 6 significant digits."""
    if isinstance(value, np.ndarray) and value.size > 8:
        if value.dtype.kind in "iuf" and value.size:
            return f"array{value.shape} min={np.nanmin(value):.4g} max={np.nanmax(value):.4g}"
        return f"array{value.shape}"
    if isinstance(value, (list, tuple)) and len(value) > 8:
        head = ", ".join(_short(v, 12) for v in value[:3])
        return f"{type(value).__name__} of {len(value)}: [{head}, ...]"
    value = to_jsonable(value)
    if isinstance(value, float):
        text = f"{value:.6g}"
    elif value is None:
        text = "-"
    elif isinstance(value, (dict, list)):
        text = json.dumps(value)
    else:
        text = str(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _one_line(exc: BaseException) -> str:
    """The first line of an exception message (sklearn's NaN message runs to a paragraph)."""
    text = str(exc).strip() or type(exc).__name__
    first = text.splitlines()[0].strip()
    return first


def _fail(exc: BaseException, prefix: str = "") -> click.ClickException:
    ctx = click.get_current_context(silent=True)
    if ctx is not None and (ctx.find_root().obj or {}).get("debug"):
        raise exc
    return click.ClickException(prefix + _one_line(exc))


def _options_hint(name: str, params: dict[str, Any]) -> str:
    """`` (options of 'grid': log2_sigma, ...)``, or "" when the method has none or
    ``params`` has an unknown one (whose error lists them already)."""
    from svmtune.methods.base import method_options

    try:
        names = method_options(name)
    except (ImportError, AttributeError, TypeError, ValueError):
        return ""
    if not names or set(params) - set(names):
        return ""
    return f" (options of {name!r}: {', '.join(names)})"


def _check_method(name: str, params: dict[str, Any]):
    """The selector for ``--method`` (and ``--param``s), or a one-line CLI error."""
    from svmtune.methods.base import get_selector

    names = available_methods()
    if name not in names:
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise click.BadParameter(
            f"unknown method {name!r}{hint}; choose one of: {', '.join(names)}",
            param_hint="'--method'",
        )
    try:
        return get_selector(name, params)
    except ImportError as exc:
        raise click.ClickException(
            f"method {name!r} is registered but not available in this installation "
            f"({_one_line(exc)}); try another --method"
        ) from None
    except ValueError as exc:
        raise click.ClickException(_one_line(exc) + _options_hint(name, params)) from None


def _bundled_name(source: str) -> str:
    """The bundled data set ``source`` names (it is not an existing file)."""
    from svmtune.datasets import list_datasets, resolve_name

    try:
        return resolve_name(source)
    except ValueError:
        close = difflib.get_close_matches(source.strip().lower(), list_datasets(), n=3)
        hint = f" Bundled data sets with similar names: {', '.join(close)}." if close else ""
        raise click.ClickException(
            f"file not found: {source} (nor is it a bundled data set; `svmtune datasets` lists "
            f"them).{hint}"
        ) from None


def _load(source: str, target: str | None, fmt: str | None, groups: str | None = None):
    """``source`` is a path or a bundled data-set name -> (X DataFrame, y, description); an
    svmlight/LIBSVM file's description says where its feature indices start
    (``"index_base"``: 0 or 1).  A bundled data set's ``groups`` side array named ``groups``
    becomes a column of ``X`` (:meth:`~svmtune.datasets.DatasetInfo.add_group_column`)."""
    from svmtune.datasets import load_dataset, load_table
    from svmtune.datasets.loaders import split_table

    path = Path(source).expanduser()
    if path.exists():
        try:
            table = load_table(path, fmt=fmt)
            X, y = split_table(table, target, str(path))
        except (ValueError, OSError) as exc:
            raise _fail(exc) from None
        info = {"file": str(path)}
        if "zero_based" in table.attrs:
            info["index_base"] = 0 if table.attrs["zero_based"] else 1
        return X, y, info
    key = _bundled_name(source)
    if target not in (None, "target"):
        raise click.UsageError(
            f"bundled data set {key!r} has its labels in 'target'; --target does not apply"
        )
    X, y, info = load_dataset(key)
    if groups is not None:
        X = info.add_group_column(X, groups)
    return X, y, {"dataset": key, "version": info.version}


def _drop(X, columns: tuple[str, ...]):
    """``X`` without the ``--drop`` columns."""
    unknown = [c for c in columns if c not in X.columns]
    if unknown:
        raise click.BadParameter(
            f"no column {unknown[0]!r} in the features (columns: "
            f"{', '.join(map(str, X.columns[:12]))})",
            param_hint="'--drop'",
        )
    if len(set(columns)) == X.shape[1]:
        raise click.BadParameter("that drops every feature column", param_hint="'--drop'")
    return X.drop(columns=list(columns))


def _pop_column(X, column: str, option: str):
    """Split the column ``option`` names (``--sample-weight``, ``--groups``) off the
    features: the features without it, and the column."""
    if column not in X.columns:
        raise click.BadParameter(
            f"no column {column!r} in the data (columns: {', '.join(map(str, X.columns[:12]))})",
            param_hint=f"'{option}'",
        )
    return X.drop(columns=[column]), X[column]


def _pop_weights(X, column: str):
    """Split the ``--sample-weight`` column off the features."""
    import pandas as pd

    X, col = _pop_column(X, column, "--sample-weight")
    w = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    if np.isnan(w).any() and not col.isna().any():
        raise click.ClickException(f"sample-weight column {column!r} is not numeric")
    return X, w


def _class_weight(value: str | None, y) -> str | dict | None:
    """``--class-weight``: "balanced", or ``LABEL=WEIGHT`` pairs whose labels are matched to
    the classes of ``y`` as the table of ``select`` prints them (``str``), and an integral
    float label also without its ``.0`` (``1`` and ``1.0`` both name the class 1.0)."""
    if value is None:
        return None
    if value.strip() == "balanced":
        return "balanced"
    classes: dict[str, Any] = {}
    shown = []
    for c in np.unique(np.asarray(y)):
        v = c.item() if isinstance(c, np.generic) else c
        shown.append(str(v))
        classes[str(v)] = c
        if isinstance(v, float) and v.is_integer():
            classes.setdefault(str(int(v)), c)
    out: dict[Any, float] = {}
    for item in value.split(","):
        label, sep, weight = (part.strip() for part in item.partition("="))
        if not sep or not label:
            raise click.BadParameter(
                "use 'balanced' or LABEL=WEIGHT pairs separated by commas, e.g. 'pos=5,neg=1'",
                param_hint="'--class-weight'",
            )
        if label not in classes:
            raise click.BadParameter(
                f"{label!r} is not a class of the data (classes: {', '.join(shown)})",
                param_hint="'--class-weight'",
            )
        try:
            out[classes[label]] = float(weight)
        except ValueError:
            raise click.BadParameter(
                f"the weight of class {label!r} must be a number, got {weight!r}",
                param_hint="'--class-weight'",
            ) from None
    return out


def _choose_preprocess(X, mode: str | None) -> str:
    from svmtune._validation import check_feature_values, check_numeric_features
    from svmtune.preprocess import needs_auto

    if mode is None:
        mode = "auto" if needs_auto(X) else "standard"
    try:
        if mode != "auto":
            check_numeric_features(X)
        check_feature_values(X, allow_nan=mode == "auto")
    except ValueError as exc:
        raise _fail(exc) from None
    return mode


def _describe_data(X, y) -> dict[str, Any]:
    labels, counts = np.unique(np.asarray(y, dtype=object).astype(str), return_counts=True)
    return {
        "n": int(X.shape[0]),
        "d": int(X.shape[1]),
        "classes": {str(k): int(v) for k, v in zip(labels, counts)},
    }


def _fit_tuner(
    X,
    y,
    *,
    method,
    opts: _SelectionOptions,
    preprocess,
    sample_weight=None,
    class_weight=None,
    groups=None,
    method_params=None,
    verbose: int = 0,
):
    """Fit an ``SVMTuner`` with the shared options ``opts`` (``preprocess`` resolved);
    ``method_params`` replaces the options' ``--param``s; ``verbose`` is the tuner's."""
    from svmtune.tuner import SVMTuner

    tuner = SVMTuner(
        method=method,
        kernel=opts.kernel,
        method_params=(opts.method_params or None) if method_params is None else method_params,
        preprocess=preprocess,
        random_state=opts.random_state,
        n_jobs=opts.n_jobs,
        multiclass=opts.multiclass,
        final_model=opts.final_model,
        probability=opts.probability,
        class_weight=class_weight,
        verbose=verbose,
    )
    try:
        return tuner.fit(X, y, sample_weight=sample_weight, groups=groups)
    except (ValueError, ImportError) as exc:
        raise _fail(exc) from None
    except Exception as exc:  # a failing method: one line here, traceback with --debug
        raise _fail(
            exc, f"selection with method {method!r} failed: {type(exc).__name__}: "
        ) from None


def _selection_record(tuner) -> dict[str, Any]:
    sel = getattr(tuner, "selection_", None)
    return {
        "best_params": dict(tuner.best_params_),
        "estimate": tuner.estimate_,
        "criterion": tuner.criterion_,
        "selection_time": tuner.selection_time_,
        "n_svm_fits": tuner.n_svm_fits_,
        "final_model": getattr(tuner, "final_model_", None),
        "info": dict(sel.info) if sel is not None else {},
        **({"candidates": rows} if (rows := _candidates(tuner)) else {}),
    }


def _print_table(title: str, sections: list[tuple[str, dict[str, Any]]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_header=True, header_style="bold")
    table.add_column("", style="bold")
    table.add_column("value", overflow="fold")
    for i, (name, rows) in enumerate(sections):
        if not rows:
            continue
        if i:
            table.add_section()
        for key, value in rows.items():
            table.add_row(f"{name}{key}" if name else str(key), _short(value))
    Console().print(table)


def _candidates(tuner) -> list[dict[str, Any]]:
    """The candidates a referee-based selection (``method="auto"``) scored, one per entry of
    ``history_``; empty for the other methods."""
    return [dict(h) for h in tuner.history_ if "origin" in h]


def _print_candidates(rows: list[dict[str, Any]]) -> None:
    """The referee's table: every candidate with its origin, hyperparameters, closed-form
    leave-one-out error of each final model, and cost."""
    from rich.console import Console
    from rich.table import Table

    if not rows:
        return
    table = Table(title="candidates (leave-one-out error by the referee)", header_style="bold")
    for col in (
        "origin",
        "sigma",
        "C",
        "LOO error, SVC",
        "LOO error, L2-SVM",
        "SVM fits",
        "time (s)",
        "",
    ):
        table.add_column(col, justify="left" if col == "origin" else "right")
    for r in rows:
        errs = [r.get(f"estimate_{f}") for f in ("l1", "l2")]
        table.add_row(
            r["origin"],
            f"{r['sigma']:.4g}",
            f"{r['C']:.4g}",
            *("-" if e is None else f"{e:.4f}" for e in errs),
            str(r["n_svm_fits"]),
            f"{r['time']:.3f}",
            "chosen" if r.get("chosen") else "",
        )
    Console().print(table)


def _echo_json(record: dict[str, Any]) -> None:
    click.echo(json.dumps(to_jsonable(record), indent=2, allow_nan=False))


@dataclass(frozen=True)
class _SelectionOptions:
    """The options ``select`` and ``demo`` share (:func:`_common_selection_options`)."""

    kernel: str
    params: tuple[str, ...]
    preprocess: str | None
    random_state: int
    n_jobs: int | None
    multiclass: str
    final_model: str
    probability: str
    as_json: bool

    @functools.cached_property
    def method_params(self) -> dict[str, Any]:
        return parse_params(self.params)

    def applied(self, tuner) -> dict[str, str]:
        """``multiclass`` and ``probability`` as the fitted ``tuner``'s final model applies
        them: a final L2-SVM is one-vs-rest on more than two classes and has no Platt
        scaling (``SVMTuner`` warns when it overrides the options)."""
        l2_ovr = tuner.final_model_ == "l2" and len(tuner.classes_) > 2
        return {
            "multiclass": "ovr" if l2_ovr else self.multiclass,
            "probability": tuner.probability_,
        }

    def record(self, preprocess: str, tuner) -> dict[str, Any]:
        """These options in a command's JSON record (``preprocess`` as resolved; the final
        model's options as applied, :meth:`applied`)."""
        return {
            "method_params": self.method_params,
            "kernel": self.kernel,
            "preprocess": preprocess,
            "random_state": self.random_state,
            **self.applied(tuner),
        }

    def model_rows(self, tuner) -> dict[str, str]:
        """The final model's options that differ from the defaults, as applied (with the
        requested value where that differs), for the printed table."""
        requested = {"multiclass": self.multiclass, "probability": self.probability}
        why = {
            "multiclass": "the L2-SVM is one-vs-rest",
            "probability": "Platt is for L1 final models",
        }
        rows = {}
        for key, value in self.applied(tuner).items():
            if key == "multiclass" and len(tuner.classes_) <= 2:
                continue
            if value != requested[key]:
                rows[key] = f"{value} ({requested[key]} requested; {why[key]})"
            elif value not in ("ovr", "tanh"):
                rows[key] = value
        return rows


def _choice_option(flag: str, choices: tuple[str, ...], text: str):
    """An option choosing one of ``choices``, the first being the default."""
    return click.option(
        flag, type=click.Choice(choices), default=choices[0], show_default=True, help=text
    )


_SELECTION_OPTIONS = [
    click.option(
        "--kernel", default="rbf", show_default=True, help="Kernel whose parameters are selected."
    ),
    click.option(
        "--param",
        "params",
        multiple=True,
        metavar="KEY=VALUE",
        help="Method option, repeatable; VALUE is a Python literal (e.g. log2_C='(-2,2,1)').",
    ),
    click.option(
        "--preprocess",
        type=click.Choice(["auto", "standard", "none"]),
        default=None,
        help="Default: 'auto' (impute, one-hot, standardise) when the data have missing "
        "values or categorical columns, else 'standard'.",
    ),
    click.option(
        "--random-state",
        type=int,
        default=0,
        show_default=True,
        help="Seed of every random choice.",
    ),
    click.option(
        "--n-jobs", type=int, default=None, help="Parallel jobs for candidate evaluation."
    ),
    _choice_option(
        "--multiclass",
        ("ovr", "ovo"),
        "More than two classes: one-vs-rest (the papers' protocol) or libsvm's one-vs-one "
        "(as SVC()).",
    ),
    _choice_option(
        "--final-model",
        ("auto", "l1", "l2"),
        "Final SVM: the one the method selected for ('auto'), libsvm's hinge-loss SVC ('l1') "
        "or the squared-hinge L2-SVM ('l2').",
    ),
    _choice_option(
        "--probability",
        ("tanh", "platt"),
        "Class probabilities of the model: RBSVM's tanh of the decision value, or Platt "
        "scaling (as SVC(probability=True); libsvm final models only).",
    ),
    click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table."),
]


def _common_selection_options(f):
    """Add the shared options to a command; it receives them as one ``opts`` argument."""
    names = [fld.name for fld in dataclasses.fields(_SelectionOptions)]

    @functools.wraps(f)
    def command(*args, **kwargs):
        opts = _SelectionOptions(**{k: kwargs.pop(k) for k in names})
        return f(*args, opts=opts, **kwargs)

    for option in reversed(_SELECTION_OPTIONS):
        command = option(command)
    return command


_format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "tsv", "svmlight", "libsvm", "arff", "keel"]),
    default=None,
    help="File format (default: from the extension or the content).",
)


# ---------------------------------------------------------------------------- commands
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
        ctx.with_resource(_plain_warnings())


@contextlib.contextmanager
def _plain_warnings():
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


@main.command("datasets")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def datasets_cmd(as_json: bool) -> None:
    """List the bundled data sets (n, d, classes, source; from MANIFEST.md)."""
    from svmtune.datasets import datasets_table

    rows = datasets_table()
    if as_json:
        _echo_json({"datasets": rows})
        return
    from rich.console import Console
    from rich.table import Table

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
        table.add_row(
            r["name"], _short(r["n"]), _short(r["d"]), _short(r["n_classes"]), r["source"]
        )
    Console().print(table)


@main.command("select")
@click.argument("file", metavar="FILE")
@click.option("--target", default=None, help="Label column (name or position, e.g. -1).")
@_format_option
@click.option(
    "--method", default="auto", show_default=True, help=f"Selection method: {_METHOD_LIST}."
)
@click.option(
    "--sample-weight",
    "weight_column",
    default=None,
    metavar="COLUMN",
    help="Column of FILE holding per-sample weights (removed from the features).",
)
@click.option(
    "--class-weight",
    "class_weight",
    default=None,
    metavar="balanced|LABEL=W,...",
    help="Class weights, as SVC's class_weight: 'balanced', or weights by label, e.g. "
    "'pos=5' (unnamed classes keep 1); they multiply the sample weights.",
)
@click.option(
    "--drop",
    "drop_columns",
    multiple=True,
    metavar="COLUMN",
    help="Column of FILE that is not a feature (e.g. an identifier); repeatable.",
)
@click.option(
    "--groups",
    "group_column",
    default=None,
    metavar="COLUMN",
    help="Column of FILE naming each row's group (patient, recording, stretch of a series; "
    "removed from the features): cross-validated methods keep each group on one side of "
    "every split, and rbsvm and rbsvm_lowrank leave one whole group out at a time.",
)
@_common_selection_options
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Save the fitted SVMTuner: a FILE.skops with skops (safe to load; pip install "
    "'svmtune[skops]'), any other name with joblib (a pickle: loading it can run code).",
)
@click.option(
    "--results",
    "results_csv",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE.csv",
    help="Write the evaluated candidates (the tuner's cv_results_, scikit-learn's layout) as CSV.",
)
@click.option(
    "--plot",
    "plot_file",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE.png",
    help="Plot the criterion over (log2 sigma, log2 C) with the search's path and the chosen "
    "point, beside the held-out error where computed (svmtune.plot_landscape).",
)
@click.option(
    "--quiet",
    "-q",
    is_flag=True,
    help="No progress bar (shown on standard error when that is a terminal).",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="A line per evaluated candidate with its score on standard error, instead of the bar.",
)
def select_cmd(
    file,
    target,
    fmt,
    method,
    weight_column,
    class_weight,
    drop_columns,
    group_column,
    out,
    results_csv,
    plot_file,
    quiet,
    verbose,
    opts: _SelectionOptions,
) -> None:
    """Select SVM hyperparameters for FILE and fit the final model on all of it.

    FILE is a CSV/TSV, svmlight/LIBSVM or ARFF/KEEL file, or the name of a bundled data set
    (e.g. `svmtune select pima --method grid`).
    """
    _check_method(method, opts.method_params)
    verbosity = _verbosity(quiet, verbose)
    _check_out(out)
    _check_out(results_csv, "--results")
    _check_out(plot_file, "--plot")
    if out is not None and Path(out).suffix.lower() == ".skops":
        _check_skops()
    sparse = None
    if not (drop_columns or weight_column or group_column or target):
        sparse = _load_sparse_svmlight(file, fmt, method, opts)
    X, y, source = sparse or _load(file, target, fmt, group_column)
    if drop_columns:
        X = _drop(X, drop_columns)
        source["dropped"] = list(drop_columns)
    weights = None
    if weight_column is not None:
        X, weights = _pop_weights(X, weight_column)
        source["sample_weight"] = weight_column
    groups = None
    if group_column is not None:
        X, groups = _pop_column(X, group_column, "--groups")
        groups = groups.to_numpy()
        source["groups"] = group_column
    class_weights = _class_weight(class_weight, y)
    if sp.issparse(X):  # scaling without centring keeps it sparse (or none)
        mode = opts.preprocess or "standard"
    else:
        mode = _choose_preprocess(X, opts.preprocess)
    tuner = _fit_tuner(
        X,
        y,
        method=method,
        opts=opts,
        preprocess=mode,
        sample_weight=weights,
        class_weight=class_weights,
        groups=groups,
        verbose=verbosity,
    )
    record = {
        "data": {**source, **_describe_data(X, y)},
        "method": method,
        "class_weight": class_weight,
        **opts.record(mode, tuner),
        **_selection_record(tuner),
    }
    if opts.as_json:
        record["cv_results"] = tuner.cv_results_
    save_error = None
    if out is not None:
        from svmtune.persist import save_model

        if "index_base" in source:  # predict reads svmlight files with the same numbering
            tuner.svmlight_zero_based_ = source["index_base"] == 0
        if sp.issparse(X):  # and keeps them sparse
            tuner.svmlight_sparse_ = True
        try:
            record["saved_as"] = save_model(tuner, out)
            record["saved_to"] = str(out)
        except OSError as exc:  # the result is printed first: the selection is not lost
            save_error = ("--out", exc)
    if results_csv is not None:
        try:
            results_frame(tuner.cv_results_).to_csv(results_csv, index=False)
            record["results_to"] = str(results_csv)
        except OSError as exc:
            save_error = save_error or ("--results", exc)
    if plot_file is not None:
        try:
            from svmtune.plotting import plot_landscape

            plot_landscape(tuner, path=plot_file)
            record["plot_to"] = str(plot_file)
        except (ValueError, OSError) as exc:
            save_error = save_error or ("--plot", exc)
    _print_selection(record, opts, tuner)
    if save_error is not None:
        option, exc = save_error
        raise _fail(exc, f"cannot write {option} (the result is above): ") from None


def _load_sparse_svmlight(file: str, fmt: str | None, method: str, opts: _SelectionOptions):
    """``(CSR X, y, description)`` of an svmlight/LIBSVM ``file`` when the selection can
    use it sparse (a cross-validated search, which fits libsvm on sparse rows, no
    imputing/one-hot preprocessing, no L2-SVM final model), else None (the file is then read
    densely, as before).  Feature
    indices start at 1 unless index 0 occurs, as the dense reader decides."""
    from sklearn.datasets import load_svmlight_file

    from svmtune.datasets.loaders import detect_format
    from svmtune.methods.base import get_selector

    path = Path(file).expanduser()
    if not path.is_file() or opts.preprocess == "auto" or opts.final_model == "l2":
        return None
    try:
        kind = fmt or detect_format(path)
        selector = get_selector(method, opts.method_params or None)
    except ValueError:
        return None  # the dense path reports it
    # default's gamma='scale' is a statistic of the (there uncentred) matrix: it keeps the
    # dense reading its results had; the CV searches select the same on either
    if kind not in ("svmlight", "libsvm") or not selector.accepts_sparse or method == "default":
        return None
    if getattr(selector, "final_model", "l1") == "l2":
        return None
    try:
        X, y = load_svmlight_file(str(path), zero_based=True)  # column j: the file's index j
    except (ValueError, RuntimeError, OSError):
        return None  # byte-order marks, odd text: the dense reader's messages
    if X.shape[0] == 0:
        return None
    zero_based = X.nnz == 0 or int(X.indices.min()) == 0
    if not zero_based:
        X = X[:, 1:]
    if np.all(np.isfinite(y)) and np.all(y == np.round(y)):
        y = y.astype(np.int64)
    info = {"file": str(path), "index_base": 0 if zero_based else 1, "sparse": True}
    info["nnz"] = int(X.nnz)
    return X.tocsr(), y, info


def _stderr_is_terminal() -> bool:
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def _verbosity(quiet: bool, verbose: bool) -> int:
    """``SVMTuner(verbose=...)`` of ``select``: lines with --verbose, none with --quiet,
    else the progress bar when standard error is a terminal."""
    if verbose and quiet:
        raise click.UsageError("--quiet and --verbose exclude each other")
    if verbose:
        return 2
    return 0 if quiet else int(_stderr_is_terminal())


def results_frame(cv_results: dict[str, Any]):
    """``cv_results_`` as a DataFrame for a CSV file: ``params`` as JSON text, masked
    ``param_<name>`` entries (a parameter a row does not have) empty."""
    import pandas as pd

    columns = {}
    for key, value in cv_results.items():
        if key == "params":
            value = [json.dumps(to_jsonable(p), sort_keys=True) for p in value]
        elif isinstance(value, np.ma.MaskedArray):
            value = [None if m else v for v, m in zip(value.data, np.ma.getmaskarray(value))]
        columns[key] = value
    return pd.DataFrame(columns)


def _check_skops() -> None:
    """A usage error before the selection starts when ``--out FILE.skops`` cannot be
    written for want of skops."""
    try:
        import skops.io  # noqa: F401
    except ImportError:
        raise click.BadParameter(
            "saving a .skops file needs skops: pip install 'svmtune[skops]' (or skops), or "
            "give another file name to save with joblib",
            param_hint="'--out'",
        ) from None


def _check_out(out: str | None, option: str = "--out") -> None:
    """A usage error unless ``select --out`` (or ``option``) can be written, before the
    selection starts: its directory exists and is writable, and it is no directory."""
    if out is None:
        return
    path = Path(out)
    hint = f"'{option}'"
    if path.is_dir():
        raise click.BadParameter(f"{out} is a directory; give a file name", param_hint=hint)
    if not path.parent.is_dir():
        raise click.BadParameter(
            f"cannot write {out}: directory {path.parent} does not exist; create it first",
            param_hint=hint,
        )
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise click.BadParameter(
            f"cannot write {out}: permission denied; choose another file", param_hint=hint
        )


def _print_selection(record: dict[str, Any], opts: _SelectionOptions, tuner) -> None:
    """``select``'s result: the JSON ``record`` or a table."""
    method, class_weight = record["method"], record["class_weight"]
    if opts.as_json:
        _echo_json(record)
        return
    data = record["data"]
    head = {
        "data": data.get("file") or data.get("dataset"),
        "n x d": f"{data['n']} x {data['d']}",
        "classes": data["classes"],
        "preprocess": record["preprocess"],
        "method": method,
    }
    if data.get("sample_weight"):
        head["sample weight"] = data["sample_weight"]
    if data.get("dropped"):
        head["dropped"] = ", ".join(data["dropped"])
    if data.get("groups"):
        head["groups"] = data["groups"]
    if class_weight is not None:
        head["class weight"] = class_weight
    if "index_base" in data:
        head["svmlight indices"] = (
            "0-based (index 0 occurs)" if data["index_base"] == 0 else "1-based (no index 0)"
        )
    head.update(opts.model_rows(tuner))
    result = {
        "estimate": record["estimate"],
        "criterion": record["criterion"],
        "selection_time (s)": record["selection_time"],
        "n_svm_fits": record["n_svm_fits"],
        "final_model": record["final_model"],
    }
    if "saved_to" in record:
        result["saved to"] = f"{record['saved_as']}: {record['saved_to']}"
    if "results_to" in record:
        result["results written to"] = record["results_to"]
    if "plot_to" in record:
        result["plot written to"] = record["plot_to"]
    _print_table(
        f"svmtune select --method {method}",
        [("", head), ("", record["best_params"]), ("", result), ("info.", record["info"])],
    )
    _print_candidates(record.get("candidates", []))


#: the demo's grid search: the quick suite's 10-fold yardstick (log2 sigma, log2 C in [-8, 8]
#: with step 2: 81 candidates)
DEMO_GRID = {"log2_sigma": (-8.0, 8.0, 2.0), "log2_C": (-8.0, 8.0, 2.0), "n_splits": 10}


@main.command("demo")
@click.option(
    "--method", default="auto", show_default=True, help=f"Selection method: {_METHOD_LIST}."
)
@click.option(
    "--dataset",
    default="parkinsons",
    show_default=True,
    help="Bundled data set (`svmtune datasets`).",
)
@click.option(
    "--test-size",
    type=click.FloatRange(0.05, 0.95),
    default=0.3,
    show_default=True,
    help="Fraction held out (stratified).",
)
@click.option(
    "--grid/--no-grid",
    default=True,
    show_default=True,
    help="Also run a 10-fold grid search (9 x 9 log2 grid) for comparison.",
)
@_common_selection_options
def demo_cmd(method, dataset, test_size, grid, opts: _SelectionOptions) -> None:
    """A short selection on a bundled data set: what was chosen, its cost and test accuracy.

    Splits the data set stratified (70/30 by default, seeded by --random-state), selects
    hyperparameters with --method on the training part, and compares the tuned SVM with
    scikit-learn's default SVC (gamma='scale', C=1) and a 10-fold grid search on the test
    part.  Cost is the time of selection and final fit over the time of one default SVC fit
    on the same data, measured in this run.
    """
    from sklearn.model_selection import train_test_split
    from sklearn.svm import SVC

    from svmtune.datasets import load_dataset, resolve_name
    from svmtune.preprocess import transform_as_fitted

    _check_method(method, opts.method_params)
    random_state = opts.random_state
    try:
        key = resolve_name(dataset)
    except ValueError as exc:
        raise click.BadParameter(_one_line(exc), param_hint="'--dataset'") from None
    X, y, info = load_dataset(key)
    try:
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=test_size, stratify=y, random_state=random_state
        )
    except ValueError as exc:
        raise _fail(exc, f"cannot split {key!r}: ") from None
    mode = _choose_preprocess(X, opts.preprocess)
    warm_up_loops()  # the compiled loops' one-time load is not the method's cost
    warm_up_factor()
    tuner = _fit_tuner(X_tr, y_tr, method=method, opts=opts, preprocess=mode)
    pre = tuner.preprocessor_
    Xp_tr, Xp_te = transform_as_fitted(pre, X_tr), transform_as_fitted(pre, X_te)
    t0 = time.perf_counter()
    svc = SVC().fit(Xp_tr, y_tr)
    svc_time = time.perf_counter() - t0
    rows = {
        method: _demo_row(tuner, X_te, y_te, svc_time),
        "SVC()": {
            "test accuracy": float(np.mean(svc.predict(Xp_te) == y_te)),
            "cost (SVC() fits)": 1.0,
        },
    }
    if grid and method != "grid":
        gt = _fit_tuner(
            X_tr, y_tr, method="grid", opts=opts, preprocess=mode, method_params=DEMO_GRID
        )
        rows["grid (10-fold)"] = _demo_row(gt, X_te, y_te, svc_time)
    record = {
        "data": {
            "dataset": key,
            "version": info.version,
            "n_train": int(len(y_tr)),
            "n_test": int(len(y_te)),
            "d": int(X.shape[1]),
            "n_classes": info.n_classes,
        },
        "method": method,
        **opts.record(mode, tuner),
        **_selection_record(tuner),
        "test_accuracy": rows[method]["test accuracy"],
        "default_svc": {"fit_time": svc_time, "test_accuracy": rows["SVC()"]["test accuracy"]},
        "comparison": rows,
    }
    if opts.as_json:
        _echo_json(record)
        return
    head = {
        "data": f"{key} ({info.n} x {info.d}, {info.n_classes} classes)",
        "split": f"{len(y_tr)} train / {len(y_te)} test (stratified, seed {random_state})",
        "preprocess": mode,
        "method": method,
        **opts.model_rows(tuner),
    }
    result = {
        "estimate": record["estimate"],
        "n_svm_fits": record["n_svm_fits"],
        "selection_time (s)": record["selection_time"],
        "default SVC fit time (s)": svc_time,
    }
    _print_table(
        f"svmtune demo --method {method} --dataset {key}",
        [("", head), ("", record["best_params"]), ("", result), ("info.", record["info"])],
    )
    _print_candidates(record.get("candidates", []))
    _print_comparison(rows)


def _demo_row(tuner, X_te, y_te, svc_time: float) -> dict[str, float]:
    """Test accuracy and cost (selection and final fit over one ``SVC()`` fit) of a tuner."""
    cost = (tuner.selection_time_ + tuner.final_fit_time_) / max(svc_time, 1e-9)
    return {"test accuracy": float(tuner.score(X_te, y_te)), "cost (SVC() fits)": cost}


def _print_comparison(rows: dict[str, dict[str, float]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="on the test part", header_style="bold")
    for col in ("", "test accuracy", "cost (SVC() fits)"):
        table.add_column(col, justify="left" if not col else "right")
    for name, r in rows.items():
        table.add_row(name, f"{r['test accuracy']:.4f}", f"{r['cost (SVC() fits)']:.1f}")
    Console().print(table)


class _Refused(click.ClickException):
    """A model file ``predict`` does not load (exit status 2, as a usage error)."""

    exit_code = 2


def _load_model(path: str, trust_pickle: bool = False):
    """The fitted ``SVMTuner`` that ``svmtune select --out`` saved at ``path``: a skops
    file with svmtune's and scikit-learn's types only, or a joblib/pickle file the user
    trusts (:func:`svmtune.persist.load_model`)."""
    from svmtune.persist import UntrustedModelError, load_model
    from svmtune.tuner import SVMTuner

    try:
        model = load_model(path, trust_pickle=trust_pickle)
    except UntrustedModelError as exc:
        raise _Refused(str(exc)) from None
    except ImportError as exc:
        raise _fail(exc) from None
    except Exception as exc:  # not a joblib/pickle file, or a truncated one
        raise _fail(
            exc, f"cannot load {path} (not a model saved by `svmtune select --out`?): "
        ) from None
    if not isinstance(model, SVMTuner) or not hasattr(model, "estimator_"):
        raise click.ClickException(
            f"{path} holds a {type(model).__name__}, not a fitted SVMTuner saved by "
            "`svmtune select --out`"
        )
    return model


def _label_column(table, target: str | None, features: list[str], source: str) -> str | None:
    """The column of ``table`` holding labels: ``--target``, else the file's label column
    (ARFF/KEEL, svmlight: ``table.attrs["label"]``) or the one column named target, class
    or label, if it is not one of the model's features (None: no labels)."""
    from svmtune.datasets.loaders import TARGET_NAMES, pick_target

    if target is not None:
        try:
            label = pick_target(table, target, source)
        except ValueError as exc:
            raise _fail(exc) from None
        if label in features:
            raise click.UsageError(
                f"--target {target!r} names {label!r}, one of the model's feature columns; "
                "give the column holding the labels (or leave --target out)"
            )
        return label
    known = table.attrs.get("label")
    if known is not None:
        return known if known in table.columns and known not in features else None
    found = [
        c for c in table.columns if str(c).strip().lower() in TARGET_NAMES and c not in features
    ]
    return found[0] if len(found) == 1 else None


def _same_labels(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    """Elementwise ``y_true == y_pred``, numbers compared as numbers (a file's 1.0 is the
    model's class 1), anything else as text."""
    import pandas as pd

    a, b = pd.to_numeric(pd.Series(y_true), errors="coerce"), pd.Series(y_pred)
    if a.notna().all() and pd.api.types.is_numeric_dtype(b):
        return a.to_numpy(dtype=float) == b.to_numpy(dtype=float)
    return np.asarray(y_true).astype(str) == np.asarray(y_pred).astype(str)


@main.command("predict")
@click.argument("model", metavar="MODEL", type=click.Path(exists=True, dir_okay=False))
@click.argument("file", metavar="FILE")
@click.option(
    "--target",
    default=None,
    help="Label column of FILE, to score the predictions (default: as `select` finds it: "
    "svmlight's labels, ARFF/KEEL's output attribute, a CSV column named target, class or "
    "label; none if that is one of the model's features).",
)
@_format_option
@click.option("--proba", is_flag=True, help="Also write each class's probability.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the predictions to this CSV file (default: standard output).",
)
@click.option(
    "--trust-pickle",
    is_flag=True,
    help="Load a joblib/pickle MODEL (loading one can run any code it contains: only for "
    "files you trust); .skops models need no such flag.",
)
def predict_cmd(model, file, target, fmt, proba, out, trust_pickle) -> None:
    """Predict the classes of FILE's rows with a MODEL saved by `svmtune select --out`.

    FILE is read as `select` reads it (or is a bundled data set's name); its columns are
    matched to the model's features by name, and other columns are ignored.  For a model
    trained on an svmlight/LIBSVM file, an svmlight FILE is read with the feature numbering
    (0- or 1-based) of the training file, and feature columns it does not reach are 0.
    Writes one CSV row per row of FILE: the predicted class and, with --proba, each class's
    probability (the model's predict_proba).  When FILE has labels, the accuracy goes to
    standard error.

    A .skops MODEL is loaded if it names only svmtune's and scikit-learn's types (anything
    else is refused); a joblib/pickle MODEL is unpickled, which can run code, so only with
    --trust-pickle (without it: exit status 2).
    """
    import pandas as pd

    from svmtune.datasets import load_dataset, load_table

    tuner = _load_model(model, trust_pickle)
    path = Path(file).expanduser()
    sparse = _sparse_rows_for(tuner, path, fmt, target)
    if sparse is not None:
        X_sparse, y_sparse = sparse
        _predict_sparse(tuner, X_sparse, y_sparse, model, proba, out)
        return
    if path.exists():
        # an svmlight file as the training file was numbered (models saved before svmtune
        # recorded it: as the file's own indices say, "auto")
        zero_based = getattr(tuner, "svmlight_zero_based_", "auto")
        try:
            table = load_table(path, fmt=fmt, zero_based=zero_based)
        except (ValueError, OSError) as exc:
            prefix = ""
            if zero_based is False and "holds feature index 0" in str(exc):
                prefix = "the model's training file numbered the features from 1: "
            raise _fail(exc, prefix) from None
        source = str(path)
    else:
        key = _bundled_name(file)
        X, y, _ = load_dataset(key)
        table, source = X.assign(target=y), key
        table.attrs["label"] = "target"
    names = getattr(tuner, "feature_names_in_", None)
    features = [str(c) for c in names] if names is not None else []
    label = _label_column(table, target, features, source)
    if names is None:  # fitted on an array: the columns in order, the label's left out
        X = table.drop(columns=[label] if label is not None else [])
        if X.shape[1] != tuner.n_features_in_:
            raise click.ClickException(
                f"{source} has {X.shape[1]} feature columns; the model expects "
                f"{tuner.n_features_in_}"
            )
        X = X.to_numpy()
    else:
        missing = [c for c in features if c not in table.columns]
        svmlight = table.attrs.get("format") == "svmlight"
        svmlight_model = all(re.fullmatch(r"f[1-9][0-9]*", c) for c in features)
        if missing and svmlight and svmlight_model:
            table = table.assign(**dict.fromkeys(missing, 0.0))  # zeros svmlight leaves out
        elif missing:
            shown = ", ".join(repr(c) for c in missing[:8]) + (" ..." if len(missing) > 8 else "")
            hint = ""
            if svmlight:
                hint = (
                    " (an svmlight/LIBSVM file has the columns f1, f2, ...; the model was "
                    "trained on named columns: give FILE as CSV with the model's column names)"
                )
            raise click.ClickException(
                f"{source} lacks {len(missing)} of the model's feature columns: {shown}{hint}"
            )
        X = table[features]
    pred, result = _write_predictions(tuner, X, proba, out)
    note = f"{len(result)} rows predicted with {model}"
    if label is not None:
        y_true = table[label].to_numpy()
        known = ~pd.isna(table[label]).to_numpy()
        if known.any():
            same = _same_labels(y_true[known], np.asarray(pred)[known])
            note += (
                f"; accuracy {float(np.mean(same)):.4f} on the {int(known.sum())} rows "
                f"labelled in {label!r}"
            )
            m = int(known.sum())
            if not any(
                _same_labels(y_true[known], np.repeat(tuner.classes_[k : k + 1], m)).any()
                for k in range(len(tuner.classes_))
            ):
                classes = ", ".join(repr(str(c)) for c in tuner.classes_[:6])
                note += f" (no label there is one of the model's classes: {classes})"
    if out is not None:
        note += f"; written to {out}"
    click.echo(note, err=True)


def _sparse_rows_for(tuner, path: Path, fmt: str | None, target: str | None):
    """``(CSR X, y)`` of an svmlight ``path`` for a model ``select`` fitted on sparse rows
    (read with its numbering, as many columns as the model has), else None."""
    from sklearn.datasets import load_svmlight_file

    from svmtune.datasets.loaders import detect_format

    if not getattr(tuner, "svmlight_sparse_", False) or target is not None or not path.is_file():
        return None
    try:
        if (fmt or detect_format(path)) not in ("svmlight", "libsvm"):
            return None
        X, y = load_svmlight_file(str(path), zero_based=True)
    except (ValueError, RuntimeError, OSError):
        return None
    if not tuner.svmlight_zero_based_:
        if X.nnz and int(X.indices.min()) == 0:
            raise click.ClickException(
                f"{path}: the model's training file numbered the features from 1, but this "
                "file holds feature index 0"
            )
        X = X[:, 1:]
    d = tuner.n_features_in_
    if X.shape[1] > d and X[:, d:].nnz:
        raise click.ClickException(
            f"{path} has features beyond the model's {d} (index {X.indices.max() + 1})"
        )
    X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d))
    return X, y


def _write_predictions(tuner, X, proba: bool, out: str | None):
    """Predict the rows ``X`` (with each class's probability if ``proba``) and write them as
    CSV to ``out`` or standard output; returns the predictions and the written table."""
    import pandas as pd

    try:
        pred = tuner.predict(X)
        result = pd.DataFrame({"prediction": pred})
        if proba:
            P = tuner.predict_proba(X)
            for k, c in enumerate(tuner.classes_):
                result[f"p({c})"] = P[:, k]
    except ValueError as exc:
        raise _fail(exc) from None
    if out is None:
        click.echo(result.to_csv(index=False), nl=False)
    else:
        try:
            result.to_csv(out, index=False)
        except OSError as exc:
            raise _fail(exc, "cannot write --out: ") from None
    return pred, result


def _predict_sparse(tuner, X, y, model: str, proba: bool, out: str | None) -> None:
    """``predict``'s output for sparse rows ``X`` with labels ``y``."""

    pred, result = _write_predictions(tuner, X, proba, out)
    same = _same_labels(y, np.asarray(pred))
    note = f"{len(result)} rows predicted with {model}; accuracy {float(np.mean(same)):.4f}"
    note += f" on the {len(y)} rows labelled in 'target' (read sparse)"
    if out is not None:
        note += f"; written to {out}"
    click.echo(note, err=True)


main.add_command(bench)
main.add_command(report)

if __name__ == "__main__":  # pragma: no cover
    main()
