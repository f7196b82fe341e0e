"""``benchmarks/rbsvm_objective_grid.py``: the grid of RBSVM's criterion and its markdown."""

from __future__ import annotations

import numpy as np
import pytest

from svmtune.kernels import squared_distances
from svmtune.loo.rbsvm import rbsvm_objective
from svmtune.methods.base import ovr_tasks

from ._scripts import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("rbsvm_objective_grid")


def test_grid_rows_are_sigma_and_columns_C(script):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=30) > 0).astype(int)
    D2 = squared_distances(X)
    grid = np.array([-1.0, 0.0, 2.0])
    J = script.criterion_on_grid(D2, y, grid)
    theta = np.log(2.0) * np.array([2.0, -1.0])  # sigma = 4, C = 1/2
    direct = rbsvm_objective(D2, ovr_tasks(y), theta, gradient=False).value / len(y)
    assert J.shape == (3, 3)
    assert J[2, 0] == pytest.approx(direct, rel=1e-10)
    assert J[2, 0] != pytest.approx(J[0, 2])


def _row(task, split, rel, c_min=8.0):
    return {
        "task": task,
        "split": split,
        "n": 10,
        "J_rbsvm": 0.1 * (1 + rel),
        "log2_sigma_rbsvm": 1.0,
        "log2_C_rbsvm": 8.0,
        "J_grid_min": 0.1,
        "log2_sigma_grid_min": 1.0,
        "log2_C_grid_min": c_min,
        "rel_excess": rel,
    }


def test_render_summarises_the_last_row_of_each_fold(script):
    rows = [_row("a", 0, 0.5), _row("a", 0, -0.01), _row("a", 1, 0.02, c_min=3.0)]
    rows.append(_row("b", 0, 0.0))
    text = script.render(rows)
    assert "Over the 3 (task, fold) pairs" in text
    assert "below the grid minimum on 2 and at most +2.00 % above it (a, fold 1)" in text
    assert "on C = 2^8, the box's upper bound, on 2 of 3" in text
    assert text.count("| a | 0 |") == 1 and "-1.00 %" in text
    assert "No rows." in script.render([])
