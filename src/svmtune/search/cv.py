"""The one cross-validation evaluation path every CV-based method shares.

Grid, random, TPE (hyperopt and Optuna) searches and the "C by CV" step of ESDR-CV and
LD-CV all score candidate hyperparameters with :func:`cv_errors`, so their numbers of SVM
fits and their fold splits are comparable.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

from svmtune._option_values import check_int_option
from svmtune._progress import current as current_progress
from svmtune._progress import describe
from svmtune._validation import _label, check_labels, validate_groups, validate_sample_weight
from svmtune._warnings import user_stacklevel
from svmtune.estimators import make_final_estimator, ovo_pairs

__all__ = ["make_folds", "cv_errors", "fold_error", "check_class_groups"]


def make_folds(
    y: np.ndarray,
    n_splits: int = 10,
    random_state=None,
    sample_weight: np.ndarray | None = None,
    groups=None,
) -> list[tuple]:
    """Stratified, shuffled K-fold splits; ``n_splits`` is capped by the smallest class size.

    With ``sample_weight`` only samples of positive weight count towards a class's size, and
    the folds are stratified by class and by ``weight > 0`` together, so that every training
    part holds samples of positive weight of every class (a fit leaves out weight-0 samples).
    Without zero weights the folds are those of the unweighted call.  Labels of any kind are
    encoded as ``0..k-1`` in sorted order first (the folds of encoded labels are the same).

    With ``groups`` (one label per sample: the patient, recording or stretch of a series a
    row belongs to) the folds keep every group whole, on one side of each split
    (scikit-learn's ``StratifiedGroupKFold``, stratified as above as far as whole groups
    allow), and ``n_splits`` is capped by the number of groups holding each class.

    Raises
    ------
    ValueError
        If ``y`` is not 1-D or has missing labels, ``n_splits`` is not an integer >= 2,
        ``sample_weight`` is not one finite non-negative weight per label, a class has
        fewer than 2 samples (of positive weight), ``groups`` is not one label per sample,
        a class lies in a single group, or the groups leave some training part without a
        class.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {y.shape}")
    check_labels(y)
    y = np.unique(y, return_inverse=True)[1].ravel()
    n_splits = check_int_option("n_splits", n_splits, minimum=2)
    sample_weight = validate_sample_weight(sample_weight, y.shape[0])
    groups = validate_groups(groups, y.shape[0])
    pos = None if sample_weight is None else sample_weight > 0
    present = np.flatnonzero(np.bincount(y) > 0)
    counts = np.bincount(y if pos is None else y[pos], minlength=int(y.max()) + 1)[present]
    k = int(min(n_splits, counts.min()))
    if k < 2:
        need = "samples" if pos is None else "samples with positive weight"
        raise ValueError(f"cross-validation needs at least 2 {need} of every class")
    weighted = "" if pos is None else " with positive weight"
    if k < n_splits:
        warnings.warn(
            f"smallest class has {counts.min()} samples{weighted}: using {k}-fold instead "
            f"of {n_splits}-fold cross-validation",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    # strata 2 y + (w > 0): with every weight positive StratifiedKFold encodes them as it
    # encodes y, so the folds are the unweighted ones
    strata = y if pos is None else 2 * y + pos
    if groups is None:
        splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=random_state)
    else:
        fewest = int(check_class_groups(y, groups, sample_weight).min())
        if fewest < k:
            warnings.warn(
                f"a class has samples{weighted} in only {fewest} groups: using {fewest}-fold "
                f"instead of {k}-fold cross-validation, to keep groups whole",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
            k = fewest
        splitter = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=random_state)
    with warnings.catch_warnings():
        # the weight-0 part of a class may be smaller than k: only its spread suffers
        warnings.filterwarnings("ignore", message=".*least populated class.*")
        folds = list(splitter.split(np.zeros(len(y)), strata, groups))
    if groups is not None:
        for i, (train, _) in enumerate(folds):
            held = train if pos is None else train[pos[train]]
            missing = np.setdiff1d(present, y[held])
            if missing.size:
                raise ValueError(
                    f"the groups leave fold {i + 1} of {k} with no training sample{weighted} "
                    f"of class {int(missing[0])} (encoded label: the classes in sorted "
                    "order), whose groups all fell in its validation part; give that class "
                    "more groups, or another random_state (it shuffles the groups)"
                )
    return folds


