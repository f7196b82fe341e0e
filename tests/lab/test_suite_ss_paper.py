"""The ss-paper suite: definition, transcriptions, figures and experiments on tiny inputs, and a
tiny slice through the runner."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from svmtune.bench.runner import run_suite
from svmtune.bench.suite import Task, get_suite, suite_module
from svmtune.criteria.ss_core import ss_db
from svmtune.datasets import list_datasets
from svmtune.methods.base import METHODS, selector_class

E = suite_module("_ss_experiments")
sp = suite_module("ss_paper")


def test_suite_is_registered_and_consistent():
    suite = get_suite("ss-paper")
    assert suite is sp.SUITE and suite.name == "ss-paper"
    names = set(list_datasets())
    for t in suite.tasks:
        assert t.dataset in names, t.dataset
    for m in suite.methods:
        assert m.method in METHODS, m.method
    assert suite.yardstick_labels() == {"grid": "grid-10fold", "default": "default"}
    labels = {m.label: m for m in suite.methods}
    assert labels["CV (F1)"].params["scoring"] == "f1"
    assert labels["CV (Hinge)"].params["scoring"] == "hinge"
    assert labels["CV (F1)"].params["n_splits"] == labels["CV (Hinge)"].params["n_splits"] == 5
    # the macro-F1 search is CV (F1) but for its scoring
    macro = labels[sp.MACRO_LABEL]
    assert macro.params == {**labels["CV (F1)"].params, "scoring": "f1_macro"}
    assert labels["S&S-RB"].method == "ss" and labels["S&S-RB"].params == {}
    # every task is a Table 2 row; the Table 2 row without a task is the documented one
    tasks = {t.name for t in suite.tasks}
    assert tasks <= set(sp.TABLE2)
    assert set(sp.TABLE2) - tasks == {"mnist_784"}
    # penbased_1(5,8,9): the digits 5, 8, 9 of penbased, Table 1's 3165 x 16
    from svmtune.bench.runner import prepare_task
    from svmtune.datasets import load_dataset

    (pen,) = [t for t in suite.tasks if t.name == "penbased_1(5,8,9)"]
    data = prepare_task(pen, load_dataset, suite.seed)
    assert data.X.shape == (3165, 16) and sorted(set(data.y)) == [5, 8, 9]
    # every option set is accepted by its selector
    for m in suite.methods:
        selector_class(m.method)(**m.params)


def test_published_entries_match_tasks_and_labels():
    suite = sp.SUITE
    tasks = {t.name for t in suite.tasks}
    labels = {m.label for m in suite.methods}
    assert len(suite.published) == len(tasks) * 3 * 2
    for p in suite.published:
        assert p["task"] in tasks and p["method"] in labels
        assert p["metric"] in ("f1", "time")
        if p["metric"] == "f1":
            assert 40.0 < p["value"] <= 100.0
        else:
            assert 0.0 < p["value"] < 2000.0
    pub = {(p["task"], p["method"], p["metric"]): p["value"] for p in suite.published}
    # spot checks against the text of Table 2
    assert pub[("eeg-eye-state", "CV (F1)", "time")] == 832.059
    assert pub[("breast tissue", "S&S-RB", "f1")] == 47.01
    assert pub[("diabetes", "CV (Hinge)", "f1")] == 72.55
    assert pub[("tae", "CV (Hinge)", "time")] == 3.22


def test_table1_transcription_is_consistent_with_eq9():
    """Where Table 1 prints a plausible d, S&S = 20 log10(d / (6 sigma)) to print precision;
    the four rows whose d column repeats the S&S column are the documented typesetting
    errors."""
    bad = {"balance", "banana", "bands", "banknote authentication"}
    for task, (d, sigma, ss) in sp.TABLE1.items():
        if task in bad:
            assert d == ss
            assert sp.paper_d_implied(sigma, ss) > 0
            continue
        assert ss_db(d, sigma) == pytest.approx(ss, abs=0.12), task
    assert sp.paper_d_implied(1.0 / 6.0, 0.0) == pytest.approx(1.0)


def _rows():
    rows = []
    for t, s in (("iris", 3.0), ("tae", -2.6), ("heart", -1.0)):
        for split in range(2):
            for m, f1 in (("S&S-RB", 0.8), ("CV (F1)", 0.78), ("CV (Hinge)", 0.79)):
                rows.append(
                    dict(
                        task=t,
                        split=split,
                        method=m,
                        status="ok",
                        f1=f1 + 0.01 * split,
                        criterion=s if m == "S&S-RB" else 0.1,
                        selection_time=0.01 if m == "S&S-RB" else 2.0,
                        final_fit_time=0.01,
                        default_fit_time=0.005,
                    )
                )
    rows.append(dict(task="iris", split=0, method="S&S-RB", status="error: x"))
    return pd.DataFrame(rows)


def test_fig11_and_acceptance_table_on_a_synthetic_frame(tmp_path):
    df = _rows()
    paths = sp.fig11_f1_vs_ss(df, tmp_path)
    assert [p.suffix for p in paths] == [".png", ".csv"] and paths[0].stat().st_size > 0
    table = pd.read_csv(paths[1], index_col=[0, 1])
    assert table.loc[("ours", "tae"), "ss"] == pytest.approx(-2.6)
    assert table.loc[("ours", "tae"), "f1"] == pytest.approx(80.5)
    assert table.loc[("paper", "iris"), "f1"] == pytest.approx(98.89)
    md, acc = sp.time_ratio_table(df, tmp_path)
    t = pd.read_csv(acc, index_col=0)
    assert t.loc["heart", "S&S-RB - CV (F1)"] == pytest.approx(2.0)
    assert t.loc["heart", "folds S&S-RB & CV (F1)"] == 2
    assert t.loc["heart", "S&S-RB time / SVC fit (mean)"] == pytest.approx(4.0)
    assert t.loc["heart", "time CV (F1) / S&S-RB"] == pytest.approx(2.01 / 0.02)
    text = md.read_text()
    assert "mean over the 3 tasks where both ran (6 shared folds): +2.00 points" in text
    assert "at most 5 on every one of 3 tasks: yes (largest 4.00" in text
    assert "F1 against grid-10fold: no task where both ran." in text


def test_acceptance_compares_on_shared_folds_only(tmp_path):
    """A CV fold without its S&S-RB fold (a partial run) changes neither the F1 difference nor
    the time ratio; a task whose S&S-RB is slow and far below CV fails both criteria."""
    df = _rows()
    extra = dict(df.iloc[0])
    extra.update(split=7, method="CV (F1)", f1=0.0, selection_time=50.0)
    df = pd.concat([df, pd.DataFrame([extra])], ignore_index=True)
    md, acc = sp.time_ratio_table(df, tmp_path)
    t = pd.read_csv(acc, index_col=0)
    assert t.loc["iris", "S&S-RB - CV (F1)"] == pytest.approx(2.0)
    assert t.loc["iris", "folds S&S-RB & CV (F1)"] == 2
    assert t.loc["iris", "time CV (F1) / S&S-RB"] == pytest.approx(2.01 / 0.02)
    # the unshared fold still counts in the plain mean F1 of CV (F1)
    assert t.loc["iris", "F1 CV (F1)"] == pytest.approx(100 * (0.78 + 0.79 + 0.0) / 3)
    slow = df.copy()
    sel = (slow["task"] == "tae") & (slow["method"] == "S&S-RB")
    slow.loc[sel, "f1"] = 0.5
    slow.loc[sel & (slow["split"] == 1), "selection_time"] = 0.05
    md, acc = sp.time_ratio_table(slow, tmp_path)
    text = md.read_text()
    assert "(at least −2: NO)" in text and "lowest: tae -28.50" in text
    assert "at most 5 on every one of 3 tasks: NO (largest 8.00, tae)" in text
    assert "single folds above 5: tae (max 12.00)" in text
    assert sp.fig11_f1_vs_ss(df[df["status"] != "ok"], tmp_path) == []
    assert sp.time_ratio_table(pd.DataFrame(), tmp_path) == []


def test_copt_gap_against_direct_reading():
    g = np.arange(-3.0, 4.0)
    loss = (g - 1.0) ** 2
    out = E.copt_gap(g, loss, 2.0**2.5)
    assert out["log2_C_cv"] == 1.0 and out["abs_log2_gap"] == pytest.approx(1.5)
    assert out["excess_loss"] == pytest.approx(0.5 * (1.0 + 4.0))  # interpolated 2.5
    assert E.copt_gap(g, loss, 2.0**10)["excess_loss"] == pytest.approx(4.0)  # clamped at 3
    with pytest.raises(ValueError, match="positive"):
        E.copt_gap(g, loss, 0.0)
    with pytest.raises(ValueError, match="same length"):
        E.copt_gap(g, loss[:-1], 1.0)


def test_input_space_ss_matches_direct_computation():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(300, 2)), rng.normal(size=(300, 2)) + [3.0, 0.0]])
    y = np.repeat([0, 1], 300)
    r = E.input_space_ss(X, y, spread="isotropic", estimator="plain")
    d = np.linalg.norm(X[y == 0].mean(0) - X[y == 1].mean(0))
    s = np.sqrt(0.5 * (X[y == 0].var(0).mean() + X[y == 1].var(0).mean()))
    assert r["d"] == pytest.approx(d) and r["sigma"] == pytest.approx(s)
    assert r["ss"] == pytest.approx(20 * np.log10(d / (6 * s)))


def _loader(name):
    from tests.bench._tiny import loader

    return loader(name)


def test_experiments_on_tiny_data(tmp_path):
    tasks = [Task("two", "two"), Task("three", "three")]
    rows = E.table1_rows(tasks, {"two": (1.0, 0.5, -9.5)}, loader=_loader)
    assert [r["task"] for r in rows] == ["two", "three"]
    assert rows[0]["paper_ss"] == -9.5 and rows[1]["paper_ss"] is None
    for r in rows:
        for spread in ("directional", "isotropic"):
            assert np.isfinite(r[f"ss_{spread}_plain"]) and r[f"sigma_{spread}_loo"] > 0
        assert np.isfinite(r["kernel_ss"]) and r["kernel_C"] > 0
    study = E.spread_copt_rows(tasks[:1], loader=_loader, log2_C=(-2.0, 2.0, 2.0), n_splits=3)
    assert {r["spread"] for r in study} == {"directional", "isotropic"}
    for r in study:
        assert r["abs_log2_gap"] >= 0 and 0.0 <= r["cv_error_min"] <= r["cv_error_at_pred"] + 1
        assert r["excess_loss"] >= -1e-12
    assert E.spread_copt_rows(tasks[:1], loader=_loader, max_n=10) == []
    assert E.spread_copt_rows(tasks[1:], loader=_loader) == []  # multiclass: no hinge CV


def test_tiny_slice_through_the_runner(tmp_path):
    suite = replace(
        sp.SUITE,
        tasks=[Task("two", "two")],
        methods=[m for m in sp.SUITE.methods if m.label in ("default", "S&S-RB")],
        experiments=[],
        yardsticks={"default": "default"},
    )
    run_suite(suite, tmp_path, loader=_loader, n_jobs=1, progress=False, max_cells=4, entropy=False)
    lines = (tmp_path / "ss-paper" / "results.jsonl").read_text().splitlines()
    rows = [json.loads(s) for s in lines]
    rows = [r for r in rows if "method" in r]
    assert len(rows) == 4
    for r in rows:
        assert r["status"] == "ok", r.get("traceback")
        assert 0.0 <= r["f1"] <= 1.0
    ss = [r for r in rows if r["method"] == "S&S-RB"]
    assert ss and all(np.isfinite(r["criterion"]) and r["n_svm_fits"] == 0 for r in ss)
    df = pd.DataFrame(rows)
    assert len(sp.fig11_f1_vs_ss(df, tmp_path)) == 2


def test_experiment_files_on_a_small_bundled_set(tmp_path):
    """The suite's Table 1 and spread experiments write their rows (CSV) and a summary (MD)."""
    tasks = [Task("appendicitis", "appendicitis")]
    csv, md = E.table1_experiment(tasks, {"appendicitis": (1.0, 0.5, -9.5)})(tmp_path / "t1", 0)
    t1 = pd.read_csv(csv)
    assert list(t1["task"]) == ["appendicitis"] and t1.loc[0, "paper_ss"] == -9.5
    assert "| appendicitis |" in md.read_text()
    csv, md = E.spread_copt_experiment(tasks)(tmp_path / "sc", 0)
    sc = pd.read_csv(csv)
    assert set(sc["spread"]) == {"directional", "isotropic"}
    text = md.read_text()
    assert "Tasks where directional is closer than isotropic" in text and "of 1" in text
    csv, md = E.spread_copt_experiment([Task("iris", "iris")])(tmp_path / "mc", 0)
    assert md.read_text().startswith("no binary task")  # multiclass: no hinge-loss CV


