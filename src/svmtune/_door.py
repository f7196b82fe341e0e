"""The tuner's door: ``X``, ``y``, the weights and the groups validated, encoded and
preprocessed in one call that hands the selector its data (issue 64).

:func:`prepare_training` is the only place :meth:`svmtune.SVMTuner.fit` passes the user's
data to: it runs scikit-learn's ``validate_data`` on the tuner (so the estimator gets
``n_features_in_`` and ``feature_names_in_``, scikit-learn's contract), checks and encodes
the labels, multiplies the sample weights by the class weights, checks the groups, fits the
preprocessing on the rows of positive weight and applies it, and returns
:class:`PreparedTraining`: the selector's :class:`~svmtune.methods.base.TrainingData` and what
the tuner keeps of the door (the fitted preprocessor, ``classes_``, whether the rows were
sparse).  ``X`` goes in once and comes out preprocessed; nothing of it returns to the tuner
between the steps.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.preprocessing import LabelEncoder, StandardScaler
from sklearn.utils.validation import check_consistent_length, column_or_1d, validate_data

from svmtune._dask_inputs import (
    check_dask_values,
    check_materialise,
    column_summary,
    dask_labels,
    dask_rows,
    fit_dask_scaler,
    is_dask,
)
from svmtune._standardised_rows import StandardisedRows
from svmtune._validation import (
    as_table,
    check_distance_range,
    check_feature_scale,
    check_label_kind,
    check_labels,
    check_min_class_count,
    check_weight_range,
    explained_errors,
    validate_groups,
    validate_sample_weight,
)
from svmtune._warnings import user_stacklevel
from svmtune.estimators import class_weight_vector
from svmtune.methods.base import TrainingData, sparse_fit_refusal
from svmtune.preprocess import (
    check_sparse_features,
    fit_preprocessor,
    make_preprocessor,
    transform_validated,
)
from svmtune.search.cv import check_class_groups

__all__ = ["PreparedTraining", "prepare_training", "class_counts", "SPARSE_FORMATS"]

#: the scipy sparse formats fit and predict take (as CSR)
SPARSE_FORMATS = ("csr", "csc")


@dataclass(frozen=True)
class PreparedTraining:
    """What the door hands on: the selector's data and what the tuner keeps of the door.

    Attributes
    ----------
    data : TrainingData
        The preprocessed float64 ``X`` (a CSR matrix for a sparse ``X``; for a selector
        that reads rows, ``accepts_lazy_rows``, a lazily standardised dask array or the
        rows of a dense ``X`` standardised as they are read,
        :class:`~svmtune._standardised_rows.StandardisedRows`), the labels encoded
        ``0..k-1``, the per-sample weights (sample weight times class weight; None: all 1)
        and the integer group codes (None: no groups, or a method that holds nothing out).
    preprocessor : fitted transformer
        The tuner's ``preprocessor_``: predictions apply it to new rows.
    classes : ndarray
        The tuner's ``classes_``: the sorted distinct labels ``data.y`` encodes.
    fitted_sparse : bool
        Whether the rows were a scipy sparse matrix (a sparse ``X`` to predict then stays
        sparse).
    n_features_in : int
        The columns of ``X``, as ``validate_data`` set them on the tuner.
    feature_names_in : ndarray or None
        A DataFrame's column names, as ``validate_data`` set them on the tuner.
    """

    data: TrainingData
    preprocessor: Any
    classes: np.ndarray
    fitted_sparse: bool
    n_features_in: int
    feature_names_in: np.ndarray | None


def class_counts(y_enc: np.ndarray, w: np.ndarray | None, n_classes: int) -> np.ndarray:
    """Samples of positive weight in each class."""
    return np.bincount(y_enc if w is None else y_enc[w > 0], minlength=n_classes)


def prepare_training(tuner, X, y, sample_weight=None, groups=None, *, selector) -> PreparedTraining:
    """Validate, encode and preprocess the training data of ``tuner.fit`` in one call.

    Parameters
    ----------
    tuner : SVMTuner
        The estimator being fitted: ``validate_data`` sets its ``n_features_in_`` (and
        ``feature_names_in_``); its options ``preprocess``, ``class_weight``,
        ``probability``, ``method`` and ``final_model`` say how the data are prepared.
    X : array-like, DataFrame, scipy sparse matrix or dask collection
        The user's features; a dask array or DataFrame of numeric columns is checked and
        standardised by reductions (:mod:`svmtune._dask_inputs`) and handed on as a lazily
        standardised dask array where the selector takes one (``accepts_lazy_rows``), else
        gathered into memory where it fits.
    y : array-like or dask array
        The user's labels.
    sample_weight, groups : array-like, float or None
        As :meth:`svmtune.SVMTuner.fit` takes them.
    selector : Selector
        The method that will receive the data: whether it takes sparse (or dask) rows, and
        what it holds out (:meth:`~svmtune.methods.base.Selector.holdout`).

    Returns
    -------
    PreparedTraining

    Notes
    -----
    Every error and warning names the user's data as given (labels, column names), so all of
    them are raised here, before the selection starts.
    """
    holdout = selector.holdout()
    if is_dask(X):
        return _prepare_dask(tuner, X, y, sample_weight, groups, selector)
    if is_dask(y):  # one label a row, gathered to go with a NumPy X
        y = y.compute()
    check_labels(y)
    X, X_named, y = _validate_Xy(tuner, X, y, selector)
    check_label_kind(y)
    enc = LabelEncoder().fit(y)
    classes, y_enc = enc.classes_, enc.transform(y)
    w, groups = weigh(tuner, y_enc, classes, sample_weight, groups, holdout)
    pre, Xp = _fit_preprocessing(tuner.preprocess, X, X_named, w, selector.accepts_lazy_rows)
    return PreparedTraining(
        TrainingData(Xp, y_enc, w, groups),
        pre,
        classes,
        sp.issparse(X),
        tuner.n_features_in_,
        getattr(tuner, "feature_names_in_", None),
    )


def _validate_Xy(tuner, X, y, selector):
    """``(X, X_named, y)`` validated by ``validate_data`` on ``tuner``: ``X_named`` keeps a
    DataFrame's column names for the checks and warnings that name columns; a sparse ``X``
    becomes CSR."""
    if sp.issparse(X) and tuner.preprocess != "auto":  # auto: scikit-learn's TypeError
        check_sparse_features(X)  # before anything of one entry per column
        why = sparse_fit_refusal(tuner.method, selector, tuner.final_model)
        if why is not None:
            raise ValueError(why)
        X, y = validate_data(tuner, X, y, accept_sparse=SPARSE_FORMATS)
        X = X.tocsr()  # rows are sliced: folds, weight-0 rows
        return X, X, y
    if tuner.preprocess == "auto":  # a table: its columns are checked by the preprocessor
        X = as_table(X)
        validate_data(tuner, X, y, skip_check_array=True)  # feature names; y required
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        return X, X, y
    columns = X.columns if isinstance(X, pd.DataFrame) else None
    with explained_errors(X):
        X, y = validate_data(tuner, X, y)
    X_named = X if columns is None else pd.DataFrame(X, columns=columns, copy=False)
    return X, X_named, y


def weigh(tuner, y_enc: np.ndarray, classes: np.ndarray, sample_weight, groups, holdout: str):
    """The per-sample weights (sample weight times class weight; None: all 1) and the
    validated groups (None where the method holds nothing out, with a warning), with every
    check that names the user's labels done before the selection starts."""
    check_min_class_count(y_enc, classes, minimum=2)
    w = validate_sample_weight(sample_weight, len(y_enc))
    check_weight_range(w)
    groups = validate_groups(groups, len(y_enc))
    if groups is not None and holdout == "none":
        warnings.warn(
            f"method {tuner.method!r} holds no rows out to judge its candidates, so groups "
            "change nothing",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        groups = None
    if tuner.class_weight is not None:
        cw = class_weight_vector(y_enc, classes, tuner.class_weight, w)
        w = cw if w is None else w * cw
        check_weight_range(w, "sample_weight * class_weight")
    if w is not None:
        # a class of weight 0 is absent from every fit (one sample of weight 2 stands
        # for two samples, as the scikit-learn checks require)
        check_min_class_count(y_enc, classes, minimum=1, sample_weight=w)
    if groups is not None:  # named by the user's label, before the selection starts
        check_class_groups(y_enc, groups, w, classes)
    # Platt scaling cross-validates the final SVM: every class needs two samples
    counts = class_counts(y_enc, w, len(classes))
    if tuner.probability == "platt" and counts.min() < 2:
        small = classes[int(np.argmin(counts))]
        raise ValueError(
            f"probability='platt' cross-validates the final SVM, which needs at least 2 "
            f"samples (of positive weight) in every class; class {small!r} has "
            f"{int(counts.min())}: use probability='tanh'"
        )
    return w, groups


def _rows(X, keep: np.ndarray):
    """The rows ``keep`` (a boolean mask) of a DataFrame or an array."""
    return X.iloc[keep] if isinstance(X, pd.DataFrame) else X[keep]


def as_float(Xt):
    """Preprocessed ``X`` as float64: a CSR matrix stays sparse, anything else an array."""
    if sp.issparse(Xt):
        return sp.csr_matrix(Xt, dtype=float)
    return np.asarray(Xt, dtype=float)


def _fit_preprocessing(preprocess: str, X, X_named, w, lazy: bool = False):
    """The preprocessor for ``preprocess`` fitted on the rows of positive weight (every
    statistic counts a row ``w`` times), and the transformed float matrix: for a standard
    scaler on a dense array and a selector that reads rows (``lazy``), those rows standardised
    as they are read (:class:`~svmtune._standardised_rows.StandardisedRows`, the copy's rows
    bit for bit) instead of a standardised copy of ``X``."""
    if preprocess == "none":
        check_distance_range(X)
    elif preprocess == "auto":  # a table: its numeric columns
        check_feature_scale(X_named)
    else:
        check_feature_scale(X, getattr(X_named, "columns", None))
    X_fit, w_fit = X, w
    if w is not None and not (w > 0).all():
        X_fit, X_named, w_fit = _rows(X, w > 0), _rows(X_named, w > 0), w[w > 0]
    if sp.issparse(X):  # scaled without centring, as StandardScaler(with_mean=False)
        pre = (
            StandardScaler(with_mean=False)
            if preprocess == "standard"
            else make_preprocessor("none")
        )
    else:
        pre = make_preprocessor(preprocess, X_named)
    fit_preprocessor(pre, X_fit, w_fit)
    if lazy and type(pre) is StandardScaler and isinstance(X, np.ndarray):
        return pre, StandardisedRows(X, pre)
    return pre, as_float(transform_validated(pre, X))


def _prepare_dask(tuner, X, y, sample_weight, groups, selector) -> PreparedTraining:
    """:func:`prepare_training` for a dask array or DataFrame ``X``: the checks of the NumPy
    path in its order, each on metadata or a reduction (:mod:`svmtune._dask_inputs`); the
    standard scaler fitted by weighted reductions; the labels encoded from their distinct
    values; the weights and groups (one entry a row) as NumPy arrays.  ``X`` is handed on
    standardised lazily to a selector with ``accepts_lazy_rows``, else gathered, where it fits in
    memory (:func:`~svmtune._dask_inputs.check_materialise`)."""
    if tuner.preprocess == "auto":
        raise ValueError(
            "preprocess='auto' (imputation, one-hot encoding) takes no dask X; use "
            "preprocess='standard' or 'none' on numeric columns, or compute() X first"
        )
    Xd, meta = dask_rows(X)
    validate_data(tuner, meta, skip_check_array=True)  # n_features_in_, feature_names_in_
    names = getattr(tuner, "feature_names_in_", range(Xd.shape[1]))
    nan, inf, peak = column_summary(Xd)
    check_dask_values(nan, inf, names)
    if is_dask(groups) or is_dask(sample_weight):  # one entry a row, as y's codes
        groups = groups.compute() if is_dask(groups) else groups
        sample_weight = sample_weight.compute() if is_dask(sample_weight) else sample_weight
    classes, y_enc = dask_labels(y, Xd.shape[0])
    w, groups = weigh(tuner, y_enc, classes, sample_weight, groups, selector.holdout())
    if tuner.preprocess == "none":  # the checks read the columns' peaks alone
        check_distance_range(peak[None, :])
        pre, Xp = make_preprocessor("none").fit(np.zeros((1, Xd.shape[1]))), Xd
    else:
        check_feature_scale(peak[None, :], getattr(tuner, "feature_names_in_", None))
        pre = fit_dask_scaler(Xd, w)
        Xp = (Xd - pre.mean_) / pre.scale_
    if not selector.accepts_lazy_rows:
        check_materialise(*Xd.shape, tuner.method)
        Xp = np.asarray(Xp.compute(), dtype=np.float64)
    return PreparedTraining(
        TrainingData(Xp, y_enc, w, groups),
        pre,
        classes,
        False,
        tuner.n_features_in_,
        getattr(tuner, "feature_names_in_", None),
    )
