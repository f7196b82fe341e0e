"""The multi-fidelity plan of auto: budget, stage sizes, nested subsamples, the carry of C."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from svmtune.estimators import L2SVC
from svmtune.kernels import rbf_params
from svmtune.methods._auto_curve import curve_test
from svmtune.methods._fidelity import (
    GROWTH,
    LARGE_ROWS,
    MIN_FIRST,
    carry_C,
    carry_exponent,
    default_budget,
    nested_subsample,
    plan_stages,
    stage_rows,
)
from svmtune.methods.auto import Auto

SHAPES = [(300, 5, 1), (2_000, 22, 1), (20_000, 123, 1), (245_057, 3, 1), (60_000, 784, 10)]


@pytest.mark.parametrize("n, d, tasks", SHAPES)
@pytest.mark.parametrize("budget", [2.0, 5.0, 30.0, 300.0])
def test_plan_stays_within_its_budget(n, d, tasks, budget):
    plan = plan_stages(n, d, tasks, budget=budget, max_eval=10, rank=500, max_exact=n)
    first = plan.stages[0]
    sizes = [s.size for s in plan.stages]
    assert first.size >= min(n, MIN_FIRST)
    assert sizes == sorted(sizes) and sizes[-1] <= n
    assert all(b == (n if 1.5 * GROWTH * a >= n else GROWTH * a) for a, b in zip(sizes, sizes[1:]))
    # the planned cost is within budget, but for the smallest first stage and the final
    # rule after it, which always run (the plan's least budget)
    if first.size > min(n, MIN_FIRST):
        assert plan.cost <= budget + 1e-9
    else:
        assert plan.cost <= max(budget, plan.min_budget) + 1e-9


def test_a_larger_budget_buys_more_rows_and_all_rows_when_ample():
    small = plan_stages(20_000, 22, 1, budget=5, max_eval=10, rank=500, max_exact=20_000)
    large = plan_stages(20_000, 22, 1, budget=500, max_eval=10, rank=500, max_exact=20_000)
    assert large.stages[-1].size >= small.stages[-1].size
    ample = plan_stages(300, 5, 1, budget=1e6, max_eval=10, rank=500, max_exact=300)
    assert len(ample.stages) == 1 and ample.stages[0].size == 300
    assert ample.stages[0].path == "exact"


def test_every_refinement_of_the_first_stage_is_paid_for():
    """Two refinements of ``max_eval`` steps each cost twice the steps: the first stage
    shrinks so that its planned cost, counted with both, stays within its share."""
    from svmtune.methods._fidelity import FIRST_SCORES, FIRST_SHARE, _stage_cost, svc_fit_cost

    args = dict(budget=30.0, max_eval=10, rank=500, max_exact=1_200)
    one = plan_stages(1_200, 10, 1, **args)
    two = plan_stages(1_200, 10, 1, refiners=2, **args)
    assert two.stages[0].size < one.stages[0].size
    unit = svc_fit_cost(1_200, 10)
    cost = _stage_cost(two.stages[0].size, "exact", 2 * 10 + FIRST_SCORES, 10, 1, 500, unit)
    assert cost == pytest.approx(two.stages[0].cost)
    assert cost <= FIRST_SHARE * (30.0 - two.final_cost) + 1e-9
    assert Auto(refine=("rbsvm", "span"), budget=30.0).plan(1_200, 10, 1).stages[0].size < (
        Auto(budget=30.0).plan(1_200, 10, 1).stages[0].size
    )


def test_memory_and_sparse_restrict_the_exact_path():
    plan = plan_stages(50_000, 10, 1, budget=1e9, max_eval=10, rank=500, max_exact=1_000)
    assert plan.stages[0].size <= 1_000
    assert all(s.path == "lowrank" for s in plan.stages if s.size > 1_000)
    sparse = plan_stages(
        5_000, 10, 1, budget=50, max_eval=5, rank=50, max_exact=5_000, lowrank_only=True
    )
    assert all(s.path == "lowrank" for s in sparse.stages)


def test_default_budget_ends_and_monotone():
    assert default_budget(100) == default_budget(1_500) == 30
    assert default_budget(2_000) == pytest.approx(22.5)
    assert default_budget(20_000) == pytest.approx(2.25)
    # the budget's wall time (budget x an SVC() fit ~ n^2) grows linearly in n
    assert default_budget(40_000) * 40_000**2 == pytest.approx(
        2 * default_budget(20_000) * 20_000**2
    )
    b = [default_budget(n) for n in (2_000, 4_000, 8_000, 16_000, 20_000, 10**6)]
    assert all(x >= y for x, y in zip(b, b[1:]))


def test_nested_subsample_is_stratified_nested_and_seeded():
    y = np.repeat([0, 1, 2], [700, 250, 50])
    order = nested_subsample(y, 0)
    assert np.array_equal(np.sort(order), np.arange(y.size))
    assert np.array_equal(order, nested_subsample(y, 0))
    assert not np.array_equal(order, nested_subsample(y, 1))
    share = np.bincount(y) / y.size
    for size in (6, 50, 200, 999):
        counts = np.bincount(y[order[:size]], minlength=3)
        assert np.all(counts >= 2)  # every class, so every one-vs-rest task, in every stage
        assert np.all(np.abs(counts - share * size) <= 3)
    small, big = stage_rows(order, 100), stage_rows(order, 400)
    assert set(small) <= set(big)


def test_nested_subsample_keeps_groups_whole():
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 40, size=600)
    y = (groups % 2).astype(int)
    order = nested_subsample(y, 0, groups)
    for size in (10, 100, 333):
        rows = stage_rows(order, size, groups)
        assert rows.size >= size
        inside = set(groups[rows])
        outside = set(groups[np.setdiff1d(np.arange(600), rows)])
        assert not inside & outside


def test_nested_subsample_does_not_depend_on_the_names_of_the_classes():
    """The random draws belong to the rows (issue 63): swapped binary labels, strings in
    the reverse order and a permutation of three classes give the same order, with and
    without groups."""
    rng = np.random.default_rng(3)
    y = (rng.uniform(size=500) < 0.3).astype(int)
    order = nested_subsample(y, 0)
    assert np.array_equal(nested_subsample(1 - y, 0), order)
    assert np.array_equal(nested_subsample(np.array(["pos", "neg"])[y], 0), order)
    y3 = rng.integers(0, 3, size=500)
    assert np.array_equal(nested_subsample(np.array([2, 0, 1])[y3], 0), nested_subsample(y3, 0))
    groups = rng.integers(0, 60, size=500)
    yg = (groups % 3 == 0).astype(int)
    assert np.array_equal(nested_subsample(1 - yg, 0, groups), nested_subsample(yg, 0, groups))


def test_carry_C_at_minus_one_keeps_the_l2svm_when_rows_repeat():
    """C / k on k copies of every row is the same L2-SVM as C on the rows: the loss sum is k
    times larger, so the regularisation per row 1 / (C sum w) is what must be kept."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    k, C = 3, 4.0
    small = L2SVC(C=C, sigma=1.5).fit(X, y)
    big = L2SVC(C=carry_C(C, 40, 40 * k, -1.0), sigma=1.5).fit(np.tile(X, (k, 1)), np.tile(y, k))
    X_new = rng.normal(size=(25, 3))
    np.testing.assert_allclose(
        big.decision_function(X_new), small.decision_function(X_new), rtol=1e-7, atol=1e-9
    )
    # keeping C instead (exponent 0) gives another, less regularised model
    other = L2SVC(C=carry_C(C, 40, 40 * k, 0.0), sigma=1.5).fit(np.tile(X, (k, 1)), np.tile(y, k))
    assert np.max(np.abs(other.decision_function(X_new) - small.decision_function(X_new))) > 1e-3


