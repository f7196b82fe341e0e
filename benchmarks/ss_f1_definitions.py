"""The F1 line under each definition of binary F1, from the stored ss-paper cells.

The S&S paper does not say which F1 Table 2 prints.  The runner stores, per
cell, the test accuracy, the F1 of the second label in sorted order and the test size (and,
for cells written since, the confusion matrix).  For two classes these determine the whole
confusion matrix (:func:`confusion_from_scores`), so every count-based binary F1 can be read
off the stored cells without rerunning them:

* ``second``: the F1 of the second label in sorted order (the runner's, stored);
* ``first``: the F1 of the first label;
* ``majority``: the F1 of the task's majority class (over the whole data set);
* ``macro``: the mean of the two;
* ``accuracy``: the micro-averaged F1, i.e. the accuracy.

Multiclass tasks keep their stored macro-F1 under every definition.  For each definition the
script writes, per binary task, the three Table 2 columns (CV (F1), CV (Hinge), S&S-RB)
beside the paper's, and the mean of S&S-RB - CV (F1) over all 22 tasks: the F1 line.
"CV (F1)" chose its models by the stored (second-label) F1, so under the other definitions it
is not the search that tunes for that F1 (the suite's "CV (macro F1)" is, for macro-F1; its
row is added where it ran).  The committed ``benchmarks/ss_f1_definitions.md`` came from::

    python benchmarks/ss_f1_definitions.py --md benchmarks/ss_f1_definitions.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from svmtune.bench.store import latest_by_key, read_rows
from svmtune.bench.suite import suite_module
from svmtune.datasets import load_dataset

HERE = Path(__file__).resolve().parent
_SS = suite_module("ss-paper", search_from=HERE)
MACRO_LABEL, TABLE2, TASKS = _SS.MACRO_LABEL, _SS.TABLE2, _SS.TASKS
RULES = ("second", "first", "majority", "macro", "accuracy")
METHODS = ("CV (F1)", "CV (Hinge)", "S&S-RB")


def confusion_from_scores(accuracy: float, f1: float, n: int) -> tuple[float, float, float]:
    """``(TP, TN, errors)`` of a two-class test set from its accuracy, the F1 of the positive
    class and its size.

    With ``e = n (1 - accuracy)`` errors, ``F1 = 2 TP / (2 TP + e)`` gives
    ``TP = F1 e / (2 (1 - F1))`` and ``TN = n accuracy - TP``.  ``F1 = 1`` means no error
    (then ``TP`` is not determined by the scores; it is returned as ``nan`` and no F1 below
    needs it).
    """
    e = n * (1.0 - accuracy)
    if f1 >= 1.0:
        return float("nan"), float("nan"), 0.0
    tp = f1 * e / (2.0 * (1.0 - f1))
    return tp, n * accuracy - tp, e


def f1_first(accuracy: float, f1: float, n: int) -> float:
    """F1 of the other class (the first label) from the second label's scores."""
    tp, tn, e = confusion_from_scores(accuracy, f1, n)
    if e == 0.0:
        return 1.0
    return 2.0 * tn / (2.0 * tn + e) if tn > 0 else 0.0


def binary_f1s(accuracy: float, f1: float, n: int, majority_is_second: bool) -> dict[str, float]:
    """Every definition of :data:`RULES` for one binary cell."""
    first = f1_first(accuracy, f1, n)
    return {
        "second": f1,
        "first": first,
        "majority": f1 if majority_is_second else first,
        "macro": (f1 + first) / 2.0,
        "accuracy": accuracy,
    }


def cell_table(rows: list[dict]) -> pd.DataFrame:
    """One row per (task, method, split) of the Table 2 methods (and "CV (macro F1)"), with
    the F1 of every definition in percent."""
    binary = {t.name: t for t in TASKS if not t.tuner_params}
    second_is_majority = {}
    for name, task in binary.items():
        _, y, _ = load_dataset(task.dataset)
        labels, counts = np.unique(np.asarray(y), return_counts=True)
        second_is_majority[name] = bool(counts[1] > counts[0])
    out = []
    for r in rows:
        if r.get("kind") != "cell" or r.get("status") != "ok":
            continue
        if r["method"] not in (*METHODS, MACRO_LABEL):
            continue
        if r["task"] in binary:
            vals = binary_f1s(r["accuracy"], r["f1"], r["n_test"], second_is_majority[r["task"]])
        else:
            vals = dict.fromkeys(RULES, r["f1"])
        out.append({"task": r["task"], "method": r["method"], "split": r["split"], **vals})
    df = pd.DataFrame(out)
    df[list(RULES)] *= 100.0
    return df


