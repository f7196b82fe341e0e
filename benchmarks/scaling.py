"""Scaling benchmark: selection time and peak memory against n.

Every (data set, n, method) cell runs in a fresh Python process (so that its peak resident
memory, ``resource.getrusage(RUSAGE_SELF).ru_maxrss``, is its own) and writes one JSON file
``<out>/<dataset>_n<n>_<method>.json``; ``--plot`` draws ``<out>/scaling.png`` from all JSON
files present.

Data: the first ``n`` points of a stratified shuffle (``random_state=0``) of the training file,
standardised with the mean / std of those ``n`` points; the test set is the official
``ijcnn1_test`` file for ijcnn1 and, for skin_nonskin (no official split), 20,000 points drawn
(``random_state=1``) from the rows not in the largest training subsample.

Methods:
  default        scikit-learn ``SVC()`` (C = 1, gamma = "scale"); no selection.
  rbsvm          exact RBSVM (``n x n`` kernel; only for n <= --max-exact-n).
  rbsvm_lowrank  :class:`svmtune.methods.rbsvm_lowrank.RBSVMLowRank` (rank cap ``--rank``);
                 the final model is libsvm's SVC with the learned (sigma, C); the accuracy of
                 the low-rank L2-SVM itself (Nystroem features) is reported too.
  span_lowrank, radius_margin_lowrank
                 the smoothed-span and radius-margin searches on the same Nystroem kernel
                 (``svmtune.methods.span_lowrank``, ``...radius_margin_lowrank``), reported
                 like rbsvm_lowrank.
  esdr, dbtc, j4, ld
                 the data criteria (:mod:`svmtune.methods.esdr`,
                 :mod:`svmtune.methods.ld`): sigma maximising the index, C fixed at 1
                 (``c_search="fixed"``: their C search is a CV grid of its own); the pair
                 statistics are a full histogram pass in O(n) memory, or with ``--max-pairs``
                 a histogram of that many random pairs with the index's standard error.
                 Their numba loops (and S&S's, where it uses them: up to its exact-path
                 size) are compiled, or loaded from numba's disk cache, before the clock
                 starts (``svmtune.criteria._pairloops.warm_up``).
  ss             S&S-RB (:mod:`svmtune.methods.ss_ratio`): width and C from the S&S ratio
                 (random Fourier features above its exact-path size).
  auto           svmtune's default method (:mod:`svmtune.methods.auto`): above its
                 ``max_dense`` rows, the low-rank path (rank cap ``--rank``) and libsvm's SVC.
  grid           the paper's 10-fold grid search (17 x 17 log2 grid, 2,890 SVC fits); run in
                 full for n <= --max-grid-n, otherwise **extrapolated**: ``--grid-sample``
                 random grid points are cross-validated (10 folds each) and the time is scaled
                 by 289 / grid-sample (``"extrapolated": true`` in the JSON; no accuracy).

Run with one BLAS thread (``OMP_NUM_THREADS=1``, or ``OPENBLAS_NUM_THREADS=1`` for
OpenBLAS; each cell records ``blas_threads``) and ``nice -n 10`` on a shared machine, e.g.::

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/scaling.py --dataset ijcnn1 \\
        --sizes 1000,5000,49990 --methods default,rbsvm_lowrank,rbsvm,grid
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

DATASETS = {"ijcnn1": ("ijcnn1_train", "ijcnn1_test"), "skin_nonskin": ("skin_nonskin", None)}
LOWRANK = ("rbsvm_lowrank", "span_lowrank", "radius_margin_lowrank")
CRITERIA = ("esdr", "dbtc", "j4", "ld", "ss")
METHODS = ("default", "rbsvm", *LOWRANK, *CRITERIA, "grid", "auto")


def _blas_threads() -> int | None:
    """Threads of the BLAS libraries loaded in this process (threadpoolctl), the largest."""
    from threadpoolctl import threadpool_info

    counts = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
    return max(counts) if counts else None


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _load(dataset: str, n: int, *, return_index: bool = False):
    """Standardised ``(X, y, X_test, y_test)`` of the first ``n`` rows of the stratified
    order; with ``return_index`` also those rows' positions in the training file."""
    from svmtune.datasets import load_dataset

    train_name, test_name = DATASETS[dataset]
    Xdf, y, _ = load_dataset(train_name)
    Xall = Xdf.to_numpy(dtype=float)
    classes = np.unique(y)
    yall = (y == classes[-1]).astype(int)
    order = _stratified_order(yall)
    if test_name is not None:
        Xt_df, yt, _ = load_dataset(test_name)
        Xt, ytt = Xt_df.to_numpy(dtype=float), (yt == classes[-1]).astype(int)
    else:
        rest = order[n:]
        rng = np.random.RandomState(1)
        pick = rng.choice(rest, min(20_000, rest.size), replace=False)
        Xt, ytt = Xall[pick], yall[pick]
    idx = order[:n]
    X, yy = Xall[idx], yall[idx]
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd[sd == 0] = 1.0
    out = ((X - mu) / sd, yy, (Xt - mu) / sd, ytt)
    return (*out, idx) if return_index else out


