"""What a benchmark suite is: data sets x methods x protocol, plus the papers' numbers.

Each paper's suite lives in ``svmtune/bench/suites/<name>.py`` and exposes a module-level
``SUITE`` (a :class:`Suite`); :data:`SUITES` maps suite names to those modules.  The runner
(:mod:`svmtune.bench.runner`) turns a suite into cells (task x split x method), runs them,
and appends one result row per cell to the result store.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

__all__ = ["Task", "MethodSpec", "Protocol", "Suite", "SUITES", "get_suite", "available_suites"]


@dataclass(frozen=True)
class Task:
    """One classification task built from a bundled data set.

    Attributes
    ----------
    name : str
        Task name as the paper prints it (e.g. ``"balance-1"``, ``"adult"``).
    dataset : str
        Registry name (``svmtune.datasets.load_dataset``) of the (training) data.
    positive : label or None
        For one-vs-rest binary tasks: the original label that becomes the positive class,
        all others negative.  None keeps the labels as they are.
    subsample : int or None
        Draw this many rows (stratified, with the suite's seed) before anything else.
    test_dataset : str or None
        Registry name of a fixed test file (``Protocol(kind="train_test")``).
    drop_columns : tuple of str
        Columns removed before use (e.g. identifiers).
    options : dict
        Anything else a suite needs (e.g. ``{"score_column": "duration"}``).
    tuner_params : dict
        ``SVMTuner`` arguments for every method on this task (e.g. ``{"multiclass": "ovo"}``);
        a method's own ``MethodSpec.tuner_params`` take precedence.  Part of the cell key
        when not empty.
    """

    name: str
    dataset: str
    positive: Any = None
    subsample: int | None = None
    test_dataset: str | None = None
    drop_columns: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    tuner_params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MethodSpec:
    """A method as a column of the suite's tables.

    ``label`` is the paper's column name (e.g. ``"ESDR-CV"``); ``method`` and ``params`` are
    passed to ``SVMTuner(method=..., method_params=...)``; ``tuner_params`` to SVMTuner itself
    (e.g. ``{"final_model": "l1"}``).
    """

    label: str
    method: str
    params: dict[str, Any] = field(default_factory=dict)
    tuner_params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Protocol:
    """How train/test splits are made.

    kind : {"kfold", "split", "train_test"}
        Stratified K-fold CV (``n_splits`` x ``n_repeats``), repeated stratified random
        splits (``n_repeats`` of ``train_size`` / ``test_size``), or the task's fixed files.
    """

    kind: str = "kfold"
    n_splits: int = 10
    n_repeats: int = 1
    train_size: int | float | None = None
    test_size: int | float | None = None

    KINDS: ClassVar[tuple[str, ...]] = ("kfold", "split", "train_test")

    def __post_init__(self) -> None:
        if self.kind not in self.KINDS:
            raise ValueError(f"Protocol.kind must be one of {self.KINDS}, got {self.kind!r}")
        if self.kind == "kfold" and int(self.n_splits) < 2:
            raise ValueError(f"Protocol.n_splits must be >= 2 for K-fold CV, got {self.n_splits}")
        if int(self.n_repeats) < 1:
            raise ValueError(f"Protocol.n_repeats must be >= 1, got {self.n_repeats}")
        if self.kind == "split" and self.train_size is None and self.test_size is None:
            raise ValueError("Protocol(kind='split') needs train_size and/or test_size")

    @property
    def n_splits_per_task(self) -> int:
        """Number of (train, test) splits of every task: one result row per split and method."""
        if self.kind == "kfold":
            return int(self.n_splits) * int(self.n_repeats)
        if self.kind == "split":
            return int(self.n_repeats)
        return 1


@dataclass
class Suite:
    """A benchmark suite.

    Attributes
    ----------
    name, description : str
    tasks : list of Task
    methods : list of MethodSpec
        Should include the two yardsticks, 10-fold grid search and the default SVC.
    protocol : Protocol
    seed : int
        Master seed: subsamples, splits and every method's ``random_state`` derive from it.
    published : list of dict
        The papers' numbers, one dict per value: ``{"table": "II", "task": ..., "method":
        <MethodSpec label>, "metric": "accuracy" | "accuracy_std" | "time" | ..., "value":
        float}``.  Reports print them beside ours.
    figures : list of callables ``(results: pandas.DataFrame, outdir: Path) -> list[Path]``
        Plots and extra tables drawn from the suite's result rows.  A callable that also
        takes a keyword ``experiment_files`` gets the files of the suite's stored experiments
        (``{experiment name: [paths]}``), to draw what an experiment computed.
    experiments : list of callables ``(outdir: Path, seed: int) -> list[Path]``
        Stand-alone studies of the suite that are not (task, split, method) cells (e.g.
        Gaussian-data studies, scaling curves); they write their own result files into
        ``outdir`` (``<out>/<suite>/experiments/<callable name>/``).
    yardsticks : dict
        Labels of the reference methods every other method is compared with, keys
        ``"grid"`` and ``"default"``.  Empty (default): the MethodSpec with
        ``method="grid"`` and 10 folds, and the one with ``method="default"``.

    Published numbers are matched to ours by task name, method label and metric; metrics the
    report knows: ``accuracy``, ``accuracy_std``, ``f1``, ``error`` (in percent, as printed),
    ``log_loss``, ``brier``, ``entropy``, ``time`` (selection seconds), ``n_svm_fits``.
    """

    name: str
    description: str
    tasks: list[Task]
    methods: list[MethodSpec]
    protocol: Protocol = field(default_factory=Protocol)
    seed: int = 0
    published: list[dict[str, Any]] = field(default_factory=list)
    figures: list[Callable[..., list[Path]]] = field(default_factory=list)
    experiments: list[Callable[..., list[Path]]] = field(default_factory=list)
    yardsticks: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for what, names in (
            ("task names", [t.name for t in self.tasks]),
            ("method labels", [m.label for m in self.methods]),
        ):
            dup = sorted({x for x in names if names.count(x) > 1})
            if dup:
                raise ValueError(f"suite {self.name!r}: duplicate {what}: {dup}")
        if self.protocol.kind == "train_test":
            missing = [t.name for t in self.tasks if t.test_dataset is None]
            if missing:
                raise ValueError(
                    f"suite {self.name!r} uses fixed train/test files but tasks {missing} "
                    "have no test_dataset"
                )
        labels = {m.label for m in self.methods}
        for role, label in self.yardsticks.items():
            if role not in ("grid", "default") or label not in labels:
                raise ValueError(
                    f"suite {self.name!r}: yardsticks must map 'grid'/'default' to method "
                    f"labels of the suite, got {role!r}: {label!r}"
                )
        for i, entry in enumerate(self.published):
            need = {"task", "method", "metric", "value"} - set(entry)
            if need:
                raise ValueError(
                    f"suite {self.name!r}: published[{i}] lacks {sorted(need)}; each entry "
                    "needs task, method (a MethodSpec label), metric and value"
                )

    def yardstick_labels(self) -> dict[str, str]:
        """``{"grid": label, "default": label}`` of the reference methods found in the suite."""
        out = dict(self.yardsticks)
        for m in self.methods:
            if "grid" not in out and m.method == "grid" and m.params.get("n_splits", 10) == 10:
                out["grid"] = m.label
            if "default" not in out and m.method == "default":
                out["default"] = m.label
        return out


#: suite name -> module defining ``SUITE``
SUITES: dict[str, str] = {
    "quick": "svmtune.bench.suites.quick",
    "rbsvm-paper": "svmtune.bench.suites.rbsvm_paper",
    "esdr-paper": "svmtune.bench.suites.esdr_paper",
    "ld-paper": "svmtune.bench.suites.ld_paper",
    "span-paper": "svmtune.bench.suites.span_paper",
    "ss-paper": "svmtune.bench.suites.ss_paper",
}


def available_suites() -> list[str]:
    return sorted(SUITES)


def get_suite(name: str) -> Suite:
    """Load the suite registered as ``name``."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; choose one of: {', '.join(available_suites())}")
    return importlib.import_module(SUITES[name]).SUITE
