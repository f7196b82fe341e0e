"""``svmtune bench`` option parsing (:mod:`svmtune.cli._bench`)."""

from __future__ import annotations

import re

import click
import pytest

from svmtune.bench.suite import get_suite
from svmtune.cli._bench import _split_list


def test_split_list_keeps_commas_inside_parentheses():
    assert _split_list(None) is None
    with pytest.raises(click.BadParameter, match="names nothing"):
        _split_list(" , ")
    assert _split_list("RBSVM, default") == ["RBSVM", "default"]
    assert _split_list("Span-rule (sigma, C),5-fold CV (sigma, C)") == [
        "Span-rule (sigma, C)",
        "5-fold CV (sigma, C)",
    ]


@pytest.mark.parametrize("suite", ["rbsvm-paper", "span-paper"])
def test_every_method_label_of_a_suite_can_be_selected_alone(suite):
    for m in get_suite(suite).methods:
        assert _split_list(m.label) == [m.label]


def test_rerun_before_reaches_the_runner_and_a_bad_time_is_a_clear_error(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import svmtune.cli._bench as cli_bench
    from svmtune.bench import runner
    from svmtune.cli._bench import bench

    seen = {}

    def fake_run_suite(suite, out, **kw):
        seen.update(kw)
        return runner.RunSummary(tmp_path / "results.jsonl", 0, 0)

    monkeypatch.setattr(cli_bench, "run_suite", fake_run_suite)
    args = ["--suite", "quick", "--out", str(tmp_path), "--no-experiments", "--no-progress"]
    ok = CliRunner().invoke(bench, [*args, "--rerun-before", "2026-11-24T01:00:00+00:00"])
    assert ok.exit_code == 0, ok.output
    assert seen["rerun_before"] == "2026-11-24T01:00:00+00:00"
    monkeypatch.undo()
    bad = CliRunner().invoke(bench, [*args, "--rerun-before", "yesterday", "--max-cells", "0"])
    assert bad.exit_code != 0
    assert "ISO 8601" in bad.output


def test_an_empty_tasks_or_methods_list_is_a_usage_error(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import svmtune.cli._bench as cli_bench
    from svmtune.cli._bench import bench

    ran = []
    monkeypatch.setattr(cli_bench, "run_suite", lambda *a, **kw: ran.append(kw))
    args = ["--suite", "quick", "--out", str(tmp_path), "--no-experiments", "--no-progress"]
    for option in ("--methods", "--tasks"):
        for value in ("", " , "):
            r = CliRunner().invoke(bench, [*args, option, value])
            assert r.exit_code == 2, r.output
            assert f"Invalid value for '{option}'" in r.output and "names nothing" in r.output
    assert ran == []  # nothing ran, let alone every cell


def test_report_on_a_file_that_is_not_a_results_file(tmp_path):
    from click.testing import CliRunner

    from svmtune.cli._bench import report

    data = tmp_path / "data.csv"
    data.write_text("a,b,label\n1,2,0\n3,4,1\n")
    md = tmp_path / "r.md"
    r = CliRunner().invoke(report, [str(data), "--md", str(md)])
    assert r.exit_code == 1, r.output
    assert "is not a results file" in r.output and "results.jsonl" in r.output
    assert "unparsable" not in r.output and not md.exists()


def test_unwritable_out_and_report_paths_are_one_line_errors(tmp_path):
    from click.testing import CliRunner

    from svmtune.cli._bench import bench, report

    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory\n")
    args = ["--suite", "quick", "--out", str(blocker / "sub"), "--max-cells", "0"]
    r = CliRunner().invoke(bench, [*args, "--no-experiments", "--no-progress"])
    assert r.exit_code == 1, r.output
    assert "cannot read or write a file" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(report, [str(tmp_path), "--md", str(blocker / "report.md")])
    assert r.exit_code == 1 and "cannot write the report" in r.output


def _csv(path, n=60, seed=0):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["label"] = np.where(X[:, 0] > 0, "yes", "no")
    df.loc[2, "b"] = np.nan  # needs the imputing preprocessing, as bundled sets may
    df.to_csv(path, index=False)
    return path


def test_on_data_makes_one_task_per_source(tmp_path):
    from dataclasses import replace

    from svmtune.bench.suite import DataLoader, Protocol, on_data
    from svmtune.datasets import dataset_path
    from svmtune.datasets.registry import file_sha256

    quick = get_suite("quick")
    a = _csv(tmp_path / "mine.csv")
    (tmp_path / "sub").mkdir()
    b = _csv(tmp_path / "sub" / "mine.csv", seed=1)
    s = on_data(quick, [a, b, "Iris"])
    assert s.name == "quick+data" and [t.name for t in s.tasks] == ["mine", "mine-2", "iris"]
    assert [t.dataset for t in s.tasks] == [str(a.resolve()), str(b.resolve()), "iris"]
    assert s.methods == quick.methods and s.protocol == quick.protocol and s.seed == quick.seed
    assert s.published == [] and s.experiments == [] and s.figures == []
    X, y, info = DataLoader(target="label")(s.tasks[0].dataset)
    assert X.shape == (60, 3) and set(y) == {"yes", "no"}
    assert info["version"] == file_sha256(a)
    assert DataLoader()("iris")[2].version == file_sha256(dataset_path("iris"))
    with pytest.raises(ValueError, match="no such file, nor a bundled data set"):
        on_data(quick, [tmp_path / "missing.csv"])
    with pytest.raises(ValueError, match="non-empty list"):
        on_data(quick, [])
    fixed_files = replace(quick, protocol=Protocol(kind="train_test"), tasks=[])
    with pytest.raises(ValueError, match="fixed test files"):
        on_data(fixed_files, [a])


def test_bench_runs_a_suite_on_a_data_file_resumes_and_reports(tmp_path):
    import json

    from click.testing import CliRunner

    from svmtune.cli._bench import bench, report
    from svmtune.datasets.registry import file_sha256

    data = _csv(tmp_path / "mine.csv")
    out = tmp_path / "res"
    args = ["--suite", "quick", "--data", str(data), "--target", "label", "--out", str(out)]
    args += ["--methods", "default,ss", "--no-progress"]
    r = CliRunner().invoke(bench, args)
    assert r.exit_code == 0, r.output
    assert "4 cells, 0 already stored, 4 run (4 ok" in r.output
    rows = [json.loads(x) for x in (out / "quick+data" / "results.jsonl").read_text().splitlines()]
    assert {r_["task"] for r_ in rows} == {"mine"} and len(rows) == 4
    assert {r_["dataset_version"] for r_ in rows} == {file_sha256(data)}
    assert {r_["preprocess"] for r_ in rows} == {"auto"}
    again = CliRunner().invoke(bench, args)
    assert "4 already stored, 0 run" in again.output
    # both runs end with the suite's summary against the yardsticks, cells not cut short
    for out_ in (r.output, again.output):
        assert "Suite `quick+data`: accuracy and selection time against the yardsticks" in out_
        assert "w/t/l vs SVC()" in out_ and re.search(r"│ default +│ +1/1 │ +\+0\.00 │", out_)
        assert re.search(r"│ ss +│ +1/1 │", out_) and "…" not in out_
    rep = CliRunner().invoke(report, [str(out), "--md", str(tmp_path / "r.md")])
    assert rep.exit_code == 0, rep.output
    assert "w/t/l vs SVC()" in rep.output and rep.output.rstrip().endswith(
        f"wrote {tmp_path / 'r.md'}"
    )
    text = (tmp_path / "r.md").read_text()
    assert "The methods and protocol of suite `quick` on other data" in text
    assert "Protocol: 2 stratified random splits" in text and "| mine |" in text
    assert "older definition" not in text
    # the file changes: its cells are computed again, and the report keeps the new rows only
    _csv(data, seed=7)
    changed = CliRunner().invoke(bench, args)
    assert "0 already stored, 4 run (4 ok" in changed.output, changed.output
    CliRunner().invoke(report, [str(out), "--md", str(tmp_path / "r.md")])
    text = (tmp_path / "r.md").read_text()
    assert "4 stored cell rows belong to an older definition" in text


def test_bench_data_cells_depend_on_the_label_column_and_the_dropped_columns(tmp_path):
    import json

    import numpy as np
    from click.testing import CliRunner

    from svmtune.cli._bench import bench, report

    data = _csv(tmp_path / "mine.csv")
    frame = __import__("pandas").read_csv(data)
    frame["other"] = np.where(frame["c"] > 0, "hi", "lo")
    frame.to_csv(data, index=False)
    out = tmp_path / "res"
    base = ["--suite", "quick", "--data", str(data), "--methods", "default", "--out", str(out)]
    base += ["--no-progress", "--drop", "other"]

    def rows():
        lines = (out / "quick+data" / "results.jsonl").read_text().splitlines()
        return [json.loads(x) for x in lines]

    r = CliRunner().invoke(bench, [*base, "--target", "label"])
    assert "0 already stored, 2 run (2 ok" in r.output, r.output
    assert {r_["n_features"] for r_ in rows()} == {3}
    # another label column of the same file is another task definition, not a stored one
    r = CliRunner().invoke(bench, [*base[:-2], "--target", "other", "--drop", "label"])
    assert "0 already stored, 2 run (2 ok" in r.output, r.output
    got = rows()[-2:]
    assert {r_["n_features"] for r_ in got} == {3}
    assert got[0]["data_read"] == {"target": "other", "drop": ["label"]}
    r = CliRunner().invoke(bench, [*base[:-2], "--target", "other", "--drop", "label"])
    assert "2 already stored, 0 run" in r.output
    # dropping nothing keeps 'label' as a feature: again not stored
    r = CliRunner().invoke(bench, [*base[:-2], "--target", "other"])
    assert "0 already stored, 2 run (2 ok" in r.output, r.output
    assert {r_["n_features"] for r_ in rows()[-2:]} == {5}  # a, b, c and label one-hot
    rep = CliRunner().invoke(report, [str(out), "--md", str(tmp_path / "r.md")])
    assert rep.exit_code == 0, rep.output
    text = (tmp_path / "r.md").read_text()
    assert "label 'other'" in text and "without 'label'" not in text
    assert "4 stored cell rows belong to an older definition" in text


def test_bench_data_with_groups(tmp_path, monkeypatch):
    import json

    import numpy as np
    import pandas as pd
    from click.testing import CliRunner

    from svmtune.cli._bench import bench, report

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(60, 2)), columns=["a", "b"])
    frame["subject"] = np.repeat([f"s{i}" for i in range(20)], 3)
    frame["label"] = np.repeat(rng.integers(0, 2, 20), 3)
    data = tmp_path / "grouped.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "res"
    base = ["--suite", "quick", "--data", str(data), "--target", "label", "--out", str(out)]
    base += ["--methods", "default,grid-10fold,rbsvm,span", "--no-progress"]
    import svmtune.methods.baselines as baselines

    inner = []  # the grid's inner folds: they keep the training part's subjects whole
    make_folds = baselines.make_folds

    def recording(y, n_splits, random_state, sample_weight=None, groups=None):
        inner.append((groups, make_folds(y, n_splits, random_state, sample_weight, groups)))
        return inner[-1][1]

    monkeypatch.setattr(baselines, "make_folds", recording)
    import svmtune.methods.rbsvm as rbsvm_method

    lgo = []  # the group codes RBSVM's objective holds out: the training part's subjects
    objective = rbsvm_method._rbsvm_objective  # the search's unchecked objective

    def recording_objective(*args, **kw):
        lgo.append(kw.get("codes"))
        return objective(*args, **kw)

    monkeypatch.setattr(rbsvm_method, "_rbsvm_objective", recording_objective)
    r = CliRunner().invoke(bench, [*base, "--groups", "subject"])
    assert "0 already stored, 8 run (8 ok" in r.output, r.output
    assert inner and all(g is not None and len(g) == 42 for g, _ in inner)
    for g, folds in inner:
        assert all(not set(g[tr]) & set(g[te]) for tr, te in folds)
    assert lgo and all(g is not None and len(g) == 42 and len(set(g)) == 14 for g in lgo)
    rows = [json.loads(x) for x in (out / "quick+data" / "results.jsonl").read_text().splitlines()]
    cells = [x for x in rows if x.get("kind") == "cell"]
    assert {x["method"]: x["cv_groups"] for x in cells} == {
        "default": False,
        "grid-10fold": True,  # cross-validates: gets the groups
        "rbsvm": True,  # leaves one subject out at a time, in closed form
        "span": False,  # leave-one-out of single rows: selects without them
    }
    assert {x["n_features"] for x in cells} == {2} and {x["n_test"] for x in cells} == {18}
    assert cells[0]["data_read"] == {"target": "label", "groups": "subject"}
    rep = CliRunner().invoke(report, [str(out), "--md", str(tmp_path / "r.md")])
    assert rep.exit_code == 0, rep.output
    assert "groups 'subject'" in (tmp_path / "r.md").read_text()
    # without --groups the same file is another task definition (shuffled rows)
    r = CliRunner().invoke(bench, [*base, "--drop", "subject"])
    assert "0 already stored, 8 run (8 ok" in r.output, r.output
    r = CliRunner().invoke(bench, [*base, "--groups", "patient"])
    assert r.exit_code != 0 and "no column 'patient'" in r.output
    r = CliRunner().invoke(bench, ["--suite", "quick", "--groups", "subject", "--out", str(out)])
    assert r.exit_code != 0 and "apply to --data files only" in r.output
    # span-paper's split draws 400 training units: with --groups they are groups
    r = CliRunner().invoke(
        bench,
        ["--suite", "span-paper", "--data", str(data), "--target", "label", "--groups"]
        + ["subject", "--out", str(out)],
    )
    assert r.exit_code != 0 and "draws 400 groups per split" in r.output, r.output
    assert "has 20" in r.output


