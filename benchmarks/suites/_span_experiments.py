"""Stand-alone studies of the span-paper suite (Weighted span Section 6, Tables 2-6, Fig. 2-6).

The paper derives Tables 2-5 and Fig. 2-4 from one pass over a model grid per data set: every
weighted SVM of the grid (1089 class-weight models of Experiment #1, 1700 instance-weight
models of Experiment #2) is trained once on the Table 1 training set, then

* predicted by the span-rule ``t_l`` (Corollary 1, eq. (37)), the span bound (Theorem 1),
  the xi-alpha bound (eq. (21)) and 5-fold cross-validation,
* evaluated on the Table 1 test set (the "actual test error"),
* counted (in-bound / bounded support vectors, Lemma 1 failures: Table 5) and timed
  (spans vs. 5-fold CV: Table 6).

:func:`grid_study` does exactly that for one data set with the library's own pieces
(:func:`svmtune.svm.fit_l1_svm`, :mod:`svmtune.loo.span_rule`, the shared CV path
:func:`svmtune.search.cv.cv_errors`); :func:`summarise_grid` turns its rows into the rows of
Tables 2-6, :func:`plot_error_curves` draws Fig. 2-4 and :func:`ringnorm_study` /
:func:`plot_ringnorm` the synthetic scaling study of Section 6.7 (Fig. 5-6).

Features are scaled to ``[0, 1]`` on the training part and ``gamma = 1/d`` (the paper's
heuristic, Section 6.2), after the library's preprocessing (one-hot encoding of categorical
columns, median imputation).  Everything random takes a seed.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from svmtune.bench.checkpoint import Checkpoint
from svmtune.bench.suite import Task
from svmtune.kernels import Kernel, rbf_params, sigma_from_gamma
from svmtune.loo._spans import n_empty_spans, span_rule_spans
from svmtune.loo.span_bounds import (
    enclosing_diameter,
    estimate_span_bound,
    estimate_xi_alpha,
    xi_alpha_radius2,
)
from svmtune.loo.span_rule import estimate_span_rule
from svmtune.loo.weights import minmax_scores, sigmoid_sample_weights
from svmtune.methods.baselines import log2_grid
from svmtune.methods.span_rule import class_weight_params
from svmtune.search.cv import cv_errors, make_folds
from svmtune.svm import fit_l1_svm

from ._span_study import (
    best_slices,
    holdout_error,
    lemma1_statistics,
    make_ringnorm,
    prediction_rmse,
    worst_case_at_minimum,
)

__all__ = [
    "SplitData",
    "load_paper_split",
    "scale_unit",
    "class_weight_grid",
    "instance_weight_grid",
    "grid_study",
    "summarise_grid",
    "plot_error_curves",
    "ringnorm_study",
    "plot_ringnorm",
    "CRITERIA",
]

#: prediction columns of a grid study (the columns of Tables 2 and 4)
CRITERIA = ("span_rule", "span_bound", "cv", "xi_alpha")


# ---------------------------------------------------------------------------------------------
# Data: the Table 1 training / test sets
# ---------------------------------------------------------------------------------------------
@dataclass
class SplitData:
    """One Table 1 train/test split, labels in {-1, +1}; ``q`` the training importance scores
    (Experiment #2 data sets) or None."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    q: np.ndarray | None
    notes: str = ""


def _binary_pm(y: np.ndarray, positive: Any) -> np.ndarray:
    y = np.asarray(y)
    mask = y == positive
    if not mask.any():
        mask = y.astype(str) == str(positive)
    if not mask.any() or mask.all():
        raise ValueError(f"positive class {positive!r} does not split the labels")
    return np.where(mask, 1.0, -1.0)


def scale_unit(X_train: np.ndarray, X_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale every feature linearly to ``[0, 1]`` on the training part (Weighted span
    Section 6.2); constant features become 0.  The test part uses the training ranges."""
    lo = X_train.min(axis=0)
    r = X_train.max(axis=0) - lo
    r = np.where(r > 0, r, 1.0)
    return (X_train - lo) / r, (X_test - lo) / r


def load_paper_split(task: Task, seed: int, loader=None) -> SplitData:
    """The Table 1 training and test sets of ``task`` (preprocessed, scaled to ``[0, 1]``).

    ``task.options``: ``n_train`` (training size), ``n_test`` (test size, capped by what the
    data hold; the rest of the file when None), ``score`` (``"updrs"`` for the Parkinson
    speech subjects, or a column name whose values are the importance scores, removed from
    the features), ``subjects`` (``(train_ids, test_ids)``: split by subject instead of at
    random).  A ``test_dataset`` gives the test set; otherwise the training and test sets are
    disjoint stratified draws from ``task.dataset`` with ``seed``.
    """
    from sklearn.model_selection import train_test_split

    from svmtune.preprocess import make_preprocessor, needs_auto

    if loader is None:
        from svmtune.datasets import load_dataset as loader
    opts = task.options
    X, y, info = loader(task.dataset)
    X = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    score = opts.get("score")
    raw_q = None
    notes = []
    if score == "updrs":
        side = info.load_side("groups")
        raw_q = np.asarray(side["UPDRS"], dtype=float)
        subject = np.asarray(side["subject_id"])
    elif score is not None:
        raw_q = X[score].to_numpy(dtype=float)
    drop = [c for c in task.drop_columns if c in X.columns]
    X = X.drop(columns=drop).reset_index(drop=True)
    y = np.asarray(y)
    ypm = _binary_pm(y, task.positive) if task.positive is not None else None
    if ypm is None:
        labels = np.unique(y)
        ypm = np.where(y == labels[-1], 1.0, -1.0)
    n_train = opts.get("n_train")
    n_test = opts.get("n_test")
    if "subjects" in opts:
        train_ids, test_ids = opts["subjects"]
        tr = np.flatnonzero(np.isin(subject, train_ids))
        te = np.flatnonzero(np.isin(subject, test_ids))
        X_tr, X_te, y_tr, y_te = X.iloc[tr], X.iloc[te], ypm[tr], ypm[te]
        q_tr = None if raw_q is None else raw_q[tr]
    elif task.test_dataset is not None:
        idx = np.arange(len(ypm))
        if n_train is not None and n_train < len(ypm):
            idx, _ = train_test_split(idx, train_size=n_train, stratify=ypm, random_state=seed)
            idx = np.sort(idx)
        X_tr, y_tr = X.iloc[idx], ypm[idx]
        q_tr = None if raw_q is None else raw_q[idx]
        Xt, yt, _ = loader(task.test_dataset)
        Xt = Xt if isinstance(Xt, pd.DataFrame) else pd.DataFrame(np.asarray(Xt))
        Xt = Xt.drop(columns=[c for c in task.drop_columns if c in Xt.columns])
        yt = np.asarray(yt)
        X_te = Xt
        y_te = (
            _binary_pm(yt, task.positive)
            if task.positive is not None
            else np.where(yt == np.unique(y)[-1], 1.0, -1.0)
        )
        if n_test is not None and n_test < len(y_te):
            keep, _ = train_test_split(
                np.arange(len(y_te)), train_size=n_test, stratify=y_te, random_state=seed
            )
            keep = np.sort(keep)
            X_te, y_te = X_te.iloc[keep], y_te[keep]
    else:
        if n_train is None:
            raise ValueError(f"task {task.name!r}: options need n_train (Table 1)")
        rest = len(ypm) - int(n_train)
        if rest < 2:
            raise ValueError(f"task {task.name!r}: {len(ypm)} rows cannot give {n_train} + test")
        if n_test is not None and n_test > rest:
            notes.append(f"test set {rest} rows (paper: {n_test}; the data hold no more)")
        m_test = rest if n_test is None else min(int(n_test), rest)
        tr, te = train_test_split(
            np.arange(len(ypm)),
            train_size=int(n_train),
            test_size=m_test,
            stratify=ypm,
            random_state=seed,
        )
        tr, te = np.sort(tr), np.sort(te)
        X_tr, X_te, y_tr, y_te = X.iloc[tr], X.iloc[te], ypm[tr], ypm[te]
        q_tr = None if raw_q is None else raw_q[tr]
    mode = "auto" if (needs_auto(X_tr) or needs_auto(X_te)) else "standard"
    pre = make_preprocessor(mode, X_tr)
    A_tr = np.asarray(pre.fit_transform(X_tr), dtype=float)
    A_te = np.asarray(pre.transform(X_te), dtype=float)
    A_tr, A_te = scale_unit(A_tr, A_te)
    q = None
    if raw_q is not None:
        if score == "updrs":
            # Section 6.3: PWP instances get their UPDRS scaled to [0, 1], healthy ones 1
            q = np.ones_like(q_tr)
            pwp = y_tr > 0
            q[pwp] = minmax_scores(q_tr[pwp])
        else:
            q = minmax_scores(q_tr)
    return SplitData(A_tr, y_tr, A_te, np.asarray(y_te, dtype=float), q, "; ".join(notes))


# ---------------------------------------------------------------------------------------------
# Model grids
# ---------------------------------------------------------------------------------------------
def class_weight_grid(step: float = 0.5, lo: float = -6.0, hi: float = 10.0) -> list[dict]:
    """``C+`` / ``C-`` over ``log2 in [lo, hi]`` (Weighted span Section 6.2: step 0.5, 1089
    models).  Each entry: ``C`` (libsvm scale), per-class multiplier and the two weights."""
    out = []
    for cp in log2_grid(lo, hi, step):
        for cn in log2_grid(lo, hi, step):
            C, cw = class_weight_params(cp, cn)
            out.append({"kind": "class", "C_pos": cp, "C_neg": cn, "C": C, "ratio": cw[1]})
    return out


def instance_weight_grid(
    A_values: Sequence[float] = tuple(range(1, 11)),
    B_values: Sequence[float] = tuple(round(0.1 * b, 1) for b in range(10)),
    log2_C: tuple[float, float, float] = (-6.0, 10.0, 1.0),
) -> list[dict]:
    """``(A, B, C)`` of eq. (39) (Weighted span Section 6.3: 10 x 10 x 17 = 1700 models)."""
    return [
        {"kind": "scores", "A": float(A), "B": float(B), "C": float(C)}
        for A in A_values
        for B in B_values
        for C in log2_grid(*log2_C)
    ]


def _weights(spec: dict, y: np.ndarray, q: np.ndarray | None) -> np.ndarray:
    if spec["kind"] == "class":
        return np.where(y > 0, spec["ratio"], 1.0)
    if q is None:
        raise ValueError("an instance-weight grid needs importance scores q")
    return sigmoid_sample_weights(q, spec["A"], spec["B"], spec["C"])


def grid_study(
    data: SplitData,
    grid: list[dict],
    *,
    unit_gamma: float | None = None,
    n_splits: int = 5,
    span_bound: bool = True,
    cv: bool = True,
    seed: int = 0,
) -> pd.DataFrame:
    """Train every model of ``grid`` once and predict / measure its test error.

    Per model (one row): the grid parameters; ``span_rule`` (eq. (37)), ``span_bound``
    (Theorem 1), ``xi_alpha`` (eq. (21)), ``cv`` (``n_splits``-fold CV error through
    :func:`svmtune.search.cv.cv_errors`, the same folds for every model); ``test_error``;
    ``n_sv``, ``n_inbound``, ``n_empty`` (Lemma 1 failures, Table 5); CPU seconds of this
    process (``time.process_time``, robust to other load on the machine) ``time_fit``
    (libsvm with the precomputed kernel), ``time_span`` (closed-form spans and ``t_l``),
    ``time_kernel`` (the training kernel matrix, computed once for the whole grid),
    ``time_bound`` and ``time_cv`` (the whole K-fold CV of the model; libsvm computes the
    kernel from the features, as in the paper).  Run it under
    ``threadpoolctl.threadpool_limits(1)`` for one-core times.

    The RBF width is the paper's ``gamma = 1/d`` on the ``[0, 1]``-scaled features
    (``unit_gamma`` overrides ``1/d``).
    """
    Xtr, ytr, Xte, yte = data.X_train, data.y_train, data.X_test, data.y_test
    d = Xtr.shape[1]
    gamma = 1.0 / d if unit_gamma is None else float(unit_gamma)
    sigma = float(sigma_from_gamma(gamma))
    kern = Kernel("rbf", sigma=sigma)
    tk = time.process_time()
    K = kern(Xtr)
    time_kernel = time.process_time() - tk
    Kte = kern(Xte, Xtr)
    D = enclosing_diameter(K) if span_bound else None
    r2 = xi_alpha_radius2(K)
    y01 = (ytr > 0).astype(int)
    folds = make_folds(y01, n_splits, seed) if cv else None
    rows = []
    clock = time.process_time
    for spec in grid:
        w = _weights(spec, ytr, data.q)
        t0 = clock()
        sol = fit_l1_svm(ytr, spec["C"], K=K, sample_weight=w)
        t1 = clock()
        S2 = span_rule_spans(sol, K)
        t_l = estimate_span_rule(sol, K, spans=S2)
        t2 = clock()
        row = {k: v for k, v in spec.items() if k != "kind"}
        row.update(
            sigma=sigma,
            gamma=gamma,
            span_rule=t_l,
            xi_alpha=estimate_xi_alpha(sol, K, r2_delta=r2),
            test_error=holdout_error(sol, Kte, yte),
            n_sv=int(sol.support.sum()),
            n_inbound=int(sol.in_bound.sum()),
            n_empty=n_empty_spans(sol),
            time_fit=t1 - t0,
            time_span=t2 - t1,
            time_kernel=time_kernel,
        )
        if span_bound:
            t3 = clock()
            row["span_bound"] = estimate_span_bound(sol, K, D=D)
            row["time_bound"] = clock() - t3
        if cv:
            t4 = clock()
            row["cv"] = float(
                cv_errors(
                    Xtr, y01, [rbf_params(sigma, spec["C"])], folds=folds, sample_weight=w, n_jobs=1
                )[0]
            )
            row["time_cv"] = clock() - t4
        rows.append(row)
    return pd.DataFrame(rows)


def summarise_grid(df: pd.DataFrame) -> dict[str, float]:
    """One data set's entries of Tables 2-6 from its :func:`grid_study` rows.

    ``sel_<criterion>``: test error of the model the criterion selects, ties resolved
    pessimistically (Tables 2-3, :func:`._span_study.worst_case_at_minimum`);
    ``min_error``; ``rmse_<criterion>`` (Table 4; the span bound is left out, as in the
    paper); Lemma 1 statistics (Table 5); mean seconds per model (Table 6): ``time_span_rule``
    = fit + spans, ``time_spans`` = spans only, ``time_cv`` = the K-fold CV.
    """
    out: dict[str, float] = {"n_models": float(len(df))}
    for c in CRITERIA:
        if c in df:
            out[f"sel_{c}"] = worst_case_at_minimum(df[c], df["test_error"])
            if c != "span_bound":
                out[f"rmse_{c}"] = prediction_rmse(df[c], df["test_error"])
    out["min_error"] = float(df["test_error"].min())
    out.update(lemma1_statistics(df["n_empty"], df["n_inbound"], df["n_sv"]))
    out["time_span_rule"] = float((df["time_fit"] + df["time_span"]).mean())
    out["time_spans"] = float(df["time_span"].mean())
    if "time_cv" in df:
        out["time_cv"] = float(df["time_cv"].mean())
    return out


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------
_LABELS = {
    "test_error": "test error",
    "span_rule": "span-rule",
    "cv": "5-fold CV",
    "xi_alpha": "xi-alpha bound",
}


def plot_error_curves(df: pd.DataFrame, axes: Sequence[str], title: str, path: Path) -> Path:
    """Fig. 2-4: test error and predictions along each training parameter, the others fixed
    at the model of minimum test error (:func:`._span_study.best_slices`); each
    curve's minimum marked with a square, the minimum test error with a star."""
    from matplotlib.figure import Figure

    preds = [c for c in ("span_rule", "cv", "xi_alpha") if c in df]
    values = [np.sort(df[a].unique()) for a in axes]
    shape = tuple(len(v) for v in values)
    pos = [np.searchsorted(v, df[a].to_numpy()) for a, v in zip(axes, values)]

    def cube(col: str) -> np.ndarray:
        G = np.full(shape, np.nan)
        G[tuple(pos)] = df[col].to_numpy()
        return G

    slices = best_slices(cube("test_error"), *[cube(c) for c in preds])
    fig = Figure(figsize=(4.2 * len(axes), 3.4), dpi=100)
    axs = np.atleast_1d(fig.subplots(1, len(axes)))
    for ax, a, v, curves in zip(axs, axes, values, slices):
        xs = np.log2(v) if a.startswith("C") else v
        for name, curve in zip(["test_error"] + preds, curves):
            style = "k-" if name == "test_error" else "-"
            (line,) = ax.plot(xs, curve, style, label=_LABELS[name], lw=1.4)
            k = int(np.nanargmin(curve))
            mark = "*" if name == "test_error" else "s"
            ax.plot(xs[k], curve[k], mark, color=line.get_color(), ms=9, mfc="none")
        ax.set_xlabel(f"log2 {a}" if a.startswith("C") else a)
        ax.set_ylabel("error")
        ax.grid(True, alpha=0.3)
    axs[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    return Path(path)


# ---------------------------------------------------------------------------------------------
# Section 6.7: ringnorm scaling (Fig. 5-6)
# ---------------------------------------------------------------------------------------------
def ringnorm_study(
    sizes: Sequence[int],
    dims: Sequence[int],
    *,
    run_sizes: Sequence[int],
    grid: list[dict],
    n_splits: int = 5,
    seed: int = 0,
    checkpoint: Checkpoint | None = None,
) -> pd.DataFrame:
    """Time per model of the span-rule and of K-fold CV on the paper's ringnorm variant.

    For every ``(l, d)``: data from :func:`._span_study.make_ringnorm` (priors
    0.3 / 0.7, ``N(1, I)`` vs ``N(0, 4 I)``), features scaled to ``[0, 1]``, ``gamma = 1/d``,
    and the class-weight ``grid``; rows for sizes not in ``run_sizes`` are written with
    ``status = "not run"`` and no numbers.  With a ``checkpoint``
    (:class:`svmtune.bench.checkpoint.Checkpoint`) each ``(l, d)`` point is kept there as it
    finishes and taken from there when it is already stored.
    """
    rows = []
    for d in dims:
        for n in sizes:
            point = (int(n), int(d), grid, n_splits, seed)
            if n not in set(run_sizes):
                rows.append({"l": int(n), "d": int(d), "n_models": len(grid), "status": "not run"})
            elif checkpoint is None:
                rows.append(_ringnorm_point(*point))
            else:
                rows.append(checkpoint.get_or_run(point[:2], _ringnorm_point, *point))
    return pd.DataFrame(rows)


def _ringnorm_point(n: int, d: int, grid: list[dict], n_splits: int, seed: int) -> dict:
    """One ``(l, d)`` row of :func:`ringnorm_study`."""
    X, y = make_ringnorm(n, d, random_state=seed + 1000 * d + n)
    Xs, _ = scale_unit(X, X[:1])
    data = SplitData(Xs, y, Xs[:1], y[:1], None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = grid_study(data, grid, n_splits=n_splits, span_bound=False, seed=seed)
    return {
        "l": n,
        "d": d,
        "n_models": len(grid),
        "status": "ok",
        "time_span_rule": float((g["time_fit"] + g["time_span"]).mean()),
        "time_spans": float(g["time_span"].mean()),
        "time_cv": float(g["time_cv"].mean()),
        "n_inbound": float(g["n_inbound"].mean()),
        "n_sv": float(g["n_sv"].mean()),
    }


def plot_ringnorm(df: pd.DataFrame, path_time: Path, path_sv: Path) -> list[Path]:
    """Fig. 5 (seconds per model vs ``l``) and Fig. 6 (mean in-bound / total SVs vs ``l``),
    one panel per dimension; sizes not run are absent from the curves."""
    from matplotlib.figure import Figure

    ok = df[df["status"] == "ok"]
    dims = sorted(df["d"].unique())
    out = []
    for path, cols, ylabel in (
        (path_time, (("time_span_rule", "span-rule"), ("time_cv", "5-fold CV")), "s / model"),
        (path_sv, (("n_inbound", "in-bound SVs"), ("n_sv", "total SVs")), "SVs"),
    ):
        fig = Figure(figsize=(3.6 * len(dims), 3.2), dpi=100)
        axs = np.atleast_1d(fig.subplots(1, len(dims)))
        for ax, d in zip(axs, dims):
            sub = ok[ok["d"] == d].sort_values("l")
            for col, lab in cols:
                if not sub.empty:
                    ax.plot(np.log2(sub["l"]), sub[col], "o-", label=lab)
            ax.set_title(f"d = {d}", fontsize=9)
            ax.set_xlabel("log2 l")
            ax.set_ylabel(ylabel)
            ax.set_xlim(np.log2(df["l"].min()) - 0.5, np.log2(df["l"].max()) + 0.5)
            ax.grid(True, alpha=0.3)
        axs[0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path)
        out.append(Path(path))
    return out
