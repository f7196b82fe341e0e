"""The span-paper suite: its definition, its figure and experiments on tiny inputs, and a tiny
slice of it through the runner."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from svmtune.bench.runner import run_suite
from svmtune.bench.suite import MethodSpec, get_suite, suite_module
from svmtune.datasets import list_datasets, load_dataset
from svmtune.methods.base import METHODS
from svmtune.svm import fit_l1_svm
from tests.bench._resume import stop_then_resume

X = suite_module("_span_experiments")
sp = suite_module("span_paper")
studies = suite_module("_span_studies")  # where the experiments' units of work live
holdout_error = suite_module("_span_study").holdout_error
worst_case_at_minimum = suite_module("_span_study").worst_case_at_minimum


def test_suite_is_registered_and_consistent():
    suite = get_suite("span-paper")
    assert suite is sp.SUITE and suite.name == "span-paper"
    names = set(list_datasets())
    for t in suite.tasks:
        assert t.dataset in names, t.dataset
        assert t.test_dataset is None or t.test_dataset in names
        assert t.options["n_train"] > 0 and t.options["n_test"] > 0
    assert len(suite.tasks) == 14  # Table 1
    for m in suite.methods:
        assert m.method in METHODS
    yard = suite.yardstick_labels()
    assert yard == {"grid": "grid-10fold", "default": "default"}
    grid = next(m for m in suite.methods if m.label == "grid-10fold")
    assert grid.method == "grid" and grid.params["n_splits"] == 10
    cv = next(m for m in suite.methods if m.label == "K-fold CV")
    assert cv.params == {"search": "class_weights", "criterion": "cv", "n_splits": 5}


def test_published_entries_match_tasks_and_labels():
    suite = sp.SUITE
    tasks = {t.name for t in suite.tasks}
    labels = {m.label for m in suite.methods}
    assert len(suite.published) == 12 * 4
    for p in suite.published:
        assert p["task"] in tasks and p["method"] in labels
        assert p["metric"] == "error" and p["unit"] == "fraction"
        assert 0.0 < p["value"] < 0.5
    # spot checks against the text of Table 2
    pub = {(p["task"], p["method"]): p["value"] for p in suite.published}
    assert pub[("mushrooms", "K-fold CV")] == 0.0456
    assert pub[("MNIST 0's vs. 8's", "Span bound")] == 0.0061
    assert pub[("adult", "xi-alpha bound")] == 0.2405
    # Tables 3-6 cover the 14 data sets; every row of Table 2 and 3 has 5 columns
    for table in (sp.TABLE4, sp.TABLE5, sp.TABLE6):
        assert set(table) == tasks
    assert set(sp.TABLE2) | set(sp.TABLE3) == tasks
    assert all(len(v) == 5 for v in list(sp.TABLE2.values()) + list(sp.TABLE3.values()))
    # the minimum test error is a lower bound of every column (a transcription check)
    for v in list(sp.TABLE2.values()) + list(sp.TABLE3.values()):
        assert min(v[:4]) >= v[4]


def test_error_by_method_figure_on_a_synthetic_frame(tmp_path):
    rows = []
    for t in ("banana", "waveform"):
        for m, acc in (("Span-rule", 0.8), ("K-fold CV", 0.75), ("default", 0.7)):
            rows.append({"task": t, "method": m, "status": "ok", "accuracy": acc})
    rows.append({"task": "banana", "method": "xi-alpha bound", "status": "error: x"})
    paths = sp.error_by_method(pd.DataFrame(rows), tmp_path)
    assert [p.suffix for p in paths] == [".png", ".csv"]
    table = pd.read_csv(paths[1], index_col=0)
    assert table.loc["banana", "Span-rule"] == pytest.approx(0.2)
    assert sp.error_by_method(pd.DataFrame(rows[-1:]), tmp_path) == []


def _blobs(n, seed):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    Xm = rng.normal(size=(n, 3)) + 0.9 * (y > 0)[:, None]
    return Xm, y


def test_grid_study_matches_direct_fits():
    Xtr, ytr = _blobs(60, 0)
    Xte, yte = _blobs(80, 1)
    Xtr, Xte = X.scale_unit(Xtr, Xte)
    data = X.SplitData(Xtr, ytr, Xte, yte, None)
    grid = X.class_weight_grid(8.0)  # log2 C+/C- in {-6, 2, 10}: 9 models
    assert len(grid) == 9
    df = X.grid_study(data, grid, seed=0)
    assert len(df) == 9
    for c in X.CRITERIA:
        assert np.all((df[c] >= 0) & np.isfinite(df[c]))
    assert np.all((df["cv"] <= 1) & (df["span_rule"] <= 1) & (df["xi_alpha"] <= 1))
    # the test error of one model equals a direct fit with the same per-class bounds
    from svmtune.kernels import Kernel, sigma_from_gamma

    r = df.iloc[4]
    k = Kernel("rbf", sigma=float(sigma_from_gamma(1.0 / 3)))
    sol = fit_l1_svm(ytr, r["C"], K=k(Xtr), sample_weight=np.where(ytr > 0, r["ratio"], 1.0))
    assert r["test_error"] == pytest.approx(holdout_error(sol, k(Xte, Xtr), yte))
    assert r["n_sv"] == sol.support.sum()
    s = X.summarise_grid(df)
    assert s["sel_span_rule"] == worst_case_at_minimum(df["span_rule"], df["test_error"])
    assert s["min_error"] <= min(s[f"sel_{c}"] for c in X.CRITERIA)
    assert s["time_span_rule"] >= s["time_spans"] > 0


def test_instance_weight_grid_and_error_curves(tmp_path):
    grid = X.instance_weight_grid((1.0, 5.0), (0.0, 0.5), (-2.0, 2.0, 2.0))
    assert len(grid) == 12 and {g["kind"] for g in grid} == {"scores"}
    assert len(X.instance_weight_grid()) == 1700  # the paper's grid
    assert len(X.class_weight_grid()) == 1089
    Xtr, ytr = _blobs(50, 2)
    Xte, yte = _blobs(40, 3)
    q = np.linspace(0, 1, 50)
    A_tr, A_te = X.scale_unit(Xtr, Xte)
    data = X.SplitData(A_tr, ytr, A_te, yte, q)
    df = X.grid_study(data, grid, span_bound=False, cv=False, seed=0)
    assert "cv" not in df and "span_bound" not in df
    path = X.plot_error_curves(df, ("A", "B", "C"), "tiny", tmp_path / "f.png")
    assert path.exists() and path.stat().st_size > 0
    with pytest.raises(ValueError, match="scores"):
        X.grid_study(X.SplitData(data.X_train, ytr, data.X_test, yte, None), grid, cv=False)


def test_ringnorm_study_marks_sizes_not_run(tmp_path):
    df = X.ringnorm_study(
        (32, 64, 128), (2,), run_sizes=(32,), grid=X.class_weight_grid(16.0), seed=0
    )
    assert list(df["status"]) == ["ok", "not run", "not run"]
    ok = df.iloc[0]
    assert ok["time_span_rule"] > 0 and ok["time_cv"] > 0 and ok["n_sv"] >= ok["n_inbound"]
    paths = X.plot_ringnorm(df, tmp_path / "t.png", tmp_path / "s.png")
    assert all(p.exists() for p in paths)


def test_paper_splits_follow_table1():
    task = next(t for t in sp.TASKS if t.name == "Parkinson's speech")
    d = X.load_paper_split(task, 0)
    assert len(d.y_train) == len(d.y_test) == 520  # 20 subjects x 26 recordings each
    assert d.q is not None and d.q.min() >= 0 and d.q.max() == 1
    assert np.all(d.q[d.y_train < 0] == 1)  # healthy: score 1 (Section 6.3)
    assert d.X_train.min() >= 0 and d.X_train.max() <= 1
    bank = next(t for t in sp.TASKS if t.name == "bank marketing")
    raw, _, _ = load_dataset("bank_marketing")
    assert "duration" in raw.columns and "duration" in bank.drop_columns
    breast = next(t for t in sp.TASKS if t.name == "breast cancer")
    d = X.load_paper_split(breast, 0)
    assert len(d.y_train) == 100 and len(d.y_test) == 599  # 699 rows: 783 not available
    assert "783" in d.notes


def test_tiny_slice_through_the_runner(tmp_path):
    task = replace(next(t for t in sp.TASKS if t.name == "breast cancer"), subsample=120)
    tiny = replace(
        sp.SUITE,
        tasks=[task],
        methods=[
            MethodSpec(
                "Span-rule",
                "span_rule",
                {"search": "class_weights", "log2_C_pos": (-2, 6, 4), "log2_C_neg": (-2, 6, 4)},
            ),
            MethodSpec("default", "default"),
        ],
        protocol=replace(sp.SUITE.protocol, train_size=60),
        experiments=[],
        yardsticks={"default": "default"},
    )
    summary = run_suite(tiny, tmp_path, progress=False, entropy=False)
    assert (summary.n_cells, summary.n_ok) == (2, 2)
    rows = [
        json.loads(x) for x in (tmp_path / "span-paper" / "results.jsonl").read_text().splitlines()
    ]
    span = next(r for r in rows if r["method"] == "Span-rule")
    assert span["n_train"] == 60 and span["n_test"] == 60
    assert span["selection_info"]["n_candidates"] == 9
    assert 0 <= span["estimate"] <= 1
    paths = sp.error_by_method(pd.DataFrame(rows), tmp_path)
    assert paths and paths[0].exists()


def test_grid_study_tables_on_a_tiny_profile(tmp_path):
    """The Tables 2-6 driver on one task at 60 training samples and 9 models: the tables carry
    the summary's numbers beside the paper's, and tasks outside the profile are "not run"."""
    profile = {"breast cancer": {"step": 8.0, "n_train": 60, "span_bound": False}}
    files = sp.run_grid_study(tmp_path, 0, profile)
    assert all(p.exists() and p.stat().st_size > 0 for p in files)
    models = pd.read_csv(tmp_path / "models_breast_cancer.csv")
    assert len(models) == 9
    summary = pd.read_csv(tmp_path / "summary.csv").set_index("task")
    assert summary.loc["breast cancer", "status"] == "ok"
    assert summary.loc["breast cancer", "n_train"] == 60
    assert (summary.drop(index="breast cancer")["status"] == "not run").all()
    want = X.summarise_grid(models)
    t2 = pd.read_csv(tmp_path / "table2_3.csv").set_index("task")
    assert t2.loc["breast cancer", "Span-rule ours"] == pytest.approx(want["sel_span_rule"])
    assert t2.loc["breast cancer", "K-fold CV ours"] == pytest.approx(want["sel_cv"])
    assert t2.loc["breast cancer", "Min. error ours"] == pytest.approx(want["min_error"])
    assert t2.loc["breast cancer", "Span-rule paper"] == sp.TABLE2["breast cancer"][0]
    assert np.isnan(t2.loc["mushrooms", "Span-rule ours"])
    t4 = pd.read_csv(tmp_path / "table4.csv").set_index("task")
    assert t4.loc["breast cancer", "Span-rule ours"] == pytest.approx(want["rmse_span_rule"])


def test_mnist_efficiency_table_on_a_small_size(tmp_path):
    task = "MNIST 1's vs. 7's"
    csv, md = sp.run_mnist_efficiency(tmp_path, 0, sizes=(80,), log2_C=((0.0, 0.0),), tasks=[task])
    df = pd.read_csv(csv)
    assert list(df["status"]) == ["ok", "not run (Table 1 size)"]
    ok = df.iloc[0]
    assert (ok["task"], ok["n_train"], ok["n_models"]) == (task, 80, 1)
    assert ok["span_rule_s"] >= ok["spans_only_s"] > 0 and ok["cv_s"] > 0
    assert ok["ratio_span_over_cv"] == pytest.approx(ok["span_rule_s"] / ok["cv_s"])
    assert ok["n_sv"] >= ok["n_inbound"] and 0 <= ok["test_error_mean"] <= 1
    assert md.exists()


def test_grid_study_resumes_a_stopped_run(tmp_path, monkeypatch):
    """Stopped in its second task, the Tables 2-6 driver keeps the first (checkpoint); the
    next run computes only the second, reuses the first's models and time, and ends with the
    checkpoint removed."""
    profile = {
        "breast cancer": {"step": 8.0, "n_train": 60, "span_bound": False},
        "banana": {"step": 8.0, "n_train": 60, "span_bound": False},
    }
    (tmp_path / "fresh").mkdir()
    sp.run_grid_study(tmp_path / "fresh", 0, profile)
    calls, _ = stop_then_resume(
        monkeypatch, studies, "_grid_study_task", lambda: sp.run_grid_study(tmp_path, 0, profile)
    )
    assert [c[0].name for c in calls] == ["banana"]
    assert not (tmp_path / "grid_study.checkpoint.jsonl").exists()
    summary = pd.read_csv(tmp_path / "summary.csv").set_index("task")
    assert (summary.loc[["breast cancer", "banana"], "status"] == "ok").all()
    for f in ("models_breast_cancer.csv", "table2_3.csv", "table4.csv", "table5.csv"):
        pd.testing.assert_frame_equal(  # what an uninterrupted run writes, but the times
            pd.read_csv(tmp_path / f).filter(regex="^(?!time_)"),
            pd.read_csv(tmp_path / "fresh" / f).filter(regex="^(?!time_)"),
        )


@pytest.mark.parametrize(
    "owner, name, run, arg, unit",
    [
        (
            studies,
            "_mnist_efficiency_row",
            lambda out: sp.run_mnist_efficiency(
                out, 0, sizes=(60, 80), log2_C=((0.0, 0.0),), tasks=["MNIST 1's vs. 7's"]
            ),
            1,
            80,
        ),
        (
            X,
            "_ringnorm_point",
            lambda out: sp.run_ringnorm_scaling(
                out, 0, sizes=(32, 48), dims=(2,), run_sizes=(32, 48), step=16.0
            ),
            0,
            48,
        ),
    ],
)
def test_size_experiments_resume_a_stopped_run(tmp_path, monkeypatch, owner, name, run, arg, unit):
    calls, files = stop_then_resume(monkeypatch, owner, name, lambda: run(tmp_path))
    assert [c[arg] for c in calls] == [unit]  # only the second size ran again
    assert (pd.read_csv(files[0])["status"] == "ok").sum() == 2
    assert not list(tmp_path.glob("*.checkpoint.jsonl"))
