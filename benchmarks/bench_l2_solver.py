"""Speed of the exact L2-SVM solver against libsvm on the same problem.

The L2-SVM is the hard-margin SVM on H = K + I/C (RBSVM eq. (7)); libsvm solves it as
``SVC(kernel="precomputed", C=huge)`` on H.  Both are timed on the same kernel matrix, in the
same run, and the agreement of their dual solutions is printed.  Usage::

    python benchmarks/bench_l2_solver.py [--sizes 200 500 1000 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from sklearn.svm import SVC

from svmtune.kernels import Kernel
from svmtune.svm import fit_l2_svm


def best_time(fn, repeats):
    out, best = None, np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 500, 1000, 2000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--C", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"machine: {platform.platform()}, python {platform.python_version()}")
    print(
        f"{'n':>6} {'n_sv':>6} {'l2 exact [s]':>13} {'libsvm [s]':>11} {'ratio':>7} "
        f"{'max|da|':>9} {'warm [s]':>9}"
    )
    for n in args.sizes:
        X = rng.normal(size=(n, 10))
        y = np.where(X[:, 0] + 0.5 * np.sin(3 * X[:, 1]) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
        K = Kernel("rbf", sigma=np.sqrt(10.0))(X)
        H = K + np.eye(n) / args.C
        t_l2, sol = best_time(lambda K=K, y=y: fit_l2_svm(K, y, args.C), args.repeats)
        t_warm, _ = best_time(
            lambda K=K, y=y, s=sol: fit_l2_svm(K, y, args.C * 1.1, init_support=s.support),
            args.repeats,
        )
        t_svc, svc = best_time(
            lambda H=H, y=y: SVC(kernel="precomputed", C=1e8, tol=1e-6).fit(H, y), args.repeats
        )
        a = np.zeros(n)
        a[svc.support_] = np.abs(svc.dual_coef_[0])
        print(
            f"{n:>6} {int(sol.support.sum()):>6} {t_l2:>13.4f} {t_svc:>11.4f} "
            f"{t_l2 / t_svc:>7.2f} {np.abs(a - sol.alpha).max():>9.1e} {t_warm:>9.4f}"
        )


if __name__ == "__main__":
    main()
