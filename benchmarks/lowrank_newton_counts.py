"""Count the Newton solver's work in LowRankL2SVC.fit: the source of lowrank_fit_flops' defaults.

For nine bundled sets (3,000 rows drawn with seed 0, one-hot categories, missing values as 0,
standardised), three RBF widths ``sigma = (0.5, 1, 2) sqrt(d)`` and five ``C`` in
``0.1 ... 1000``, fits :class:`svmtune.estimators_lowrank.LowRankL2SVC` (rank 200, rank_tol
0.01) and records per task the Newton iterations (``n_iter_``) and the rows that built the
active set's Gram matrix, in units of ``n`` (counted by wrapping the solver's private
``_ActiveGram._block``; a cell of several one-vs-rest tasks records their mean).  Writes the
quantiles that :data:`svmtune.estimators_lowrank.NEWTON_ITERATIONS` and
:data:`svmtune.estimators_lowrank.GRAM_PASSES` state to ``lowrank_newton_counts.md``.  Counts,
not seconds: the result does not depend on the machine.

    OMP_NUM_THREADS=1 python benchmarks/lowrank_newton_counts.py
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.preprocessing import StandardScaler

import svmtune.lowrank._solver as solver
from svmtune.datasets import load_dataset
from svmtune.estimators_lowrank import LowRankL2SVC

SETS = [
    "ijcnn1_train",
    "adult_a9a_train",
    "eeg_eye_state",
    "bank_marketing",
    "mnist_1v7_train",
    "ida_banana",
    "ida_twonorm",
    "ida_splice",
    "image_segmentation",
]
N = 3000
WIDTHS = (0.5, 1.0, 2.0)
CS = (0.1, 1.0, 10.0, 100.0, 1000.0)
OUT = Path(__file__).with_suffix(".md")


def _data(name: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X, y = load_dataset(name)[:2]
    X = pd.get_dummies(pd.DataFrame(X), dtype=float).to_numpy(dtype=float)
    sel = rng.choice(X.shape[0], min(N, X.shape[0]), replace=False)
    return StandardScaler().fit_transform(np.nan_to_num(X[sel])), np.asarray(y)[sel]


def main() -> None:
    rows = {"n": 0}
    block = solver._ActiveGram._block

    def counting(self, r):
        rows["n"] += r.size
        return block(self, r)

    solver._ActiveGram._block = counting
    rng = np.random.default_rng(0)
    iterations, passes = [], []
    for name in SETS:
        X, y = _data(name, rng)
        n, d = X.shape
        for width in WIDTHS:
            for C in CS:
                rows["n"] = 0
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = LowRankL2SVC(C=C, sigma=width * np.sqrt(d), rank=200).fit(X, y)
                iterations.extend(est.n_iter_.tolist())
                passes.append(rows["n"] / (n * est.coef_.shape[0]))
    it, gp = np.asarray(iterations, dtype=float), np.asarray(passes)
    q = (0.5, 0.75, 0.9)
    lines = [
        "# Newton work of LowRankL2SVC.fit (benchmarks/lowrank_newton_counts.py)",
        "",
        f"{len(SETS)} sets x {len(WIDTHS)} widths x {len(CS)} C = {gp.size} cells, "
        f"{it.size} tasks; n = {N} (or all rows), rank 200.",
        "",
        "| | median | upper quartile | 90th percentile | most |",
        "|---|---|---|---|---|",
        "| Newton iterations per task | "
        + " | ".join(f"{v:.3g}" for v in np.quantile(it, q))
        + f" | {it.max():.3g} |",
        "| Gram rows per task / n | "
        + " | ".join(f"{v:.3g}" for v in np.quantile(gp, q))
        + f" | {gp.max():.3g} |",
        "",
    ]
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
