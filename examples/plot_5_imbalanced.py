"""
Imbalanced classes
==================

With one rare class, a model can reach a high accuracy by predicting the majority class
almost everywhere. Three ways svmtune handles it, compared on a synthetic two-class problem
with 8 % positives (``sklearn.datasets.make_classification``), by balanced accuracy and the
F1 of the rare class:

* ``class_weight="balanced"``, which every method honours (it multiplies the sample weights);
* a cross-validated search that scores by F1 (``method_params={"scoring": "f1"}``);
* ``span_rule`` choosing the two class weights ``C+`` and ``C-`` itself
  (``search="class_weights"``, the Weighted span paper's Experiment #1).
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
import numpy as np
from sklearn.datasets import make_classification
from sklearn.metrics import balanced_accuracy_score, f1_score
from sklearn.model_selection import train_test_split

from svmtune import SVMTuner

X, y = make_classification(
    n_samples=900,
    n_features=10,
    n_informative=5,
    weights=[0.92],
    flip_y=0.02,
    class_sep=0.9,
    random_state=3,
)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.4, stratify=y, random_state=0)
print(f"training rows {len(y_tr)}, positives {int(y_tr.sum())}")

# %%
# The candidates. ``span_rule``'s class-weight search fits one SVM per (C+, C-) pair, here on
# a coarser grid than its default (step 1 in log2 over [-4, 8] for both), to keep it short.
configs = {
    "default": dict(method="default"),
    "default, balanced": dict(method="default", class_weight="balanced"),
    "auto": dict(method="auto"),
    "auto, balanced": dict(method="auto", class_weight="balanced"),
    "grid, F1": dict(
        method="grid",
        method_params={
            "scoring": "f1",
            "n_splits": 5,
            "log2_sigma": (-4, 6, 2),
            "log2_C": (-4, 8, 2),
        },
    ),
    "span_rule, class weights": dict(
        method="span_rule",
        method_params={
            "search": "class_weights",
            "log2_C_pos": (-4, 8, 1),
            "log2_C_neg": (-4, 8, 1),
        },
    ),
}
scores = {}
for label, kw in configs.items():
    t0 = time.perf_counter()
    tuner = SVMTuner(random_state=0, **kw).fit(X_tr, y_tr)
    pred = tuner.predict(X_te)
    scores[label] = (balanced_accuracy_score(y_te, pred), f1_score(y_te, pred))
    extra = tuner.best_params_.get("class_weight", "")
    print(
        f"{label:26s} balanced accuracy {scores[label][0]:.3f}  F1 {scores[label][1]:.3f}  "
        f"{time.perf_counter() - t0:5.1f} s  {extra}"
    )

# %%
# Balanced accuracy and F1 of the rare class per configuration.
labels = list(scores)
pos = np.arange(len(labels))
fig, ax = plt.subplots(figsize=(7, 4))
ax.barh(pos - 0.2, [scores[k][0] for k in labels], height=0.4, label="balanced accuracy")
ax.barh(pos + 0.2, [scores[k][1] for k in labels], height=0.4, label="F1 (rare class)")
ax.set_yticks(pos, labels)
ax.invert_yaxis()
ax.set_xlim(0, 1)
ax.legend(loc="lower right")
ax.set_title("8 % positives, held-out rows")
fig.tight_layout()
plt.show()
