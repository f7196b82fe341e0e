"""The exact L2-SVM final model (``L2SVC``) at large n: whole kernel matrix vs kernel by columns.

``L2SVC`` trains on the whole ``n x n`` kernel up to ``FULL_KERNEL_MAX_N`` points and above
that on a kernel computed by columns from a libsvm start
(:meth:`svmtune.kernels.KernelColumns.of`).  This script fits both ways on the first ``n``
points of ijcnn1's training file (the stratified order and standardisation of
``benchmarks/scaling.py``) at one ``(sigma, C)``, each fit in its own process, and prints
process CPU seconds, peak resident memory, support vectors, the largest difference between
the two models' decision values on the test file, the test accuracy (official ijcnn1 test
file) and, measured in the same process, the CPU time and test accuracy of libsvm's ``SVC``
at the same ``(sigma, C)`` and of ``SVC()``.  Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_l2svc_large.py \\
        --sizes 2000 5000 10000 20000 49990 --full-max 20000 --sigma 6.152 --C 256
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _decision_file(n: int, path: str) -> Path:
    return Path(tempfile.gettempdir()) / f"svmtune_l2svc_decision_{n}_{path}.npy"


def _versions() -> dict[str, str]:
    """sha256 of the bundled ijcnn1 files (the data versions the benchmark rows record)."""
    from svmtune.datasets.registry import dataset_path, file_sha256

    return {name: file_sha256(dataset_path(name)) for name in ("ijcnn1_train", "ijcnn1_test")}


def run_one(n: int, path: str, sigma: float, C: float) -> dict:
    """Fit in this process; returns the measurements (and the test decision values' file)."""
    sys.path.insert(0, str(HERE))
    from scaling import _load
    from sklearn.svm import SVC

    import svmtune.estimators as est
    from svmtune.kernels import gamma_from_sigma

    X, y, Xt, yt = _load("ijcnn1", n)
    est.FULL_KERNEL_MAX_N = n if path == "full" else 0
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    c0 = time.process_time()
    clf = est.L2SVC(C=C, sigma=sigma).fit(X, y)
    fit_cpu = time.process_time() - c0
    rss_fit = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    F = clf.decision_function(Xt)
    acc = float(np.mean((F > 0).astype(int) == yt))
    c0 = time.process_time()
    svc = SVC(C=C, gamma=gamma_from_sigma(sigma), cache_size=1000).fit(X, y)
    svc_cpu = time.process_time() - c0
    c0 = time.process_time()
    default = SVC().fit(X, y)
    default_cpu = time.process_time() - c0
    np.save(_decision_file(n, path), F)
    return {
        "n": n,
        "path": path,
        "sigma": sigma,
        "C": C,
        "fit_cpu_s": fit_cpu,
        "peak_mb_fit": rss_fit,
        "peak_mb_before": rss0,
        "n_sv": int(clf.support_.size),
        "test_acc": acc,
        "svc_cpu_s": svc_cpu,
        "svc_test_acc": float(svc.score(Xt, yt)),
        "default_cpu_s": default_cpu,
        "default_test_acc": float(default.score(Xt, yt)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000, 10000])
    ap.add_argument("--full-max", type=int, default=20000, help="largest n for the whole matrix")
    ap.add_argument("--sigma", type=float, default=6.152)
    ap.add_argument("--C", type=float, default=256.0)
    ap.add_argument("--out", default=str(HERE / "results" / "l2svc_large"))
    ap.add_argument("--one", nargs=2, metavar=("N", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        rec = run_one(int(args.one[0]), args.one[1], args.sigma, args.C)
        print(json.dumps(rec))
        return
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = [
        "# L2SVC at large n: whole kernel matrix vs kernel by columns (ijcnn1)",
        "",
        f"`{' '.join(['python', 'benchmarks/bench_l2svc_large.py', *sys.argv[1:]])}`; "
        f"machine: {platform.platform()}, {os.cpu_count()} cores, python "
        f"{platform.python_version()}; BLAS threads: {os.environ.get('OPENBLAS_NUM_THREADS')}; "
        f"(sigma, C) = ({args.sigma}, {args.C}); test file: ijcnn1_test (91,701 rows). "
        "CPU s = process CPU time of the fit; peak MB = the process's peak resident memory "
        "after the fit (the data files loaded: about 250 MB); max abs d f = largest "
        "difference of the two paths' decision values on the test file.",
        "",
        "| n | path | L2SVC fit CPU s | peak MB | n_sv | test acc. | max abs d f (test) "
        "| SVC same (sigma, C): CPU s / acc. | SVC(): CPU s / acc. |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    with open(out_dir / "l2svc_large.jsonl", "w") as fh:
        for n in args.sizes:
            paths = ("full", "columns") if n <= args.full_max else ("columns",)
            recs = {}
            for path in paths:
                cmd = [sys.executable, __file__, "--one", str(n), path]
                cmd += ["--sigma", str(args.sigma), "--C", str(args.C)]
                res = subprocess.run(cmd, capture_output=True, text=True, check=True)
                recs[path] = json.loads(res.stdout.strip().splitlines()[-1])
            dec = {p: np.load(_decision_file(n, p)) for p in paths}
            diff = np.max(np.abs(dec["full"] - dec["columns"])) if len(paths) == 2 else np.nan
            for path, r in recs.items():
                r["max_abs_decision_diff"] = None if np.isnan(diff) else float(diff)
                r["machine"] = platform.platform()
                r["dataset_versions"] = _versions()
                fh.write(json.dumps(r) + "\n")
                fh.flush()
                line = (
                    f"| {n} | {path} | {r['fit_cpu_s']:.2f} | {r['peak_mb_fit']:.0f} "
                    f"| {r['n_sv']} | {r['test_acc']:.4f} | {diff:.1e} | {r['svc_cpu_s']:.2f} / "
                    f"{r['svc_test_acc']:.4f} | {r['default_cpu_s']:.2f} / "
                    f"{r['default_test_acc']:.4f} |"
                )
                lines.append(line)
                print(line, flush=True)
    (out_dir / "l2svc_large.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
