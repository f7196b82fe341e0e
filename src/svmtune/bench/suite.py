"""What a benchmark suite is: data sets x methods x protocol, plus the papers' numbers.

A suite is a Python file exposing a module-level ``SUITE`` (a :class:`Suite`).  The package
ships one, ``quick`` (:data:`SUITES`); the papers' suites live in the repository, outside the
installed package, in a ``benchmarks/suites/`` directory (one file per suite, helper modules
starting with ``_`` beside them).  :func:`get_suite` loads a suite by name or by file path
(:func:`suite_dirs` says where names are looked up).  The runner
(:mod:`svmtune.bench.runner`) turns a suite into cells (task x split x method), runs them,
and appends one result row per cell to the result store.  :func:`on_data` runs a suite's
methods and protocol on other data (the user's files or other bundled sets) instead of its
own tasks, with :class:`DataLoader` reading them.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import os
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from svmtune.methods.base import YARDSTICKS

__all__ = [
    "Task",
    "MethodSpec",
    "Protocol",
    "Suite",
    "SUITES",
    "SUITES_ENV",
    "get_suite",
    "available_suites",
    "suite_dirs",
    "suite_module",
    "DataLoader",
    "on_data",
    "with_tasks",
    "data_task",
    "DATA_SUFFIX",
]


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
    classes : tuple of labels or None
        Keep only the rows of these original labels (e.g. three of penbased's ten digits),
        before ``positive`` and ``subsample`` apply.  None keeps every row.
    subsample : int or None
        Draw this many of the task's rows (stratified, with the suite's seed) before the
        protocol splits them.
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
    groups : str or None
        Column holding each row's group (a subject, a recording): it is not a feature; the
        protocol's splits keep every group on one side, and the methods that cross-validate
        or hold out whole groups in closed form (``Selector.holdout()`` ``"folds"`` or
        ``"groups"``) get the training part's groups.
    """

    name: str
    dataset: str
    positive: Any = None
    classes: tuple | None = None
    subsample: int | None = None
    test_dataset: str | None = None
    drop_columns: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    tuner_params: dict[str, Any] = field(default_factory=dict)
    groups: str | None = None


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
        for m in self.methods:  # the registry's yardstick methods (the grid with 10 folds)
            grid = m.method == YARDSTICKS["grid"] and m.params.get("n_splits", 10) == 10
            if "grid" not in out and grid:
                out["grid"] = m.label
            if "default" not in out and m.method == YARDSTICKS["default"]:
                out["default"] = m.label
        return out


#: suite name -> module defining ``SUITE``: the suites shipped with the package
SUITES: dict[str, str] = {
    "quick": "svmtune.bench.suites.quick",
}

#: environment variable naming more suite directories (``os.pathsep``-separated)
SUITES_ENV = "SVMTUNE_SUITES"
#: where a repository keeps its suites, relative to the repository's root
SUITES_SUBDIR = Path("benchmarks") / "suites"
_PACKAGE_PREFIX = "svmtune_suites_"


def _candidate_dirs(search_from: str | Path | None = None) -> list[Path]:
    """Directories where suite names are looked up, in order, whether they exist or not:
    each entry of ``$SVMTUNE_SUITES``, then ``benchmarks/suites`` in the current directory
    and each of its parents, then the same from ``search_from`` (e.g. a results directory)."""
    out: list[Path] = [
        Path(p).expanduser() for p in os.environ.get(SUITES_ENV, "").split(os.pathsep) if p
    ]
    starts = [Path.cwd()] + ([Path(search_from)] if search_from is not None else [])
    for start in starts:
        start = start.expanduser().resolve()
        out += [base / SUITES_SUBDIR for base in (start, *start.parents)]
    seen: set[Path] = set()
    uniq = []
    for d in out:
        key = d.resolve()
        if key not in seen:
            seen.add(key)
            uniq.append(d)
    return uniq


def suite_dirs(search_from: str | Path | None = None) -> list[Path]:
    """The existing suite directories, in lookup order.

    Parameters
    ----------
    search_from : path, optional
        Also look in ``benchmarks/suites`` under this directory and its parents (after the
        current directory's).

    Returns
    -------
    list of Path
        Each entry of the environment variable ``SVMTUNE_SUITES`` (``os.pathsep``-separated)
        that is a directory, then every ``benchmarks/suites`` directory found in the current
        directory or one of its parents (then from ``search_from``).
    """
    return [d for d in _candidate_dirs(search_from) if d.is_dir()]


