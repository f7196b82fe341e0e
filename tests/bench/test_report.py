"""Reports are built from result files only: not-run cells, published numbers, figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from svmtune.bench.report import build_report
from svmtune.bench.runner import run_suite
from svmtune.bench.suite import MethodSpec

from ._tiny import loader, tiny_suite


def _figure(results, outdir):
    from matplotlib.figure import Figure

    fig = Figure()
    fig.subplots().plot(results["accuracy"].fillna(0).to_numpy())
    p = Path(outdir) / "tiny_accuracy.png"
    fig.savefig(p)
    csv = Path(outdir) / "tiny_table.csv"
    results[["task", "method", "accuracy"]].to_csv(csv, index=False)
    return [p, csv]


def _broken_figure(results, outdir):
    raise RuntimeError("cannot draw")


def _suite():
    return tiny_suite(
        methods=[*tiny_suite().methods, MethodSpec("never", "random", {"n_iter": 1})],
        published=[
            {"table": "T1", "task": "two", "method": "grid", "metric": "accuracy", "value": 91.5},
            {"table": "T1", "task": "two", "method": "never", "metric": "accuracy", "value": 50},
            {
                "table": "T2",
                "task": "all tasks",
                "method": "default",
                "reference": "grid",
                "metric": "wilcoxon_accuracy_r_plus",
                "value": 3.0,
            },
        ],
        figures=[_figure, _broken_figure],
    )


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("res")
    # every cell except the method "never"
    run_suite(_suite(), out, loader=loader, methods=["default", "grid"], progress=False)
    return out


def test_report_tables_published_not_run_and_figures(results_dir, tmp_path):
    md, html = tmp_path / "REPORT.md", tmp_path / "report.html"
    build_report(results_dir, md=md, html=html, suites={"tiny": _suite()})
    text = md.read_text()
    # every (task, method) of the suite: the never-run method is marked in every task
    acc_table = text.split("### Test accuracy (%)")[1].split("###")[0]
    never = [ln for ln in acc_table.splitlines() if ln.startswith("| never |")]
    assert never == ["| never | not run | not run | — |"]
    # the yardstick columns exist for every run method and task
    assert "### Accuracy − grid search (pp)" in text
    assert "### Selection time ÷ one SVC() fit, same splits" in text
    # published numbers beside ours
    lines = (results_dir / "tiny" / "results.jsonl").read_text().splitlines()
    accs = [
        r["accuracy"]
        for r in map(json.loads, lines)
        if r["task"] == "two" and r["method"] == "grid"
    ]
    ours = 100 * sum(accs) / len(accs)
    assert f"| T1 | two | grid | accuracy | 91.500 | {ours:.3f} |" in text
    assert "| T1 | two | never | accuracy | 50.000 | not run |" in text
    # a published Wilcoxon statistic gets ours from the same rows (reference vs method)
    import pandas as pd

    from svmtune.bench.stats import reference_test, task_means

    df = pd.DataFrame(map(json.loads, lines))
    n, w = reference_test(df, "accuracy", "grid", "default")
    means = task_means(df, "accuracy")
    assert n == len(means) and w is not None
    d = (means["grid"] - means["default"]).round(12)
    d = d[d != 0]  # zero differences are dropped before ranking
    assert w.r_plus == pytest.approx(d.abs().rank()[d > 0].sum())
    assert (
        f"| T2 | all tasks | default | wilcoxon_accuracy_r_plus | 3.000 | {w.r_plus:.3f} |" in text
    )
    assert "unknown metric" not in text
    # figures: the generic one and the suite's, a failing figure callable reported, not fatal
    assert re.search(r"!\[.*\]\(REPORT_files/.*cost_accuracy\.png\)", text)
    assert "REPORT_files/" in text and "tiny_accuracy.png" in text
    assert "figure '_broken_figure' failed: RuntimeError: cannot draw" in text
    assert "output file: [tiny_table.csv](REPORT_files/" in text
    assert len(list((tmp_path / "REPORT_files").glob("*tiny_table.csv"))) == 1
    assert len(list((tmp_path / "REPORT_files").glob("*.png"))) == 2
    page = html.read_text()
    assert page.count("data:image/png;base64,") == 2
    assert not re.search(r"src=['\"](?!data:)", page)  # self-contained
    assert "not run" in page and "91.500" in page


def test_summary_opens_the_report_with_both_yardsticks(results_dir, tmp_path):
    md = tmp_path / "S.md"
    build_report(results_dir, md=md, suites={"tiny": _suite()})
    text = md.read_text()
    # the first section, before the suite's own
    assert text.index("## Summary: every method against the two yardsticks") < text.index(
        "## Suite `tiny`"
    )
    summary = text.split("## Summary")[1].split("\n## ")[0]
    lines = {ln.split("|")[1].strip(): ln for ln in summary.splitlines() if ln.startswith("| ")}
    assert "never" not in lines  # no rows: nothing to summarise
    cols = [c.strip() for c in lines["method"].split("|")[1:-1]]
    assert cols == [
        "method",
        "tasks",
        "Δ SVC() pp",
        "w/t/l vs SVC()",
        "Δ grid pp",
        "w/t/l vs grid",
        "× SVC() fit",
        "× grid",
    ]
    # recomputed from the rows: per task the mean over splits, then over tasks
    import pandas as pd

    lines_of = (results_dir / "tiny" / "results.jsonl").read_text().splitlines()
    df = pd.DataFrame([json.loads(x) for x in lines_of])
    g = df[df["method"] == "grid"].groupby("task")
    d = g["accuracy"].mean() - g["default_accuracy"].mean()
    ratio = (g["selection_time"].mean() / g["default_fit_time"].mean()).median()
    grid = dict(zip(cols, (c.strip() for c in lines["grid"].split("|")[1:-1]), strict=True))
    assert grid["tasks"] == "2/2"
    assert grid["Δ SVC() pp"] == f"{100 * d.mean():+.2f}"
    assert grid["w/t/l vs SVC()"] == f"{(d > 1e-12).sum()}/{(d.abs() <= 1e-12).sum()}/" + str(
        (d < -1e-12).sum()
    )
    assert grid["Δ grid pp"] == "—" and grid["× grid"] == "×1"
    assert grid["× SVC() fit"] == f"×{ratio:.3g}"
    default = [c.strip() for c in lines["default"].split("|")[1:-1]]
    assert default[1:4] == ["2/2", "+0.00", "0/2/0"]


def test_without_an_output_file_nothing_is_drawn(results_dir):
    sections = build_report(results_dir, suites={"tiny": _suite()})
    assert sections[0].title.startswith("Summary") and sections[0].tables
    assert not any(s.figures or s.files for s in sections)
    # the suite's figure callables were not called (the broken one would have said so)
    assert not any("failed" in t for s in sections for t in s.text)


def test_report_changes_when_a_result_file_changes(results_dir, tmp_path):
    copy = tmp_path / "res"
    (copy / "tiny").mkdir(parents=True)
    src = (results_dir / "tiny" / "results.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in src]
    (copy / "tiny" / "results.jsonl").write_text("\n".join(src) + "\n")
    build_report(copy, md=tmp_path / "a.md", suites={"tiny": _suite()})
    for r in rows:  # the default method on task "two" now scores 100 % on every split
        if r["task"] == "two" and r["method"] == "default":
            r["accuracy"] = 1.0
    (copy / "tiny" / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    build_report(copy, md=tmp_path / "b.md", suites={"tiny": _suite()})
    a, b = (tmp_path / "a.md").read_text(), (tmp_path / "b.md").read_text()
    assert a != b
    line = [
        ln
        for ln in b.split("### Test accuracy (%)")[1].splitlines()
        if ln.startswith("| default |")
    ][0]
    assert line.split("|")[2].strip() == "100.00"
    # without any change the report is reproduced byte for byte
    build_report(copy, md=tmp_path / "b.md", suites={"tiny": _suite()})
    assert (tmp_path / "b.md").read_text() == b


def _curve_experiment(outdir, seed):
    p = Path(outdir) / "curve.csv"
    p.write_text(f"x,y\n1,{seed}\n")
    return [p]


def _figure_of_the_experiment(results, outdir, *, experiment_files):
    """Copies the experiment's CSV (and says which experiments it was given)."""
    files = experiment_files.get("_curve_experiment", [])
    out = Path(outdir) / "from_experiment.csv"
    out.write_text(
        ";".join(sorted(experiment_files)) + "\n" + "".join(Path(f).read_text() for f in files)
    )
    return [out]


