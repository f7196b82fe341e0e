"""Closed-form leave-one-out outputs of the model a tuner would return, from one kernel matrix.

The referee of :class:`svmtune.methods.auto.Auto` scores a candidate ``(sigma, C)`` by the
leave-one-out error of the final model it would become, for the cost of fitting that model
once on all the training data:

* libsvm's hinge-loss SVC (``"l1"``): the span-rule leave-one-out decision values of the
  weighted L1-SVM (Weighted span Theorem 2, eq. (35); Corollary 1, eq. (37)), through
  :func:`svmtune.loo.span_rule.span_rule_loo_decision`.  One-vs-rest models combine the
  tasks' values by arg-max; one-vs-one models (libsvm's ``SVC`` on ``k > 2`` classes) by the
  pairwise votes libsvm casts, where a row is held out only of the pairs it was trained in;
* the squared-hinge L2-SVM (``"l2"``): RBSVM eq. (27)
  (:func:`svmtune.loo.closed_form.closed_form_loo`), or with ``groups`` its block form, the
  leave-one-group-out outputs (:func:`svmtune.loo.rbsvm_groups.closed_form_lgo`).

Both are exact when leaving a row (group) out leaves the other points' support status
unchanged and estimates otherwise; ``tests/loo/test_referee.py`` checks them against
retraining without each row.  Functions here take the kernel matrix and return numbers; the
orchestration is the method's.

The public functions check their inputs once; ``auto`` scores a candidate through their
unchecked kernels (``_l1_loo_outputs``, ``_l2_loo_outputs``, ``_ovo_loo_outputs``), as its
``K`` is its own (:func:`svmtune.kernels.rbf_from_sqdist` of checked distances), its tasks
come from :func:`svmtune._labels.ovr_tasks` and its weights were checked at the tuner's door
(issue #55): they call the unchecked kernels of the solvers and closed forms
(:func:`svmtune.svm._fit_l1_svm`, :func:`svmtune.svm._fit_l2_svm`,
:func:`svmtune.loo.closed_form._closed_form_loo`, ...).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.utils.validation import column_or_1d

from svmtune._dual_solution import check_C, support_mask
from svmtune._kernel_matrix_checks import check_kernel_matrix
from svmtune._labels import check_pm1, ovr_tasks
from svmtune._loo_losses import _loo_loss
from svmtune._validation import validate_sample_weight
from svmtune.estimators import ovo_pairs
from svmtune.loo.closed_form import _closed_form_loo, loo_error_rate, loo_predictions
from svmtune.loo.rbsvm_groups import _lgo_terms, group_codes
from svmtune.loo.span_rule import _span_rule_loo_decision
from svmtune.svm import _fit_l1_svm, _fit_l2_svm

__all__ = [
    "FAMILIES",
    "l1_loo_outputs",
    "l2_loo_outputs",
    "ovo_loo_outputs",
    "ovo_loo_predictions",
    "referee_error",
    "row_losses",
]

#: final model families the referee can score
FAMILIES = ("l1", "l2")


def l1_loo_outputs(
    K: np.ndarray,
    tasks: Sequence[np.ndarray],
    C: float,
    sample_weight: np.ndarray | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Span-rule leave-one-out decision values of the hinge-loss SVC of each task at ``C``.

    Parameters
    ----------
    K : ndarray (n, n)
        Kernel matrix of the training points.
    tasks : sequence of ndarray (n,)
        Labels in {-1, +1} of each binary task: one for two classes, one per class against
        the rest otherwise (:func:`svmtune.methods.base.ovr_tasks`).
    C : float
        Penalty; per-sample bounds ``C * sample_weight`` (Weighted span eq. (2)).

    Returns
    -------
    (outputs, supports)
        One array of ``n`` leave-one-out decision values per task, and the support vectors
        of each task's libsvm fit as a mask of the ``n`` rows (one fit per task).
    """
    K, tasks, w = _checked(K, tasks, C, sample_weight)
    return _l1_loo_outputs(K, tasks, C, w)


