"""The declared public API: ``svmtune.__all__`` and the ``__all__`` of each public package.

Every declared name exists and says what it is (a docstring); every module that is not
private (no leading underscore in its dotted name) declares its own ``__all__``; and the
exceptions svmtune raises live in :mod:`svmtune.exceptions`.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import tomllib
import warnings
from pathlib import Path

import pytest
import sklearn.exceptions

import svmtune
import svmtune.exceptions

#: the packages whose ``__all__`` make up the public API (documented in the API reference)
PUBLIC = [
    "svmtune",
    "svmtune.bench",
    "svmtune.cli",
    "svmtune.criteria",
    "svmtune.datasets",
    "svmtune.estimators",
    "svmtune.estimators_lowrank",
    "svmtune.exceptions",
    "svmtune.kernels",
    "svmtune.loo",
    "svmtune.lowrank",
    "svmtune.methods",
    "svmtune.persist",
    "svmtune.plotting",
    "svmtune.preprocess",
    "svmtune.search",
    "svmtune.svm",
]


def _all_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(svmtune.__path__, "svmtune."):
        if info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


@pytest.mark.parametrize("name", PUBLIC)
def test_public_names_exist_and_are_documented(name):
    module = importlib.import_module(name)
    declared = getattr(module, "__all__", None)
    assert declared, f"{name} declares no __all__"
    assert len(declared) == len(set(declared)), f"{name}.__all__ repeats a name"
    for attr in declared:
        assert hasattr(module, attr), f"{name}.__all__ names {attr!r}, which it lacks"
        obj = getattr(module, attr)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"{name}.{attr} has no docstring"


def test_every_public_module_declares_all():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        missing = [
            m
            for m in _all_modules()
            if not any(part.startswith("_") for part in m.split("."))
            and not hasattr(importlib.import_module(m), "__all__")
        ]
    assert not missing, f"modules without __all__: {missing}"


def test_exceptions_have_one_home():
    assert issubclass(svmtune.exceptions.ConvergenceWarning, sklearn.exceptions.ConvergenceWarning)
    for attr in svmtune.exceptions.__all__:
        obj = getattr(svmtune.exceptions, attr)
        assert obj.__module__ == "svmtune.exceptions"
    # no other module defines a public exception or warning class of its own (private ones
    # that never leave their module, e.g. a search's stop signal, may)
    defined = []
    for m in _all_modules():
        module = importlib.import_module(m)
        for attr, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == m
                and not attr.startswith("_")
                and m != "svmtune.exceptions"
            ):
                defined.append(f"{m}.{attr}")
    assert not defined, f"exception classes outside svmtune.exceptions: {defined}"


def test_the_package_says_it_is_typed():
    """PEP 561: the installed package holds ``py.typed`` (package data, so the wheel ships
    it: ``.ci/light_install.sh`` checks the installed wheel), and type checkers read the
    annotations of the public API instead of ignoring svmtune."""
    assert (Path(svmtune.__file__).parent / "py.typed").is_file()
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["svmtune"]
