"""SVMTuner: the scikit-learn meta-estimator users touch."""

from __future__ import annotations

import contextlib
import functools
import time
from typing import Any

import joblib
import numpy as np
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.compose import ColumnTransformer
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from svmtune._dask_inputs import dask_meta, is_dask, map_rows
from svmtune._door import SPARSE_FORMATS, as_float, class_counts, prepare_training
from svmtune._final import final_estimators, final_rows
from svmtune._memory import release_freed_memory
from svmtune._params import PARAMETER_CHECKS
from svmtune._progress import (
    HAS_CALLBACKS,
    CallbackSupportMixin,
    describe,
    final_step,
    forward_to_callbacks,
    progress,
    with_callbacks,
)
from svmtune._results import relabel_class_weight, search_results
from svmtune._validation import as_table, explained_errors
from svmtune.estimators import ovo_tanh_proba, ovo_to_ovr_decision, tanh_proba
from svmtune.exceptions import SelectionStopped
from svmtune.methods._constraints import validate_options
from svmtune.methods.base import (
    METHODS,
    SelectionContext,
    TrainingData,
    get_selector,
    selector_class,
    sparse_fit_refusal,
)
from svmtune.preprocess import densify_for, warn_unseen_categories

__all__ = ["SVMTuner"]


def _announce(selector, reporter) -> None:
    """The CV fits a sequential search (TPE, Optuna) will make, for the progress bar's
    ETA (the searches that score all candidates at once announce them themselves)."""
    budget = getattr(selector, "max_evals", None) or getattr(selector, "n_trials", None)
    n_splits = getattr(selector, "n_splits", None)
    if budget and n_splits:
        reporter.expect(int(budget) * int(n_splits), "CV fits")


