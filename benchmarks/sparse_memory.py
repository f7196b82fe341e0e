"""Peak memory of a selection on a large sparse matrix (issue #48, item 3).

A text-like 20,000 x 100,000 CSR matrix of density 0.001 (about 100 non-zeros per row,
2,000,000 in all, 24 MB as CSR against 16 GB as a dense float64 array) is built from a fixed
seed with two classes that differ in the frequency of a block of "words"; ``SVMTuner`` selects
with ``--method`` and fits the final SVM, all on the sparse matrix.  The peak resident memory
of the process (``resource.getrusage``'s ``ru_maxrss``) is reported beside the dense size.

    python benchmarks/sparse_memory.py --method default
    python benchmarks/sparse_memory.py --method halving --n 20000
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np
import scipy.sparse as sp


def text_like(n: int, d: int, density: float, seed: int = 0):
    """Sparse counts: every row ``density * d`` words drawn from a Zipf-like vocabulary;
    class 1 draws a quarter of its words from a block of 500 words of its own."""
    rng = np.random.default_rng(seed)
    per_row = max(1, int(round(density * d)))
    y = (rng.random(n) < 0.5).astype(int)
    p = 1.0 / np.arange(1, d + 1) ** 0.8
    p /= p.sum()
    cols = rng.choice(d, size=(n, per_row), p=p)
    own = rng.integers(d - 500, d, size=(n, per_row))
    mark = (rng.random((n, per_row)) < 0.25) & (y[:, None] == 1)
    cols = np.where(mark, own, cols)
    rows = np.repeat(np.arange(n), per_row)
    X = sp.csr_matrix((np.ones(n * per_row), (rows, cols.ravel())), shape=(n, d))
    X.sum_duplicates()
    X.data = np.log1p(X.data)  # tf-like values
    return X, y


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--method", default="default")
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--d", type=int, default=100_000)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--params", default="{}", help="method_params as JSON")
    args = ap.parse_args()

    from svmtune import SVMTuner

    t0 = time.perf_counter()
    X, y = text_like(args.n, args.d, args.density)
    built = time.perf_counter() - t0
    rss_data = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB (Linux: KiB)
    params = json.loads(args.params) or None
    t0 = time.perf_counter()
    tuner = SVMTuner(method=args.method, method_params=params, random_state=0).fit(X, y)
    fit = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    csr = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20
    dense = args.n * args.d * 8 / 2**20
    print(
        json.dumps(
            {
                "method": args.method,
                "method_params": params,
                "shape": list(X.shape),
                "nnz": int(X.nnz),
                "csr_MiB": round(csr, 1),
                "dense_float64_MiB": round(dense, 1),
                "peak_rss_after_data_MiB": round(rss_data, 1),
                "peak_rss_MiB": round(peak, 1),
                "build_s": round(built, 1),
                "fit_s": round(fit, 1),
                "best_params": tuner.best_params_,
                "n_svm_fits": tuner.n_svm_fits_,
                "training_accuracy_first_2000_rows": float(tuner.score(X[:2000], y[:2000])),
                "still_sparse": bool(sp.issparse(tuner.preprocessor_.transform(X[:5]))),
            },
            default=float,
        )
    )


if __name__ == "__main__":
    main()
