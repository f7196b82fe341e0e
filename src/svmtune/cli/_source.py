"""Where a command's data come from: a file or a bundled data set's name, the columns
``--drop``, ``--sample-weight`` and ``--groups`` take off the features, ``--class-weight``
and the preprocessing choice.  ``svmtune bench --data`` reads its sources with these too."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd

from svmtune._validation import check_feature_values, check_numeric_features
from svmtune.cli._common import fail
from svmtune.datasets import list_datasets, load_dataset, load_table, resolve_name
from svmtune.datasets.loaders import label_column, split_table
from svmtune.preprocess import needs_auto


def bundled_name(source: str) -> str:
    """The bundled data set ``source`` names (it is not an existing file)."""

    try:
        return resolve_name(source)
    except ValueError:
        close = difflib.get_close_matches(source.strip().lower(), list_datasets(), n=3)
        hint = f" Bundled data sets with similar names: {', '.join(close)}." if close else ""
        raise click.ClickException(
            f"file not found: {source} (nor is it a bundled data set; `svmtune datasets` lists "
            f"them).{hint}"
        ) from None


def load_source(source: str, target: str | None, fmt: str | None, groups: str | None = None):
    """``source`` is a path or a bundled data-set name -> (X DataFrame, y, description); a
    file's description names its label column (``"target"``), an svmlight/LIBSVM file's
    says where its feature indices start (``"index_base"``: 0 or 1).  A bundled data set's
    ``groups`` side array named ``groups`` becomes a column of ``X``
    (:meth:`~svmtune.datasets.DatasetInfo.add_group_column`)."""

    path = Path(source).expanduser()
    if path.exists():
        try:
            table = load_table(path, fmt=fmt)
            X, y = split_table(table, target, str(path))
        except (ValueError, OSError) as exc:
            raise fail(exc) from None
        # the label column's name: `predict` finds the labels of new rows by it
        info = {"file": str(path), "target": str(label_column(table, target, str(path)))}
        if "zero_based" in table.attrs:
            info["index_base"] = 0 if table.attrs["zero_based"] else 1
        return X, y, info
    key = bundled_name(source)
    if target not in (None, "target"):
        raise click.UsageError(
            f"bundled data set {key!r} has its labels in 'target'; --target does not apply"
        )
    X, y, info = load_dataset(key)
    if groups is not None:
        X = info.add_group_column(X, groups)
    return X, y, {"dataset": key, "version": info.version}


def without_columns(X, columns: tuple[str, ...]):
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


def pop_column(X, column: str, option: str):
    """Split the column ``option`` names (``--sample-weight``, ``--groups``) off the
    features: the features without it, and the column."""
    if column not in X.columns:
        raise click.BadParameter(
            f"no column {column!r} in the data (columns: {', '.join(map(str, X.columns[:12]))})",
            param_hint=f"'{option}'",
        )
    return X.drop(columns=[column]), X[column]


def pop_weights(X, column: str):
    """Split the ``--sample-weight`` column off the features."""

    X, col = pop_column(X, column, "--sample-weight")
    w = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    if np.isnan(w).any() and not col.isna().any():
        raise click.ClickException(f"sample-weight column {column!r} is not numeric")
    return X, w


def parse_class_weight(value: str | None, y) -> str | dict | None:
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


def choose_preprocess(X, mode: str | None) -> str:

    if mode is None:
        mode = "auto" if needs_auto(X) else "standard"
    try:
        if mode != "auto":
            check_numeric_features(X)
        check_feature_values(X, allow_nan=mode == "auto")
    except ValueError as exc:
        raise fail(exc) from None
    return mode


def describe_data(X, y) -> dict[str, Any]:
    labels, counts = np.unique(np.asarray(y, dtype=object).astype(str), return_counts=True)
    return {
        "n": int(X.shape[0]),
        "d": int(X.shape[1]),
        "classes": {str(k): int(v) for k, v in zip(labels, counts)},
    }
