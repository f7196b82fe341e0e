"""The declared checks of :class:`svmtune.SVMTuner`'s constructor parameters: one table,
``PARAMETER_CHECKS`` (parameter -> admissible kinds, ``None`` allowing None), in the style
of scikit-learn's ``_parameter_constraints``, checked by
:func:`svmtune.methods._constraints.validate_options` when ``fit`` starts."""

from __future__ import annotations

import numpy as np

from svmtune.methods._constraints import Check, Options
from svmtune.preprocess import PREPROCESS_MODES

__all__ = ["PARAMETER_CHECKS"]


def _check_n_jobs(name: str, value) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value == 0:
        raise ValueError(
            f"n_jobs must be None or a non-zero integer (-1: all cores), got {value!r}"
        )
    return int(value)


def _check_backend(name: str, value) -> str:
    if not isinstance(value, str):
        raise ValueError(
            "backend must be None or a joblib backend name ('loky', 'threading', "
            f"'multiprocessing', or 'dask' with a running dask.distributed.Client), "
            f"got {value!r}"
        )
    return value


def _check_verbose(name: str, value) -> int:
    if isinstance(value, bool) or value not in (0, 1, 2):
        raise ValueError(f"verbose must be 0, 1 or 2, got {value!r}")
    return int(value)


def _check_choice(*choices: str):
    """A check of one of ``choices``, with the message ``name must be 'a' or 'b', got x``."""
    text = ", ".join(map(repr, choices[:-1])) + f" or {choices[-1]!r}"

    def check(name: str, value) -> str:
        if not isinstance(value, str) or value not in choices:
            raise ValueError(f"{name} must be {text}, got {value!r}")
        return value

    return check


#: the declared checks of SVMTuner's parameters (name -> admissible kinds; None allows None)
PARAMETER_CHECKS = {
    "preprocess": [Options(*PREPROCESS_MODES)],
    "multiclass": [Check(_check_choice("ovr", "ovo"), "'ovr' or 'ovo'")],
    "final_model": [
        Check(_check_choice("auto", "l1", "l2", "lowrank"), "'auto', 'l1', 'l2' or 'lowrank'")
    ],
    "probability": [Check(_check_choice("tanh", "platt"), "'tanh' or 'platt'")],
    "backend": [None, Check(_check_backend, "a joblib backend name")],
    "n_jobs": [None, Check(_check_n_jobs, "a non-zero integer")],
    "verbose": [Check(_check_verbose, "0, 1 or 2")],
}
