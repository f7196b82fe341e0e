"""
Comparing methods on your data
==============================

Run several selection methods on the same training rows and compare their test accuracy
with their cost, counted in fits of scikit-learn's ``SVC()`` (the unit the benchmarks use).
Here the data are the bundled ``pima`` set; replace ``load_dataset`` by your own ``X, y``.
On the command line the same comparison, with repeated splits and every method, is
``svmtune bench --suite quick --data mine.csv --target label``.
"""

# sphinx_gallery_start_ignore
# (hidden on the site: print warnings as "Category: message", without file paths)
# ruff: noqa: E402
import warnings

warnings.formatwarning = lambda message, category, *args, **kwargs: (
    f"{category.__name__}: {message}\n"
)
# sphinx_gallery_end_ignore


import time

import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from svmtune import SVMTuner
from svmtune.datasets import load_dataset

X, y, info = load_dataset("pima")
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)

# %%
# The unit of cost: one ``SVC()`` fit on the same (standardised) rows, best of 5.
times = []
for _ in range(5):
    t0 = time.perf_counter()
    make_pipeline(StandardScaler(), SVC()).fit(X_tr, y_tr)
    times.append(time.perf_counter() - t0)
unit = min(times)

# %%
# The methods, from the cheapest to a coarse 5-fold grid search (step 2 in log2 over
# [-8, 8]^2, 81 candidates). ``method_params`` sets a method's options.
methods = {
    "default": {},
    "ss": {},
    "ld_c1": {},
    "rbsvm": {},
    "span": {},
    "auto": {},
    "esdr": {},
    "grid": {"log2_sigma": (-8, 8, 2), "log2_C": (-8, 8, 2), "n_splits": 5},
}
# The data criteria's pair loops are compiled with numba on their first call in a fresh
# process (seconds, once); warm them up on a few rows so that the clock measures selection
# (quietly: their warnings about 60 rows are beside the point).
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name in ("ss", "ld_c1", "esdr"):
        SVMTuner(method=name).fit(X_tr[:60], y_tr[:60])

# A method that warns about these rows says something about its choice (S&S: the classes
# overlap in every candidate feature space, so its C is read beyond the paper's threshold):
# the warnings are kept and printed under the method's line, as part of the comparison.
rows = []
for name, params in methods.items():
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tuner = SVMTuner(method=name, method_params=params, random_state=0).fit(X_tr, y_tr)
    seconds = time.perf_counter() - t0
    cost = seconds / unit
    rows.append((name, tuner.score(X_te, y_te), cost, tuner.best_params_))
    print(
        f"{name:8s} test accuracy {rows[-1][1]:.3f}  {seconds:6.2f} s = {cost:7.1f} SVC() fits  "
        f"sigma {tuner.best_params_.get('sigma', float('nan')):.3g}  "
        f"C {tuner.best_params_.get('C', float('nan')):.3g}"
    )
    for w in caught:
        print(f"         {w.category.__name__}: {str(w.message).split(' (')[0]}")

# %%
# Accuracy against cost. One split of one data set is noisy: a difference of one or two test
# rows is 0.4-0.9 points here, and a time measured once on a busy machine varies too. The
# benchmarks average many sets and splits.
fig, ax = plt.subplots(figsize=(6.5, 4.2))
for name, acc, cost, _ in rows:
    ax.scatter(cost, 100 * acc, s=60)
    ax.annotate(name, (cost, 100 * acc), xytext=(4, 3), textcoords="offset points")
ax.set_xscale("log")
ax.set_xlabel("cost (selection + final fit) / one SVC() fit, log scale")
ax.set_ylabel("test accuracy (%)")
ax.set_title("pima, one 70/30 split")
ax.grid(alpha=0.3)
fig.tight_layout()
plt.show()