def _stratified_order(y: np.ndarray) -> np.ndarray:
    """A shuffle (random_state=0) whose every prefix keeps the class proportions."""
    rng = np.random.RandomState(0)
    keys = np.empty(y.shape[0])
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        keys[idx] = (rng.permutation(idx.size) + rng.uniform(size=idx.size)) / idx.size
    return np.argsort(keys, kind="stable")


def run_cell(dataset: str, n: int, method: str, args) -> dict:
    from sklearn.svm import SVC

    from svmtune.kernels import squared_distances
    from svmtune.lowrank import fit_tasks_lowrank, pivoted_cholesky_landmarks
    from svmtune.methods.base import get_selector
    from svmtune.methods.baselines import GridSearch, log2_grid
    from svmtune.methods.rbsvm import RBSVM
    from svmtune.search.cv import cv_errors, make_folds

    # the numba loops the cell will use, compiled / loaded before the clock starts (only
    # those: loading takes memory); ss uses its compiled class sums up to its exact-path size
    if method in CRITERIA and (method != "ss" or n <= get_selector("ss").max_exact):
        from svmtune.criteria._pairloops import warm_up

        warm_up(histogram=method != "ss", rbf=method == "ss")
    X, y, Xt, yt = _load(dataset, n)
    base_rss = _maxrss_mb()
    rec: dict = {
        "dataset": dataset,
        "n": int(n),
        "d": int(X.shape[1]),
        "method": method,
        "n_test": int(yt.size),
        "extrapolated": False,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "blas_threads": _blas_threads(),
        "log2_C_box": list(args.log2_C),
        "tag": args.tag,
    }
    if method in ("rbsvm", "rbsvm_lowrank"):
        rec["nonsupport"] = args.nonsupport
    t0 = time.perf_counter()
    c0 = time.process_time()
    params = None
    if method == "default":
        rec["selection_time_s"] = 0.0
        svc_params = {}
    elif method in ("rbsvm", "auto") or method in LOWRANK or method in CRITERIA:
        if method == "auto":
            sel = get_selector("auto", {"rank": args.rank})
        elif method == "rbsvm":
            sel = RBSVM(log2_C=args.log2_C, max_iter=args.max_iter, nonsupport=args.nonsupport)
        elif method in LOWRANK:
            opts = {"log2_C": args.log2_C, "max_iter": args.max_iter}
            if method == "rbsvm_lowrank":
                opts["nonsupport"] = args.nonsupport
            sel = get_selector(method, dict(opts, rank=args.rank, rank_tol=args.rank_tol))
        elif method == "ss":
            sel = get_selector("ss")
        else:
            sel = get_selector(method, {"c_search": "fixed", "max_pairs": args.max_pairs})
        with warnings.catch_warnings(record=True) as wlist:
            warnings.simplefilter("always")
            s = sel.select(X, y, random_state=0)
        rec["selection_time_s"] = time.perf_counter() - t0
        rec["selection_cpu_s"] = time.process_time() - c0
        rec["peak_rss_selection_mb"] = _maxrss_mb()  # before any refit / prediction
        rec["warnings"] = sorted({str(w.message)[:160] for w in wlist})
        params = s.params
        rec.update(
            params={k: v for k, v in params.items()},
            estimate=s.estimate,
            criterion=s.criterion,
            n_svm_fits=s.n_svm_fits,
            info={
                k: v
                for k, v in s.info.items()
                if isinstance(v, (int, float, str, bool, list)) and k != "history"
            },
        )
        svc_params = {"C": params["C"], "gamma": params["gamma"]}
        if method in LOWRANK:
            t1 = time.perf_counter()
            idx, _ = pivoted_cholesky_landmarks(  # the selection's final landmarks
                X,
                s.info["landmark_sigma"],
                tol=args.rank_tol,
                max_rank=args.rank,
                min_rank=s.info["rank"],
            )
            D2_nm = squared_distances(X, X[idx])
            theta = np.log([params["sigma"], params["C"]])
            _, nf, (sol,) = fit_tasks_lowrank(
                D2_nm, D2_nm[idx], [np.where(y == 1, 1.0, -1.0)], theta
            )
            S = sol.support
            beta = sol.y[S] * sol.alpha[S]
            if yt.size:  # skin_nonskin at full n has no held-out rows
                f = nf.features(Xt, X[idx]) @ (nf.Z[S].T @ beta) + sol.b
                rec["test_accuracy_lowrank_l2"] = float(np.mean((f > 0).astype(int) == yt))
            rec["lowrank_l2_fit_time_s"] = time.perf_counter() - t1
    elif method == "grid":
        grid = GridSearch()
        if n <= args.max_grid_n:
            s = grid.select(X, y, random_state=0, n_jobs=1)
            rec["selection_time_s"] = time.perf_counter() - t0
            params = s.params
            rec.update(params=params, estimate=s.estimate, n_svm_fits=s.n_svm_fits)
            svc_params = {"C": params["C"], "gamma": params["gamma"]}
        else:
            sig, Cs = log2_grid(-8, 8, 1), log2_grid(-8, 8, 1)
            cands = [{"kernel": "rbf", "sigma": a, "C": c} for a in sig for c in Cs]
            rng = np.random.RandomState(0)
            pick = rng.choice(len(cands), args.grid_sample, replace=False)
            folds = make_folds(y, 10, random_state=0)
            cv_errors(X, y, [cands[i] for i in pick], folds=folds, n_jobs=1)
            t = time.perf_counter() - t0
            rec.update(
                selection_time_s=t * len(cands) / args.grid_sample,
                extrapolated=True,
                measured_time_s=t,
                measured_candidates=int(args.grid_sample),
                n_svm_fits=len(cands) * len(folds),
            )
            svc_params = None
    else:
        raise ValueError(f"unknown method {method!r}")
    rec.setdefault("selection_cpu_s", time.process_time() - c0)
    rec.setdefault("peak_rss_selection_mb", _maxrss_mb())
    if svc_params is not None and yt.size and not (args.skip_svc and method != "default"):
        t1 = time.perf_counter()
        svc = SVC(**svc_params).fit(X, y)
        rec["final_fit_time_s"] = time.perf_counter() - t1
        rec["test_accuracy"] = float(np.mean(svc.predict(Xt) == yt))
    rec["baseline_rss_mb"] = base_rss
    rec["peak_rss_mb"] = _maxrss_mb()
    return rec