def test_acceptance_gives_the_variants_their_own_lines(tmp_path):
    """The balanced variant gets the same numbers, after and apart from S&S-RB's criteria."""
    df = _rows()
    bal = df[df["method"] == "S&S-RB"].copy()
    bal["method"] = sp.BALANCED_LABEL
    bal["f1"] = bal["f1"] - 0.05
    md, acc = sp.time_ratio_table(pd.concat([df, bal], ignore_index=True), tmp_path)
    t = pd.read_csv(acc, index_col=0)
    assert t.loc["heart", "S&S-RB - CV (F1)"] == pytest.approx(2.0)
    assert t.loc["heart", "S&S-RB balanced - CV (F1)"] == pytest.approx(-3.0)
    assert t.loc["heart", "S&S-RB balanced time / SVC fit (mean)"] == pytest.approx(4.0)
    text = md.read_text()
    head, variant = text.split("The same for 'S&S-RB balanced', beyond the paper")
    assert "F1 of S&S-RB − CV (F1), mean over the 3 tasks" in head and "balanced" not in head
    assert "F1 of S&S-RB balanced − CV (F1), mean over the 3 tasks where both ran" in variant
    assert "-3.00 points (at least −2: NO)" in variant
    # without variant rows the summary is S&S-RB's alone
    md, _ = sp.time_ratio_table(df, tmp_path)
    assert "The same for" not in md.read_text()


