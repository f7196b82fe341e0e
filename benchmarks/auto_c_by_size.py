"""RBSVM's optimum (sigma, C) on stratified subsamples of growing size: how C moves with n.

The evidence behind ``auto``'s rule for carrying C from a subsample to more rows
(:mod:`svmtune.methods._fidelity`, ``docs/notes/auto_fidelity.md``): for each data set, size
and split seed, the exact RBSVM search (30 evaluations, box 2^[-8, 8]) on a stratified
subsample of the standardised rows; one line per run, written to
``benchmarks/results/auto_c_by_size.txt``.

    OMP_NUM_THREADS=1 python benchmarks/auto_c_by_size.py ijcnn1_train adult_a9a_train \\
        eeg_eye_state spambase > benchmarks/results/auto_c_by_size.txt
"""

import sys
import time
import warnings

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from svmtune.datasets import load_dataset
from svmtune.methods import get_selector

warnings.simplefilter("ignore")
for name in sys.argv[1:]:
    X, y, info = load_dataset(name)
    X = StandardScaler().fit_transform(np.asarray(X, float))
    y = np.unique(np.asarray(y), return_inverse=True)[1]
    for s in [250, 500, 1000, 2000]:
        for seed in [0, 1]:
            idx = train_test_split(np.arange(len(y)), train_size=s, stratify=y, random_state=seed)[
                0
            ]
            t = time.perf_counter()
            sel = get_selector("rbsvm", {"max_eval": 30}).select(X[idx], y[idx], random_state=0)
            p, secs = sel.params, time.perf_counter() - t
            print(
                f"{name} {s} {seed} sigma {p['sigma']:.3f} C {p['C']:.3f} "
                f"est {sel.estimate:.4f}  {secs:.1f}s",
                flush=True,
            )