def test_carry_exponent_is_the_clipped_slope():
    assert carry_exponent([1000], [4.0]) == 0.0
    assert carry_exponent([250, 1000], [8.0, 4.0]) == pytest.approx(-0.5)
    assert carry_exponent([250, 1000, 4000], [1.0, 1e6, 1e12]) == 1.0
    assert carry_exponent([250, 1000], [1e6, 1.0]) == -1.0
    assert carry_C(2.0, 1000, 4000, 0.5) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="exponent"):
        carry_C(1.0, 1, 2, 2.0)


def test_the_share_of_support_vectors_is_taken_at_all_rows():
    """Issue 63: ``SVC()``'s share of support vectors on 20,000 rows of make_classification
    is 0.24 against 0.56 on the 1,000-row probe; the power law through two nested probes
    gives the share at all rows (clipped: never growing, support vectors never falling)."""
    from svmtune.methods._fidelity import sv_fraction_at

    assert sv_fraction_at(20_000, [1000, 2000], [0.558, 0.47]) == pytest.approx(
        0.47 * 10 ** np.log2(0.47 / 0.558)
    )
    assert sv_fraction_at(20_000, [1000], [0.5]) == 0.5  # one probe: its share
    assert sv_fraction_at(1_500, [1000, 1500], [0.5, 0.4]) == 0.4  # the probe is all rows
    assert sv_fraction_at(8_000, [1000, 2000], [0.4, 0.5]) == 0.5  # a growing share: kept
    assert sv_fraction_at(8_000, [1000, 2000], [0.8, 0.1]) == pytest.approx(0.1 / 4)  # n_SV


