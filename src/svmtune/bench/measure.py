"""What the runner measures around a cell: the environment a row records, the test-set
metrics of a fitted tuner, the timed ``SVC()`` yardstick fit, the model entropy of the
chosen model (RBSVM, Peng et al. 2023, eq. (39)) and a failure as a row's status."""

from __future__ import annotations

import functools
import os
import platform
import time
from functools import cache
from typing import Any

import numpy as np

from svmtune.loo.entropy import LOWRANK_ENTROPY_RANK, MAX_EXACT_ENTROPY, l2_model_entropy

__all__ = ["environment"]


@cache
def environment() -> dict[str, dict[str, Any]]:
    """Package versions and machine description recorded with every row."""
    from importlib.metadata import PackageNotFoundError, version

    versions: dict[str, Any] = {"python": platform.python_version()}
    for mod, dist in (
        ("svmtune", "svmtune"),
        ("numpy", "numpy"),
        ("scipy", "scipy"),
        ("sklearn", "scikit-learn"),
        ("pandas", "pandas"),
        ("hyperopt", "hyperopt"),
        ("optuna", "optuna"),
    ):
        try:
            versions[mod] = version(dist)
        except PackageNotFoundError:
            versions[mod] = None
    machine = {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
    }
    return {"versions": versions, "machine": machine}


@functools.lru_cache(maxsize=1)
def _cpu_model() -> str | None:
    """The CPU's model name (Linux ``/proc/cpuinfo``; else ``platform.processor()``, which
    is empty on Linux), or None."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip() or None
    except OSError:
        pass
    return platform.processor() or None


def _error_status(exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError):
        return f"error: method module not available ({exc.name or exc})"
    msg = " ".join(str(exc).split()) or type(exc).__name__
    return f"error: {type(exc).__name__}: {msg}"[:500]


def _metrics(tuner, X_test, y_test) -> tuple[dict[str, Any], dict[str, str]]:
    """Test accuracy, F1 (binary: of classes_[1]; multiclass: macro), log-loss, Brier and the
    confusion matrix.

    ``confusion`` (rows: true class, columns: predicted, in the order of ``confusion_labels``:
    the sorted union of the tuner's classes and the test labels, so a test label the tuner
    never saw has its own row) keeps every count-based score recomputable from the row, e.g.
    F1 with the other class as positive or macro-F1 of a binary task (the papers rarely say
    which F1 they print).
    """
    from sklearn.metrics import brier_score_loss, confusion_matrix, f1_score, log_loss

    out: dict[str, Any] = {}
    notes: dict[str, str] = {}
    classes = tuner.classes_
    pred = tuner.predict(X_test)
    out["accuracy"] = float(np.mean(pred == y_test))
    labels = np.union1d(classes, y_test)
    out["confusion_labels"] = labels.tolist()
    out["confusion"] = confusion_matrix(y_test, pred, labels=labels).tolist()
    if len(classes) == 2:
        out["f1"] = float(f1_score(y_test, pred, pos_label=classes[1], zero_division=0.0))
    else:
        out["f1"] = float(
            f1_score(y_test, pred, labels=classes, average="macro", zero_division=0.0)
        )
    try:
        P = tuner.predict_proba(X_test)
        out["log_loss"] = float(log_loss(y_test, P, labels=classes))
        out["brier"] = float(brier_score_loss(y_test, P, labels=classes))
    except Exception as exc:  # e.g. a test label unseen in training
        out["log_loss"] = out["brier"] = None
        notes["proba"] = _error_status(exc)
    return out, notes


def _timed_default_fit(svc_class, X: np.ndarray, y: np.ndarray, repeats: int = 3):
    """Fit ``SVC()`` ``repeats`` times; the fastest is the fit time (a fit takes milliseconds
    on small data, where one measurement is mostly timer and scheduler noise)."""
    best, svc = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        svc = svc_class().fit(X, y)
        best = min(best, time.perf_counter() - t0)
    return best, svc


def _entropy(
    Xp: np.ndarray, y_enc: np.ndarray, params: dict, sample_weight: np.ndarray | None = None
) -> tuple[float | None, str | None]:
    """RBSVM model entropy (eq. (39)-(40)) of the L2-SVM at ``params`` (class weights
    included, with the instance weights a method chose), or None and why."""
    if params.get("kernel", "rbf") != "rbf":
        return None, "not an RBF model"
    note = None
    if Xp.shape[0] > MAX_EXACT_ENTROPY:
        note = (
            f"L2-SVM on the Nystroem kernel (n > {MAX_EXACT_ENTROPY}; "
            f"rank <= {LOWRANK_ENTROPY_RANK})"
        )
    try:
        return float(l2_model_entropy(Xp, y_enc, dict(params), sample_weight)), note
    except Exception as exc:
        return None, _error_status(exc)
