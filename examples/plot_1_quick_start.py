"""
Quick start: the default method on a bundled data set
======================================================

``SVMTuner`` with its default ``method="auto"`` on the bundled ``parkinsons`` data (195 voice
recordings, 22 features): select ``(sigma, C)``, look at the candidates ``auto`` scored, and
compare the selected model with scikit-learn's ``SVC()`` on held-out rows.
"""

# sphinx_gallery_start_ignore
# (hidden on the site: print warnings as "Category: message", without file paths)
# ruff: noqa: E402
import warnings

warnings.formatwarning = lambda message, category, *args, **kwargs: (
    f"{category.__name__}: {message}\n"
)
# sphinx_gallery_end_ignore


# %%
# Load the data and split it.
import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from svmtune import SVMTuner
from svmtune.datasets import load_dataset

X, y, info = load_dataset("parkinsons")
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
print(f"{X.shape[0]} rows, {X.shape[1]} features, classes {np.unique(y).tolist()}")

# %%
# Select and fit. ``estimate_`` is the referee's closed-form leave-one-out error of the
# returned model; ``final_model_`` says which SVM it is ("l1": libsvm's hinge-loss SVC,
# "l2": the squared-hinge SVM).
t0 = time.perf_counter()
tuner = SVMTuner(random_state=0).fit(X_tr, y_tr)
seconds = time.perf_counter() - t0
print("chosen:", tuner.best_params_)
print(
    f"leave-one-out estimate {tuner.estimate_:.3f}, final model {tuner.final_model_}, "
    f"{tuner.n_svm_fits_} SVM fits, {seconds:.2f} s"
)

baseline = make_pipeline(StandardScaler(), SVC()).fit(X_tr, y_tr)
print(f"test accuracy: auto {tuner.score(X_te, y_te):.3f}, SVC() {baseline.score(X_te, y_te):.3f}")

# %%
# Every candidate ``auto`` scored: its origin (a data-only start or the end of the gradient
# refinement), its (sigma, C) and its leave-one-out error. ``cv_results_`` has scikit-learn's
# layout.
import pandas as pd

res = pd.DataFrame(tuner.cv_results_)
cols = [c for c in ("origin", "param_sigma", "param_C", "mean_test_score") if c in res]
print(res[cols].to_string())

# %%
# Where the candidates lie, coloured by their leave-one-out accuracy; the star is the choice.
fig, ax = plt.subplots(figsize=(6, 4.5))
sc = ax.scatter(
    np.log2(res["param_sigma"].astype(float)),
    np.log2(res["param_C"].astype(float)),
    c=res["mean_test_score"].astype(float),
    cmap="viridis",
    s=80,
    edgecolors="k",
)
best = tuner.best_params_
ax.scatter(np.log2(best["sigma"]), np.log2(best["C"]), marker="*", s=300, c="red", label="chosen")
ax.set_xlabel("log2 sigma")
ax.set_ylabel("log2 C")
ax.set_title("auto's candidates on parkinsons")
fig.colorbar(sc, label="leave-one-out accuracy")
ax.legend()
fig.tight_layout()
plt.show()
