"""Figures, extra tables and stand-alone experiments of the ``esdr-paper`` and ``ld-paper``
suites (ESDR: Yin & Yin 2016, Figs. 2-7 and 9; LD: Menezes, Torres & Braga 2019, Figs. 2b, 4,
5 and Tables 1-2).

Everything here only orchestrates: the indices come from :mod:`svmtune.criteria.esdr`, the
likelihood-space quantities from :mod:`svmtune.criteria.likelihood`, CV errors from the shared
path :func:`svmtune.search.cv.cv_errors`, the width search from the registered selectors, and
the Wilcoxon test from :func:`svmtune.bench.stats.wilcoxon_signed_rank`.

Data used outside the runner (index curves, best-CV-accuracy curves, the golden-section check)
go through the same preprocessing as a tuner (:func:`svmtune.preprocess.make_preprocessor`,
"auto" when a set has categorical columns or missing values, else "standard") on the **whole**
data set, as the papers do for their curves (ESDR Sec. 4.1: "all feature vectors ... scaled to
zero mean and unit variance").
"""

from __future__ import annotations

import csv
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "standardised_task_data",
    "log2_range",
    "index_curves",
    "best_cv_accuracy_curve",
    "write_csv",
    "plot_curves_panel",
    "count_local_maxima",
    "two_spirals",
    "wilcoxon_pairs",
    "text_figure",
    "gaussian_mc_esdr",
]


# ----------------------------------------------------------------------------- data
def standardised_task_data(task, loader=None) -> tuple[np.ndarray, np.ndarray]:
    """The whole data set of a suite ``Task``, preprocessed as a tuner would, and int labels.

    Parameters
    ----------
    task : svmtune.bench.suite.Task
    loader : callable ``name -> (X, y, info)``, optional
        Default :func:`svmtune.datasets.load_dataset`.

    Returns
    -------
    X : array (n, d) float, y : array (n,) int codes ``0..k-1``
    """
    from svmtune.bench.runner import default_loader, prepare_task
    from svmtune.preprocess import make_preprocessor, needs_auto

    data = prepare_task(task, loader or default_loader, seed=0)
    mode = "auto" if needs_auto(data.X) else "standard"
    pre = make_preprocessor(mode, data.X)
    Xin = data.X if mode == "auto" else data.X.to_numpy(dtype=float)
    X = np.asarray(pre.fit_transform(Xin), dtype=float)
    _, y = np.unique(np.asarray(data.y).astype(str), return_inverse=True)
    return X, y.astype(int)


def log2_range(lo: float, hi: float, step: float) -> np.ndarray:
    """``lo, lo + step, ..., hi`` (inclusive) in log2 units."""
    if not step > 0 or hi < lo:
        raise ValueError(f"need lo <= hi and step > 0, got ({lo}, {hi}, {step})")
    n = int(round((hi - lo) / step)) + 1
    return lo + step * np.arange(n)


# ----------------------------------------------------------------------------- ESDR curves
def index_curves(
    X: np.ndarray, y: np.ndarray, log2_sigmas: np.ndarray, *, random_state: int = 0
) -> dict[str, np.ndarray]:
    """ESDR (eq. (8)), DBTC (eq. (13)/(16)) and J4 (eq. (14)) of the RBF kernel against sigma:
    the curves of ESDR Figs. 5-7, from one :class:`~svmtune.criteria.blocks.RBFBlocks` pass.
    Multiclass data: minimum over class pairs (the library's rule)."""
    from svmtune.criteria.blocks import RBFBlocks
    from svmtune.criteria.esdr import INDICES, index_values

    blocks = RBFBlocks(X, y, random_state=random_state)
    stats = blocks.stats(2.0 ** np.asarray(log2_sigmas, float))
    return {name: index_values(stats, name, reduce="min") for name in INDICES}


