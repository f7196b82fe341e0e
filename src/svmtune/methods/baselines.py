"""Baselines: scikit-learn's default SVC and cross-validated searches over (sigma, C).

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

import math
import numbers
import warnings
from collections.abc import Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from svmtune._validation import check_bool_option
from svmtune._warnings import user_stacklevel
from svmtune.estimators import make_final_estimator
from svmtune.kernels import gamma_from_sigma, sigma_from_gamma
from svmtune.methods.base import Selection, Selector
from svmtune.search.cv import cv_errors, make_folds

#: expected samples of positive weight of every class in each subsampled training part of
#: successive halving's first round (the probability of meeting none is about exp(-5))
HALVING_RARE = 5

__all__ = [
    "DefaultSVC",
    "GridSearch",
    "RandomSearch",
    "HyperoptTPE",
    "OptunaTPE",
    "HalvingSearch",
    "log2_grid",
    "grid_values",
    "rbf_params",
    "sample_log2_box",
    "check_log2_range",
]

DISTRIBUTIONS = ("loguniform", "uniform")
SCORINGS = ("error", "hinge", "f1", "f1_macro")
#: the SVM a CV search trains for each candidate, and fits at the end: libsvm's hinge-loss
#: SVC ("l1") or the exact squared-hinge L2-SVM ("l2", :class:`svmtune.estimators.L2SVC`)
FINAL_MODELS = ("l1", "l2")


# ----------------------------------------------------------------------------- pure helpers
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
    try:
        if isinstance(explicit, (str, bytes)):
            raise TypeError
        v = np.atleast_1d(np.asarray(explicit, dtype=float)).ravel()
    except (TypeError, ValueError):
        v = np.array([np.nan])
    if v.size == 0 or not np.all(np.isfinite(v)) or np.any(v <= 0):
        raise ValueError(
            f"grid values of {name} must be a non-empty sequence of positive finite numbers, "
            f"got {explicit!r}"
        )
    return v


def rbf_params(sigma: float, C: float, **extra) -> dict:
    """``best_params_`` dict for an RBF SVM."""
    out = {"kernel": "rbf", "sigma": float(sigma), "gamma": float(gamma_from_sigma(sigma))}
    out["C"] = float(C)
    out.update(extra)
    return out


def check_log2_range(name: str, value: Any, *, with_step: bool = False) -> tuple[float, ...]:
    """Validate a log2 search range ``(lo, hi)`` (or ``(lo, hi, step)`` when ``with_step``).

    Returns ``(lo, hi)`` or ``(lo, hi, step)`` as floats (step defaults to 1 for grids).
    Raises ``ValueError`` naming the option when the range is malformed.
    """
    allowed = (2, 3) if with_step else (2,)
    shape = "(lo, hi) or (lo, hi, step)" if with_step else "(lo, hi)"
    try:
        if isinstance(value, (str, bytes)):  # iterable, but "12" is not (1, 2)
            raise TypeError
        vals = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a tuple {shape} in log2 units, got {value!r}") from None
    if len(vals) not in allowed:
        raise ValueError(f"{name} must be a tuple {shape} in log2 units, got {value!r}")
    lo, hi = vals[0], vals[1]
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
        raise ValueError(f"{name} must satisfy lo <= hi (finite, log2 units), got {value!r}")
    if with_step:
        step = vals[2] if len(vals) == 3 else 1.0
        if not (np.isfinite(step) and step > 0):
            raise ValueError(f"{name}: grid step must be positive, got {step}")
        return lo, hi, step
    return lo, hi


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


def _check_budget(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer (number of candidates), got {value!r}")
    return int(value)


def _check_n_splits(n_splits: Any) -> int:
    if isinstance(n_splits, bool) or not isinstance(n_splits, numbers.Integral) or n_splits < 2:
        raise ValueError(f"n_splits must be an integer >= 2 (CV folds), got {n_splits!r}")
    return int(n_splits)


def _check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


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


# ----------------------------------------------------------------------------- selectors
class DefaultSVC(Selector):
    """scikit-learn's ``SVC()`` as is: gamma='scale', C=1 -- the practitioner's zero-cost choice.

    gamma='scale' is ``1 / (d * Var(X))`` over all entries of the training matrix.
    """

    name = "default"
    kernels = ("rbf",)
    accepts_sparse = True

    def select(
        self,
        X,
        y,
        sample_weight=None,
        *,
        kernel="rbf",
        random_state=None,
        n_jobs=None,
        multiclass="ovr",
    ):
        self.check_kernel(kernel)
        # weighted like repeated rows, so sample_weight=2 equals a duplicated row
        w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        if sp.issparse(X):  # from the row sums of x and x^2: X stays sparse
            d = X.shape[1]
            s1 = np.asarray(X.sum(axis=1)).ravel()
            s2 = np.asarray(X.multiply(X).sum(axis=1)).ravel()
            mean = float(np.average(s1 / d, weights=w))
            var = float(np.average((s2 - 2.0 * mean * s1) / d + mean**2, weights=w))
        else:
            mean = float(np.average(X, axis=0, weights=w).mean())
            var = float(np.average(((X - mean) ** 2).mean(axis=1), weights=w))
        gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        return Selection(params=rbf_params(sigma_from_gamma(gamma), 1.0), n_svm_fits=0)


class _CVSearch(Selector):
    """Shared options of the K-fold cross-validated searches (folds and scoring)."""

    kernels = ("rbf",)
    held_out = "folds"
    scorings: tuple[str, ...] = SCORINGS
    # libsvm's SVC fits on sparse rows (the L2-SVM final model does not: refused by the tuner)
    accepts_sparse = True

    def _init_cv(self, n_splits: Any, scoring: Any, final_model: Any) -> None:
        self.n_splits = _check_n_splits(n_splits)
        self.scoring = _check_choice("scoring", scoring, self.scorings)
        self.final_model = _check_choice("final_model", final_model, FINAL_MODELS)

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


class GridSearch(_CVSearch):
    """K-fold cross-validated grid search over log2 sigma and log2 C.

    Defaults are the RBSVM paper's GridSearch baseline: log2 sigma and log2 C in [-8, 8],
    step 1 (17 x 17 = 289 candidates), 10-fold stratified CV.

    Parameters
    ----------
    log2_sigma, log2_C : (lo, hi) or (lo, hi, step)
        Grid ranges in log2 units (step 1 if omitted).
    sigmas, Cs : sequences, optional
        Explicit grids (override the log2 ranges).
    n_splits : int
    scoring : {"error", "hinge", "f1", "f1_macro"}
        The validation loss: error rate, mean hinge loss, 1 - F1 (binary tasks: of the
        second class in sorted order; multiclass: macro-F1) or 1 - macro-F1 (the mean F1 of
        every class, binary tasks included, so no class is singled out as positive).
    final_model : {"l1", "l2"}, default="l1"
        See :class:`RandomSearch`.
    """

    name = "grid"

    def __init__(
        self,
        *,
        log2_sigma=(-8.0, 8.0, 1.0),
        log2_C=(-8.0, 8.0, 1.0),
        sigmas=None,
        Cs=None,
        n_splits: int = 10,
        scoring: str = "error",
        final_model: str = "l1",
    ):
        self.sigmas = grid_values("sigmas", sigmas, "log2_sigma", log2_sigma)
        self.Cs = grid_values("Cs", Cs, "log2_C", log2_C)
        self._init_cv(n_splits, scoring, final_model)

    def select(
        self,
        X,
        y,
        sample_weight=None,
        *,
        kernel="rbf",
        random_state=None,
        n_jobs=None,
        multiclass="ovr",
        groups=None,
    ):
        self.check_kernel(kernel)
        folds = make_folds(y, self.n_splits, random_state, sample_weight, groups)
        cands = [rbf_params(s, c) for s in self.sigmas for c in self.Cs]
        return self._best_of(X, y, cands, folds, sample_weight, n_jobs, multiclass)


class RandomSearch(_CVSearch):
    """Random search (Bergstra & Bengio 2012) over (sigma, C) with K-fold CV, fixed budget.

    Parameters
    ----------
    n_iter : int, default=60
        Number of candidates (60 draws find a point of the best 5 % of the box with
        probability 0.95).  The RBSVM paper's Fig. 4 uses the grid's budget (256).
    log2_sigma, log2_C : (lo, hi), default=(-8, 8)
    distribution : {"loguniform", "uniform"}, default="loguniform"
        See :func:`sample_log2_box`; ``"uniform"`` is the RBSVM paper's setting.
    n_splits : int, default=10
    scoring : {"error", "hinge", "f1", "f1_macro"}, default="error"
    final_model : {"l1", "l2"}, default="l1"
        The SVM each candidate trains in the cross-validation, and the one the tuner fits
        at the end (``SVMTuner(final_model="auto")``): libsvm's hinge-loss ``SVC`` or the
        exact squared-hinge L2-SVM (:class:`svmtune.estimators.L2SVC`, one-vs-rest).  The
        RBSVM paper ran every search with the L2-SVM (Sec. IV-C: "all the SVM solving
        algorithms in the hyperparameter learning algorithms use L2-SVM").
    """

    name = "random"

    def __init__(
        self,
        *,
        n_iter: int = 60,
        log2_sigma=(-8.0, 8.0),
        log2_C=(-8.0, 8.0),
        distribution: str = "loguniform",
        n_splits: int = 10,
        scoring: str = "error",
        final_model: str = "l1",
    ):
        self.n_iter = _check_budget("n_iter", n_iter)
        self.log2_sigma = check_log2_range("log2_sigma", log2_sigma)
        self.log2_C = check_log2_range("log2_C", log2_C)
        self.distribution = _check_choice("distribution", distribution, DISTRIBUTIONS)
        self._init_cv(n_splits, scoring, final_model)

    def select(
        self,
        X,
        y,
        sample_weight=None,
        *,
        kernel="rbf",
        random_state=None,
        n_jobs=None,
        multiclass="ovr",
        groups=None,
    ):
        self.check_kernel(kernel)
        rng = check_random_state(random_state)
        folds = make_folds(y, self.n_splits, random_state, sample_weight, groups)
        sig, Cs = sample_log2_box(self.n_iter, self.log2_sigma, self.log2_C, self.distribution, rng)
        cands = [rbf_params(s, c) for s, c in zip(sig, Cs)]
        return self._best_of(X, y, cands, folds, sample_weight, n_jobs, multiclass)


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


class HyperoptTPE(_SequentialSearch):
    """Bayesian search with hyperopt's Tree-structured Parzen Estimator (the RBSVM paper's
    "BayesSearch", Sec. V-A), each candidate scored by K-fold CV.

    Parameters
    ----------
    max_evals : int, default=60
        Number of candidates evaluated.
    log2_sigma, log2_C : (lo, hi), default=(-8, 8)
    distribution : {"uniform", "loguniform"}, default="uniform"
        Prior: ``hp.uniform`` on ``[2^lo, 2^hi]`` (the paper's choice) or ``hp.loguniform``.
    n_startup : int, default=20
        Random draws before TPE takes over (hyperopt's ``n_startup_jobs``).
    n_splits : int, default=10
    scoring : {"error", "hinge", "f1", "f1_macro"}, default="error"
    final_model : {"l1", "l2"}, default="l1"
        See :class:`RandomSearch`.
    """

    name = "tpe"

    def __init__(
        self,
        *,
        max_evals: int = 60,
        log2_sigma=(-8.0, 8.0),
        log2_C=(-8.0, 8.0),
        distribution: str = "uniform",
        n_startup: int = 20,
        n_splits: int = 10,
        scoring: str = "error",
        final_model: str = "l1",
    ):
        self.max_evals = _check_budget("max_evals", max_evals)
        self.log2_sigma = check_log2_range("log2_sigma", log2_sigma)
        self.log2_C = check_log2_range("log2_C", log2_C)
        self.distribution = _check_choice("distribution", distribution, DISTRIBUTIONS)
        self.n_startup = _check_budget("n_startup", n_startup)
        self._init_cv(n_splits, scoring, final_model)

    def _space(self) -> dict:
        from hyperopt import hp

        space = {}
        for nm, (lo, hi) in (("sigma", self.log2_sigma), ("C", self.log2_C)):
            if lo == hi:  # a fixed coordinate (hyperopt rejects empty intervals)
                space[nm] = 2.0**lo
            elif self.distribution == "uniform":
                space[nm] = hp.uniform(nm, 2.0**lo, 2.0**hi)
            else:
                space[nm] = hp.loguniform(nm, lo * math.log(2.0), hi * math.log(2.0))
        return space

    def select(
        self,
        X,
        y,
        sample_weight=None,
        *,
        kernel="rbf",
        random_state=None,
        n_jobs=None,
        multiclass="ovr",
        groups=None,
    ):
        from hyperopt import STATUS_OK, Trials, fmin, tpe

        self.check_kernel(kernel)
        seed = _seed_int(random_state)
        folds = make_folds(y, self.n_splits, random_state, sample_weight, groups)
        history: list[dict] = []
        evaluate = self._objective(X, y, folds, sample_weight, n_jobs, history, multiclass)

        def fn(p):
            return {"loss": evaluate(float(p["sigma"]), float(p["C"])), "status": STATUS_OK}

        fmin(
            fn,
            self._space(),
            algo=partial(tpe.suggest, n_startup_jobs=self.n_startup),
            max_evals=self.max_evals,
            trials=Trials(),
            rstate=np.random.default_rng(seed),
            show_progressbar=False,
        )
        return self._selection(history, len(folds), sampler="hyperopt TPE", seed=seed)


@contextmanager
def _quiet_optuna():
    """Silence Optuna's per-trial INFO logging for the duration of a search."""
    import optuna

    previous = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        yield optuna
    finally:
        optuna.logging.set_verbosity(previous)


class OptunaTPE(_SequentialSearch):
    """Bayesian search with Optuna's TPE sampler, each candidate scored by K-fold CV.

    Parameters
    ----------
    n_trials : int, default=60
    log2_sigma, log2_C : (lo, hi), default=(-8, 8)
    distribution : {"loguniform", "uniform"}, default="loguniform"
        ``suggest_float(..., log=True)`` on ``[2^lo, 2^hi]``, or uniform on it.
    n_startup : int, default=10
        Random trials before TPE takes over (``TPESampler(n_startup_trials=...)``).
    multivariate : bool, default=False
        Optuna's multivariate TPE (joint density over sigma and C).
    n_splits : int, default=10
    scoring : {"error", "hinge", "f1", "f1_macro"}, default="error"
    final_model : {"l1", "l2"}, default="l1"
        See :class:`RandomSearch`.
    """

    name = "optuna"

    def __init__(
        self,
        *,
        n_trials: int = 60,
        log2_sigma=(-8.0, 8.0),
        log2_C=(-8.0, 8.0),
        distribution: str = "loguniform",
        n_startup: int = 10,
        multivariate: bool = False,
        n_splits: int = 10,
        scoring: str = "error",
        final_model: str = "l1",
    ):
        self.n_trials = _check_budget("n_trials", n_trials)
        self.log2_sigma = check_log2_range("log2_sigma", log2_sigma)
        self.log2_C = check_log2_range("log2_C", log2_C)
        self.distribution = _check_choice("distribution", distribution, DISTRIBUTIONS)
        self.n_startup = _check_budget("n_startup", n_startup)
        self.multivariate = check_bool_option("multivariate", multivariate)
        self._init_cv(n_splits, scoring, final_model)

    def select(
        self,
        X,
        y,
        sample_weight=None,
        *,
        kernel="rbf",
        random_state=None,
        n_jobs=None,
        multiclass="ovr",
        groups=None,
    ):
        self.check_kernel(kernel)
        seed = _seed_int(random_state)
        folds = make_folds(y, self.n_splits, random_state, sample_weight, groups)
        history: list[dict] = []
        evaluate = self._objective(X, y, folds, sample_weight, n_jobs, history, multiclass)
        log = self.distribution == "loguniform"
        (slo, shi), (clo, chi) = self.log2_sigma, self.log2_C

        def objective(trial) -> float:
            s = trial.suggest_float("sigma", 2.0**slo, 2.0**shi, log=log)
            c = trial.suggest_float("C", 2.0**clo, 2.0**chi, log=log)
            return evaluate(s, c)

        with _quiet_optuna() as optuna, warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            sampler = optuna.samplers.TPESampler(
                seed=seed, n_startup_trials=self.n_startup, multivariate=self.multivariate
            )
            study = optuna.create_study(direction="minimize", sampler=sampler)
            study.optimize(objective, n_trials=self.n_trials)
        return self._selection(history, len(folds), sampler="optuna TPE", seed=seed)


class HalvingSearch(_CVSearch):
    """Successive halving (scikit-learn's ``HalvingGridSearchCV``) over (sigma, C).

    Every round fits all surviving candidates on a growing stratified subsample
    (``resource="n_samples"``), keeps the best ``1/factor`` of them and multiplies the
    resource by ``factor``.  The candidates are the log2 grid (``candidates="grid"``) or
    ``n_candidates`` random draws (``candidates="random"``, see :func:`sample_log2_box`).
    SVM fits are counted from ``cv_results_``: one row per (candidate, round), each row
    ``n_splits`` fits.  The estimate is the CV error of the chosen candidate in the last
    round it ran, i.e. on ``n_resources_[-1]`` samples (not necessarily all of them).

    Parameters
    ----------
    candidates : {"grid", "random"}, default="grid"
    log2_sigma, log2_C : (lo, hi[, step]), default=(-8, 8, 1)
        Grid ranges (step used by ``"grid"`` only).
    n_candidates : int, default=289
        Number of random candidates (``"random"`` only).
    distribution : {"loguniform", "uniform"}, default="loguniform"
    factor : float, default=3
    min_resources : int or "exhaust" or "smallest", default="exhaust"
        As in scikit-learn, except that the first round of ``"exhaust"`` and ``"smallest"``
        is at least :data:`HALVING_RARE` samples of positive weight of every class in each
        subsampled training part, in expectation: scikit-learn subsamples a round's training
        parts without stratification, and a fit that meets one class only fails.  Where
        even one round on all samples is too small for that (or for scikit-learn's
        ``2 * n_folds * n_classes``), every candidate is evaluated on all samples in a
        single round (a grid search, with a warning).
    aggressive_elimination : bool, default=False
    n_splits : int, default=10
    scoring : {"error", "f1", "f1_macro"}, default="error"
    final_model : {"l1", "l2"}, default="l1"
        See :class:`RandomSearch`.
    """

    name = "halving"
    scorings = ("error", "f1", "f1_macro")

    def __init__(
        self,
        *,
        candidates: str = "grid",
        log2_sigma=(-8.0, 8.0, 1.0),
        log2_C=(-8.0, 8.0, 1.0),
        n_candidates: int = 289,
        distribution: str = "loguniform",
        factor: float = 3,
        min_resources="exhaust",
        aggressive_elimination: bool = False,
        n_splits: int = 10,
        scoring: str = "error",
        final_model: str = "l1",
    ):
        self.candidates = _check_choice("candidates", candidates, ("grid", "random"))
        self.log2_sigma = check_log2_range("log2_sigma", log2_sigma, with_step=True)
        self.log2_C = check_log2_range("log2_C", log2_C, with_step=True)
        self.n_candidates = _check_budget("n_candidates", n_candidates)
        self.distribution = _check_choice("distribution", distribution, DISTRIBUTIONS)
        if (
            isinstance(factor, bool)
            or not isinstance(factor, numbers.Real)
            or not 1 < factor < math.inf
        ):
            raise ValueError(
                f"factor must be a number > 1 and finite (elimination rate), got {factor!r}"
            )
        self.factor = factor
        if not (
            (isinstance(min_resources, str) and min_resources in ("exhaust", "smallest"))
            or (
                isinstance(min_resources, numbers.Integral)
                and not isinstance(min_resources, (bool, np.bool_))
                and min_resources >= 1
            )
        ):
            raise ValueError(
                "min_resources must be 'exhaust', 'smallest' or a positive integer number of "
                f"samples, got {min_resources!r}"
            )
        self.min_resources = min_resources
        self.aggressive_elimination = check_bool_option(
            "aggressive_elimination", aggressive_elimination
        )
        self._init_cv(n_splits, scoring, final_model)

    def _candidates(self, rng) -> tuple[np.ndarray, np.ndarray]:
        if self.candidates == "grid":
            s = log2_grid(*self.log2_sigma)
            c = log2_grid(*self.log2_C)
            S, Cg = np.meshgrid(s, c, indexing="ij")
            return S.ravel(), Cg.ravel()
        return sample_log2_box(
            self.n_candidates, self.log2_sigma[:2], self.log2_C[:2], self.distribution, rng
        )

    def _min_resources(self, y, sample_weight, n_folds: int, n_classes: int, n_candidates: int):
        """The ``min_resources`` passed to scikit-learn (see the class docstring).

        An integer is checked against the same first round: it must lie between
        ``max(2 * n_folds * n_classes, ceil(HALVING_RARE * n / (rarest * (1 - 1/n_folds))))``
        (capped at ``n``) and ``n``; a smaller first round subsamples some fold's held-out
        part to no sample or its training part to one class.
        """
        n = y.shape[0]
        pos = np.ones(n, dtype=bool) if sample_weight is None else sample_weight > 0
        rarest = np.bincount(y[pos], minlength=n_classes).min()
        smallest = 2 * n_folds * n_classes  # scikit-learn's "smallest"
        floor = math.ceil(HALVING_RARE * n / (rarest * (1.0 - 1.0 / n_folds)))
        if not isinstance(self.min_resources, str):
            need = min(max(smallest, floor), n)
            if not need <= self.min_resources <= n:
                raise ValueError(
                    f"min_resources={self.min_resources} cannot be the first round's number "
                    f"of samples here: with {n} samples, {n_folds} folds and {n_classes} "
                    f"classes (the rarest with {rarest} samples of positive weight) it must "
                    f"lie between {need} and {n} ({need} = the larger of scikit-learn's "
                    f"2 * n_folds * n_classes = {smallest} and {floor}, which gives every "
                    f"training part about {HALVING_RARE} samples of the rarest class), or be "
                    "'exhaust' or 'smallest'"
                )
            return int(self.min_resources)
        if max(smallest, floor) >= n:
            warnings.warn(
                f"{n} samples are too few for successive halving with {n_folds} folds (the "
                f"first round needs {max(smallest, floor)}): every candidate is evaluated on "
                "all samples in one round, as in a grid search",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
            return n
        if floor <= smallest:
            return self.min_resources
        if self.min_resources == "smallest":
            return floor
        # "exhaust" as scikit-learn computes it, from the larger first round
        last = math.floor(math.log(n_candidates, self.factor))
        return max(floor, int(n // self.factor**last))

    def select(
        self,
        X,
        y,
        sample_weight=None,
        *,
        kernel="rbf",
        random_state=None,
        n_jobs=None,
        multiclass="ovr",
        groups=None,
    ):
        import sklearn
        from sklearn.experimental import enable_halving_search_cv  # noqa: F401
        from sklearn.metrics import get_scorer
        from sklearn.model_selection import HalvingGridSearchCV

        self.check_kernel(kernel)
        rng = check_random_state(random_state)
        seed = _seed_int(random_state)
        # the folds of the other CV searches: stratified by class and by weight > 0, so that
        # every training part holds samples of positive weight of every class (without zero
        # weights, StratifiedKFold(n_folds, shuffle=True, random_state=seed) on y)
        folds = make_folds(y, self.n_splits, seed, sample_weight, groups)
        n_folds = len(folds)
        sigmas, Cs = self._candidates(rng)
        n_classes = int(np.max(y)) + 1
        min_resources = self._min_resources(y, sample_weight, n_folds, n_classes, len(sigmas))
        with sklearn.config_context(enable_metadata_routing=sample_weight is not None):
            est = make_final_estimator(
                rbf_params(1.0, 1.0),
                final_model=self.final_model,
                multiclass=multiclass,
                n_classes=n_classes,
            )
            svc = est.estimator if hasattr(est, "estimator") else est
            prefix = "estimator__" if svc is not est else ""
            if sample_weight is not None:
                svc.set_fit_request(sample_weight=True)
            # libsvm's SVC takes the RBF width as gamma, the L2-SVM as sigma
            width = "sigma" if self.final_model == "l2" else "gamma"
            grid = [
                {prefix + width: [rbf_params(s, c)[width]], prefix + "C": [float(c)]}
                for s, c in zip(sigmas, Cs)
            ]
            name = {"error": "accuracy", "f1_macro": "f1_macro"}.get(
                self.scoring, "f1" if n_classes == 2 else "f1_macro"
            )
            # validation scores are unweighted, as in svmtune.search.cv.fold_error
            scoring = get_scorer(name)
            if sample_weight is not None:
                scoring = scoring.set_score_request(sample_weight=False)
            search = HalvingGridSearchCV(
                est,
                grid,
                factor=self.factor,
                resource="n_samples",
                min_resources=min_resources,
                aggressive_elimination=self.aggressive_elimination,
                cv=folds,
                scoring=scoring,
                refit=False,
                return_train_score=False,
                error_score=np.nan,
                random_state=seed,
                n_jobs=n_jobs,
            )
            fit_kw = {} if sample_weight is None else {"sample_weight": sample_weight}
            with warnings.catch_warnings():
                # subsampled rounds may hold fewer members of a rare class than folds
                warnings.filterwarnings("ignore", message=".*least populated class.*")
                search.fit(X, y, **fit_kw)
        res = search.cv_results_
        losses = 1.0 - np.asarray(res["mean_test_score"], dtype=float)
        best = int(search.best_index_)
        if not np.isfinite(losses[best]):
            # scikit-learn picks the first candidate of the last round when all its scores
            # are NaN (error_score=np.nan: some fit of every candidate failed)
            last = int(res["iter"][best])
            raise ValueError(
                f"successive halving: every candidate of the last round (round {last + 1}, "
                f"{int(res['n_resources'][best])} samples) failed in at least one of its "
                f"{int(search.n_splits_)} cross-validation fits, so none can be chosen; the "
                "FitFailedWarning names the SVM errors"
            )
        # a candidate some of whose fits failed (a subsampled training part of an early round
        # that met one class only) counts as loss 1
        losses = np.where(np.isfinite(losses), losses, 1.0)
        history = []
        for i, p in enumerate(res["params"]):
            w = p[prefix + width]
            cand = rbf_params(w if width == "sigma" else sigma_from_gamma(w), p[prefix + "C"])
            history.append(
                dict(
                    cand,
                    cv_loss=float(losses[i]),
                    iter=int(res["iter"][i]),
                    n_resources=int(res["n_resources"][i]),
                    split_losses=[
                        1.0 - float(res[f"split{k}_test_score"][i])
                        for k in range(int(search.n_splits_))
                    ],
                    fit_time=float(res["mean_fit_time"][i] + res["mean_score_time"][i]),
                )
            )
        params = {k: history[best][k] for k in ("kernel", "sigma", "gamma", "C")}
        return Selection(
            params=params,
            estimate=_estimate(self.scoring, losses[best]),
            criterion=float(losses[best]),
            n_svm_fits=len(res["params"]) * int(search.n_splits_),
            history=history,
            final_model=self.final_model,
            info={
                "n_candidates": len(sigmas),
                "n_folds": int(search.n_splits_),
                "n_iterations": int(search.n_iterations_),
                "n_candidates_per_iter": [int(v) for v in search.n_candidates_],
                "n_resources_per_iter": [int(v) for v in search.n_resources_],
            },
        )