def plot(out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [json.loads(p.read_text()) for p in sorted(out.glob("*_n*_*.json"))]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ds in sorted({r["dataset"] for r in rows}):
        variants = sorted({(r["method"], r.get("tag", "")) for r in rows if r["dataset"] == ds})
        for m, tag in variants:
            rs = sorted(
                (
                    r
                    for r in rows
                    if r["dataset"] == ds and r["method"] == m and r.get("tag", "") == tag
                ),
                key=lambda r: r["n"],
            )
            if m == "default":
                continue
            ns = [r["n"] for r in rs]
            ts = [r["selection_time_s"] for r in rs]
            ex = [r["extrapolated"] for r in rs]
            label = f"{ds} {m}{tag}"
            line = axes[0].plot(ns, ts, marker="o", label=label)[0]
            for x_, t_, e_ in zip(ns, ts, ex):
                if e_:
                    axes[0].plot([x_], [t_], marker="x", ms=10, color=line.get_color())
            axes[1].plot(ns, [r["peak_rss_mb"] for r in rs], marker="o", label=label)
    axes[0].set(
        xscale="log",
        yscale="log",
        xlabel="n",
        ylabel="selection time [s]",
        title="selection time (x = extrapolated)",
    )
    axes[1].set(
        xscale="log",
        yscale="log",
        xlabel="n",
        ylabel="peak RSS [MB]",
        title="peak resident memory of the cell",
    )
    for a in axes:
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    fig.tight_layout()
    path = out / "scaling.png"
    fig.savefig(path, dpi=110)
    return path


def _pair(text: str) -> tuple[float, float]:
    lo, hi = (float(v) for v in text.split(","))
    return lo, hi


def _extra_args(args) -> list[str]:
    out = [f"--log2-C={args.log2_C[0]},{args.log2_C[1]}", "--max-iter", str(args.max_iter)]
    out += ["--nonsupport", args.nonsupport]
    if args.skip_svc:
        out.append("--skip-svc")
    if args.max_pairs:
        out += ["--max-pairs", str(args.max_pairs)]
    if args.tag:
        out += ["--tag", args.tag]
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", choices=sorted(DATASETS), default="ijcnn1")
    ap.add_argument("--sizes", default="1000,2000,5000")
    ap.add_argument("--methods", default="default,rbsvm_lowrank,rbsvm,grid")
    ap.add_argument("--out", default="benchmarks/results/scaling")
    ap.add_argument("--rank", type=int, default=500)
    ap.add_argument("--rank-tol", type=float, default=1e-2)
    ap.add_argument("--max-exact-n", type=int, default=5000)
    ap.add_argument("--max-grid-n", type=int, default=0)
    ap.add_argument("--grid-sample", type=int, default=6)
    ap.add_argument("--log2-C", type=_pair, default=(-8.0, 8.0), help="RBSVM box for log2 C")
    ap.add_argument("--max-iter", type=int, default=100, help="RBSVM L-BFGS-B iterations")
    ap.add_argument(
        "--nonsupport",
        choices=("model", "label"),
        default="model",
        help="rbsvm, rbsvm_lowrank: a non-support vector's LOO output in J (model or label)",
    )
    ap.add_argument("--skip-svc", action="store_true", help="no libsvm refit after selection")
    ap.add_argument("--max-pairs", type=int, default=None, help="esdr/dbtc/j4/ld: pairs subsampled")
    ap.add_argument("--tag", default="", help="suffix of the JSON file names (variants)")
    ap.add_argument("--force", action="store_true", help="re-run cells whose JSON exists")
    ap.add_argument("--plot", action="store_true", help="only redraw scaling.png")
    ap.add_argument("--cell", nargs=3, metavar=("DATASET", "N", "METHOD"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.cell:
        ds, n, m = args.cell[0], int(args.cell[1]), args.cell[2]
        rec = run_cell(ds, n, m, args)
        (out / f"{ds}_n{n}_{m}{args.tag}.json").write_text(json.dumps(rec, indent=1, default=float))
        print(
            json.dumps(
                {
                    k: rec.get(k)
                    for k in (
                        "dataset",
                        "n",
                        "method",
                        "selection_time_s",
                        "peak_rss_mb",
                        "test_accuracy",
                        "params",
                        "extrapolated",
                    )
                },
                default=float,
            ),
            flush=True,
        )
        return
    if not args.plot:
        for n in (int(s) for s in args.sizes.split(",")):
            for m in args.methods.split(","):
                if m not in METHODS:
                    raise SystemExit(f"unknown method {m!r}; choose from {METHODS}")
                if m == "rbsvm" and n > args.max_exact_n:
                    continue
                path = out / f"{args.dataset}_n{n}_{m}{args.tag}.json"
                if path.exists() and not args.force:
                    continue
                cmd = [
                    sys.executable,
                    __file__,
                    "--cell",
                    args.dataset,
                    str(n),
                    m,
                    "--out",
                    str(out),
                    "--rank",
                    str(args.rank),
                    "--rank-tol",
                    str(args.rank_tol),
                    "--max-grid-n",
                    str(args.max_grid_n),
                    "--grid-sample",
                    str(args.grid_sample),
                    *_extra_args(args),
                ]
                subprocess.run(cmd, check=False)
    print(plot(out))


if __name__ == "__main__":
    main()
