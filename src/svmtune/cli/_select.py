"""``svmtune select``: select hyperparameters for a file or a bundled data set."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd
import scipy.sparse as sp

from svmtune.cli._common import (
    METHOD_LIST,
    check_method,
    echo_json,
    fail,
    format_option,
    print_table,
    to_jsonable,
)
from svmtune.cli._options import (
    SelectionOptions,
    fit_tuner,
    print_candidates,
    selection_options,
    selection_record,
    verbosity,
)
from svmtune.cli._source import (
    choose_preprocess,
    describe_data,
    load_source,
    parse_class_weight,
    pop_column,
    pop_weights,
    without_columns,
)
from svmtune.datasets._svmlight import read_svmlight_sparse
from svmtune.datasets.loaders import detect_format
from svmtune.methods import get_selector
from svmtune.methods.base import sparse_fit_refusal
from svmtune.persist import save_model
from svmtune.plotting import plot_landscape


@click.command("select")
@click.argument("file", metavar="FILE")
@click.option("--target", default=None, help="Label column (name or position, e.g. -1).")
@format_option
@click.option(
    "--method", default="auto", show_default=True, help=f"Selection method: {METHOD_LIST}."
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
@selection_options
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Save the fitted SVMTuner: a FILE.skops with skops (safe to load), any other name "
    "with joblib (a pickle: loading it can run code).",
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
    opts: SelectionOptions,
) -> None:
    """Select SVM hyperparameters for FILE and fit the final model on all of it.

    FILE is a CSV/TSV, svmlight/LIBSVM or ARFF/KEEL file, or the name of a bundled data set
    (e.g. `svmtune select pima --method grid`).
    """
    check_method(method, opts.method_params)
    level = verbosity(quiet, verbose)
    _check_out(out)
    _check_out(results_csv, "--results")
    if out is not None and Path(out).suffix.lower() == ".skops":
        _check_skops()
    plot_file = _plot_path(plot_file)
    _check_out(plot_file, "--plot")
    _check_distinct(("--out", out), ("--results", results_csv), ("--plot", plot_file))
    sparse = None
    if not (drop_columns or weight_column or group_column or target):
        sparse = _load_sparse_svmlight(file, fmt, method, opts)
    X, y, source = sparse or load_source(file, target, fmt, group_column)
    if drop_columns:
        X = without_columns(X, drop_columns)
        source["dropped"] = list(drop_columns)
    weights = None
    if weight_column is not None:
        X, weights = pop_weights(X, weight_column)
        source["sample_weight"] = weight_column
    groups = None
    if group_column is not None:
        X, groups = pop_column(X, group_column, "--groups")
        groups = groups.to_numpy()
        source["groups"] = group_column
    class_weights = parse_class_weight(class_weight, y)
    if sp.issparse(X):  # scaling without centring keeps it sparse (or none)
        mode = opts.preprocess or "standard"
    else:
        mode = choose_preprocess(X, opts.preprocess)
    tuner = fit_tuner(
        X,
        y,
        method=method,
        opts=opts,
        preprocess=mode,
        sample_weight=weights,
        class_weight=class_weights,
        groups=groups,
        verbose=level,
    )
    record = {
        "data": {**source, **describe_data(X, y)},
        "method": method,
        "class_weight": class_weight,
        **opts.record(mode, tuner),
        **selection_record(tuner),
    }
    if opts.as_json:
        record["cv_results"] = tuner.cv_results_
    save_error = None
    if out is not None:
        if "target" in source:  # predict scores rows whose file has this column
            tuner.target_column_ = source["target"]
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
            plot_landscape(tuner, path=plot_file)
            record["plot_to"] = str(plot_file)
        except (ValueError, OSError) as exc:
            save_error = save_error or ("--plot", exc)
    _print_selection(record, opts, tuner)
    if save_error is not None:
        option, exc = save_error
        raise fail(exc, f"cannot write {option} (the result is above): ") from None


def _load_sparse_svmlight(file: str, fmt: str | None, method: str, opts: SelectionOptions):
    """``(CSR X, y, description)`` of an svmlight/LIBSVM ``file`` when the selection can
    use it sparse (a selector that takes sparse X: a cross-validated search, which fits
    libsvm on sparse rows, or ``auto`` / ``rbsvm_lowrank``, whose Nystroem factor comes from
    sparse dot products; no imputing/one-hot preprocessing, no L2-SVM final model), else None
    (the file is then read densely, as before).  Feature
    indices start at 1 unless index 0 occurs, as the dense reader decides."""

    path = Path(file).expanduser()
    if not path.is_file() or opts.preprocess == "auto":
        return None
    try:
        kind = fmt or detect_format(path)
        selector = get_selector(method, opts.method_params or None)
    except ValueError:
        return None  # the dense path reports it
    if kind not in ("svmlight", "libsvm") or sparse_fit_refusal(method, selector, opts.final_model):
        return None
    # a statistic of X's entries (default's gamma='scale') would change on the uncentred
    # sparse matrix: it keeps the dense reading; the CV searches select the same on either
    if selector.reads_centring:
        return None
    try:  # its columns bounded as the dense reader's are not: a clear error, not None
        X, y, zero_based = read_svmlight_sparse(path)
    except (ValueError, OSError) as exc:
        raise fail(exc) from None
    info = {"file": str(path), "index_base": 0 if zero_based else 1, "sparse": True}
    info["nnz"] = int(X.nnz)
    return X, y, info


def results_frame(cv_results: dict[str, Any]):
    """``cv_results_`` as a DataFrame for a CSV file: ``params`` as JSON text, masked
    ``param_<name>`` entries (a parameter a row does not have) empty."""

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
            "saving a .skops file needs skops, a dependency of svmtune: pip install skops, or "
            "give another file name to save with joblib",
            param_hint="'--out'",
        ) from None


def _plot_path(plot_file: str | None) -> str | None:
    """The file ``--plot`` writes, checked before the selection starts: matplotlib must be
    installed (a usage error saying how to get it, as for ``--out FILE.skops``), and the
    file's extension a format matplotlib writes; a name without an extension gets
    matplotlib's default format (``savefig.format``, png), as ``savefig`` would write it."""
    if plot_file is None:
        return None
    try:
        import matplotlib
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise click.BadParameter(
            "drawing the plot needs matplotlib: pip install 'svmtune[plot]' (or matplotlib), "
            "or leave --plot out",
            param_hint="'--plot'",
        ) from None
    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = Path(plot_file).suffix.lower().lstrip(".")
    if not suffix:
        return f"{plot_file}.{matplotlib.rcParams['savefig.format']}"
    if suffix not in formats:
        raise click.BadParameter(
            f"matplotlib writes no .{suffix} files; end the name with one of "
            f"{', '.join('.' + f for f in sorted(formats))}",
            param_hint="'--plot'",
        )
    return plot_file


def _check_distinct(*outputs: tuple[str, str | None]) -> None:
    """A usage error when two of the output options name the same file (one would
    overwrite the other), before the selection starts."""
    seen: dict[Path, str] = {}
    for option, path in outputs:
        if path is None:
            continue
        key = Path(path).expanduser().resolve()
        if key in seen:
            raise click.BadParameter(
                f"{seen[key]} and {option} both name {path}; give each output its own file",
                param_hint=f"'{option}'",
            )
        seen[key] = option


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


def _print_selection(record: dict[str, Any], opts: SelectionOptions, tuner) -> None:
    """``select``'s result: the JSON ``record`` or a table."""
    method, class_weight = record["method"], record["class_weight"]
    if opts.as_json:
        echo_json(record)
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
    print_table(
        f"svmtune select --method {method}",
        [("", head), ("", record["best_params"]), ("", result), ("info.", record["info"])],
    )
    print_candidates(record.get("candidates", []))
