"""Selection methods: one module per published method, plus the baselines.

The public API: the selector contract (:class:`Selector`, :class:`Selection`,
:class:`TrainingData`, :class:`SelectionContext`), the registry
(:data:`METHODS`, :func:`available_methods`, :func:`get_selector`, :func:`method_options`,
:func:`selector_class`)
and every selector class, e.g. ``from svmtune.methods import RBSVM``.  A selector class is
imported from its module on first access, so ``import svmtune.methods`` loads no method
module (and none of the optional dependencies hyperopt and Optuna, which the methods ``tpe``
and ``optuna`` import when they select).
"""

from __future__ import annotations

import importlib
from typing import Any

from svmtune.methods.base import (
    METHODS,
    Selection,
    SelectionContext,
    Selector,
    TrainingData,
    available_methods,
    get_selector,
    method_options,
    selector_class,
)

#: selector class name -> its module, from the registry (one class per method name)
_SELECTORS: dict[str, str] = {path.split(":")[1]: path.split(":")[0] for path in METHODS.values()}

__all__ = [
    "METHODS",
    "Selection",
    "SelectionContext",
    "Selector",
    "TrainingData",
    "available_methods",
    "get_selector",
    "method_options",
    "selector_class",
    # the selector classes (loaded on first access)
    "Auto",
    "CVCV",
    "DBTCCV",
    "DefaultSVC",
    "ESDRCV",
    "GridSearch",
    "HalvingSearch",
    "HyperoptTPE",
    "J4CV",
    "LDC1",
    "LDCV",
    "OptunaTPE",
    "RBSVM",
    "RBSVMLowRank",
    "RMSVM",
    "RMSVMLowRank",
    "RandomSearch",
    "SSRatio",
    "SpanRule",
    "SpanSVM",
    "SpanSVMLowRank",
]


def __getattr__(name: str) -> Any:
    """A selector class, imported from its module on first access."""
    if name in _SELECTORS:
        return getattr(importlib.import_module(_SELECTORS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SELECTORS))
