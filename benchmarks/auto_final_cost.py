"""How well counts predict the cost of libsvm's final fit at auto's chosen point.

For every auto cell of ``benchmarks/results/scaling_auto`` from 2,000 rows (the latest row of
each), fits scikit-learn's ``SVC`` at the chosen ``(gamma, C)`` and ``SVC()`` on all the
cell's standardised training rows and prints the measured time ratio beside three
predictions from fits on a random eighth of the rows (at least 1,000): the ratio of libsvm
iterations, of support vectors, and of the count auto uses
(:func:`svmtune.methods._auto_final.libsvm_cost_ratio`: a kernel column of ``d + 8``
flop-equivalents per entry for each support vector plus one gradient update per iteration).
One BLAS thread, a quiet machine::

    OMP_NUM_THREADS=1 python benchmarks/auto_final_cost.py > benchmarks/results/auto_final_cost.txt
"""

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import scaling_auto as sa  # noqa: E402

warnings.simplefilter("ignore")
latest = {}
for line in (HERE / "results" / "scaling_auto" / "results.jsonl").open():
    r = json.loads(line)
    if r.get("method") == "auto" and r.get("status") == "ok" and r.get("n_train", 0) >= 2000:
        latest[(r["set"], r["size"], r["seed"])] = r
print("set n actual iterations support_vectors counted")
for r in latest.values():
    X, y, _, _, _ = sa.cell_data(r["set"], str(r["size"]), r["seed"])
    Xs = StandardScaler().fit_transform(X)
    n, d = Xs.shape
    sub = np.random.RandomState(0).choice(n, max(n // 8, min(n, 1000)), replace=False)
    p = r["params"]
    a = SVC(C=p["C"], gamma=p["gamma"]).fit(Xs[sub], y[sub])
    b = SVC().fit(Xs[sub], y[sub])
    it = a.n_iter_.sum() / b.n_iter_.sum()
    sv = a.n_support_.sum() / b.n_support_.sum()
    counted = (a.n_support_.sum() * (d + 8) + a.n_iter_.sum()) / (
        b.n_support_.sum() * (d + 8) + b.n_iter_.sum()
    )
    t0 = time.perf_counter()
    SVC(C=p["C"], gamma=p["gamma"]).fit(Xs, y)
    t_final = time.perf_counter() - t0
    t0 = time.perf_counter()
    SVC().fit(Xs, y)
    t_svc = time.perf_counter() - t0
    print(f"{r['set']} {n} {t_final / t_svc:.2f} {it:.2f} {sv:.2f} {counted:.2f}", flush=True)
