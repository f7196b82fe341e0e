"""Experiments of the ``rbsvm-paper`` suite beyond the paper: RBSVM's criterion (Peng et
al., IEEE TNNLS 2023, eqs. (27) and (33)) along C at the learned width, and at our learned
point against the paper's Table II point, on the suite's own folds.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from svmtune.bench.suite import Suite

from ._rbsvm_labels import PAPER_TABLE_II, PROTOCOL, SEED, TASKS
from ._rbsvm_stats import DEFAULT_LOG2_C

__all__ = [
    "CriterionAlongC",
    "CriterionAtPaperPoint",
]


def _suite_folds(tasks: Sequence[str], folds: int, loader: Any = None):
    """Yield ``(task, fold, X_train, y_train, X_test, y_test)`` for the first ``folds`` outer
    folds of each rbsvm-paper task: the suite's own splits, its preprocessing fitted on the
    training part, as float arrays.  The caller's work on a fold runs (the generator is
    suspended) with BLAS held to one thread and warnings silenced."""
    from threadpoolctl import threadpool_limits

    from svmtune.bench.runner import default_loader, prepare_task, split_indices
    from svmtune.preprocess import make_preprocessor

    # the suite's splits depend on its protocol, seed and tasks only
    suite = Suite("rbsvm-paper", "", TASKS, [], PROTOCOL, SEED)
    by_name = {t.name: t for t in suite.tasks}
    unknown = sorted(set(tasks) - set(by_name))
    if unknown:
        raise ValueError(f"unknown rbsvm-paper tasks {unknown}; known: {sorted(by_name)}")
    for name in tasks:
        task = by_name[name]
        data = prepare_task(task, loader or default_loader, suite.seed)
        for fold, (tr, te) in enumerate(split_indices(data.y, suite, task)[: int(folds)]):
            pre = make_preprocessor(data.preprocess, data.X)
            Xtr = np.asarray(pre.fit_transform(data.X.iloc[tr]), dtype=float)
            Xte = np.asarray(pre.transform(data.X.iloc[te]), dtype=float)
            with threadpool_limits(limits=1), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield name, fold, Xtr, data.y[tr], Xte, data.y[te]


def _run_fold_experiment(exp: Any, outdir: Path, seed: int, markdown, plot) -> list[Path]:
    """Run ``exp._fold_rows`` on every fold of :func:`_suite_folds` (``exp.tasks``,
    ``exp.folds``, ``exp.loader``) and write ``<exp.__name__>.csv`` (the rows), ``.md``
    (``markdown(df)``) and ``.png`` (``plot(df, path)``) to ``outdir``; returns the paths.

    Resumable: each fold's rows go to ``<exp.__name__>.checkpoint.jsonl`` as the fold
    finishes (:class:`svmtune.bench.checkpoint.Checkpoint`, under the experiment's other
    parameters and ``seed``); a run stopped part way reuses them when run again, and the file
    is removed once the outputs are written."""
    from svmtune.bench.checkpoint import Checkpoint

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    stem = outdir / exp.__name__
    params = {
        f.name: getattr(exp, f.name)
        for f in fields(exp)
        if f.name not in ("tasks", "folds", "loader")  # the units, and how data are read
    }
    ck = Checkpoint.for_experiment(outdir, exp.__name__, params=params, seed=seed)
    rows: list[dict] = []
    for name, fold, Xtr, ytr, Xte, yte in _suite_folds(exp.tasks, exp.folds, exp.loader):
        rows += ck.get_or_run([name, fold], exp._fold_rows, name, fold, Xtr, ytr, Xte, yte, seed)
    df = pd.DataFrame(rows)
    csv, md = stem.with_suffix(".csv"), stem.with_suffix(".md")
    df.to_csv(csv, index=False)
    md.write_text(markdown(df))
    files = [csv, md, plot(df, stem.with_suffix(".png"))]
    ck.discard()
    return files


@dataclass
class CriterionAlongC:
    """RBSVM's criterion along C at the learned width, closed form against exact LOO.

    For each task and each of its first ``folds`` outer folds (the suite's own splits and
    preprocessing): RBSVM selects ``(sigma*, C*)`` on the training part; then, at ``sigma*``,
    for every ``log2 C`` of ``log2_C`` and for ``C*``, the L2-SVM is trained and the mean
    cross-entropy of its leave-one-out outputs (RBSVM eq. (29), ``J / n``) is computed twice:
    from the closed form eq. (27) (:func:`svmtune.loo.closed_form.closed_form_loo`, what the search
    minimises) and from the exact outputs (:func:`svmtune.loo.decremental.decremental_loo`, equal to
    n retrainings), with both LOO error rates and the test accuracy of the L2-SVM and of
    libsvm's ``SVC`` at that point.

    Calling the object, ``(outdir, seed) -> [csv, md, png]``, writes
    ``criterion_along_c.csv`` (one row per task, fold and C), ``criterion_along_c.md`` (per
    task: the C minimising each criterion on the grid, mean over folds, and the test
    accuracies there and at ``C*``) and a plot of both criteria against ``log2 C``.

    Parameters
    ----------
    tasks : sequence of str
        rbsvm-paper task names.
    log2_C : sequence of float
    folds : int
        Outer folds per task (the first ones of the suite's split).
    loader : callable, optional
        ``name -> (X, y, info)``; default :func:`svmtune.datasets.load_dataset`.
    """

    tasks: Sequence[str] = ("balance-2", "australian", "adult", "monks-2", "thyroid")
    log2_C: Sequence[float] = (-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 16.0)
    folds: int = 2
    loader: Any = None

    def __post_init__(self) -> None:
        self.__name__ = "criterion_along_c"
        if int(self.folds) < 1:
            raise ValueError(f"folds must be >= 1, got {self.folds}")
        if not self.tasks or not self.log2_C:
            raise ValueError("tasks and log2_C must not be empty")

    def _fold_rows(self, task: str, fold: int, Xtr, ytr, Xte, yte, seed: int) -> list[dict]:
        from sklearn.svm import SVC

        from svmtune._loo_losses import loo_loss
        from svmtune.kernels import Kernel, gamma_from_sigma, kernel_matrix
        from svmtune.loo.closed_form import closed_form_loo
        from svmtune.loo.decremental import decremental_loo
        from svmtune.svm import LIBSVM_MAX_ITER, fit_l2_svm
        from svmtune.tuner import SVMTuner

        tuner = SVMTuner(method="rbsvm", preprocess="none", random_state=seed).fit(Xtr, ytr)
        sigma, c_star = float(tuner.best_params_["sigma"]), float(tuner.best_params_["C"])
        t = np.where(ytr == tuner.classes_[1], 1.0, -1.0)
        tt = np.where(yte == tuner.classes_[1], 1.0, -1.0)
        kern = Kernel("rbf", sigma=sigma)
        K = kernel_matrix(Xtr, None, kern)
        Kt = kernel_matrix(Xte, Xtr, kern)
        lc_star = math.log2(c_star)
        on_grid = {float(v) for v in self.log2_C}
        points = sorted(on_grid | {lc_star})
        rows, support = [], None
        for lc in points:
            C = 2.0**lc
            sol = fit_l2_svm(K, t, C, init_support=support)
            support = sol.support
            r_cf = closed_form_loo(sol, K)
            r_ex, info = decremental_loo(sol, K)
            f = sol.decision_function(Kt)
            l1 = SVC(C=C, gamma=gamma_from_sigma(sigma), max_iter=LIBSVM_MAX_ITER).fit(Xtr, t)
            rows.append(
                {
                    "task": task,
                    "fold": fold,
                    "sigma": sigma,
                    "log2_C": lc,
                    "on_grid": lc in on_grid,
                    "chosen": lc == lc_star,
                    "J_closed_form": float(np.mean(loo_loss(t, r_cf)[0])),
                    "J_exact": float(np.mean(loo_loss(t, r_ex)[0])),
                    "loo_error_closed_form": float(np.mean(np.where(r_cf > 0, 1, -1) != t)),
                    "loo_error_exact": float(np.mean(np.where(r_ex > 0, 1, -1) != t)),
                    "n_sv": int(sol.support.sum()),
                    "retrained": int(info.get("retrained", 0)),
                    "test_acc_l2": float(np.mean(np.where(f > 0, 1, -1) == tt)),
                    "test_acc_l1": float(l1.score(Xte, tt)),
                    "seed": seed,
                }
            )
        return rows

    def __call__(self, outdir: Path, seed: int) -> list[Path]:
        return _run_fold_experiment(
            self, outdir, seed, criterion_along_c_markdown, criterion_along_c_plot
        )


def criterion_along_c_markdown(df: pd.DataFrame) -> str:
    """Per task (means over folds on the common C grid): where each criterion is smallest and
    the test accuracies there, at RBSVM's own C, and the largest closed-form error."""
    lines = [
        "# RBSVM criterion along C at the learned width: closed form vs exact LOO",
        "",
        "J/n = mean LOO cross-entropy (RBSVM eq. (29)) at RBSVM's learned sigma; 'closed form' "
        "= eq. (27), what the search minimises; 'exact' = decremental LOO (equal to n "
        "retrainings). Test accuracy % of the L2-SVM (the paper's final model) and of libsvm's "
        "SVC (hinge loss) at the same (sigma, C). Means over the folds run; grid points only "
        "(RBSVM's own C, in the next-to-last column, may lie between them).",
        "",
        "| task | folds | argmin log2 C, closed form | argmin log2 C, exact | max abs(J closed "
        "form - J exact) | L2 / SVC acc. at the exact argmin | L2 / SVC acc. at RBSVM's C "
        "(median log2 C) | best SVC acc. on the grid (log2 C) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for task, sub in df.groupby("task", sort=False):
        grid = sub[sub["on_grid"]]
        mean = grid.groupby("log2_C")[
            ["J_closed_form", "J_exact", "test_acc_l2", "test_acc_l1"]
        ].mean()
        lc_cf = float(mean["J_closed_form"].idxmin())
        lc_ex = float(mean["J_exact"].idxmin())
        chosen = sub[sub["chosen"]]
        best_l1 = float(mean["test_acc_l1"].idxmax())
        gap = float((sub["J_closed_form"] - sub["J_exact"]).abs().max())
        lines.append(
            f"| {task} | {sub['fold'].nunique()} | {lc_cf:g} | {lc_ex:g} | {gap:.4f} | "
            f"{100 * mean.loc[lc_ex, 'test_acc_l2']:.1f} / "
            f"{100 * mean.loc[lc_ex, 'test_acc_l1']:.1f} | "
            f"{100 * chosen['test_acc_l2'].mean():.1f} / "
            f"{100 * chosen['test_acc_l1'].mean():.1f} ({chosen['log2_C'].median():.2f}) | "
            f"{100 * mean.loc[best_l1, 'test_acc_l1']:.1f} ({best_l1:g}) |"
        )
    return "\n".join(lines) + "\n"


def criterion_along_c_plot(df: pd.DataFrame, path: Path) -> Path:
    """One panel per task: J/n from the closed form (solid) and exact LOO (dashed) against
    log2 C, mean over folds; RBSVM's own C marked."""
    from matplotlib.figure import Figure

    tasks = list(dict.fromkeys(df["task"]))
    fig = Figure(figsize=(3.0 * max(len(tasks), 1), 3.0), dpi=100)
    axes = np.atleast_1d(fig.subplots(1, max(len(tasks), 1)))
    for ax, task in zip(axes, tasks):
        sub = df[df["task"] == task]
        grid = sub[sub["on_grid"]]
        mean = grid.groupby("log2_C")[["J_closed_form", "J_exact"]].mean()
        ax.plot(mean.index, mean["J_closed_form"], "o-", ms=3, label="closed form (27)")
        ax.plot(mean.index, mean["J_exact"], "s--", ms=3, label="exact LOO")
        for lc in sub.loc[sub["chosen"], "log2_C"]:
            ax.axvline(lc, color="grey", lw=0.8, alpha=0.6)
        ax.set_title(task, fontsize=9)
        ax.set_xlabel("log2 C", fontsize=8)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("J / n")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    return path


@dataclass
class CriterionAtPaperPoint:
    """RBSVM's criterion at our learned point and at the paper's Table II point, same folds.

    For each task and each of its first ``folds`` outer folds (the suite's own splits and
    preprocessing): RBSVM selects ``(sigma*, C*)`` on the training part; then the L2-SVM is
    trained at ``(sigma*, C*)`` and at the paper's learned RBSVM point (Table II,
    :data:`PAPER_TABLE_II`), and at each the mean closed-form LOO cross-entropy ``J / n``
    (RBSVM eq. (27), (29), (33): the quantity both searches minimise), the closed-form LOO
    error and the test accuracy of the L2-SVM and of libsvm's ``SVC`` are recorded.  Whether
    the paper's point lies in our search box (log2 sigma and log2 C in [-8, 8]) is recorded
    too: outside it our search cannot reach it.

    This asks whether the differences between our learned (sigma, C) and the paper's come
    from our search stopping short of the criterion's minimum (then the paper's point would
    have the lower J) or from the criterion on our data.  The paper does not say how it
    scaled features, so its sigma may be on another scale than ours (standardised features).

    Calling the object, ``(outdir, seed) -> [csv, md, png]``, writes
    ``criterion_at_paper_point.csv`` (one row per task and fold), ``.md`` (per task means and
    the counts) and a plot of the paper point's J against ours.

    Parameters
    ----------
    tasks : sequence of str
        rbsvm-paper task names with an entry in Table II (the suite passes those with an
        exact RBSVM: all but its large tasks).
    folds : int
        Outer folds per task (the first ones of the suite's split).
    loader : callable, optional
        ``name -> (X, y, info)``; default :func:`svmtune.datasets.load_dataset`.
    """

    tasks: Sequence[str]
    folds: int = 10
    loader: Any = None

    def __post_init__(self) -> None:
        self.__name__ = "criterion_at_paper_point"
        if int(self.folds) < 1:
            raise ValueError(f"folds must be >= 1, got {self.folds}")
        missing = sorted(set(self.tasks) - set(PAPER_TABLE_II))
        if not self.tasks or missing:
            raise ValueError(f"tasks must be non-empty names of Table II; not there: {missing}")

    def _fold_rows(self, task: str, fold: int, Xtr, ytr, Xte, yte, seed: int) -> list[dict]:
        from sklearn.svm import SVC

        from svmtune._loo_losses import loo_loss
        from svmtune.kernels import Kernel, gamma_from_sigma, kernel_matrix
        from svmtune.loo.closed_form import closed_form_loo
        from svmtune.svm import LIBSVM_MAX_ITER, fit_l2_svm
        from svmtune.tuner import SVMTuner

        tuner = SVMTuner(method="rbsvm", preprocess="none", random_state=seed).fit(Xtr, ytr)
        t = np.where(ytr == tuner.classes_[1], 1.0, -1.0)
        tt = np.where(yte == tuner.classes_[1], 1.0, -1.0)
        paper_sigma, paper_C = PAPER_TABLE_II[task][0]
        points = {
            "ours": (float(tuner.best_params_["sigma"]), float(tuner.best_params_["C"])),
            "paper": (float(paper_sigma), float(paper_C)),
        }
        row: dict[str, Any] = {"task": task, "fold": fold, "n_train": int(t.size), "seed": seed}
        for who, (sigma, C) in points.items():
            kern = Kernel("rbf", sigma=sigma)
            K = kernel_matrix(Xtr, None, kern)
            sol = fit_l2_svm(K, t, C)
            r = closed_form_loo(sol, K)
            f = sol.decision_function(kernel_matrix(Xte, Xtr, kern))
            svc = SVC(C=C, gamma=gamma_from_sigma(sigma), max_iter=LIBSVM_MAX_ITER).fit(Xtr, t)
            row.update(
                {
                    f"sigma_{who}": sigma,
                    f"C_{who}": C,
                    f"J_{who}": float(np.mean(loo_loss(t, r)[0])),
                    f"loo_error_{who}": float(np.mean(np.where(r > 0, 1, -1) != t)),
                    f"test_acc_l2_{who}": float(np.mean(np.where(f > 0, 1, -1) == tt)),
                    f"test_acc_l1_{who}": float(svc.score(Xte, tt)),
                }
            )
        lo, hi = DEFAULT_LOG2_C
        row["paper_in_box"] = bool(all(lo <= math.log2(v) <= hi for v in points["paper"]))
        return [row]

    def __call__(self, outdir: Path, seed: int) -> list[Path]:
        return _run_fold_experiment(
            self, outdir, seed, criterion_at_paper_point_markdown, criterion_at_paper_point_plot
        )


def criterion_at_paper_point_markdown(df: pd.DataFrame) -> str:
    """Per task (means over folds): J/n, LOO error and test accuracies at our point and at the
    paper's, and how often each point has the lower J -- split by whether the paper's point
    lies in our search box."""
    lines = [
        "# RBSVM criterion at our learned point and at the paper's (Table II)",
        "",
        "J/n = mean closed-form LOO cross-entropy (RBSVM eq. (27), (29), (33)) of the L2-SVM "
        "on the training part of each outer fold, at RBSVM's learned (sigma, C) ('ours') and "
        "at the paper's Table II RBSVM point ('paper'); test accuracy % of the L2-SVM (the "
        "paper's final model) and of libsvm's SVC there. 'in box': the paper's point has "
        "log2 sigma and log2 C in our search box [-8, 8]. The paper does not state its "
        "feature scaling (ours: standardised), so its sigma may be on another scale. Means "
        "over folds.",
        "",
        "| task | folds | in box | ours (sigma, C) median | paper (sigma, C) | J/n ours | "
        "J/n paper | folds J ours < paper | LOO err. % ours / paper | L2 acc. % ours / "
        "paper | SVC acc. % ours / paper |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for task, sub in df.groupby("task", sort=False):
        lines.append(
            f"| {task} | {len(sub)} | {'yes' if sub['paper_in_box'].iloc[0] else 'no'} | "
            f"{sub['sigma_ours'].median():.3g}, {sub['C_ours'].median():.3g} | "
            f"{sub['sigma_paper'].iloc[0]:.4g}, {sub['C_paper'].iloc[0]:.4g} | "
            f"{sub['J_ours'].mean():.4f} | {sub['J_paper'].mean():.4f} | "
            f"{int((sub['J_ours'] < sub['J_paper']).sum())} | "
            f"{100 * sub['loo_error_ours'].mean():.1f} / "
            f"{100 * sub['loo_error_paper'].mean():.1f} | "
            f"{100 * sub['test_acc_l2_ours'].mean():.2f} / "
            f"{100 * sub['test_acc_l2_paper'].mean():.2f} | "
            f"{100 * sub['test_acc_l1_ours'].mean():.2f} / "
            f"{100 * sub['test_acc_l1_paper'].mean():.2f} |"
        )
    lines.append("")
    for in_box, sub in df.groupby("paper_in_box", sort=False):
        per_task = sub.groupby("task")[
            ["J_ours", "J_paper", "test_acc_l2_ours", "test_acc_l2_paper"]
        ].mean()
        lines.append(
            f"- Paper's point {'inside' if in_box else 'outside'} the box: "
            f"{len(per_task)} tasks, {len(sub)} folds; our J lower on "
            f"{int((sub['J_ours'] < sub['J_paper']).sum())} folds and, in the mean over "
            f"folds, on {int((per_task['J_ours'] < per_task['J_paper']).sum())} tasks; mean "
            f"L2 test accuracy over these tasks {100 * per_task['test_acc_l2_ours'].mean():.2f} "
            f"% (ours) vs {100 * per_task['test_acc_l2_paper'].mean():.2f} % (paper's point)."
        )
    return "\n".join(lines) + "\n"


def criterion_at_paper_point_plot(df: pd.DataFrame, path: Path) -> Path:
    """J/n at the paper's point against J/n at ours, one point per task (mean over folds),
    filled where the paper's point lies in our box; the diagonal marks equal J."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.5, 4.5), dpi=100)
    ax = fig.subplots()
    mean = df.groupby("task", sort=False).agg(
        J_ours=("J_ours", "mean"), J_paper=("J_paper", "mean"), in_box=("paper_in_box", "first")
    )
    for in_box, sub in mean.groupby("in_box"):
        ax.plot(
            sub["J_ours"],
            sub["J_paper"],
            "o",
            mfc="tab:blue" if in_box else "none",
            mec="tab:blue",
            label="paper's point in our box" if in_box else "paper's point outside the box",
        )
        for task, r in sub.iterrows():
            ax.annotate(
                str(task),
                (r["J_ours"], r["J_paper"]),
                fontsize=6,
                xytext=(2, 2),
                textcoords="offset points",
            )
    hi = float(max(mean["J_ours"].max(), mean["J_paper"].max())) * 1.05
    ax.plot([0, hi], [0, hi], color="grey", lw=0.8)
    ax.set_xlabel("J / n at our learned point")
    ax.set_ylabel("J / n at the paper's Table II point")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    return path
