"""Final models: the exact L2-SVM classifier and the factory that builds a final SVM.

:class:`L2SVC` is the squared-hinge kernel SVM that RBSVM, SpanSVM and RMSVM learn their
hyperparameters for (RBSVM eq. (5)-(7)); multiclass problems are decomposed one-vs-rest.
Its probabilities use RBSVM's tanh mapping ``P(y=+1|x) = (1 + tanh f(x)) / 2`` (eq. (29)).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.calibration import CalibratedClassifierCV
from sklearn.svm import SVC
from sklearn.utils import gen_batches
from sklearn.utils.validation import check_is_fitted, validate_data

from svmtune._kernel_matrix_checks import check_kernel_matrix
from svmtune._option_values import check_positive
from svmtune._validation import (
    _label,
    check_label_kind,
    check_labels,
    check_min_class_count,
    validate_sample_weight,
)
from svmtune.kernels import Kernel, KernelColumns, _kernel_matrix
from svmtune.svm import LIBSVM_MAX_ITER, _fit_l2_svm

__all__ = [
    "L2SVC",
    "OvRSVC",
    "make_final_estimator",
    "tanh_proba",
    "ovo_pairs",
    "ovo_tanh_proba",
    "ovo_to_ovr_decision",
    "class_weight_vector",
]


def tanh_proba(decision: np.ndarray) -> np.ndarray:
    """Class probabilities from decision values by RBSVM's mapping (eq. (29)).

    Binary ``decision`` of shape (n,) gives ``[(1 - tanh f)/2, (1 + tanh f)/2]``; one-vs-rest
    ``decision`` of shape (n, k) gives ``(1 + tanh f_k)/2`` normalised over the classes.
    """
    decision = np.asarray(decision, dtype=float)
    if decision.ndim == 1:
        p = 0.5 * (1.0 + np.tanh(decision))
        return np.column_stack([1.0 - p, p])
    P = 0.5 * (1.0 + np.tanh(decision))
    P = np.clip(P, 1e-300, None)
    return P / P.sum(axis=1, keepdims=True)


def ovo_pairs(n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Class pairs ``(i, j)``, ``i < j``, in libsvm's one-vs-one order."""
    return np.triu_indices(n_classes, k=1)


def ovo_to_ovr_decision(pairwise: np.ndarray, n_classes: int) -> np.ndarray:
    """One-vs-one decision values ``(n, k (k-1) / 2)`` -> the ``(n, k)`` "ovr" shape of ``SVC``.

    scikit-learn's documented transform of ``decision_function_shape="ovr"``: votes of the
    pairwise classifiers (a positive value votes for the first class of the pair) plus the
    summed confidences squashed into ``(-1/3, 1/3)``, so ``argmax`` is the libsvm prediction.
    """
    pairwise = np.asarray(pairwise, dtype=float)
    a, b = ovo_pairs(n_classes)
    n = pairwise.shape[0]
    votes = np.zeros((n, n_classes))
    conf = np.zeros((n, n_classes))
    first = pairwise > 0
    for p, (i, j) in enumerate(zip(a, b)):
        votes[:, i] += first[:, p]
        votes[:, j] += ~first[:, p]
        conf[:, i] += pairwise[:, p]
        conf[:, j] -= pairwise[:, p]
    return votes + conf / (3.0 * (np.abs(conf) + 1.0))


