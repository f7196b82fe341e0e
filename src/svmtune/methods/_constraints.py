"""Declared option constraints of the selectors, checked in one place.

Every selector lists the constraints of its options in one class-level dict,
``_parameter_constraints = {"n_splits": [Interval(Integral, 2, None, closed="left")], ...}``,
in the style of scikit-learn's estimators (whose checker, ``sklearn.utils._param_validation``,
is private, hence this small one).  An option is valid when it satisfies any of its
constraints; the first one it satisfies converts it (``int``, ``float``, a tuple of floats,
...).  Otherwise a ``ValueError`` names the option, what it must be and what it got, e.g.
``n_splits must be an integer >= 2 (CV folds), got 1``.  ``None`` in a list allows None.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from svmtune._option_values import check_bool_option, check_int_option, check_positive
from svmtune.search.start import SEARCH_OPTION_RULES

__all__ = [
    "Boolean",
    "Names",
    "Check",
    "Constraint",
    "IntegerLike",
    "Interval",
    "Options",
    "Positive",
    "SEARCH_CONSTRAINTS",
    "validate_options",
]


class Constraint:
    """One admissible kind of value of an option.

    Subclasses implement :meth:`convert` (the value as the selector keeps it, or a
    ``ValueError``/``TypeError`` when the value is not of this kind) and :meth:`describe`.
    """

    def convert(self, name: str, value: Any) -> Any:
        raise NotImplementedError

    def describe(self, *, alone: bool = True) -> str:
        """What a value must be, for the message (``alone``: the option's only kind)."""
        raise NotImplementedError


class Interval(Constraint):
    """A number of type ``Integral`` or ``Real`` in an interval (``None``: unbounded).

    ``bool`` is no number here.  A ``Real`` interval refuses NaN, and infinity unless an
    open end allows it.

    Parameters
    ----------
    kind : numbers.Integral or numbers.Real
    left, right : float or None
        The ends.
    closed : {"left", "right", "both", "neither"}, default="both"
        Which ends belong to the interval.
    note : str, default=""
        What the number is, added to the message in parentheses ("CV folds").
    """

    def __init__(self, kind, left, right, *, closed: str = "both", note: str = ""):
        self.kind, self.left, self.right, self.closed, self.note = kind, left, right, closed, note

    def convert(self, name: str, value: Any) -> Any:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, self.kind):
            raise ValueError(name)
        if self.kind is numbers.Real and math.isnan(float(value)):
            raise ValueError(name)
        lo_in = self.closed in ("left", "both")
        hi_in = self.closed in ("right", "both")
        if self.left is not None and not (value >= self.left if lo_in else value > self.left):
            raise ValueError(name)
        if self.right is not None and not (value <= self.right if hi_in else value < self.right):
            raise ValueError(name)
        if self.right is None and self.kind is numbers.Real and not math.isfinite(value):
            raise ValueError(name)
        return int(value) if self.kind is numbers.Integral else value

    def describe(self, *, alone: bool = True) -> str:
        integer = self.kind is numbers.Integral
        if integer and self.left == 1 and self.right is None and self.closed in ("left", "both"):
            text = "a positive integer"
        elif not integer and self.left == 0 and self.right is None and self.closed == "neither":
            text = "a positive finite number"
        else:
            text = "an integer" if integer else "a number"
            if not integer and self.left is None and self.right is None:
                text = "a finite number"
            ends = []
            if self.left is not None:
                ends.append(f"{'>=' if self.closed in ('left', 'both') else '>'} {self.left:g}")
            if self.right is not None:
                ends.append(f"{'<=' if self.closed in ('right', 'both') else '<'} {self.right:g}")
            if ends:
                text += " " + " and ".join(ends)
            if ends and not integer and (self.right is None or math.isinf(self.right)):
                text += " and finite"
        return f"{text} ({self.note})" if self.note else text


class IntegerLike(Constraint):
    """An integer ``>= minimum``, also given as an integral float (``100.0``, as a command
    line or a JSON file may give it): :func:`svmtune._option_values.check_int_option`."""

    def __init__(self, minimum: int, *, note: str = ""):
        self.minimum, self.note = minimum, note

    def convert(self, name: str, value: Any) -> Any:
        return check_int_option(name, value, minimum=self.minimum)

    def describe(self, *, alone: bool = True) -> str:
        text = f"an integer >= {self.minimum}"
        return f"{text} ({self.note})" if self.note else text


class Positive(Constraint):
    """A positive finite number (:func:`svmtune._option_values.check_positive`), converted to
    ``float``."""

    def convert(self, name: str, value: Any) -> Any:
        return check_positive(name, value)

    def describe(self, *, alone: bool = True) -> str:
        return "a positive finite number"


