"""Our side of the RBSVM paper's tables: Wilcoxon tests, the acceptance check of RBSVM
against the grid search, the probability comparison and how often C sits on its bound.

Peng et al., "Regression-based hyperparameter learning for support vector machines"
(RBSVM, IEEE TNNLS 2023), Tables III-VI.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from svmtune.bench.stats import reference_test, task_means, wilcoxon_signed_rank

from ._rbsvm_labels import (
    LABEL_NONSV_LABEL,
    METHOD_LABELS,
    OPEN_C_LABEL,
    PAPER_TABLE_II,
    PLATT_LABEL,
    PROBABILITY_METHODS,
    STAND_INS,
    _ok,
)

__all__ = [
    "wilcoxon_vs_reference",
    "acceptance_table",
    "probability_table",
    "c_on_bound",
]


def wilcoxon_vs_reference(
    results: pd.DataFrame,
    metric: str,
    reference: str = "RBSVM",
    methods: Sequence[str] = METHOD_LABELS[1:],
) -> pd.DataFrame:
    """RBSVM Table IV / VI on our rows: Wilcoxon signed-rank test of ``reference`` against
    each method over the tasks both finished (one value per task: the mean over splits).

    Conventions of :func:`svmtune.bench.stats.wilcoxon_signed_rank` with
    ``x = reference``, ``y = method``: ``R+`` sums the ranks of the tasks where the
    reference's value is larger (higher accuracy in Table IV, higher entropy in Table VI).

    Returns
    -------
    DataFrame
        One row per method: ``method, n_tasks, r_plus, r_minus, z, p``; methods without a
        common task are left out.
    """
    rows = []
    for m in methods:
        n, w = reference_test(results, metric, reference, m)
        if w is None:
            continue
        rows.append(
            {
                "method": m,
                "n_tasks": n,
                "r_plus": w.r_plus,
                "r_minus": w.r_minus,
                "z": w.z,
                "p": w.p,
            }
        )
    return pd.DataFrame(rows, columns=["method", "n_tasks", "r_plus", "r_minus", "z", "p"])


def acceptance_table(
    results: pd.DataFrame,
    task_sizes: dict[str, int],
    *,
    method: str = "RBSVM",
    grid: str = "GridSearch",
    max_n: int = 2000,
    max_ratio: float = 1.0 / 20.0,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Acceptance check on our rows: ``method`` vs ``grid`` per task, same folds.

    Per task where both ran on the same splits: mean test accuracy of each (over the shared
    splits), their difference, and the ratio of mean selection times (method / grid); the time
    criterion (ratio <= ``max_ratio``) applies to tasks with ``task_sizes[task] <= max_n``.

    Returns
    -------
    table : DataFrame
        ``task, n, splits, acc_method, acc_grid, d_acc, time_method, time_grid, ratio,
        time_ok`` (``time_ok`` None where the criterion does not apply).
    summary : dict
        ``n_tasks``, mean accuracies over those tasks, ``accuracy_ok`` (method's mean >=
        grid's), ``time_ok`` (every applicable task passes; None if none applies).
    """
    ok = _ok(results)
    cols = [
        "task",
        "n",
        "splits",
        "acc_method",
        "acc_grid",
        "d_acc",
        "time_method",
        "time_grid",
        "ratio",
        "time_ok",
    ]
    rows = []
    if not ok.empty:
        a = ok[ok["method"] == method][["task", "split", "accuracy", "selection_time"]]
        g = ok[ok["method"] == grid][["task", "split", "accuracy", "selection_time"]]
        j = a.merge(g, on=["task", "split"], suffixes=("_m", "_g"))
        for task, sub in j.groupby("task", sort=False):
            n = task_sizes.get(task)
            tm = float(sub["selection_time_m"].mean())
            tg = float(sub["selection_time_g"].mean())
            ratio = tm / tg if tg > 0 else math.inf
            applies = n is not None and n <= max_n
            rows.append(
                {
                    "task": task,
                    "n": n,
                    "splits": len(sub),
                    "acc_method": float(sub["accuracy_m"].mean()),
                    "acc_grid": float(sub["accuracy_g"].mean()),
                    "d_acc": float((sub["accuracy_m"] - sub["accuracy_g"]).mean()),
                    "time_method": tm,
                    "time_grid": tg,
                    "ratio": ratio,
                    "time_ok": bool(ratio <= max_ratio) if applies else None,
                }
            )
    table = pd.DataFrame(rows, columns=cols)
    applicable = table["time_ok"].dropna() if not table.empty else pd.Series(dtype=object)
    summary = {
        "method": method,
        "grid": grid,
        "n_tasks": len(table),
        "mean_acc_method": float(table["acc_method"].mean()) if len(table) else None,
        "mean_acc_grid": float(table["acc_grid"].mean()) if len(table) else None,
        "accuracy_ok": bool(table["acc_method"].mean() >= table["acc_grid"].mean())
        if len(table)
        else None,
        "time_ok": bool(applicable.all()) if len(applicable) else None,
        "max_n": max_n,
        "max_ratio": max_ratio,
    }
    return table, summary


