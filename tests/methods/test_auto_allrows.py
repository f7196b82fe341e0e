"""auto's last stage on all rows: C refined at the chosen width on the Nystroem kernel."""

from __future__ import annotations

import numpy as np
import pytest

from svmtune.loo.closed_form import loo_error_rate
from svmtune.loo.rbsvm_lowrank import lowrank_rbsvm_objective
from svmtune.methods._auto_allrows import C_FACTOR, MAX_RESIDUAL, ORIGIN, refine_C
from svmtune.methods._auto_referee import Referee
from svmtune.methods._auto_stage import candidate
from svmtune.methods._fidelity import (
    ALL_ROWS_PATH,
    GROWTH,
    default_budget,
    plan_stages,
)
from svmtune.methods._lowrank_search import landmarks
from svmtune.methods.auto import Auto
from svmtune.methods.base import ovr_tasks


def _problem(n=900, d=3, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] + np.sin(2 * X[:, 1]) + 0.5 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


@pytest.mark.parametrize("C0", [2.0**-6, 2.0**6])
def test_every_candidate_is_the_lowrank_loo_at_its_C_and_C_moves_downhill(C0):
    """Each candidate's per-row losses are the low-rank L2-SVM's leave-one-out outputs at its
    own C on the same landmarks (computed again here, one evaluation per C), C moves by
    C_FACTOR in the direction the criterion falls, and the search stops past its minimum."""
    X, y = _problem()
    tasks = ovr_tasks(y)
    sigma = 2.0
    res = refine_C(
        X, y, tasks, None, None, candidate("carried", sigma, C0, 0, 0.0),
        evals=4, rank=80, rank_tol=1e-4, log2_C=(-8.0, 8.0),
    )  # fmt: skip
    assert res.skipped is None and res.residual <= MAX_RESIDUAL
    Cs = [c.C for c in res.candidates]
    assert Cs[0] == C0 and 1 < len(Cs) <= 4
    ratios = np.array(Cs[1:]) / np.array(Cs[:-1])
    assert np.allclose(ratios, C_FACTOR) or np.allclose(ratios, 1 / C_FACTOR)
    _, _, D2_nm, D2_mm = landmarks(X, sigma, rank=80, rank_tol=1e-4)
    # the direction is downhill of the criterion at the carried C (its derivative in log C)
    grad = lowrank_rbsvm_objective(D2_nm, D2_mm, tasks, np.log([sigma, C0])).grad[1]
    assert (ratios > 1).all() if grad < 0 else (ratios < 1).all()
    values = []
    for c in res.candidates:
        obj = lowrank_rbsvm_objective(D2_nm, D2_mm, tasks, np.log([sigma, c.C]), gradient=False)
        assert c.estimates["l2"] == pytest.approx(loo_error_rate(y, obj.loo))
        assert c.rank == res.rank and c.n_svm_fits == len(tasks)
        values.append(obj.value)
    # it stops at the first rise of the criterion, at the evaluations' end or at the box
    assert all(b < a for a, b in zip(values[:-2], values[1:-1]))
    on_box = abs(abs(np.log2(Cs[-1])) - 8.0) < 1e-9
    assert len(Cs) == 4 or values[-1] >= values[-2] or on_box
    assert all(c.origin == ORIGIN for c in res.candidates[1:])


def test_the_search_stays_in_the_box_and_counts_its_evaluations():
    X, y = _problem(n=400, n_classes=3)
    res = refine_C(
        X, y, ovr_tasks(y), None, None, candidate("carried", 2.0, 2.0**7, 0, 0.0),
        evals=3, rank=50, rank_tol=1e-4, log2_C=(-8.0, 8.0),
    )  # fmt: skip
    assert len(res.candidates) <= 3
    assert all(2.0**-8 <= c.C <= 2.0**8 * (1 + 1e-12) for c in res.candidates)
    assert sum(c.n_svm_fits for c in res.candidates) == 3 * len(res.candidates)


def test_a_width_the_landmarks_cannot_hold_keeps_the_carried_C():
    """Too few landmarks for a narrow width on many features: nothing is scored."""
    X, y = _problem(n=600, d=12)
    carried = candidate("carried", 0.5, 3.0, 0, 0.0)
    res = refine_C(
        X, y, ovr_tasks(y), None, None, carried,
        evals=4, rank=20, rank_tol=1e-4, log2_C=(-8.0, 8.0),
    )  # fmt: skip
    assert res.residual > MAX_RESIDUAL
    assert res.candidates == [carried] and carried.estimates == {}
    assert "carried" in res.skipped and f"{res.rank} landmarks" in res.skipped


