"""Bayesian search with Optuna's TPE sampler over (sigma, C), each candidate scored by K-fold CV.

Optuna is an optional dependency (``pip install "svmtune[baselines]"``), imported when a
selection runs (:func:`svmtune.methods.base.require`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

from svmtune.methods._constraints import Boolean
from svmtune.methods.base import Selection, SelectionContext, TrainingData, require
from svmtune.methods.baselines import BUDGET, _seed_int, _SequentialSearch

__all__ = ["OptunaTPE"]


@contextmanager
def _quiet_optuna() -> Iterator[ModuleType]:
    """Silence Optuna's per-trial INFO logging for the duration of a search."""
    optuna = require("optuna", OptunaTPE.name)

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
        See :class:`~svmtune.methods.random_search.RandomSearch`.
    """

    name = "optuna"
    requires = (("optuna", "baselines"),)
    _parameter_constraints = {
        "n_trials": [BUDGET],
        "n_startup": [BUDGET],
        "multivariate": [Boolean()],
    }

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
        self._set_options(
            n_trials=n_trials,
            log2_sigma=log2_sigma,
            log2_C=log2_C,
            distribution=distribution,
            n_startup=n_startup,
            multivariate=multivariate,
            n_splits=n_splits,
            scoring=scoring,
            final_model=final_model,
        )

    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """Choose (sigma, C): see :meth:`svmtune.methods.base.Selector.run`."""
        X, y, sample_weight, groups = data.X, data.y, data.sample_weight, data.groups
        random_state, n_jobs, multiclass = context.random_state, context.n_jobs, context.multiclass
        seed = _seed_int(random_state)
        folds = self._folds(y, random_state, sample_weight, groups)
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