def check_class_groups(
    y: np.ndarray, groups: np.ndarray, sample_weight=None, classes=None
) -> np.ndarray:
    """The number of distinct groups holding samples (of positive weight) of each class
    present in the encoded labels ``y``; raises when a class lies in a single group, since
    holding out whole groups (cross-validation or leave-one-group-out) can then never train
    and validate on it.
    ``classes`` (the original labels, in the order of the codes) names the class in the
    error; without it the encoded label is named."""
    keep = np.ones(len(y), dtype=bool) if sample_weight is None else sample_weight > 0
    pairs = np.unique(np.column_stack([y[keep], groups[keep]]), axis=0)
    present = np.flatnonzero(np.bincount(y) > 0)
    n_groups = np.bincount(pairs[:, 0], minlength=int(y.max()) + 1)[present]
    if n_groups.min() < 2:
        c = int(present[int(np.argmin(n_groups))])
        name = (
            f"{c} (encoded label: the classes in sorted order)"
            if classes is None
            else _label(classes[c])
        )
        weighted = "" if sample_weight is None else " of positive weight"
        raise ValueError(
            f"class {name} has all its samples{weighted} in one group, so holding out whole "
            "groups (cross-validation that keeps groups whole, or rbsvm's leave-one-group-out) "
            "cannot train on it and validate on it; merge groups differently or leave groups "
            "out"
        )
    return n_groups


def fold_error(
    X: np.ndarray,
    y: np.ndarray,
    params: dict[str, Any],
    train: np.ndarray,
    test: np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    final_model: str = "l1",
    multiclass: str = "ovr",
    scoring: str = "error",
) -> float:
    """Validation loss of one candidate on one fold (error rate, or mean hinge loss).

    ``y`` holds class codes ``0..k-1``.
    """
    y = np.asarray(y)
    # a new, unfitted estimator for every call (no clone needed)
    est = make_final_estimator(
        params, final_model=final_model, multiclass=multiclass, n_classes=int(y.max()) + 1
    )
    fit_kw = {} if sample_weight is None else {"sample_weight": sample_weight[train]}
    est.fit(X[train], y[train], **fit_kw)
    if scoring == "error":
        return float(np.mean(est.predict(X[test]) != y[test]))
    if scoring == "hinge":
        # binary: mean hinge loss; one-vs-rest: the hinge losses of the k binary decision
        # functions, averaged over classes and samples; one-vs-one: of each pairwise decision
        # function on the samples of its two classes, averaged over those (sample, pair) terms
        f = est.decision_function(X[test])
        yt = y[test]
        if f.ndim == 1:
            t = np.where(yt == 1, 1.0, -1.0)
        elif getattr(est, "decision_function_shape", None) == "ovo":
            a, b = ovo_pairs(int(y.max()) + 1)
            t = np.where(yt[:, None] == a, 1.0, np.where(yt[:, None] == b, -1.0, 0.0))
            losses = np.maximum(0.0, 1.0 - t * f)
            return float(losses[t != 0].mean())
        else:
            t = np.where(yt[:, None] == np.arange(f.shape[1])[None, :], 1.0, -1.0)
        return float(np.mean(np.maximum(0.0, 1.0 - t * f)))
    if scoring in ("f1", "f1_macro"):
        from sklearn.metrics import f1_score

        # "f1": binary tasks the F1 of class code 1, multiclass tasks macro-F1;
        # "f1_macro": the mean F1 of every class, binary tasks included (no positive class)
        avg = "binary" if scoring == "f1" and y.max() == 1 else "macro"
        return 1.0 - float(f1_score(y[test], est.predict(X[test]), average=avg))
    raise ValueError(f"unknown scoring {scoring!r}; use 'error', 'hinge', 'f1' or 'f1_macro'")


