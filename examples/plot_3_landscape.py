"""
The criterion landscape against the cross-validated error
==========================================================

A gradient method such as RBSVM evaluates its criterion (the leave-one-out cross-entropy of
the L2-SVM, RBSVM eq. (29)-(33)) along a path; a grid search evaluates the cross-validated
error everywhere. :func:`svmtune.plot_landscape` draws what a fitted tuner evaluated: the
criterion over (log2 sigma, log2 C) with the search's path and the chosen point, and, where
the method computed one, the held-out error of the same points.
"""

# sphinx_gallery_start_ignore
# (hidden on the site: print warnings as "Category: message", without file paths)
# ruff: noqa: E402
import warnings

warnings.formatwarning = lambda message, category, *args, **kwargs: (
    f"{category.__name__}: {message}\n"
)
# sphinx_gallery_end_ignore


import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split

import svmtune
from svmtune import SVMTuner
from svmtune.datasets import load_dataset

X, y, info = load_dataset("banknote")
X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=300, stratify=y, random_state=0)

# %%
# A 5-fold grid search: its landscape is the cross-validated error on the whole grid.
grid = SVMTuner(
    method="grid",
    random_state=0,
    method_params={"log2_sigma": (-6, 6, 1), "log2_C": (-6, 8, 1), "n_splits": 5},
).fit(X_tr, y_tr)
fig = svmtune.plot_landscape(grid)
plt.show()

# %%
# RBSVM on the same rows: a handful of evaluations along its gradient path. The right panel
# shows the closed-form leave-one-out error (RBSVM eq. (27)) at the points it visited.
rbsvm = SVMTuner(method="rbsvm", random_state=0).fit(X_tr, y_tr)
fig = svmtune.plot_landscape(rbsvm)
plt.show()

# %%
# What the two chose and what it cost.
for name, t in (("grid", grid), ("rbsvm", rbsvm)):
    print(
        f"{name:6s} sigma {t.best_params_['sigma']:.3g}  C {t.best_params_['C']:.3g}  "
        f"{t.n_svm_fits_} SVM fits  {t.selection_time_:.2f} s  "
        f"test accuracy {t.score(X_te, y_te):.4f}"
    )