def _suite_package(directory: Path) -> str:
    """Name of the package that holds the modules of a suite directory (registered on first
    use), so that suite files import their helper modules relatively
    (``from ._rbsvm_experiments import ...``) without the directory on ``sys.path``."""
    directory = directory.resolve()
    name = _PACKAGE_PREFIX + hashlib.sha1(str(directory).encode()).hexdigest()[:10]
    if name not in sys.modules:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(directory)]
        pkg = types.ModuleType(name, f"Suites of {directory}")
        pkg.__spec__ = spec
        pkg.__path__ = [str(directory)]
        pkg.__package__ = name
        sys.modules[name] = pkg
    return name


def _load_file(path: Path) -> types.ModuleType:
    """Import the suite file ``path`` as a module of its directory's package."""
    path = Path(path).expanduser().resolve()
    if not path.is_file() or path.suffix != ".py":
        raise ValueError(f"{path}: not a Python file")
    return importlib.import_module(f"{_suite_package(path.parent)}.{path.stem}")


def _looks_like_path(name: str) -> bool:
    return name.endswith(".py") or "/" in name or os.sep in name


def _not_found(name: str, search_from: str | Path | None) -> ValueError:
    searched = "\n  ".join(str(d) for d in _candidate_dirs(search_from))
    return ValueError(
        f"unknown suite {name!r}; available: {', '.join(available_suites(search_from))}. "
        f"Looked for {name.replace('-', '_')}.py in:\n  {searched}\nRun from the repository "
        f"(or below it), give the suite file's path, or name suite directories in "
        f"${SUITES_ENV} ({os.pathsep!r}-separated)."
    )


def suite_module(name: str, *, search_from: str | Path | None = None) -> types.ModuleType:
    """The module of a suite file or of a helper module beside it.

    Parameters
    ----------
    name : str
        A path to a ``.py`` file, or a module name in a suite directory (:func:`suite_dirs`):
        a suite's name (``"rbsvm-paper"``: ``-`` stands for ``_``) or a helper's
        (``"_rbsvm_experiments"``).
    search_from : path, optional
        As in :func:`suite_dirs`.

    Raises
    ------
    ValueError
        No such file; the message lists the directories searched.
    """
    if _looks_like_path(name):
        return _load_file(Path(name))
    stem = name.replace("-", "_")
    for d in suite_dirs(search_from):
        if (d / f"{stem}.py").is_file():
            return _load_file(d / f"{stem}.py")
    raise _not_found(name, search_from)


def available_suites(search_from: str | Path | None = None) -> list[str]:
    """Names of the package's suites and of the suite files in :func:`suite_dirs` (files
    whose name starts with ``_`` are helpers, not suites)."""
    names = set(SUITES)
    for d in suite_dirs(search_from):
        names |= {p.stem.replace("_", "-") for p in d.glob("*.py") if not p.name.startswith("_")}
    return sorted(names)


def get_suite(name: str, *, search_from: str | Path | None = None) -> Suite:
    """Load a suite by name or path.

    Parameters
    ----------
    name : str
        ``"quick"`` (shipped with the package), the name of a suite file in a suite directory
        (``"rbsvm-paper"`` for ``rbsvm_paper.py``; see :func:`suite_dirs`), or the path of a
        suite file (``benchmarks/suites/rbsvm_paper.py``).
    search_from : path, optional
        As in :func:`suite_dirs` (the report passes its results directory).

    Returns
    -------
    Suite
        The module's ``SUITE`` (the same object on every call: modules are imported once).

    Raises
    ------
    ValueError
        Unknown name (listing the directories searched) or a file without ``SUITE``.
    """
    if name in SUITES:
        return importlib.import_module(SUITES[name]).SUITE
    module = suite_module(name, search_from=search_from)
    suite = getattr(module, "SUITE", None)
    if not isinstance(suite, Suite):
        raise ValueError(f"{module.__file__} defines no SUITE (a svmtune.bench.suite.Suite)")
    return suite


# ----------------------------------------------------------------------------- other data
@dataclass(frozen=True)
class DataLoader:
    """Loader of the tasks :func:`on_data` makes: ``source -> (X, y, info)``.

    An existing path is read with :func:`svmtune.datasets.load_file` (``target`` and ``fmt``
    as there) and its ``info`` records the file and the SHA-256 of its bytes as ``version``;
    anything else is the name of a bundled data set (:func:`svmtune.datasets.load_dataset`).
    Picklable, so parallel runs can use it.
    """

    target: str | int | None = None
    fmt: str | None = None

    def __call__(self, source: str) -> tuple[Any, Any, Any]:
        from svmtune.datasets import load_dataset, load_file
        from svmtune.datasets.registry import file_sha256

        path = Path(source)
        if path.is_file():
            X, y = load_file(path, target=self.target, fmt=self.fmt)
            return X, y, {"file": str(path), "version": file_sha256(path, cache=False)}
        return load_dataset(source)


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".bz2", ".xz"):
        name = name.removesuffix(suffix)
    return Path(name).stem or name