def test_figures_get_the_files_of_stored_experiments(tmp_path):
    suite = tiny_suite(
        methods=[tiny_suite().methods[0]],
        figures=[_figure, _figure_of_the_experiment],
        experiments=[_curve_experiment],
    )
    out, md = tmp_path / "res", tmp_path / "R.md"
    run_suite(suite, out, loader=loader, progress=False, experiments=False)
    build_report(out, md=md, suites={"tiny": suite})
    # before the experiment ran the figure gets no files; the experiment is "not run"
    (got,) = (tmp_path / "R_files").glob("*from_experiment.csv")
    assert got.read_text() == "\n"
    assert "| _curve_experiment | not run |" in md.read_text()
    run_suite(suite, out, loader=loader, progress=False)
    assert (out / "tiny" / "experiments" / "_curve_experiment" / "curve.csv").exists()
    build_report(out, md=md, suites={"tiny": suite})
    (got,) = (tmp_path / "R_files").glob("*from_experiment.csv")
    assert got.read_text() == "_curve_experiment\nx,y\n1,3\n"  # the suite's seed is 3
    # a figure without the keyword is called as before
    assert "tiny_accuracy.png" in md.read_text()


def test_report_without_suite_definition_and_empty(tmp_path, results_dir):
    build_report(results_dir, md=tmp_path / "x.md")  # "tiny" is not a registered suite
    text = (tmp_path / "x.md").read_text()
    assert "No suite definition named 'tiny'" in text and "### Task `two`" in text
    empty = tmp_path / "empty"
    empty.mkdir()
    build_report(empty, md=tmp_path / "e.md")
    assert "No result rows found" in (tmp_path / "e.md").read_text()


def test_rows_of_an_older_suite_definition_are_left_out(results_dir, tmp_path):
    changed = _suite()
    changed.methods[1] = MethodSpec("grid", "grid", {"n_splits": 4})  # new params, new cells
    build_report(results_dir, md=tmp_path / "s.md", suites={"tiny": changed})
    text = (tmp_path / "s.md").read_text()
    assert "4 stored cell rows belong to an older definition of the suite" in text
    acc_table = text.split("### Test accuracy (%)")[1].split("###")[0]
    assert "| grid | not run | not run | — |" in acc_table
