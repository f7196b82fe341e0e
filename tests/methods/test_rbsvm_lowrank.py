"""RBSVMLowRank selector: contract, equivalence with RBSVM at full rank, option validation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmtune.lowrank import pivoted_cholesky_landmarks
from svmtune.methods.base import Selection
from svmtune.methods.rbsvm import RBSVM
from svmtune.methods.rbsvm_lowrank import RBSVMLowRank

from ..conftest import make_problem


def _data(n=60, seed=0):
    X, y = make_problem(n, 3, seed)
    return X, (y > 0).astype(int)


def test_full_rank_selection_equals_exact_rbsvm():
    X, y = _data(50, 1)
    opts = dict(start=(1.5, 1.0), max_iter=15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo = RBSVMLowRank(rank=50, rank_tol=1e-12, jitter=0.0, refresh=0, **opts).select(X, y)
        ex = RBSVM(**opts).select(X, y)
    assert lo.params["sigma"] == pytest.approx(ex.params["sigma"], rel=1e-4)
    assert lo.params["C"] == pytest.approx(ex.params["C"], rel=1e-4)
    assert lo.criterion == pytest.approx(ex.criterion, rel=1e-6)
    assert lo.estimate == pytest.approx(ex.estimate)


def test_low_rank_selection_contract_and_determinism():
    X, y = _data(150, 2)
    sel = RBSVMLowRank(rank=20, max_iter=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = sel.select(X, y, random_state=3)
        b = sel.select(X, y, random_state=3)
    assert isinstance(a, Selection)
    assert a.params == b.params
    assert a.params["kernel"] == "rbf" and a.params["sigma"] > 0 and a.params["C"] > 0
    assert 0.0 <= a.estimate <= 1.0 and a.n_svm_fits == len(a.history) >= 1
    assert a.final_model == "l1"
    assert 2 <= a.info["rank"] <= 20 and a.info["n_refresh"] in (0, 1)
    assert all("stage" in h and "rank" in h for h in a.history)


def test_multiclass_and_sample_weight():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(90, 2))
    y = np.digitize(X[:, 0], [-0.4, 0.4])
    w = rng.uniform(0.5, 2.0, size=90)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = RBSVMLowRank(rank=15, max_iter=8).select(X, y, sample_weight=w, random_state=0)
    assert np.isfinite(s.criterion) and 0.0 <= s.estimate <= 1.0


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"rank": 1}, "rank"),
        ({"rank": 2.5}, "rank"),
        ({"rank_tol": 0.0}, "rank_tol"),
        ({"jitter": -1.0}, "jitter"),
        ({"refresh": -1}, "refresh"),
        ({"start_sample": 1}, "start_sample"),
        ({"loss": "hinge"}, "loss"),
        ({"log2_C": (3, 1)}, "log2_C"),
    ],
)
def test_options_are_validated(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RBSVMLowRank(**kwargs)


def test_rejects_non_rbf_kernel():
    X, y = _data(30, 5)
    with pytest.raises(ValueError):
        RBSVMLowRank().select(X, y, kernel="linear")


def test_landmark_refresh_keeps_the_rank():
    """Re-chosen at a wider learned width, the trace rule alone would stop at 3 landmarks
    (the rank-20 problem below); the refresh keeps the previous rank instead, so the refreshed
    search stays where the first stage ended rather than drifting on a coarse kernel."""
    X, y = make_problem(120, 3, 0)
    y = (y > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = RBSVMLowRank(rank=20, max_iter=15, refresh=0).select(X, y, random_state=0)
        both = RBSVMLowRank(rank=20, max_iter=15, refresh=1).select(X, y, random_state=0)
    assert both.info["n_refresh"] == 1 and both.info["rank"] == 20
    coarse, _ = pivoted_cholesky_landmarks(X, both.info["landmark_sigma"], tol=1e-2, max_rank=20)
    assert coarse.size < 20
    assert both.params["sigma"] == pytest.approx(first.params["sigma"], rel=0.05)
    assert both.estimate == pytest.approx(first.estimate)


def test_landmarks_follow_the_search_to_narrower_widths():
    """Checkerboard: the median start (sigma ~ 2) gets 10 landmarks, on which every narrower
    width is coarse.  Without re-choosing them the search ends at sigma 0.23 with 91 % of the
    trace missing there and a LOO error of 0.33; re-chosen where the residual exceeds twice the
    rule, it ends where the exact RBSVM does (LOO error 0.063)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(300, 2))
    y = (np.sin(2 * X[:, 0]) * np.sin(2 * X[:, 1]) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = RBSVM().select(X, y)
        fixed = RBSVMLowRank(rank=200, refresh=0).select(X, y, random_state=0)
        follow = RBSVMLowRank(rank=200).select(X, y, random_state=0)
    assert fixed.info["rank_residual_at_choice"] > 0.5
    assert fixed.estimate > exact.estimate + 0.2
    stops = [h for h in follow.history if h.get("stop_search")]
    assert follow.info["n_refresh"] >= 1 and stops
    assert follow.info["landmark_sigma"] < follow.info["start_sigma"]
    assert all(h["rank_residual"] > 2 * 1e-2 for h in stops)
    assert follow.info["rank_residual_at_choice"] <= 2 * 1e-2
    assert follow.estimate <= exact.estimate + 0.02


def test_random_restarts_survive_landmark_re_choices():
    """A re-choice of the landmarks ends a stage early; the random restarts then run in the
    first stage that is not ended that way, so ``restarts`` is never silently dropped."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(200, 2))
    y = (np.sin(2 * X[:, 0]) * np.sin(2 * X[:, 1]) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = RBSVMLowRank(rank=150, restarts=2, refresh=2).select(X, y, random_state=0)
    assert s.info["n_refresh"] >= 1
    assert {h["start"] for h in s.history} == {0, 1, 2}
    assert len(s.history) == s.info["n_evals"]


def test_only_the_last_landmark_stage_warns():
    """A stage that ends on a bound (here C, first landmarks) and is then refined on new
    landmarks to an interior point leaves no BoundWarning: only the returned point's."""
    from svmtune.exceptions import BoundWarning
    from svmtune.methods._lowrank_search import landmark_search

    X = np.random.default_rng(0).normal(size=(40, 2))
    stages = []

    def make_objective(D2_nm, D2_mm, m):
        # stage 0: optimum at sigma = 8 and C beyond 2^8; stage 1 (landmarks at sigma = 8): C = 1
        c_opt = np.log(2.0**12) if not stages else 0.0
        stages.append(m)
        target = np.array([np.log(8.0), c_opt])

        def fun(theta, state):
            diff = np.asarray(theta) - target
            return float(diff @ diff), 2.0 * diff, {"rank_residual": 0.0}

        return fun

    def run(refresh):
        stages.clear()
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            res, extra = landmark_search(
                X,
                (0.0, 0.0),
                make_objective,
                rank=10,
                rank_tol=1e-2,
                refresh=refresh,
                random_state=0,
                bounds=[(-8, 8), (-8, 8)],
            )
        return res, extra, [w for w in rec if issubclass(w.category, BoundWarning)]

    res, extra, bound = run(1)  # refined: C = 1 in the end, no warning
    assert extra["n_refresh"] == 1 and len(stages) == 2
    assert abs(res.theta[1]) < 1e-3 and bound == []
    res, extra, bound = run(0)  # no refresh allowed: the bound hit is the answer, warned once
    assert extra["n_refresh"] == 0 and len(bound) == 1 and "C = 2^8" in str(bound[0].message)


def test_estimate_at_is_the_closed_form_at_the_point_on_its_landmarks():
    """``estimate_at`` scores the given point itself (a search with ``max_eval=1`` would also
    take a line-search step): the low-rank LOO error rate of the objective evaluated there, on the
    rank rule's landmarks at that width, with rows of weight 0 left out as ``select`` does."""
    from svmtune.kernels import squared_distances
    from svmtune.loo.closed_form import loo_error_rate
    from svmtune.loo.rbsvm_lowrank import lowrank_rbsvm_objective
    from svmtune.methods.base import SelectionContext, TrainingData, ovr_tasks

    X, y = _data(120, 5)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=120)
    w[:7] = 0.0
    sel = RBSVMLowRank(rank=25, rank_tol=1e-3)
    point = (1.3, 4.0)
    got = sel.estimate_at(
        TrainingData(X, y, w), SelectionContext(), {"sigma": point[0], "C": point[1]}
    )
    est, fits, rank = got.estimate, got.n_svm_fits, got.info["rank"]
    keep = w > 0
    Xk, yk, wk = X[keep], y[keep], w[keep]
    idx, _ = pivoted_cholesky_landmarks(Xk, 1.3, tol=1e-3, max_rank=25)
    D2 = squared_distances(Xk, Xk[idx])
    tasks = ovr_tasks(yk)
    obj = lowrank_rbsvm_objective(
        D2, D2[idx], tasks, np.log(point), sample_weight=wk, gradient=False
    )
    assert obj.grad is None
    assert est == loo_error_rate(yk, obj.loo, wk)
    assert fits == len(tasks) == 1 and rank == idx.size


