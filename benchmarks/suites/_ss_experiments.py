"""Stand-alone studies of the ss-paper suite (S&S ratio, Shamsi & Beheshti).

* :func:`table1_experiment`: separability ``d``, scatteredness ``sigma`` and ``S&S_min``
  (S&S ratio eq. (7)-(9), (31)) of every task's full data set, both spread variants and both
  estimators in input space, plus the S&S of the kernel S&S-RB selects, beside the paper's
  Table 1.
* :func:`spread_copt_experiment`: which spread variant (directional / isotropic) predicts the
  hinge-loss optimal ``C`` better on the real data sets: for each variant, S&S-RB picks
  ``sigma`` and ``C_opt`` (eq. (22)-(23)); a 5-fold CV hinge-loss curve over ``C`` at that
  ``sigma`` (the shared :func:`svmtune.search.cv.cv_errors` path) gives the empirical optimum.

The pure computations (:func:`input_space_ss`, :func:`copt_gap`) take arrays in and return
numbers; the experiment callables only load data, loop and write files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from svmtune.bench.markdown import markdown_table
from svmtune.criteria.ss_core import SPREADS
from svmtune.criteria.ss_kernel import min_pairwise_ss

__all__ = [
    "prepared_data",
    "input_space_ss",
    "copt_gap",
    "table1_rows",
    "spread_copt_rows",
    "table1_experiment",
    "spread_copt_experiment",
]

Loader = Callable[[str], tuple[Any, np.ndarray, Any]]


def prepared_data(X: Any, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Standardised float features (``"auto"`` preprocessing when categorical/missing cells
    exist, as the runner does) and labels encoded 0..k-1."""
    from svmtune.preprocess import make_preprocessor, needs_auto

    X = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    mode = "auto" if needs_auto(X) else "standard"
    Xp = np.asarray(make_preprocessor(mode, X).fit_transform(X), dtype=float)
    _, yi = np.unique(np.asarray(y).astype(str), return_inverse=True)
    return Xp, yi.astype(int)


def input_space_ss(
    X: np.ndarray, y: np.ndarray, *, spread: str, estimator: str
) -> dict[str, float | list]:
    """``S&S_min`` of the worst class pair in input space (S&S ratio eq. (7)-(9), (31)).

    Returns ``{"d", "sigma", "ss", "pair"}`` of the pair with the smallest S&S.
    """
    pair, res = min_pairwise_ss(y, Z=X, spread=spread, estimator=estimator)
    return {"d": res.d, "sigma": res.sigma, "ss": res.ss, "pair": [int(p) for p in pair]}


def copt_gap(log2_C: np.ndarray, cv_loss: np.ndarray, C_pred: float) -> dict[str, float]:
    """How far a predicted ``C`` is from the minimiser of a CV loss curve over ``log2 C``.

    The loss at ``C_pred`` is read by linear interpolation in ``log2 C`` (clamped to the grid
    ends).  Returns ``log2_C_cv`` (grid argmin, first on ties), ``abs_log2_gap`` and
    ``excess_loss = loss(C_pred) - min loss`` (>= 0 up to interpolation).
    """
    log2_C = np.asarray(log2_C, dtype=float)
    cv_loss = np.asarray(cv_loss, dtype=float)
    if log2_C.ndim != 1 or log2_C.shape != cv_loss.shape or log2_C.size < 2:
        raise ValueError("log2_C and cv_loss must be 1-d arrays of the same length >= 2")
    if not (np.isfinite(C_pred) and C_pred > 0):
        raise ValueError(f"C_pred must be positive and finite, got {C_pred}")
    i = int(np.argmin(cv_loss))
    lp = float(np.log2(C_pred))
    at_pred = float(np.interp(np.clip(lp, log2_C[0], log2_C[-1]), log2_C, cv_loss))
    return {
        "log2_C_cv": float(log2_C[i]),
        "log2_C_pred": lp,
        "abs_log2_gap": abs(lp - float(log2_C[i])),
        "excess_loss": at_pred - float(cv_loss[i]),
        "min_loss": float(cv_loss[i]),
    }


def _default_loader() -> Loader:
    from svmtune.datasets import load_dataset

    return load_dataset


