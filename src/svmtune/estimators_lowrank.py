"""The low-rank L2-SVM as a final model: the exact squared-hinge SVM on a Nystroem RBF kernel.

:class:`LowRankL2SVC` trains the model the low-rank selection criteria score
(:mod:`svmtune.loo.rbsvm_lowrank`, :mod:`svmtune.methods._lowrank_search`): the L2-SVM of RBSVM
eq. (6)-(7) on the rank-``m`` Nystroem kernel ``K~ = Z Z^T``, ``Z = K_nm R^{-1}``,
``K_mm + jitter I = R^T R`` (:mod:`svmtune.lowrank`), solved exactly by the primal Newton
method of :func:`svmtune.lowrank.fit_l2_svm_lowrank` run on row blocks
(:func:`svmtune.lowrank._blocked_solver.fit_l2_svm_blocks`): ``Z`` is computed block by block
and never held whole.  On ``Z`` this is the linear squared-hinge SVM
with primal vector ``v = Z^T beta``; the model keeps only the ``m`` landmark rows and
``W = R^{-1} v``, so that

    f(x) = k(x, X_L) R^{-1} v + b = k(x, X_L) W + b,

``O(m d)`` per new point and no training data.  Its cost model is
:func:`lowrank_fit_flops`, counted from the code it runs.
"""

from __future__ import annotations

import numbers
from functools import partial

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn import get_config
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

import svmtune.estimators as _estimators
from svmtune._dask_inputs import dask_rows
from svmtune._option_values import check_positive, check_real
from svmtune._standardised_rows import StandardisedRows
from svmtune._validation import check_labels, validate_sample_weight
from svmtune.estimators import _fit_inputs, _label_inputs, tanh_proba
from svmtune.kernels import squared_distances
from svmtune.lowrank import nystroem_factor, pivoted_cholesky_landmarks
from svmtune.lowrank._blocked_solver import (
    WARM_START_STRIDE,
    fit_l2_svm_blocks,
    warm_start_stride,
)
from svmtune.lowrank._blocks import (
    BlockOp,
    FeatureBasis,
    NystroemMap,
    block_rows,
    features_fit_cache,
    is_dask_array,
    margins_block,
    residual_block,
)
from svmtune.lowrank._dask_blocks import gather_rows, row_blocks
from svmtune.lowrank._nystroem import landmark_subsample

__all__ = [
    "LowRankL2SVC",
    "lowrank_fit_flops",
    "LANDMARK_ROWS",
    "NEWTON_ITERATIONS",
    "GRAM_PASSES",
]

#: rows the landmark rule of :class:`LowRankL2SVC` runs on by default (a uniform subsample
#: where there are more): its factor holds ``rank x landmark_rows`` floats, 80 MB at the
#: default rank of 500, whatever ``n``; 40 candidate rows a landmark at that rank; and the
#: trace residual / n of the landmarks, a mean of per-row residuals in [0, 1], is estimated on
#: the subsample with a standard error of at most ``sqrt(tol / landmark_rows)``, 7e-4 at the
#: default ``rank_tol`` of 1e-2 (the variance of values in [0, 1] is at most their mean)
LANDMARK_ROWS = 20_000

#: Newton iterations per task that :func:`lowrank_fit_flops` assumes by default.  The primal
#: Newton method of :func:`svmtune.lowrank.fit_l2_svm_lowrank` converges finitely from
#: ``v = 0``; measured on 3,000-row samples of nine bundled sets (ijcnn1, adult/a9a,
#: eeg_eye_state, bank_marketing, MNIST 1 v 7, banana, twonorm, splice, image_segmentation;
#: standardised; sigma = (0.5, 1, 2) sqrt(d), C = 0.1 ... 1000, rank 200; 225 tasks):
#: median 7, upper quartile 11, 90th percentile 15, most 36 (large C takes the most;
#: ``benchmarks/lowrank_newton_counts.py`` counts them); the default is the upper quartile
NEWTON_ITERATIONS = 11
#: rows that build the active set's Gram matrix in the Newton solver, in units of ``n``, per
#: task (the first step builds it from all rows, later steps update it by the rows that
#: enter or leave the active set): on the measurements of :data:`NEWTON_ITERATIONS`, median
#: 1.47, upper quartile 1.9, most 2.61; the default is the upper quartile
GRAM_PASSES = 1.9


