"""The rbsvm-paper suite: its definition, the paper's numbers, its figure and experiment, and
a tiny slice through the runner."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from svmtune.bench.runner import prepare_task, run_suite
from svmtune.bench.suite import get_suite, suite_module
from svmtune.datasets.registry import manifest
from svmtune.methods.base import METHODS, get_selector
from tests.bench._resume import stop_then_resume

ex = suite_module("_rbsvm_experiments")
rp = suite_module("rbsvm_paper")

#: the lines of the paper's Tables II-VI the transcription is checked against, shipped with
#: the tests (its header cites the paper); copied verbatim from the paper's text
PAPER = Path(__file__).parent / "data" / "rbsvm_paper_tables.txt"
#: the paper's whole text, where a checkout has it beside the repository (not needed)
PAPER_TEXT = Path("/work/shared/papers/000_5fa9282046f80111.txt")


# ----------------------------------------------------------------------------- definition
def test_suite_is_registered_with_the_papers_protocol():
    suite = get_suite("rbsvm-paper")
    assert suite is rp.SUITE and suite.name == "rbsvm-paper"
    assert (suite.protocol.kind, suite.protocol.n_splits, suite.protocol.n_repeats) == (
        "kfold",
        10,
        1,
    )
    assert [t.name for t in suite.tasks] == list(ex.PAPER_TABLE_III)  # the paper's 20 rows
    assert suite.yardstick_labels() == {"grid": "GridSearch", "default": "default"}
    assert rp.LARGE_TASKS == ["ijcnn1"]
    assert "ijcnn1" not in rp.SMALL_TASKS and "twonorm" not in rp.SMALL_TASKS
    assert len(rp.SMALL_TASKS) == 17


def test_each_l2_search_is_its_libsvm_search_with_the_l2_svm():
    specs = {m.label: m for m in rp.SUITE.methods}
    assert set(ex.L2_SEARCHES) <= set(specs)
    for label, (column, _, _) in ex.L2_SEARCHES.items():
        l2, l1 = specs[label], specs[column]
        assert l2.method == l1.method and l2.tuner_params == l1.tuner_params
        assert l2.params == {**l1.params, "final_model": "l2"}, label


def test_tasks_resolve_to_bundled_data_with_the_papers_sizes():
    entries = manifest()
    for task in rp.SUITE.tasks:
        assert task.dataset in entries, task
        n = entries[task.dataset].n
        expected = task.subsample if task.subsample is not None else n
        assert rp.TASK_SIZES[task.name] == expected, task.name
        if task.positive is not None:  # the positive class is a label of the data set
            assert str(task.positive) in entries[task.dataset].class_counts, task
    assert {rp.TASK_SIZES[f"balance-{k}"] for k in (1, 2, 3)} == {625}
    assert rp.TASK_SIZES["adult"] == 1213 and rp.TASK_SIZES["skin-nonskin"] == 10000


def test_one_vs_rest_tasks_give_the_expected_class_counts():
    tasks = {t.name: t for t in rp.SUITE.tasks}
    for name, n_pos in (("balance-1", 288), ("balance-2", 49), ("thyroid", 150), ("cmc", 629)):
        data = prepare_task(tasks[name], _load, seed=0)
        assert set(np.unique(data.y)) == {0, 1} and int(data.y.sum()) == n_pos, name


def _load(name):
    from svmtune.datasets import load_dataset

    return load_dataset(name)


def test_methods_resolve_to_registered_methods_and_their_options_validate():
    labels = [m.label for m in rp.SUITE.methods]
    assert labels[:6] == list(ex.METHOD_LABELS) and "default" in labels
    for m in rp.SUITE.methods:
        assert m.method in METHODS
        get_selector(m.method, dict(m.params))  # raises on an invalid option
    grid = next(m for m in rp.SUITE.methods if m.label == "GridSearch")
    assert grid.params == {
        "log2_sigma": (-8.0, 8.0, 1.0),
        "log2_C": (-8.0, 8.0, 1.0),
        "n_splits": 10,
    }
    for label in ("RandomSearch", "BayesSearch"):
        m = next(m for m in rp.SUITE.methods if m.label == label)
        assert m.params["distribution"] == "uniform"
        assert (m.params["log2_sigma"], m.params["log2_C"]) == ((-8.0, 8.0), (-8.0, 8.0))


def test_fig4_methods_have_the_papers_candidate_counts():
    for label, (method, params) in ex.FIG4_METHODS.items():
        sel = get_selector(method, dict(params))
        count = label.rsplit("-", 1)[-1]
        if method == "grid":
            assert len(sel.sigmas) * len(sel.Cs) == int(count), label
            assert (sel.sigmas.min(), sel.sigmas.max()) == pytest.approx(
                (2.0 ** -(2 if count == "16" else 8), 2.0 ** (2 if count == "16" else 8))
            )
    with pytest.raises(ValueError, match="unknown methods"):
        ex.RuntimeVsN(run_limits={"NoSuchMethod": 500})
    with pytest.raises(ValueError, match="sizes"):
        ex.RuntimeVsN(sizes=(0,))


# ----------------------------------------------------------------------------- published
def test_published_entries_match_tasks_labels_and_metrics():
    tasks = {t.name for t in rp.SUITE.tasks}
    labels = {m.label for m in rp.SUITE.methods}
    pub = rp.SUITE.published
    assert len(pub) == 20 * 6 * 3 + 2 * 5 * 4
    for p in pub:
        assert p["method"] in labels
        if p["table"] in ("III", "V"):
            assert p["task"] in tasks and p["metric"] in ("accuracy", "accuracy_std", "entropy")
        else:
            assert p["table"] in ("IV", "VI") and p["task"] == "all tasks"
            assert p["reference"] == "RBSVM" and p["method"] != "RBSVM"
    keys = [(p["table"], p["task"], p["method"], p["metric"]) for p in pub]
    assert len(set(keys)) == len(keys)
    # spot checks against the printed tables
    get = {k: p["value"] for k, p in zip(keys, pub)}
    assert get[("III", "monks-1", "RBSVM", "accuracy")] == 99.78
    assert get[("III", "hepatitis", "GridSearch", "accuracy_std")] == 6.20
    assert get[("V", "thyroid", "GridSearch", "entropy")] == 0.1647
    assert get[("IV", "all tasks", "GridSearch", "wilcoxon_accuracy_z")] == -3.823
    assert get[("VI", "all tasks", "RMSVM", "wilcoxon_entropy_r_plus")] == 1.0


def test_paper_averages_reproduce_the_printed_average_rows():
    # Table III prints an "average" row: our transcription must reproduce it
    acc = np.array([[m for m, _ in row] for row in ex.PAPER_TABLE_III.values()])
    np.testing.assert_allclose(
        acc.mean(axis=0), [91.39, 90.49, 89.69, 87.06, 86.78, 87.41], atol=0.006
    )
    # Table V's printed averages do not all equal the means of its own rows (RMSVM: printed
    # 0.6050, rows 0.6231); its rows are checked against the paper text verbatim below.


def _paper_rows(text: str, title: str) -> dict[str, list[float]]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == title)
    first = next(i for i in range(start, len(lines)) if lines[i].startswith("1. breast-cancer"))
    out = {}
    for line in lines[first : first + 20]:
        name, rest = line.replace("<b>", "").replace("</b>", "").split("\t", 1)
        out[name.split(". ", 1)[1]] = [float(x) for x in re.findall(r"\d+\.?\d*", rest)]
    return out


def test_transcription_equals_the_paper_text():
    text = PAPER.read_text()
    t2, t3, t5 = (_paper_rows(text, f"TABLE {k}") for k in ("II", "III", "V"))
    for task in ex.PAPER_TABLE_III:
        assert t2[task] == [v for pair in ex.PAPER_TABLE_II[task] for v in pair], task
        assert t3[task] == [v for pair in ex.PAPER_TABLE_III[task] for v in pair], task
        assert t5[task] == list(ex.PAPER_TABLE_V[task]), task
    # the Wilcoxon rows appear in the two tables in order: IV first, then VI
    found = re.findall(r"RBSVM-(\w+)\t(\d+)\t(\d+)\t(-[\d.]+)\t([\d.]+)", text)
    assert len(found) == 10
    for (table, label), (lab, rp_, rm, z, p) in zip(
        [(t, m) for t in ("IV", "VI") for m in ex.PAPER_WILCOXON[t]], found
    ):
        assert lab == label
        assert ex.PAPER_WILCOXON[table][label] == (float(rp_), float(rm), float(z), float(p))


@pytest.mark.skipif(not PAPER_TEXT.exists(), reason="the paper's whole text is not here")
def test_shipped_tables_are_lines_of_the_paper():
    paper = set(PAPER_TEXT.read_text().splitlines())
    body = [ln for ln in PAPER.read_text().splitlines() if not ln.startswith("#")]
    assert len(body) == 3 * 21 + 2 * 6
    assert all(ln in paper for ln in body)


# ----------------------------------------------------------------------------- our side
def _frame(acc: dict[str, dict[str, float]], time: dict[str, float], n_splits: int = 2):
    rows = []
    for task, per in acc.items():
        for m, a in per.items():
            for s in range(n_splits):
                rows.append(
                    {
                        "task": task,
                        "method": m,
                        "split": s,
                        "status": "ok",
                        "accuracy": a + (0.01 if s else -0.01),
                        "entropy": 1.0 - a,
                        "selection_time": time[m],
                        "params": {"sigma": 2.0, "C": 4.0 + s},
                    }
                )
    return pd.DataFrame(rows)


def test_wilcoxon_vs_reference_reproduces_table_iv_grid_row():
    # RBSVM wins 19 tasks by distinct margins and ties one: Table IV's GridSearch row
    tasks = [f"t{i}" for i in range(20)]
    acc = {
        t: {"RBSVM": 0.7 + 0.01 * i, "GridSearch": 0.7 + 0.01 * i - (0.001 * i)}
        for i, t in enumerate(tasks)
    }
    df = _frame(acc, {"RBSVM": 1.0, "GridSearch": 30.0})
    res = ex.wilcoxon_vs_reference(df, "accuracy").set_index("method")
    r = res.loc["GridSearch"]
    assert (r["n_tasks"], r["r_plus"], r["r_minus"]) == (20, 190.0, 0.0)
    assert r["z"] == pytest.approx(-3.823, abs=5e-4) and r["p"] == pytest.approx(0.00013, abs=5e-6)
    # entropy is 1 - accuracy here: RBSVM's is lower everywhere, so R+ = 0 (Table VI sense)
    e = ex.wilcoxon_vs_reference(df, "entropy").set_index("method").loc["GridSearch"]
    assert (e["r_plus"], e["r_minus"]) == (0.0, 190.0)


def test_acceptance_table_ratio_and_verdicts():
    acc = {"a": {"RBSVM": 0.9, "GridSearch": 0.8}, "b": {"RBSVM": 0.7, "GridSearch": 0.75}}
    df = _frame(acc, {"RBSVM": 1.0, "GridSearch": 40.0})
    table, summary = ex.acceptance_table(df, {"a": 100, "b": 5000})
    t = table.set_index("task")
    assert t.loc["a", "ratio"] == pytest.approx(1 / 40) and bool(t.loc["a", "time_ok"])
    assert t.loc["b", "time_ok"] is None  # n > 2000: the time criterion does not apply
    assert t.loc["a", "d_acc"] == pytest.approx(0.1)
    assert summary["n_tasks"] == 2 and summary["accuracy_ok"] and summary["time_ok"]
    slow = _frame(acc, {"RBSVM": 3.0, "GridSearch": 40.0})
    assert ex.acceptance_table(slow, {"a": 100, "b": 100})[1]["time_ok"] is False


def test_c_on_bound_counts_folds_against_each_rows_own_box(tmp_path):
    def row(task, method, C, split, method_params=None):
        return {
            "task": task,
            "method": method,
            "split": split,
            "status": "ok",
            "accuracy": 0.9,
            "selection_time": 1.0,
            "params": {"sigma": 1.0, "C": C},
            "method_params": method_params or {},
        }

    open_c = {"log2_C": [-8.0, 20.0]}
    df = pd.DataFrame(
        [
            row("a", "RBSVM", 256.0, 0),
            row("a", "RBSVM", 256.0 * (1 + 1e-9), 1),
            row("b", "RBSVM", 256.0, 0),
            row("b", "RBSVM", 12.0, 1),
            row("a", "SpanSVM", 3.0, 0),
            row("a", ex.OPEN_C_LABEL, 256.0, 0, open_c),  # inside its own box
            row("b", ex.OPEN_C_LABEL, 2.0**20, 0, open_c),
            {"task": "c", "method": "RBSVM", "split": 0, "status": "error: x"},
        ]
    )
    t = ex.c_on_bound(df).set_index("method")
    assert t.loc["RBSVM", ["folds", "folds_on_bound", "tasks", "tasks_all_on_bound"]].tolist() == [
        4,
        3,
        2,
        1,
    ]
    assert t.loc["SpanSVM", "folds_on_bound"] == 0
    assert t.loc[ex.OPEN_C_LABEL, "log2_C_max"] == "20"
    assert t.loc[ex.OPEN_C_LABEL, "folds_on_bound"] == 1
    # the paper's Table II: RBSVM's C is above 2^8 on monks-2, monks-3 and balance-1..3
    assert t.loc["RBSVM", "paper_tasks_above_256"] == 5
    assert "RMSVM" not in t.index  # no rows, no line
    ex.paper_tables(df, tmp_path, n_splits=2)
    md = (tmp_path / "rbsvm_paper_tables.md").read_text()
    assert "### C on the upper bound of the search box" in md
    assert "| RBSVM | 8 | 4 | 3 | 2 | 1 | 5 |" in md


def test_paper_tables_figure_on_a_tiny_results_frame(tmp_path):
    acc = {"hepatitis": {"RBSVM": 0.85, "GridSearch": 0.8, "SpanSVM": 0.84}}
    df = _frame(acc, {"RBSVM": 0.5, "GridSearch": 20.0, "SpanSVM": 0.4})
    df.loc[len(df)] = {"task": "thyroid", "method": "RBSVM", "split": 0, "status": "error: x"}
    paths = ex.paper_tables(df, tmp_path, n_splits=2)
    names = sorted(p.name for p in paths)
    assert names == ["rbsvm_acceptance.csv", "rbsvm_paper_tables.md", "rbsvm_paper_vs_ours.png"]
    md = (tmp_path / "rbsvm_paper_tables.md").read_text()
    assert "| hepatitis | 89.08 (0.89) / 85.00 (1.41) |" in md  # paper / ours mean (std)
    assert "not run" in md and "0.6512 / 0.1500" in md  # Table V: entropy = 1 - acc
    assert "2, 4.5" in md  # Table II: median sigma, C over the two splits
    assert re.search(r"\| hepatitis \| 155 \| 2 \| 85.00 \| 80.00 \| \+5.00 \|", md)
    assert ex.REFIT_LABEL not in md  # no refit rows: no refit line
    ex.paper_tables(df, tmp_path)  # 10 splits expected: the 2 run are marked
    assert "85.00 (1.41) [2/10]" in (tmp_path / "rbsvm_paper_tables.md").read_text()
    assert ex.paper_tables(df.iloc[0:0], tmp_path)  # an empty frame still writes the tables


def test_paper_tables_report_each_rbsvm_variant_against_the_grid(tmp_path):
    acc = {
        "hepatitis": {"RBSVM": 0.85, "GridSearch": 0.8, ex.REFIT_LABEL: 0.83, ex.OPEN_C_LABEL: 0.7},
        "thyroid": {"RBSVM": 0.9, "GridSearch": 0.95, ex.REFIT_LABEL: 0.93, ex.OPEN_C_LABEL: 0.9},
    }
    times = {"RBSVM": 0.5, "GridSearch": 20.0, ex.REFIT_LABEL: 0.6, ex.OPEN_C_LABEL: 2.0}
    ex.paper_tables(_frame(acc, times), tmp_path, n_splits=2)
    md = (tmp_path / "rbsvm_paper_tables.md").read_text()
    assert f'"{ex.REFIT_LABEL}", the same selection' in md
    assert "2 tasks, mean accuracy 88.00 % vs GridSearch 87.50 % (>= grid: yes)" in md
    assert "per task (pp vs grid): hepatitis +3.00, thyroid -2.00." in md
    assert f'"{ex.OPEN_C_LABEL}", the paper\'s open C range' in md
    # 2 s / 20 s = 1/10 > 1/20: the variant's own time check fails
    assert "2 tasks, mean accuracy 80.00 % vs GridSearch 87.50 % (>= grid: NO)" in md
    assert "selection time ratio <= 1/20: NO; per task (pp vs grid): hepatitis -10.00" in md


def test_paper_tables_compare_rbsvm_with_the_l2_searches(tmp_path):
    L2, R2 = ex.GRID_L2_LABEL, ex.RANDOM_L2_LABEL
    acc = {
        "hepatitis": {"RBSVM": 0.85, "GridSearch": 0.8, L2: 0.84, "RandomSearch": 0.81, R2: 0.87},
        "thyroid": {"RBSVM": 0.9, "GridSearch": 0.95},  # no L2 search here
        "balance-2": {"RBSVM": 0.92, "GridSearch": 0.97, L2: 0.91},
    }
    times = {"RBSVM": 0.5, "GridSearch": 20.0, L2: 40.0, "RandomSearch": 15.0, R2: 25.0}
    df = _frame(acc, times)
    ex.paper_tables(df, tmp_path, n_splits=2)
    md = (tmp_path / "rbsvm_paper_tables.md").read_text()
    assert "## RBSVM vs the searches of the L2-SVM" in md
    assert f'### RBSVM vs "{L2}"' in md and f'### RBSVM vs "{R2}"' in md
    assert f'### RBSVM vs "{ex.BAYES_L2_LABEL}"' not in md  # no rows: no subsection
    # over the 2 tasks with both: RBSVM 88.5 %, L2 grid 87.5 %; libsvm grid 88.5 % there
    assert f"mean accuracy RBSVM 88.50 % vs {L2} 87.50 % (RBSVM >= L2 grid: yes)" in md
    assert "on the same tasks and folds GridSearch (libsvm) 88.50 %" in md
    # paper grid: hepatitis 88.40, balance-2 93.90; ours |80 - 88.4|, |97 - 93.9| and
    # |84 - 88.4|, |91 - 93.9|
    assert "over the 2 tasks with both searches: libsvm grid 5.75 pp, L2 grid 3.65 pp." in md
    # RBSVM wins both tasks by 1 point: tied ranks 1.5 + 1.5 on its side
    assert "over the 2 tasks (Table IV's convention): R+ = 3, R- = 0, z = " in md
    assert "(the paper's Table IV against its GridSearch: R+ = 190, R- = 0, z = -3.823" in md
    # per task: RBSVM, L2 grid, difference, libsvm grid, the paper's RBSVM and grid, time
    assert "| hepatitis | 155 | 2 | 85.00 | 84.00 | +1.00 | 80.00 | 89.08 | 88.40 | 40.0 |" in md
    assert "| balance-2 | 625 | 2 | 92.00 | 91.00 | +1.00 | 97.00 | 94.06 | 93.90 |" in md
    assert "| thyroid | 215 | 2 | 90.00 | 93" not in md
    # the random search of the L2-SVM, beside libsvm's and the paper's RandomSearch (hepatitis
    # 87.80): it beats RBSVM on its one task
    assert f"mean accuracy RBSVM 85.00 % vs {R2} 87.00 % (RBSVM >= L2 random: NO)" in md
    assert "on the same tasks and folds RandomSearch (libsvm) 81.00 %" in md
    assert "over the 1 tasks with both searches: libsvm random 6.80 pp, L2 random 0.80 pp." in md
    assert "(the paper's Table IV against its RandomSearch: R+ = 210, R- = 0, z = -3.919" in md
    assert (
        "| hepatitis | 155 | 2 | 85.00 | 87.00 | -2.00 | 81.00 | 89.08 | 87.80 | 25.0 | 0.0200 |"
        in md
    )
    ex.paper_tables(df[~df["method"].isin([L2, R2])], tmp_path)
    assert "L2-SVM" not in (tmp_path / "rbsvm_paper_tables.md").read_text()  # no rows, no section


def test_probability_table_compares_rbsvm_with_the_platt_yardstick(tmp_path):
    def rows(task, method, losses):
        return [
            {
                "task": task,
                "method": method,
                "split": s,
                "status": "ok",
                "accuracy": 0.9,
                "selection_time": 1.0,
                "log_loss": v,
                "brier": v / 4,
                "params": {"sigma": 1.0, "C": 1.0},
            }
            for s, v in enumerate(losses)
        ]

    P = ex.PLATT_LABEL
    df = pd.DataFrame(
        rows("a", "RBSVM", [0.2, 0.4])
        + rows("a", P, [0.5, 0.5])
        + rows("a", "default", [0.6, 0.6])
        + rows("b", "RBSVM", [0.9, 0.7])
        + rows("b", P, [0.3, 0.5])
        + rows("c", "RBSVM", [0.1, 0.1])  # no yardstick on c: left out of the summary
        + rows("d", ex.LOWRANK_LABEL, [0.1, 0.1])  # stands in for RBSVM where it did not run
        + rows("d", P, [0.2, 0.2])
        + [{"task": "b", "method": P, "split": 2, "status": "error: x"}]
    )
    table, summary = ex.probability_table(df)
    t = table.set_index("task")
    assert t.loc["a", "log_loss[RBSVM]"] == pytest.approx(0.3)
    assert t.loc["b", f"brier[{P}]"] == pytest.approx(0.1)
    assert np.isnan(t.loc["b", "log_loss[default]"]) and t.loc["b", "splits[default]"] == 0
    assert t.loc["b", f"splits[{P}]"] == 2  # the error row does not count
    assert t.loc["d", "source[RBSVM]"] == ex.LOWRANK_LABEL
    assert t.loc["a", "source[RBSVM]"] == "RBSVM"
    s = summary.set_index("metric").loc["log_loss"]
    assert (s["n_tasks"], s["reference_lower"]) == (3, 2)
    assert (s["mean_reference"], s["mean_yardstick"]) == pytest.approx((0.4, 1.1 / 3))
    # differences -0.2 (a), +0.4 (b), -0.1 (d): b's rank 3 is the only positive one
    assert (s["r_plus"], s["r_minus"]) == (3.0, 3.0)
    ex.paper_tables(df, tmp_path, n_splits=2)
    md = (tmp_path / "rbsvm_paper_tables.md").read_text()
    assert "## Probabilities: RBSVM's tanh mapping vs scikit-learn's Platt-scaled SVC" in md
    assert "| a | 0.3000 / 0.0750 | not run | not run | 0.6000 / 0.1500 | 0.5000 / 0.1250 |" in md
    assert "| c | 0.1000 / 0.0250 | not run | not run | not run | not run |" in md
    assert f"| d | 0.1000 / 0.0250 {ex.LOWRANK_LABEL} | not run | not run | not run |" in md
    assert f"- log_loss: over 3 tasks, RBSVM 0.4000 vs {P} 0.3667; RBSVM lower on 2 tasks" in md
    ex.paper_tables(df[df["method"] != P], tmp_path, n_splits=2)  # no yardstick: no section
    assert "## Probabilities" not in (tmp_path / "rbsvm_paper_tables.md").read_text()


def test_criterion_along_c_matches_retraining_and_the_rbsvm_choice(tmp_path):
    from svmtune._loo_losses import loo_loss
    from svmtune.bench.runner import default_loader, split_indices
    from svmtune.kernels import Kernel, kernel_matrix
    from svmtune.preprocess import make_preprocessor
    from svmtune.svm import fit_l2_svm
    from svmtune.tuner import SVMTuner

    exp = ex.CriterionAlongC(tasks=("thyroid",), log2_C=(0.0, 4.0), folds=1)
    assert exp.__name__ == "criterion_along_c"
    csv, md, png = exp(tmp_path, 0)
    df = pd.read_csv(csv)
    assert png.stat().st_size > 0 and "| thyroid | 1 |" in md.read_text()
    # the same fold and preprocessing as the suite's RBSVM cell: the same choice
    task = next(t for t in rp.TASKS if t.name == "thyroid")
    data = prepare_task(task, default_loader, rp.SUITE.seed)
    tr, _ = split_indices(data.y, rp.SUITE, task)[0]
    tuner = SVMTuner(method="rbsvm", preprocess=data.preprocess).fit(data.X.iloc[tr], data.y[tr])
    chosen = df[df["chosen"]]
    assert len(chosen) == 1
    assert chosen["log2_C"].iloc[0] == pytest.approx(np.log2(tuner.best_params_["C"]))
    assert df["sigma"].iloc[0] == pytest.approx(tuner.best_params_["sigma"])
    assert set(df.loc[df["on_grid"], "log2_C"]) == {0.0, 4.0}
    # the exact criterion is n retrainings' LOO cross-entropy (checked at log2 C = 4)
    X = make_preprocessor(data.preprocess, data.X).fit_transform(data.X.iloc[tr])
    t = np.where(data.y[tr] == tuner.classes_[1], 1.0, -1.0)
    K = kernel_matrix(np.asarray(X), None, Kernel("rbf", sigma=float(df["sigma"].iloc[0])))
    r = np.empty(t.size)
    for i in range(t.size):
        keep = np.arange(t.size) != i
        sol = fit_l2_svm(K[np.ix_(keep, keep)], t[keep], 2.0**4)
        r[i] = sol.decision_function(K[i : i + 1, keep])[0]
    row = df[df["on_grid"] & (df["log2_C"] == 4.0)].iloc[0]
    assert row["J_exact"] == pytest.approx(np.mean(loo_loss(t, r)[0]), rel=1e-8)
    assert row["loo_error_exact"] == pytest.approx(np.mean(np.where(r > 0, 1, -1) != t))
    with pytest.raises(ValueError, match="unknown rbsvm-paper tasks"):
        ex.CriterionAlongC(tasks=("nope",))(tmp_path, 0)


def test_criterion_at_paper_point_is_the_rbsvm_choice_and_the_papers_point(tmp_path):
    from svmtune._loo_losses import loo_loss
    from svmtune.bench.runner import default_loader, split_indices
    from svmtune.kernels import Kernel, kernel_matrix
    from svmtune.loo.closed_form import closed_form_loo
    from svmtune.preprocess import make_preprocessor
    from svmtune.svm import fit_l2_svm
    from svmtune.tuner import SVMTuner

    exp = ex.CriterionAtPaperPoint(tasks=("thyroid", "balance-2"), folds=1)
    assert exp.__name__ == "criterion_at_paper_point"
    suite_tasks = rp.criterion_at_paper_point.tasks  # every task with an exact RBSVM
    assert "ijcnn1" not in suite_tasks and {"twonorm", "skin-nonskin"} <= set(suite_tasks)
    csv, md, png = exp(tmp_path, 0)
    df = pd.read_csv(csv)
    assert list(df["task"]) == ["thyroid", "balance-2"] and png.stat().st_size > 0
    # thyroid's paper point (1.94, 13.9) is inside [-8, 8]^2 (log2), balance-2's C 926.9 is not
    assert list(df["paper_in_box"]) == [True, False]
    text = md.read_text()
    assert "| thyroid | 1 | yes |" in text and "| balance-2 | 1 | no |" in text
    assert "Paper's point inside the box: 1 tasks, 1 folds" in text
    # the same fold and preprocessing as the suite's RBSVM cell: the same choice, and J is
    # the closed-form LOO cross-entropy at each point, recomputed here
    task = next(t for t in rp.TASKS if t.name == "thyroid")
    data = prepare_task(task, default_loader, rp.SUITE.seed)
    tr, _ = split_indices(data.y, rp.SUITE, task)[0]
    tuner = SVMTuner(method="rbsvm", preprocess=data.preprocess).fit(data.X.iloc[tr], data.y[tr])
    row = df.iloc[0]
    assert row["sigma_ours"] == pytest.approx(tuner.best_params_["sigma"])
    assert row["C_ours"] == pytest.approx(tuner.best_params_["C"])
    assert (row["sigma_paper"], row["C_paper"]) == ex.PAPER_TABLE_II["thyroid"][0]
    X = np.asarray(make_preprocessor(data.preprocess, data.X).fit_transform(data.X.iloc[tr]))
    t = np.where(data.y[tr] == tuner.classes_[1], 1.0, -1.0)
    for who in ("ours", "paper"):
        K = kernel_matrix(X, None, Kernel("rbf", sigma=float(row[f"sigma_{who}"])))
        sol = fit_l2_svm(K, t, float(row[f"C_{who}"]))
        assert row[f"J_{who}"] == pytest.approx(np.mean(loo_loss(t, closed_form_loo(sol, K))[0]))
    # the search minimises J: inside the box its end point is at least as good as the paper's
    assert row["J_ours"] <= row["J_paper"]
    with pytest.raises(ValueError, match="not there"):
        ex.CriterionAtPaperPoint(tasks=("nope",))
    with pytest.raises(ValueError, match="folds must be"):
        ex.CriterionAtPaperPoint(tasks=("thyroid",), folds=0)


def test_runtime_experiment_runs_within_limits_marks_the_rest_and_resumes(tmp_path):
    def loader(name):
        rng = np.random.default_rng(0)
        y = np.arange(120) % 2
        return pd.DataFrame(rng.normal(size=(120, 2)) + y[:, None]), y, {}

    methods = {k: ex.FIG4_METHODS[k] for k in ("RBSVM", "GridSearch-16")}
    exp = ex.RuntimeVsN(
        sizes=(40, 60, 80),
        methods=methods,
        run_limits={"RBSVM": 60, "GridSearch-16": 40},
        loader=loader,
    )
    assert exp.__name__ == "runtime_vs_n"
    csv, png = exp(tmp_path, 0)
    assert png.exists() and png.stat().st_size > 0
    df = pd.read_csv(csv)
    status = {(r.method, r.n): r.status for r in df.itertuples()}
    assert status == {
        ("RBSVM", 40): "ok",
        ("RBSVM", 60): "ok",
        ("RBSVM", 80): "not run",
        ("GridSearch-16", 40): "ok",
        ("GridSearch-16", 60): "not run",
        ("GridSearch-16", 80): "not run",
    }
    assert df.loc[df["method"] == "GridSearch-16", "n_svm_fits"].dropna().tolist() == [160]
    # raising a limit runs only the new point; stored points are reused as they are
    exp2 = ex.RuntimeVsN(
        sizes=(40, 60, 80),
        methods=methods,
        run_limits={"RBSVM": 80, "GridSearch-16": 40},
        loader=loader,
    )
    df2 = pd.read_csv(exp2(tmp_path, 0)[0])
    assert (df2["status"] == "ok").sum() == 4
    pd.testing.assert_series_equal(
        df2.loc[:1, "selection_time"], df.loc[:1, "selection_time"], check_names=False
    )


def test_runtime_vs_n_keeps_the_points_of_a_stopped_run(tmp_path, monkeypatch):
    from svmtune.tuner import SVMTuner

    def loader(name):
        rng = np.random.default_rng(0)
        y = np.arange(120) % 2
        return pd.DataFrame(rng.normal(size=(120, 2)) + y[:, None]), y, {}

    exp = ex.RuntimeVsN(
        sizes=(40, 60, 80),
        methods={"RBSVM": ex.FIG4_METHODS["RBSVM"]},
        run_limits={"RBSVM": 80},
        loader=loader,
    )
    fit, calls = SVMTuner.fit, []

    def stopped_at_the_second_point(self, X, y, **kw):
        calls.append(len(y))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return fit(self, X, y, **kw)

    monkeypatch.setattr(SVMTuner, "fit", stopped_at_the_second_point)
    with pytest.raises(KeyboardInterrupt):
        exp(tmp_path, 0)
    df = pd.read_csv(tmp_path / "runtime_vs_n.csv")
    assert df["status"].tolist() == ["ok", "not run", "not run"]
    assert not (tmp_path / "runtime_vs_n.csv.tmp").exists()
    monkeypatch.setattr(SVMTuner, "fit", fit)
    again = pd.read_csv(exp(tmp_path, 0)[0])
    assert again["status"].tolist() == ["ok"] * 3
    assert again.loc[0, "selection_time"] == df.loc[0, "selection_time"]  # reused, not rerun
    assert (again["cpu_time"] > 0).all()
    assert ex.runtime_column(again) == "cpu_time"  # the plot's time, robust to load
    assert ex.runtime_column(again.assign(cpu_time=[1.0, None, 2.0])) == "selection_time"


# ----------------------------------------------------------------------------- runner slice
def test_a_tiny_slice_runs_through_the_runner(tmp_path):
    summary = run_suite(
        rp.SUITE,
        tmp_path,
        tasks=["hepatitis"],
        methods=["RBSVM", "default", ex.PLATT_LABEL],
        max_cells=3,
        experiments=False,
        progress=False,
    )
    assert (summary.n_run, summary.n_ok) == (3, 3)
    rows = [
        json.loads(x) for x in (tmp_path / "rbsvm-paper" / "results.jsonl").read_text().splitlines()
    ]
    assert [r["method"] for r in rows] == ["RBSVM", "default", ex.PLATT_LABEL]
    # the Platt yardstick is SVC() with calibrated probabilities (which also decide its labels)
    default, platt = rows[1], rows[2]
    assert platt["tuner_params"]["probability"] == "platt" and platt["params"] == default["params"]
    assert platt["log_loss"] != default["log_loss"]
    for r in rows:
        assert r["task"] == "hepatitis" and r["split"] == 0 and r["preprocess"] == "auto"
        assert r["n_train"] + r["n_test"] == 155 and 0.0 <= r["accuracy"] <= 1.0
        assert r["entropy"] is not None and 0.0 <= r["entropy"] <= 1.0
    paths = ex.paper_tables(pd.DataFrame(rows), tmp_path)
    assert "RBSVM" in paths[0].read_text()


def test_paper_tables_print_the_low_rank_rbsvm_where_the_exact_one_did_not_run(tmp_path):
    acc = {
        "ijcnn1": {ex.LOWRANK_LABEL: 0.98, "SpanSVM": 0.97, ex.LOWRANK_RM_LABEL: 0.96},
        "hepatitis": {"RBSVM": 0.85, ex.LOWRANK_LABEL: 0.6},
    }
    times = {"RBSVM": 0.5, "SpanSVM": 1.0, ex.LOWRANK_LABEL: 300.0, ex.LOWRANK_RM_LABEL: 9.0}
    ex.paper_tables(_frame(acc, times), tmp_path, n_splits=2)
    md = (tmp_path / "rbsvm_paper_tables.md").read_text()
    low = f" {ex.LOWRANK_LABEL}"
    # Table III / V / II: ijcnn1's RBSVM column is the low-rank one, named
    rm = f" {ex.LOWRANK_RM_LABEL}"
    assert (
        f"| ijcnn1 | 97.77 (0.02) / 98.00 (1.41){low} | 97.37 (0.04) / 97.00 (1.41) | "
        f"96.27 (0.05) / 96.00 (1.41){rm} | 95.80 (0.02) / not run |"
    ) in md
    assert f"| ijcnn1 | 0.3935 / 0.0200{low} |" in md
    assert f"| ijcnn1 | 7.5612, 3.1361 / 2, 4.5{low} |" in md
    # where the exact RBSVM ran, it is printed and the low-rank rows are not
    assert "| hepatitis | 89.08 (0.89) / 85.00 (1.41) |" in md
    assert "60.00" not in md


def test_fold_experiments_resume_a_stopped_run(tmp_path):
    """A run stopped in its second fold keeps the first (checkpoint); the next run computes
    only the second and writes the table an uninterrupted run writes; the checkpoint goes."""
    exp = ex.CriterionAtPaperPoint(tasks=("thyroid",), folds=2)
    with pytest.MonkeyPatch.context() as mp:
        calls, files = stop_then_resume(
            mp, ex.CriterionAtPaperPoint, "_fold_rows", lambda: exp(tmp_path / "stopped", 0)
        )
    assert [c[2] for c in calls] == [1]  # only fold 1 ran again
    assert not list((tmp_path / "stopped").glob("*.checkpoint.jsonl"))
    fresh = exp(tmp_path / "fresh", 0)[0]
    pd.testing.assert_frame_equal(pd.read_csv(files[0]), pd.read_csv(fresh))