def test_the_plan_counts_the_probes_and_the_final_rule_and_its_least_budget():
    """Issue 63: the probes' fits and the final rule's work (its libsvm fits on an eighth of
    the rows at their own share of support vectors, its predictions, the landmarks) are in
    the plan's cost; ``min_budget`` is the smallest first stage with them and the final
    model, and a budget below it is overrun by exactly the minimal plan."""
    from svmtune.methods._cost_model import rule_work
    from svmtune.methods._fidelity import svc_fit_cost

    n, d = 20_000, 20
    work = svc_fit_cost(1000, d, 0.56) + svc_fit_cost(2000, d, 0.47)
    args = dict(max_eval=10, rank=500, max_exact=n, sv_fraction=0.27, probe_work=work)
    plan = plan_stages(n, d, 1, budget=2.25, **args)
    assert plan.probe_cost == pytest.approx(work / svc_fit_cost(n, d, 0.27))
    steps = rule_work(n, plan.stages[0].size, landmarks=True, lowrank_fit=False)
    assert plan.stages[-1].path == "exact" and plan.final_cost == 1.0
    assert plan.rule_cost == pytest.approx(steps.work(d, 1, 500, 0.27) / svc_fit_cost(n, d, 0.27))
    assert plan.cost == pytest.approx(
        plan.probe_cost + sum(s.cost for s in plan.stages) + plan.rule_cost + plan.final_cost
    )
    assert plan.min_budget <= plan.cost <= 2.25 + 1e-9
    tiny = plan_stages(n, d, 1, budget=1e-9, **args)
    assert [s.size for s in tiny.stages] == [MIN_FIRST]
    assert tiny.cost == pytest.approx(tiny.min_budget) and tiny.left < 0
    exact_all = plan_stages(300, 5, 1, budget=1e6, max_eval=10, rank=500, max_exact=300)
    assert exact_all.rule_cost == 0.0  # exact on all rows: no final rule


def test_the_final_rule_fits_on_at_most_the_larger_probes_rows_of_the_first_stage():
    """The rule's two libsvm fits take the first stage's rows up to 2,000 (the larger
    probe's), or an eighth of all rows where that is more: a 15,944-row low-rank first stage
    on 20,000 sparse rows made them cost more than the final fit."""
    from svmtune.methods._fidelity import rule_rows

    assert rule_rows(20_000, 15_944) == 2_500
    assert rule_rows(5_000, 1_650) == 1_650
    assert rule_rows(5_000, 3_000) == 2_000
    assert rule_rows(100_000, 200) == 12_500
    # above LARGE_ROWS the rule's rows stop growing with the selection's work
    assert rule_rows(10**6, 2_000) == rule_rows(10**7, 2_000) == LARGE_ROWS // 8


