"""Probe the low-rank RBSVM criterion at given (sigma, C) points.

For every point the landmarks are re-chosen by pivoted Cholesky *at that point's width*
(``--rank`` landmarks at most, trace residual ``--rank-tol``), so no point is favoured by
landmarks chosen at another width; the line records the rank reached and its residual (a
residual far above ``--rank-tol`` means the rank cap, not the tolerance, stopped the
factorisation: the criterion there is that of a coarser model).  Per point: ``J / n``
(RBSVM eq. (33), cross-entropy), the closed-form LOO error rate of the low-rank L2-SVM, its
number of support vectors, with ``--exact`` the same numbers for the exact L2-SVM (the
``n x n`` kernel matrix, 8 n^2 bytes: 3.2 GB at n = 20,000; its active set warm-started
from the low-rank support set), and with ``--test`` the test accuracy of libsvm's
``SVC`` refitted at the point (the scaling benchmark's final model).

Data as in ``benchmarks/scaling.py`` (same subsample, standardisation and test set).  One JSON
line per point is appended to ``<out>/probe_<dataset>_n<n><tag>.jsonl``, e.g.::

    OMP_NUM_THREADS=1 python benchmarks/lowrank_probe.py --dataset ijcnn1 --n 49990 \\
        --rank 3000 --rank-tol 1e-3 --points 3.32,1 3.32,16 3.32,256 4.74,256 6.15,256
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from scaling import DATASETS, _load


def _point(text: str) -> tuple[float, float]:
    try:
        sigma, C = (float(v) for v in text.split(","))
    except ValueError:
        msg = f"a point is 'sigma,C', e.g. 3.32,1; got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not (sigma > 0 and C > 0):
        raise argparse.ArgumentTypeError(f"sigma and C must be positive, got {text!r}")
    return sigma, C


def probe(X, y, sigma: float, C: float, *, rank: int, rank_tol: float) -> tuple[dict, np.ndarray]:
    """Low-rank RBSVM criterion at (sigma, C), landmarks chosen at ``sigma``; returns the
    record and the support set (the warm start of :func:`probe_exact`)."""
    from svmtune.kernels import squared_distances
    from svmtune.loo.rbsvm_lowrank import lowrank_rbsvm_objective
    from svmtune.lowrank import pivoted_cholesky_landmarks

    t = np.where(y == 1, 1.0, -1.0)
    t0 = time.perf_counter()
    idx, resid = pivoted_cholesky_landmarks(X, sigma, tol=rank_tol, max_rank=rank)
    D2_nm = squared_distances(X, X[idx])
    obj = lowrank_rbsvm_objective(D2_nm, D2_nm[idx], [t], np.log([sigma, C]), gradient=False)
    rec = {
        "sigma": sigma,
        "C": C,
        "rank": int(idx.size),
        "rank_residual": float(resid),
        "J_over_n": obj.value / y.size,
        "loo_error": float(np.mean(t * obj.loo[0] <= 0)),
        "n_support": obj.n_support,
        "probe_time_s": time.perf_counter() - t0,
    }
    return rec, obj.supports[0]


def probe_exact(X, y, sigma: float, C: float, *, init_support=None) -> dict:
    """Exact RBSVM criterion at (sigma, C): L2-SVM on the full kernel matrix, eq. (27)."""
    from svmtune._loo_losses import loo_loss
    from svmtune.kernels import squared_distances
    from svmtune.loo.closed_form import closed_form_loo
    from svmtune.svm import fit_l2_svm

    t = np.where(y == 1, 1.0, -1.0)
    t0 = time.perf_counter()
    K = squared_distances(X)
    K *= -1.0 / (2.0 * sigma**2)
    np.exp(K, out=K)
    sol = fit_l2_svm(K, t, C, init_support=init_support)
    r = closed_form_loo(sol, K)
    return {
        "exact_J_over_n": float(np.sum(loo_loss(t, r)[0]) / y.size),
        "exact_loo_error": float(np.mean(t * r <= 0)),
        "exact_n_support": int(sol.support.sum()),
        "exact_time_s": time.perf_counter() - t0,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", choices=sorted(DATASETS), default="ijcnn1")
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--points", type=_point, nargs="+", required=True, metavar="SIGMA,C")
    ap.add_argument("--rank", type=int, default=3000)
    ap.add_argument("--rank-tol", type=float, default=1e-3)
    ap.add_argument("--test", action="store_true", help="also refit SVC and score the test set")
    ap.add_argument("--exact", action="store_true", help="also the exact (n x n) criterion")
    ap.add_argument("--out", default="benchmarks/results/scaling")
    ap.add_argument("--tag", default="")
    args = ap.parse_args(argv)
    X, y, Xt, yt = _load(args.dataset, args.n)
    path = Path(args.out) / f"probe_{args.dataset}_n{args.n}{args.tag}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    for sigma, C in args.points:
        rec = {"dataset": args.dataset, "n": args.n, "rank_cap": args.rank}
        lowrank, support = probe(X, y, sigma, C, rank=args.rank, rank_tol=args.rank_tol)
        rec.update(lowrank)
        if args.exact:
            rec.update(probe_exact(X, y, sigma, C, init_support=support))
        if args.test:
            from sklearn.svm import SVC

            t0 = time.perf_counter()
            svc = SVC(C=C, gamma=1.0 / (2.0 * sigma**2)).fit(X, y)
            rec["test_accuracy"] = float(svc.score(Xt, yt))
            rec["svc_time_s"] = time.perf_counter() - t0
        rec["omp_num_threads"] = os.environ.get("OMP_NUM_THREADS")
        with path.open("a") as fh:  # one line per point: an interrupted run keeps the rest
            fh.write(json.dumps(rec) + "\n")
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
