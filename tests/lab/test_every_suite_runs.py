"""Every suite of the repository runs from the repository: ``svmtune bench --suite <name>``
(and by the suite file's path) with one task and one method, its smallest task and SVC()."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from svmtune.bench.suite import available_suites, get_suite, suite_dirs
from svmtune.cli._bench import bench
from svmtune.datasets.registry import manifest

REPO_SUITES = suite_dirs()[0] if suite_dirs() else None
NAMES = [n for n in available_suites() if n != "quick"]


def test_the_repository_suites_are_found():
    assert REPO_SUITES is not None and REPO_SUITES.parts[-2:] == ("benchmarks", "suites")
    assert NAMES == ["esdr-paper", "ld-paper", "rbsvm-paper", "span-paper", "ss-paper"]


def _smallest_task(suite) -> str:
    sizes = manifest()
    return min(suite.tasks, key=lambda t: (sizes[t.dataset].n, t.name)).name


def _default_label(suite) -> str:
    return suite.yardstick_labels()["default"]


@pytest.mark.parametrize("name", ["quick", *NAMES])
@pytest.mark.parametrize("how", ["name", "path"])
def test_every_suite_runs_one_task_and_one_method(name, how, tmp_path):
    suite = get_suite(name)
    arg = (
        name
        if how == "name" or name == "quick"
        else str(REPO_SUITES / f"{name.replace('-', '_')}.py")
    )
    task, method = _smallest_task(suite), _default_label(suite)
    out = tmp_path / "res"
    args = ["--suite", arg, "--tasks", task, "--methods", method, "--max-cells", "1"]
    r = CliRunner().invoke(bench, [*args, "--out", str(out), "--no-progress", "--no-experiments"])
    assert r.exit_code == 0, r.output
    assert "1 run (1 ok, 0 errors)" in r.output
    rows = [json.loads(line) for line in (out / name / "results.jsonl").read_text().splitlines()]
    assert [(row["suite"], row["task"], row["method"]) for row in rows] == [(name, task, method)]
    assert rows[0]["status"] == "ok" and len(rows[0]["dataset_version"]) == 64