def _l1_loo_outputs(K, tasks, C, w) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """:func:`l1_loo_outputs` of checked inputs (``auto``'s referee, module docstring)."""
    outs, supports = [], []
    for t in tasks:
        sol = _fit_l1_svm(t, C, w, K=K)[0]
        outs.append(_span_rule_loo_decision(sol, K))
        supports.append(sol.support)
    return outs, supports


def ovo_loo_outputs(
    K: np.ndarray, y: np.ndarray, C: float, sample_weight: np.ndarray | None = None
) -> list[np.ndarray]:
    """Span-rule leave-one-out values of libsvm's one-vs-one SVC (``k > 2`` classes).

    One array per pair ``(a, b)`` of :func:`svmtune.estimators.ovo_pairs`, positive for
    ``a``: the held-out value for the pair's rows (each is held out of the pairs it was
    trained in) and the pair model's value for the other rows; one libsvm fit per pair.
    ``y`` holds the encoded labels ``0..k-1``.
    """
    y = column_or_1d(y)
    K, _, w = _checked(K, [], C, sample_weight, n=y.shape[0])
    return _ovo_loo_outputs(K, y, C, w)


def _ovo_loo_outputs(K, y, C, w) -> list[np.ndarray]:
    """:func:`ovo_loo_outputs` of checked inputs (``auto``'s referee, module docstring)."""
    first, second = ovo_pairs(int(np.max(y)) + 1)
    outs = []
    for a, b in zip(first, second):
        rows = np.flatnonzero((y == a) | (y == b))
        Kp = K[np.ix_(rows, rows)]
        t = np.where(y[rows] == a, 1.0, -1.0)
        sol = _fit_l1_svm(t, C, None if w is None else w[rows], K=Kp)[0]
        f = sol.decision_function(K[:, rows])
        f[rows] = _span_rule_loo_decision(sol, Kp)
        outs.append(f)
    return outs


def ovo_loo_predictions(outputs: Sequence[np.ndarray], n_classes: int) -> np.ndarray:
    """Encoded predictions from one-vs-one pairwise values by libsvm's vote: pair ``(a, b)``
    votes ``a`` when its value is positive, else ``b``; the most votes win, ties going to the
    lower class (libsvm's ``svm_predict``)."""
    first, second = ovo_pairs(n_classes)
    votes = np.zeros((np.shape(outputs[0])[0], n_classes))
    for a, b, f in zip(first, second, outputs):
        pos = np.asarray(f) > 0
        votes[pos, a] += 1
        votes[~pos, b] += 1
    return np.argmax(votes, axis=1)


