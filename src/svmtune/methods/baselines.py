"""The shared part of the cross-validated baseline searches over (sigma, C).

The searches themselves are one module each: :mod:`~svmtune.methods.grid`,
:mod:`~svmtune.methods.random_search`, :mod:`~svmtune.methods.tpe`,
:mod:`~svmtune.methods.optuna_tpe`, :mod:`~svmtune.methods.halving` (and scikit-learn's
default ``SVC()`` in :mod:`~svmtune.methods.default`).  This module holds what they share:
the log2 grids and boxes, the declared constraints of their common options
(``n_splits``, ``scoring``, ``final_model``, log2 ranges) and the base classes that score
candidates.

Every search except successive halving scores its candidates through the one shared CV path
:func:`svmtune.search.cv.cv_errors` on the folds of :func:`svmtune.search.cv.make_folds`, so
that numbers of SVM fits and fold splits are comparable across methods.  Successive halving
is scikit-learn's own ``HalvingGridSearchCV`` (it must subsample the training folds itself);
it is handed the folds of ``make_folds`` with the same seed, so its full-resource folds are
those of the other searches (stratified by class and by ``weight > 0``).

Ranges are given in log2 units, ``log2_sigma=(lo, hi)``.  The defaults are the RBSVM paper's
search box ``sigma, C in [2^-8, 2^8]`` (RBSVM Sec. V-A: grid step 1 in log2; random and
Bayesian search draw "independently from a uniform density on [2^-8, 2^8]").
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.utils import check_random_state

from svmtune._option_values import check_float_values, check_log2_range
from svmtune.kernels import rbf_params
from svmtune.methods._constraints import Check, Constraint, Interval, Options
from svmtune.methods.base import Selection, Selector
from svmtune.search.cv import cv_errors, make_folds

__all__ = [
    "DISTRIBUTIONS",
    "CV_MODELS",
    "SCORINGS",
    "grid_values",
    "log2_grid",
    "sample_log2_box",
]

DISTRIBUTIONS = ("loguniform", "uniform")
SCORINGS = ("error", "hinge", "f1", "f1_macro")
#: the SVM a CV search trains for each candidate, and fits at the end: libsvm's hinge-loss
#: SVC ("l1") or the exact squared-hinge L2-SVM ("l2", :class:`svmtune.estimators.L2SVC`)
CV_MODELS = ("l1", "l2")


def log2_grid(lo: float, hi: float, step: float) -> np.ndarray:
    """``2 ** arange(lo, hi + step/2, step)``: the papers' log2 grids, endpoints included."""
    if not (np.isfinite(lo) and np.isfinite(hi) and hi >= lo):
        raise ValueError(f"grid range must satisfy lo <= hi, got [{lo}, {hi}]")
    if not (np.isfinite(step) and step > 0):
        raise ValueError(f"grid step must be positive, got {step}")
    return 2.0 ** np.arange(lo, hi + step / 2, step)


def grid_values(name: str, explicit, log2_name: str, log2_range) -> np.ndarray:
    """The grid of option ``name``: its explicit values (positive, finite), else the log2
    grid of option ``log2_name`` = ``(lo, hi[, step])``.  Errors name the option."""
    if explicit is None:
        return log2_grid(*check_log2_range(log2_name, log2_range, with_step=True))
    what = "a non-empty sequence of positive finite numbers"
    v = check_float_values(f"grid values of {name}", explicit, what=what)
    if v.size == 0 or not np.all(np.isfinite(v)) or np.any(v <= 0):
        raise ValueError(
            f"grid values of {name} must be a non-empty sequence of positive finite numbers, "
            f"got {explicit!r}"
        )
    return v