def ovo_tanh_proba(pairwise: np.ndarray, n_classes: int, min_prob: float = 1e-7) -> np.ndarray:
    """Class probabilities of a one-vs-one SVM from RBSVM's tanh mapping and pairwise coupling.

    Each pair ``(i, j)`` gives ``r_ij = P(i | i or j) = (1 + tanh f_ij) / 2`` (RBSVM eq. (29),
    ``f_ij > 0`` favouring ``i``), clipped to ``[min_prob, 1 - min_prob]`` as in libsvm; the
    class probabilities ``p`` minimise ``sum_i sum_{j != i} (r_ji p_i - r_ij p_j)^2`` subject to
    ``sum p = 1`` (Wu, Lin & Weng 2004, method 2, the coupling libsvm uses for Platt outputs):
    ``[[Q, 1], [1', 0]] [p; b] = [0; 1]`` with ``Q_tt = sum_{j != t} r_jt^2`` and
    ``Q_tj = -r_jt r_tj``, solved per sample.
    """
    pairwise = np.asarray(pairwise, dtype=float)
    k = int(n_classes)
    a, b = ovo_pairs(k)
    if pairwise.ndim != 2 or pairwise.shape[1] != a.size:
        raise ValueError(
            f"expected one-vs-one decision values of shape (n, {a.size}), got {pairwise.shape}"
        )
    n = pairwise.shape[0]
    r = np.empty((n, k, k))  # r[:, i, j] = P(i | i or j)
    rij = np.clip(0.5 * (1.0 + np.tanh(pairwise)), min_prob, 1.0 - min_prob)
    r[:, a, b] = rij
    r[:, b, a] = 1.0 - rij
    idx = np.arange(k)
    r[:, idx, idx] = 0.0
    rt = np.swapaxes(r, 1, 2)  # rt[:, t, j] = r[:, j, t]
    M = np.zeros((n, k + 1, k + 1))
    M[:, :k, :k] = -rt * r  # Q_tj = -r_jt r_tj
    M[:, idx, idx] = np.sum(rt * rt, axis=2)  # Q_tt = sum_j r_jt^2
    M[:, :k, k] = 1.0
    M[:, k, :k] = 1.0
    rhs = np.zeros((n, k + 1))
    rhs[:, k] = 1.0
    p = np.linalg.solve(M, rhs[..., None])[:, :k, 0]
    p = np.clip(p, 0.0, None)
    return p / p.sum(axis=1, keepdims=True)


def class_weight_vector(
    y_enc: np.ndarray, classes: np.ndarray, class_weight, sample_weight: np.ndarray | None = None
) -> np.ndarray:
    """Per-sample multipliers for ``class_weight``, as scikit-learn's ``SVC`` reads it.

    Parameters
    ----------
    y_enc : ndarray of int
        The labels encoded as ``0..len(classes)-1``.
    classes : ndarray
        The labels in encoding order.
    class_weight : None, "balanced" or dict
        None: ones.  "balanced": ``n_samples / (n_classes * count(class))``, the counts
        weighted by ``sample_weight`` when given (a weight stands for repeated rows, and a
        row of weight 0 is not counted; ``SVC`` counts rows).  A dict maps labels to weights
        (finite, > 0: remove a class from ``y`` rather than weigh it 0); classes it does not
        name keep weight 1.
    sample_weight : ndarray (n_samples,), optional
        Validated sample weights (>= 0), for "balanced".

    Returns
    -------
    ndarray (n_samples,)
    """
    if class_weight is None:
        return np.ones(y_enc.shape[0])
    if isinstance(class_weight, str) and class_weight == "balanced":
        if sample_weight is None:
            counts = np.bincount(y_enc, minlength=len(classes)).astype(float)
            return (y_enc.shape[0] / (len(classes) * counts))[y_enc]
        sw = np.asarray(sample_weight, dtype=float)
        counts = np.bincount(y_enc, weights=sw, minlength=len(classes))
        # a class without weight has no row to weigh (the callers then refuse it)
        per_class = np.where(
            counts > 0, sw.sum() / (len(classes) * np.where(counts > 0, counts, 1.0)), 1.0
        )
        return per_class[y_enc]
    if not isinstance(class_weight, dict):
        raise ValueError(
            "class_weight must be None, 'balanced' or a dict {class label: weight}, "
            f"got {class_weight!r}"
        )
    known = {_label(c): i for i, c in enumerate(classes)}
    unknown = [k for k in class_weight if _label(k) not in known]
    if unknown:
        raise ValueError(
            f"class_weight names labels that are not classes of y: "
            f"{', '.join(_label(k) for k in unknown)} (the classes are "
            f"{', '.join(_label(c) for c in classes)})"
        )
    per_class = np.ones(len(classes))
    for k, v in class_weight.items():
        ok = isinstance(v, numbers.Real) and not isinstance(v, bool) and np.isfinite(v)
        if not ok or v <= 0:
            raise ValueError(
                f"class_weight[{_label(k)}] must be a finite number > 0, got {v!r} (to "
                "leave a class out, remove its samples from y)"
            )
        per_class[known[_label(k)]] = float(v)
    return per_class[y_enc]


