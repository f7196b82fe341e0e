"""Wilcoxon signed-rank test against hand computations and the RBSVM paper; tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from svmtune.bench.stats import (
    cells_frame,
    paired_tests,
    relative_table,
    summary_table,
    wilcoxon_signed_rank,
)


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def test_wilcoxon_hand_computation_with_ties_and_zero():
    # differences 5, -2, 0, 3, 3, -1, 7, 2: the zero is dropped (n = 7);
    # |d| sorted: 1 (rank 1), 2, 2 (2.5 each), 3, 3 (4.5 each), 5 (6), 7 (7)
    # R- = rank(-1) + rank(-2) = 1 + 2.5 = 3.5 ; R+ = 6 + 4.5 + 4.5 + 7 + 2.5 = 24.5
    x = np.array([5, -2, 0, 3, 3, -1, 7, 2], float) + 10.0
    y = np.full(8, 10.0)
    r = wilcoxon_signed_rank(x, y)
    assert (r.n, r.n_zero, r.wins, r.losses) == (7, 1, 5, 2)
    assert r.r_plus == 24.5 and r.r_minus == 3.5
    mean = 7 * 8 / 4  # 14
    var = 7 * 8 * 15 / 24 - (2 * (2**3 - 2)) / 48  # two tie groups of size 2
    z = (3.5 - mean) / math.sqrt(var)
    assert r.z == pytest.approx(z, rel=1e-12)
    assert r.p == pytest.approx(2 * _phi(z), rel=1e-12)
    # symmetric: swapping x and y swaps R+ and R-, same z and p
    s = wilcoxon_signed_rank(y, x)
    assert (s.r_plus, s.r_minus, s.z, s.p) == (r.r_minus, r.r_plus, r.z, r.p)


@pytest.mark.parametrize(
    "r_minus_ranks, n_zero, z_paper, p_paper",
    [
        ([], 1, -3.823, 0.00013),  # RBSVM Table IV, RBSVM-GridSearch: R+ 190, R- 0
        ([], 0, -3.919, 0.00009),  # RBSVM-RandomSearch: R+ 210, R- 0
        ([4], 0, -3.771, 0.00016),  # RBSVM-BayesSearch: R+ 206, R- 4
    ],
)
def test_wilcoxon_reproduces_rbsvm_table_iv(r_minus_ranks, n_zero, z_paper, p_paper):
    n = 20 - n_zero
    d = np.arange(1, n + 1, dtype=float)  # distinct |d| = ranks
    d[np.array(r_minus_ranks, int) - 1] *= -1
    d = np.concatenate([d, np.zeros(n_zero)])
    r = wilcoxon_signed_rank(d, np.zeros_like(d))
    assert r.r_minus == sum(r_minus_ranks)
    assert r.r_plus == n * (n + 1) / 2 - sum(r_minus_ranks)
    assert r.z == pytest.approx(z_paper, abs=1e-3)  # the paper prints 3 decimals
    assert r.p == pytest.approx(p_paper, abs=1e-5)


def test_wilcoxon_float_noise_ties_and_degenerate():
    # 0.8 - 0.75 and 0.55 - 0.5 differ in the last bit; they must tie
    r = wilcoxon_signed_rank([0.8, 0.55, 0.9], [0.75, 0.5, 0.7])
    assert r.r_plus == 6.0 and r.r_minus == 0.0
    nothing = wilcoxon_signed_rank([0.5, 0.6], [0.5, 0.6])
    assert (nothing.n, nothing.z, nothing.p) == (0, 0.0, 1.0)
    with pytest.raises(ValueError, match="equal length"):
        wilcoxon_signed_rank([1, 2], [1])
    with pytest.raises(ValueError, match="finite"):
        wilcoxon_signed_rank([1, np.nan], [1, 2])


def _frame():
    rows = []
    # task A: two splits; grid, m; task B: one split
    spec = [
        ("A", 0, "grid", 0.80, 10.0, 0.70, 0.5),
        ("A", 1, "grid", 0.90, 14.0, 0.80, 0.5),
        ("A", 0, "m", 0.85, 1.0, 0.70, 0.5),
        ("A", 1, "m", 0.80, 3.0, 0.80, 1.0),
        ("B", 0, "grid", 0.60, 4.0, 0.60, 0.1),
        ("B", 0, "m", 0.70, 2.0, 0.50, 0.1),
        ("B", 0, "broken", None, None, None, None),
    ]
    for task, split, m, acc, t, dacc, dt in spec:
        rows.append(
            {
                "kind": "cell",
                "suite": "s",
                "task": task,
                "split": split,
                "method": m,
                "status": "ok" if acc is not None else "error: boom",
                "accuracy": acc,
                "f1": acc,
                "selection_time": t,
                "default_accuracy": dacc,
                "default_fit_time": dt,
                "n_svm_fits": 5,
            }
        )
    rows.append({"kind": "experiment", "suite": "s", "key": "e"})
    return cells_frame(rows)


def test_cells_frame_drops_experiments_and_coerces():
    df = _frame()
    assert len(df) == 7 and df["accuracy"].dtype == float
    assert np.isnan(df.loc[df["method"] == "broken", "accuracy"]).all()
    assert cells_frame([]).empty


def test_summary_table():
    t = summary_table(_frame(), metrics=("accuracy", "selection_time")).set_index(
        ["task", "method"]
    )
    assert t.loc[("A", "grid"), "accuracy_mean"] == pytest.approx(0.85)
    assert t.loc[("A", "grid"), "accuracy_std"] == pytest.approx(np.std([0.8, 0.9], ddof=1))
    assert t.loc[("B", "m"), "accuracy_std"] == 0.0 and t.loc[("B", "m"), "n"] == 1
    assert ("B", "broken") not in t.index


def test_relative_table_hand_values():
    rel = relative_table(_frame(), {"grid": "grid"}).set_index(["task", "method"])
    a = rel.loc[("A", "m")]
    assert a["d_acc_grid"] == pytest.approx(((0.85 - 0.80) + (0.80 - 0.90)) / 2)
    assert a["time_ratio_grid"] == pytest.approx(2.0 / 12.0)
    assert a["d_acc_default"] == pytest.approx(((0.85 - 0.70) + (0.80 - 0.80)) / 2)
    assert a["time_ratio_default"] == pytest.approx(((1.0 + 3.0) / 2) / ((0.5 + 1.0) / 2))
    b = rel.loc[("B", "m")]
    assert b["d_acc_grid"] == pytest.approx(0.1) and b["time_ratio_grid"] == pytest.approx(0.5)
    assert rel.loc[("A", "grid"), "d_acc_grid"] == 0.0
    # without a grid method the grid columns stay empty
    no_grid = relative_table(_frame(), {})
    assert no_grid["d_acc_grid"].isna().all()


def test_paired_tests_pairs_over_tasks():
    t = paired_tests(_frame(), {"grid": "grid", "default": "default"})
    vs_grid = t[(t["method"] == "m") & t["reference"].str.startswith("grid")].iloc[0]
    # per-task means: A: m 0.825 vs grid 0.85 (loss), B: 0.70 vs 0.60 (win, larger |d|)
    assert vs_grid["n_tasks"] == 2
    assert (vs_grid["wins"], vs_grid["losses"]) == (1, 1)
    assert (vs_grid["r_plus"], vs_grid["r_minus"]) == (2.0, 1.0)
    vs_svc = t[(t["method"] == "m") & (t["reference"] == "SVC() defaults")].iloc[0]
    # A: 0.825 vs 0.75 ; B: 0.70 vs 0.50 -> two wins
    assert (vs_svc["wins"], vs_svc["losses"], vs_svc["r_minus"]) == (1 + 1, 0, 0.0)
    assert not ((t["method"] == "grid") & t["reference"].str.startswith("grid")).any()
    assert "broken" not in set(t["method"])
    assert isinstance(t, pd.DataFrame)


def test_svc_comparisons_pair_splits_when_a_row_lacks_the_yardstick():
    """A row without SVC()'s accuracy or fit time (an older or hand-edited row) counts for
    neither side of the "same splits" comparisons."""
    df = _frame()
    lacking = (df["task"] == "A") & (df["method"] == "m") & (df["split"] == 1)
    df.loc[lacking, ["default_accuracy", "default_fit_time"]] = np.nan
    rel = relative_table(df, {"grid": "grid"}).set_index(["task", "method"])
    assert rel.loc[("A", "m"), "d_acc_default"] == pytest.approx(0.85 - 0.70)
    assert rel.loc[("A", "m"), "time_ratio_default"] == pytest.approx(1.0 / 0.5)
    t = paired_tests(df, {"grid": "grid", "default": "default"})
    vs_svc = t[(t["method"] == "m") & (t["reference"] == "SVC() defaults")].iloc[0]
    # A: split 0 only, 0.85 vs 0.70; B: 0.70 vs 0.50
    assert vs_svc["mean_diff"] == pytest.approx(((0.85 - 0.70) + (0.70 - 0.50)) / 2)