def l2_loo_outputs(
    K: np.ndarray,
    tasks: Sequence[np.ndarray],
    C: float,
    sample_weight: np.ndarray | None = None,
    *,
    groups: np.ndarray | None = None,
    init_supports: Sequence[np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Closed-form leave-one-out (or leave-one-group-out) outputs of each task's L2-SVM at
    ``C`` (RBSVM eq. (27); its block form with ``groups``): one array per task, one L2-SVM
    fit each.

    ``init_supports`` (one mask per task, e.g. the hinge-loss SVC's support vectors of
    :func:`l1_loo_outputs` at the same ``C``) warm-starts the solver; the solution is unique,
    so the start changes the cost only (:func:`svmtune.svm.fit_l2_svm`).
    """
    K, tasks, w = _checked(K, tasks, C, sample_weight)
    inits = None
    if init_supports is not None:
        if len(init_supports) != len(tasks):
            raise ValueError("init_supports needs one support mask per task")
        inits = [support_mask(m, K.shape[0]) for m in init_supports]
    codes = None if groups is None else group_codes(groups, K.shape[0])
    return _l2_loo_outputs(K, tasks, C, w, codes=codes, init_supports=inits)


def _l2_loo_outputs(K, tasks, C, w, *, codes=None, init_supports=None) -> list[np.ndarray]:
    """:func:`l2_loo_outputs` of checked inputs (``auto``'s referee, module docstring), the
    groups as their codes (:func:`svmtune.loo.rbsvm_groups.group_codes`, encoded once by the
    caller)."""
    inits = [None] * len(tasks) if init_supports is None else list(init_supports)
    outs = []
    for t, init in zip(tasks, inits):
        sol = _fit_l2_svm(K, t, C, w, init)
        if codes is None:
            outs.append(_closed_form_loo(sol, K, None))
        else:
            outs.append(_lgo_terms(sol, K, codes, sol.factor.inverse())[0])
    return outs


def _checked(K, tasks, C, sample_weight, n=None):
    """``(K, tasks, w)`` checked as the public functions take them: a finite ``(n, n)``
    kernel matrix, {-1, +1} task labels of length ``n``, a positive finite ``C`` and valid
    weights (``n``: the tasks' length unless given)."""
    if n is None:
        if not len(tasks):
            raise ValueError("tasks is empty: pass at least one {-1, +1} label vector")
        n = len(tasks[0])
    K = check_kernel_matrix(K, n)
    tasks = [check_pm1(t, n, name="every task") for t in tasks]
    check_C(C)
    return K, tasks, validate_sample_weight(sample_weight, n)


def referee_error(
    y: np.ndarray,
    outputs: Sequence[np.ndarray],
    sample_weight: np.ndarray | None = None,
    *,
    pairwise: bool = False,
) -> float:
    """Leave-one-out error rate of the outputs of :func:`l1_loo_outputs`,
    :func:`l2_loo_outputs` (:func:`svmtune.loo.closed_form.loo_error_rate`: one-vs-rest arg-max)
    or, with ``pairwise``, :func:`ovo_loo_outputs` (libsvm's votes).

    Weighted by ``sample_weight`` (a weight counts as repeated rows, so a class weight
    ``"balanced"`` gives the balanced error).
    """
    if not pairwise:
        return loo_error_rate(y, outputs, sample_weight)
    y = np.asarray(y)
    wrong = ovo_loo_predictions(outputs, int(np.max(y)) + 1) != y
    w = np.ones(y.size) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    return float(w @ wrong / w.sum())


def row_losses(
    y: np.ndarray, outputs: Sequence[np.ndarray], *, pairwise: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Per-row 0/1 loss and cross-entropy of leave-one-out outputs, for the paired tests of
    :mod:`svmtune.loo.paired`.

    The 0/1 loss is the error of the prediction the outputs make
    (:func:`svmtune.loo.closed_form.loo_predictions`: a single task's sign, or the one-vs-rest
    arg-max; ``pairwise``: libsvm's one-vs-one vote, :func:`ovo_loo_predictions`), the loss
    whose mean :func:`referee_error` returns unweighted.  The cross-entropy is RBSVM's
    eq. (28), ``log(1 + exp(-2 t r))`` for a task label ``t`` in {-1, +1} and output ``r``,
    summed over the one-vs-rest tasks (over the pairs a row belongs to, ``pairwise``): smooth
    in the outputs, so it separates candidates whose 0/1 errors tie.

    Parameters
    ----------
    y : array (n,)
        Encoded labels ``0..k-1``.
    outputs : sequence of array (n,)
        One array per one-vs-rest task (:func:`svmtune.methods.base.ovr_tasks`' order) or,
        with ``pairwise``, per pair of :func:`svmtune.estimators.ovo_pairs`.

    Returns
    -------
    (err, xent) : arrays (n,)
    """
    y = np.asarray(y)
    xent = np.zeros(y.size)
    if pairwise:
        k = int(np.max(y)) + 1
        pred = ovo_loo_predictions(outputs, k)
        for a, b, f in zip(*ovo_pairs(k), outputs):
            rows = (y == a) | (y == b)
            t = np.where(y[rows] == a, 1.0, -1.0)
            xent[rows] += _loo_loss(t, np.asarray(f)[rows], "cross_entropy")[0]
        return (pred != y).astype(float), xent
    for t, f in zip(ovr_tasks(y), outputs):
        xent += _loo_loss(t, np.asarray(f), "cross_entropy")[0]
    return (loo_predictions(outputs) != y).astype(float), xent
