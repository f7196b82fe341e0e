"""The tasks of a benchmark suite as data: load, prepare and split.

A task's data set is loaded (:func:`default_loader`: :func:`svmtune.datasets.load_dataset`),
reduced to the task's classes, binarised for one-vs-rest tasks, stratified-subsampled with the
suite's seed and stripped of dropped columns (:func:`prepare_task`), then split by the suite's
protocol (:func:`split_indices`).  :func:`svmtune.bench.runner.run_cell` uses the prepared
task and splits, cached per process (the cells of one task share them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from svmtune._validation import validate_groups
from svmtune.bench.store import cell_key, jsonable
from svmtune.bench.suite import Suite, Task

__all__ = [
    "Loader",
    "TaskData",
    "default_loader",
    "derive_seed",
    "prepare_task",
    "split_indices",
]

Loader = Callable[[str], tuple[Any, np.ndarray, Any]]


# ----------------------------------------------------------------------------- data
def default_loader(name: str):
    """``svmtune.datasets.load_dataset(name)`` (imported on first use)."""
    from svmtune.datasets import load_dataset

    return load_dataset(name)


def derive_seed(*parts: Any) -> int:
    """A stable 31-bit seed from any JSON-able parts (independent of ``PYTHONHASHSEED``)."""
    text = json.dumps(jsonable(list(parts)), separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") & 0x7FFFFFFF


def _info_get(info: Any, key: str, default: Any = None) -> Any:
    if info is None:
        return default
    if isinstance(info, dict):
        return info.get(key, default)
    return getattr(info, key, default)


@dataclass
class TaskData:
    """A prepared task: features, labels, the fixed test file if the protocol has one, and
    each row's group if the task has a ``groups`` column."""

    X: pd.DataFrame
    y: np.ndarray
    info: Any
    X_test: pd.DataFrame | None = None
    y_test: np.ndarray | None = None
    test_info: Any = None
    groups: np.ndarray | None = None

    @property
    def preprocess(self) -> str:
        """ "auto" when any part has categorical columns or missing values, else "standard"."""
        from svmtune.preprocess import needs_auto

        parts = [self.X] + ([self.X_test] if self.X_test is not None else [])
        return "auto" if any(needs_auto(p) for p in parts) else "standard"


def _label_mask(y: np.ndarray, label: Any, task: str, what: str) -> np.ndarray:
    """Rows of class ``label``; labels read as strings match a numeric ``label`` and the
    reverse.  A label absent from ``y`` is an error naming the task and the labels."""
    mask = y == label
    if not np.any(mask):
        mask = y.astype(str) == str(label)
    if not np.any(mask):
        raise ValueError(
            f"task {task!r}: {what} {label!r} is not among the labels "
            f"{sorted(map(str, np.unique(y)))}"
        )
    return mask


def _binarise(y: np.ndarray, positive: Any, task: str) -> np.ndarray:
    """One-vs-rest labels: 1 for ``positive``, 0 for every other class."""
    y = np.asarray(y)
    mask = _label_mask(y, positive, task, "positive class")
    if np.all(mask):
        raise ValueError(f"task {task!r}: every sample is of the positive class {positive!r}")
    return mask.astype(int)


def _apply_task(X, y, task: Task) -> tuple[pd.DataFrame, np.ndarray]:
    X = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    if task.drop_columns:
        missing = [c for c in task.drop_columns if c not in X.columns]
        if missing:
            raise ValueError(f"task {task.name!r}: drop_columns {missing} not in the data")
        X = X.drop(columns=list(task.drop_columns))
    y = np.asarray(y)
    if task.classes is not None:
        keep = np.zeros(len(y), dtype=bool)
        for label in task.classes:
            keep |= _label_mask(y, label, task.name, "class")
        X, y = X[keep], y[keep]
    if task.positive is not None:
        y = _binarise(y, task.positive, task.name)
    return X.reset_index(drop=True), y


