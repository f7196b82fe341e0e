"""RBSVM on a Nystroem kernel: the RBSVM search (Algorithm 1) for large n (issue #10).

Same objective, loss, optimiser and options as :class:`svmtune.methods.rbsvm.RBSVM`, but the
kernel matrix is the rank-``m`` Nystroem approximation on pivoted-Cholesky landmarks and every
step costs ``O(n m^2)`` time and ``O(n m)`` memory (:mod:`svmtune.lowrank`).  Differences from
the exact method (and from the paper, beyond those listed in :mod:`svmtune.methods.rbsvm`):

* the LOO outputs, objective and gradient are those of the L2-SVM on ``K~ = Z Z^T``; the
  gradient differentiates ``K~`` exactly with the landmarks held fixed;
* rank rule: pivoted Cholesky of the RBF kernel at the start width until the trace residual is
  at most ``rank_tol * n`` or ``rank`` landmarks; if the learned width ends more than a factor
  2 from the width the landmarks were chosen at, the landmarks are re-chosen at the learned
  width and the search is continued from there (``refresh`` times at most);
* the median-heuristic start uses a random subsample of ``start_sample`` points
  (``random_state``), since the full distance matrix is ``n x n``;
* the default final model is libsvm's SVC (``final_model="l1"``): refitting the exact L2-SVM
  needs the ``n x n`` kernel matrix.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_random_state

from svmtune.kernels import squared_distances
from svmtune.loo.entropy import model_entropy
from svmtune.loo.rbsvm import loo_error_rate
from svmtune.lowrank import lowrank_rbsvm_objective, pivoted_cholesky_landmarks
from svmtune.methods.base import Selection, ovr_tasks
from svmtune.methods.baselines import rbf_params
from svmtune.methods.rbsvm import RBSVM
from svmtune.search.gradient import initial_sigma, minimize_log_params

__all__ = ["RBSVMLowRank"]

_LOG2 = float(np.log(2.0))


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
        if int(rank) != rank or rank < 2:
            raise ValueError(f"rank must be an integer >= 2 (number of landmarks), got {rank}")
        self.rank = int(rank)
        if not (0.0 < rank_tol < 1.0):
            raise ValueError(f"rank_tol must lie in (0, 1), e.g. 0.01; got {rank_tol}")
        self.rank_tol = float(rank_tol)
        if not (np.isfinite(jitter) and jitter >= 0):
            raise ValueError(f"jitter must be a non-negative number, got {jitter}")
        self.jitter = float(jitter)
        if int(refresh) != refresh or refresh < 0:
            raise ValueError(f"refresh must be a non-negative integer, got {refresh}")
        self.refresh = int(refresh)
        if int(start_sample) != start_sample or start_sample < 2:
            raise ValueError(f"start_sample must be an integer >= 2, got {start_sample}")
        self.start_sample = int(start_sample)

    def _start(self, X: np.ndarray, random_state) -> np.ndarray:
        if isinstance(self.start, tuple):
            return np.log(self.start)
        rng = check_random_state(random_state)
        n = X.shape[0]
        sub = X if n <= self.start_sample else X[rng.choice(n, self.start_sample, replace=False)]
        D2 = squared_distances(sub) if self.start == "median" else None
        sigma0 = initial_sigma(D2, rule=self.start, n_features=X.shape[1], random_state=rng)
        return np.log([sigma0, self.C0])

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
        total_w = float(len(y)) if sw is None else float(sw.sum())
        rng = check_random_state(random_state)
        theta = self._start(X, rng)
        history: list[dict] = []
        n_fits = n_iter = n_evals = 0
        n_refresh = 0
        ref_sigma = float(np.exp(theta[0]))
        while True:
            idx, resid = pivoted_cholesky_landmarks(
                X, ref_sigma, tol=self.rank_tol, max_rank=self.rank
            )
            D2_nm = squared_distances(X, X[idx])
            D2_mm = D2_nm[idx]

            def fun(th, state, D2_nm=D2_nm, D2_mm=D2_mm, m=int(idx.size)):
                init = None if state is None else state["support"]
                obj = lowrank_rbsvm_objective(
                    D2_nm,
                    D2_mm,
                    tasks,
                    th,
                    sample_weight=sw,
                    init_support=init,
                    loss=self.loss,
                    jitter=self.jitter,
                )
                st = {"support": obj.supports, "n_sv": obj.n_support, "obj": obj}
                st["rank"] = m
                return obj.value / total_w, obj.grad / total_w, st

            res = minimize_log_params(
                fun,
                theta,
                bounds=[self.log2_sigma, self.log2_C],
                names=("sigma", "C"),
                tol=self.tol,
                max_iter=self.max_iter,
                max_eval=self.max_eval,
                restarts=self.restarts if n_refresh == 0 else 0,
                jump_restarts=self.jump_restarts,
                random_state=rng,
            )
            for rec in res.history:
                rec["stage"] = n_refresh
            history.extend(res.history)
            n_fits += res.n_fits
            n_iter += res.n_iter
            n_evals += res.n_evals
            theta = res.theta
            sigma = float(np.exp(theta[0]))
            if n_refresh >= self.refresh or abs(np.log(sigma / ref_sigma)) <= _LOG2:
                break
            n_refresh += 1
            ref_sigma = sigma
        obj = res.state["obj"]
        sigma, C = (float(v) for v in np.exp(res.theta))
        entropy = float(
            np.mean([model_entropy(t, r, sample_weight=sw) for t, r in zip(tasks, obj.loo)])
        )
        info = {
            "model_entropy": entropy,
            "n_iter": n_iter,
            "n_evals": n_evals,
            "n_support": obj.n_support,
            "rank": int(idx.size),
            "rank_residual": resid,
            "landmark_sigma": ref_sigma,
            "n_refresh": n_refresh,
            "converged": res.converged,
            "message": res.message,
            "segments": res.segments,
            "at_bound": list(res.at_bound),
            "grad_norm": float(np.linalg.norm(res.grad)),
        }
        return Selection(
            params=rbf_params(sigma, C),
            estimate=loo_error_rate(y, obj.loo, sw),
            criterion=res.value,
            n_svm_fits=n_fits,
            history=history,
            final_model=self.final_model,
            info=info,
        )
