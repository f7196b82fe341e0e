"""RMSVM on a Nystroem kernel: the radius-margin search of Chapelle et al. (2002) for large n.

Same criterion, optimiser and search options as :class:`svmtune.methods.gradient_baselines.RMSVM`
(minimise ``log T``, ``T = R^2 sum_k ||w_k||^2`` of the L2-SVM, RBSVM eq. (8); Chapelle,
Vapnik, Bousquet & Mukherjee, "Choosing multiple parameters for support vector machines",
Machine Learning 46, 2002), but the kernel matrix is the rank-``m`` Nystroem approximation on
pivoted-Cholesky landmarks and every step costs ``O(n m^2)`` time and ``O(n m)`` memory
(:mod:`svmtune.loo.radius_margin_lowrank`):

* ``T`` and its gradient are those of the L2-SVM on ``K~ = Z Z^T``; the gradient
  differentiates ``K~`` exactly with the landmarks held fixed;
* landmarks, rank rule, refresh and start: :mod:`svmtune.methods._lowrank_search`;
* the default final model is libsvm's SVC (``final_model="l1"``): refitting the exact L2-SVM
  needs the ``n x n`` kernel matrix.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_random_state

from svmtune.loo.radius_margin_lowrank import lowrank_radius_margin_objective
from svmtune.methods._lowrank_search import (
    check_lowrank_options,
    lowrank_start,
    selector_landmark_search,
)
from svmtune.methods.base import Selection, Selector, ovr_tasks
from svmtune.methods.baselines import rbf_params
from svmtune.search.gradient import check_search_options

__all__ = ["RMSVMLowRank"]

_LOG2 = float(np.log(2.0))


class RMSVMLowRank(Selector):
    """Radius-margin bound minimised by gradient descent on a Nystroem kernel ("RMSVM", large n).

    The criterion is ``T = R^2 sum_k ||w_k||^2`` of the L2-SVM in the feature space of
    ``K~ + diag(1/(C w))``, ``K~`` the rank-``m`` Nystroem kernel
    (:func:`svmtune.loo.radius_margin_lowrank.lowrank_radius_margin_objective`), its exact
    gradient by the envelope theorem with the landmarks fixed; the optimiser is handed
    ``log T`` (gradient ``dT / T``), as in :class:`svmtune.methods.gradient_baselines.RMSVM`.
    ``O(n m^2)`` time and ``O(n m)`` memory per step.

    Parameters
    ----------
    rank : int
        Largest number of landmarks ``m`` (default 500).
    rank_tol : float
        Relative trace residual at which pivoted Cholesky stops (default 0.01).
    jitter : float
        Added to the landmark kernel matrix before factorisation (default 1e-8).
    refresh : int
        How many times the landmarks may be re-chosen at the learned width (default 1).
    start_sample : int
        Points used by the median-heuristic start (default 2000).
    final_model : {"l1", "l2"}
        Default "l1": libsvm's SVC (refitting the exact L2-SVM needs the ``n x n`` kernel).
    log2_sigma, log2_C, start, C0, restarts, jump_restarts, tol, max_iter, max_eval
        The search options of :class:`svmtune.methods.gradient_baselines.RMSVM`, same
        defaults.

    Notes
    -----
    ``estimate`` is None (``T / n`` bounds the LOO error of a binary SVM but is no estimate of
    it); ``criterion`` is ``T`` of the low-rank kernel at the chosen point; ``info`` holds
    ``R2``, ``w2``, ``n_ball``, ``bound = min(1, T/n)`` as RMSVM does, plus ``rank``,
    ``rank_residual`` (trace residual / n), ``landmark_sigma`` and ``n_refresh``.  The
    history's ``value`` is ``log T`` and its ``T`` column ``T``.
    """

    name = "radius_margin_lowrank"
    kernels = ("rbf",)

    def __init__(
        self,
        *,
        rank: int = 500,
        rank_tol: float = 1e-2,
        jitter: float = 1e-8,
        refresh: int = 1,
        start_sample: int = 2000,
        final_model: str = "l1",
        log2_sigma=(-8.0, 8.0),
        log2_C=(-8.0, 8.0),
        start="median",
        C0: float = 1.0,
        restarts: int = 0,
        jump_restarts: int = 3,
        tol: float = 1e-6,
        max_iter: int = 100,
        max_eval: int | None = None,
    ):
        opts = check_search_options(
            log2_sigma=log2_sigma,
            log2_C=log2_C,
            start=start,
            C0=C0,
            restarts=restarts,
            jump_restarts=jump_restarts,
            tol=tol,
            max_iter=max_iter,
            max_eval=max_eval,
        )
        opts.update(
            check_lowrank_options(
                rank=rank,
                rank_tol=rank_tol,
                jitter=jitter,
                refresh=refresh,
                start_sample=start_sample,
                final_model=final_model,
            )
        )
        for key, value in opts.items():
            setattr(self, key, value)

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
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        tasks = ovr_tasks(y)
        rng = check_random_state(random_state)
        theta0 = lowrank_start(X, self.start, self.C0, self.start_sample, rng)
        jitter = self.jitter

        def make_objective(D2_nm, D2_mm, m):
            def fun(theta, state):
                init = None if state is None else state["supports"]
                ball_init = None if state is None else state["ball_support"]
                obj = lowrank_radius_margin_objective(
                    D2_nm,
                    D2_mm,
                    tasks,
                    theta,
                    sample_weight=sw,
                    init_support=init,
                    ball_init=ball_init,
                    jitter=jitter,
                )
                new_state = {
                    "supports": [s.copy() for s in obj.supports],
                    "ball_support": obj.ball.support,
                    "obj": obj,
                    "n_sv": obj.n_support,
                    "T": obj.value,
                    "R2": obj.R2,
                    "w2": float(obj.w2.sum()),
                    "n_ball": int(obj.ball.support.sum()),
                    "rank": m,
                }
                # T > 0: the ridge 1/(C w) keeps the points apart (R > 0) and an SVM with both
                # classes has ||w|| > 0
                T = max(obj.value, np.finfo(float).tiny)
                return float(np.log(T)), obj.grad / T, new_state

            return fun

        res, extra = selector_landmark_search(self, X, theta0, make_objective, rng)
        st = res.state
        box = np.array([self.log2_sigma, self.log2_C]) * _LOG2
        start = np.clip(theta0, box[:, 0], box[:, 1])  # as minimize_log_params clips it
        sigma, C = (float(v) for v in np.exp(res.theta))
        T = float(st["T"])
        info = {
            "R2": float(st["R2"]),
            "w2": float(st["w2"]),
            "n_ball": int(st["n_ball"]),
            "bound": float(min(1.0, T / len(y))),
            **extra,
            "n_support": int(st["n_sv"]),
            "n_iter": res.n_iter,
            "n_evals": res.n_evals,
            "converged": res.converged,
            "message": res.message,
            "segments": res.segments,
            "at_bound": list(res.at_bound),
            "start_sigma": float(np.exp(start[0])),
            "start_C": float(np.exp(start[1])),
            "grad_norm": float(np.linalg.norm(res.grad)),
        }
        return Selection(
            params=rbf_params(sigma, C),
            estimate=None,
            criterion=T,
            n_svm_fits=int(res.n_fits),
            history=res.history,
            final_model=self.final_model,
            info=info,
        )