def test_bench_on_a_bundled_data_set_with_side_file_groups(tmp_path):
    import json

    from click.testing import CliRunner

    from svmtune.cli._bench import bench

    out = tmp_path / "res"
    args = ["--suite", "quick", "--data", "parkinson_speech_train", "--groups", "subject_id"]
    args += ["--methods", "default", "--out", str(out), "--no-progress"]
    r = CliRunner().invoke(bench, args)
    assert "2 run (2 ok" in r.output, r.output
    rows = [json.loads(x) for x in (out / "quick+data" / "results.jsonl").read_text().splitlines()]
    cells = [x for x in rows if x.get("kind") == "cell"]
    assert [x["data_read"] for x in cells] == [{"groups": "subject_id"}] * 2
    # 30 % of the 40 subjects are tested, each with all 26 of its recordings
    assert {x["n_test"] % 26 for x in cells} == {0} and {x["n_features"] for x in cells} == {26}


def test_bench_data_errors_are_clear(tmp_path):
    from click.testing import CliRunner

    from svmtune.cli._bench import bench

    data = _csv(tmp_path / "mine.csv")
    base = ["--out", str(tmp_path / "res"), "--no-progress"]

    def run(*extra):
        return CliRunner().invoke(bench, [*extra, *base])

    r = run("--suite", "quick", "--data", str(data), "--target", "nope")
    assert r.exit_code != 0 and "target column 'nope' not found" in r.output
    r = run("--suite", "quick", "--data", str(data), "--target", "label", "--drop", "id")
    assert r.exit_code != 0 and "no column 'id' in the features" in r.output
    r = run("--suite", "quick", "--data", str(data), "--drop", "a", "--drop", "b", "--drop", "c")
    assert r.exit_code != 0 and "drops every feature column" in r.output
    r = run("--suite", "quick", "--drop", "a")
    assert r.exit_code != 0 and "apply to --data files only" in r.output
    r = run("--suite", "quick", "--target", "label")
    assert r.exit_code != 0 and "apply to --data files only" in r.output
    r = run("--suite", "quick", "--data", "iris", "--target", "label")
    assert r.exit_code != 0 and "has its labels in 'target'; --target does not apply" in r.output
    r = run("--suite", "quick", "--data", str(tmp_path / "none.csv"))
    assert r.exit_code != 0 and "no such file, nor a bundled data set" in r.output
    r = run("--suite", "span-paper", "--data", str(data), "--target", "label")
    assert r.exit_code != 0 and "draws 400 rows per split" in r.output and "has 60" in r.output
    assert not (tmp_path / "res" / "span-paper+data").exists()


