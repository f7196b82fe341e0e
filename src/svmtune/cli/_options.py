"""The options ``select`` and ``demo`` share (:class:`SelectionOptions`), the tuner they
fit, and how its result is recorded and printed."""

from __future__ import annotations

import dataclasses
import functools
import sys
from dataclasses import dataclass
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from svmtune.cli._common import choice_option, fail, parse_params
from svmtune.tuner import SVMTuner


@dataclass(frozen=True)
class SelectionOptions:
    """The options ``select`` and ``demo`` share (:func:`selection_options`)."""

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
        l2_ovr = tuner.final_model_ in ("l2", "lowrank") and len(tuner.classes_) > 2
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


SELECTION_OPTIONS = [
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
    choice_option(
        "--multiclass",
        ("ovr", "ovo"),
        "More than two classes: one-vs-rest (the papers' protocol) or libsvm's one-vs-one "
        "(as SVC()).",
    ),
    choice_option(
        "--final-model",
        ("auto", "l1", "l2", "lowrank"),
        "Final SVM: the one the method selected for ('auto'), libsvm's hinge-loss SVC ('l1'), "
        "the squared-hinge L2-SVM ('l2') or the L2-SVM on a Nystroem kernel ('lowrank').",
    ),
    choice_option(
        "--probability",
        ("tanh", "platt"),
        "Class probabilities of the model: RBSVM's tanh of the decision value, or Platt "
        "scaling (as SVC(probability=True); libsvm final models only).",
    ),
    click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table."),
]


def selection_options(f):
    """Add the shared options to a command; it receives them as one ``opts`` argument."""
    names = [fld.name for fld in dataclasses.fields(SelectionOptions)]

    @functools.wraps(f)
    def command(*args, **kwargs):
        opts = SelectionOptions(**{k: kwargs.pop(k) for k in names})
        return f(*args, opts=opts, **kwargs)

    for option in reversed(SELECTION_OPTIONS):
        command = option(command)
    return command


def fit_tuner(
    X,
    y,
    *,
    method,
    opts: SelectionOptions,
    preprocess,
    sample_weight=None,
    class_weight=None,
    groups=None,
    method_params=None,
    verbose: int = 0,
):
    """Fit an ``SVMTuner`` with the shared options ``opts`` (``preprocess`` resolved);
    ``method_params`` replaces the options' ``--param``s; ``verbose`` is the tuner's."""

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
        raise fail(exc) from None
    except Exception as exc:  # a failing method: one line here, traceback with --debug
        raise fail(
            exc, f"selection with method {method!r} failed: {type(exc).__name__}: "
        ) from None


def selection_record(tuner) -> dict[str, Any]:
    sel = getattr(tuner, "selection_", None)
    return {
        "best_params": dict(tuner.best_params_),
        "estimate": tuner.estimate_,
        "criterion": tuner.criterion_,
        "selection_time": tuner.selection_time_,
        "n_svm_fits": tuner.n_svm_fits_,
        "final_model": getattr(tuner, "final_model_", None),
        "info": dict(sel.info) if sel is not None else {},
        **({"candidates": rows} if (rows := candidate_rows(tuner)) else {}),
    }


def candidate_rows(tuner) -> list[dict[str, Any]]:
    """The candidates a referee-based selection (``method="auto"``) scored, one per entry of
    ``history_``; empty for the other methods."""
    return [dict(h) for h in tuner.history_ if "origin" in h]


def print_candidates(rows: list[dict[str, Any]]) -> None:
    """The referee's table: every candidate with its origin, hyperparameters, closed-form
    leave-one-out error of each final model, and cost."""

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


def stderr_is_terminal() -> bool:
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def verbosity(quiet: bool, verbose: bool) -> int:
    """``SVMTuner(verbose=...)`` of ``select``: lines with --verbose, none with --quiet,
    else the progress bar when standard error is a terminal."""
    if verbose and quiet:
        raise click.UsageError("--quiet and --verbose exclude each other")
    if verbose:
        return 2
    return 0 if quiet else int(stderr_is_terminal())
