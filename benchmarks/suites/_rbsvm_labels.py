"""Labels, tasks and the paper's numbers of the ``rbsvm-paper`` suite.

Peng et al., "Regression-based hyperparameter learning for support vector machines"
(RBSVM, IEEE TNNLS 2023): the method columns of its Tables II-VI, the suite's extra method
labels, the 20 tasks of Table I and the paper's Tables I-VI, read from
``paper_tables/rbsvm_paper.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from svmtune.bench.suite import Protocol, Task

__all__ = [
    "PAPER_FILE",
    "TASKS",
    "TASK_SIZES",
    "SMALL_TASKS",
    "LARGE_TASKS",
    "PROTOCOL",
    "SEED",
    "METHOD_LABELS",
    "GRID_L2_LABEL",
    "RANDOM_L2_LABEL",
    "BAYES_L2_LABEL",
    "L2_SEARCHES",
    "REFIT_LABEL",
    "OPEN_C_LABEL",
    "OPEN_C_LOG2_C",
    "LABEL_NONSV_LABEL",
    "LOWRANK_LABEL",
    "LOWRANK_SPAN_LABEL",
    "LOWRANK_RM_LABEL",
    "PLATT_LABEL",
    "REFIT_PLATT_LABEL",
    "PROBABILITY_METHODS",
    "STAND_INS",
    "VARIANTS",
    "PAPER_TABLE_II",
    "PAPER_TABLE_III",
    "PAPER_TABLE_V",
    "PAPER_WILCOXON",
    "published_entries",
]

#: the paper's six method columns (Tables II-VI), in the paper's order; these are also the
#: MethodSpec labels of the suite
METHOD_LABELS: tuple[str, ...] = (
    "RBSVM",
    "SpanSVM",
    "RMSVM",
    "GridSearch",
    "RandomSearch",
    "BayesSearch",
)

# ----------------------------------------------------------------------------- paper data
#: label of the grid search that trains and refits the L2-SVM (``final_model="l2"``), as the
#: paper's searches did (Sec. IV-C: "all the SVM solving algorithms in the hyperparameter
#: learning algorithms use L2-SVM"); "GridSearch" trains libsvm's hinge-loss SVC
GRID_L2_LABEL = "GridSearch (L2-SVM)"
#: the random and Bayesian searches of the L2-SVM, the same way
RANDOM_L2_LABEL = "RandomSearch (L2-SVM)"
BAYES_L2_LABEL = "BayesSearch (L2-SVM)"
#: each L2-SVM search -> (the libsvm search and paper column it stands beside (Tables III
#: and IV), its short name in the report, what it is)
L2_SEARCHES: dict[str, tuple[str, str, str]] = {
    GRID_L2_LABEL: (
        "GridSearch",
        "grid",
        "GridSearch (the same 10-fold CV on the log2 [-8, 8] step-1 grid)",
    ),
    RANDOM_L2_LABEL: (
        "RandomSearch",
        "random",
        "RandomSearch (the same 256 candidates uniform on [2^-8, 2^8], 10-fold CV)",
    ),
    BAYES_L2_LABEL: (
        "BayesSearch",
        "Bayes",
        "BayesSearch (the same hyperopt TPE, 256 evaluations uniform on [2^-8, 2^8], 10-fold CV)",
    ),
}
#: label of the RBSVM variant with the libsvm refit in the rbsvm-paper suite
REFIT_LABEL = "RBSVM (libsvm refit)"
#: label of the RBSVM variant with the paper's open C range (see the suite)
OPEN_C_LABEL = "RBSVM (open C)"
#: that variant's box for log2 C (the library default is [-8, 8]); 2^20 is a numerical guard
OPEN_C_LOG2_C: tuple[float, float] = (-8.0, 20.0)
#: label of the RBSVM variant whose J takes non-support vectors at their labels (eq. (27)
#: read literally with alpha_i = 0; ``nonsupport="label"``)
LABEL_NONSV_LABEL = "RBSVM (eq. 27 at non-SVs)"
#: labels of the low-rank gradient methods in the rbsvm-paper suite: the same
#: searches on a Nystroem kernel, where the exact methods' n x n matrices do not fit
LOWRANK_LABEL = "RBSVM (low-rank)"
LOWRANK_SPAN_LABEL = "SpanSVM (low-rank)"
LOWRANK_RM_LABEL = "RMSVM (low-rank)"
#: label of scikit-learn's SVC() with Platt scaling (a sigmoid fitted to 5-fold
#: cross-validated decision values: ``CalibratedClassifierCV(SVC(), ensemble=False)``, which
#: replaces ``SVC(probability=True)`` from scikit-learn 1.9), the yardstick for RBSVM's
#: probabilities; its labels are the calibrated probabilities' argmax
PLATT_LABEL = "SVC() (Platt)"
#: label of RBSVM's selection with the libsvm refit and Platt scaling: beside REFIT_LABEL (the
#: same SVM with the tanh mapping) it isolates the mapping from the hyperparameters
REFIT_PLATT_LABEL = "RBSVM (libsvm refit + Platt)"
#: methods whose probabilities the report compares: label -> how their probabilities are made
PROBABILITY_METHODS: dict[str, str] = {
    "RBSVM": "(1 + tanh f) / 2 of the L2-SVM (the paper's final model)",
    REFIT_LABEL: "(1 + tanh f) / 2 of libsvm's SVC at RBSVM's (sigma, C)",
    REFIT_PLATT_LABEL: "Platt scaling of that SVC",
    "default": "(1 + tanh f) / 2 of SVC() (C = 1, gamma = 'scale')",
    PLATT_LABEL: (
        "Platt scaling of SVC() (`CalibratedClassifierCV(SVC(), method='sigmoid', "
        "ensemble=False)`, scikit-learn's replacement for `SVC(probability=True)`)"
    ),
}
#: paper column -> our label printed in its place (marked) where the column's method has no
#: result on a task (ijcnn1)
STAND_INS: dict[str, str] = {
    "RBSVM": LOWRANK_LABEL,
    "SpanSVM": LOWRANK_SPAN_LABEL,
    "RMSVM": LOWRANK_RM_LABEL,
}
#: RBSVM variants with their own acceptance line: label -> what differs from "RBSVM"
VARIANTS: dict[str, str] = {
    REFIT_LABEL: "the same selection with the libsvm refit (`final_model='l1'`)",
    OPEN_C_LABEL: "the paper's open C range (log2 C in [{:g}, {:g}] instead of [-8, 8])".format(
        *OPEN_C_LOG2_C
    ),
    LABEL_NONSV_LABEL: (
        "J with eq. (27) read literally at the non-support vectors (their LOO output taken as "
        "the label, `nonsupport='label'`, instead of the model's exact output)"
    ),
}


# ----------------------------------------------------------------------------- paper data
#: the paper's tables, transcribed into ``paper_tables/rbsvm_paper.json`` (its ``source``
#: field names the paper; each table's ``caption`` says what its values are)
PAPER_FILE = Path(__file__).resolve().parent / "paper_tables" / "rbsvm_paper.json"
_PAPER = json.loads(PAPER_FILE.read_text(encoding="utf-8"))
if tuple(_PAPER["methods"]) != METHOD_LABELS:
    raise RuntimeError(f"{PAPER_FILE.name}: the tables' method columns are not {METHOD_LABELS}")
_TABLES = _PAPER["tables"]

#: RBSVM Table II: learned (sigma, C) per task, for each method of METHOD_LABELS in order
PAPER_TABLE_II: dict[str, tuple[tuple[float, float], ...]] = {
    task: tuple(tuple(p) for p in cols) for task, cols in _TABLES["II"]["values"].items()
}
#: RBSVM Table III: 10-fold CV accuracy in %, (mean, std) per method of METHOD_LABELS
PAPER_TABLE_III: dict[str, tuple[tuple[float, float], ...]] = {
    task: tuple(tuple(p) for p in cols) for task, cols in _TABLES["III"]["values"].items()
}
#: RBSVM Table V: model entropy (eq. (39)) per method of METHOD_LABELS
PAPER_TABLE_V: dict[str, tuple[float, ...]] = {
    task: tuple(cols) for task, cols in _TABLES["V"]["values"].items()
}
#: RBSVM Tables IV (accuracy) and VI (model entropy): paired Wilcoxon signed-rank tests of
#: RBSVM against each baseline over the 20 tasks: (R+, R-, z, p).  In Table IV R+ sums the
#: ranks of the tasks where RBSVM is more accurate; in Table VI R+ sums those where RBSVM's
#: entropy is higher (so small R+ favours RBSVM).
PAPER_WILCOXON: dict[str, dict[str, tuple[float, float, float, float]]] = {
    table: {m: tuple(v) for m, v in rows.items()}
    for table, rows in _TABLES["IV_VI"]["values"].items()
}
#: number of samples of every task as used (after subsampling); Table I's n
TASK_SIZES: dict[str, int] = dict(_TABLES["I"]["values"])

# ----------------------------------------------------------------------------- tasks
_LARGE = {"large": True}

#: the paper's 20 tasks (Table I), by their names in the paper
TASKS: list[Task] = [
    Task("breast-cancer", "breast_cancer"),
    Task("spect-heart", "spect"),
    Task("hepatitis", "hepatitis"),
    Task("diabetes", "pima"),
    Task("thyroid", "new_thyroid", positive="normal"),
    Task("monks-1", "monks_1"),
    Task("monks-2", "monks_2"),
    Task("monks-3", "monks_3"),
    Task("tic-tac-toe", "tic_tac_toe"),
    Task("adult", "adult_train", subsample=1213),
    Task("crx", "crx"),
    Task("cmc", "cmc", positive=1),
    Task("twonorm", "twonorm"),
    Task("balance-1", "balance_scale", positive="L"),
    Task("balance-2", "balance_scale", positive="B"),
    Task("balance-3", "balance_scale", positive="R"),
    Task("german", "german"),
    Task("australian", "australian"),
    Task("ijcnn1", "ijcnn1_train", options=dict(_LARGE)),
    Task("skin-nonskin", "skin_nonskin", subsample=10000),
]
#: stratified 10-fold CV (Table III reports the mean and std over the 10 folds)
PROTOCOL = Protocol(kind="kfold", n_splits=10, n_repeats=1)
SEED = 0

#: tasks with n <= 2000 (where the 1/20 time criterion applies), smallest first
SMALL_TASKS: list[str] = sorted(
    (t for t, n in TASK_SIZES.items() if n <= 2000), key=lambda t: (TASK_SIZES[t], t)
)
#: tasks where the exact n x n methods do not fit on a 2-core, 24 GiB machine (the scale issue)
LARGE_TASKS: list[str] = [t.name for t in TASKS if t.options.get("large")]

_WILCOXON_METRIC = {"IV": "accuracy", "VI": "entropy"}
_WILCOXON_FIELDS = ("r_plus", "r_minus", "z", "p")


def published_entries(tasks: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The suite's ``published`` list: Table III (accuracy, accuracy_std in %) and Table V
    (entropy) per task and method, and Tables IV / VI per compared method.

    Wilcoxon entries have ``task = "all tasks"``, ``reference = "RBSVM"`` and metrics
    ``wilcoxon_<accuracy|entropy>_<r_plus|r_minus|z|p>``; the generic report does not know
    these metrics (it prints them as such), :func:`paper_tables` computes ours.
    """
    keep = None if tasks is None else set(tasks)
    out: list[dict[str, Any]] = []
    for task, cols in PAPER_TABLE_III.items():
        if keep is not None and task not in keep:
            continue
        for label, (mean, std) in zip(METHOD_LABELS, cols):
            out.append(
                {"table": "III", "task": task, "method": label, "metric": "accuracy", "value": mean}
            )
            out.append(
                {
                    "table": "III",
                    "task": task,
                    "method": label,
                    "metric": "accuracy_std",
                    "value": std,
                }
            )
    for task, vals in PAPER_TABLE_V.items():
        if keep is not None and task not in keep:
            continue
        for label, v in zip(METHOD_LABELS, vals):
            out.append(
                {"table": "V", "task": task, "method": label, "metric": "entropy", "value": v}
            )
    for table, rows in PAPER_WILCOXON.items():
        metric = _WILCOXON_METRIC[table]
        for label, vals in rows.items():
            for name, v in zip(_WILCOXON_FIELDS, vals):
                out.append(
                    {
                        "table": table,
                        "task": "all tasks",
                        "method": label,
                        "reference": "RBSVM",
                        "metric": f"wilcoxon_{metric}_{name}",
                        "value": float(v),
                    }
                )
    return out


# ----------------------------------------------------------------------------- our side
def _ok(results: pd.DataFrame) -> pd.DataFrame:
    if results is None or results.empty or "status" not in results:
        return pd.DataFrame(columns=["task", "method", "split", "accuracy", "entropy"])
    return results[results["status"] == "ok"]
