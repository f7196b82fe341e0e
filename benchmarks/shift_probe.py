"""Does a data set's official test file come from its training file's distribution?

The large-n benchmark judges RBSVM on ijcnn1's official test file, while every selection
method (RBSVM's leave-one-out criterion, grid search's cross-validation) can only see the
training file.  This script measures how far the two files differ and whether they rank
hyperparameters the same way:

1. **Two-sample classifier test.**  A gradient-boosted classifier learns to tell training-file
   rows from test-file rows (equal-sized random subsamples, both standardised with the training
   file's mean and sd as in ``benchmarks/scaling.py``); its 5-fold ROC AUC is 0.5 when the
   files share one distribution and near 1 when they are easy to tell apart.  Overall, within
   each class, and for each feature alone (the features with the highest AUC are listed).
2. **Cross-validation vs test file.**  At each given (sigma, C), libsvm's ``SVC``'s 5-fold CV
   accuracy on the training file with shuffled folds (the suites' protocol; leave-one-out is its
   limit) and with contiguous blocks of the file as folds (where the row order carries
   information, a shuffled fold's rows have their file neighbours in the training part),
   beside the test-file accuracy of the SVC trained on the whole training file.

One JSON file ``<out>/shift_<dataset>_n<n>.json``, e.g.::

    OMP_NUM_THREADS=1 python benchmarks/shift_probe.py --dataset ijcnn1 --n 49990 \\
        --points 3.32,1 3.32,16 3.32,256 6.15,256 7.25,256
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from lowrank_probe import _point
from scaling import DATASETS, _load


def two_sample_auc(A: np.ndarray, B: np.ndarray, *, m: int, random_state: int = 0) -> dict:
    """5-fold ROC AUC of a classifier telling rows of ``A`` from rows of ``B``.

    ``min(m, len(A), len(B))`` rows are drawn from each without replacement, so the two groups
    have equal size and 0.5 is the AUC of indistinguishable groups.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    # a generator of its own kind: a RandomState(random_state) permutation here would repeat
    # the fold shuffle of StratifiedKFold(random_state=random_state) below, making the folds
    # of a file's rows contiguous stretches of ``A`` instead of random
    rng = np.random.default_rng(random_state)
    k = min(m, len(A), len(B))
    a, b = rng.choice(len(A), k, replace=False), rng.choice(len(B), k, replace=False)
    Z = np.vstack([A[a], B[b]])
    s = np.r_[np.zeros(k), np.ones(k)]
    auc = cross_val_score(
        HistGradientBoostingClassifier(random_state=random_state),
        Z,
        s,
        cv=StratifiedKFold(5, shuffle=True, random_state=random_state),
        scoring="roc_auc",
    )
    return {"n_each": int(k), "auc": float(auc.mean()), "auc_std": float(auc.std())}


def point_scores(X, y, Xt, yt, sigma: float, C: float, *, folds: int = 5, random_state: int = 0):
    """Accuracy of ``SVC(C, gamma = 1 / (2 sigma^2))`` three ways.

    ``X, y`` in the training file's row order.  Returns the mean accuracy of ``folds``-fold CV
    on the training file with shuffled stratified folds (what the suites' CV and a LOO
    estimate see: every held-out row has its file neighbours in the training part), with
    contiguous blocks of the file as folds (no shuffling: each fold is a stretch of the file
    the model has not seen), and the accuracy on the test file of the SVC trained on all of
    ``X``.
    """
    from sklearn.model_selection import KFold, StratifiedKFold
    from sklearn.svm import SVC

    def svc():
        return SVC(C=C, gamma=1.0 / (2.0 * sigma**2), cache_size=1000)

    def cv(splitter) -> list[float]:
        return [svc().fit(X[a], y[a]).score(X[h], y[h]) for a, h in splitter.split(X, y)]

    shuffled = cv(StratifiedKFold(folds, shuffle=True, random_state=random_state))
    blocked = cv(KFold(folds, shuffle=False))
    t0 = time.perf_counter()
    full = svc().fit(X, y)
    fit_s = time.perf_counter() - t0
    return {
        "sigma": sigma,
        "C": C,
        "folds": folds,
        "cv_shuffled": float(np.mean(shuffled)),
        "cv_shuffled_folds": [float(v) for v in shuffled],
        "cv_blocked": float(np.mean(blocked)),
        "cv_blocked_folds": [float(v) for v in blocked],
        "test_accuracy": float(full.score(Xt, yt)),
        "n_support": int(full.n_support_.sum()),
        "fit_s": fit_s,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    with_test = sorted(k for k, (_, test) in DATASETS.items() if test is not None)
    ap.add_argument("--dataset", choices=with_test, default="ijcnn1")
    ap.add_argument("--n", type=int, required=True, help="training rows (scaling.py's subsample)")
    ap.add_argument("--points", type=_point, nargs="*", default=[], metavar="SIGMA,C")
    ap.add_argument("--m", type=int, default=20_000, help="rows per group in the AUC test")
    ap.add_argument("--top", type=int, default=5, help="features listed by their own AUC")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/results/scaling")
    args = ap.parse_args(argv)

    X, y, Xt, yt, pos = _load(args.dataset, args.n, return_index=True)
    # _load's rows follow a stratified shuffle of the file; back to file order for the
    # blocked folds
    file_order = np.argsort(pos)
    X, y = X[file_order], y[file_order]
    rec: dict = {
        "dataset": args.dataset,
        "n": int(len(y)),
        "n_test": int(len(yt)),
        "positive_rate_train": float(y.mean()),
        "positive_rate_test": float(yt.mean()),
        "seed": args.seed,
        "auc": {"all": two_sample_auc(X, Xt, m=args.m, random_state=args.seed)},
    }
    for c in (0, 1):
        rec["auc"][f"class {c}"] = two_sample_auc(
            X[y == c], Xt[yt == c], m=args.m, random_state=args.seed
        )
    per_feature = [
        (j, two_sample_auc(X[:, [j]], Xt[:, [j]], m=args.m, random_state=args.seed)["auc"])
        for j in range(X.shape[1])
    ]
    per_feature.sort(key=lambda p: -p[1])
    rec["feature_auc"] = [
        {"feature": int(j), "auc": a, "mean_shift_sd": float(Xt[:, j].mean() - X[:, j].mean())}
        for j, a in per_feature[: args.top]
    ]
    rec["points"] = []
    for sigma, C in args.points:
        rec["points"].append(point_scores(X, y, Xt, yt, sigma, C, random_state=args.seed))
        print(json.dumps(rec["points"][-1]), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"shift_{args.dataset}_n{args.n}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(rec, indent=1) + "\n")
    tmp.replace(path)
    print(json.dumps({k: rec[k] for k in ("auc", "feature_auc")}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
