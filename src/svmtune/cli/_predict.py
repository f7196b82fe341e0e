"""``svmtune predict``: apply a model saved by ``select --out`` to new rows."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import click
import numpy as np
import pandas as pd
import scipy.sparse as sp

from svmtune.cli._common import fail, format_option
from svmtune.cli._source import bundled_name
from svmtune.datasets import load_dataset, load_table
from svmtune.datasets._svmlight import read_svmlight_sparse
from svmtune.datasets.loaders import TARGET_NAMES, detect_format, pick_target
from svmtune.exceptions import UnseenCategoryWarning
from svmtune.persist import DamagedModelError, UntrustedModelError, load_model
from svmtune.tuner import SVMTuner


class _Refused(click.ClickException):
    """A model file ``predict`` does not load (exit status 2, as a usage error)."""

    exit_code = 2


def _load_model(path: str, trust_pickle: bool = False):
    """The fitted ``SVMTuner`` that ``svmtune select --out`` saved at ``path``: a skops
    file holding only the types of :data:`svmtune.persist.MODEL_TYPES`, or a joblib/pickle
    file the user trusts (:func:`svmtune.persist.load_model`); a damaged or truncated file
    is named as such."""

    try:
        model = load_model(path, trust_pickle=trust_pickle)
    except UntrustedModelError as exc:
        raise _Refused(str(exc)) from None
    except (DamagedModelError, ImportError) as exc:
        raise fail(exc) from None
    except Exception as exc:  # a pickle the user trusts that does not unpickle here
        raise fail(
            exc, f"cannot load {path} (not a model saved by `svmtune select --out`?): "
        ) from None
    if not isinstance(model, SVMTuner) or not hasattr(model, "estimator_"):
        raise click.ClickException(
            f"{path} holds a {type(model).__name__}, not a fitted SVMTuner saved by "
            "`svmtune select --out`"
        )
    return model


def _label_column(
    table, target: str | None, features: list[str], source: str, recorded: str | None = None
) -> str | None:
    """The column of ``table`` holding labels: ``--target``, else the model's own label
    column ``recorded`` (``select``'s, :attr:`target_column_`) where ``table`` has it, else
    the file's label column (ARFF/KEEL, svmlight: ``table.attrs["label"]``) or the one
    column named target, class or label, if it is not one of the model's features (None:
    no labels)."""

    if target is not None:
        try:
            label = pick_target(table, target, source)
        except ValueError as exc:
            raise fail(exc) from None
        if label in features:
            raise click.UsageError(
                f"--target {target!r} names {label!r}, one of the model's feature columns; "
                "give the column holding the labels (or leave --target out)"
            )
        return label
    if recorded is not None and recorded in table.columns and recorded not in features:
        return recorded
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

    a, b = pd.to_numeric(pd.Series(y_true), errors="coerce"), pd.Series(y_pred)
    if a.notna().all() and pd.api.types.is_numeric_dtype(b):
        return a.to_numpy(dtype=float) == b.to_numpy(dtype=float)
    return np.asarray(y_true).astype(str) == np.asarray(y_pred).astype(str)


@click.command("predict")
@click.argument("model", metavar="MODEL", type=click.Path(exists=True, dir_okay=False))
@click.argument("file", metavar="FILE")
@click.option(
    "--target",
    default=None,
    help="Label column of FILE, to score the predictions (default: the model's label "
    "column, the one `select` read, when FILE has it; else as `select` finds it: svmlight's "
    "labels, ARFF/KEEL's output attribute, a CSV column named target, class or label; none "
    "if that is one of the model's features).",
)
@format_option
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
    probability (the model's predict_proba).  When FILE has labels (the column the model
    was selected with, `select --target`, or as --target says), the accuracy goes to
    standard error; so does a warning naming the values of a categorical column that the
    training data did not hold (they are encoded as none of the known categories).

    A .skops MODEL is loaded if it holds only the types a model svmtune saves holds, within
    bounded sizes (anything else is refused, exit status 2); a joblib/pickle MODEL is
    unpickled, which can run code, so only with --trust-pickle (without it: exit status 2).
    A damaged or truncated MODEL is named as such.
    """

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
            raise fail(exc, _numbering_prefix(zero_based, exc)) from None
        source = str(path)
    else:
        key = bundled_name(file)
        X, y, _ = load_dataset(key)
        table, source = X.assign(target=y), key
        table.attrs["label"] = "target"
    names = getattr(tuner, "feature_names_in_", None)
    features = [str(c) for c in names] if names is not None else []
    recorded = getattr(tuner, "target_column_", None)  # models saved before: none
    label = _label_column(table, target, features, source, recorded)
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


def _numbering_prefix(zero_based, exc: BaseException) -> str:
    """What to say before a reader's error when the model's training file counted its
    features from 1 and this one holds index 0."""
    if zero_based is False and "holds feature index 0" in str(exc):
        return "the model's training file numbered the features from 1: "
    return ""


def _sparse_rows_for(tuner, path: Path, fmt: str | None, target: str | None):
    """``(CSR X, y)`` of an svmlight ``path`` for a model ``select`` fitted on sparse rows
    (read with its numbering, as many columns as the model has), else None."""

    if not getattr(tuner, "svmlight_sparse_", False) or target is not None or not path.is_file():
        return None
    try:
        if (fmt or detect_format(path)) not in ("svmlight", "libsvm"):
            return None
        # with the training file's numbering: column 0 is its first feature
        X, y, _ = read_svmlight_sparse(path, zero_based=tuner.svmlight_zero_based_)
    except (ValueError, OSError) as exc:  # its bounds, its messages
        raise fail(exc, _numbering_prefix(tuner.svmlight_zero_based_, exc)) from None
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

    try:
        pred = tuner.predict(X)
        result = pd.DataFrame({"prediction": pred})
        if proba:
            with warnings.catch_warnings():  # predict has named the unseen categories
                warnings.simplefilter("ignore", UnseenCategoryWarning)
                P = tuner.predict_proba(X)
            for k, c in enumerate(tuner.classes_):
                result[f"p({c})"] = P[:, k]
    except ValueError as exc:
        raise fail(exc) from None
    if out is None:
        click.echo(result.to_csv(index=False), nl=False)
    else:
        try:
            result.to_csv(out, index=False)
        except OSError as exc:
            raise fail(exc, "cannot write --out: ") from None
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
