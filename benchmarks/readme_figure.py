"""The README's figure: every method's test accuracy against its cost on the bundled data.

Reads the stored cells of the quick suite run on the 26 bundled data sets
(``benchmarks/results/quick+data/results.jsonl``; 2 stratified 70/30 splits per set, every
registered method, the command is in ``benchmarks/auto_eval.py``'s docstring) and writes

* ``docs/_static/accuracy_cost.png``: per method, the mean test accuracy over the data sets
  (y) against the median cost (x, log scale), where the cost of a cell is (selection time +
  final fit time) / the time of one scikit-learn ``SVC()`` fit in the same cell, as in
  ``benchmarks/auto_eval.md``;
* ``docs/_static/accuracy_cost.csv``: the same numbers as a table, with the mean Brier score
  and log-loss of ``predict_proba`` on the test rows (scikit-learn's ``brier_score_loss`` and
  ``log_loss``, as ``svmtune bench`` stores them; the tuner's default tanh probabilities),
  which the documentation includes (``docs/choosing.md``).

Only methods that ran on every data set are shown, so every point averages the same sets::

    python benchmarks/readme_figure.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "quick+data" / "results.jsonl"
STATIC = HERE.parent / "docs" / "_static"

#: how each method is drawn: family -> (colour, marker)
FAMILY = {
    "auto": ("auto (default)", "#d62728", "*"),
    "default": ("SVC() defaults", "#7f7f7f", "o"),
    "grid": ("CV search", "#1f77b4", "s"),
    "random": ("CV search", "#1f77b4", "s"),
    "tpe": ("CV search", "#1f77b4", "s"),
    "optuna": ("CV search", "#1f77b4", "s"),
    "halving": ("CV search", "#1f77b4", "s"),
    "cv_cv": ("CV search", "#1f77b4", "s"),
    "rbsvm": ("gradient (LOO)", "#2ca02c", "^"),
    "rbsvm_lowrank": ("gradient (LOO)", "#2ca02c", "^"),
    "span": ("gradient (LOO)", "#2ca02c", "^"),
    "span_lowrank": ("gradient (LOO)", "#2ca02c", "^"),
    "radius_margin": ("gradient (LOO)", "#2ca02c", "^"),
    "radius_margin_lowrank": ("gradient (LOO)", "#2ca02c", "^"),
    "span_rule": ("span-rule", "#9467bd", "D"),
    "esdr": ("data index + CV for C", "#ff7f0e", "v"),
    "dbtc": ("data index + CV for C", "#ff7f0e", "v"),
    "j4": ("data index + CV for C", "#ff7f0e", "v"),
    "ld": ("data index + CV for C", "#ff7f0e", "v"),
    "ld_c1": ("no search", "#8c564b", "P"),
    "ss": ("no search", "#8c564b", "P"),
}

#: where a label goes when the default (up and right of its point) would overlap another
LABELS = {
    "auto": ((6, -10), "left"),
    "rbsvm": ((-5, 3), "right"),
    "span": ((-5, -9), "right"),
    "tpe": ((-5, 3), "right"),
    "dbtc": ((4, -9), "left"),
}


def load(path: Path = RESULTS) -> pd.DataFrame:
    """The latest ``ok`` row of every stored cell, with its cost in ``SVC()`` fits."""
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    df = pd.DataFrame([r for r in rows if r.get("kind") == "cell"])
    df = df[df["status"] == "ok"].sort_values("timestamp").drop_duplicates("key", keep="last")
    df = df.copy()
    df["cost"] = (df["selection_time"] + df["final_fit_time"]) / df["default_fit_time"]
    return df


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per method (registered name): data sets, mean accuracy (%), median and largest cost,
    mean Brier score and log-loss (each averaged over a data set's splits, then over sets)."""
    per_set = df.groupby(["method_name", "task"]).agg(
        acc=("accuracy", "mean"),
        cost=("cost", "median"),
        brier=("brier", "mean"),
        log_loss=("log_loss", "mean"),
    )
    n_sets = df["task"].nunique()
    out = per_set.groupby("method_name").agg(
        sets=("acc", "size"),
        accuracy=("acc", "mean"),
        median_cost=("cost", "median"),
        largest_cost=("cost", "max"),
        brier=("brier", "mean"),
        log_loss=("log_loss", "mean"),
    )
    out = out[out["sets"] == n_sets]
    out["accuracy"] = 100 * out["accuracy"]
    return out.sort_values("median_cost")


def draw(s: pd.DataFrame, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.6, 4.6), dpi=110)
    seen = set()
    for name, r in s.iterrows():
        label, colour, marker = FAMILY.get(name, ("other", "black", "x"))
        ax.scatter(
            max(r["median_cost"], 0.5),
            r["accuracy"],
            c=colour,
            marker=marker,
            s=160 if name == "auto" else 50,
            label=None if label in seen else label,
            zorder=3,
        )
        seen.add(label)
        offset, align = LABELS.get(name, ((4, 3), "left"))
        ax.annotate(
            name,
            (max(r["median_cost"], 0.5), r["accuracy"]),
            fontsize=7,
            xytext=offset,
            textcoords="offset points",
            ha=align,
            fontweight="bold" if name == "auto" else "normal",
        )
    ax.set_xscale("log")
    ax.set_xlabel("median cost: (selection + final fit) / one SVC() fit  (log scale)")
    ax.set_ylabel("mean test accuracy (%)")
    ax.set_title(
        f"{int(s['sets'].iloc[0])} bundled data sets, 2 splits each "
        "(benchmarks/results/quick+data)",
        fontsize=9,
    )
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def main() -> None:
    s = summary(load())
    STATIC.mkdir(parents=True, exist_ok=True)
    draw(s, STATIC / "accuracy_cost.png")
    table = s.reset_index().rename(columns={"method_name": "method"})
    table["accuracy"] = table["accuracy"].map("{:.2f}".format)
    table["median_cost"] = table["median_cost"].map("{:.1f}".format)
    table["largest_cost"] = table["largest_cost"].map("{:.0f}".format)
    table["brier"] = table["brier"].map("{:.3f}".format)
    table["log_loss"] = table["log_loss"].map("{:.3f}".format)
    table.to_csv(STATIC / "accuracy_cost.csv", index=False)
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
