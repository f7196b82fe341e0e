"""``svmtune bench`` option parsing (:mod:`svmtune.bench.cli`)."""

from __future__ import annotations

import pytest

from svmtune.bench.cli import _split_list
from svmtune.bench.suite import get_suite


def test_split_list_keeps_commas_inside_parentheses():
    assert _split_list(None) is None
    assert _split_list(" , ") is None
    assert _split_list("RBSVM, default") == ["RBSVM", "default"]
    assert _split_list("Span-rule (sigma, C),5-fold CV (sigma, C)") == [
        "Span-rule (sigma, C)",
        "5-fold CV (sigma, C)",
    ]


@pytest.mark.parametrize("suite", ["rbsvm-paper", "span-paper"])
def test_every_method_label_of_a_suite_can_be_selected_alone(suite):
    for m in get_suite(suite).methods:
        assert _split_list(m.label) == [m.label]


def test_rerun_before_reaches_the_runner_and_a_bad_time_is_a_clear_error(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from svmtune.bench import runner
    from svmtune.bench.cli import bench

    seen = {}

    def fake_run_suite(suite, out, **kw):
        seen.update(kw)
        return runner.RunSummary(tmp_path / "results.jsonl", 0, 0)

    monkeypatch.setattr(runner, "run_suite", fake_run_suite)
    args = ["--suite", "quick", "--out", str(tmp_path), "--no-experiments", "--no-progress"]
    ok = CliRunner().invoke(bench, [*args, "--rerun-before", "2026-11-24T01:00:00+00:00"])
    assert ok.exit_code == 0, ok.output
    assert seen["rerun_before"] == "2026-11-24T01:00:00+00:00"
    monkeypatch.undo()
    bad = CliRunner().invoke(bench, [*args, "--rerun-before", "yesterday", "--max-cells", "0"])
    assert bad.exit_code != 0
    assert "ISO 8601" in bad.output


def test_unwritable_out_and_report_paths_are_one_line_errors(tmp_path):
    from click.testing import CliRunner

    from svmtune.bench.cli import bench, report

    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory\n")
    args = ["--suite", "quick", "--out", str(blocker / "sub"), "--max-cells", "0"]
    r = CliRunner().invoke(bench, [*args, "--no-experiments", "--no-progress"])
    assert r.exit_code == 1, r.output
    assert "cannot read or write a file" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(report, [str(tmp_path), "--md", str(blocker / "report.md")])
    assert r.exit_code == 1 and "cannot write the report" in r.output
