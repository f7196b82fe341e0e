"""``benchmarks/rbsvm_time_ratio.py``: issue #3's time ratio measured in one run."""

from __future__ import annotations

import json

import pytest

from ._scripts import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("rbsvm_time_ratio")


def _rec(task, split, method, sel, stored=None, same=True):
    return {
        "key": f"{task}/{split}/{method}",
        "task": task,
        "split": split,
        "method": method,
        "selection_time": sel,
        "stored_selection_time": stored,
        "same_choice_as_stored": same,
        "machine": {"platform": "test-box"},
    }


def test_table_divides_times_of_the_same_fold_and_judges_the_largest(script, tmp_path):
    label = script.LABEL_NONSV_LABEL
    recs = [
        _rec("hepatitis", 0, "GridSearch", 4.0, stored=40.0),
        _rec("hepatitis", 0, "RBSVM", 0.1, stored=0.2),
        _rec("hepatitis", 0, label, 0.1, same=False),
        _rec("cmc", 0, "GridSearch", 100.0),
        _rec("cmc", 0, "RBSVM", 13.0),
        _rec("cmc", 0, label, 3.0),
        _rec("cmc", 1, "RBSVM", 1.0),  # no grid on this fold: not in the table
        _rec("thyroid", 0, "GridSearch", 10.0),
        _rec("thyroid", 0, "RBSVM", 0.2),
        _rec("thyroid", 1, "GridSearch", 30.0),
        _rec("thyroid", 1, "RBSVM", 1.8),  # per fold 0.02 and 0.06; means 1.0 / 20.0 = 0.05
    ]
    out = tmp_path / "ratio.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in recs))
    md = script.table(out)
    assert "| hepatitis | 0 | 4.0 | 0.100 | 0.0250 | 0.0050 | 0.100 | 0.0250 | — |" in md
    assert "no: [True, False, True]" in md  # the variant chose otherwise than stored
    assert "| cmc | 0 | 100.0 | 13.000 | 0.1300 |" in md and "| cmc | 1 |" not in md
    assert "| thyroid | 1 | 30.0 | 1.800 | 0.0600 |" in md
    assert "- RBSVM: largest ratio of one fold 0.1300 (at most 0.05: NO)" in md
    assert "largest ratio of a task's mean times 0.1300 (cmc, 1 folds" in md
    assert f"- {label}: largest ratio of one fold 0.0300 (at most 0.05: yes)" in md