def test_auto_low_rank_referee_evaluates_once_without_gradient(monkeypatch):
    """The referee of a low-rank stage costs one objective evaluation per candidate, at the
    candidate's own point, and no gradient (counted, not timed)."""
    import svmtune.methods.rbsvm_lowrank as mod
    from svmtune.methods.auto import Auto

    calls = []
    real = mod._lowrank_rbsvm_objective

    def counting(*args, **kwargs):
        calls.append((np.exp(args[0].theta).tolist(), kwargs.get("gradient", True)))
        return real(*args, **kwargs)

    monkeypatch.setattr(mod, "_lowrank_rbsvm_objective", counting)
    X, y = _data(400, 6)
    auto = Auto(exact_rows=0, max_eval=2, rank=30)  # every stage low rank
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = auto.select(X, y, random_state=0)
    referee = [c for c in calls if not c[1]]
    scored = sel.history  # the refinements' end points too: the referee needs their rows
    assert len(referee) == len(scored) >= 2
    for h in scored:
        assert any(np.allclose(p, [h["sigma"], h["C"]]) for p, _ in referee)
    # the final-model rule costs the low-rank model on the chosen point's landmarks
    chosen = next(h for h in sel.history if h["chosen"])
    assert 2 <= chosen["rank"] <= 30
    assert f"({chosen['rank']} landmarks)" in sel.info["final_rule"]
