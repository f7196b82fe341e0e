"""Bayesian search with hyperopt's Tree-structured Parzen Estimator over (sigma, C).

The RBSVM paper's "BayesSearch" baseline (RBSVM Sec. V-A), each candidate scored by K-fold
CV.  hyperopt is an optional dependency (``pip install "svmtune[baselines]"``), imported
when a selection runs (:func:`svmtune.methods.base.require`).
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from svmtune.methods.base import Selection, SelectionContext, TrainingData, require
from svmtune.methods.baselines import BUDGET, _seed_int, _SequentialSearch

__all__ = ["HyperoptTPE"]


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
        See :class:`~svmtune.methods.random_search.RandomSearch`.
    """

    name = "tpe"
    requires = (("hyperopt", "baselines"),)
    _parameter_constraints = {"max_evals": [BUDGET], "n_startup": [BUDGET]}

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
        self._set_options(
            max_evals=max_evals,
            log2_sigma=log2_sigma,
            log2_C=log2_C,
            distribution=distribution,
            n_startup=n_startup,
            n_splits=n_splits,
            scoring=scoring,
            final_model=final_model,
        )

    def _space(self) -> dict:
        hp = require("hyperopt", self.name).hp
        space = {}
        for nm, (lo, hi) in (("sigma", self.log2_sigma), ("C", self.log2_C)):
            if lo == hi:  # a fixed coordinate (hyperopt rejects empty intervals)
                space[nm] = 2.0**lo
            elif self.distribution == "uniform":
                space[nm] = hp.uniform(nm, 2.0**lo, 2.0**hi)
            else:
                space[nm] = hp.loguniform(nm, lo * math.log(2.0), hi * math.log(2.0))
        return space

    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """Choose (sigma, C): see :meth:`svmtune.methods.base.Selector.run`."""
        X, y, sample_weight, groups = data.X, data.y, data.sample_weight, data.groups
        random_state, n_jobs, multiclass = context.random_state, context.n_jobs, context.multiclass
        hyperopt = require("hyperopt", self.name)
        seed = _seed_int(random_state)
        folds = self._folds(y, random_state, sample_weight, groups)
        history: list[dict] = []
        evaluate = self._objective(X, y, folds, sample_weight, n_jobs, history, multiclass)

        def fn(p):
            loss = evaluate(float(p["sigma"]), float(p["C"]))
            return {"loss": loss, "status": hyperopt.STATUS_OK}

        hyperopt.fmin(
            fn,
            self._space(),
            algo=partial(hyperopt.tpe.suggest, n_startup_jobs=self.n_startup),
            max_evals=self.max_evals,
            trials=hyperopt.Trials(),
            rstate=np.random.default_rng(seed),
            show_progressbar=False,
        )
        return self._selection(history, len(folds), sampler="hyperopt TPE", seed=seed)
