"""Statistics over result rows: mean +- std tables, paired Wilcoxon tests, cost ratios.

Conventions (those of the papers' significance tables, RBSVM Table IV/VI, LD Table 2):

* The Wilcoxon signed-rank test pairs two methods over *tasks*: one number per task and
  method (the mean over the task's splits).  Zero differences are dropped (Wilcoxon's
  original rule), tied absolute differences get average ranks.
* ``R+`` is the rank sum of the tasks where the method beats the reference, ``R-`` of those
  where it loses.  ``z`` is the normal approximation computed from the smaller of the two,
  ``z = (min(R+, R-) - n(n+1)/4) / sqrt(n(n+1)(2n+1)/24 - sum(t^3 - t)/48)`` (tie-corrected,
  no continuity correction), so ``z <= 0``; ``p`` is two-sided, ``2 Phi(z)``.  With 19
  untied tasks all won this gives RBSVM Table IV's ``z = -3.823, p = 0.00013``.
* The default-SVC yardstick is measured inside every cell (one ``SVC()`` fit on the same
  preprocessed training part, columns ``default_accuracy`` and ``default_fit_time``), so
  comparisons with it are paired on the very same split.  The grid yardstick is the suite's
  10-fold grid-search method, paired with the others on the same (task, split).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "WilcoxonResult",
    "wilcoxon_signed_rank",
    "cells_frame",
    "summary_table",
    "task_means",
    "reference_test",
    "paired_tests",
    "relative_table",
]

#: columns of a result row that the tables aggregate
NUMERIC = (
    "accuracy",
    "f1",
    "log_loss",
    "brier",
    "entropy",
    "estimate",
    "selection_time",
    "final_fit_time",
    "default_fit_time",
    "default_accuracy",
    "n_svm_fits",
)


@dataclass(frozen=True)
class WilcoxonResult:
    """Paired Wilcoxon signed-rank test of ``x - y`` (see the module conventions)."""

    n: int  #: pairs with a non-zero difference
    n_zero: int  #: pairs dropped for a zero difference
    r_plus: float
    r_minus: float
    z: float
    p: float
    wins: int
    losses: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def wilcoxon_signed_rank(x: Sequence[float], y: Sequence[float], *, atol: float = 1e-12):
    """Paired Wilcoxon signed-rank test, papers' conventions (module docstring).

    Parameters
    ----------
    x, y : sequences of equal length
        Paired values (e.g. mean accuracy per task of a method and of the reference).
    atol : float
        Differences with ``|x - y| <= atol`` count as ties (zero differences).

    Returns
    -------
    WilcoxonResult
        With no non-zero difference, ``z = 0`` and ``p = 1`` (nothing to test).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D of equal length, got {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite (drop the tasks a method did not finish)")
    # rounding makes differences that are equal up to float noise tie (e.g. 0.8 - 0.75 and
    # 0.55 - 0.5), as they do in the papers' hand computations
    d = np.round(x - y, 12)
    d = np.where(np.abs(d) <= atol, 0.0, d)
    nz = d[d != 0]
    n, n_zero = int(nz.size), int(d.size - nz.size)
    if n == 0:
        return WilcoxonResult(0, n_zero, 0.0, 0.0, 0.0, 1.0, 0, 0)
    ranks = stats.rankdata(np.abs(nz))
    r_plus = float(ranks[nz > 0].sum())
    r_minus = float(ranks[nz < 0].sum())
    res = stats.wilcoxon(nz, zero_method="wilcox", correction=False, method="approx")
    z = -abs(float(res.zstatistic))
    p = float(res.pvalue)
    if not math.isfinite(z):  # all |d| tied and n == 1 gives a zero variance: no evidence
        z, p = 0.0, 1.0
    return WilcoxonResult(
        n, n_zero, r_plus, r_minus, z, p, int((nz > 0).sum()), int((nz < 0).sum())
    )


def cells_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The cell rows as a DataFrame (experiment records dropped), numeric columns as floats."""
    rows = [r for r in rows if r.get("kind", "cell") == "cell"]
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=["suite", "task", "method", "split", "status", *NUMERIC])
    for col in NUMERIC:
        if col not in df:
            df[col] = np.nan
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    if "status" not in df:
        df["status"] = "ok"
    return df


def _ok(df: pd.DataFrame) -> pd.DataFrame:
    if "status" not in df:  # no rows were ever stored
        return df.iloc[:0]
    return df[df["status"] == "ok"]


def summary_table(
    df: pd.DataFrame, metrics: Sequence[str] = ("accuracy", "f1", "selection_time", "n_svm_fits")
) -> pd.DataFrame:
    """Mean, std (ddof=1; 0 for a single split) and count of ``metrics`` per
    (suite, task, method), over the successful rows."""
    ok = _ok(df)
    g = ok.groupby(["suite", "task", "method"], sort=False)[list(metrics)]
    mean = g.mean().add_suffix("_mean")
    std = g.std(ddof=1).fillna(0.0).add_suffix("_std")
    n = g.size().rename("n")
    return pd.concat([mean, std, n], axis=1).reset_index()


def task_means(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean of ``metric`` per task (rows) and method (columns) over the successful rows
    (non-numeric entries, e.g. a missing entropy, count as missing); empty if none."""
    ok = _ok(df)
    if ok.empty or metric not in ok:
        return pd.DataFrame()
    return ok.assign(_v=pd.to_numeric(ok[metric], errors="coerce")).pivot_table(
        index="task", columns="method", values="_v", aggfunc="mean"
    )


def reference_test(
    df: pd.DataFrame, metric: str, reference: str, method: str
) -> tuple[int, WilcoxonResult | None]:
    """Wilcoxon signed-rank test of ``reference`` against ``method`` over their common tasks.

    One value per task and method (the mean of ``metric`` over its successful splits);
    ``x = reference``, ``y = method``, so ``R+`` sums the ranks of the tasks where the
    reference's value is larger (RBSVM Tables IV and VI).  Returns the number of common tasks
    and the test (None without a common task).
    """
    means = task_means(df, metric)
    if reference not in means or method not in means:
        return 0, None
    both = means[[reference, method]].dropna()
    if both.empty:
        return 0, None
    return len(both), wilcoxon_signed_rank(both[reference].to_numpy(), both[method].to_numpy())


def _paired_with_grid(df: pd.DataFrame, grid: str, metric: str) -> pd.DataFrame:
    """Rows joined with the grid-search row of the same (task, split): ``<metric>_grid``."""
    ok = _ok(df)
    ref = ok[ok["method"] == grid][["task", "split", metric]]
    return ok.merge(ref, on=["task", "split"], suffixes=("", "_grid"))


def paired_tests(
    df: pd.DataFrame,
    yardsticks: dict[str, str],
    metric: str = "accuracy",
) -> pd.DataFrame:
    """Wilcoxon signed-rank tests over tasks of every method against the yardsticks.

    ``yardsticks`` maps "grid" to the grid-search method label (reference = that method's
    rows on the same splits) and/or "default" to any string (reference = the in-cell
    ``SVC()`` measurement, ``default_<metric>``; only for accuracy).  One row per
    (method, reference) with n, R+, R-, z, p, wins/losses and the mean difference.
    """
    out = []
    ok = _ok(df)
    methods = list(dict.fromkeys(ok["method"]))
    refs: list[tuple[str, pd.DataFrame]] = []
    if yardsticks.get("grid") is not None:
        refs.append(
            ("grid: " + yardsticks["grid"], _paired_with_grid(df, yardsticks["grid"], metric))
        )
    if "default" in yardsticks and metric == "accuracy":
        dd = ok.assign(**{f"{metric}_ref": ok[f"default_{metric}"]})
        refs.append(("SVC() defaults", dd))
    for ref_name, joined in refs:
        ref_col = f"{metric}_grid" if ref_name.startswith("grid: ") else f"{metric}_ref"
        for m in methods:
            if ref_name == "grid: " + str(yardsticks.get("grid")) and m == yardsticks["grid"]:
                continue
            # pairs only: a split without either value counts for neither mean
            sub = joined[joined["method"] == m].dropna(subset=[metric, ref_col])
            per_task = sub.groupby("task")[[metric, ref_col]].mean()
            if per_task.empty:
                continue
            w = wilcoxon_signed_rank(per_task[metric].to_numpy(), per_task[ref_col].to_numpy())
            out.append(
                {
                    "method": m,
                    "reference": ref_name,
                    "metric": metric,
                    "n_tasks": len(per_task),
                    "mean_diff": float((per_task[metric] - per_task[ref_col]).mean()),
                    **w.as_dict(),
                }
            )
    return pd.DataFrame(out)


def relative_table(df: pd.DataFrame, yardsticks: dict[str, str]) -> pd.DataFrame:
    """Per (task, method): accuracy and cost relative to the grid search and to ``SVC()``.

    Columns: ``n`` successful splits, ``accuracy_mean``/``accuracy_std``,
    ``d_acc_grid`` (mean over shared splits of accuracy - grid accuracy),
    ``time_ratio_grid`` (mean selection time / mean grid selection time on the task),
    ``d_acc_default`` (mean of accuracy - in-cell SVC() accuracy),
    ``time_ratio_default`` (mean selection time / mean SVC() fit time over the same splits;
    a ratio of means, robust to a single tiny fit time), ``selection_time``, ``n_svm_fits``.
    """
    ok = _ok(df)
    if ok.empty:
        return pd.DataFrame()
    # the SVC() time ratio over the splits with both times (a ratio of means of pairs)
    both = ok["selection_time"].notna() & ok["default_fit_time"].notna()
    ok = ok.assign(
        _sel_paired=ok["selection_time"].where(both),
        _default_paired=ok["default_fit_time"].where(both),
    )
    g = ok.groupby(["task", "method"], sort=False)
    res = pd.DataFrame(
        {
            "n": g.size(),
            "accuracy_mean": g["accuracy"].mean(),
            "accuracy_std": g["accuracy"].std(ddof=1).fillna(0.0),
            "selection_time": g["selection_time"].mean(),
            "n_svm_fits": g["n_svm_fits"].mean(),
            "d_acc_default": g.apply(
                lambda s: float((s["accuracy"] - s["default_accuracy"]).mean()),
                include_groups=False,
            ),
            "time_ratio_default": g["_sel_paired"].mean() / g["_default_paired"].mean(),
        }
    )
    grid = yardsticks.get("grid")
    res["d_acc_grid"] = np.nan
    res["time_ratio_grid"] = np.nan
    if grid is not None and (ok["method"] == grid).any():
        j = _paired_with_grid(df, grid, "accuracy")
        d = j.assign(d=j["accuracy"] - j["accuracy_grid"]).groupby(["task", "method"])["d"].mean()
        res.loc[d.index, "d_acc_grid"] = d
        gt = ok[ok["method"] == grid].groupby("task")["selection_time"].mean()
        tasks = res.index.get_level_values("task")
        res["time_ratio_grid"] = res["selection_time"].to_numpy() / gt.reindex(tasks).to_numpy()
    return res.reset_index()
