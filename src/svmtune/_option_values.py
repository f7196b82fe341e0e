"""The rules of option values: real and positive numbers, integers, booleans, float lists and
log2 search boxes, one function each.

Every public function, option constraint (:mod:`svmtune.methods._constraints`) and solver
checks a value of these kinds through these functions, so that a value means the same
everywhere: ``True`` is no number, a string is no number (``"0.5"`` would otherwise be read
by ``float``), and the message names the option.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from svmtune.exceptions import NotANumberError

__all__ = [
    "check_bool_option",
    "check_float_values",
    "check_int_option",
    "check_log2_range",
    "check_positive",
    "check_real",
]


def check_real(name: str, value) -> float:
    """``value`` as a ``float``: a real number (a NumPy scalar or 0-d array too), not a
    ``bool`` (``True`` is no quantity) nor a string; else a
    :class:`~svmtune.exceptions.NotANumberError` naming ``name``."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "fiu":
        return float(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise NotANumberError(
            f"{name} must be a real number, got {value!r} ({type(value).__name__})"
        )
    return float(value)


def check_positive(name: str, value, *, allow_none: bool = False) -> float | None:
    """``value`` as a positive finite ``float``: the one rule for a positive number (``C``, a
    width, a tolerance, an option), as scikit-learn's ``Interval(Real, 0, None,
    closed="neither")``; no real number: :func:`check_real`'s error, else a ``ValueError``
    naming ``name``.  ``allow_none``: None passes as None."""
    if value is None and allow_none:
        return None
    v = check_real(name, value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return v


def check_int_option(name: str, value, *, minimum: int, allow_none: bool = False) -> int | None:
    """An integer option as ``int``, or a ``ValueError`` naming ``name``.

    Accepts Python and numpy integers and floats with an integral finite value (``100.0``,
    as a command line or a JSON file may give them); refuses ``bool`` (``True`` is no
    count), infinity, NaN, fractions, strings and values below ``minimum``.

    Parameters
    ----------
    name : str
        The option's name, for the message.
    value : object
        The value given.
    minimum : int
        Smallest allowed value.
    allow_none : bool, default=False
        Whether None is allowed (returned as None).

    Returns
    -------
    int or None

    Raises
    ------
    ValueError
        Unless ``value`` is an integer >= ``minimum`` (or None with ``allow_none``).
    """
    if value is None and allow_none:
        return None
    ok = False
    if not isinstance(value, (bool, np.bool_)):
        if isinstance(value, numbers.Integral):
            ok = True
        elif isinstance(value, numbers.Real):
            f = float(value)
            ok = math.isfinite(f) and f.is_integer()
    if not ok or value < minimum:
        none = " or None" if allow_none else ""
        raise ValueError(f"{name} must be an integer >= {minimum}{none}, got {value!r}")
    return int(value)


def check_bool_option(name: str, value) -> bool:
    """A boolean option as ``bool``, or a ``ValueError`` naming ``name``.

    Only ``True`` and ``False`` (also numpy's) are booleans: ``"false"``, ``0``, NaN or
    ``[]`` are refused rather than read by their truth value (``bool("false")`` is True).

    Raises
    ------
    ValueError
        Unless ``value`` is a boolean.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_float_values(name: str, value, *, what: str = "numbers") -> np.ndarray:
    """The numbers of a float option (one number or a sequence) as a 1-D float array.

    The one rule of every float option: ``bool`` (also numpy's, and inside a sequence) is
    no number, as for :func:`check_int_option` (``True`` would otherwise be read as 1.0 and
    change a selection), and neither is a string (``"0.5"``, which ``float`` would read).
    Other values are read by ``float``; the caller checks the range.

    Raises
    ------
    ValueError
        Naming ``name``, when ``value`` or an element is a boolean, a string or no number.
    """
    items = np.atleast_1d(np.asarray(value, dtype=object)).ravel()
    if any(isinstance(v, (bool, np.bool_)) for v in items):
        raise NotANumberError(f"{name} must be {what}, got {value!r} (True/False is no number)")
    if any(isinstance(v, (str, bytes, np.str_, np.bytes_)) for v in items):
        raise NotANumberError(f"{name} must be {what}, got {value!r} (a string is no number)")
    try:
        return np.asarray(items, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {what}, got {value!r}") from None


def check_log2_range(name: str, value: Any, *, with_step: bool = False) -> tuple[float, ...]:
    """A log2 search box ``(lo, hi)`` (or ``(lo, hi, step)`` when ``with_step``) as floats:
    the one rule of every search range (the grids', the random and gradient searches' boxes,
    :func:`svmtune.search.gradient.minimize_log_params`' bounds).  ``lo == hi`` fixes the
    parameter; ``step`` defaults to 1.  Raises ``ValueError`` naming the option.
    """
    allowed = (2, 3) if with_step else (2,)
    shape = "(lo, hi) or (lo, hi, step)" if with_step else "(lo, hi)"
    vals = tuple(check_float_values(name, value, what=f"a tuple {shape} in log2 units"))
    if len(vals) not in allowed:
        raise ValueError(f"{name} must be a tuple {shape} in log2 units, got {value!r}")
    lo, hi = vals[0], vals[1]
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
        raise ValueError(f"{name} must satisfy lo <= hi (finite, log2 units), got {value!r}")
    if with_step:
        step = vals[2] if len(vals) == 3 else 1.0
        if not (np.isfinite(step) and step > 0):
            raise ValueError(f"{name}: grid step must be positive, got {step}")
        return lo, hi, step
    return lo, hi
