"""Resumable long experiments: each finished unit of work is kept on disk as it finishes.

A suite's experiments (the papers' figures and studies beyond the result cells) can run for
half an hour.  An experiment that loops over units of work (tasks, folds, sizes) opens a
:class:`Checkpoint` in its output folder, skips the units it finds there and adds each unit
it finishes; a run that is stopped (Ctrl-C, a killed job, a full machine) loses at most the
unit it was in, and running the experiment again (``svmtune bench`` reruns an experiment with
no ok record) resumes.  When the experiment has written its outputs it discards the
checkpoint, so that running it again on purpose (``--rerun-experiment``) computes afresh.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from svmtune.bench.store import naming_file

__all__ = ["Checkpoint"]


def _plain(obj: Any) -> Any:
    """``json.dumps`` fallback for numpy values (floats, NaN and inf included, round-trip)."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"checkpoint values must be JSON-like, got {type(obj).__name__}")


def _dumps(obj: Any, *, sort_keys: bool = True) -> str:
    # allow_nan: NaN and inf are written as Python's json reads them back (exact round-trip);
    # sorted keys make specs and unit keys canonical, values keep their key order (columns)
    return json.dumps(obj, default=_plain, sort_keys=sort_keys, separators=(",", ":"))


class Checkpoint:
    """The finished units of one experiment run, kept in a JSON-lines file.

    The file's first line records ``spec`` (whatever determines the units' results: the
    experiment's name, parameters and seed); a file written under another spec is not used
    (the run starts afresh and overwrites it).  Every further line is one finished unit,
    ``{"unit": key, "value": value}``, appended and flushed to disk as the unit finishes.  A
    line cut short by a stopped run is dropped when the file is opened again (that unit runs
    again).

    Parameters
    ----------
    path : path
        The checkpoint file (conventionally ``<experiment>.checkpoint.jsonl`` in the
        experiment's output folder).
    spec : JSON-like
        What the stored units must have been computed under.

    Notes
    -----
    The pattern::

        ck = Checkpoint.for_experiment(outdir, "exp", seed=seed)
        rows = [ck.get_or_run(task, compute, task) for task in tasks]
        write_outputs(rows)
        ck.discard()
    """

    def __init__(self, path: str | Path, spec: Any) -> None:
        self.path = Path(path)
        self._head = _dumps({"spec": spec})
        self._units: dict[str, Any] = {}
        if self.path.exists():
            lines = self.path.read_text(encoding="utf-8").split("\n")
            if lines[0] == self._head:
                for line in lines[1:]:
                    try:
                        rec = json.loads(line)
                    except ValueError:  # the torn last line of a stopped run, or empty
                        continue
                    self._units[self._key(rec["unit"])] = rec["value"]
        # rewrite: drop a torn line (the next append would otherwise continue it) and a
        # file of another spec; temp file + os.replace, so the old file survives a failure
        tmp = self.path.with_name(self.path.name + ".tmp")
        body = "".join(self._line(k, v) for k, v in self._units.items())
        with naming_file(tmp):  # a full disk names the file
            tmp.write_text(self._head + "\n" + body, encoding="utf-8")
        os.replace(tmp, self.path)

    @classmethod
    def for_experiment(cls, outdir: str | Path, name: str, **spec: Any) -> Checkpoint:
        """The checkpoint of experiment ``name``: ``<outdir>/<name>.checkpoint.jsonl`` under
        the spec ``{"experiment": name, **spec}`` (its parameters and seed)."""
        return cls(Path(outdir) / f"{name}.checkpoint.jsonl", {"experiment": name, **spec})

    @staticmethod
    def _key(unit: Any) -> str:
        return _dumps(unit)

    @staticmethod
    def _line(key: str, value: Any) -> str:
        return _dumps({"unit": json.loads(key), "value": value}, sort_keys=False) + "\n"

    def __len__(self) -> int:
        return len(self._units)

    def __contains__(self, unit: Any) -> bool:
        return self._key(unit) in self._units

    def get(self, unit: Any, default: Any = None) -> Any:
        """The stored value of ``unit`` (as JSON gives it back: lists, dicts, floats), or
        ``default`` when it has not finished."""
        return self._units.get(self._key(unit), default)

    def put(self, unit: Any, value: Any) -> Any:
        """Record a finished ``unit``; returns ``value`` as :meth:`get` will return it on a
        resumed run (JSON round-trip), so first and resumed runs continue from equal data."""
        key = self._key(unit)
        line = self._line(key, value)
        with naming_file(self.path), open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        self._units[key] = json.loads(line)["value"]
        return self._units[key]

    def get_or_run(self, unit: Any, compute: Callable[..., Any], /, *args, **kwargs) -> Any:
        """The stored value of ``unit``, or ``compute(*args, **kwargs)`` recorded by
        :meth:`put`."""
        key = self._key(unit)
        if key in self._units:
            return self._units[key]
        return self.put(unit, compute(*args, **kwargs))

    def discard(self) -> None:
        """Remove the file (the experiment finished and wrote its outputs)."""
        self.path.unlink(missing_ok=True)
        self._units.clear()
