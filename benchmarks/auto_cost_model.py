"""Measure the constants of ``auto``'s cost model (:mod:`svmtune.methods._cost_model`).

For bundled data sets and subsample sizes, times in one process (one BLAS thread) a fit of
scikit-learn's ``SVC()``, one exact RBSVM objective evaluation with its gradient
(:func:`svmtune.loo.rbsvm.rbsvm_objective`), one span-rule referee score
(:func:`svmtune.loo.referee.l1_loo_outputs`) and one low-rank RBSVM evaluation
(:func:`svmtune.loo.rbsvm_lowrank.lowrank_rbsvm_objective`, ``m`` landmarks), each at the
median-heuristic width and ``C = 1``, and fits the cost model's constants to the time ratios
(:func:`fit_exact_constants` for ``KAPPA_KERNEL`` and ``KAPPA_CUBE``; the median over the cells
of the low-rank ratio over the model's raw work for ``KAPPA_LOWRANK``).

    OMP_NUM_THREADS=1 python benchmarks/auto_cost_model.py            # measure, write .jsonl
    python benchmarks/auto_cost_model.py --table                       # auto_cost_model.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
OUT = HERE / "results" / "auto_cost_model.jsonl"
SETS = ("ijcnn1_train", "adult_a9a_train", "eeg_eye_state", "spambase", "waveform_5000")
SIZES = (250, 500, 1000, 2000, 4000)
RANK = 500
#: the smallest stage the low-rank constant is fitted on: auto plans that path only above
LOWRANK_FIT_ROWS = 2000


def _best_of(f, repeats=3):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(sets, sizes):
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from svmtune.datasets import load_dataset
    from svmtune.kernels import rbf_from_sqdist, squared_distances
    from svmtune.loo.rbsvm import rbsvm_objective
    from svmtune.loo.rbsvm_lowrank import lowrank_rbsvm_objective
    from svmtune.loo.referee import l1_loo_outputs
    from svmtune.lowrank import pivoted_cholesky_landmarks
    from svmtune.methods import _cost_model as fid
    from svmtune.methods._auto_final import svc_sv_fraction
    from svmtune.methods._cost_model import exact_eval_cost, lowrank_eval_cost, svc_fit_cost
    from svmtune.methods.base import ovr_tasks
    from svmtune.search.start import initial_sigma

    warnings.simplefilter("ignore")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    for name in sets:
        X, y, info = load_dataset(name)
        X = StandardScaler().fit_transform(np.asarray(X, dtype=float))
        y = np.unique(np.asarray(y), return_inverse=True)[1]
        probe = train_test_split(
            np.arange(len(y)), train_size=fid.PROBE_ROWS, stratify=y, random_state=0
        )[0]
        sv_fraction = svc_sv_fraction(X[probe], y[probe], None)
        for s in sizes:
            if s > len(y):
                continue
            idx = (
                np.arange(len(y))
                if s == len(y)
                else train_test_split(np.arange(len(y)), train_size=s, stratify=y, random_state=0)[
                    0
                ]
            )
            Xs, ys = X[idx], y[idx]
            d, tasks = Xs.shape[1], ovr_tasks(ys)
            t_svc = _best_of(lambda Xs=Xs, ys=ys: SVC().fit(Xs, ys))
            row = {
                "set": name,
                "version": info["version"],
                "n": int(s),
                "d": int(d),
                "tasks": len(tasks),
                "sv_fraction": sv_fraction,
                "t_svc": t_svc,
            }
            D2 = squared_distances(Xs)
            sigma = initial_sigma(D2, rule="median")
            theta = np.log([sigma, 1.0])
            if s <= 2000:
                row["t_exact"] = _best_of(
                    lambda Xs=Xs, t=tasks, th=theta: rbsvm_objective(squared_distances(Xs), t, th),
                    2,
                )
                row["t_l1"] = _best_of(
                    lambda Xs=Xs, t=tasks, s_=sigma: l1_loo_outputs(
                        rbf_from_sqdist(squared_distances(Xs), s_), t, 1.0
                    ),
                    2,
                )
                row["w_exact"] = exact_eval_cost(s, d, len(tasks))
            idx_l, _ = pivoted_cholesky_landmarks(Xs, sigma, tol=1e-2, max_rank=RANK)
            D2_nm = squared_distances(Xs, Xs[idx_l])

            def lowrank(Xs=Xs, idx_l=idx_l, D2_nm=D2_nm, tasks=tasks, theta=theta):
                return lowrank_rbsvm_objective(
                    squared_distances(Xs, Xs[idx_l]), D2_nm[idx_l], tasks, theta
                )

            row["t_lowrank"] = _best_of(lowrank, 2)
            row["rank"] = int(idx_l.size)
            row["w_lowrank"] = lowrank_eval_cost(s, d, len(tasks), int(idx_l.size))
            row["w_svc"] = svc_fit_cost(s, d, sv_fraction)
            row["machine"] = {
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "load": os.getloadavg(),
            }
            with OUT.open("a") as f:
                f.write(json.dumps(row) + "\n")
                f.flush()
                os.fsync(f.fileno())
            print(json.dumps(row), flush=True)


def fit_exact_constants(df) -> tuple[float, float, float]:
    """``(KAPPA_KERNEL, KAPPA_CUBE, median |log error|)``: the two constants of the exact
    evaluation's model, ``t_exact / t_svc = (KAPPA_KERNEL + KAPPA_CUBE T s / (d + D_EXP))
    SV_FRACTION / f`` (``f`` the probe's share of support vectors),
    that minimise the median absolute log error over the cells (a grid search: the errors
    are ratios, and a few slow cells should not pull the fit)."""
    from svmtune.methods import _cost_model as fid

    cells = df.dropna(subset=["t_exact"])
    ratio = (cells["t_exact"] / cells["t_svc"]).to_numpy()
    x = (cells["tasks"] * cells["n"] / (cells["d"] + fid.D_EXP)).to_numpy()
    # the unit scales with the probe's share of support vectors (svc_fit_cost)
    scale = (fid.SV_FRACTION / cells["sv_fraction"]).to_numpy()
    best = (np.inf, 0.0, 0.0)
    for k1 in np.linspace(0.2, 20, 100):
        for k2 in np.geomspace(1e-4, 1, 100):
            err = float(np.median(np.abs(np.log((k1 + k2 * x) * scale / ratio))))
            if err < best[0]:
                best = (err, float(k1), float(k2))
    return best[1], best[2], best[0]


def table():
    import pandas as pd

    from svmtune.methods import _cost_model as fid

    df = pd.DataFrame([json.loads(line) for line in OUT.open()])
    df = df.drop_duplicates(["set", "n"], keep="last")
    k_kernel, k_cube, err = fit_exact_constants(df)
    df["exact_in_svc_fits"] = df["t_exact"] / df["t_svc"]
    df["model_exact"] = [
        fid.exact_eval_cost(n, d, t) / fid.svc_fit_cost(n, d, f)
        for n, d, t, f in zip(df["n"], df["d"], df["tasks"], df["sv_fraction"])
    ]
    df["l1_in_svc_fits"] = df["t_l1"] / df["t_svc"]
    df["lowrank_in_svc_fits"] = df["t_lowrank"] / df["t_svc"]
    raw_lowrank = [
        fid.lowrank_eval_cost(n, d, t, m) / fid.KAPPA_LOWRANK / fid.svc_fit_cost(n, d, f)
        for n, d, t, m, f in zip(df["n"], df["d"], df["tasks"], df["rank"], df["sv_fraction"])
    ]
    df["kappa_lowrank"] = df["lowrank_in_svc_fits"] / np.asarray(raw_lowrank)
    planned = df["n"] >= LOWRANK_FIT_ROWS
    cols = [
        "set",
        "n",
        "d",
        "tasks",
        "sv_fraction",
        "t_svc",
        "exact_in_svc_fits",
        "model_exact",
        "l1_in_svc_fits",
        "lowrank_in_svc_fits",
        "rank",
        "kappa_lowrank",
    ]
    lines = [
        "# The constants of auto's cost model",
        "",
        "Generated by `python benchmarks/auto_cost_model.py --table` from "
        "`benchmarks/results/auto_cost_model.jsonl` (measured with "
        "`OMP_NUM_THREADS=1 python benchmarks/auto_cost_model.py`). Times are the best of "
        "2-3 runs in one process; a step's cost is given in fits of `SVC()` on the same rows.",
        "",
        f"Exact evaluation, fitted over the {df['t_exact'].notna().sum()} cells up to 2,000 rows "
        f"(median absolute log error {err:.2f}): KAPPA_KERNEL = **{k_kernel:.3g}**, "
        f"KAPPA_CUBE = **{k_cube:.3g}**. Low-rank evaluation: median kappa_lowrank over the "
        f"{int(planned.sum())} cells of at least {LOWRANK_FIT_ROWS:,} rows (where `auto` plans "
        f"the low-rank path) **{df.loc[planned, 'kappa_lowrank'].median():.3g}** (over all "
        f"cells {df['kappa_lowrank'].median():.3g}: below, the unit, an `SVC()` fit of a few "
        f"milliseconds, is mostly fixed cost). In use (`svmtune.methods._cost_model`): "
        f"KAPPA_KERNEL = {fid.KAPPA_KERNEL}, KAPPA_CUBE = {fid.KAPPA_CUBE}, "
        f"KAPPA_LOWRANK = {fid.KAPPA_LOWRANK}; SV_FRACTION = {fid.SV_FRACTION} (in use), "
        f"**{df.drop_duplicates('set')['sv_fraction'].median():.3g}** (the median of the sets' "
        f"probe shares of support vectors, {fid.PROBE_ROWS} rows). `model_exact` is the "
        "model's prediction with the constants in use.",
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    for _, r in df[cols].iterrows():
        lines.append(
            "| "
            + " | ".join(f"{v:.3g}" if isinstance(v, float) else str(v) for v in r.values)
            + " |"
        )
    machine = df["machine"].iloc[-1]
    lines += [
        "",
        f"Machine: {machine['platform']}, {machine['cpus']} CPUs, load average at "
        f"the last cell {machine['load']} (shared with other jobs: the ratios are measured in "
        "one process, each against an `SVC()` fit timed beside it).",
    ]
    (HERE / "auto_cost_model.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    a = ap.parse_args()
    if a.table:
        table()
    else:
        measure(a.sets.split(","), [int(s) for s in a.sizes.split(",")])