def _task_data(task, loader: Loader, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from svmtune.bench.runner import prepare_task

    data = prepare_task(task, loader, seed)
    return prepared_data(data.X, data.y)


def table1_rows(
    tasks: Sequence,
    paper: dict[str, tuple],
    *,
    loader: Loader | None = None,
    seed: int = 0,
    max_samples: int = 2000,
) -> list[dict[str, Any]]:
    """One row per task: our ``d, sigma, S&S_min`` (input space, both spreads, plain and LOO
    estimators; the kernel S&S-RB selects, directional LOO on at most ``max_samples`` rows)
    beside the paper's Table 1 ``(d, sigma, S&S)``."""
    from svmtune.methods.ss_ratio import SSRatio

    loader = loader or _default_loader()
    rows = []
    for task in tasks:
        X, y = _task_data(task, loader, seed)
        row: dict[str, Any] = {"task": task.name, "n": len(y), "p": X.shape[1]}
        row["n_classes"] = int(np.unique(y).size)
        for spread in SPREADS:
            for est in ("plain", "loo"):
                r = input_space_ss(X, y, spread=spread, estimator=est)
                for k in ("d", "sigma", "ss"):
                    row[f"{k}_{spread}_{est}"] = r[k]
        sel = SSRatio(max_samples=max_samples).select(X, y, random_state=seed)
        row.update(
            kernel_d=sel.info["d"],
            kernel_sigma=sel.info["sigma"],
            kernel_ss=sel.info["ss"],
            kernel_sigma_rbf=sel.params.get("sigma"),
            kernel_C=sel.params["C"],
        )
        p = paper.get(task.name)
        row["paper_d"], row["paper_sigma"], row["paper_ss"] = p if p else (None, None, None)
        rows.append(row)
    return rows


def spread_copt_rows(
    tasks: Sequence,
    *,
    loader: Loader | None = None,
    seed: int = 0,
    log2_C: tuple[float, float, float] = (-6.0, 12.0, 1.0),
    n_splits: int = 5,
    max_n: int = 1000,
) -> list[dict[str, Any]]:
    """Per binary task (``n <= max_n``) and spread variant: S&S-RB's ``sigma`` and ``C_opt`` and the
    gap to the 5-fold CV hinge-loss optimal ``C`` at that ``sigma`` (:func:`copt_gap`), plus
    the CV error at both."""
    from svmtune.kernels import rbf_params
    from svmtune.methods.baselines import log2_grid
    from svmtune.methods.ss_ratio import SSRatio
    from svmtune.search.cv import cv_errors, make_folds

    loader = loader or _default_loader()
    grid = np.log2(log2_grid(*log2_C))
    rows = []
    for task in tasks:
        X, y = _task_data(task, loader, seed)
        if len(y) > max_n or np.unique(y).size != 2:
            continue  # hinge-loss CV scoring (cv_errors) is binary only
        folds = make_folds(y, n_splits, seed)
        for spread in SPREADS:
            sel = SSRatio(spread=spread).select(X, y, random_state=seed)
            sigma, C = float(sel.params["sigma"]), float(sel.params["C"])
            cands = [rbf_params(sigma, float(2.0**g)) for g in grid]
            hinge = cv_errors(X, y, cands, folds=folds, scoring="hinge", n_jobs=1)
            err = cv_errors(X, y, cands + [rbf_params(sigma, C)], folds=folds, n_jobs=1)
            gap = copt_gap(grid, hinge, C)
            rows.append(
                dict(
                    task=task.name,
                    n=len(y),
                    spread=spread,
                    ss=float(sel.criterion),
                    sigma=sigma,
                    C_pred=C,
                    **gap,
                    cv_error_at_pred=float(err[-1]),
                    cv_error_min=float(err[:-1].min()),
                    cv_error_at_hinge_opt=float(err[int(np.argmin(hinge))]),
                )
            )
    return rows


def table1_experiment(tasks: Sequence, paper: dict[str, tuple]) -> Callable[..., list[Path]]:
    """The suite's Table 1 experiment: ``(outdir, seed) -> [csv, md]``."""

    def table1(outdir: Path, seed: int) -> list[Path]:
        rows = table1_rows(tasks, paper, seed=seed)
        df = pd.DataFrame(rows)
        outdir = Path(outdir)
        outdir.mkdir(parents=True, exist_ok=True)
        csv = outdir / "table1_ss.csv"
        df.to_csv(csv, index=False)
        cols = [
            "task",
            "n",
            "p",
            "paper_d",
            "paper_sigma",
            "paper_ss",
            "ss_directional_plain",
            "ss_isotropic_plain",
            "ss_directional_loo",
            "ss_isotropic_loo",
            "kernel_ss",
        ]
        md = outdir / "table1_ss.md"
        md.write_text(markdown_table(df[cols]))
        return [csv, md]

    return table1


def spread_copt_summary(df: pd.DataFrame) -> str:
    """The markdown summary of the spread-variant study's rows (:func:`spread_copt_rows`)."""
    if df.empty:
        return "no binary task with n <= 1000 (the hinge-loss CV is binary only)\n"
    summ = df.groupby("spread")[
        ["abs_log2_gap", "excess_loss", "cv_error_at_pred", "cv_error_min"]
    ].mean()
    wins = (
        df.pivot(index="task", columns="spread", values="abs_log2_gap")
        .pipe(lambda t: (t["directional"] < t["isotropic"]).sum())
        .item()
    )
    return (
        "Mean over binary tasks (n <= 1000) of |log2 C_pred - log2 C_cv(hinge)|, the excess CV "
        "hinge loss at C_pred, and the 5-fold CV error at C_pred and its minimum over C.\n\n"
        + markdown_table(summ.reset_index())
        + f"\nTasks where directional is closer than isotropic: {wins} of "
        + f"{df['task'].nunique()}\n\n"
        + markdown_table(df)
    )


def spread_copt_experiment(tasks: Sequence) -> Callable[..., list[Path]]:
    """The spread-variant study: ``(outdir, seed) -> [per-set csv, summary md]``."""

    def spread_copt(outdir: Path, seed: int) -> list[Path]:
        df = pd.DataFrame(spread_copt_rows(tasks, seed=seed))
        outdir = Path(outdir)
        outdir.mkdir(parents=True, exist_ok=True)
        csv = outdir / "spread_copt.csv"
        df.to_csv(csv, index=False)
        md = outdir / "spread_copt.md"
        md.write_text(spread_copt_summary(df))
        return [csv, md]

    return spread_copt
