"""SVM solvers sharing one result type, :class:`DualSolution`.

* :func:`fit_l1_svm` -- the hinge-loss (L1) SVM through libsvm (scikit-learn ``SVC``) with
  per-sample bounds ``C_i = C * w_i``.  scikit-learn's ``dual_coef_`` sign conventions are
  handled here and nowhere else.
* :func:`fit_l2_svm` -- an exact squared-hinge (L2) kernel SVM, i.e. the hard-margin SVM on
  ``H = K + diag(1 / (C w_i))`` (RBSVM eq. (6)-(7)), solved by an active-set Newton method to
  KKT tolerance 1e-8.  It returns the factorisation of the extended support-set matrix

      M = [[H_SS, 1], [1^T, 0]]                              (RBSVM eq. (22))

  which the closed-form leave-one-out, span and radius-margin estimates all reuse.

Labels are ``y in {-1, +1}`` throughout; the dual variables are ``alpha >= 0`` and the
decision function is ``f(x) = sum_i y_i alpha_i k(x_i, x) + b``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.svm import SVC

from svmtune._dual_solution import (
    DualSolution,
    _l2_diagonal,
    check_C,
    l2_diagonal,
    l2_solution,
    support_mask,
)
from svmtune._factor import ExtendedFactor, mirror_lower
from svmtune._kernel_matrix_checks import check_kernel_matrix
from svmtune._validation import validate_sample_weight
from svmtune._warnings import user_stacklevel
from svmtune.exceptions import ConvergenceWarning
from svmtune.kernels import Kernel, KernelColumns, kernel_block, kernel_columns

__all__ = [
    "DualSolution",
    "ExtendedFactor",
    "fit_l1_svm",
    "fit_l2_svm",
    "l2_diagonal",
    "mirror_lower",
    "LIBSVM_MAX_ITER",
]

#: Iteration cap of every libsvm fit svmtune makes (selection, cross-validation folds, final
#: models): libsvm's own default since version 3.18 (10^7, with a "reaching max number of
#: iterations" warning).  scikit-learn's ``SVC`` has none (``max_iter=-1``), so one
#: ill-conditioned candidate -- a huge C with a nearly constant kernel, e.g. C = 2^16 at
#: sigma = 2^9 in the ESDR paper's grid -- can run for hours; capped fits raise
#: scikit-learn's ConvergenceWarning.
LIBSVM_MAX_ITER = 10_000_000


def _as_pm1(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=float).ravel()
    if y.size == 0:
        raise ValueError("SVM training needs samples of both classes; y is empty")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("binary solver labels must be -1 or +1")
    if np.all(y == y[0]):
        raise ValueError("SVM training needs both classes (-1 and +1); got only one")
    return y


# ---------------------------------------------------------------------------------------------
# L1-SVM through libsvm
# ---------------------------------------------------------------------------------------------
def fit_l1_svm(
    y: np.ndarray,
    C: float,
    *,
    K: np.ndarray | None = None,
    X: np.ndarray | None = None,
    kernel: Kernel | None = None,
    sample_weight: np.ndarray | None = None,
    tol: float = 1e-3,
    cache_size: float = 500.0,
    return_estimator: bool = False,
) -> DualSolution | tuple[DualSolution, SVC]:
    """Train the hinge-loss SVM with libsvm and return its :class:`DualSolution`.

    Solves ``max sum alpha - 1/2 sum alpha_i alpha_j y_i y_j k_ij`` subject to
    ``0 <= alpha_i <= C_i = C w_i`` and ``sum y_i alpha_i = 0`` (Weighted span eq. (2)).

    Parameters
    ----------
    y : array of {-1, +1}
    C : float
        Penalty; per-sample bounds are ``C * sample_weight``.
    K : ndarray, optional
        Precomputed train x train kernel matrix.  Give either ``K`` or ``X`` with ``kernel``.
    X, kernel : optional
        Raw features and the kernel libsvm evaluates natively.
    tol : float
        libsvm's stopping tolerance (libsvm stops after :data:`LIBSVM_MAX_ITER` iterations).
    return_estimator : bool
        Also return the fitted scikit-learn ``SVC``.  It is trained on the samples of
        positive weight only (a precomputed kernel then takes their columns); the returned
        solution covers all samples, with ``alpha = 0`` at weight 0.

    Raises
    ------
    ValueError
        If ``y`` is not -1/+1 with both classes, ``K`` is not a finite ``n x n`` matrix,
        ``C`` is not positive and finite, or the weights are invalid.
    TypeError
        If ``C`` is not a real number.
    """
    y = _as_pm1(y)
    n = y.shape[0]
    check_C(C)
    w = validate_sample_weight(sample_weight, n)
    if K is not None:
        K = check_kernel_matrix(K, n)
    elif X is None or kernel is None:
        raise ValueError("fit_l1_svm needs either K or both X and kernel")
    sol, svc = _fit_l1_svm(
        y,
        C,
        w,
        K=K,
        X=X,
        kernel=kernel,
        tol=tol,
        cache_size=cache_size,
        canonical=not return_estimator,  # the estimator is the model of y as given
    )
    return (sol, svc) if return_estimator else sol


def _libsvm_orientation(y: np.ndarray, keep: np.ndarray) -> float:
    """The sign that makes the class of the first sample libsvm sees (``keep[0]``) the
    label -1, so that the sorted classes scikit-learn hands libsvm come in the same order
    whichever class ``y`` calls +1: the problem libsvm solves then depends on which rows
    share a class and on their order only.

    libsvm's working-set choices are not symmetric under a swap of the labels' signs,
    though the problem is: without the sign, ``y`` and ``-y`` give two solutions within
    libsvm's tolerance, different enough to move the span-rule's leave-one-out values
    (``tests/test_svm.py`` checks that the oriented fits agree exactly).
    """
    return -1.0 if y[keep[0]] > 0 else 1.0


def _fit_l1_svm(
    y: np.ndarray,
    C: float,
    w: np.ndarray | None,
    *,
    K: np.ndarray | None = None,
    X: np.ndarray | None = None,
    kernel: Kernel | None = None,
    tol: float = 1e-3,
    cache_size: float = 500.0,
    canonical: bool = True,
) -> tuple[DualSolution, SVC]:
    """:func:`fit_l1_svm` on checked inputs, with its fitted ``SVC``: labels ``y`` in
    {-1, +1}, a positive finite ``C``, weights ``w`` from
    :func:`svmtune._validation.validate_sample_weight` (or None), and a finite ``(n, n)``
    float ``K`` (:func:`svmtune._kernel_matrix_checks.check_kernel_matrix`) or ``X`` with
    ``kernel``.  The referee (:mod:`svmtune.loo.referee`) calls it on the kernel matrix it
    built, so that scoring a candidate repeats none of these checks; scikit-learn's own
    finiteness pass over the precomputed ``K`` is skipped too (``assume_finite``).

    ``canonical`` (default) gives libsvm the labels oriented by :func:`_libsvm_orientation`
    and turns its solution back to ``y``'s: swapped labels then give the same ``alpha``
    and the opposite ``b`` exactly, as the SVM problem does, and not a solution of the
    same tolerance found by another path (issue 63).  The returned ``SVC`` is then the model
    of the oriented labels; ``canonical=False`` fits ``y`` as given, for a caller that needs
    the ``SVC`` of ``y`` (:func:`fit_l1_svm` with ``return_estimator``).

    Raises
    ------
    ValueError
        If the samples of positive weight do not hold both classes.
    """
    n = y.shape[0]
    w_all = np.ones(n) if w is None else w
    # libsvm drops the samples of weight 0, and scikit-learn's ``support_`` then indexes the
    # remaining samples, not the ones passed (scikit-learn issue #25380): fit on the samples
    # of positive weight and map the indices back here, whatever scikit-learn's version does
    keep = np.flatnonzero(w_all > 0)
    if np.unique(y[keep]).size < 2:
        raise ValueError("the hinge-loss SVM needs samples of both classes with positive weight")
    sw = None if w is None else w_all[keep]
    sign = _libsvm_orientation(y, keep) if canonical else 1.0
    y_fit = y if sign == 1.0 else -y
    if K is not None:
        svc = SVC(
            kernel="precomputed", C=C, tol=tol, cache_size=cache_size, max_iter=LIBSVM_MAX_ITER
        )
        with config_context(assume_finite=True):  # K is checked (or built) by the caller
            svc.fit(K if keep.size == n else K[np.ix_(keep, keep)], y_fit[keep], sample_weight=sw)
    else:
        svc = SVC(
            C=C,
            tol=tol,
            cache_size=cache_size,
            max_iter=LIBSVM_MAX_ITER,
            **kernel.sklearn_params(),
        )
        svc.fit(X if keep.size == n else X[keep], y_fit[keep], sample_weight=sw)
    # scikit-learn orders classes_ = [-1, +1]; decision_function > 0 predicts +1, and
    # dual_coef_[0] = y_i alpha_i with exactly that orientation, so alpha = |dual_coef_|.
    # The sign is checked below rather than assumed.
    coef = svc.dual_coef_[0]
    idx = keep[svc.support_]
    alpha = np.zeros(n)
    alpha[idx] = np.abs(coef)
    sign_ok = np.all(np.sign(coef[coef != 0]) == y_fit[idx][coef != 0])
    if not sign_ok:  # pragma: no cover - guards a change of convention in scikit-learn
        raise RuntimeError("unexpected dual_coef_ sign convention in scikit-learn SVC")
    upper = C * w_all
    b = sign * float(svc.intercept_[0])  # the oriented problem's offset turned back to y's
    support = alpha > 0
    bounded = support & (alpha >= upper * (1.0 - 1e-10))
    sol = DualSolution(
        alpha=alpha,
        b=b,
        y=y,
        upper=upper,
        loss="l1",
        support=support,
        in_bound=support & ~bounded,
        bounded=bounded,
        n_iter=int(np.sum(svc.n_iter_)),
    )
    return sol, svc


# ---------------------------------------------------------------------------------------------
# Exact L2-SVM
# ---------------------------------------------------------------------------------------------
#: cost of the Givens rank-one update of a trailing block of size ``t``
#: (:func:`svmtune._factor._rank_one_update`, one BLAS ``drot`` per column), in units of the
#: flops of a BLAS-3 Cholesky factorisation: ``GIVENS_COLUMN_COST * t + GIVENS_COST * t^2``.
#: The linear term is the Python loop's call per column, the quadratic one the rotations;
#: the constants reproduce the timings of update and fresh factorisation with one BLAS thread
#: (``benchmarks/first_call.md``, table 4; ``docs/notes/cost_measurements.md``).
GIVENS_COLUMN_COST = 30000.0
GIVENS_COST = 12.0


def _update_is_cheaper(m_old: int, m_new: int, removed_pos: np.ndarray, n_added: int) -> bool:
    """Whether updating the factor of ``m_old`` points (removing those at factor positions
    ``removed_pos``, then appending ``n_added``) is estimated cheaper than factoring the
    ``m_new`` points afresh (``m_new^3 / 3`` flops, plus gathering ``H_SS``).

    Removals cost :data:`GIVENS_COLUMN_COST` ``t`` + :data:`GIVENS_COST` ``t^2`` each
    (``t = m_old - p``) plus a compaction of the factor; additions a triangular solve
    (``m^2`` flops per point) plus a copy of the factor.
    """
    t = m_old - removed_pos.astype(float)
    cost = float(np.sum(GIVENS_COLUMN_COST * t + GIVENS_COST * t**2))
    cost += 5.0 * m_old**2 if removed_pos.size else 0.0
    cost += (n_added + 3.0) * m_new**2 if n_added else 0.0
    return cost < m_new**3 / 3.0 + 3.0 * m_new**2


#: an updated factor whose KKT residual ``max |H_SS beta + b - y_S|`` exceeds this multiple of
#: ``||beta||_1 + max |d_S beta| + |b| + 1`` (about ``m * eps`` times it after a fresh,
#: backward-stable factorisation) is replaced by a fresh factorisation
UPDATE_RESIDUAL_TOL = 1e-10


def _support_block(K, d, S: np.ndarray) -> np.ndarray:
    """``H_SS = K_SS + diag(d_S)`` as one new array (the diagonal added in place)."""
    H = kernel_block(K, S, S)  # indexing makes a new array
    H.flat[:: S.size + 1] += d[S]
    return H


def _support_factor(K, d, S, prev: ExtendedFactor | None) -> tuple[ExtendedFactor, bool]:
    """The factor of ``H_SS`` for the sorted support set ``S``: ``prev`` (the factor of the
    previous support set) updated by :meth:`ExtendedFactor.remove` and
    :meth:`ExtendedFactor.add` when that is estimated cheaper (:func:`_update_is_cheaper`),
    else a fresh factorisation.  Returns ``(factor, updated)``;
    an addition the factor refuses (:data:`svmtune._factor.UPDATE_PIVOT_TOL`) is factored
    afresh."""
    if prev is not None and prev.index is not None:
        removed = np.setdiff1d(prev.index, S, assume_unique=True)
        added = np.setdiff1d(S, prev.index, assume_unique=True)
        changes = removed.size + added.size
        pos = np.flatnonzero(np.isin(prev.factor_index, removed))
        if prev.index.size - removed.size >= 1 and _update_is_cheaper(
            prev.index.size, S.size, pos, added.size
        ):
            fac = prev.remove(removed) if removed.size else prev
            if added.size:
                H_cols = kernel_block(K, fac.index, added)
                H_new = _support_block(K, d, added)
                fac = fac.add(added, H_cols, H_new)
            if fac is not None:
                return fac, changes > 0
    return ExtendedFactor.from_block(_support_block(K, d, S), S), False


def _solve_support(K, y, d, S, prev: ExtendedFactor | None = None):
    """Solve the KKT system ``M [beta; b] = [y_S; 0]`` of the support set ``S`` (RBSVM eq.
    (22)) with the factor of :func:`_support_factor`; returns ``(factor, beta, b, f)`` with
    ``f = K[:, S] beta + b`` the kernel model's outputs.  A solution from an updated factor
    whose KKT residual fails :data:`UPDATE_RESIDUAL_TOL` is recomputed from a fresh
    factorisation."""
    fac, updated = _support_factor(K, d, S, prev)
    # K[:, S] beta = K beta_n (beta_n = beta on S, 0 elsewhere): the product with the whole
    # matrix copies no columns, cheaper once S holds a quarter of the points
    whole = isinstance(K, np.ndarray) and 4 * S.size >= y.size
    KS = K if whole else kernel_columns(K, S)
    beta_n = np.zeros(y.size)
    while True:
        beta, b = fac.solve(y[S], 0.0)
        b = float(b)
        if whole:
            beta_n[S] = beta
            f = KS @ beta_n + b
        else:
            f = KS @ beta + b
        if not updated:
            return fac, beta, b, f
        res = np.max(np.abs(f[S] + d[S] * beta - y[S]), initial=0.0)
        scale = np.sum(np.abs(beta)) + np.max(np.abs(d[S] * beta), initial=0.0) + abs(b) + 1.0
        if res <= UPDATE_RESIDUAL_TOL * scale:
            return fac, beta, b, f
        fac, updated = _support_factor(K, d, S, None)


def _hinge_start(K, y, C, sample_weight, active) -> np.ndarray:
    """Starting support set of :func:`fit_l2_svm` without a warm start: the support vectors
    of the hinge-loss SVM with the same kernel, ``C`` and weights (libsvm, iterations capped
    at ``10 n``; any start is valid).  They are close to the L2-SVM's support set, so the
    Newton iteration converges in a few steps on systems of about that size -- started from
    all points, its first steps factor systems of up to ``n x n``.  All active points when
    ``K`` is given by columns without its source points (libsvm needs the whole matrix or
    the points, :meth:`svmtune.kernels.KernelColumns.of`) or the start is degenerate."""
    idx = np.flatnonzero(active)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)[idx]
    cap = 10 * idx.size + 1000
    if isinstance(K, KernelColumns):
        if K.source is None:
            return active.copy()
        X, kernel = K.source
        svc = SVC(C=float(C), max_iter=cap, **kernel.sklearn_params())
        data = X[idx]
    else:
        svc = SVC(C=float(C), kernel="precomputed", max_iter=cap)
        data = K if idx.size == y.size else K[np.ix_(idx, idx)]
    # a precomputed K was checked (or built) by the solver's caller: scikit-learn's
    # finiteness pass over it would repeat that O(n^2) check (issue #55); source points
    # of a KernelColumns were never checked, so scikit-learn checks them as usual
    precomputed = not isinstance(K, KernelColumns)
    with warnings.catch_warnings(), config_context(assume_finite=precomputed):
        # a capped fit is still a start: libsvm stopping at its cap is expected here
        warnings.simplefilter("ignore", SklearnConvergenceWarning)
        svc.fit(data, y[idx], sample_weight=w)
    S_mask = np.zeros(y.size, dtype=bool)
    S_mask[idx[svc.support_]] = True
    if S_mask.sum() < 2 or np.all(y[S_mask] == y[S_mask][0]):
        return active.copy()
    return S_mask


def fit_l2_svm(
    K: np.ndarray | KernelColumns,
    y: np.ndarray,
    C: float,
    *,
    sample_weight: np.ndarray | None = None,
    init_support: np.ndarray | None = None,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> DualSolution:
    """Exact squared-hinge (L2) SVM: the hard-margin SVM on ``H = K + diag(1/(C w))``.

    Solves ``min 1/2 a^T Q a - 1^T a`` s.t. ``a >= 0``, ``y^T a = 0`` with
    ``Q = (y y^T) * H`` (RBSVM eq. (6)-(7)).  On the support set ``S`` the KKT conditions are
    the linear system ``M [beta_S; b] = [y_S; 0]`` with ``beta = y * alpha`` and
    ``M = [[H_SS, 1], [1^T, 0]]`` (RBSVM eq. (22)).  The active set is found by a
    primal-dual (semismooth Newton) iteration: drop support vectors with ``alpha < 0``, add
    points with ``y_i f(x_i) < 1``; it starts from ``init_support`` (warm start) or else from
    the hinge-loss SVM's support vectors (:func:`_hinge_start`).  The solution is unique
    (``H`` is positive definite), so the start changes the cost, not the result.  Should the
    Newton iteration cycle, a primal active-set method (one change per step, monotone in the
    dual objective, finite) finishes the job.

    Parameters
    ----------
    K : ndarray (n, n) or KernelColumns
        Kernel matrix (without the ``1/C`` ridge); a :class:`KernelColumns` is read only at
        the columns of the support sets the iteration visits.
    y : array of {-1, +1}
    C : float
    sample_weight : array, optional
        Per-sample weights: the ridge is ``1 / (C w_i)``; points with ``w_i = 0`` get
        ``alpha_i = 0``.
    init_support : bool mask or index array, optional
        Starting support set (e.g. from the previous hyperparameter step).
    tol : float
        KKT tolerance on ``alpha >= 0`` and ``y_i f_i >= 1``.

    Returns
    -------
    DualSolution
        With ``factor`` the :class:`ExtendedFactor` of the final support set.

    Raises
    ------
    ValueError
        If ``y`` is not -1/+1 with both classes among the samples of positive weight, ``K``
        is not a finite ``n x n`` matrix, ``C`` is not positive and finite, the weights are
        invalid, or ``init_support`` is out of range.
    TypeError
        If ``C`` is not a real number or ``init_support`` neither a mask nor indices.
    numpy.linalg.LinAlgError
        If ``K`` is not positive semi-definite (a support-set matrix cannot be factored).
    """
    y = _as_pm1(y)
    n = y.shape[0]
    K = check_kernel_matrix(K, n)  # a KernelColumns checks its columns as it goes
    check_C(C)
    w = validate_sample_weight(sample_weight, n)
    init = None if init_support is None else support_mask(init_support, n)
    return _fit_l2_svm(K, y, C, w, init, tol=tol, max_iter=max_iter)


def _fit_l2_svm(
    K: np.ndarray | KernelColumns,
    y: np.ndarray,
    C: float,
    w: np.ndarray | None,
    init_support: np.ndarray | None = None,
    *,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> DualSolution:
    """:func:`fit_l2_svm` on checked inputs: a finite ``(n, n)`` float ``K`` or a
    :class:`KernelColumns` of that shape, labels ``y`` in {-1, +1}, a positive finite ``C``,
    weights ``w`` from :func:`svmtune._validation.validate_sample_weight` (or None) and
    ``init_support`` a bool mask of length ``n`` (or None).

    The searches (RBSVM, SpanSVM, RMSVM) and the referee call it on the kernel matrix they
    built from checked distances, so that an objective evaluation repeats none of the
    ``O(n^2)`` checks of :func:`fit_l2_svm` (issue #55).  The active-set iteration is that
    of :func:`fit_l2_svm` (RBSVM eq. (22)).

    Raises
    ------
    ValueError
        If the samples of positive weight do not hold both classes.
    """
    n = y.shape[0]
    d = _l2_diagonal(n, C, w)
    active = np.isfinite(d)
    if np.unique(y[active]).size < 2:
        raise ValueError("L2-SVM needs points of both classes with positive weight")

    S_mask = np.zeros(n, dtype=bool)
    if init_support is not None:
        S_mask |= init_support
        S_mask &= active
    if S_mask.sum() < 2 or np.all(y[S_mask] == y[S_mask][0]):
        S_mask = _hinge_start(K, y, C, w, active)

    seen: set[bytes] = set()
    n_iter = 0
    converged = False
    fac = None
    for n_iter in range(1, max_iter + 1):  # noqa: B007
        S = np.flatnonzero(S_mask)
        fac, beta, b, f = _solve_support(K, y, d, S, fac)
        alpha_S = y[S] * beta
        neg = alpha_S < -tol
        margin = y * f  # for non-support points H_ij = K_ij (i not in S)
        viol = active & ~S_mask & (margin < 1.0 - tol)
        if not neg.any() and not viol.any():
            converged = True
            break
        key = S_mask.tobytes()
        if key in seen:
            break
        seen.add(key)
        new = S_mask.copy()
        new[S[neg]] = False
        new |= viol
        if new.sum() < 2 or np.all(y[new] == y[new][0]):
            break
        S_mask = new
    if not converged:
        if isinstance(K, KernelColumns):  # the fallback reads the diagonal: all of K
            K = K.full()
        S_mask, fac, beta, b, extra_iter = _primal_active_set(K, y, d, active, tol, 50 * n + 100)
        n_iter += extra_iter
    return l2_solution(y, S_mask, beta, b, fac, d, n_iter)


def _primal_active_set(K, y, d, active, tol, max_iter):
    """Primal active-set method (Nocedal & Wright, Alg. 16.3) for the L2-SVM dual.

    Feasible throughout (``alpha >= 0``, ``y^T alpha = 0``); each step changes one bound, and
    the dual objective decreases monotonically, so it terminates.  Started from one point of
    each class, the pair whose closed-form two-point solution is feasible.
    """
    n = y.shape[0]
    ip = np.flatnonzero(active & (y > 0))
    im = np.flatnonzero(active & (y < 0))
    # closest pair in feature space gives a good start; any pair is feasible
    Kd = np.diag(K)
    i, j = ip[np.argmax(Kd[ip])], im[np.argmax(Kd[im])]
    S_mask = np.zeros(n, dtype=bool)
    S_mask[[i, j]] = True
    alpha = np.zeros(n)
    fac, beta, b, _ = _solve_support(K, y, d, np.flatnonzero(S_mask))
    alpha[S_mask] = y[S_mask] * beta
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007
        S = np.flatnonzero(S_mask)
        fac, beta, b, f = _solve_support(K, y, d, S, fac)
        target = y[S] * beta
        if np.all(target >= -tol):
            alpha[:] = 0.0
            alpha[S] = np.maximum(target, 0.0)
            margin = y * f
            cand = active & ~S_mask & (margin < 1.0 - tol)
            if not cand.any():
                return S_mask, fac, beta, b, it
            k = np.flatnonzero(cand)[np.argmin(margin[cand])]
            S_mask[k] = True
            continue
        # step towards target until the first free variable hits zero
        cur = alpha[S]
        step = target - cur
        blocking = step < 0
        ratios = np.full(S.shape[0], np.inf)
        ratios[blocking] = cur[blocking] / -step[blocking]
        t = min(1.0, float(ratios.min()))
        alpha[S] = cur + t * step
        drop = S[np.argmin(ratios)]
        alpha[drop] = 0.0
        S_mask[drop] = False
        if S_mask.sum() < 2 or np.all(y[S_mask] == y[S_mask][0]):  # pragma: no cover
            break
    warnings.warn(
        "L2-SVM active-set solver did not converge; result may violate KKT conditions",
        ConvergenceWarning,
        stacklevel=user_stacklevel(),
    )
    S = np.flatnonzero(S_mask)
    fac, beta, b, _ = _solve_support(K, y, d, S, fac)
    return S_mask, fac, beta, b, it