#: :class:`L2SVC` trains on the whole ``n x n`` kernel matrix up to this many points and on
#: a kernel computed by columns above (:meth:`svmtune.kernels.KernelColumns.of`)
FULL_KERNEL_MAX_N = 4096
#: kernel values per block when :class:`L2SVC` computes decision values and the low-rank
#: model (:mod:`svmtune.estimators_lowrank`) its passes (8 MiB): a Newton pass of the
#: low-rank model holds about five arrays of a block's size at once (at 10^6 rows and 500
#: landmarks its peak was 233 MB above the data with 2^22 values, 143 MB with 2^20, in
#: 55 s and 48 s: ``benchmarks/memory_steps.md``)
DECISION_BLOCK = 2**20


def _fit_inputs(est, X, y, sample_weight, accept_sparse=False):
    """Validated ``(X, encoded y, per-sample weights x class weights)`` for ``est.fit``,
    which gets ``classes_``; every class needs a sample of positive weight.  ``X`` may be a
    scipy sparse matrix where ``accept_sparse`` names its formats (libsvm's SVC takes one)."""
    check_labels(y)
    # finite numeric X, 1-D y of the same length
    X, y = validate_data(est, X, y, accept_sparse=accept_sparse)
    y_enc, w = _label_inputs(est, y, sample_weight, X.shape[0])
    return X, y_enc, w


