"""Report sections of the repository's benchmark scripts (the report-section hook of this
suite directory: :data:`REPORT_SECTIONS`, which ``svmtune report`` appends to the report).

:func:`scaling_section` shows the large-n benchmark from ``<results>/scaling``: the cell files
of ``benchmarks/scaling.py``, the criterion probes of ``benchmarks/lowrank_probe.py``, the
training-vs-test-file probe of ``benchmarks/shift_probe.py`` and the blocked hold-out of
``benchmarks/ijcnn1_blocked.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from svmtune.bench.report_model import Figure, Section, Table, fmt_num

__all__ = ["REPORT_SECTIONS", "scaling_section", "scaling_report"]


def _scaling_options(cell: dict) -> str:
    """The options of a scaling cell that differ from the defaults, as text ("—" if none)."""
    opts = []
    box = cell.get("log2_C_box")
    if box and tuple(float(v) for v in box) != (-8.0, 8.0):
        opts.append(f"log2 C in [{box[0]:g}, {box[1]:g}]")
    if cell.get("nonsupport", "model") != "model":
        opts.append(f"nonsupport={cell['nonsupport']}")
    return ", ".join(opts) or "—"


def scaling_section(directory: Path) -> Section | None:
    """The large-n benchmark from ``benchmarks/scaling.py``'s result files.

    Reads ``<directory>/<dataset>_n<n>_<method><tag>.json`` (one per cell) and the
    ``probe_*.jsonl`` lines of ``benchmarks/lowrank_probe.py`` and the ``shift_*.json`` files
    of ``benchmarks/shift_probe.py``; shows ``scaling.png`` if present.  None when the
    directory holds no cell file.
    """
    directory = Path(directory)
    cells = [json.loads(f.read_text()) for f in sorted(directory.glob("*_n*_*.json"))]
    if not cells:
        return None
    sec = Section(
        title="Scaling: selection time, peak memory and test accuracy against n",
        text=[
            f"From `{directory}` (`benchmarks/scaling.py`, one process per cell, one BLAS "
            "thread). 'sel. s' is wall time, 'CPU s' its process CPU time, 'peak MB' the "
            "cell's peak resident memory after selection; the test accuracy is libsvm's `SVC` "
            "refitted with the chosen (sigma, C) (the official test file for ijcnn1). "
            "Extrapolated grid times are marked. The data-criterion cells (esdr, dbtc, j4, "
            "ld) choose the width only and fix C = 1 (their own C search is a CV grid); "
            "'_sub' cells use a random subsample of the pairs. The data-criterion cells, "
            "and the ss cells up to its exact-path size, load svmtune's compiled (numba) "
            "loops before the clock starts; numba and those loops count in their 'peak MB', "
            "as they would in a user's process. For "
            "the low-rank gradient methods 'rank' is the final number of landmarks and "
            "'re-chosen' how often the "
            "landmarks were re-chosen as the search moved. A suffix after a method's name "
            "marks a variant run (`--tag`); 'options' lists the options recorded in its cell "
            "file that differ from the defaults (log2 C box, `nonsupport`).",
        ],
    )
    cells.sort(key=lambda r: (r["dataset"], r["method"], r.get("tag", ""), r["n"]))
    rows = []
    for r in cells:
        params = r.get("params") or {}
        info = r.get("info") or {}
        rows.append(
            [
                str(r["dataset"]),
                str(r["n"]),
                f"{r['method']}{r.get('tag', '')}",
                fmt_num(r.get("selection_time_s"))
                + (" (extrapolated)" if r.get("extrapolated") else ""),
                fmt_num(r.get("selection_cpu_s")),
                fmt_num(r.get("peak_rss_selection_mb", r.get("peak_rss_mb"))),
                fmt_num(r.get("test_accuracy"), 4),
                fmt_num(params.get("sigma"), 3),
                fmt_num(params.get("C"), 3),
                str(info.get("rank", "—")),
                str(info.get("n_refresh", "—")),
                _scaling_options(r),
            ]
        )
    sec.tables.append(
        Table(
            "Cells",
            [
                "data",
                "n",
                "method",
                "sel. s",
                "CPU s",
                "peak MB",
                "test acc.",
                "sigma",
                "C",
                "rank",
                "re-chosen",
                "options",
            ],
            rows,
        )
    )
    sec.tables += _probe_tables(directory)
    sec.tables += _shift_tables(directory)
    sec.tables += _blocked_tables(directory)
    png = directory / "scaling.png"
    if png.is_file():
        sec.figures.append(Figure("Selection time and peak memory against n", png))
    return sec


def _probe_tables(directory: Path) -> list[Table]:
    """The table of ``benchmarks/lowrank_probe.py``'s ``probe_*.jsonl`` lines: RBSVM's
    criterion on the low-rank and on the exact kernel at given points."""
    probes = []
    for f in sorted(directory.glob("probe_*.jsonl")):
        probes += [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    if not probes:
        return []
    return [
        Table(
            "Criterion probes (`benchmarks/lowrank_probe.py`)",
            [
                "data",
                "n",
                "sigma",
                "C",
                "rank",
                "residual",
                "J/n",
                "LOO err.",
                "exact J/n",
                "exact LOO err.",
                "test acc.",
            ],
            [
                [
                    str(r["dataset"]),
                    str(r["n"]),
                    fmt_num(r["sigma"], 3),
                    fmt_num(r["C"], 3),
                    str(r["rank"]),
                    fmt_num(r["rank_residual"], 4),
                    fmt_num(r["J_over_n"], 4),
                    fmt_num(r["loo_error"], 4),
                    fmt_num(r.get("exact_J_over_n"), 4),
                    fmt_num(r.get("exact_loo_error"), 4),
                    fmt_num(r.get("test_accuracy"), 4),
                ]
                for r in probes
            ],
            note="RBSVM criterion J / n (eq. (33)) and the closed-form LOO error of the "
            "low-rank L2-SVM, landmarks re-chosen at each point's width (rank and trace "
            "residual / n shown); 'exact' = the same on the n x n kernel matrix; test "
            "accuracy of libsvm's SVC refitted at the point.",
        )
    ]


def _shift_tables(directory: Path) -> list[Table]:
    """Tables of ``benchmarks/shift_probe.py``'s ``shift_<dataset>_n<n>.json`` files: how
    well a classifier tells the training file from the test file, and CV on the training file
    (shuffled and blocked folds) against the test file at given (sigma, C)."""
    recs = [json.loads(f.read_text()) for f in sorted(directory.glob("shift_*.json"))]
    if not recs:
        return []

    def auc(r: dict, part: str) -> str:
        a = r["auc"].get(part)
        return "—" if a is None else f"{a['auc']:.3f} ± {a['auc_std']:.3f} ({a['n_each']})"

    two_sample = [
        [
            str(r["dataset"]),
            str(r["n"]),
            str(r["n_test"]),
            f"{r['positive_rate_train']:.4f} / {r['positive_rate_test']:.4f}",
            auc(r, "all"),
            auc(r, "class 0"),
            auc(r, "class 1"),
            ", ".join(
                f"{f['feature']}: {f['auc']:.3f} ({f['mean_shift_sd']:+.2f} sd)"
                for f in r.get("feature_auc", [])
            )
            or "—",
        ]
        for r in recs
    ]
    points = [
        [
            str(r["dataset"]),
            str(r["n"]),
            fmt_num(p["sigma"], 3),
            fmt_num(p["C"], 3),
            fmt_num(p["cv_shuffled"], 4),
            fmt_num(p["cv_blocked"], 4),
            fmt_num(p["test_accuracy"], 4),
        ]
        for r in recs
        for p in r.get("points", [])
    ]
    tables = [
        Table(
            "Training file vs test file (`benchmarks/shift_probe.py`): two-sample test",
            [
                "data",
                "n",
                "test n",
                "positive rate train / test",
                "AUC all",
                "AUC class 0",
                "AUC class 1",
                "features with the highest AUC alone",
            ],
            two_sample,
            note="5-fold ROC AUC (mean ± sd, rows per file in brackets) of a gradient-boosted "
            "classifier telling training-file rows from test-file rows: 0.5 when the files "
            "share one distribution. Features by 0-based column index, with the test file's mean "
            "shift in training-file sd.",
        )
    ]
    if points:
        tables.append(
            Table(
                "Training file vs test file: cross-validation against the test file",
                ["data", "n", "sigma", "C", "CV shuffled", "CV blocked", "test acc."],
                points,
                note="libsvm's SVC at (sigma, C): mean accuracy of 5-fold CV on the training "
                "file with shuffled stratified folds (the suites' protocol) and with "
                "contiguous blocks of the file as folds, and the test-file accuracy of the "
                "SVC trained on the whole training file.",
            )
        )
    return tables


def _blocked_tables(directory: Path) -> list[Table]:
    """The table of ``benchmarks/ijcnn1_blocked.py``'s ``ijcnn1_blocked.json``: RBSVM (low
    rank) leaving out single rows or blocks of consecutive rows, beside ``SVC()``."""
    path = directory / "ijcnn1_blocked.json"
    if not path.is_file():
        return []
    r = json.loads(path.read_text())
    rows = [
        [
            f"rbsvm_lowrank, leave-one-{unit}-out",
            fmt_num(r[key]["log2_sigma"], 3),
            fmt_num(r[key]["log2_C"], 3),
            fmt_num(r[key]["estimate"], 4),
            fmt_num(r[key]["selection_s"], 3),
            fmt_num(r[key]["test_accuracy"], 4),
        ]
        for key, unit in (("rows", "row"), ("blocks", "block"))
    ]
    rows.append(["SVC()", "gamma='scale'", "0", "—", "—", fmt_num(r["svc"]["test_accuracy"], 4)])
    return [
        Table(
            "ijcnn1: RBSVM holding out single rows or blocks of the file "
            "(`benchmarks/ijcnn1_blocked.py`)",
            ["selection", "log2 sigma", "log2 C", "estimate", "selection s", "test acc."],
            rows,
            note=f"The {r['n']:,} training rows in file order; groups: blocks of "
            f"{r['block']:,} consecutive rows ({r['n_groups']} groups); test: the official "
            f"file ({r['n_test']:,} rows); one process, one run.",
        )
    ]


def scaling_report(results: Path) -> Section | None:
    """The hook: :func:`scaling_section` of ``<results>/scaling``."""
    return scaling_section(Path(results) / "scaling")


#: this directory's report-section hooks (called with the results directory)
REPORT_SECTIONS = [scaling_report]