def test_a_failing_summary_does_not_fail_the_run(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import svmtune.cli._bench as cli_bench
    from svmtune.cli._bench import bench

    def broken(*a, **k):
        raise RuntimeError("cannot summarise")

    monkeypatch.setattr(cli_bench, "build_report", broken)
    data = _csv(tmp_path / "mine.csv")
    args = ["--suite", "quick", "--data", str(data), "--target", "label", "--methods", "default"]
    r = CliRunner().invoke(bench, [*args, "--out", str(tmp_path / "res"), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "2 run (2 ok" in r.output and "no summary (RuntimeError: cannot summarise)" in r.output
    assert (tmp_path / "res" / "quick+data" / "results.jsonl").exists()


def test_data_cells_that_fail_before_the_split_are_reported_as_failed(tmp_path):
    """A --data cell failing while its data are prepared (a continuous label column: classes
    of one row) keeps its file's version, so the report shows it as a failed current cell,
    not as a row of an older definition."""
    import json

    from click.testing import CliRunner

    from svmtune.cli._bench import bench, report

    data = _csv(tmp_path / "mine.csv")
    out = tmp_path / "res"
    args = ["--suite", "quick", "--data", str(data), "--target", "a", "--methods", "default"]
    r = CliRunner().invoke(bench, [*args, "--out", str(out), "--no-progress"])
    assert "2 run (0 ok, 2 errors)" in r.output, r.output
    rows = [json.loads(x) for x in (out / "quick+data" / "results.jsonl").read_text().splitlines()]
    assert all(x["dataset_version"] for x in rows)
    CliRunner().invoke(report, [str(out), "--md", str(tmp_path / "r.md")])
    text = (tmp_path / "r.md").read_text()
    assert "older definition" not in text and "Cells that failed" in text
    assert "least populated class" in text
    # a row without a status (hand-edited, older) is shown as such, not a crash
    bad = dict(rows[0], status=None, key=rows[0]["key"])
    lines = (out / "quick+data" / "results.jsonl").read_text().splitlines()
    (out / "quick+data" / "results.jsonl").write_text(
        "\n".join([*lines[1:], json.dumps(bad)]) + "\n"
    )
    rep = CliRunner().invoke(report, [str(out), "--md", str(tmp_path / "r.md")])
    assert rep.exit_code == 0, rep.output
    assert "(no status)" in (tmp_path / "r.md").read_text()


def test_a_data_file_changed_during_a_run_fails_its_cells(tmp_path):
    from svmtune.bench.runner import build_cells, run_cell
    from svmtune.bench.suite import DataLoader, on_data

    data = _csv(tmp_path / "mine.csv")
    suite = on_data(get_suite("quick"), [data], target="label")
    cells = [c for c in build_cells(suite) if c.method.label == "default"]
    loader = DataLoader(target="label")
    _csv(data, seed=7)  # other contents after the cells (their keys) were made
    row = run_cell(cells[0], loader)
    assert row["status"].startswith("error") and "changed since the run started" in row["status"]
    assert row["dataset_version"] == suite.tasks[0].options["sha256"]
