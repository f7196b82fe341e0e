"""Methods with unequal sample weights: what each chooses and its test accuracy.

The radius-margin bound of the weighted L2-SVM is taken on ``K + diag(1/(C w_i))``; unequal
weights can pull it to large C and narrow widths (the warning of
:func:`svmtune.methods.gradient_baselines.radius_margin_summary`, README).  This script
measures it: 60 two-class Gaussian training points
(4 features, class means 1.5 apart on the first), 2,000 test points from the same
distribution, 4 draws, six weightings; then bupa (200 training rows, the other 145 the
test set) with per-sample weights spread 1x, 1.1x, 1.5x and 2x.  Usage::

    python benchmarks/rm_weight_spread.py [--methods radius_margin,rbsvm,span]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn.model_selection import train_test_split

from svmtune.datasets import load_dataset
from svmtune.tuner import SVMTuner

WEIGHTINGS = {
    "equal (1x)": lambda rng, y: np.ones(y.size),
    "uniform 0.8-1.25 (1.56x)": lambda rng, y: rng.uniform(0.8, 1.25, y.size),
    "two levels 1 / 1.5 at random (1.5x)": lambda rng, y: np.where(
        rng.uniform(size=y.size) < 0.5, 1.0, 1.5
    ),
    "by class 0.5 / 2 (4x)": lambda rng, y: np.where(y == 1, 2.0, 0.5),
    "0.5 / 2 at random (4x)": lambda rng, y: rng.choice([0.5, 2.0], y.size),
    "uniform 0.5-2 (4x)": lambda rng, y: rng.uniform(0.5, 2.0, y.size),
}


def draw(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    X = rng.normal(size=(n, 4))
    y = rng.integers(0, 2, n)
    X[:, 0] += 1.5 * y
    return X, y


def fit_cell(method: str, X, y, w, Xt, yt, digits: int) -> str:
    """``"sigma, C, test accuracy"`` of ``SVMTuner(method)`` fitted with weights ``w``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = SVMTuner(method=method, random_state=0).fit(X, y, sample_weight=w)
    p = est.best_params_
    return f"{p['sigma']:.2g}, {p['C']:.2g}, {est.score(Xt, yt):.{digits}f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", default="radius_margin,rbsvm,span")
    ap.add_argument("--draws", type=int, default=4)
    args = ap.parse_args()
    X, y, _ = load_dataset("bupa", as_frame=False)
    bupa = train_test_split(
        np.asarray(X, dtype=float), y, train_size=200, random_state=0, stratify=y
    )
    for method in args.methods.split(","):
        print(f"## {method}: sigma, C, test accuracy per draw")
        for name, weights in WEIGHTINGS.items():
            cells = []
            for seed in range(args.draws):
                rng = np.random.default_rng(seed)
                X, y = draw(rng, 60)
                Xt, yt = draw(rng, 2000)
                cells.append(fit_cell(method, X, y, weights(rng, y), Xt, yt, 2))
            print(f"- {name}: " + " | ".join(cells), flush=True)
        Xtr, Xte, ytr, yte = bupa
        cells = []
        for ratio in (1.0, 1.1, 1.5, 2.0):
            w = np.exp(np.random.default_rng(0).uniform(-0.5, 0.5, ytr.size) * np.log(ratio))
            cells.append(f"{ratio}x: " + fit_cell(method, Xtr, ytr, w, Xte, yte, 3))
        print("- bupa: " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
