"""
Large n: the low-rank path
==========================

The exact leave-one-out methods hold n x n kernel matrices; ``rbsvm_lowrank`` runs RBSVM's
search on a Nystroem factor ``K ~ Z Z^T`` of rank m (pivoted-Cholesky landmarks), so that
every step costs O(n m^2) time and O(n m) memory. Here: 12,000 synthetic training rows
(``sklearn.datasets.make_classification``), the low-rank search at two ranks, against
scikit-learn's ``SVC()``.
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
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from svmtune import SVMTuner

X, y = make_classification(
    n_samples=16000,
    n_features=20,
    n_informative=8,
    n_redundant=4,
    flip_y=0.03,
    class_sep=0.8,
    random_state=0,
)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=12000, random_state=0)

# %%
# The yardstick: one ``SVC()`` fit with its defaults.
t0 = time.perf_counter()
svc = make_pipeline(StandardScaler(), SVC()).fit(X_tr, y_tr)
unit = time.perf_counter() - t0
print(f"SVC(): test accuracy {svc.score(X_te, y_te):.4f}, fit {unit:.1f} s")

# %%
# The low-rank RBSVM search at two ranks (``rank`` caps the number of landmarks). The final
# model is libsvm's SVC with the chosen (sigma, C): refitting the exact L2-SVM would need the
# n x n matrix.
results = []
for rank in (100, 300):
    t0 = time.perf_counter()
    tuner = SVMTuner(method="rbsvm_lowrank", method_params={"rank": rank}, random_state=0).fit(
        X_tr, y_tr
    )
    total = time.perf_counter() - t0
    acc = tuner.score(X_te, y_te)
    results.append((rank, acc, total / unit))
    print(
        f"rank {rank}: sigma {tuner.best_params_['sigma']:.3g}, C {tuner.best_params_['C']:.3g}, "
        f"test accuracy {acc:.4f}, selection {tuner.selection_time_:.1f} s, "
        f"cost {total / unit:.1f} SVC() fits, landmarks used: "
        f"{tuner.selection_.info.get('rank', 'n/a')}"
    )

# %%
# Accuracy and cost per rank, beside ``SVC()`` (cost 1 by definition).
fig, ax = plt.subplots(figsize=(6, 4))
ax.scatter([1], [100 * svc.score(X_te, y_te)], c="grey", s=60, label="SVC() defaults")
for rank, acc, cost in results:
    ax.scatter(cost, 100 * acc, s=60, label=f"rbsvm_lowrank, rank {rank}")
ax.set_xscale("log")
ax.set_xlabel("cost (selection + final fit) / one SVC() fit")
ax.set_ylabel("test accuracy (%)")
ax.set_title("12,000 training rows (make_classification)")
ax.legend()
ax.grid(alpha=0.3)
fig.tight_layout()
plt.show()
