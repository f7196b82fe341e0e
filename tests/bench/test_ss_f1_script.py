"""``benchmarks/ss_f1_definitions.py``: every binary F1 from a cell's stored scores."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from ._scripts import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("ss_f1_definitions")


def test_the_other_class_f1_from_accuracy_f1_and_size_is_sklearns(script):
    rng = np.random.default_rng(0)
    for trial in range(200):
        n = int(rng.integers(5, 60))
        y = rng.integers(0, 2, n)
        pred = np.where(rng.random(n) < rng.random(), y, 1 - y)
        if trial % 10 == 0:
            pred[:] = 0  # the second class never predicted: its F1 is 0
        if trial % 10 == 1:
            pred = y.copy()  # no error
        acc = accuracy_score(y, pred)
        f1 = f1_score(y, pred, pos_label=1, zero_division=0.0)
        got = script.binary_f1s(acc, f1, n, majority_is_second=bool(y.mean() > 0.5))
        first = f1_score(y, pred, pos_label=0, zero_division=0.0)
        assert got["first"] == pytest.approx(first, abs=1e-12)
        assert got["macro"] == pytest.approx(
            f1_score(y, pred, average="macro", labels=[0, 1], zero_division=0.0), abs=1e-12
        )
        assert got["majority"] == (got["second"] if y.mean() > 0.5 else got["first"])
        assert got["accuracy"] == acc


def test_tables_on_stored_like_rows(script, tmp_path):
    """A synthetic store of two tasks (one binary, one multiclass) through the script."""
    import json

    cells = {  # (task, method): (accuracy, F1, test size)
        ("ilpd", "S&S-RB"): (0.7, 0.1, 100),
        ("ilpd", "CV (F1)"): (0.68, 0.45, 100),
        ("iris", "S&S-RB"): (0.9, 0.9, 30),
        ("iris", "CV (F1)"): (0.9, 0.9, 30),
    }
    rows = [
        dict(key=f"{task}{split}{method}", kind="cell", status="ok", task=task,
             method=method, split=split, accuracy=acc, f1=f1, n_test=n)
        for split in range(2)
        for (task, method), (acc, f1, n) in cells.items()
    ]  # fmt: skip
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    md = tmp_path / "out.md"
    script.main(["--results", str(path), "--md", str(md)])
    text = md.read_text()
    # second-label F1: ilpd (0.1 - 0.45) and iris 0, mean over 2 tasks
    assert "| second | -17.50 (2 tasks) |" in text
    first = {m: script.f1_first(a, f, 100) for m, a, f in (("S", 0.7, 0.1), ("C", 0.68, 0.45))}
    assert f"| first | {100 * (first['S'] - first['C']) / 2:+.2f} (2 tasks) |" in text
    assert "| ilpd | second | 45.00 / 86.31 | not run / 87.35 | 10.00 / 88.45 |" in text
