"""The report sections of the repository's benchmark scripts
(benchmarks/suites/_report_sections.py), appended by ``svmtune report``."""

from __future__ import annotations

import json

from svmtune.bench.report import build_report, directory_hooks
from svmtune.bench.suite import suite_module

R = suite_module("_report_sections")
scaling_section = R.scaling_section


def test_the_suite_directory_hook_is_found_from_the_results_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not in the repository: found from the results directory
    monkeypatch.delenv("SVMTUNE_SUITES", raising=False)
    results = R.__file__.rsplit("/suites/", 1)[0] + "/results"
    assert [h.__name__ for h in directory_hooks(results)] == ["scaling_report"]
    assert directory_hooks(tmp_path) == []


def test_scaling_section_from_the_scaling_scripts_files(tmp_path):
    sc = tmp_path / "res" / "scaling"
    sc.mkdir(parents=True)
    cell = {
        "dataset": "ijcnn1",
        "method": "rbsvm_lowrank",
        "tag": "",
        "selection_time_s": 12.5,
        "selection_cpu_s": 10.0,
        "peak_rss_selection_mb": 300.0,
        "test_accuracy": 0.97654,
        "params": {"sigma": 4.0, "C": 256.0},
        "info": {"rank": 382, "n_refresh": 2},
        "extrapolated": False,
    }
    (sc / "ijcnn1_n5000_rbsvm_lowrank.json").write_text(json.dumps({**cell, "n": 5000}))
    variant = {**cell, "n": 5000, "tag": "_label", "nonsupport": "label", "log2_C_box": [-8, 14]}
    (sc / "ijcnn1_n5000_rbsvm_lowrank_label.json").write_text(json.dumps(variant))
    grid = {"dataset": "ijcnn1", "n": 5000, "method": "grid", "extrapolated": True}
    (sc / "ijcnn1_n5000_grid.json").write_text(json.dumps({**grid, "selection_time_s": 6641.3}))
    probe = {"dataset": "ijcnn1", "n": 5000, "sigma": 3.32, "C": 16.0, "rank": 900}
    probe.update(rank_residual=0.001, J_over_n=0.0716, loo_error=0.0177, exact_J_over_n=0.0704)
    (sc / "probe_ijcnn1_n5000.jsonl").write_text(json.dumps(probe) + "\n")
    shift = {"dataset": "ijcnn1", "n": 5000, "n_test": 900, "positive_rate_train": 0.097}
    shift["positive_rate_test"] = 0.095
    shift["auc"] = {"all": {"auc": 0.98, "auc_std": 0.001, "n_each": 900}}
    shift["feature_auc"] = [{"feature": 11, "auc": 0.817, "mean_shift_sd": 0.21}]
    point = {"sigma": 3.32, "C": 1.0, "cv_shuffled": 0.981, "cv_blocked": 0.9677}
    shift["points"] = [{**point, "test_accuracy": 0.9873}]
    (sc / "shift_ijcnn1_n5000.json").write_text(json.dumps(shift))
    rbsvm = {"log2_sigma": 2.58, "log2_C": 8.0, "estimate": 0.0196, "selection_s": 57.6}
    blocked = {"n": 5000, "n_test": 900, "block": 1000, "n_groups": 5}
    blocked.update(rows={**rbsvm, "test_accuracy": 0.9828}, svc={"test_accuracy": 0.9873})
    blocked["blocks"] = {**rbsvm, "estimate": 0.0305, "test_accuracy": 0.9829}
    (sc / "ijcnn1_blocked.json").write_text(json.dumps(blocked))
    build_report(tmp_path / "res", md=tmp_path / "r.md")
    text = (tmp_path / "r.md").read_text()
    assert "## Scaling:" in text
    assert "| ijcnn1 | 5000 | rbsvm_lowrank | 12.500 | 10.000 | 300.000 | 0.9765 | 4.000 |" in text
    assert "| 4.000 | 256.000 | 382 | 2 | — |" in text  # rank, landmark re-choices, options
    assert "| ijcnn1 | 5000 | rbsvm_lowrank_label | 12.500 |" in text
    assert "| 382 | 2 | log2 C in [-8, 14], nonsupport=label |" in text
    assert "| 6641.300 (extrapolated) | — | — | — | — | — | — | — | — |" in text
    assert "| ijcnn1 | 5000 | grid | 6641.300 (extrapolated) |" in text
    probe_row = "| ijcnn1 | 5000 | 3.320 | 16.000 | 900 | 0.0010 | 0.0716 | 0.0177 | 0.0704 | — |"
    assert probe_row in text
    # the shift probe's two tables
    shift_row = "| ijcnn1 | 5000 | 900 | 0.0970 / 0.0950 | 0.980 ± 0.001 (900) | — | — |"
    assert shift_row + " 11: 0.817 (+0.21 sd) |" in text
    assert "| ijcnn1 | 5000 | 3.320 | 1.000 | 0.9810 | 0.9677 | 0.9873 |" in text
    # benchmarks/ijcnn1_blocked.py's single rows vs blocks (not a scaling cell)
    assert "| rbsvm_lowrank, leave-one-row-out | 2.580 | 8.000 | 0.0196 | 57.600 | 0.9828 |" in text
    assert "| rbsvm_lowrank, leave-one-block-out | 2.580 | 8.000 | 0.0305 |" in text
    assert "blocks of 1,000 consecutive rows (5 groups)" in text
    # no cell file: no section
    assert scaling_section(tmp_path / "nothing") is None
