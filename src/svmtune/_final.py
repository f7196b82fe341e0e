"""The final SVM of a selection: which model, the warnings its options call for, and the
unfitted estimator (:meth:`svmtune.tuner.SVMTuner.fit`'s last step).

libsvm's SVC (one-vs-rest or one-vs-one, Platt's calibrator on request), the exact L2-SVM
(:class:`svmtune.estimators.L2SVC`) or the L2-SVM on a Nystroem kernel
(:class:`svmtune.estimators_lowrank.LowRankL2SVC`, with the selection's ``rank`` and
``rank_tol`` where it names them), on the rows :func:`final_rows` gives it: a dask ``X``
lazy for the low-rank model, gathered for the others.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from svmtune._dask_inputs import fits_in_memory, gather_limit, is_dask
from svmtune._standardised_rows import StandardisedRows
from svmtune._warnings import user_stacklevel
from svmtune.estimators import make_final_estimator
from svmtune.estimators_lowrank import LowRankL2SVC

__all__ = ["final_estimators", "final_rows", "forced_rule"]


def final_rows(final: str, X):
    """``X`` as the final model ``final`` is fitted on it: a dask ``X`` stays lazy for the
    low-rank L2-SVM, which is fitted in its row blocks on dask's scheduler
    (:class:`svmtune.estimators_lowrank.LowRankL2SVC`), and is gathered for libsvm's SVC and
    the exact L2-SVM where it fits in memory (:func:`svmtune._dask_inputs.fits_in_memory`);
    rows standardised as they are read (:class:`svmtune._standardised_rows.StandardisedRows`)
    stay so for the low-rank model and are made whole for the others; any other ``X`` is
    returned as it is.

    Raises
    ------
    ValueError
        For a dask ``X`` too large to gather and a final model other than ``"lowrank"``
        (one the user forced with ``final_model``: ``method="auto"`` chooses the low-rank
        model there, :mod:`svmtune.methods._auto_rows`).
    """
    if final == "lowrank":
        return X
    if isinstance(X, StandardisedRows):  # the others are fitted on X whole
        return np.asarray(X)
    if not is_dask(X):
        return X
    n, d = X.shape
    if not fits_in_memory(n, d):
        raise ValueError(
            f"final_model={final!r} is fitted in memory, and X, a dask array of {n:,} rows x "
            f"{d:,} columns ({8.0 * n * d / 2**30:.3g} GiB as float64), is larger than the "
            f"{gather_limit() / 2**30:.3g} GiB svmtune gathers: use final_model='lowrank' "
            "(fitted in X's row blocks) or 'auto'"
        )
    return np.asarray(X.compute(), dtype=np.float64)


def forced_rule(rule: str, own: str, option: str) -> str:
    """``final_rule`` where the user forced ``final_model=option``: the method's own rule,
    which chose ``own``, and that the user's option overrode it (or agreed with it), so the
    rule does not explain a model that was not fitted (issue 63)."""
    if option == own:
        return f"final_model={option!r} given, as the method's own rule chose: {rule}"
    return (
        f"final_model={option!r} given, overriding the method's own rule, which chose "
        f"{own!r}: {rule}"
    )


def final_estimators(
    sel, option: str, X, *, multiclass: str, probability: str, n_classes: int, folds: int, seed
) -> tuple[str, bool, Callable[[bool], object]]:
    """``(final, platt, make)``: the final model (``option``, or the selection's own for
    "auto"), whether Platt's calibrator is fitted, and ``make(probability)`` building the
    unfitted estimator.  Raises for an L2-SVM on sparse ``X``; warns where an option cannot
    apply to the final model (one-vs-one, Platt scaling)."""
    final = sel.final_model if option == "auto" else option
    if option != "auto" and "final_rule" in sel.info:
        sel.info["final_rule"] = forced_rule(sel.info["final_rule"], sel.final_model, option)
    if final == "l2" and sp.issparse(X):
        raise ValueError(
            "the final L2-SVM is solved on a dense kernel matrix and takes no sparse X; "
            "use final_model='l1' or 'lowrank' (both take sparse rows) or pass X.toarray()"
        )
    if final in ("l2", "lowrank") and multiclass == "ovo" and n_classes > 2:
        warnings.warn(
            "multiclass='ovo' is libsvm's one-vs-one; the final L2-SVM is one-vs-rest: "
            "pass final_model='l1' for a one-vs-one SVC, or multiclass='ovr'",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    platt = final == "l1" and probability == "platt"
    if probability == "platt" and not platt:
        warnings.warn(
            "probability='platt' calibrates libsvm final models only; the final L2-SVM "
            "gives RBSVM's tanh probabilities (pass final_model='l1' for Platt scaling)",
            UserWarning,
            stacklevel=user_stacklevel(),
        )

    def make(calibrated: bool):
        if final == "lowrank":  # the L2-SVM on the Nystroem kernel, tanh probabilities
            # the selection's landmark rule where it has one, else LowRankL2SVC's defaults
            rule = {k: sel.info[k] for k in ("rank", "rank_tol") if k in sel.info}
            return LowRankL2SVC(
                C=float(sel.params["C"]),
                sigma=float(sel.params["sigma"]),
                class_weight=sel.params.get("class_weight"),
                random_state=seed,  # the landmark subsample's, where it is drawn
                **rule,
            )
        return clone(
            make_final_estimator(
                sel.params,
                final_model=final,
                multiclass=multiclass,
                n_classes=n_classes,
                probability=calibrated,
                random_state=seed,
                calibration_folds=folds,
            )
        )

    return final, platt, make