def on_data(
    suite: Suite,
    sources: Sequence[str | Path],
    *,
    target: str | int | None = None,
    fmt: str | None = None,
    drop: Sequence[str] = (),
    groups: str | None = None,
) -> Suite:
    """``suite``'s methods, protocol and seed on other data, one task per source.

    Parameters
    ----------
    suite : Suite
        Its methods (with their options), protocol, seed and yardsticks are kept; its tasks,
        published numbers, experiments and figures (all tied to its own data) are not.  A
        suite with fixed train/test files cannot be used (the sources have no test file).
    sources : sequence of paths or bundled data-set names
        Data files (CSV/TSV, svmlight, ARFF/KEEL; read by :class:`DataLoader`) or names of
        bundled data sets.  Each becomes a task named after the file (without extensions) or
        the data set; repeated names get ``-2``, ``-3``, ...
    target, fmt : optional
        How :class:`DataLoader` reads the files (label column, format); recorded in the
        tasks, so that they are part of the cells' keys.
    drop : sequence of str
        Columns that are not features (e.g. identifiers): the tasks' ``drop_columns``.
    groups : str, optional
        Column holding each row's group: the tasks' ``groups`` (splits keep groups whole).

    Returns
    -------
    Suite
        Named ``"<suite>+data"``, so that its results have their own directory and the
        report takes its cells from the rows.
    """
    from svmtune.datasets import dataset_path, resolve_name
    from svmtune.datasets.registry import file_sha256

    if isinstance(sources, (str, Path)) or not len(sources):
        raise ValueError("sources must be a non-empty list of data files or data-set names")
    read: dict[str, Any] = {k: v for k, v in (("target", target), ("format", fmt)) if v is not None}
    if drop:
        read["drop"] = list(drop)
    if groups is not None:
        read["groups"] = groups
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for src in sources:
        path = Path(src).expanduser()
        if path.is_file():
            dataset, name = str(path.resolve()), _stem(path)
            version = file_sha256(path, cache=False)
        elif path.exists():
            raise ValueError(f"{src}: not a file")
        else:
            try:
                dataset = name = resolve_name(str(src))
            except ValueError as exc:
                raise ValueError(f"{src}: no such file, nor a bundled data set ({exc})") from None
            version = file_sha256(dataset_path(dataset))
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}-{seen[name]}"
        tasks.append(data_task(name, dataset, version, read))
    return with_tasks(suite, tasks)


def data_task(name: str, dataset: str, version: str, read: dict | None = None) -> Task:
    """The task of one :func:`on_data` source.

    The SHA-256 of its file and how it is read (``read``: the ``"target"``, ``"format"``,
    ``"drop"`` and ``"groups"`` columns given, if any) are part of the task and of its
    cells' keys, so cells stored for other contents of the same file, or for another label
    column of it, are not taken as done (and the report leaves them out as rows of an older
    definition).
    """
    read = dict(read or {})
    options: dict[str, Any] = {"sha256": version}
    if read:
        options["read"] = read
    return Task(
        name,
        dataset,
        drop_columns=tuple(read.get("drop", ())),
        options=options,
        groups=read.get("groups"),
    )


#: ending of the name of a suite run on other data (:func:`on_data`)
DATA_SUFFIX = "+data"


def with_tasks(suite: Suite, tasks: list[Task]) -> Suite:
    """``suite``'s methods, protocol, seed and yardsticks with other ``tasks``, named
    ``"<suite>+data"`` (what :func:`on_data` returns; the report rebuilds it from the
    rows' task names and data sources)."""
    if suite.protocol.kind == "train_test":
        raise ValueError(
            f"suite {suite.name!r} evaluates on fixed test files, which other data do not "
            "have; use a suite with K-fold or split protocol (e.g. 'quick' or 'rbsvm-paper')"
        )
    return replace(
        suite,
        name=suite.name + DATA_SUFFIX,
        description=(
            f"The methods and protocol of suite `{suite.name}` on other data (`svmtune bench "
            f"--suite {suite.name} --data ...`): the same method options, splits and seed; "
            f"its published numbers and experiments belong to its own tasks."
        ),
        tasks=tasks,
        published=[],
        figures=[],
        experiments=[],
    )
