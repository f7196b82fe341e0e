"""``svmtune demo``: a short selection on a bundled data set beside ``SVC()`` and a grid."""

from __future__ import annotations

import time

import click
import numpy as np
from rich.console import Console
from rich.table import Table
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from svmtune.cli._common import (
    METHOD_LIST,
    check_method,
    echo_json,
    fail,
    one_line,
    print_table,
)
from svmtune.cli._options import (
    SelectionOptions,
    fit_tuner,
    print_candidates,
    selection_options,
    selection_record,
)
from svmtune.cli._source import choose_preprocess
from svmtune.datasets import load_dataset, resolve_name
from svmtune.methods.base import YARDSTICKS
from svmtune.preprocess import transform_as_fitted

#: the demo's grid search: the quick suite's 10-fold yardstick (log2 sigma, log2 C in [-8, 8]
#: with step 2: 81 candidates)
DEMO_GRID = {"log2_sigma": (-8.0, 8.0, 2.0), "log2_C": (-8.0, 8.0, 2.0), "n_splits": 10}


@click.command("demo")
@click.option(
    "--method", default="auto", show_default=True, help=f"Selection method: {METHOD_LIST}."
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
@selection_options
def demo_cmd(method, dataset, test_size, grid, opts: SelectionOptions) -> None:
    """A short selection on a bundled data set: what was chosen, its cost and test accuracy.

    Splits the data set stratified (70/30 by default, seeded by --random-state), selects
    hyperparameters with --method on the training part, and compares the tuned SVM with
    scikit-learn's default SVC (gamma='scale', C=1) and a 10-fold grid search on the test
    part.  Cost is the time of selection and final fit over the time of one default SVC fit
    on the same data, measured in this run.  The selection is the first of this process and
    nothing is warmed up before it: the cost is what a user's first run pays (the default
    selection runs no compiled code; the data criteria's numba loops compile, or load from
    numba's cache, in their first run).
    """

    check_method(method, opts.method_params)
    random_state = opts.random_state
    try:
        key = resolve_name(dataset)
    except ValueError as exc:
        raise click.BadParameter(one_line(exc), param_hint="'--dataset'") from None
    X, y, info = load_dataset(key)
    try:
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=test_size, stratify=y, random_state=random_state
        )
    except ValueError as exc:
        raise fail(exc, f"cannot split {key!r}: ") from None
    mode = choose_preprocess(X, opts.preprocess)
    tuner = fit_tuner(X_tr, y_tr, method=method, opts=opts, preprocess=mode)
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
    if grid and method != YARDSTICKS["grid"]:  # a grid run is its own reference row
        gt = fit_tuner(
            X_tr,
            y_tr,
            method=YARDSTICKS["grid"],
            opts=opts,
            preprocess=mode,
            method_params=DEMO_GRID,
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
        **selection_record(tuner),
        "test_accuracy": rows[method]["test accuracy"],
        "default_svc": {"fit_time": svc_time, "test_accuracy": rows["SVC()"]["test accuracy"]},
        "comparison": rows,
    }
    if opts.as_json:
        echo_json(record)
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
    print_table(
        f"svmtune demo --method {method} --dataset {key}",
        [("", head), ("", record["best_params"]), ("", result), ("info.", record["info"])],
    )
    print_candidates(record.get("candidates", []))
    _print_comparison(rows)


def _demo_row(tuner, X_te, y_te, svc_time: float) -> dict[str, float]:
    """Test accuracy and cost (selection and final fit over one ``SVC()`` fit) of a tuner."""
    cost = (tuner.selection_time_ + tuner.final_fit_time_) / max(svc_time, 1e-9)
    return {"test accuracy": float(tuner.score(X_te, y_te)), "cost (SVC() fits)": cost}


def _print_comparison(rows: dict[str, dict[str, float]]) -> None:

    table = Table(title="on the test part", header_style="bold")
    for col in ("", "test accuracy", "cost (SVC() fits)"):
        table.add_column(col, justify="left" if not col else "right")
    for name, r in rows.items():
        table.add_row(name, f"{r['test accuracy']:.4f}", f"{r['cost (SVC() fits)']:.1f}")
    Console().print(table)
