"""Selection methods: one module per published method, plus the baselines."""

from svmtune.methods.base import (
    METHODS,
    Selection,
    Selector,
    available_methods,
    get_selector,
    method_options,
    ovr_tasks,
)

__all__ = [
    "METHODS",
    "Selection",
    "Selector",
    "available_methods",
    "get_selector",
    "method_options",
    "ovr_tasks",
]