class Options(Constraint):
    """One of a fixed set of values (strings, mostly)."""

    def __init__(self, *choices: Any):
        self.choices = tuple(choices)

    def convert(self, name: str, value: Any) -> Any:
        if isinstance(value, (str, int, float, type(None))) and value in self.choices:
            return value
        raise ValueError(name)

    def describe(self, *, alone: bool = True) -> str:
        if alone:
            return f"one of {self.choices}"
        return ", ".join(map(repr, self.choices))


class Boolean(Constraint):
    """``True`` or ``False`` (numpy's too); no truth value of other objects."""

    def convert(self, name: str, value: Any) -> Any:
        return check_bool_option(name, value)

    def describe(self, *, alone: bool = True) -> str:
        return "True or False"


class Check(Constraint):
    """A constraint given by a function ``fn(name, value) -> converted value`` that raises
    its own ``ValueError`` (naming the option) when the value is not valid: for structured
    options (log2 ranges, grids, kernel families) whose message says more than a type."""

    def __init__(self, fn: Callable[[str, Any], Any], description: str):
        self.fn, self.description = fn, description

    def convert(self, name: str, value: Any) -> Any:
        return self.fn(name, value)

    def describe(self, *, alone: bool = True) -> str:
        return self.description


def _check_names(name: str, value, allowed, *, empty_ok: bool) -> tuple[str, ...]:
    vals = (value,) if isinstance(value, str) else value
    try:
        vals = tuple(vals)
    except TypeError:
        vals = (value,)
    bad = [v for v in vals if not isinstance(v, str) or v not in allowed]
    if bad or (not vals and not empty_ok) or len(set(vals)) != len(vals):
        raise ValueError(
            f"{name} must be {'a possibly empty' if empty_ok else 'a non-empty'} list of "
            f"distinct names among {tuple(allowed)}, got {value!r}"
        )
    return vals


def Names(allowed, *, empty_ok: bool) -> Check:  # noqa: N802  (a constraint, as the classes)
    """The constraint "a list of distinct names among ``allowed``" (a tuple of them; a single
    name is a list of one)."""
    return Check(
        lambda name, value: _check_names(name, value, allowed, empty_ok=empty_ok),
        f"a list of distinct names among {tuple(allowed)}",
    )


def _check_one(name: str, value: Any, constraints: Iterable[Constraint | None]) -> Any:
    """``value`` converted by the first of ``constraints`` it satisfies, else a ValueError."""
    kinds = list(constraints)
    if value is None and None in kinds:
        return None
    real = [c for c in kinds if c is not None]
    own_error: Exception | None = None
    for c in real:
        try:
            return c.convert(name, value)
        except (TypeError, ValueError) as exc:
            # a structured check's own message says more than the list of kinds
            if isinstance(c, Check) and own_error is None:
                own_error = exc
    if own_error is not None and len(real) == 1 and isinstance(real[0], Check):
        msg = str(own_error)  # named, so that no caller has to find the option again
        raise ValueError(msg if re.search(rf"\b{re.escape(name)}\b", msg) else f"{name}: {msg}")
    descs = [c.describe(alone=len(real) == 1) for c in real]
    if None in kinds:
        descs.append("None")
    text = descs[0] if len(descs) == 1 else ", ".join(descs[:-1]) + " or " + descs[-1]
    raise ValueError(f"{name} must be {text}, got {value!r}")


def validate_options(
    constraints: Mapping[str, Iterable[Constraint | None]], options: Mapping[str, Any]
) -> dict[str, Any]:
    """Check and convert ``options`` against their declared ``constraints``.

    Parameters
    ----------
    constraints : dict
        Option name -> list of admissible kinds (:class:`Constraint` instances, or None for
        None).  Options without an entry are passed through unchanged.
    options : dict
        Option name -> value given.

    Returns
    -------
    dict
        The options converted (in the order given).

    Raises
    ------
    ValueError
        Naming the first invalid option, what it must be and the value given.
    """
    out = {}
    for name, value in options.items():
        out[name] = _check_one(name, value, constraints[name]) if name in constraints else value
    return out


#: the declared constraints of the gradient search options (RBSVM, SpanSVM, RMSVM and their
#: low-rank versions): each one is its own rule of the search,
#: :data:`svmtune.search.start.SEARCH_OPTION_RULES` (its messages), checked once per option
SEARCH_CONSTRAINTS: dict[str, list[Constraint | None]] = {
    name: [Check(rule, f"a valid {name}")] for name, rule in SEARCH_OPTION_RULES.items()
}
