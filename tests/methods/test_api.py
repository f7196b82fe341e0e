"""The methods layer as a declared API: one ``select`` signature, declared option
constraints, lazily imported optional dependencies, a curated ``__all__``."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from numbers import Integral, Real
from pathlib import Path

import numpy as np
import pytest

import svmtune.methods as methods_pkg
from svmtune.methods import (
    METHODS,
    Selector,
    available_methods,
    get_selector,
    method_options,
    selector_class,
)
from svmtune.methods._constraints import (
    Boolean,
    Check,
    IntegerLike,
    Interval,
    Options,
    Positive,
    validate_options,
)
from svmtune.methods.base import GROUP_METHODS, require

_METHODS_DIR = Path(methods_pkg.__file__).parent
_MODULES = sorted(m.name for m in pkgutil.iter_modules([str(_METHODS_DIR)]))


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 2)) + 1.5 * y[:, None]
    return X, y


# ----------------------------------------------------------------------- one select signature
def test_selector_is_abstract():
    with pytest.raises(TypeError, match="abstract"):
        Selector()


@pytest.mark.parametrize("method", available_methods())
def test_every_run_has_the_one_signature(method):
    """Every selector implements ``run(data, context)`` and keeps ``Selector.select``, the
    checked entry of direct callers (no method overrides it)."""
    klass = type(get_selector(method))
    want = inspect.signature(Selector.run).parameters
    got = inspect.signature(klass.run).parameters
    assert klass.run is not Selector.run
    assert [(p.name, p.kind, p.default) for p in got.values()] == [
        (p.name, p.kind, p.default) for p in want.values()
    ]
    assert all("select" not in vars(k) for k in klass.__mro__ if k is not Selector)


def _named_group_methods() -> set[str]:
    names = set(re.findall(r"\b[a-z][a-z0-9_]*\b", GROUP_METHODS))
    return names & set(available_methods())


@pytest.mark.parametrize("method", available_methods())
def test_groups_are_taken_or_refused_by_name(method):
    """A method whose holdout cannot keep groups together refuses them with a message that
    names the methods that can; the list names exactly the methods that take groups at
    their default options (span_rule takes them with criterion='cv')."""
    selector = get_selector(method)
    takes = selector.holdout() in ("folds", "groups")
    assert (method in _named_group_methods()) == (takes or method == "span_rule")
    if takes:
        return
    X, y = _data()
    with pytest.raises(ValueError, match=rf"method '{method}' .* takes no groups; .*rbsvm"):
        selector.select(X, y, groups=np.arange(len(y)) // 4)


def test_span_rule_takes_groups_with_cv():
    assert get_selector("span_rule", {"criterion": "cv"}).holdout() == "folds"


# ----------------------------------------------------------------------- declared constraints
def test_constraints_convert_and_name_the_option():
    table = {
        "n": [Interval(Integral, 2, None, closed="left", note="CV folds")],
        "k": [Interval(Integral, 1, None, closed="left")],
        "share": [Interval(Real, 0.0, 1.0, closed="right"), None],
        "how": [Options("a", "b")],
        "res": [Options("exhaust"), Interval(Integral, 1, None, closed="left")],
        "flag": [Boolean()],
        "m": [IntegerLike(4), None],
        "x": [Positive()],
        "grid": [Check(lambda name, v: tuple(v), "a sequence")],
    }
    out = validate_options(
        table,
        dict(
            n=np.int64(3),
            k=1,
            share=None,
            how="b",
            res=5,
            flag=np.True_,
            m=8.0,
            x=np.int32(2),
            grid=[1],
        ),
    )
    assert out == dict(n=3, k=1, share=None, how="b", res=5, flag=True, m=8, x=2.0, grid=(1,))
    assert type(out["n"]) is int and type(out["flag"]) is bool
    bad = [
        ("n", 1, "n must be an integer >= 2 (CV folds), got 1"),
        ("n", True, "n must be an integer >= 2 (CV folds), got True"),
        ("k", 2.0, "k must be a positive integer, got 2.0"),
        ("share", 0.0, "share must be a number > 0 and <= 1 or None, got 0.0"),
        ("share", float("nan"), "share must be a number > 0 and <= 1 or None, got nan"),
        ("how", "c", "how must be one of ('a', 'b'), got 'c'"),
        ("how", ["a"], "how must be one of ('a', 'b'), got ['a']"),
        ("res", 0, "res must be 'exhaust' or a positive integer, got 0"),
        ("flag", 1, "flag must be True or False, got 1"),
        ("m", 3, "m must be an integer >= 4 or None, got 3"),
        ("x", float("inf"), "x must be a positive finite number, got inf"),
        ("x", "y", "x must be a positive finite number, got 'y'"),
        ("x", "2", "x must be a positive finite number, got '2'"),  # float() would read it
        ("grid", 3, "'int' object is not iterable"),
    ]
    for name, value, message in bad:
        with pytest.raises(ValueError, match=re.escape(message)):
            validate_options(table, {name: value})


@pytest.mark.parametrize("method", available_methods())
def test_every_selector_declares_constraints_of_known_options(method):
    """Each method's table covers only its own options (a typo would never be checked)."""
    klass = selector_class(method)
    declared = set(klass._constraints())
    options = set(method_options(method))
    # the CV base class declares the common log2 ranges that grid validates by itself
    assert declared - options <= {"log2_sigma", "log2_C", "distribution"}
    # what is not declared is checked by a rule between options (grids given by values or
    # by log2 ranges, the instance-weight scores) or fixed by the method (esdr's family)
    undeclared = options - declared
    assert undeclared <= {"sigmas", "Cs", "log2_sigma", "log2_C", "scores"}, undeclared