def _label_inputs(est, y, sample_weight, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The second half of :func:`_fit_inputs`, for labels ``y`` of the ``n`` rows already
    checked as 1-D of length ``n``: ``(encoded y, per-sample weights x class weights)``;
    sets ``est.classes_``."""
    check_label_kind(y)
    est.classes_, y_enc = np.unique(y, return_inverse=True)  # LabelEncoder's classes, codes
    w = validate_sample_weight(sample_weight, n)
    cw = class_weight_vector(y_enc, est.classes_, est.class_weight, w)
    w = cw if w is None else w * cw
    check_min_class_count(y_enc, est.classes_, minimum=1, sample_weight=w)
    return y_enc, w


class L2SVC(ClassifierMixin, BaseEstimator):
    """Kernel SVM with the squared hinge loss (L2-SVM), solved exactly.

    Trains the hard-margin SVM on ``K + I / C`` (RBSVM eq. (7)) with
    :func:`svmtune.svm.fit_l2_svm`; multiclass problems are split one-vs-rest.

    Above :data:`FULL_KERNEL_MAX_N` training points the kernel matrix is computed by columns
    as the solver reads them, starting from libsvm's hinge-loss support vectors: memory and
    kernel evaluations grow with ``n`` times the number of support vectors instead of
    ``n^2`` (the same solution up to round-off).  Decision values are computed in blocks of
    :data:`DECISION_BLOCK` kernel values.

    Parameters
    ----------
    C : float, default=1.0
    kernel : {"rbf", "linear", "poly", "sigmoid"}, default="rbf"
    sigma : float, default=1.0
        RBF width; ``gamma = 1 / (2 sigma^2)``.
    gamma, degree, coef0 : kernel parameters for "poly" and "sigmoid".
        The sigmoid kernel is not positive semi-definite in general; ``fit`` raises a
        ``ValueError`` when ``K + I / C`` is not positive definite (the problem is then
        not convex).
    class_weight : dict or "balanced", optional
        Multiplies ``C`` per class.

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    support_ : ndarray of int (n_SV,)
        Training rows that are a support vector of some task (the union over one-vs-rest
        tasks).
    support_vectors_ : ndarray (n_SV, n_features)
        Those rows.
    dual_coef_ : ndarray (n_tasks, n_SV)
        ``y_i alpha_i`` per task at those rows: ``f(x) = k(x, SV) dual_coef_^T + b``.
    intercept_ : ndarray (n_tasks,)
    n_support_ : ndarray of int (n_tasks,)
        Support vectors (``alpha_i > 0``) of each task.
    n_iter_ : ndarray of int (n_tasks,)
        Active-set iterations of each task.
    n_features_in_ : int

    Notes
    -----
    The fitted model holds what prediction reads, ``n_SV (n_features + n_tasks)`` values,
    and a saved model is about that size.  Fitting holds more, for as long as it runs: the
    kernel matrix (``n^2`` values up to :data:`FULL_KERNEL_MAX_N` rows, ``n`` per column
    read above) and the Cholesky factor of the support-set matrix (``|S|^2`` values), with
    ``O(|S|^3)`` flops per task (docs: "Large n").
    """

    def __init__(
        self,
        *,
        C: float = 1.0,
        kernel: str = "rbf",
        sigma: float = 1.0,
        gamma: float = 1.0,
        degree: int = 3,
        coef0: float = 0.0,
        class_weight=None,
    ):
        self.C = C
        self.kernel = kernel
        self.sigma = sigma
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.class_weight = class_weight

    def _kernel(self) -> Kernel:
        return Kernel(
            self.kernel, sigma=self.sigma, gamma=self.gamma, degree=self.degree, coef0=self.coef0
        )

    def fit(self, X, y, sample_weight=None):
        C = check_positive("C", self.C)
        X, y_enc, w = _fit_inputs(self, X, y, sample_weight)
        kern = self._kernel()
        # the rows are checked by _fit_inputs: the kernel and the solver check them no more
        X = np.asarray(X, dtype=float)
        full = X.shape[0] <= FULL_KERNEL_MAX_N
        K = _kernel_matrix(X, None, kern) if full else KernelColumns.of(X, kern)
        if full and kern.name != "rbf":  # finite rows can still give an infinite poly kernel
            check_kernel_matrix(K, X.shape[0])
        if len(self.classes_) == 2:
            tasks = [np.where(y_enc == 1, 1.0, -1.0)]
        else:
            tasks = [np.where(y_enc == k, 1.0, -1.0) for k in range(len(self.classes_))]
        coefs, bs, used = [], [], np.zeros(X.shape[0], dtype=bool)
        n_sv, n_it = [], []
        for t in tasks:
            try:
                sol = _fit_l2_svm(K, t, C, w)
            except np.linalg.LinAlgError:
                if self.kernel != "sigmoid":
                    raise
                raise ValueError(
                    f"the sigmoid kernel (gamma={self.gamma}, coef0={self.coef0}) is not "
                    "positive semi-definite on these data: K + I/C has a negative "
                    f"eigenvalue at C={self.C}, so the squared-hinge SVM is not a convex "
                    "problem and has no unique solution; lower C, change gamma or coef0, "
                    "or use libsvm's SVC (final_model='l1')"
                ) from None
            # keep what prediction reads, not the solution: the factor of its support-set
            # matrix alone holds |S|^2 values (issue #63)
            coefs.append(sol.dual_coef)
            bs.append(sol.b)
            n_sv.append(int(sol.support.sum()))
            n_it.append(sol.n_iter)
            used |= sol.support
            del sol
        del K  # the kernel matrix (or its columns) before the model's arrays are made
        self.support_ = np.flatnonzero(used)
        self.support_vectors_ = X[used]
        self.dual_coef_ = np.array(coefs)[:, used]
        self.intercept_ = np.array(bs)
        self.n_support_ = np.asarray(n_sv, dtype=int)
        self.n_iter_ = np.asarray(n_it, dtype=int)
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        kern = self._kernel()
        F = np.empty((X.shape[0], self.dual_coef_.shape[0]))
        rows = max(1, DECISION_BLOCK // max(1, self.support_vectors_.shape[0]))
        for part in gen_batches(X.shape[0], rows):
            Kt = kern(X[part], self.support_vectors_)
            F[part] = Kt @ self.dual_coef_.T + self.intercept_
        return F[:, 0] if len(self.classes_) == 2 else F

    def predict(self, X):
        F = self.decision_function(X)
        idx = (F > 0).astype(int) if F.ndim == 1 else np.argmax(F, axis=1)
        return self.classes_[idx]

    def predict_proba(self, X):
        """RBSVM's tanh probabilities (eq. (29)); one-vs-rest normalised for multiclass."""
        return tanh_proba(self.decision_function(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = False
        return tags


class OvRSVC(ClassifierMixin, BaseEstimator):
    """One-vs-rest libsvm SVC (the papers' multiclass protocol) that accepts ``sample_weight``.

    scikit-learn's ``OneVsRestClassifier`` forwards ``sample_weight`` only under metadata
    routing; this small wrapper fits one binary ``SVC`` per class directly.  Parameters are
    ``SVC``'s; ``n_iter_`` holds the libsvm iterations of every binary model.
    """

    def __init__(
        self,
        *,
        C=1.0,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        class_weight=None,
        max_iter=-1,
        random_state=None,
        cache_size=200.0,
    ):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.random_state = random_state
        self.cache_size = cache_size

    def fit(self, X, y, sample_weight=None):
        X, y_enc, w = _fit_inputs(self, X, y, sample_weight, accept_sparse="csr")
        params = dict(
            C=self.C,
            kernel=self.kernel,
            gamma=self.gamma,
            degree=self.degree,
            coef0=self.coef0,
            max_iter=self.max_iter,
            random_state=self.random_state,
            cache_size=self.cache_size,
        )
        tasks = (
            [y_enc] if len(self.classes_) == 2 else [y_enc == k for k in range(len(self.classes_))]
        )
        self.estimators_ = [SVC(**params).fit(X, t.astype(int), sample_weight=w) for t in tasks]
        self.n_iter_ = np.concatenate([e.n_iter_ for e in self.estimators_])
        return self

    def decision_function(self, X):
        """Shape (n,) for two classes (positive: ``classes_[1]``), (n, n_classes) otherwise."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, accept_sparse="csr")
        F = np.column_stack([e.decision_function(X) for e in self.estimators_])
        return F[:, 0] if len(self.classes_) == 2 else F

    def predict(self, X):
        F = self.decision_function(X)
        idx = (F > 0).astype(int) if F.ndim == 1 else np.argmax(F, axis=1)
        return self.classes_[idx]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # libsvm's SVC on sparse rows
        return tags


def make_final_estimator(
    params: dict[str, Any],
    *,
    final_model: str = "l1",
    multiclass: str = "ovr",
    n_classes: int = 2,
    probability: bool = False,
    random_state=None,
    calibration_folds: int = 5,
):
    """Build the (unfitted) final SVM for selected hyperparameters.

    Parameters
    ----------
    params : dict
        ``best_params_``: kernel, sigma/gamma, C, class_weight, degree, coef0.
    final_model : {"l1", "l2"}
        libsvm hinge-loss ``SVC`` or the exact squared-hinge :class:`L2SVC`.
    multiclass : {"ovr", "ovo"}
        One-vs-rest (the papers' protocol) or libsvm's one-vs-one (L1 only).
    probability : bool
        Platt scaling (a sigmoid fitted on cross-validated decision values by
        ``CalibratedClassifierCV(ensemble=False)``, what ``SVC(probability=True)`` did).
    calibration_folds : int, default=5
        Stratified folds of Platt scaling's cross-validated decision values (at most the
        size of the smallest class).

    libsvm models stop after :data:`LIBSVM_MAX_ITER` iterations (libsvm's own default).
    """
    if multiclass not in ("ovr", "ovo"):
        raise ValueError(f"multiclass must be 'ovr' or 'ovo', got {multiclass!r}")
    kern = Kernel.from_params(params)
    C = float(params.get("C", 1.0))
    cw = params.get("class_weight")
    if final_model == "l2":
        kp = {"kernel": kern.name, "sigma": kern.sigma, "gamma": kern.gamma}
        kp.update(degree=int(kern.degree), coef0=kern.coef0)
        return L2SVC(C=C, class_weight=cw, **kp)
    if final_model != "l1":
        raise ValueError(f"final_model must be 'l1' or 'l2', got {final_model!r}")
    # one-vs-one without Platt keeps libsvm's pairwise decision values (for the tanh coupling;
    # SVMTuner.decision_function converts them to the usual (n, k) shape)
    shape = "ovo" if (n_classes > 2 and multiclass == "ovo" and not probability) else "ovr"
    svc = SVC(
        C=C,
        class_weight=cw,
        max_iter=LIBSVM_MAX_ITER,
        random_state=random_state,
        decision_function_shape=shape,
        **kern.sklearn_params(),
    )
    if n_classes > 2 and multiclass == "ovr":
        svc = OvRSVC(
            C=C,
            class_weight=cw,
            max_iter=LIBSVM_MAX_ITER,
            random_state=random_state,
            **kern.sklearn_params(),
        )
    if probability:
        return CalibratedClassifierCV(
            svc, method="sigmoid", cv=int(calibration_folds), ensemble=False
        )
    return svc
