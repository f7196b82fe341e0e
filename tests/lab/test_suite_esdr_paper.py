"""The esdr-paper suite: definition, published numbers, figures, experiments and a tiny run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from svmtune.bench.report import PUBLISHED_METRICS
from svmtune.bench.runner import run_suite
from svmtune.bench.suite import MethodSpec, Protocol, Task, get_suite, suite_module
from svmtune.datasets import load_dataset
from svmtune.methods import METHODS, selector_class
from tests.bench._resume import stop_then_resume

H = suite_module("_esdr_ld_figures")
E = suite_module("esdr_paper")

SUITE = E.SUITE


def test_registered_and_tasks_resolve_to_bundled_data():
    assert get_suite("esdr-paper") is SUITE
    assert [t.name for t in SUITE.tasks] == [
        "banknote",
        "planning_relax",
        "vertebral_column",
        "ilpd",
        "tic_tac_toe",
    ]
    # ESDR Table 1: (class sizes, dimension) of the five sets
    sizes = {
        "banknote": (762, 610),
        "planning_relax": (130, 52),
        "vertebral_column": (210, 100),
        "ilpd": (414, 165),
        "tic_tac_toe": (626, 332),
    }
    for t in SUITE.tasks:
        X, y, _ = load_dataset(t.dataset)
        # the paper's ILPD counts are those of the 579 complete rows (4 have a missing value)
        y = y[X.notna().all(axis=1).to_numpy()]
        counts = tuple(sorted(np.unique(y, return_counts=True)[1], reverse=True))
        assert counts == tuple(sorted(sizes[t.name], reverse=True)), t.name


def test_methods_resolve_and_construct():
    labels = [m.label for m in SUITE.methods]
    assert {"Grid search-CV", "ESDR-CV", "DBTC-CV", "J4-CV", "default"} <= set(labels)
    for m in SUITE.methods:
        assert m.method in METHODS
        selector_class(m.method)(**m.params)  # options validate
    yard = SUITE.yardstick_labels()
    assert yard == {"grid": "Grid search-CV (step 1)", "default": "default"}
    paper_grid = next(m for m in SUITE.methods if m.label == "Grid search-CV")
    sel = selector_class("grid")(**paper_grid.params)
    assert sel.sigmas.size == 35 and sel.Cs.size == 35  # 2^-8..2^9 and 2^-1..2^16, step 0.5
    assert np.isclose(sel.sigmas.min(), 2**-8) and np.isclose(sel.Cs.max(), 2**16)
    esdr = next(m for m in SUITE.methods if m.label == "ESDR-CV")
    paper = {"refine": "none", "plateau": "argmax", "c_search": "grid", "max_repeat_share": None}
    assert esdr.params == paper  # the paper's scan keeps every width, repeated rows or not
    assert selector_class("esdr")(**esdr.params).max_repeat_share is None


def test_published_entries_match_the_suite_and_the_paper():
    tasks = {t.name for t in SUITE.tasks}
    labels = {m.label for m in SUITE.methods}
    assert len(SUITE.published) == 5 * 4 * 2
    for p in SUITE.published:
        assert p["task"] in tasks and p["method"] in labels
        assert p["metric"] in PUBLISHED_METRICS
    look = {(p["task"], p["method"], p["metric"]): p["value"] for p in SUITE.published}
    # spot checks against ESDR Table 2 as printed
    assert look[("ilpd", "DBTC-CV", "time")] == 1948.6
    assert look[("ilpd", "J4-CV", "accuracy")] == 0.6079
    assert look[("vertebral_column", "Grid search-CV", "accuracy")] == 0.8516
    assert look[("tic_tac_toe", "Grid search-CV", "time")] == 24181.0
    assert all(p.get("unit") == "fraction" for p in SUITE.published if p["metric"] == "accuracy")


def _fake_results() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for t in SUITE.tasks:
        for s in range(3):
            for m in SUITE.methods:
                rows.append(
                    {
                        "task": t.name,
                        "split": s,
                        "method": m.label,
                        "status": "ok",
                        "accuracy": rng.uniform(0.6, 1.0),
                        "estimate": rng.uniform(0.0, 0.3),
                        "selection_time": rng.uniform(0.1, 10.0),
                        "params": {"sigma": 2.0 ** rng.uniform(-2, 4), "C": 1.0},
                    }
                )
    return pd.DataFrame(rows)


def test_figures_on_a_synthetic_results_frame(tmp_path):
    df = _fake_results()
    # the figure draws only what the experiment computed
    assert E.esdr_index_curves(df, tmp_path) == []
    assert E.esdr_index_curves(df, tmp_path, experiment_files={"other": []}) == []
    (csv,) = E.esdr_fig5_7_index_curves(tmp_path, 0)
    assert csv.suffix == ".csv" and csv.exists()
    files = {"esdr_fig5_7_index_curves": [csv]}
    (png,) = E.esdr_index_curves(df, tmp_path, experiment_files=files)
    assert png.suffix == ".png" and png.exists()
    curves = pd.read_csv(csv)
    assert len(curves) == 5 * 35
    assert np.all(np.isfinite(curves[["esdr", "dbtc", "j4"]]))
    assert np.all(curves["esdr"] > 0) and np.all(curves["dbtc"] >= -1e-12)
    # the curves are those of the criteria module on the same standardised data
    from svmtune.criteria.esdr import rbf_index_curve

    X, y = H.standardised_task_data(SUITE.tasks[1])
    x = curves.loc[curves["task"] == "planning_relax", "log2_sigma"].to_numpy()
    ref = rbf_index_curve(X, y, 2.0**x, "j4")
    assert np.allclose(curves.loc[curves["task"] == "planning_relax", "j4"], ref, rtol=1e-12)
    png, md = E.esdr_table2(df, tmp_path)
    assert png.suffix == ".png" and png.exists()
    text = md.read_text()
    # the ESDR-CV - grid difference is computed on shared folds
    sub = df[df["task"] == "ilpd"]
    e = sub[sub["method"] == "ESDR-CV"].set_index("split")
    g = sub[sub["method"] == "Grid search-CV (step 1)"].set_index("split")
    d = 100 * (e["accuracy"] - g["accuracy"]).mean()
    assert f"| ilpd | ESDR-CV | Grid search-CV (step 1) | 3 | {d:+.2f} |" in text
    e2 = sub[sub["method"] == "ESDR (svmtune defaults)"].set_index("split")
    d2 = 100 * (e2["accuracy"] - g["accuracy"]).mean()
    assert f"| ilpd | ESDR (svmtune defaults) | Grid search-CV (step 1) | 3 | {d2:+.2f} |" in text
    assert "| ilpd | DBTC-CV | 3 |" in text and "| 66.49 |" in text  # paper Acc 0.6649


def test_sigma_step_cost_experiment(tmp_path):
    (csv,) = E.esdr_sigma_step_cost(tmp_path, 0)
    tab = pd.read_csv(csv, keep_default_na=False)
    assert list(tab["task"]) == [t.name for t in SUITE.tasks]
    assert (tab["n_index_evals"] == 35).all()
    assert (tab["sigma_step_s"] > 0).all() and (tab["svc_fit_s"] > 0).all()
    assert set(tab.loc[tab["n"] < 1000, "accept (n>=1000: ratio < 1)"]) == {"n/a"}


def test_gaussian_study_small_grids(tmp_path, monkeypatch):
    monkeypatch.setattr(E, "FIG9_LOG2_SIGMA", (-1.0, 1.0, 1.0))
    monkeypatch.setattr(E, "FIG9_LOG2_C", (0.0, 2.0, 2.0))
    paths = E.esdr_gaussian_study(tmp_path, 0, grid_plots=False)
    assert all(Path(p).exists() for p in paths)
    mc = pd.read_csv(tmp_path / "esdr_fig3_analytic_vs_mc.csv")
    assert set(mc["case"]) == {"(2, 2)", "(3, 5)"}
    # the sample ESDR (self-pairs included) agrees with its expectation where its spread is
    # not degenerate; eq. (19): the largest width approaches the input-space ESDR
    ok = mc[mc["mc_se"] > 1e-4]
    assert (ok["z_self_pairs"].abs() < 4.5).all()
    top = mc[mc["log2_sigma"] == mc["log2_sigma"].max()]
    assert np.allclose(top["analytic_esdr"], top["input_space_limit"], rtol=1e-3)
    paths = E.esdr_gaussian_cv(tmp_path, 0)
    assert [p.suffix for p in paths] == [".png", ".csv"]
    fig9 = pd.read_csv(tmp_path / "esdr_fig9_gaussian_cv.csv")
    assert len(fig9) == 2 * 3 and fig9["best_cv_accuracy"].between(0, 1).all()


def test_best_cv_accuracy_curve_matches_cv_errors():
    from svmtune.kernels import rbf_params
    from svmtune.search.cv import cv_errors, make_folds

    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=40) > 0).astype(int)
    acc, bestc, n_fits = H.best_cv_accuracy_curve(X, y, [0.0, 1.0], [-1.0, 1.0], n_splits=3)
    folds = make_folds(y, 3, 0)
    for k, s in enumerate([0.0, 1.0]):
        errs = cv_errors(X, y, [rbf_params(2**s, 2**c) for c in (-1.0, 1.0)], folds=folds)
        assert acc[k] == pytest.approx(1 - errs.min())
    assert n_fits == 2 * 2 * 3


def test_tiny_slice_through_the_runner(tmp_path):
    mini = replace(
        SUITE,
        name="esdr-mini",
        tasks=[Task("planning_relax", "planning_relax", subsample=60)],
        methods=[
            MethodSpec("default", "default"),
            MethodSpec(
                "ESDR-CV",
                "esdr",
                {
                    "refine": "none",
                    "plateau": "argmax",
                    "c_search": "grid",
                    "max_repeat_share": None,
                    "log2_C": (0.0, 2.0, 1.0),
                    "n_splits": 3,
                },
            ),
        ],
        protocol=Protocol(kind="kfold", n_splits=3),
        experiments=[],
        yardsticks={"default": "default"},
    )
    summary = run_suite(mini, tmp_path, max_cells=2, progress=False, entropy=False)
    assert (summary.n_run, summary.n_ok) == (2, 2)
    rows = [
        json.loads(x)
        for x in (tmp_path / "esdr-mini" / "results.jsonl").read_text().split("\n")
        if x
    ]
    esdr = next(r for r in rows if r["method"] == "ESDR-CV")
    assert esdr["selection_info"]["n_objective_evals"] == 35
    assert esdr["n_svm_fits"] == 3 * 3


def test_write_csv_is_stable_under_last_bit_rounding(tmp_path):
    # a value and its next float (another BLAS's rounding) write the same bytes
    a = [{"task": "t", "n": 3, "v": 1.4612051479419950}, {"task": "u", "w": 0.1}]
    b = [{"task": "t", "n": 3, "v": float(np.nextafter(1.4612051479419950, 2.0))}, a[1]]
    pa, pb = H.write_csv(tmp_path / "a.csv", a), H.write_csv(tmp_path / "b.csv", b)
    assert pa.read_bytes() == pb.read_bytes()
    # the union of keys in first-seen order; ints and strings as they are, 12 digits kept
    assert pa.read_text().splitlines() == ["task,n,v,w", "t,3,1.46120514794,", "u,,,0.1"]


@pytest.mark.parametrize(
    "name, csv",
    [
        ("esdr_fig4_best_cv_accuracy", "esdr_fig4_best_cv_accuracy.csv"),
        ("esdr_gaussian_cv", "esdr_fig9_gaussian_cv.csv"),
    ],
)
def test_cv_curve_experiments_resume_a_stopped_run(tmp_path, monkeypatch, name, csv):
    """Fig. 4 and Fig. 9 stopped at their second CV curve keep the first; the next run
    computes only the second and writes what an uninterrupted run writes."""
    monkeypatch.setattr(E, "FIG4_LOG2_SIGMA", (-1.0, 1.0, 1.0))
    monkeypatch.setattr(E, "FIG4_LOG2_C", (0.0, 2.0, 2.0))
    monkeypatch.setattr(E, "FIG9_LOG2_SIGMA", (-1.0, 1.0, 1.0))
    monkeypatch.setattr(E, "FIG9_LOG2_C", (0.0, 2.0, 2.0))
    exp = getattr(E, name)
    for d in ("fresh", "stopped"):
        (tmp_path / d).mkdir()
    exp(tmp_path / "fresh", 0)
    calls, _ = stop_then_resume(
        monkeypatch, E, "_best_cv_curve", lambda: exp(tmp_path / "stopped", 0)
    )
    assert len(calls) == 1  # only the second curve was computed again
    assert not list((tmp_path / "stopped").glob("*.checkpoint.jsonl"))
    fresh, got = (pd.read_csv(tmp_path / d / csv) for d in ("fresh", "stopped"))
    cols = [c for c in fresh.columns if not c.startswith("seconds")]  # wall time
    pd.testing.assert_frame_equal(got[cols], fresh[cols])
