"""Model entropy: the uncertainty of an SVM from its leave-one-out outputs (RBSVM §III-D).

RBSVM Definition 1, eq. (39)-(40):

    E_M = -(1/n) sum_i [P_i log P_i + (1 - P_i) log(1 - P_i)]

with ``P_i`` the probability that the leave-one-out prediction of point ``i`` is correct:
``P_i = (1 + y_i tanh r_i) / 2`` when the prediction is correct (``y_i r_i > 0``), and
``P_i = 1/2`` (maximal entropy) when it is wrong.  The paper states the range ``[0, 1]`` and its
Table V reports values up to 0.94, above ``ln 2 = 0.69``, so the logarithm is base 2 (the
default here; ``base=np.e`` gives nats).

:func:`l2_model_entropy` fits the L2-SVM at given hyperparameters and evaluates the entropy of
its closed-form LOO outputs (RBSVM eq. (27)); the benchmark calls it for every method's chosen
hyperparameters (paper Table V).  Above ``max_exact`` samples, where the ``n x n`` kernel
matrix of the exact L2-SVM no longer fits in memory, it evaluates the same closed forms on the
Nystroem approximation of the RBF kernel (:mod:`svmtune.lowrank`; rank rule of
:func:`svmtune.lowrank.pivoted_cholesky_landmarks` at the model's own width).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import entr

from svmtune._labels import ovr_tasks
from svmtune._validation import validate_sample_weight
from svmtune.estimators import class_weight_vector
from svmtune.kernels import Kernel, squared_distances
from svmtune.loo.closed_form import _check_encoded_labels, closed_form_loo
from svmtune.loo.rbsvm_lowrank import lowrank_loo
from svmtune.lowrank import fit_tasks_lowrank, pivoted_cholesky_landmarks
from svmtune.svm import fit_l2_svm

#: largest n for which :func:`l2_model_entropy` forms the exact n x n kernel (1.8 GB at 15,000)
MAX_EXACT_ENTROPY = 15000
#: landmark cap of its low-rank path above that size
LOWRANK_ENTROPY_RANK = 500

__all__ = ["correct_probability", "model_entropy", "l2_model_entropy"]


def correct_probability(y: np.ndarray, loo: np.ndarray) -> np.ndarray:
    """``P_i`` of RBSVM eq. (40): ``(1 + y_i tanh r_i)/2`` if ``y_i r_i > 0``, else ``1/2``.

    Parameters
    ----------
    y : array of {-1, +1}
    loo : array
        Leave-one-out decision values ``r_i``.
    """
    y = np.asarray(y, dtype=float)
    r = np.asarray(loo, dtype=float)
    if y.shape != r.shape:
        raise ValueError(f"y and loo must have the same shape, got {y.shape} and {r.shape}")
    if y.size == 0:
        raise ValueError("model entropy needs at least one sample")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("model entropy needs labels in {-1, +1}")
    if not np.all(np.isfinite(r)):
        raise ValueError("leave-one-out outputs must be finite")
    correct = y * r > 0
    return np.where(correct, 0.5 * (1.0 + np.abs(np.tanh(r))), 0.5)


def model_entropy(
    y: np.ndarray,
    loo: np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    base: float = 2.0,
) -> float:
    """Model entropy of RBSVM eq. (39) from labels and leave-one-out outputs.

    Parameters
    ----------
    y : array of {-1, +1}
    loo : array
        Leave-one-out decision values (e.g. :func:`svmtune.loo.closed_form.closed_form_loo`).
    sample_weight : array, optional
        Weighted mean instead of eq. (39)'s plain mean.
    base : float
        Logarithm base; 2 gives the paper's range [0, 1].

    Returns
    -------
    float
        In ``[0, log_base 2]``; 0 when every point is predicted correctly with certainty
        (``|tanh r| = 1``), 1 (base 2) when every prediction is wrong or at ``r = 0``.
    """
    if not (np.isfinite(base) and base > 1):
        raise ValueError(f"base must be a number > 1, got {base}")
    P = correct_probability(y, loo)
    h = (entr(P) + entr(1.0 - P)) / np.log(base)  # entr(p) = -p log p, entr(0) = 0
    if sample_weight is None:
        return float(np.mean(h))
    w = validate_sample_weight(sample_weight, h.shape[0])
    return float(w @ h / w.sum())


def l2_model_entropy(
    X: np.ndarray,
    y: np.ndarray,
    params: dict[str, Any],
    sample_weight: np.ndarray | None = None,
    *,
    max_exact: int = MAX_EXACT_ENTROPY,
    rank: int = LOWRANK_ENTROPY_RANK,
    rank_tol: float = 1e-2,
) -> float:
    """Model entropy (RBSVM eq. (39)) of the L2-SVM trained at ``params`` on ``(X, y)``.

    Fits the exact L2-SVM (:func:`svmtune.svm.fit_l2_svm`) at the given hyperparameters,
    computes its closed-form leave-one-out outputs (RBSVM eq. (27)) and returns their model
    entropy; for ``k > 2`` classes, the mean of the one-vs-rest tasks' entropies.  For
    ``n > max_exact`` (RBF kernels only) the L2-SVM and its LOO outputs are those of the
    Nystroem kernel ``K~ = Z Z^T`` on pivoted-Cholesky landmarks chosen at the model's width
    (:func:`svmtune.lowrank.fit_l2_svm_lowrank`, :func:`svmtune.loo.rbsvm_lowrank.lowrank_loo`):
    ``O(n m^2)`` time and ``O(n m)`` memory instead of ``O(n^2)`` memory.

    Parameters
    ----------
    X : ndarray (n, d)
        Standardised features.
    y : array of int
        Encoded labels ``0..k-1``.
    params : dict
        ``best_params_`` of any method: ``kernel`` (default "rbf"), ``sigma`` or ``gamma``
        (or the poly/sigmoid parameters), ``C`` and optionally ``class_weight`` (keys are the
        encoded labels, or "balanced").
    sample_weight : array (n,), optional
        Per-sample weights (``C_i = C w_i`` times any class weight; the sample weights alone
        also weight the mean).
    max_exact : int
        Largest ``n`` for which the exact ``n x n`` kernel matrix is formed.
    rank, rank_tol : int, float
        Landmark cap and relative trace-residual target of the low-rank path
        (:func:`svmtune.lowrank.pivoted_cholesky_landmarks`).

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    ValueError
        If ``y`` is not encoded labels ``0..k-1`` with every class present, ``X`` does not
        have one row per label or ``sample_weight`` is not ``n`` finite non-negative weights
        with a positive sum.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"X must be (n, d) with n = len(y), got X {X.shape} and y {y.shape}")
    if y.size == 0:
        raise ValueError("model entropy needs at least one sample")
    if "C" not in params:
        raise ValueError("params must contain C")
    kern = Kernel.from_params(params)
    C = float(params["C"])
    numeric = y.dtype.kind in "biu" or (y.dtype.kind == "f" and np.all(np.isfinite(y)))
    _check_encoded_labels(y, y.shape[0], int(np.max(y)) + 1 if numeric else 1)
    k = int(y.max()) + 1
    missing = np.flatnonzero(np.bincount(y.astype(int), minlength=k) == 0)
    if missing.size:
        raise ValueError(
            f"y must hold encoded labels 0..{k - 1} with every class present; class(es) "
            f"{missing.tolist()} have no sample. Encode them, e.g. with "
            "np.unique(y, return_inverse=True)[1]"
        )
    validate_sample_weight(sample_weight, y.shape[0])
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    w = np.ones(y.shape[0]) if sw is None else sw
    w = w * class_weight_vector(y, np.arange(k), params.get("class_weight"), sw)
    tasks = ovr_tasks(y)
    if X.shape[0] > max_exact:
        loo = _lowrank_loo_outputs(X, tasks, kern, C, w, rank=rank, rank_tol=rank_tol)
    else:
        K = kern(X)
        loo = [closed_form_loo(fit_l2_svm(K, t, C, sample_weight=w), K) for t in tasks]
    return float(np.mean([model_entropy(t, r, sample_weight=sw) for t, r in zip(tasks, loo)]))


def _lowrank_loo_outputs(
    X: np.ndarray, tasks: list[np.ndarray], kern: Kernel, C: float, w: np.ndarray, *, rank, rank_tol
) -> list[np.ndarray]:
    """Closed-form LOO outputs of the L2-SVM on the Nystroem kernel, one array per task."""
    if kern.name != "rbf":
        raise ValueError(
            f"the low-rank model entropy (n > max_exact) needs an RBF kernel, got {kern.name!r}"
        )
    # landmarks among the samples the SVM is trained on: rows of weight 0 are absent
    pos = np.flatnonzero(w > 0)
    idx, _ = pivoted_cholesky_landmarks(X[pos], kern.sigma, tol=rank_tol, max_rank=rank)
    idx = pos[idx]
    D2_nm = squared_distances(X, X[idx])
    theta = np.log([kern.sigma, C])
    _, nf, sols = fit_tasks_lowrank(D2_nm, D2_nm[idx], tasks, theta, sample_weight=w)
    return [lowrank_loo(sol, nf.Z) for sol in sols]