def cv_errors(
    X: np.ndarray,
    y: np.ndarray,
    candidates: list[dict[str, Any]],
    *,
    folds: list[tuple] | None = None,
    n_splits: int = 10,
    sample_weight: np.ndarray | None = None,
    final_model: str = "l1",
    multiclass: str = "ovr",
    scoring: str = "error",
    random_state=None,
    n_jobs: int | None = None,
    groups=None,
    return_folds: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean K-fold validation loss of every candidate (one row per candidate).

    Without ``folds``, the folds are ``make_folds(y, n_splits, random_state, sample_weight,
    groups)``.

    Returns an array of shape ``(len(candidates),)``; the number of SVM fits spent is
    ``len(candidates) * len(folds)``.  Parallel over (candidate, fold) cells with joblib.
    With ``return_folds=True`` also the loss of every (candidate, fold) cell and the seconds
    its fit and validation took, both of shape ``(len(candidates), len(folds))`` (what
    scikit-learn's ``cv_results_`` reports as ``split<k>_test_score`` and fit times).
    """
    y = np.asarray(y)
    if np.shape(X)[0] != y.shape[0]:
        raise ValueError(f"X has {np.shape(X)[0]} samples but y has {y.shape[0]}")
    sample_weight = validate_sample_weight(sample_weight, y.shape[0])
    for i, cand in enumerate(candidates):
        if "C" not in cand:
            raise ValueError(
                f"candidate {i} ({cand!r}) has no 'C'; every candidate needs C and the kernel "
                "parameters, e.g. {'C': 1.0, 'kernel': 'rbf', 'gamma': 0.5}"
            )
    if folds is None:
        folds = make_folds(y, n_splits, random_state, sample_weight, groups)
    elif groups is not None:
        raise ValueError("give groups or folds, not both: the folds already split the rows")
    if len(folds) == 0:
        raise ValueError("folds is empty; give (train, test) index pairs, or folds=None")
    cells = [(i, tr, te) for i in range(len(candidates)) for tr, te in folds]
    reporter = current_progress()
    # with a progress reporter the cells are counted as they come back (in order)
    parallel = Parallel(n_jobs=n_jobs, **({} if reporter is None else {"return_as": "generator"}))
    out = parallel(
        delayed(_timed_fold_error)(
            X,
            y,
            candidates[i],
            tr,
            te,
            sample_weight=sample_weight,
            final_model=final_model,
            multiclass=multiclass,
            scoring=scoring,
        )
        for i, tr, te in cells
    )
    if reporter is not None:
        out = _reported(out, reporter, candidates, len(folds), scoring)
    cells_out = np.asarray(out, dtype=float).reshape(len(candidates), len(folds), 2)
    losses = cells_out[..., 0]
    if return_folds:
        return losses.mean(axis=1), losses, cells_out[..., 1]
    return losses.mean(axis=1)


def _reported(cells, reporter, candidates: list[dict], n_folds: int, scoring: str) -> list:
    """The (loss, seconds) of the cells, each counted as a CV fit as it comes back, and a
    line per candidate (``verbose=2``) once its folds are in."""
    unit = "CV fits"
    reporter.cover(len(candidates) * n_folds, unit)
    out = []
    for cell in cells:
        out.append(cell)
        reporter.advance(1, unit)
        if len(out) % n_folds == 0:
            i = len(out) // n_folds - 1
            loss = float(np.mean([c[0] for c in out[-n_folds:]]))
            reporter.line(
                f"{describe(candidates[i])}: mean {scoring} {loss:.4f} over {n_folds} folds"
            )
    return out


def _timed_fold_error(*args, **kwargs) -> tuple[float, float]:
    """:func:`fold_error` and the seconds it took (fit and validation of one cell)."""
    t0 = time.perf_counter()
    loss = fold_error(*args, **kwargs)
    return loss, time.perf_counter() - t0