def best_cv_accuracy_curve(
    X: np.ndarray,
    y: np.ndarray,
    log2_sigmas: np.ndarray,
    log2_Cs: np.ndarray,
    *,
    n_splits: int = 10,
    random_state: int = 0,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Best K-fold CV accuracy over C for every sigma (ESDR Fig. 4 and Fig. 9).

    Every (sigma, C) candidate is scored on the same stratified folds by the shared CV path.

    Returns
    -------
    best_acc : array (s,), best_log2_C : array (s,) (ties: smallest C), n_fits : int
    """
    from svmtune.kernels import rbf_params
    from svmtune.search.cv import cv_errors, make_folds

    log2_sigmas = np.asarray(log2_sigmas, float)
    log2_Cs = np.asarray(log2_Cs, float)
    folds = make_folds(y, n_splits, random_state)
    cands = [rbf_params(2.0**s, 2.0**c) for s in log2_sigmas for c in log2_Cs]
    err = cv_errors(X, y, cands, folds=folds, n_jobs=1).reshape(log2_sigmas.size, log2_Cs.size)
    best = np.argmin(err, axis=1)
    return 1.0 - err.min(axis=1), log2_Cs[best], len(cands) * len(folds)


def gaussian_mc_esdr(
    i: int,
    j: int,
    log2_sigmas: np.ndarray,
    *,
    n_per_class: int = 100,
    n_rep: int = 20,
    random_state: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo mean and standard error of the sample ESDR (eq. (10)-(12)) of panel (i, j)
    of ESDR Fig. 2 over ``n_rep`` independent samples, for comparison with eq. (17)-(18)."""
    from svmtune.criteria.esdr import rbf_index_curve, sample_gaussian_case

    rng = np.random.RandomState(random_state)
    vals = np.array(
        [
            rbf_index_curve(
                *sample_gaussian_case(i, j, n_per_class, rng), 2.0 ** np.asarray(log2_sigmas)
            )
            for _ in range(int(n_rep))
        ]
    )
    return vals.mean(axis=0), vals.std(axis=0, ddof=1) / np.sqrt(n_rep)


# ----------------------------------------------------------------------------- LD helpers
def count_local_maxima(values: np.ndarray, rtol: float = 1e-6) -> int:
    """Strict interior local maxima of a sampled curve (plateaus of equal values count once);
    differences below ``rtol * max|values|`` are treated as flat."""
    v = np.asarray(values, float)
    tol = rtol * max(float(np.max(np.abs(v))), 1e-300)
    d = np.diff(v)
    s = np.where(d > tol, 1, np.where(d < -tol, -1, 0))
    s = s[s != 0]
    return int(np.sum((s[:-1] == 1) & (s[1:] == -1)))


def two_spirals(n: int = 400, noise: float = 0.3, random_state: int = 0):
    """Two interleaved spirals in 2-D (the LD paper's Fig. 4 example), ``n`` points in total.

    Returns ``X (n, 2)`` and ``y`` in {0, 1}.
    """
    rng = np.random.RandomState(random_state)
    m = n // 2
    t = np.sqrt(rng.uniform(0.0, 1.0, m)) * 3.0 * np.pi
    a = np.c_[t * np.cos(t), t * np.sin(t)]
    X = np.vstack([a, -a]) + noise * rng.standard_normal((2 * m, 2))
    return X, np.repeat([0, 1], m)


# ----------------------------------------------------------------------------- tables
def wilcoxon_pairs(
    results: pd.DataFrame, pairs: Sequence[tuple[str, str]], metric: str = "accuracy"
) -> list[dict[str, Any]]:
    """Paired Wilcoxon signed-rank tests over tasks (LD Table 2 convention: one pair per task,
    the mean over the splits both methods ran), by
    :func:`svmtune.bench.stats.wilcoxon_signed_rank`."""
    from svmtune.bench.stats import wilcoxon_signed_rank

    ok = results[results["status"] == "ok"]
    out = []
    for a, b in pairs:
        A = ok[ok["method"] == a][["task", "split", metric]]
        B = ok[ok["method"] == b][["task", "split", metric]]
        j = A.merge(B, on=["task", "split"], suffixes=("_a", "_b"))
        per = j.groupby("task")[[f"{metric}_a", f"{metric}_b"]].mean()
        row: dict[str, Any] = {"a": a, "b": b, "n_tasks": len(per)}
        if len(per):
            w = wilcoxon_signed_rank(per[f"{metric}_a"].to_numpy(), per[f"{metric}_b"].to_numpy())
            row.update(w.as_dict())
            row["mean_diff_pp"] = 100 * float((per[f"{metric}_a"] - per[f"{metric}_b"]).mean())
        out.append(row)
    return out


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write a list of dicts (union of keys, in first-seen order) as CSV.

    Floats are written with 12 significant digits, so a file computed again on another
    machine (whose BLAS may round the last bit differently) is byte-identical.
    """
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: f"{v:.12g}" if isinstance(v, float) else v for k, v in r.items()})
    return Path(path)


# ----------------------------------------------------------------------------- plotting
def plot_curves_panel(
    path: Path,
    curves: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]],
    *,
    ylabels: dict[str, str] | None = None,
    marks: dict[str, dict[str, list[float]]] | None = None,
) -> Path:
    """One panel per key of ``curves`` (e.g. "Fig. 5 ESDR"), one line per data set.

    ``curves[panel][label] = (x, y)``; ``marks[panel][label]`` are x positions drawn as
    ticks on that line (e.g. the widths the selector chose on each split).
    """
    from matplotlib.figure import Figure

    panels = list(curves)
    fig = Figure(figsize=(4.2 * len(panels), 3.6), dpi=100)
    axes = np.atleast_1d(fig.subplots(1, len(panels)))
    for ax, p in zip(axes, panels):
        for k, (label, (x, v)) in enumerate(curves[p].items()):
            color = f"C{k % 10}"
            ax.plot(x, v, "-", color=color, lw=1.2, label=label)
            for xm in (marks or {}).get(p, {}).get(label, []):
                ax.plot([xm], [np.interp(xm, x, v)], "v", color=color, ms=5)
        ax.set_title(p, fontsize=9)
        ax.set_xlabel("log2 sigma", fontsize=8)
        ax.set_ylabel((ylabels or {}).get(p, ""), fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path)
    return Path(path)


class Stopwatch:
    """``with Stopwatch() as t: ...; t.seconds``."""

    def __enter__(self) -> Stopwatch:
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self._t0


def text_figure(path: Path, text: str, *, width: float = 15.0) -> Path:
    """Render a plain-text table (e.g. markdown) as a PNG in a monospaced font, so that reports
    which embed only PNG figures show it."""
    from matplotlib.figure import Figure

    lines = text.rstrip("\n").splitlines()
    fig = Figure(figsize=(width, 0.16 * len(lines) + 0.4), dpi=90)
    fig.text(0.005, 0.995, "\n".join(lines), family="monospace", fontsize=7, va="top")
    fig.savefig(path)
    return Path(path)