def test_above_large_rows_the_selection_s_work_stops_growing():
    """Issue 64: the default budget's wall time grew as ``n`` (a first stage of 6,421 exact
    rows at 10^6 rows); above LARGE_ROWS the plan's stages and rule are those at LARGE_ROWS
    and only the final fit's reserve and the probes grow with ``n``."""
    from svmtune.methods._fidelity import svc_fit_cost

    d, f = 20, 0.2
    work = svc_fit_cost(1000, d, 0.3) + svc_fit_cost(2000, d, 0.25)
    args = dict(max_eval=10, rank=500, sv_fraction=f)
    plans = {}
    for n in (LARGE_ROWS, 10**6, 10**7):
        budget = default_budget(n, d, sv_fraction=f, probe_work=work)
        plans[n] = plan_stages(n, d, 1, budget=budget, max_exact=n, probe_work=work, **args)
    sizes = {n: [s.size for s in p.stages] for n, p in plans.items()}
    assert sizes[10**6] == sizes[10**7] == sizes[LARGE_ROWS]
    for n, p in plans.items():  # the same selection work in absolute units at every n
        unit = svc_fit_cost(n, d, f)
        assert (p.rule_cost + sum(s.cost for s in p.stages)) * unit == pytest.approx(
            (plans[LARGE_ROWS].rule_cost + sum(s.cost for s in plans[LARGE_ROWS].stages))
            * svc_fit_cost(LARGE_ROWS, d, f)
        )
        # what the budget leaves the selection beyond the final fit and the probes, in work
        spare = (p.budget - p.final_cost - p.probe_cost) * unit
        assert spare == pytest.approx(
            (plans[LARGE_ROWS].budget - plans[LARGE_ROWS].final_cost - plans[LARGE_ROWS].probe_cost)
            * svc_fit_cost(LARGE_ROWS, d, f)
        )
    # continuous at the bound, and without the cost model the count falls as an SVC() fit grows
    assert default_budget(LARGE_ROWS + 1, d, sv_fraction=f) == pytest.approx(
        default_budget(LARGE_ROWS, d, sv_fraction=f), rel=1e-4
    )
    assert default_budget(2 * LARGE_ROWS) == pytest.approx(default_budget(LARGE_ROWS) / 4)
    assert "budget of 0.0 SVC" not in plans[10**7].describe()  # 3 significant digits


def _rule_steps_priced(monkeypatch, plan, rule_args, share, rank):
    """Run the final-model rule (``rule_args`` after the plan) and, where the plan's last
    stage holds fewer rows than the data and keeps a libsvm fit for the final model, the
    learning-curve test of the same point against
    ``SVC()``'s (:mod:`svmtune.methods._auto_curve`), counting
    each step they take and pricing it in the cost model's units: each libsvm fit at
    ``share(rows)``, the share of support vectors of its own rows; a prediction of ``h``
    rows against the support vectors of ``r`` rows at ``h / r`` of such a fit; the
    landmarks on the rows; the low-rank fit and its held-out rows' kernel to its landmarks.
    Returns the steps' names and their work in ``SVC()`` fits on all rows."""
    import sklearn.svm

    import svmtune.methods._auto_final as af
    from svmtune.methods._cost_model import D_EXP, KAPPA_LOWRANK, LANDMARK_PASSES
    from svmtune.methods._fidelity import lowrank_eval_cost, svc_fit_cost

    d = plan.d

    def fit_work(rows):
        return svc_fit_cost(rows, d, share(rows))

    counted = []

    def wrap(owner, name, price):
        orig = getattr(owner, name)

        def counting(*a, **k):
            counted.append((f"{getattr(owner, '__name__', '').split('.')[-1]}.{name}", price(*a)))
            return orig(*a, **k)

        monkeypatch.setattr(owner, name, counting)

    def landmark_work(X, *_):  # pivoted Cholesky and the kernel to the landmarks
        return KAPPA_LOWRANK * X.shape[0] * min(rank, X.shape[0]) * (LANDMARK_PASSES * d + D_EXP)

    wrap(af, "default_svc_fit", lambda X, *_: fit_work(X.shape[0]))
    wrap(sklearn.svm.SVC, "fit", lambda self, X, *_: fit_work(X.shape[0]))
    wrap(sklearn.svm.SVC, "predict", lambda self, X: X.shape[0] / self.shape_fit_[0]
         * fit_work(self.shape_fit_[0]))  # fmt: skip
    wrap(af, "pivoted_cholesky_landmarks", landmark_work)
    wrap(af.LowRankL2SVC, "fit", lambda self, X, *_: lowrank_eval_cost(X.shape[0], d, 1, rank))
    # the rule's rows are more than the landmarks here: the held-out rows' kernel to ``rank``
    wrap(af.LowRankL2SVC, "predict",
         lambda self, X: KAPPA_LOWRANK * X.shape[0] * rank * (d + D_EXP))  # fmt: skip
    af.final_rule(plan, *rule_args)
    params, _, _, X, y, sw, order, multiclass = rule_args
    if plan.stages[-1].size < plan.n and plan.final_cost >= 1.0:  # the learning-curve test
        svc = rbf_params(np.sqrt(d * X.var() / 2), 1.0)  # SVC()'s point on the standard rows
        first = plan.stages[0].size
        assert curve_test(params, svc, X, y, sw, None, order, first, multiclass, 0.0) is not None
    unit = svc_fit_cost(plan.n, d, plan.sv_fraction)
    return sorted(name for name, _ in counted), sum(w for _, w in counted) / unit


