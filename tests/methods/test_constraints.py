"""The declared option constraints (svmtune.methods._constraints): no number option of any
method reads a boolean as a number."""

from __future__ import annotations

import numpy as np
import pytest

from svmtune.methods import available_methods
from svmtune.methods._constraints import Boolean, validate_options
from svmtune.methods.base import selector_class

#: number-shaped values tried against every declared constraint: a scalar, log2 ranges and
#: grids, and sequences (widths, degrees, sigmoid slopes); each has a 1 (or 1.0) that True
#: would stand for
_PROBES = (
    1.0,
    1,
    (-1.0, 1.0),
    (1.0, 2.0),
    (-1.0, 1.0, 1.0),
    (1.0, 2.0, 0.5),
    (1.0, 2.0, 3.0),
    (1, 2, 3),
    [1.0, 2.0],
)


def _with_true(value, i, true):
    """``value`` with its ``i``-th number (the scalar itself for i = None) made ``true``."""
    if i is None:
        return true
    out = list(value)
    out[i] = true
    return type(value)(out)


def _number_cases():
    """(method, option, value with 1 or 1.0, the same with True) for every option of every
    registered method whose declared constraints take a number or a sequence of numbers
    (options that are booleans by declaration are left out)."""
    cases = []
    for method in available_methods():
        cls = selector_class(method)
        for name, kinds in cls._constraints().items():
            real = [c for c in kinds if c is not None]
            if any(isinstance(c, Boolean) for c in real):
                continue
            for probe in _PROBES:
                if not _accepts(cls, name, probe):
                    continue
                slots = [None] if np.isscalar(probe) else [i for i, v in enumerate(probe) if v == 1]
                for i in slots:
                    cases.append((method, name, probe, _with_true(probe, i, True)))
    return cases


def _accepts(cls, name, value) -> bool:
    """Whether the declared constraints of option ``name`` take ``value``."""
    try:
        validate_options(cls._constraints(), {name: value})
    except (TypeError, ValueError):
        return False
    return True


_CASES = _number_cases()


def test_number_options_found():
    """The derivation finds the number options of the gradient, grid and data methods."""
    found = {(m, n) for m, n, _, _ in _CASES}
    for key in [
        ("rbsvm", "C0"),
        ("rbsvm", "tol"),
        ("grid", "log2_sigma"),
        ("span_rule", "A_values"),
        ("ss", "degrees"),
        ("ss", "sigmas"),
        ("cv_cv", "log2_C"),
        ("esdr", "C"),
        ("grid", "sigmas"),
        ("grid", "Cs"),
        ("span_rule", "Cs"),
    ]:
        assert key in found, key


@pytest.mark.parametrize(
    ("method", "name", "ok", "bad"), _CASES, ids=[f"{m}-{n}-{b!r}" for m, n, _, b in _CASES]
)
def test_boolean_refused_where_a_number_is_taken(method, name, ok, bad):
    """True is no 1.0: the same value with the number is accepted, with True refused,
    naming the option (as the integer options refuse it)."""
    cls = selector_class(method)
    np_bad = _with_true(ok, None if np.isscalar(ok) else list(bad).index(True), np.True_)
    for value in (bad, np_bad):
        with pytest.raises(ValueError, match=name):
            validate_options(cls._constraints(), {name: value})
    if _constructs(cls, name, ok):  # and the selector itself (some options need others)
        for value in (bad, np_bad):
            with pytest.raises(ValueError, match=name):
                cls(**{name: value})


def _constructs(cls, name, value) -> bool:
    try:
        cls(**{name: value})
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(
    ("method", "name", "ok", "bad"), _CASES, ids=[f"{m}-{n}-str" for m, n, _, _ in _CASES]
)
def test_string_refused_where_a_number_is_taken(method, name, ok, bad):
    """ "1" is no 1.0 either (``float`` would read it): the number written as a string, alone
    or inside the sequence, is refused naming the option."""
    cls = selector_class(method)
    i = None if np.isscalar(ok) else list(bad).index(True)
    one = ok if i is None else ok[i]
    for text in (str(one), str(one).encode()):
        with pytest.raises(ValueError, match=name):
            validate_options(cls._constraints(), {name: _with_true(ok, i, text)})