def tables(df: pd.DataFrame) -> list[str]:
    """The markdown: per definition, the binary tasks beside Table 2, and the F1 line."""
    binary = [t.name for t in TASKS if not t.tuner_params]
    means = df.groupby(["task", "method"])[list(RULES)].mean()
    lines = [
        "# The F1 line under each definition of binary F1 (ss-paper cells)",
        "",
        "From `benchmarks/results/ss-paper/results.jsonl` (`python benchmarks/"
        "ss_f1_definitions.py`); the other-class F1 of a binary cell is derived exactly "
        "from its stored accuracy, F1 and test size.  Multiclass tasks keep their macro-F1. "
        "'CV (F1)' tuned for the second label's F1; under the other definitions it is not "
        "the search that tunes for them.",
        "",
        "| definition | S&S-RB − CV (F1), mean of 22 tasks | S&S-RB − CV (Hinge) | "
        "ilpd: S&S-RB − CV (F1) | mean abs. distance to Table 2, binary tasks (3 columns) |",
        "|---|---|---|---|---|",
    ]
    cols = [*METHODS, MACRO_LABEL]
    for rule in RULES:
        m = means[rule].unstack("method").reindex(columns=cols)
        d_f1 = (m["S&S-RB"] - m["CV (F1)"]).dropna()
        d_h = (m["S&S-RB"] - m["CV (Hinge)"]).dropna()
        dist = [
            abs(m.loc[t, col] - TABLE2[t][k])
            for t in binary
            for k, col in enumerate(METHODS)
            if t in m.index and not np.isnan(m.loc[t, col])
        ]
        lines.append(
            f"| {rule} | {d_f1.mean():+.2f} ({len(d_f1)} tasks) | {d_h.mean():+.2f} | "
            f"{d_f1.get('ilpd', np.nan):+.2f} | {np.mean(dist):.2f} |"
        )
    if MACRO_LABEL in means.index.get_level_values("method"):
        m = means["macro"].unstack("method").reindex(columns=cols)
        cv = m[MACRO_LABEL].fillna(m["CV (F1)"].where(~m.index.isin(binary)))
        d = (m["S&S-RB"] - cv).dropna()
        lines += [
            "",
            f"Against {MACRO_LABEL!r} (the CV (F1) grid tuning macro-F1; CV (F1) on the "
            f"multiclass tasks), in macro-F1: S&S-RB − {MACRO_LABEL} = {d.mean():+.2f} over "
            f"{len(d)} tasks (ilpd {d.get('ilpd', np.nan):+.2f}).",
        ]
    lines += [
        "",
        "## Binary tasks: ours (mean over the 5 folds) / Table 2, per definition",
        "",
        "| task | definition | CV (F1) | CV (Hinge) | S&S-RB |",
        "|---|---|---|---|---|",
    ]
    for t in binary:
        for rule in RULES:
            cells = [
                f"{means.loc[(t, col), rule]:.2f} / {TABLE2[t][k]:.2f}"
                if (t, col) in means.index
                else f"not run / {TABLE2[t][k]:.2f}"
                for k, col in enumerate(METHODS)
            ]
            lines.append(f"| {t} | {rule} | " + " | ".join(cells) + " |")
    return lines + [""]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--results", default=str(HERE / "results" / "ss-paper" / "results.jsonl"), type=Path
    )
    ap.add_argument("--md", type=Path, help="also write the markdown here")
    args = ap.parse_args(argv)
    df = cell_table(latest_by_key(read_rows(args.results)))
    text = "\n".join(tables(df))
    print(text)
    if args.md:
        args.md.write_text(text)


if __name__ == "__main__":
    main()