def lowrank_fit_flops(
    n: int,
    d: float,
    m: int,
    n_tasks: int = 1,
    *,
    n_newton: float = NEWTON_ITERATIONS,
    gram_passes: float = GRAM_PASSES,
    sparse: bool = False,
    cached: bool | None = None,
    landmark_rows: int | None = LANDMARK_ROWS,
) -> float:
    """Floating-point operations of :meth:`LowRankL2SVC.fit`: a model, counted from the code.

    Each term is the leading count of one step (a multiply-add is 2 flops; ``O(n m)``,
    ``O(n d)`` and ``O(m^2)`` terms left out but where stated):

    * landmarks, :func:`svmtune.lowrank.pivoted_cholesky_landmarks`: each of the ``m`` pivots
      computes the squared distances of all rows to the pivot row, ``4 n d`` for dense ``X``
      (scikit-learn's ``euclidean_distances`` recomputes the ``n`` squared row norms,
      ``2 n d``, besides the dot products, ``2 n d``) and ``2 n d`` for sparse ``X`` (norms
      computed once), and updates the residual by ``L[:, :k] @ L[j, :k]``, ``2 n k``; summed
      over ``k < m``: ``4 n m d + n m^2`` (sparse: ``2 n m d + n m^2``), with ``n`` the rows
      the rule runs on, at most ``landmark_rows`` (:func:`svmtune.lowrank._nystroem.
      landmark_subsample`);
    * the kernel rows ``K(X, X_L)`` (:class:`svmtune.lowrank._blocks.NystroemMap`), ``2 m d``
      a row for the product ``X X_L^T`` (the ``n m`` exponentials left out), after the
      Cholesky factor of ``K_mm``, ``m^3 / 3``, and ``R^{-1}``, ``m^3``: computed once for the
      ``n`` rows when they fit :data:`svmtune.lowrank._blocks.FEATURE_CACHE_BYTES`
      (``cached``), else again by every pass that reads rows
      (:mod:`svmtune.lowrank._blocked_solver`): the trace residual's pass over the ``n`` rows
      and, per task, one pass over all rows per Newton iteration, the Gram matrix's rows and
      the support set's final Gram matrix (counted at ``n`` rows); no pass makes a
      triangular solve with ``R``;
    * the trace residual, once: the features ``k_i R^{-1}`` of the ``n`` rows, ``2 n m^2``;
    * per task, the Newton solver :func:`svmtune.lowrank._blocked_solver.fit_l2_svm_blocks`:
      the active set's Gram matrix ``Z_A^T diag(c) [Z_A, 1, y]`` from ``gram_passes * n``
      rows in all (all rows on the first step of a cold start; then the rows that enter or
      leave the active set, or all of it again when more than half of it changes, so at most
      ``n`` rows an iteration), each row mapped to its features, ``2 m^2``, and summed by a
      symmetric rank-k update, ``(m + 2)^2``; each of the ``n_newton`` iterations solves the
      ``(m + 1)``-square symmetric system, ``(m + 1)^3 / 3``, and computes the margins along
      the step and the gradient on the kernel rows, ``2 n m`` each (the line search's trials
      are ``O(n)``); then once the support set's system (RBSVM eq. (22)) through a fresh Gram
      matrix of ``S`` counted at ``|S| = n`` rows, and the Cholesky factor of
      ``I + Z_S^T D^{-1} Z_S``, ``m^3 / 3``;
    * where :func:`svmtune.lowrank._blocked_solver.warm_start_stride` starts each task from
      the solution on every 16th row: that fit, counted as this model's per-task terms on
      ``n / 16`` rows (kernel rows cached by the same rule; its own nested warm start left
      out), and one margins pass over all
      rows, ``2 n m`` (plus its kernel rows when not cached); ``n_newton`` and
      ``gram_passes`` stay those of a cold start, an upper bound (the warm start's point
      needs fewer iterations and Gram rows, ``benchmarks/lowrank_blocked_passes.py``).

    Parameters
    ----------
    n : int
        Training rows (of positive weight).
    d : float
        Features per row: the number of columns for dense ``X``, the mean number of stored
        entries per row for sparse ``X``.
    m : int
        Rank (landmarks).
    n_tasks : int
        Binary problems: 1 for two classes, the number of classes for one-vs-rest.
    n_newton : float
        Newton iterations per task (:data:`NEWTON_ITERATIONS` by default).
    gram_passes : float
        Rows of the Gram matrix per task in units of ``n`` (:data:`GRAM_PASSES` by default;
        at most ``n_newton``).
    sparse : bool
        Whether ``X`` is a scipy sparse matrix (the landmark rule's constant).
    cached : bool, optional
        Whether the features are kept after their first pass; by default whether ``n x m``
        floats fit :data:`svmtune.lowrank._blocks.FEATURE_CACHE_BYTES`, as the fit decides.
    landmark_rows : int or None
        The estimator's ``landmark_rows`` (:data:`LANDMARK_ROWS` by default; None: all rows).

    Returns
    -------
    float
    """
    for name, value in (("n", n), ("m", m), ("n_tasks", n_tasks)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    for name, value in (("d", d), ("n_newton", n_newton), ("gram_passes", gram_passes)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
            raise ValueError(f"{name} must be a positive number, got {value!r}")
    _check_landmark_rows(landmark_rows)
    if cached is None:
        cached = features_fit_cache(int(n), int(m))
    s = float(n if landmark_rows is None else min(n, landmark_rows))
    n_i, m_i = int(n), int(m)
    n, d, m, n_tasks = float(n), float(d), float(m), float(n_tasks)
    landmarks = (2.0 if sparse else 4.0) * s * m * d + s * m**2
    passes = 1.0 if cached else 1.0 + n_tasks * (float(n_newton) + float(gram_passes) + 1.0)
    kernel = m**3 / 3.0 + m**3 + passes * n * 2.0 * m * d + 2.0 * n * m**2
    task = _task_flops(n, m, float(n_newton), float(gram_passes))
    if warm_start_stride(n_i, m_i):
        n_sub = -(-n_i // WARM_START_STRIDE)
        sub_cached = cached and features_fit_cache(n_sub, m_i)  # RowBlocks.subsample
        sub_passes = 1.0 if sub_cached else float(n_newton) + float(gram_passes) + 1.0
        task += _task_flops(float(n_sub), m, float(n_newton), float(gram_passes))
        task += sub_passes * n_sub * 2.0 * m * d + 2.0 * n * m + (0.0 if cached else 2 * n * m * d)
    return landmarks + kernel + n_tasks * task


def _task_flops(n: float, m: float, n_newton: float, gram_passes: float) -> float:
    """The Newton solver's flops of one task on ``n`` rows (:func:`lowrank_fit_flops`)."""
    gram = gram_passes * n * (2.0 * m**2 + (m + 2.0) ** 2)
    steps = n_newton * ((m + 1.0) ** 3 / 3.0 + 4.0 * n * m)
    support = n * (2.0 * m**2 + (m + 2.0) ** 2) + m**3 / 3.0
    return gram + steps + support


def _check_params(est: LowRankL2SVC) -> None:
    """Raise with the parameter's name and range unless every parameter is valid."""
    check_positive("C", est.C)
    check_positive("sigma (the RBF width)", est.sigma)
    for name in ("rank_tol", "jitter"):
        check_real(name, getattr(est, name))
    rank = est.rank
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or rank < 1:
        raise ValueError(
            f"rank (the largest number of landmarks) must be an integer >= 1, got {rank!r}"
        )
    if not 0.0 < est.rank_tol < 1.0:
        raise ValueError(
            f"rank_tol (the trace residual / n the landmarks may leave) must lie in (0, 1), "
            f"got {est.rank_tol}"
        )
    if not (np.isfinite(est.jitter) and est.jitter >= 0):
        raise ValueError(f"jitter must be a finite number >= 0, got {est.jitter}")
    _check_landmark_rows(est.landmark_rows)
    check_random_state(est.random_state)  # None, an int or a RandomState (none drawn here)


def _check_landmark_rows(value) -> None:
    """Raise unless ``value`` is None or an integer >= 1."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(
            f"landmark_rows (the most rows the landmark rule runs on) must be an integer "
            f">= 1 or None, got {value!r}"
        )


def _as_rows(X):
    """Sparse ``X`` as CSR (row blocks are slices), dense as it is."""
    return sp.csr_matrix(X) if sp.issparse(X) else X


def _block_rows(m: int) -> int:
    """Rows per block so that a block holds at most
    :data:`svmtune.estimators.DECISION_BLOCK` kernel values (read at the call)."""
    return block_rows(m, _estimators.DECISION_BLOCK)


class LowRankL2SVC(ClassifierMixin, BaseEstimator):
    """Squared-hinge SVM (L2-SVM) on a rank-``m`` Nystroem RBF kernel, solved exactly.

    The model the low-rank selection criteria score (module docstring): landmarks by pivoted
    Cholesky of the RBF kernel at ``sigma``
    (:func:`svmtune.lowrank.pivoted_cholesky_landmarks`: deterministic, at most ``rank``,
    stopping once the trace residual / n is at most ``rank_tol``; among the rows of positive
    sample weight, the residual weighted by ``sample_weight``), the Nystroem features
    ``Z = K_nm R^{-1}`` (the factor ``R`` of :func:`svmtune.lowrank.nystroem_factor`) and the
    exact L2-SVM on ``Z Z^T + diag(1 / (C w))`` (RBSVM eq. (6)-(7);
    :func:`svmtune.lowrank.fit_l2_svm_lowrank`), one task for two classes and one-vs-rest
    tasks otherwise, as :class:`svmtune.estimators.L2SVC`.  With every row a landmark and
    ``jitter=0`` it is :class:`~svmtune.estimators.L2SVC` with the RBF kernel.

    Where there are more than ``landmark_rows`` rows, the landmark rule runs on a uniform
    subsample of ``landmark_rows`` of the rows of positive weight (drawn with
    ``random_state``, sorted; their sample weights with them:
    :func:`svmtune.lowrank._nystroem.landmark_subsample`), so its factor holds
    ``landmark_rows x m`` floats whatever ``n``; with at most ``landmark_rows`` rows it runs
    on all of them, as it always did.  ``trace_residual_`` is measured on all rows either way.

    Fitting costs ``O(s m d + s m^2)`` for the landmarks (``s = min(n, landmark_rows)``),
    ``O(n m d)`` for the factor and ``O(n m^2)`` per task (:func:`lowrank_fit_flops` counts
    it).  Beyond the landmark rule's ``O(s m)``
    (:func:`svmtune.lowrank.pivoted_cholesky_landmarks`) it holds ``O(m^2 + block x m)`` and
    ``O(n)`` vectors: the features ``Z`` are computed in row blocks at each pass of the
    solver (:mod:`svmtune.lowrank._blocks`), and kept only while ``n x m`` floats fit
    :data:`svmtune.lowrank._blocks.FEATURE_CACHE_BYTES`.  The fitted model keeps the ``m``
    landmark rows and one ``m``-vector per task, and ``decision_function`` costs ``O(m d)``
    per point, in blocks of :data:`svmtune.estimators.DECISION_BLOCK` kernel values.  A sparse
    scipy ``X`` (CSR or CSC; other formats are converted to CSR) is never densified; the
    landmark rows are then kept as a CSR matrix.  A dask array ``X`` is fitted and predicted
    in its row chunks on its scheduler (:mod:`svmtune.lowrank._dask_blocks`; predictions are
    lazy dask arrays); only the landmark rule's ``s`` rows are gathered to the client
    (:func:`svmtune.lowrank._dask_blocks.gather_rows`), and ``X`` is checked by its
    metadata and one reduction.

    Parameters
    ----------
    C : float, default=1.0
        Regularisation of the squared hinge loss (per sample: ``C w_i``).
    sigma : float, default=1.0
        RBF width; ``gamma = 1 / (2 sigma^2)``.
    rank : int, default=500
        Largest number of landmarks ``m``.
    rank_tol : float, default=1e-2
        The landmarks stop once the trace residual ``trace(K - K~) / n`` is at most this, in
        (0, 1).
    jitter : float, default=1e-8
        Added to the diagonal of ``K_mm`` before its Cholesky factor (raised tenfold, with a
        ``RuntimeWarning``, until it succeeds).
    class_weight : dict or "balanced", optional
        Multiplies ``C`` per class, as in :class:`~svmtune.estimators.L2SVC`, and weighs the
        class's rows in the landmark rule as a sample weight does (the model of the same
        per-sample weights).
    landmark_rows : int or None, default=LANDMARK_ROWS (20,000)
        Most rows the landmark rule runs on; None: all rows.  The default
        (:data:`LANDMARK_ROWS`) bounds the rule's factor at 80 MB at the default rank and
        estimates the trace residual / n to within ``sqrt(rank_tol / landmark_rows)`` (one
        standard error; 7e-4 at the default ``rank_tol``).  At most ``landmark_rows``
        landmarks: raise it with ``rank``.
    random_state : None, int or numpy.random.RandomState, default=None
        The landmark rule's subsample (scikit-learn's ``check_random_state``); unused
        where there are at most ``landmark_rows`` rows.

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    landmarks_ : ndarray of int (m,)
        Landmark rows of the training ``X`` (of the subsample where it is drawn), in pivot
        order.
    landmark_points_ : ndarray (m, n_features) or scipy.sparse.csr_matrix
        Those rows (CSR when ``X`` was sparse).
    coef_ : ndarray (n_tasks, m)
        ``W^T``, ``W = R^{-1} v`` per task: ``f(x) = k(x, X_L) W + b``.
    intercept_ : ndarray (n_tasks,)
    n_support_ : ndarray of int (n_tasks,)
        Support vectors (rows with ``alpha_i > 0``) of each task.
    n_iter_ : ndarray of int (n_tasks,)
        Newton iterations of each task.
    rank_ : int
        Landmarks used, ``m``.
    trace_residual_ : float
        ``sum_i w_i (1 - K~_ii) / sum_i w_i`` over all training rows of positive weight, also
        where the landmarks come from a subsample (``w`` the sample weights; unweighted it
        is :attr:`svmtune.lowrank.NystroemFactor.trace_residual` of the factor at ``sigma``).
    jitter_ : float
        The jitter the Cholesky factor of ``K_mm`` took.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Where ``X`` had string column names.
    """

    def __init__(
        self,
        *,
        C: float = 1.0,
        sigma: float = 1.0,
        rank: int = 500,
        rank_tol: float = 1e-2,
        jitter: float = 1e-8,
        class_weight=None,
        landmark_rows: int | None = LANDMARK_ROWS,
        random_state=None,
    ):
        self.C = C
        self.sigma = sigma
        self.rank = rank
        self.rank_tol = rank_tol
        self.jitter = jitter
        self.class_weight = class_weight
        self.landmark_rows = landmark_rows
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        """Fit the landmarks, the Nystroem factor and the L2-SVM of every task.

        The features ``Z`` are never held whole: the trace residual and every Newton pass
        compute them block by block (:mod:`svmtune.lowrank._blocks`,
        :func:`svmtune.lowrank._blocked_solver.fit_l2_svm_blocks`), or keep their blocks when
        ``Z`` fits :data:`svmtune.lowrank._blocks.FEATURE_CACHE_BYTES`.

        Parameters
        ----------
        X : array-like, scipy sparse matrix or dask array (n_samples, n_features)
            A dask array's row chunks are the blocks of the passes, run on its scheduler; the
            landmark rule (:func:`svmtune.lowrank.pivoted_cholesky_landmarks`, which reads
            every row at each pivot) runs on a NumPy copy of its subsample's rows alone
            (all rows where there are at most ``landmark_rows``).
        y : array-like (n_samples,)
        sample_weight : array-like (n_samples,) or float, optional
            A weight stands for repeated rows (in the landmark rule too); rows of weight 0
            take no part.

        Returns
        -------
        self
        """
        _check_params(self)
        if is_dask_array(X) or isinstance(X, StandardisedRows):  # never gathered whole
            X, y_enc, w, sw = _lazy_fit_inputs(self, X, y, sample_weight)
        else:
            X, y_enc, w = _fit_inputs(self, X, y, sample_weight, accept_sparse=("csr", "csc"))
            X = _as_rows(X)
            sw = validate_sample_weight(sample_weight, X.shape[0])
        # the class weights too: a class weight is C times that weight, the model of the
        # same per-sample weights, which stand for repeated rows in the landmark rule
        idx, X_L = self._landmarks(X, sw if self.class_weight is None else w)
        D2_mm = squared_distances(X_L)  # symmetric, zero diagonal; sparse stays sparse
        R, jitter = _landmark_factor(D2_mm, self.sigma, self.jitter)
        m = idx.size
        # the passes read the kernel rows k(x, X_L); R enters their sums once (FeatureBasis)
        rows = row_blocks(X, NystroemMap(X_L, self.sigma), m, _block_rows(m))
        # the trace residual over the rows of positive weight, weighted by sample_weight
        wz = np.where(w > 0, 1.0 if sw is None else sw, 0.0)
        R_inv = FeatureBasis(R).inverse()
        resid = rows.run([BlockOp(residual_block, (wz,), (R_inv,), reduce=True)])[0]
        V, b, n_sv, n_it = [], [], [], []
        for t in _tasks(y_enc, len(self.classes_)):
            sol = fit_l2_svm_blocks(rows, t, self.C, sample_weight=w, R=R)
            V.append(sol.v)  # the primal vector v = Z_S^T beta
            b.append(sol.b)
            n_sv.append(sol.n_support)
            n_it.append(sol.n_iter)
        self.landmarks_ = idx
        self.landmark_points_ = X_L
        self.coef_ = sla.solve_triangular(R, np.column_stack(V), lower=False).T.copy()
        self.intercept_ = np.asarray(b, dtype=float)
        self.n_support_ = np.asarray(n_sv, dtype=int)
        self.n_iter_ = np.asarray(n_it, dtype=int)
        self.rank_ = int(m)
        self.trace_residual_ = float(resid[0] / wz.sum())
        self.jitter_ = jitter
        return self

    def _landmarks(self, X, weights: np.ndarray | None) -> tuple[np.ndarray, object]:
        """The landmark rows of ``X`` (indices, pivot order) and those rows in memory (CSR
        for a sparse ``X``): :func:`svmtune.lowrank.pivoted_cholesky_landmarks` on all rows,
        or on the subsample of :func:`svmtune.lowrank._nystroem.landmark_subsample` where
        there are more than ``landmark_rows``, its rows alone gathered from a dask ``X``."""
        sub = landmark_subsample(X.shape[0], self.landmark_rows, weights, self.random_state)
        if sub is None:
            X_s, w_s = gather_rows(X, None), weights
        else:
            X_s, w_s = gather_rows(X, sub), None if weights is None else weights[sub]
        idx, _ = pivoted_cholesky_landmarks(
            X_s, self.sigma, tol=self.rank_tol, max_rank=self.rank, sample_weight=w_s
        )
        X_L = X_s[idx]
        X_L = sp.csr_matrix(X_L, dtype=float) if sp.issparse(X_L) else np.array(X_L, dtype=float)
        return (idx if sub is None else sub[idx]), X_L

    def decision_function(self, X):
        """``k(x, X_L) W + b``: shape (n,) for two classes (positive: ``classes_[1]``),
        (n, n_classes) one-vs-rest otherwise; in blocks of
        :data:`svmtune.estimators.DECISION_BLOCK` kernel values
        (:func:`svmtune.lowrank._blocks.margins_block` on the kernel rows).  A dask ``X``
        gives a lazy dask array in its row chunks."""
        check_is_fitted(self)
        kern = NystroemMap(self.landmark_points_, self.sigma)
        op = BlockOp(margins_block, consts=(self.coef_.T, self.intercept_))
        if is_dask_array(X):
            if X.ndim != 2 or X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has shape {X.shape}, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input"
                )
            F = row_blocks(X.astype(float), kern, self.rank_, _block_rows(self.rank_)).lazy_rows(op)
        else:
            X = _as_rows(validate_data(self, X, reset=False, accept_sparse=("csr", "csc")))
            F = row_blocks(X, kern, self.rank_, _block_rows(self.rank_), 0).run([op])[0]
        return F[:, 0] if len(self.classes_) == 2 else F

    def predict(self, X):
        """The class of the largest decision value (two classes: its sign); lazy for a dask
        ``X``."""
        F = self.decision_function(X)
        idx = (F > 0).astype(int) if F.ndim == 1 else F.argmax(axis=1)
        if is_dask_array(idx):
            return idx.map_blocks(partial(np.take, self.classes_), dtype=self.classes_.dtype)
        return self.classes_[idx]

    def predict_proba(self, X):
        """RBSVM's tanh probabilities (eq. (29),
        :func:`svmtune.estimators.tanh_proba`); one-vs-rest normalised for multiclass; lazy
        for a dask ``X``."""
        F = self.decision_function(X)
        if not is_dask_array(F):
            return tanh_proba(F)
        if F.ndim == 1:
            return F.map_blocks(tanh_proba, new_axis=1, chunks=(F.chunks[0], (2,)), dtype=float)
        return F.map_blocks(tanh_proba, dtype=float)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _lazy_fit_inputs(est, X, y, sample_weight) -> tuple:
    """``(X, encoded y, weights, sample weights)`` for :meth:`LowRankL2SVC.fit` on a dask
    array ``X`` (as float64) or on :class:`~svmtune._standardised_rows.StandardisedRows`
    without making it whole: a dask array's dtype, dimensions and row chunks checked from
    its metadata (:func:`svmtune._dask_inputs.dask_rows`), its finiteness by one reduction
    (standardised rows: their unscaled values'), ``n_features_in_`` from its shape; then
    the labels and weights, ``O(n)`` vectors, as :func:`svmtune.estimators._fit_inputs`
    checks them.  The finiteness pass is skipped under
    ``sklearn.config_context(assume_finite=True)``."""
    if isinstance(X, StandardisedRows):
        finite = get_config()["assume_finite"] or bool(np.isfinite(X.X).all())
    else:
        import dask.array as da

        X, _ = dask_rows(X)
        # scikit-learn's assume_finite skips the pass, as check_array does (the tuner's final
        # fit sets it: its door checked X)
        finite = get_config()["assume_finite"] or bool(da.isfinite(X).all().compute())
    if not finite:
        raise ValueError("Input X contains NaN or infinity.")
    y = np.asarray(y)
    check_labels(y)
    validate_data(est, X, skip_check_array=True)  # n_features_in_ from the shape alone
    y = column_or_1d(y, warn=True)
    n = X.shape[0]
    if y.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {y.shape[0]}]"
        )
    if is_dask_array(sample_weight):
        sample_weight = np.asarray(sample_weight)
    y_enc, w = _label_inputs(est, y, sample_weight, n)
    return X, y_enc, w, validate_sample_weight(sample_weight, n)


def _landmark_factor(D2_mm: np.ndarray, sigma: float, jitter: float) -> tuple[np.ndarray, float]:
    """The upper Cholesky factor ``R`` of ``K_mm + jitter I`` and the jitter it took
    (:func:`svmtune.lowrank.nystroem_factor` on the landmarks themselves)."""
    nf = nystroem_factor(D2_mm, D2_mm, sigma, jitter=jitter)
    return nf.R, float(nf.jitter)


def _tasks(y_enc: np.ndarray, n_classes: int) -> list[np.ndarray]:
    """The -1/+1 labels of each binary task: ``classes_[1]`` against ``classes_[0]`` for two
    classes, each class against the rest otherwise (as :class:`svmtune.estimators.L2SVC`)."""
    if n_classes == 2:
        return [np.where(y_enc == 1, 1.0, -1.0)]
    return [np.where(y_enc == k, 1.0, -1.0) for k in range(n_classes)]