def test_the_plan_prices_the_work_the_final_rule_does(monkeypatch):
    """Issue 63: the final-model rule fits libsvm twice on its rows (``SVC()`` and the
    chosen point), predicts the held-out rows with the latter and, after an exact last
    stage, computes the low-rank model's landmarks on its rows.  The plan charged two fits
    at the share of support vectors of all rows and nothing else (ijcnn1, 20,000 rows: the
    rule took 0.16 ``SVC()`` fits against 0.031 planned).  The rule's steps are counted as
    it runs and priced in the cost model's units: the plan's ``rule_cost`` is that price."""
    import svmtune.methods._auto_final as af
    from svmtune.kernels import rbf_params

    n, d, rank = 6000, 10, 500
    X, y = make_classification(n, d, n_informative=5, flip_y=0.05, random_state=0)
    order = nested_subsample(y, 0)
    probe = af.probe_svc(X, y, None, order, None)
    plan = Auto().plan(n, d, 1, probe=probe)
    assert plan.stages[-1].path == "exact" and plan.stages[-1].size < n  # the rule runs
    assert plan.final_cost == 1.0  # libsvm's fit is the cheaper final model: no low-rank fit
    args = (rbf_params(2.0, 4.0), None, (rank, 1e-4), X, y, None, order, "ovr")
    names, work = _rule_steps_priced(monkeypatch, plan, args, probe.fraction_at, rank)
    assert names == [  # the rule's fit and prediction and the curve test's four of each
        *["SVC.fit"] * 5,
        *["SVC.predict"] * 5,
        "_auto_final.default_svc_fit",
        "_auto_final.pivoted_cholesky_landmarks",
    ]
    assert plan.rule_cost == pytest.approx(work)


def test_the_plan_prices_the_rule_s_low_rank_fit_where_it_is_the_cheaper_model(monkeypatch):
    """Where the low-rank L2-SVM is the cheaper final model (the plan reserves its cost),
    the rule fits it on its rows and predicts the held-out rows with it too: priced so."""
    import dataclasses

    from svmtune.kernels import rbf_params

    rng = np.random.default_rng(5)
    X = rng.normal(size=(2000, 4))
    y = (X[:, 0] + np.sin(2 * X[:, 1]) + 0.6 * rng.normal(size=2000) > 0).astype(int)
    order = nested_subsample(y, 0)
    auto = Auto(rank=20)
    plan = dataclasses.replace(auto.plan(*X.shape, 1), budget=1.0)
    assert plan.final_cost < 1.0 and plan.rule_cost > 0  # the rule runs, low rank is cheaper
    exact_last = plan.stages[-1].path == "exact"
    args = (rbf_params(1.0, 2.0**10), None if exact_last else 20, (20, 1e-4), X, y, None,
            order, "ovr")  # fmt: skip
    names, work = _rule_steps_priced(monkeypatch, plan, args, lambda r: None, 20)
    assert "LowRankL2SVC.fit" in names and "LowRankL2SVC.predict" in names
    assert ("_auto_final.pivoted_cholesky_landmarks" in names) == exact_last
    assert plan.rule_cost == pytest.approx(work)