def _task_value(frame: pd.DataFrame, task: str, m: str) -> float | None:
    """``frame.loc[task, m]`` of a :func:`task_means` frame; None where it has no value."""
    if frame.empty or m not in frame or task not in frame.index:
        return None
    v = frame.loc[task, m]
    return None if pd.isna(v) else float(v)


def _stand_in(frame: pd.DataFrame, task: str, m: str) -> str:
    """The label whose values fill column ``m`` on ``task``: ``m``, or its :data:`STAND_INS`
    label where only that one has a value in ``frame``."""
    alt = STAND_INS.get(m)
    if _task_value(frame, task, m) is None and alt is not None:
        if _task_value(frame, task, alt) is not None:
            return alt
    return m


def probability_table(
    results: pd.DataFrame,
    methods: Sequence[str] = tuple(PROBABILITY_METHODS),
    *,
    reference: str = "RBSVM",
    yardstick: str = PLATT_LABEL,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Log-loss and Brier score of the methods' test-set probabilities.

    Where a method has no rows on a task but its :data:`STAND_INS` label has (the low-rank
    RBSVM on ijcnn1), that label's values stand in, named in ``source[m]``.

    Returns
    -------
    table : DataFrame
        One row per task: ``task`` and, per method ``m`` of ``methods``, ``log_loss[m]``,
        ``brier[m]`` (means over its successful splits, NaN where it has none),
        ``splits[m]`` and ``source[m]`` (the label the values come from).
    summary : DataFrame
        One row per metric (``log_loss``, ``brier``): over the tasks where both
        ``reference`` and ``yardstick`` have values, their means, the number of tasks where
        the reference's is lower (better) and the Wilcoxon signed-rank test of the reference
        against the yardstick (:func:`svmtune.bench.stats.wilcoxon_signed_rank`; ``R+`` sums
        the ranks of tasks where the reference's loss is larger).
    """
    ok = _ok(results)
    metrics = ("log_loss", "brier")
    means = {k: task_means(ok, k) for k in metrics}
    counts = ok.groupby(["task", "method"]).size() if not ok.empty else pd.Series(dtype=int)
    tasks = list(dict.fromkeys(ok["task"])) if not ok.empty else []
    rows = []
    for task in tasks:
        row: dict[str, Any] = {"task": task}
        for m in methods:
            src = _stand_in(means["log_loss"], task, m)
            for k in metrics:
                v = _task_value(means[k], task, src)
                row[f"{k}[{m}]"] = math.nan if v is None else v
            row[f"splits[{m}]"] = int(counts.get((task, src), 0)) if len(counts) else 0
            row[f"source[{m}]"] = src
        rows.append(row)
    table = pd.DataFrame(rows)
    summary = []
    for k in metrics:
        cols = [f"{k}[{reference}]", f"{k}[{yardstick}]"]
        both = table[cols].dropna() if not table.empty else pd.DataFrame(columns=cols)
        x, y = both[cols[0]].to_numpy(), both[cols[1]].to_numpy()
        w = wilcoxon_signed_rank(x, y) if len(both) else None
        summary.append(
            {
                "metric": k,
                "n_tasks": len(both),
                "mean_reference": float(both[cols[0]].mean()) if len(both) else math.nan,
                "mean_yardstick": float(both[cols[1]].mean()) if len(both) else math.nan,
                "reference_lower": int((both[cols[0]] < both[cols[1]]).sum()),
                "r_plus": w.r_plus if w is not None else math.nan,
                "r_minus": w.r_minus if w is not None else math.nan,
                "p": w.p if w is not None else math.nan,
            }
        )
    return table, pd.DataFrame(summary)


#: the gradient methods' default box for log2 C (``method_params`` without ``log2_C``)
DEFAULT_LOG2_C: tuple[float, float] = (-8.0, 8.0)


def c_on_bound(
    results: pd.DataFrame,
    methods: Sequence[str] = ("RBSVM", "SpanSVM", "RMSVM", OPEN_C_LABEL, LABEL_NONSV_LABEL),
    *,
    atol: float = 1e-3,
) -> pd.DataFrame:
    """How often each gradient method's chosen C sits on the upper bound of its own box.

    The upper bound is ``method_params["log2_C"][1]`` of the row, or
    :data:`DEFAULT_LOG2_C`'s; a fold is "on the bound" when ``|log2 C - hi| < atol``, i.e. the
    criterion was still falling in C where the box stopped it.  Beside each of the paper's
    three gradient methods: the number of tasks whose learned C in the paper's Table II lies
    above 2^8 (the paper's search was not held to a box).

    Returns
    -------
    DataFrame
        ``method, log2_C_max`` (text), ``folds, folds_on_bound, tasks, tasks_all_on_bound,
        paper_tasks_above_256`` (the last None for methods without a Table II column).
    """
    ok = _ok(results)
    rows = []
    for m in methods:
        sub = ok[ok["method"] == m] if not ok.empty else ok
        if sub.empty:
            continue
        his, on, tasks = [], [], []
        for task, p, mp in zip(
            sub["task"], sub["params"], sub.get("method_params", [None] * len(sub))
        ):
            p = json.loads(p) if isinstance(p, str) else p
            mp = json.loads(mp) if isinstance(mp, str) else (mp or {})
            if not isinstance(p, dict) or p.get("C") is None:
                continue
            hi = float((mp.get("log2_C") or DEFAULT_LOG2_C)[1])
            his.append(hi)
            on.append(abs(math.log2(float(p["C"])) - hi) < atol)
            tasks.append(task)
        if not on:
            continue
        frame = pd.DataFrame({"task": tasks, "on": on})
        per_task = frame.groupby("task")["on"].all()
        paper = None
        if m in METHOD_LABELS:
            col = METHOD_LABELS.index(m)
            paper = sum(1 for cols in PAPER_TABLE_II.values() if cols[col][1] > 2.0**8)
        rows.append(
            {
                "method": m,
                "log2_C_max": f"{max(his):g}"
                if min(his) == max(his)
                else f"{min(his):g}..{max(his):g}",
                "folds": len(on),
                "folds_on_bound": int(np.sum(on)),
                "tasks": int(per_task.size),
                "tasks_all_on_bound": int(per_task.sum()),
                "paper_tasks_above_256": paper,
            }
        )
    cols = [
        "method",
        "log2_C_max",
        "folds",
        "folds_on_bound",
        "tasks",
        "tasks_all_on_bound",
        "paper_tasks_above_256",
    ]
    return pd.DataFrame(rows, columns=cols)


def _fmt(v: Any, nd: int = 2) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "NO"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return f"{float(v):.{nd}f}"


def _pct(v: float | None) -> str:
    """A fraction as a percentage with two decimals ("—" for None)."""
    return _fmt(None if v is None else 100 * v)


def _md_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def _median_params(results: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float]]:
    """Median over splits of the chosen sigma and C per (task, method)."""
    ok = _ok(results)
    out: dict[tuple[str, str], tuple[float, float]] = {}
    if ok.empty or "params" not in ok:
        return out
    for (task, method), sub in ok.groupby(["task", "method"], sort=False):
        sig, cs = [], []
        for p in sub["params"]:
            if isinstance(p, str):
                try:
                    p = json.loads(p)
                except ValueError:
                    continue
            if isinstance(p, dict) and p.get("sigma") is not None and p.get("C") is not None:
                sig.append(float(p["sigma"]))
                cs.append(float(p["C"]))
        if sig:
            out[(task, method)] = (float(np.median(sig)), float(np.median(cs)))
    return out
