"""RBSVM on a Nystroem kernel: the RBSVM search (Algorithm 1) for large n (issue #10).

Same objective, loss, optimiser and options as :class:`svmtune.methods.rbsvm.RBSVM`, but the
kernel matrix is the rank-``m`` Nystroem approximation on pivoted-Cholesky landmarks and every
step costs ``O(n m^2)`` time and ``O(n m)`` memory (:mod:`svmtune.lowrank`).  Differences from
the exact method (and from the paper, beyond those listed in :mod:`svmtune.methods.rbsvm`):

* the LOO outputs, objective and gradient are those of the L2-SVM on ``K~ = Z Z^T``; the
  gradient differentiates ``K~`` exactly with the landmarks held fixed;
* landmarks, rank rule, refresh and start: :mod:`svmtune.methods._lowrank_search`;
* the default final model is libsvm's SVC (``final_model="l1"``): refitting the exact L2-SVM
  needs the ``n x n`` kernel matrix.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_random_state

from svmtune.loo.entropy import model_entropy
from svmtune.loo.rbsvm import loo_error_rate
from svmtune.lowrank import lowrank_rbsvm_objective
from svmtune.methods._lowrank_search import (
    check_lowrank_options,
    lowrank_start,
    selector_landmark_search,
)
from svmtune.methods.base import Selection, ovr_tasks
from svmtune.methods.baselines import rbf_params
from svmtune.methods.rbsvm import RBSVM

__all__ = ["RBSVMLowRank"]


class RBSVMLowRank(RBSVM):
    """RBSVM (Algorithm 1) on a pivoted-Cholesky Nystroem kernel, ``O(n m^2)`` per step.

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
    log2_sigma, log2_C, start, C0, restarts, jump_restarts, tol, max_iter, max_eval, loss
        As :class:`svmtune.methods.rbsvm.RBSVM`.
    final_model : {"l1", "l2"}
        Default "l1" (see the module docstring).

    Notes
    -----
    ``estimate`` is the closed-form LOO error rate of the low-rank L2-SVM at the optimum;
    ``info`` adds ``rank``, ``rank_residual`` (trace residual / n), ``landmark_sigma`` and
    ``n_refresh``.
    """

    name = "rbsvm_lowrank"
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
        **rbsvm_options,
    ):
        super().__init__(final_model=final_model, **rbsvm_options)
        opts = check_lowrank_options(
            rank=rank,
            rank_tol=rank_tol,
            jitter=jitter,
            refresh=refresh,
            start_sample=start_sample,
            final_model=final_model,
        )
        for key, value in opts.items():
            setattr(self, key, value)

    def _objective(self, D2_nm, D2_mm, tasks, theta, sample_weight, init_support):
        """Criterion minimised on the Nystroem kernel: ``(value, grad, LowRankObjective)``.

        Here the mean LOO loss ``J / sum(w)`` (:func:`svmtune.lowrank.lowrank_rbsvm_objective`);
        subclasses minimising another criterion on the same landmarks override this and
        :meth:`_summary`.
        """
        obj = lowrank_rbsvm_objective(
            D2_nm,
            D2_mm,
            tasks,
            theta,
            sample_weight=sample_weight,
            init_support=init_support,
            loss=self.loss,
            jitter=self.jitter,
        )
        n = len(tasks[0])
        total_w = float(n) if sample_weight is None else float(sample_weight.sum())
        return obj.value / total_w, obj.grad / total_w, obj

    def _summary(self, y, tasks, obj, sample_weight) -> tuple[float, dict]:
        """``(estimate, method-specific info)`` at the chosen point's ``obj``."""
        entropy = float(
            np.mean(
                [model_entropy(t, r, sample_weight=sample_weight) for t, r in zip(tasks, obj.loo)]
            )
        )
        return loo_error_rate(y, obj.loo, sample_weight), {"model_entropy": entropy}

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

        def make_objective(D2_nm, D2_mm, m):
            def fun(theta, state):
                init = None if state is None else state["support"]
                value, grad, obj = self._objective(D2_nm, D2_mm, tasks, theta, sw, init)
                st = {"support": obj.supports, "n_sv": obj.n_support, "obj": obj, "rank": m}
                return value, grad, st

            return fun

        res, extra = selector_landmark_search(self, X, theta0, make_objective, rng)
        obj = res.state["obj"]
        sigma, C = (float(v) for v in np.exp(res.theta))
        estimate, info = self._summary(y, tasks, obj, sw)
        info.update(
            {
                "n_iter": res.n_iter,
                "n_evals": res.n_evals,
                "n_support": obj.n_support,
                **extra,
                "converged": res.converged,
                "message": res.message,
                "segments": res.segments,
                "at_bound": list(res.at_bound),
                "grad_norm": float(np.linalg.norm(res.grad)),
            }
        )
        return Selection(
            params=rbf_params(sigma, C),
            estimate=estimate,
            criterion=res.value,
            n_svm_fits=res.n_fits,
            history=res.history,
            final_model=self.final_model,
            info=info,
        )
