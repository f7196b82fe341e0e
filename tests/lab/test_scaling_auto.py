"""``benchmarks/scaling_auto.py`` end to end on a tiny configuration: every cell runs in its
own process and is stored with the fields the table needs, a rerun skips stored cells, the
table names every cell, and a method that outlives its time limit is stored as a timeout.

The script's command line runs in this process (``main(argv)``); its cells are the
subprocesses the script starts, as in a real run."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
FIELDS = {
    "key", "set", "size", "method", "seed", "data_version", "n_train", "n_test", "d",
    "classes", "accuracy", "selection_s", "final_fit_s", "fit_wall_s", "cost_s", "ref_fit_s",
    "ref_status", "svc_units", "peak_rss_mib", "machine", "versions", "timestamp", "status",
    "timeout_s", "n_svm_fits",
}  # fmt: skip
MACHINE = {"platform", "cpu_count", "loadavg_start", "loadavg_end", "blas"}
TINY = ["--sets", "spambase", "--sizes", "300", "--seeds", "0"]


@pytest.fixture
def script(monkeypatch):
    """The script's ``main``; its cells import svmtune from this checkout."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # its table module
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    spec = importlib.util.spec_from_file_location("scaling_auto", BENCHMARKS / "scaling_auto.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_cells_are_stored_resumed_and_tabulated(script, tmp_path):
    out = tmp_path / "results"
    run = ["run", *TINY, "--methods", "default,auto,halving", "--timeout", "120"]
    script([*run, "--out", str(out)])
    rows = _rows(out)
    assert sorted(row["method"] for row in rows) == ["auto", "default", "halving"]
    for row in rows:
        assert row["status"] == "ok", row.get("message")
        assert FIELDS <= set(row), FIELDS - set(row)
        assert MACHINE <= set(row["machine"])
        assert (row["set"], row["n_train"], row["classes"]) == ("spambase", 300, 2)
        assert 0.5 < row["accuracy"] <= 1.0
        assert row["cost_s"] == row["selection_s"] + row["final_fit_s"]
        assert row["svc_units"] == row["cost_s"] / row["ref_fit_s"]
    by = {row["method"]: row for row in rows}
    assert by["default"]["svc_units"] == 1.0 and by["default"]["n_svm_fits"] == 1
    assert {"info", "history", "final_model"} <= set(by["auto"]["details"])
    # held out: the stratified 30 % of spambase's 4,601 rows, the same for every method
    assert {row["n_test"] for row in rows} == {1381}
    assert len({json.dumps(row["data_version"], sort_keys=True) for row in rows}) == 1

    script([*run, "--out", str(out)])  # resumed: nothing left to run
    assert len(_rows(out)) == 3

    md, png = tmp_path / "t.md", tmp_path / "t.png"
    script(["table", "--out", str(out), "--md", str(md), "--png", str(png)])
    text = md.read_text()
    (line,) = [ln for ln in text.splitlines() if ln.startswith("| spambase | 300 | 1,381 | 0 |")]
    for row in rows:
        assert f"| {100 * row['accuracy']:.2f} |" in line
        assert f"| {row['svc_units']:.1f} |" in line
    assert "Mean accuracy over the 1 cells where every method finished" in text
    assert png.stat().st_size > 0


def test_a_method_over_its_time_limit_is_stored_as_a_timeout(script, tmp_path, capsys):
    out = tmp_path / "results"
    run = ["run", "--sets", "spambase", "--sizes", "600,300", "--seeds", "0"]
    run += ["--methods", "halving", "--timeout", "0.05", "--skip-after-timeout"]
    script([*run, "--out", str(out)])
    (row,) = _rows(out)  # 300 rows first; 600 is not run once 300 timed out
    assert row["status"] == "timeout"
    assert row["cost_s"] >= 0.05 and row["message"] == "could not finish in 0.05 s"
    assert "accuracy" not in row and "svc_units" not in row
    assert row["n_train"] == 300  # the data were loaded: the limit counts the method only
    md = tmp_path / "t.md"
    script(["table", "--out", str(out), "--md", str(md), "--png", str(tmp_path / "t.png")])
    assert "| spambase | 300 | 1,381 | 0 | - | > 0.05 (timeout) | - |" in md.read_text()
    assert "spambase 600 halving seed=0: not run (timed out at n = 300)" in capsys.readouterr().out