# ----------------------------------------------------------------------- optional dependencies
@pytest.mark.parametrize(
    "method, module, params",
    [
        ("tpe", "hyperopt", {"max_evals": 2, "n_startup": 1, "n_splits": 2}),
        ("optuna", "optuna", {"n_trials": 2, "n_startup": 1, "n_splits": 2}),
    ],
)
def test_missing_optional_dependency_says_how_to_install(monkeypatch, method, module, params):
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    selector = get_selector(method, params)  # building it needs no import
    X, y = _data()
    message = f'method {method!r} needs {module}: pip install "svmtune[baselines]"'
    with pytest.raises(ImportError, match=re.escape(message)):
        selector.select(X, y, random_state=0)


def test_require_returns_the_module():
    assert require("numpy", "x") is np
    with pytest.raises(ImportError, match=r"method 'x' needs no_such_mod: pip install"):
        require("no_such_mod", "x", "extra")


def test_importing_the_methods_imports_no_optional_dependency():
    code = (
        "import sys\n"
        "import svmtune, svmtune.methods\n"
        "from svmtune.methods import available_methods, get_selector\n"
        "for m in available_methods(): get_selector(m)\n"
        "bad = [m for m in ('optuna', 'hyperopt', 'matplotlib') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------- curated API and sizes
def test_package_all_resolves_and_lists_every_selector():
    for name in methods_pkg.__all__:
        assert getattr(methods_pkg, name) is not None
    classes = {path.split(":")[1] for path in METHODS.values()}
    assert classes <= set(methods_pkg.__all__)


@pytest.mark.parametrize("name", _MODULES)
def test_every_module_declares_all(name):
    module = importlib.import_module(f"svmtune.methods.{name}")
    assert isinstance(module.__all__, list)
    for item in module.__all__:
        assert hasattr(module, item), f"{name}.__all__ names missing {item!r}"


@pytest.mark.parametrize("name", _MODULES)
def test_module_and_function_sizes(name):
    """No module over 600 lines, no function over 100."""
    text = (_METHODS_DIR / f"{name}.py").read_text()
    assert len(text.splitlines()) <= 600
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assert node.end_lineno - node.lineno + 1 <= 100, f"{name}.{node.name}"
