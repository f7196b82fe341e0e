"""Successive halving over (sigma, C): scikit-learn's ``HalvingGridSearchCV``.

It subsamples the training folds itself, so it does not score through
:func:`svmtune.search.cv.cv_errors`; it is handed the folds of
:func:`svmtune.search.cv.make_folds` with the same seed as the other CV searches, so its
full-resource folds are theirs (stratified by class and by ``weight > 0``).
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from svmtune._warnings import user_stacklevel
from svmtune.estimators import make_final_estimator
from svmtune.kernels import sigma_from_gamma
from svmtune.methods._constraints import Boolean, Interval, Options
from svmtune.methods.base import Selection, SelectionContext, TrainingData
from svmtune.methods.baselines import (
    BUDGET,
    LOG2_GRID,
    _CVSearch,
    _estimate,
    _seed_int,
    log2_grid,
    rbf_params,
    sample_log2_box,
)

#: expected samples of positive weight of every class in each subsampled training part of
#: successive halving's first round (the probability of meeting none is about exp(-5))
HALVING_RARE = 5

__all__ = ["HALVING_RARE", "HalvingSearch"]


class HalvingSearch(_CVSearch):
    """Successive halving (scikit-learn's ``HalvingGridSearchCV``) over (sigma, C).

    Every round fits all surviving candidates on a growing stratified subsample
    (``resource="n_samples"``), keeps the best ``1/factor`` of them and multiplies the
    resource by ``factor``.  The candidates are the log2 grid (``candidates="grid"``) or
    ``n_candidates`` random draws (``candidates="random"``, see
    :func:`~svmtune.methods.baselines.sample_log2_box`).
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
        See :class:`~svmtune.methods.random_search.RandomSearch`.
    """

    grid = True

    name = "halving"
    _parameter_constraints = {
        "candidates": [Options("grid", "random")],
        "log2_sigma": [LOG2_GRID],
        "log2_C": [LOG2_GRID],
        "n_candidates": [BUDGET],
        "factor": [Interval(Real, 1, None, closed="neither", note="elimination rate")],
        "min_resources": [
            Options("exhaust", "smallest"),
            Interval(Integral, 1, None, closed="left", note="number of samples"),
        ],
        "aggressive_elimination": [Boolean()],
        "scoring": [Options("error", "f1", "f1_macro")],
    }

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
        self._set_options(
            candidates=candidates,
            log2_sigma=log2_sigma,
            log2_C=log2_C,
            n_candidates=n_candidates,
            distribution=distribution,
            factor=factor,
            min_resources=min_resources,
            aggressive_elimination=aggressive_elimination,
            n_splits=n_splits,
            scoring=scoring,
            final_model=final_model,
        )

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

    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """Choose (sigma, C): see :meth:`svmtune.methods.base.Selector.run`."""
        X, y, sample_weight, groups = data.X, data.y, data.sample_weight, data.groups
        random_state, n_jobs, multiclass = context.random_state, context.n_jobs, context.multiclass
        rng = check_random_state(random_state)
        seed = _seed_int(random_state)
        # the folds of the other CV searches: stratified by class and by weight > 0, so that
        # every training part holds samples of positive weight of every class (without zero
        # weights, StratifiedKFold(n_folds, shuffle=True, random_state=seed) on y)
        folds = self._folds(y, seed, sample_weight, groups)
        sigmas, Cs = self._candidates(rng)
        n_classes = int(np.max(y)) + 1
        min_resources = self._min_resources(y, sample_weight, len(folds), n_classes, len(sigmas))
        search, width, prefix = self._run(
            X, y, sample_weight, folds, sigmas, Cs, min_resources, seed, n_jobs, multiclass
        )
        return self._selection(search, width, prefix, len(sigmas))

    def _run(self, X, y, sample_weight, folds, sigmas, Cs, min_resources, seed, n_jobs, multiclass):
        """Fit scikit-learn's ``HalvingGridSearchCV`` on the candidates; return it, the name of
        the width parameter (``"gamma"`` for libsvm, ``"sigma"`` for the L2-SVM) and the
        prefix of the SVM's parameters in the estimator."""
        import sklearn
        from sklearn.experimental import enable_halving_search_cv  # noqa: F401
        from sklearn.metrics import get_scorer
        from sklearn.model_selection import HalvingGridSearchCV

        n_classes = int(np.max(y)) + 1
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
        return search, width, prefix

    def _selection(self, search, width: str, prefix: str, n_candidates: int) -> Selection:
        """The :class:`Selection` of a fitted ``HalvingGridSearchCV``: the chosen candidate,
        its CV loss in the last round it ran, one history row per (candidate, round)."""
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
                "n_candidates": n_candidates,
                "n_folds": int(search.n_splits_),
                "n_iterations": int(search.n_iterations_),
                "n_candidates_per_iter": [int(v) for v in search.n_candidates_],
                "n_resources_per_iter": [int(v) for v in search.n_resources_],
            },
        )
