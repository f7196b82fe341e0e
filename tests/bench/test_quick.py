"""The quick suite, in miniature (2 tasks x 3 methods, tiny budgets) on the bundled data, and
the ``svmtune bench`` / ``svmtune report`` commands."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from click.testing import CliRunner

from svmtune.bench.report import build_report
from svmtune.bench.runner import run_suite
from svmtune.bench.suite import MethodSpec, Protocol, get_suite
from svmtune.bench.suites.quick import SUITE
from svmtune.cli._bench import bench, report
from svmtune.methods.base import METHODS


def test_quick_suite_lists_every_registered_method():
    assert get_suite("quick") is SUITE
    assert {m.method for m in SUITE.methods} == set(METHODS)
    yard = SUITE.yardstick_labels()
    grid = next(m for m in SUITE.methods if m.label == yard["grid"])
    assert grid.method == "grid" and grid.params["n_splits"] == 10
    assert all(t.subsample is None or t.subsample <= 600 for t in SUITE.tasks)


def _mini():
    tasks = [replace(t, subsample=80) for t in SUITE.tasks if t.name in ("iris", "breast_cancer")]
    tiny_grid = {"log2_sigma": (-1.0, 1.0, 1.0), "log2_C": (0.0, 1.0, 1.0), "n_splits": 10}
    return replace(
        SUITE,
        name="quick-mini",
        tasks=tasks,
        methods=[
            MethodSpec("default", "default"),
            MethodSpec("grid-10fold", "grid", tiny_grid),
            MethodSpec("random", "random", {"n_iter": 3, "n_splits": 3}),
        ],
        protocol=Protocol(kind="split", n_repeats=1, test_size=0.3),
    )


def test_quick_suite_in_miniature(tmp_path):
    mini = _mini()
    summary = run_suite(mini, tmp_path, progress=False)
    assert (summary.n_cells, summary.n_ok) == (6, 6)
    rows = [
        json.loads(x) for x in (tmp_path / "quick-mini" / "results.jsonl").read_text().splitlines()
    ]
    assert {r["preprocess"] for r in rows if r["task"] == "breast_cancer"} == {"auto"}
    assert all(re.fullmatch(r"[0-9a-f]{64}", r["dataset_version"]) for r in rows)
    sections = build_report(tmp_path, md=tmp_path / "R.md", suites={"quick-mini": mini})
    text = (tmp_path / "R.md").read_text()
    # accuracy and cost relative to the 10-fold grid search and to SVC() on every task
    for title in (
        "Accuracy − grid search (pp)",
        "Selection time ÷ grid-search selection time",
        "Accuracy − SVC() defaults (pp), same splits",
        "Selection time ÷ one SVC() fit, same splits",
    ):
        table = next(t for s in sections for t in s.tables if t.title == title)
        assert table.columns == ["method", "breast_cancer", "iris"]
        assert len(table.rows) == 3
        assert all(cell != "—" and cell != "not run" for r in table.rows for cell in r[1:])
    assert "quick_accuracy_by_method.png" in text  # the suite's own figure


def test_cli_bench_and_report(tmp_path):
    runner = CliRunner()
    out = tmp_path / "res"
    args = ["--suite", "quick", "--out", str(out), "--tasks", "iris", "--methods", "default"]
    res = runner.invoke(bench, [*args, "--max-cells", "1", "--no-progress", "--no-entropy"])
    assert res.exit_code == 0, res.output
    assert "1 run (1 ok, 0 errors)" in res.output and "1 left" in res.output
    rows = [json.loads(x) for x in (out / "quick" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["status"] == "ok" and rows[0]["task"] == "iris"

    md, html = tmp_path / "REPORT.md", tmp_path / "report.html"
    res = runner.invoke(report, [str(out), "--md", str(md), "--html", str(html)])
    assert res.exit_code == 0, res.output
    text = md.read_text()
    assert "### Task `iris`" in text and "not run" in text
    assert html.read_text().startswith("<!DOCTYPE html>")

    bad = runner.invoke(bench, ["--suite", "nope", "--out", str(out)])
    assert bad.exit_code == 2 and "unknown suite 'nope'" in bad.output and "quick" in bad.output
    bad = runner.invoke(bench, [*args[:4], "--tasks", "atlantis", "--no-progress"])
    assert bad.exit_code == 1 and "unknown tasks ['atlantis']" in bad.output
    bad = runner.invoke(report, [str(out)])
    assert bad.exit_code == 2 and "--html" in bad.output
    bad = runner.invoke(report, [str(tmp_path / "missing"), "--md", str(md)])
    assert bad.exit_code == 2