def test_weights_and_groups_reach_the_closed_form():
    """Weights as multiplicities: doubling a row's weight is the criterion of the row twice
    at the carried point; with groups the leave-one-group-out outputs are scored."""
    X, y = _problem(n=300)
    w = np.ones(len(y))
    w[:50] = 2.0
    groups = np.arange(len(y)) // 3
    kw = dict(evals=2, rank=40, rank_tol=1e-4, log2_C=(-8.0, 8.0))
    plain = refine_C(X, y, ovr_tasks(y), w, None, candidate("c", 2.0, 1.0, 0, 0.0), **kw)
    grouped = refine_C(X, y, ovr_tasks(y), w, groups, candidate("c", 2.0, 1.0, 0, 0.0), **kw)
    _, _, D2_nm, D2_mm = landmarks(X, 2.0, rank=40, rank_tol=1e-4)
    for res, g in ((plain, None), (grouped, groups)):
        obj = lowrank_rbsvm_objective(
            D2_nm, D2_mm, ovr_tasks(y), np.log([2.0, 1.0]), sample_weight=w, groups=g,
            gradient=False,
        )  # fmt: skip
        assert res.candidates[0].estimates["l2"] == pytest.approx(loo_error_rate(y, obj.loo, w))
    assert not np.array_equal(
        plain.candidates[0].losses["l2"][1], grouped.candidates[0].losses["l2"][1]
    )


def test_the_referee_keeps_the_carried_C_unless_another_is_better():
    X, y = _problem(n=700, seed=4)
    res = refine_C(
        X, y, ovr_tasks(y), None, None, candidate("carried", 2.0, 2.0**-7, 0, 0.0),
        evals=4, rank=60, rank_tol=1e-4, log2_C=(-8.0, 8.0),
    )  # fmt: skip
    ref = Referee(0.0, False, 1.645, None, None)
    best = ref.decide(res.candidates, ["l2"])
    errs = [c.estimates["l2"] for c in res.candidates]
    assert best.estimates["l2"] == min(errs)
    assert res.candidates[0].decided == "incumbent"
    if errs[0] == min(errs):
        assert best is res.candidates[0]


def test_the_plan_ends_on_all_rows_where_the_stages_subsample():
    """The all-rows stage is planned after subsampled stages (its work kept first), never
    where the first stage takes more than n / GROWTH^2 rows; the default budget pays for
    it."""
    n, d = 100000, 10
    plan = plan_stages(n, d, 1, budget=default_budget(n, d, all_rows_evals=4), max_eval=10,
                       rank=500, max_exact=5000, all_rows_evals=4)  # fmt: skip
    last = plan.stages[-1]
    assert last.path == ALL_ROWS_PATH and last.size == n
    assert last.steps + last.scores == 4 and last.cost > 0
    assert plan.cost <= plan.budget + 1e-9
    without = plan_stages(n, d, 1, budget=default_budget(n, d), max_eval=10, rank=500,
                          max_exact=5000)  # fmt: skip
    assert all(s.path != ALL_ROWS_PATH for s in without.stages)
    assert [s.size for s in without.stages] == [s.size for s in plan.stages[:-1]]
    assert plan.stages[0].size * GROWTH**2 <= n
    for m in (800, 20000):  # all rows in the first stage; a first stage of over n / 16 rows
        p = plan_stages(m, d, 1, budget=default_budget(m, d, all_rows_evals=4), max_eval=10,
                        rank=500, max_exact=5000, all_rows_evals=4)  # fmt: skip
        assert all(s.path != ALL_ROWS_PATH for s in p.stages)
        assert p.budget == default_budget(m, d)


def test_auto_refines_C_on_all_rows_and_chooses_a_point_it_scored():
    assert Auto().all_rows_evals == 0  # off by default (the option's docstring)
    X, y = _problem(n=6000, d=2, seed=1)
    sel = Auto(rank=60, budget=1.2, all_rows_evals=4).select(X, y, random_state=0)
    plan = sel.info["plan"]
    assert plan[-1]["path"] == ALL_ROWS_PATH
    last = [c for c in sel.history if c["stage"] == len(plan) - 1]
    assert 1 <= len(last) <= plan[-1]["steps"] + plan[-1]["scores"]
    assert all(c["rows"] == len(y) and c["estimate_l2"] is not None for c in last)
    assert len({c["sigma"] for c in last}) == 1
    chosen = next(c for c in sel.history if c["chosen"])
    assert chosen in last and sel.params["C"] == pytest.approx(chosen["C"])
    assert sel.params["sigma"] == pytest.approx(chosen["sigma"])
    # the carried point is the incumbent: the choice is it, or better on all rows
    assert chosen["estimate_l2"] <= last[0]["estimate_l2"]