def sample_log2_box(
    n: int,
    log2_sigma: tuple[float, float],
    log2_C: tuple[float, float],
    distribution: str,
    rng: np.random.RandomState,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` independent (sigma, C) pairs from the box ``[2^lo, 2^hi]`` per coordinate.

    Parameters
    ----------
    n : int
    log2_sigma, log2_C : (lo, hi)
        Bounds in log2 units.
    distribution : {"loguniform", "uniform"}
        ``"loguniform"``: ``log2 sigma ~ U(lo, hi)`` (Bergstra & Bengio's usual choice);
        ``"uniform"``: ``sigma ~ U(2^lo, 2^hi)``, the RBSVM paper's random-search and
        Bayesian-search distribution (RBSVM Sec. V-A).
    rng : RandomState

    Returns
    -------
    sigmas, Cs : ndarray of shape (n,)
    """
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {DISTRIBUTIONS}, got {distribution!r}")
    u = rng.uniform(size=(n, 2))
    out = []
    for j, (lo, hi) in enumerate((log2_sigma, log2_C)):
        if distribution == "loguniform":
            out.append(2.0 ** (lo + (hi - lo) * u[:, j]))
        else:
            out.append(2.0**lo + (2.0**hi - 2.0**lo) * u[:, j])
    return out[0], out[1]


def _seed_int(random_state) -> int | None:
    """An int seed for libraries that want one (hyperopt, Optuna); None stays unseeded."""
    if random_state is None:
        return None
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _estimate(scoring: str, loss: float) -> float | None:
    """The error-rate estimate of a CV loss (only the ``"error"`` scoring is one)."""
    return float(loss) if scoring == "error" else None


def _history(
    cands: list[dict],
    losses: Sequence[float],
    fold_losses: np.ndarray | None = None,
    fit_times: np.ndarray | None = None,
    **extra,
) -> list[dict]:
    """One history entry per candidate: its parameters, mean CV loss and, given the
    (candidate, fold) cells, its loss on every fold (``split_losses``) and the mean seconds
    of a fold's fit and validation (``fit_time``)."""
    rows = [dict(c, cv_loss=float(e), **extra) for c, e in zip(cands, losses)]
    if fold_losses is not None:
        for row, fl, ft in zip(rows, fold_losses, fit_times):
            row["split_losses"] = [float(v) for v in fl]
            row["fit_time"] = float(np.mean(ft))
    return rows


#: history keys of the CV searches that are not hyperparameters
_NOT_PARAMS = ("cv_loss", "trial", "split_losses", "fit_time")

#: a log2 search range ``(lo, hi)`` (:func:`check_log2_range`)
LOG2_RANGE = Check(check_log2_range, "a tuple (lo, hi) in log2 units")
#: a log2 grid range ``(lo, hi)`` or ``(lo, hi, step)``
LOG2_GRID = Check(
    lambda name, value: check_log2_range(name, value, with_step=True),
    "a tuple (lo, hi) or (lo, hi, step) in log2 units",
)
#: an explicit grid of widths or of C values (:func:`grid_values`)
EXPLICIT_GRID = Check(
    lambda name, value: grid_values(name, value, "", None),
    "a non-empty sequence of positive finite numbers",
)
#: a number of candidates (or of random start-up trials)
BUDGET = Interval(Integral, 1, None, closed="left", note="number of candidates")


class _CVSearch(Selector):
    """Shared options of the K-fold cross-validated searches (folds and scoring)."""

    kernels = ("rbf",)
    held_out = "folds"
    # libsvm's SVC fits on sparse rows (the L2-SVM final model does not: refused by the tuner)
    accepts_sparse = True

    _parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "n_splits": [Interval(Integral, 2, None, closed="left", note="CV folds")],
        "scoring": [Options(*SCORINGS)],
        "final_model": [Options(*CV_MODELS)],
        "log2_sigma": [LOG2_RANGE],
        "log2_C": [LOG2_RANGE],
        "distribution": [Options(*DISTRIBUTIONS)],
    }

    def _set_options(self, **options: Any) -> None:
        """Check ``options`` against the declared constraints and keep them as attributes."""
        for key, value in self._validate_options(**options).items():
            setattr(self, key, value)

    def _folds(self, y, random_state, sample_weight, groups) -> list:
        """The K folds of :func:`svmtune.search.cv.make_folds` (stratified by class and by
        ``weight > 0``; every group of ``groups`` on one side of each split), shared by every
        CV search so that their fold splits are comparable."""
        return make_folds(y, self.n_splits, random_state, sample_weight, groups)

    def _score(self, X, y, cands, folds, sample_weight, n_jobs, multiclass):
        """Mean CV losses, fold losses and fold times of ``cands`` (see
        :func:`~svmtune.search.cv.cv_errors` with ``return_folds=True``)."""
        return cv_errors(
            X,
            y,
            cands,
            folds=folds,
            sample_weight=sample_weight,
            final_model=self.final_model,
            multiclass=multiclass,
            scoring=self.scoring,
            n_jobs=n_jobs,
            return_folds=True,
        )

    def _best_of(self, X, y, cands, folds, sample_weight, n_jobs, multiclass) -> Selection:
        """Score every candidate by K-fold CV and select the lowest loss (first on ties)."""
        errs, fold_errs, times = self._score(X, y, cands, folds, sample_weight, n_jobs, multiclass)
        best = int(np.argmin(errs))
        return Selection(
            params=cands[best],
            estimate=_estimate(self.scoring, errs[best]),
            criterion=float(errs[best]),
            n_svm_fits=len(cands) * len(folds),
            history=_history(cands, errs, fold_errs, times),
            final_model=self.final_model,
            info={"n_candidates": len(cands), "n_folds": len(folds)},
        )


class _SequentialSearch(_CVSearch):
    """A model-based search proposing one candidate at a time, each scored by K-fold CV."""

    def _objective(self, X, y, folds, sample_weight, n_jobs, history, multiclass):
        def evaluate(sigma: float, C: float) -> float:
            cand = rbf_params(sigma, C)
            errs, fold_errs, times = self._score(
                X, y, [cand], folds, sample_weight, n_jobs, multiclass
            )
            (row,) = _history([cand], errs, fold_errs, times, trial=len(history))
            history.append(row)
            return row["cv_loss"]

        return evaluate

    def _selection(self, history: list[dict], n_folds: int, **info) -> Selection:
        losses = np.array([h["cv_loss"] for h in history])
        best = int(np.argmin(losses))
        params = {k: v for k, v in history[best].items() if k not in _NOT_PARAMS}
        return Selection(
            params=params,
            estimate=_estimate(self.scoring, losses[best]),
            criterion=float(losses[best]),
            n_svm_fits=len(history) * n_folds,
            history=history,
            final_model=self.final_model,
            info={"n_candidates": len(history), "n_folds": n_folds, **info},
        )
