"""``svmtune report benchmarks/results`` regenerates the committed ``benchmarks/REPORT.md``
exactly, and the same figure files: the report is generated from the stored results, never
edited by hand."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from svmtune.cli._bench import report

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_report_md_regenerates_identically(tmp_path, monkeypatch):
    monkeypatch.chdir(BENCHMARKS.parent)  # the report names the results directory as given
    md, html = tmp_path / "REPORT.md", tmp_path / "report.html"
    r = CliRunner().invoke(report, ["benchmarks/results", "--md", str(md), "--html", str(html)])
    assert r.exit_code == 0, r.output
    assert md.read_text() == (BENCHMARKS / "REPORT.md").read_text()
    made = sorted(p.name for p in (tmp_path / "REPORT_files").iterdir())
    assert made == sorted(p.name for p in (BENCHMARKS / "REPORT_files").iterdir())