class SVMTuner(CallbackSupportMixin, ClassifierMixin, BaseEstimator):
    """Select SVM hyperparameters with a published method, then fit the final SVM.

    Parameters
    ----------
    method : str, default="auto"
        Selection method; see :func:`svmtune.available_methods`.  ``"auto"``
        (:class:`svmtune.methods.auto.Auto`) composes data-only starts, a short RBSVM
        gradient refinement and a closed-form leave-one-out referee that also picks the final
        model; ``"default"`` is scikit-learn's ``SVC()`` without any tuning.
    kernel : str, default="rbf"
        Kernel whose parameters are selected (methods state which kernels they support).
    method_params : dict, optional
        Options of the method (grid ranges, bounds, fold counts, ...).
    preprocess : {"standard", "auto", "none"}, default="standard"
        "standard" standardises numeric features and rejects NaN/inf; "auto" also imputes
        missing values and one-hot encodes categorical DataFrame columns; all fitted on the
        training data only (see :mod:`svmtune.preprocess`).
    multiclass : {"ovr", "ovo"}, default="ovr"
        Final multiclass SVM: one-vs-rest (the papers' protocol) or libsvm's one-vs-one.
        The L2-SVM is one-vs-rest only: a final L2-SVM with "ovo" on more than two classes
        is fitted one-vs-rest, with a warning.
    final_model : {"auto", "l1", "l2", "lowrank"}, default="auto"
        "auto" refits the SVM the method selected for (L2-SVM for RBSVM, SpanSVM, RMSVM
        and the CV searches given ``method_params={"final_model": "l2"}``; for ``auto`` the
        family its referee chose, or on large data libsvm's SVC unless its fit would cost
        more than the budget has left, then the low-rank L2-SVM; libsvm's hinge-loss SVC
        otherwise); "l1" / "l2" / "lowrank" force one: "lowrank" is the L2-SVM on a rank-500
        (or the selection's ``rank``) Nystroem kernel,
        :class:`svmtune.estimators_lowrank.LowRankL2SVC`, which costs ``O(n m^2)`` to fit
        and ``O(m d)`` per prediction and takes sparse ``X``.
    class_weight : None, "balanced" or dict, default=None
        Weights of the classes: every sample's weight (its ``sample_weight``, or 1) is
        multiplied by its class's weight, so they act wherever sample weights do (a weight
        stands for repeated rows): in every SVM fit, where they scale the class's penalty
        as ``SVC(class_weight=...)`` does, and in the selection's criteria and statistics
        (class statistics of the data criteria, the standardisation, ``SVC()``'s
        gamma='scale').  "balanced" gives class ``c`` the weight
        ``n_samples / (n_classes * n_c)``, counting each sample by its ``sample_weight``
        (``SVC`` counts rows; the two agree without sample weights); a dict maps class
        labels to weights (unnamed classes keep 1).  Searches that choose class weights
        themselves (``span_rule`` with ``search="class_weights"``) search on top of these.
    probability : {"tanh", "platt"}, default="tanh"
        ``predict_proba``: RBSVM's tanh mapping of the decision values (eq. (29); for a
        one-vs-one SVM, of the pairwise values combined by Wu-Lin-Weng pairwise coupling), or
        Platt scaling (a sigmoid on cross-validated decision values; L1 final models only).
        It changes ``predict_proba`` only: ``predict`` and ``decision_function`` are the final
        SVM's, as for scikit-learn's ``SVC(probability=True)``.
    random_state : int, RandomState or None
    n_jobs : int or None
        Parallel jobs for candidate evaluation (joblib).
    backend : str or None, default=None
        joblib backend for the candidate evaluation (``joblib.parallel_config(backend=...)``
        around the selection): None keeps joblib's default (local processes); ``"dask"``
        runs the same cells on the workers of the running ``dask.distributed.Client``
        (use ``n_jobs=-1``).  Results are identical to the serial run.
    verbose : {0, 1, 2}, default=0
        Progress of the selection on standard error: 0 nothing; 1 a progress bar with the
        time left where the work is known in advance (the CV fits of the cross-validated
        searches, ``auto``'s candidates) and a count of the gradient steps of the gradient
        searches; 2 a line per evaluated candidate (CV candidate, gradient step or ``auto``
        candidate) with its score; both end with the chosen point.  Each unit of work is a
        subtask of the fit for the callbacks of ``set_callbacks`` (``sklearn.callback``); a
        stop request (``on_fit_task_end`` returns True) raises
        :class:`svmtune.exceptions.SelectionStopped` there.

    Attributes
    ----------
    best_params_ : dict
        The selected hyperparameters (``sigma``, ``gamma``, ``C``, ...); a chosen
        ``class_weight`` is keyed by the labels of ``classes_``, as ``SVC`` takes it.
    estimate_ : float or None
        The method's own estimate of the final SVM's error rate at the chosen point, in
        [0, 1]: the K-fold CV error (CV searches with ``scoring="error"``; ``esdr``,
        ``dbtc``, ``j4``, ``ld`` at the C they chose), the closed-form leave-one-out error
        (``rbsvm``, ``span`` and their low-rank versions: of the chosen SVM; ``auto``: the
        referee's), the span-rule estimate (``span_rule``).  None where the method has none
        (``default``, ``ss``, ``ld_c1``, ``radius_margin``, ``radius_margin_lowrank``, and the
        CV searches scored by hinge loss or F1).
    criterion_ : float or None
        The value the method optimised at the chosen point (CV loss, RBSVM's cross-entropy,
        smoothed span, radius-margin bound, LD or ESDR index, S&S ratio in dB, ...); None
        for ``default``.
    selection_time_ : float
        Seconds spent by the selection method.
    final_fit_time_ : float
        Seconds of the final SVM's fit on the preprocessed data (without validation and
        preprocessing), with Platt scaling's calibration.
    n_svm_fits_ : int
    history_ : list of dict
        The method's own record of its search (keys differ per method).
    cv_results_ : dict of ndarrays
        The evaluated candidates in scikit-learn's ``GridSearchCV.cv_results_`` layout
        (``pandas.DataFrame(tuner.cv_results_)``): ``params``, ``param_sigma``,
        ``param_C``, ``mean_test_score``, ``split<k>_test_score`` (CV methods),
        ``rank_test_score``, ``mean_fit_time`` and the history's own fields.
        ``mean_test_score`` (higher is better) is the CV score of the K-fold searches and
        of the C stage of ``esdr``, ``dbtc``, ``j4`` and ``ld`` (NaN on their width
        stage), 1 - the referee's leave-one-out estimate for ``auto``, 1 - the span-rule
        estimate (or the CV accuracy, ``criterion="cv"``) for ``span_rule``; the gradient
        methods, ``ld_c1`` and ``ss`` score no candidate (NaN, their criterion in its own
        column: ``value``, ``ld``, ``ss``) except the chosen row (``best_score_``).
        ``params[best_index_]`` holds the hyperparameters of ``best_params_``.
    best_index_ : int
        The row of ``cv_results_`` the method chose.
    best_score_ : float
        ``cv_results_["mean_test_score"][best_index_]``: ``1 - estimate_`` wherever the
        method has an error estimate (``span_rule`` with ``criterion="cv"``: its CV
        accuracy), the chosen candidate's score for the other CV scorings, NaN only where
        the method has neither (``default``, ``ss``, ``ld_c1``, ``radius_margin``,
        ``radius_margin_lowrank``).
    refit_time_ : float
        Seconds of the final fit (``final_fit_time_``).
    n_splits_ : int or None
        Number of CV folds of the ``split<k>_test_score`` columns (None: no folds).
    selection_ : Selection
    classes_ : ndarray
    estimator_ : fitted final SVM
    calibrator_ : fitted ``CalibratedClassifierCV`` or None
        Platt scaling of ``predict_proba`` (``probability_ == "platt"``).
    preprocessor_ : fitted transformer
    """

    def __init__(
        self,
        *,
        method: str = "auto",
        kernel: str = "rbf",
        method_params: dict[str, Any] | None = None,
        preprocess: str = "standard",
        multiclass: str = "ovr",
        final_model: str = "auto",
        class_weight: str | dict | None = None,
        probability: str = "tanh",
        random_state=None,
        n_jobs: int | None = None,
        backend: str | None = None,
        verbose: int = 0,
    ):
        self.method = method
        self.kernel = kernel
        self.method_params = method_params
        self.preprocess = preprocess
        self.multiclass = multiclass
        self.final_model = final_model
        self.class_weight = class_weight
        self.probability = probability
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.backend = backend
        self.verbose = verbose

    # ------------------------------------------------------------------ helpers
    def _check_params(self) -> None:
        """Every constructor parameter against :data:`PARAMETER_CHECKS` (one declared
        table, as scikit-learn's ``_parameter_constraints``; checked by
        :func:`svmtune.methods._constraints.validate_options`)."""
        validate_options(PARAMETER_CHECKS, {k: getattr(self, k) for k in PARAMETER_CHECKS})

    def _validate_X(self, X, reset: bool):
        if self.preprocess == "auto":
            X = as_table(X)
            validate_data(self, X, reset=reset, skip_check_array=True)
            return X
        with explained_errors(X):
            return validate_data(self, X, reset=reset, accept_sparse=SPARSE_FORMATS)

    # ------------------------------------------------------------------ fit
    @with_callbacks
    def fit(self, X, y, sample_weight=None, groups=None):
        """Select hyperparameters on ``(X, y)`` and refit the final SVM on all of it.

        Parameters
        ----------
        X : array-like, DataFrame or scipy sparse matrix of shape (n_samples, n_features)
            Features; with ``preprocess="auto"`` categorical columns and missing values too.
            A CSR/CSC matrix stays sparse (never densified): ``preprocess="standard"`` then
            scales without centring (``StandardScaler(with_mean=False)``; an RBF kernel does
            not see centring, so the selection is that of the dense matrix), and only the
            methods that fit libsvm on sparse rows (``grid``, ``random``, ``tpe``,
            ``optuna``, ``halving``, ``cv_cv``, ``default``) or build a Nystroem factor from
            sparse dot products (``auto``, always on its low-rank path there, and
            ``rbsvm_lowrank``) take it, final model ``"l1"``; the others, which compute
            dense kernel matrices, raise a ``ValueError`` saying so.  At most
            :data:`~svmtune.preprocess.MAX_SPARSE_FEATURES` columns (the scaler's statistics
            are dense); a model fitted on dense rows predicts a sparse X as ``X.toarray()``.
            A ``dask.array.Array`` or a dask DataFrame of numeric columns (the ``dask``
            extra) is checked from its metadata and by reductions (finite values, the
            columns' scales), standardised by the scaler's weighted statistics computed as
            reductions, and gathered into memory for the selection where it takes at most
            a quarter of the memory available (a ``ValueError`` says what to do otherwise);
            ``preprocess="auto"`` takes none.  Its predictions are dask arrays.
        y : array-like or dask array of shape (n_samples,)
            Class labels (at least two classes, two samples each).
        sample_weight : array-like of shape (n_samples,) or float, optional
            Per-sample weights (>= 0; a float is every sample's weight), used by every SVM
            fit and closed-form criterion; a sample of weight 0 enters none of them.  The
            K-fold searches score their validation parts unweighted, as scikit-learn's
            searches do, so there every held-out sample counts once.
        groups : array-like of shape (n_samples,), optional
            The group of each sample (the patient, subject, recording or stretch of a time
            series it comes from), for data whose rows are not exchangeable.  The
            cross-validated methods (``grid``, ``random``, ``tpe``, ``optuna``, ``halving``,
            ``cv_cv``, the C search of ``esdr``, ``dbtc``, ``j4`` and ``ld``, and
            ``span_rule`` with ``criterion="cv"``) then keep every group on one side of each
            split, as scikit-learn's ``StratifiedGroupKFold`` does, so that no candidate is
            judged on rows whose close relatives it was trained on.  ``rbsvm``,
            ``rbsvm_lowrank`` and ``auto`` hold out each whole group in closed form
            (leave-one-group-out, :mod:`svmtune.loo.rbsvm_groups`).  The other leave-one-out
            methods (``span``, ``radius_margin``, their low-rank versions and ``span_rule``'s
            closed-form criteria) hold out single rows and raise a ``ValueError``; methods that
            hold out nothing (``default``, ``ss``, ``ld_c1``) warn that groups change nothing.

        Returns
        -------
        self : SVMTuner
        """
        self._check_params()
        selector = get_selector(self.method, self.method_params)
        selector.check_kernel(self.kernel)
        if selector.holdout() != "none":  # "none": the door warns, and drops the groups
            selector.check_groups(groups)
        door = prepare_training(self, X, y, sample_weight, groups, selector=selector)
        self.classes_ = door.classes
        self.preprocessor_ = door.preprocessor
        self._fitted_sparse = door.fitted_sparse  # a sparse X to predict stays sparse
        data = door.data
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        ctx = self._callbacks_begin(data)
        try:
            sel = self._select(
                selector, data, seed, ctx, final=lambda s: self._fit_final(s, data, seed)
            )
        except SelectionStopped:  # no selection: nothing of this (or an earlier) fit is kept
            for name in [k for k in vars(self) if k.endswith("_") and k[0] != "_"]:
                delattr(self, name)
            raise
        self._record(sel, selector)
        if ctx is not None:
            ctx.call_on_fit_task_end(
                estimator=self,
                X=data.X,
                y=data.y,
                metadata={"sample_weight": data.sample_weight},
                reconstruction_attributes={},
            )
        return self

    def _callbacks_begin(self, data: TrainingData):
        """The root context of scikit-learn's callbacks set with ``set_callbacks`` (its
        ``sklearn.callback`` API), its fit task begun; None when none are set.  Each unit
        of the selection's work (a CV fit, a candidate, a gradient step) is a subtask of
        the fit, begun and ended as the selection reports it
        (:func:`svmtune._progress.forward_to_callbacks`)."""
        if not HAS_CALLBACKS or not getattr(self, "_skl_callbacks", None):
            return None
        ctx = self._init_callback_context(task_name="fit", max_subtasks=None)
        ctx.call_on_fit_task_begin(
            estimator=self, X=data.X, y=data.y, metadata={"sample_weight": data.sample_weight}
        )
        return ctx

    def _select(self, selector, data: TrainingData, seed: int, ctx=None, final=None):
        """Run the method (under ``backend``, with the progress display and scikit-learn's
        callbacks of ``ctx``), then ``final(selection)``, the final fit, as the progress
        bar's last step (:func:`svmtune._progress.final_step`); sets ``selection_time_``."""
        t0 = time.perf_counter()
        backend = (
            joblib.parallel_config(backend=self.backend)
            if self.backend is not None
            else contextlib.nullcontext()
        )
        forward = None if ctx is None else functools.partial(forward_to_callbacks, self, ctx, [0])
        label = f"svmtune {self.method}"
        with backend, progress(self.verbose, label=label, on_advance=forward) as reporter:
            if reporter is not None:
                _announce(selector, reporter)
            sel = selector.run(
                data, SelectionContext(self.kernel, seed, self.n_jobs, self.multiclass)
            )
            self.selection_time_ = time.perf_counter() - t0
            release_freed_memory()  # the selection's matrices, before the final fit's own
            if final is not None:
                with final_step(reporter):
                    final(sel)
            if reporter is not None:
                fitted = "" if final is None else f", final fit {self.final_fit_time_:.2f} s"
                reporter.close(
                    f"selected {describe(sel.params)} in {self.selection_time_:.2f} s "
                    f"({int(sel.n_svm_fits)} SVM fits){fitted}"
                )
        return sel

    def _fit_final(self, sel, data: TrainingData, seed: int) -> None:
        """Fit the final SVM (and Platt's calibrator) on all samples with the selected
        hyperparameters (a dask ``X`` lazy for the low-rank L2-SVM, fitted in its row chunks,
        else gathered: :func:`svmtune._final.final_rows`); sets ``estimator_``,
        ``calibrator_``, ``final_model_``, ``probability_`` and ``final_fit_time_``."""
        Xp, y_enc, w = data.X, data.y, data.sample_weight
        n_classes = len(self.classes_)
        final, platt, final_estimator = final_estimators(
            sel,
            self.final_model,
            Xp,
            multiclass=self.multiclass,
            probability=self.probability,
            n_classes=n_classes,
            folds=int(min(5, class_counts(y_enc, w, n_classes).min())),
            seed=seed,
        )
        Xp = final_rows(final, Xp)  # a dask X: lazy for the low-rank model, else gathered
        w_final = w if sel.sample_weight is None else sel.sample_weight
        fit_kw = {} if w_final is None else {"sample_weight": w_final}
        t0 = time.perf_counter()
        with config_context(assume_finite=True):  # the door checked X: no pass over it again
            self.estimator_ = final_estimator(False).fit(Xp, y_enc, **fit_kw)
            # Platt's calibrator refits the SVM on all samples too, but keeps it behind its
            # own (probability-argmax) predict; the tuner predicts with the SVM it selected for
            self.calibrator_ = final_estimator(True).fit(Xp, y_enc, **fit_kw) if platt else None
        self.final_fit_time_ = time.perf_counter() - t0
        self.final_model_ = final
        self.probability_ = "platt" if platt else "tanh"

    def _record(self, sel, selector) -> None:
        """The selection's fitted attributes, ``cv_results_`` in ``BaseSearchCV``'s shape."""
        self.selection_ = sel
        self.best_params_ = dict(sel.params)
        if "class_weight" in self.best_params_:  # keyed by the encoded labels it saw
            cw = relabel_class_weight(self.best_params_["class_weight"], self.classes_)
            self.best_params_["class_weight"] = cw
        self.estimate_ = sel.estimate
        self.criterion_ = sel.criterion
        self.n_svm_fits_ = int(sel.n_svm_fits)
        self.history_ = list(sel.history)
        results, best, n_splits = search_results(
            sel, selector, getattr(selector, "scoring", "error"), classes=self.classes_
        )
        self.cv_results_ = results
        self.best_index_ = best
        self.best_score_ = float(results["mean_test_score"][best])
        self.refit_time_ = self.final_fit_time_
        self.n_splits_ = n_splits

    # ------------------------------------------------------------------ predict
    def _transform(self, X):
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        X = densify_for(X, self.preprocessor_, getattr(self, "_fitted_sparse", None))
        names = getattr(self, "feature_names_in_", None)
        if (
            names is not None
            and not hasattr(X, "columns")
            and isinstance(self.preprocessor_, ColumnTransformer)
        ):  # its categorical columns are selected by name
            shown = ", ".join(repr(str(c)) for c in names[:6]) + (" ..." if len(names) > 6 else "")
            raise ValueError(
                f"this SVMTuner was fitted on a DataFrame with categorical columns; pass a "
                f"DataFrame with the same columns ({shown}), not a {type(X).__name__}"
            )
        Xt = self.preprocessor_.transform(X)
        warn_unseen_categories(self.preprocessor_, X)  # once per predict call
        return as_float(Xt)

    def _pairwise(self) -> bool:
        """The final SVM is libsvm's one-vs-one keeping pairwise decision values."""
        return getattr(self.estimator_, "decision_function_shape", None) == "ovo"

    def _rowwise(self, predict, X, width: int | None, dtype):
        """``predict`` (one of the prediction methods) of a dask array or DataFrame ``X`` as
        a lazy dask array, mapped over its blocks of rows (rows are independent: each block
        is predicted as a NumPy array or a pandas DataFrame is); its columns (and feature
        names) are checked now, from its metadata.  None for any other ``X``."""
        if not is_dask(X):
            return None
        check_is_fitted(self)
        validate_data(self, dask_meta(X), reset=False, skip_check_array=True)
        return map_rows(predict, X, width, dtype)

    def decision_function(self, X):
        """Decision values of the final SVM: shape (n,) for binary, (n, n_classes) otherwise
        (for one-vs-one, scikit-learn's ``"ovr"`` transform of the pairwise values).  A dask
        ``X`` gives a dask array, computed block by block of rows."""
        k = len(self.classes_) if hasattr(self, "classes_") else 2
        lazy = self._rowwise(self.decision_function, X, None if k == 2 else k, np.float64)
        if lazy is not None:
            return lazy
        Xp = self._transform(X)
        dec = self.estimator_.decision_function(Xp)
        if self._pairwise():
            return ovo_to_ovr_decision(dec, len(self.classes_))
        return dec

    def predict(self, X):
        """The class of each row of ``X`` (a dask array for a dask ``X``)."""
        lazy = self._rowwise(self.predict, X, None, getattr(self, "classes_", np.empty(0)).dtype)
        if lazy is not None:
            return lazy
        Xp = self._transform(X)
        return self.classes_[np.asarray(self.estimator_.predict(Xp), dtype=int)]

    def predict_proba(self, X):
        """Class probabilities (columns follow ``classes_``); see the ``probability`` option.
        A dask ``X`` gives a dask array, computed block by block of rows."""
        k = len(getattr(self, "classes_", ()))
        lazy = self._rowwise(self.predict_proba, X, k, np.float64)
        if lazy is not None:
            return lazy
        Xp = self._transform(X)
        if self.probability_ == "platt":
            return self.calibrator_.predict_proba(Xp)
        if self._pairwise():
            return ovo_tanh_proba(self.estimator_.decision_function(Xp), len(self.classes_))
        return tanh_proba(self.estimator_.decision_function(Xp))

    def predict_log_proba(self, X):
        return np.log(np.clip(self.predict_proba(X), 1e-300, None))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.preprocess == "auto"
        known = isinstance(self.method, str) and self.method in METHODS
        tags.input_tags.sparse = (
            known
            and self.preprocess != "auto"  # a table's preprocessing takes no sparse X
            # the selector's class: no selector built (and its options checked) per predict
            and sparse_fit_refusal(self.method, selector_class(self.method), self.final_model)
            is None
        )
        return tags
