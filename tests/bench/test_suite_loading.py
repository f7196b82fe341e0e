"""Suites by name or path (svmtune.bench.suite.get_suite): the package's quick suite, suite
files found in a ``benchmarks/suites`` directory above the current directory or named by
``$SVMTUNE_SUITES``, and their helper modules imported relatively."""

from __future__ import annotations

import os
import textwrap

import pytest
from click.testing import CliRunner

from svmtune.bench.suite import (
    SUITES_ENV,
    available_suites,
    get_suite,
    suite_dirs,
    suite_module,
)
from svmtune.bench.suites.quick import SUITE as QUICK
from svmtune.cli._bench import bench

SUITE_FILE = """
from svmtune.bench.suite import MethodSpec, Protocol, Suite, Task

from ._helper import TASK_NAME

SUITE = Suite(
    name="{name}",
    description="a suite file outside the package",
    tasks=[Task(TASK_NAME, "iris")],
    methods=[MethodSpec("default", "default")],
    protocol=Protocol(kind="split", n_repeats=1, test_size=0.3),
)
"""


def _suites(root, name="my-suite", stem="my_suite"):
    d = root / "benchmarks" / "suites"
    d.mkdir(parents=True)
    (d / f"{stem}.py").write_text(textwrap.dedent(SUITE_FILE.format(name=name)))
    (d / "_helper.py").write_text('TASK_NAME = "iris-task"\n')
    (d / "no_suite.py").write_text("X = 1\n")
    return d


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A directory tree with benchmarks/suites, the current directory below its root."""
    d = _suites(tmp_path)
    (tmp_path / "deep" / "er").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "deep" / "er")
    monkeypatch.delenv(SUITES_ENV, raising=False)
    return d


def test_quick_ships_with_the_package(repo):
    assert get_suite("quick") is QUICK


def test_a_suite_by_name_from_the_directories_above(repo):
    assert suite_dirs()[0].resolve() == repo.resolve()
    suite = get_suite("my-suite")
    assert suite.name == "my-suite" and [t.name for t in suite.tasks] == ["iris-task"]
    assert get_suite("my_suite") is suite  # "-" stands for "_"; imported once
    assert get_suite(str(repo / "my_suite.py")) is suite  # the same file by path
    assert suite_module("_helper").TASK_NAME == "iris-task"
    names = available_suites()
    assert "my-suite" in names and "quick" in names and "no-suite" in names
    assert not any(n.startswith("_") or n.startswith("-") for n in names)


def test_unknown_names_say_where_they_were_looked_for(repo):
    with pytest.raises(ValueError, match="unknown suite 'nope'") as err:
        get_suite("nope")
    msg = str(err.value)
    assert str(repo) in msg and SUITES_ENV in msg and "my-suite" in msg
    with pytest.raises(ValueError, match="defines no SUITE"):
        get_suite("no-suite")
    with pytest.raises(ValueError, match="not a Python file"):
        get_suite(str(repo / "missing.py"))


def test_suite_directories_from_the_environment(tmp_path, monkeypatch):
    other = _suites(tmp_path / "elsewhere", name="env-suite", stem="env_suite")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(SUITES_ENV, os.pathsep.join([str(other), str(tmp_path / "absent")]))
    assert suite_dirs() == [other]
    assert get_suite("env-suite").name == "env-suite"
    monkeypatch.delenv(SUITES_ENV)
    with pytest.raises(ValueError, match="unknown suite 'env-suite'"):
        get_suite("env-suite")
    assert get_suite("env-suite", search_from=other).name == "env-suite"


@pytest.mark.parametrize("how", ["name", "path"])
def test_svmtune_bench_runs_a_suite_file_by_name_or_path(repo, tmp_path, how):
    suite = "my-suite" if how == "name" else str(repo / "my_suite.py")
    args = ["--suite", suite, "--out", str(tmp_path / "res"), "--no-progress", "--no-entropy"]
    r = CliRunner().invoke(bench, args)
    assert r.exit_code == 0, r.output
    assert "1 run (1 ok" in r.output
    assert (tmp_path / "res" / "my-suite" / "results.jsonl").is_file()


def test_svmtune_bench_unknown_suite_is_a_usage_error(repo, tmp_path):
    r = CliRunner().invoke(bench, ["--suite", "nope", "--out", str(tmp_path / "res")])
    assert r.exit_code == 2 and "unknown suite 'nope'" in r.output and str(repo) in r.output
