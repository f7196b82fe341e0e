"""Tasks and the paper's numbers of the ``span-paper`` suite.

Sarafis, Diou & Delopoulos, Weighted span (JMLR): the 14 data sets of Table 1 (as far as we
have them, see :data:`TASK_NOTES`) and Tables 1-6, read from ``paper_tables/span_paper.json``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from svmtune.bench.suite import Task

__all__ = [
    "PAPER_FILE",
    "CELL_TRAIN_SIZE",
    "TASKS",
    "TASK_NOTES",
    "TABLE1",
    "TABLE2",
    "TABLE3",
    "TABLE4",
    "TABLE5",
    "TABLE6",
    "T2_COLS",
    "with_test_file",
]

CELL_TRAIN_SIZE = 400

_BANK_DROP = ("job", "education", "contact", "day", "month", "duration", "poutcome")

#: Table 1 as used: task -> (dataset, positive label, test file, extra options); the sizes
#: (n_train, n_test) are the paper's, in :data:`TABLE1`
_DATASETS: dict[str, tuple] = {
    "breast cancer": ("breast_w", "malignant", None, {}),
    "mushrooms": ("mushroom", "p", None, {}),
    "waveform": ("ida_waveform", 1, None, {}),
    "banana": ("ida_banana", 1, None, {}),
    "skin nonskin": ("skin_nonskin", 1, None, {}),
    "splice": ("ida_splice", 1, None, {}),
    "image": ("ida_image", 1, None, {}),
    "adult": ("adult_a9a_train", 1, None, {}),
    "MNIST 2's vs. 9's": ("mnist_2v9_train", 2, "mnist_2v9_test", {}),
    "MNIST 1's vs. 7's": ("mnist_1v7_train", 1, "mnist_1v7_test", {}),
    "MNIST 3's vs. 6's": ("mnist_3v6_train", 3, "mnist_3v6_test", {}),
    "MNIST 0's vs. 8's": ("mnist_0v8_train", 0, "mnist_0v8_test", {}),
    "Parkinson's speech": (
        "parkinson_speech_train",
        1,
        None,
        {
            "score": "updrs",
            "subjects": (
                list(range(1, 11)) + list(range(21, 31)),
                list(range(11, 21)) + list(range(31, 41)),
            ),
        },
    ),
    "bank marketing": ("bank_marketing", 2, None, {"score": "duration"}),
}

# ---------------------------------------------------------------------------------------------
# The paper's numbers (transcribed from the text of Tables 1-6 into paper_tables/)
# ---------------------------------------------------------------------------------------------
#: the paper's tables (``source`` names the paper; each table's ``caption`` its values)
PAPER_FILE = Path(__file__).resolve().parent / "paper_tables" / "span_paper.json"
_TABLES = json.loads(PAPER_FILE.read_text(encoding="utf-8"))["tables"]


def _table(key: str) -> dict[str, tuple]:
    return {task: tuple(v) for task, v in _TABLES[key]["values"].items()}


#: Table 1: (n_train, n_test) per task
TABLE1: dict[str, tuple[int, int]] = _table("1")
T2_COLS: tuple[str, ...] = tuple(_TABLES["2"]["columns"])
#: Table 2: test error of the model each rule selects (class weights C+/C-)
TABLE2: dict[str, tuple[float, ...]] = _table("2")
#: Table 3: the same with instance weights (Parkinson speech, bank marketing)
TABLE3: dict[str, tuple[float, ...]] = _table("3")
#: Table 4: RMSE between prediction and test error (span-rule, K-fold CV, xi-alpha bound)
TABLE4: dict[str, tuple[float, float, float]] = _table("4")
#: Table 5: mean +- std of empty-Lambda_p occurrences, in-bound SVs, total SVs per model
TABLE5: dict[str, tuple[float, float, float, float, float, float]] = _table("5")
#: Table 6: mean seconds per model, span-rule vs K-fold CV (Xeon E5-2650 v3, one core)
TABLE6: dict[str, tuple[float, float]] = _table("6")


def with_test_file(task: Task) -> Task:
    """``task`` with its Table 1 test file (MNIST pairs: the official MNIST test digits).

    The cells keep ``test_dataset=None``: their protocol splits the training file.
    """
    test_ds = _DATASETS[task.name][2]
    return task if test_ds is None else replace(task, test_dataset=test_ds)


TASK_NOTES = {
    "breast cancer": "breast_w (Wisconsin, 699 rows, 16 missing cells imputed): test 599, not 783",
    "mushrooms": "UCI mushroom one-hot encoded (LIBSVM mushrooms = its one-hot encoding)",
    "adult": "a9a training file: 1605 for training, the other 30956 rows for testing (= a1a)",
    "Parkinson's speech": "training file's 40 subjects split by ID as in Section 6.1.2; "
    "in the cells a random split of recordings (subjects shared by train and test)",
    "bank marketing": "UCI bank-full (45211 rows), not bank-additional (41188): no "
    "macro-economic columns; features age, balance, campaign, pdays, previous, marital, "
    "default, housing, loan; call duration = importance score",
}


def _task(name: str) -> Task:
    ds, pos, _, extra = _DATASETS[name]
    n_tr, n_te = TABLE1[name]
    opts = {"n_train": n_tr, "n_test": n_te, **extra}
    drop = _BANK_DROP if name == "bank marketing" else ()
    return Task(name, ds, positive=pos, drop_columns=drop, options=opts)


#: the paper's 14 tasks, Table 1 sizes in their options
TASKS = [_task(n) for n in _DATASETS]