def test_macro_f1_from_confusion_is_sklearns():
    from sklearn.metrics import confusion_matrix, f1_score

    rng = np.random.default_rng(0)
    for k in (2, 3, 4):
        for _ in range(20):
            y = rng.integers(0, k, 30)
            pred = np.where(rng.random(30) < 0.6, y, rng.integers(0, k, 30))
            if rng.random() < 0.3:
                pred[:] = 0  # classes never predicted
            labels = np.arange(k)
            c = confusion_matrix(y, pred, labels=labels)
            ref = f1_score(y, pred, labels=labels, average="macro", zero_division=0.0)
            assert sp.macro_f1_from_confusion(c) == pytest.approx(ref)
    assert sp.macro_f1_from_confusion([[5, 0], [0, 0]]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="square matrix"):
        sp.macro_f1_from_confusion([[1, 2, 3]])


def test_acceptance_in_macro_f1(tmp_path):
    """Binary tasks: macro-F1 from the confusion matrices, against "CV (macro F1)"; multiclass
    tasks: the stored (macro) F1, against "CV (F1)"; rows without a confusion matrix and
    unshared folds are left out."""
    rows = []
    conf = {
        "S&S-RB": [[8, 2], [6, 4]],  # macro (16/24 + 8/16) / 2
        "CV (F1)": [[7, 3], [3, 7]],  # 0.7
        sp.MACRO_LABEL: [[9, 1], [2, 8]],  # (18/21 + 16/19) / 2
    }
    for split in range(2):
        for m, c in conf.items():
            rows.append(dict(task="heart", split=split, method=m, n_classes=2, f1=0.1, confusion=c))
        for m, f1 in (("S&S-RB", 0.9), ("CV (F1)", 0.8), (sp.MACRO_LABEL, 0.1)):
            rows.append(dict(task="iris", split=split, method=m, n_classes=3, f1=f1))
    # a binary row written before confusion matrices were stored, and an unshared fold
    rows.append(dict(task="heart", split=2, method="S&S-RB", n_classes=2, f1=0.5))
    rows.append(
        dict(
            task="heart",
            split=3,
            method=sp.MACRO_LABEL,
            n_classes=2,
            f1=0.5,
            confusion=[[0, 10], [0, 10]],
        )
    )
    common = dict(status="ok", selection_time=0.01, final_fit_time=0.01, default_fit_time=0.01)
    df = pd.DataFrame([{**common, **r} for r in rows])
    md, acc = sp.time_ratio_table(df, tmp_path)
    t = pd.read_csv(acc, index_col=0)
    ss_heart, cv_heart = 100 * (16 / 24 + 8 / 16) / 2, 100 * (18 / 21 + 16 / 19) / 2
    assert t.loc["heart", "macro F1 S&S-RB"] == pytest.approx(ss_heart)
    assert t.loc["heart", f"macro F1 {sp.MACRO_LABEL}"] == pytest.approx(cv_heart)
    assert t.loc["heart", f"S&S-RB - {sp.MACRO_LABEL} (macro F1)"] == pytest.approx(
        ss_heart - cv_heart
    )
    assert t.loc["heart", f"folds S&S-RB & {sp.MACRO_LABEL}"] == 2
    assert t.loc["iris", f"S&S-RB - {sp.MACRO_LABEL} (macro F1)"] == pytest.approx(10.0)
    mean = (ss_heart - cv_heart + 10.0) / 2
    text = md.read_text()
    assert f"{sp.MACRO_LABEL}, mean over the 2 tasks where both ran (4 shared folds" in text
    assert f"{mean:+.2f} points (at least −2: {'yes' if mean >= -2 else 'NO'})" in text