def prepare_task(task: Task, loader: Loader, seed: int) -> TaskData:
    """Load ``task.dataset`` (and ``task.test_dataset``) and apply the task's definition.

    The subsample (``task.subsample`` rows of the training data, stratified) is drawn with
    ``seed`` (the suite's seed); the row order of the subsample follows the file.  The
    ``task.groups`` column (of the data, or of a bundled data set's ``groups`` side file)
    leaves the features and becomes ``TaskData.groups``.
    """
    from sklearn.model_selection import train_test_split

    X, y, info = loader(task.dataset)
    if task.groups is not None and hasattr(info, "add_group_column"):  # a bundled side file
        X = info.add_group_column(X, task.groups)
    X, y = _apply_task(X, y, task)
    if task.subsample is not None and int(task.subsample) < len(y):
        idx, _ = train_test_split(
            np.arange(len(y)), train_size=int(task.subsample), stratify=y, random_state=seed
        )
        idx = np.sort(idx)
        X, y = X.iloc[idx].reset_index(drop=True), y[idx]
    groups = None
    if task.groups is not None:
        if task.groups not in X.columns:
            raise ValueError(f"task {task.name!r}: groups column {task.groups!r} not in the data")
        groups = validate_groups(X[task.groups].to_numpy(), len(y))
        X = X.drop(columns=[task.groups])
    data = TaskData(X=X, y=y, info=info, groups=groups)
    if task.test_dataset is not None:
        Xt, yt, tinfo = loader(task.test_dataset)
        data.X_test, data.y_test = _apply_task(Xt, yt, task)
        data.test_info = tinfo
    return data


def split_indices(
    y: np.ndarray, suite: Suite, task: Task, groups: np.ndarray | None = None
) -> list[tuple[np.ndarray, Any]]:
    """The protocol's (train, test) index pairs for one task; ``test`` is None for the
    fixed train/test protocol (the test part is the task's test file).

    With ``groups`` every group stays on one side of each split: K-fold CV becomes
    ``StratifiedGroupKFold`` (each repeat shuffled with its own seed drawn from the suite's),
    random splits ``GroupShuffleSplit`` (not stratified; ``train_size`` and ``test_size``
    count groups).
    """
    from sklearn.model_selection import (
        GroupShuffleSplit,
        RepeatedStratifiedKFold,
        StratifiedGroupKFold,
        StratifiedShuffleSplit,
    )

    p = suite.protocol
    dummy = np.zeros(len(y))
    if groups is not None and p.kind == "kfold":
        rng = np.random.RandomState(suite.seed)
        out = []
        for _ in range(int(p.n_repeats)):
            seed = int(rng.randint(np.iinfo(np.int32).max))
            cv = StratifiedGroupKFold(int(p.n_splits), shuffle=True, random_state=seed)
            out += list(cv.split(dummy, y, groups))
        return out
    if groups is not None and p.kind == "split":
        cv = GroupShuffleSplit(
            n_splits=int(p.n_repeats),
            train_size=p.train_size,
            test_size=p.test_size,
            random_state=suite.seed,
        )
        return list(cv.split(dummy, y, groups))
    if p.kind == "kfold":
        cv = RepeatedStratifiedKFold(
            n_splits=int(p.n_splits), n_repeats=int(p.n_repeats), random_state=suite.seed
        )
        return list(cv.split(dummy, y))
    if p.kind == "split":
        cv = StratifiedShuffleSplit(
            n_splits=int(p.n_repeats),
            train_size=p.train_size,
            test_size=p.test_size,
            random_state=suite.seed,
        )
        return list(cv.split(dummy, y))
    return [(np.arange(len(y)), None)]


_TASK_CACHE: dict[tuple[str, Any], tuple[TaskData, list]] = {}


def _prepared(suite: Suite, task: Task, loader: Loader) -> tuple[TaskData, list]:
    """Prepared data and splits of a task, cached per process (cells of one task share it)."""
    k = (
        cell_key(suite=suite.name, seed=suite.seed, task=repr(task), protocol=repr(suite.protocol)),
        loader,
    )
    if k not in _TASK_CACHE:
        if len(_TASK_CACHE) >= 4:
            _TASK_CACHE.pop(next(iter(_TASK_CACHE)))
        data = prepare_task(task, loader, suite.seed)
        _TASK_CACHE[k] = (data, split_indices(data.y, suite, task, data.groups))
    return _TASK_CACHE[k]
