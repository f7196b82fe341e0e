"""RBSVM: learn ``(sigma, C)`` of the L2-SVM by minimising its closed-form LOO cross-entropy.

Peng et al., "Regression-based hyperparameter learning for support vector machines"
(RBSVM, IEEE TNNLS 2023), Algorithm 1: train the L2-SVM, compute the closed-form leave-one-out
outputs (eq. (27)), their tanh cross-entropy ``J`` (eq. (29)-(33)) and its gradient, take a
gradient step in ``(log sigma, log C)``, repeat.  The maths lives in :mod:`svmtune.loo.rbsvm`
(objective and exact gradient) and :mod:`svmtune.loo.entropy` (model entropy, eq. (39)-(40));
the optimiser is the shared :func:`svmtune.search.gradient.minimize_log_params`.

Differences from the paper, all documented in the option descriptions:

* the exact gradient for a fixed support set replaces eq. (35)-(36), which cannot move sigma;
* L-BFGS-B inside a log2 box (default the grid baselines' ``[-8, 8]``) replaces unbounded
  Polak-Ribiere conjugate gradients;
* the start is data-driven (median heuristic) instead of ``sigma = 1``;
* multiclass problems learn one ``(sigma, C)`` for all one-vs-rest tasks by summing their
  objectives (the paper reports each one-vs-rest task separately);
* with ``groups`` (``SVMTuner.fit(groups=...)``) ``J`` sums the closed-form
  leave-one-group-out outputs instead (:mod:`svmtune.loo.rbsvm_groups`, the block version of
  eq. (27)), so that rows whose close relatives are in the training part do not judge a
  candidate.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from svmtune._dual_solution import DualSolution
from svmtune._factor import ExtendedFactor
from svmtune._loo_losses import LOSSES, check_nonsupport
from svmtune.kernels import kernel_block, rbf_columns, rbf_params
from svmtune.loo.closed_form import loo_error_rate, loo_exact_mask
from svmtune.loo.entropy import model_entropy
from svmtune.loo.rbsvm import LOOObjective, _rbsvm_objective
from svmtune.loo.rbsvm_groups import lgo_exact_mask, objective_codes
from svmtune.methods._constraints import SEARCH_CONSTRAINTS, Check, Options
from svmtune.methods.base import Selection, SelectionContext, Selector, TrainingData, ovr_tasks
from svmtune.search.gradient import minimize_log_params
from svmtune.search.start import exact_search_start

__all__ = ["RBSVM"]


def _check_nonsupport(name: str, value: Any) -> str:
    """:func:`svmtune._loo_losses.check_nonsupport`, as a declared constraint."""
    check_nonsupport(value)
    return value


#: the constraint of option ``nonsupport`` (shared with the low-rank RBSVM)
NONSUPPORT = Check(_check_nonsupport, "one of the non-support-vector rules")


class RBSVM(Selector):
    """Regression-based hyperparameter learning (RBSVM Algorithm 1) for the RBF L2-SVM.

    Parameters
    ----------
    log2_sigma, log2_C : (lo, hi)
        Search box in log2 units (default ``(-8, 8)``, the paper's grid range).
    start : {"median", "sqrt_d"} or (sigma, C) or dict
        Starting point.  "median": sigma0 = square root of the median squared distance between
        training points of positive weight (median heuristic); "sqrt_d": sigma0 =
        sqrt(n_features); in both cases ``C0`` below.  A pair or ``{"sigma": .., "C": ..}``
        gives the start explicitly.
    C0 : float
        Starting C for the rule-based starts (default 1, i.e. log C = 0, Algorithm 1).
    restarts : int
        Additional starts drawn uniformly in the box (log2 units) with the selector's
        ``random_state``; the best end point over all starts wins.
    jump_restarts : int
        Continuations of a start after its line search stalls at a jump of ``J`` (a change of
        the support set), from the far side of the jump, while they lower ``J`` (default 3;
        :func:`svmtune.search.gradient.minimize_log_params`).
    tol : float
        Stop when the relative change of J per iteration is below ``tol``.
    max_iter : int
        L-BFGS-B iterations per start.
    max_eval : int, optional
        Objective evaluations (= SVM trainings) per start; default ``5 * max_iter``.
    loss : {"cross_entropy", "squared"}
        "cross_entropy": RBSVM eq. (29).  "squared": Brier score of the tanh probabilities
        (a bounded variant; see :func:`svmtune._loo_losses.loo_loss`).
    nonsupport : {"model", "label"}
        The LOO output of a non-support vector in ``J``: the full model's output (exact;
        default) or its label (eq. (27) read literally, :func:`svmtune.loo.rbsvm.rbsvm_objective`).
    final_model : {"l2", "l1"}
        The SVM refitted with the learned hyperparameters: the L2-SVM they were learned for
        (the paper) or libsvm's hinge-loss SVC.

    Notes
    -----
    ``select`` returns ``estimate`` = the leave-one-out error rate of the closed-form LOO
    outputs at the optimum, ``criterion`` = ``J / n`` (mean LOO cross-entropy, summed over
    one-vs-rest tasks), ``n_svm_fits`` = objective evaluations (one warm-started L2-SVM
    training, of all one-vs-rest tasks, each) and ``info`` with the model entropy
    (eq. (39), mean over tasks), iteration and evaluation counts, the support size and
    ``loo_exact_fraction``, the share of points whose closed-form LOO output is provably exact
    (:func:`svmtune.loo.closed_form.loo_exact_mask`, mean over tasks).

    With ``groups`` (one label per sample) the LOO outputs are leave-one-group-out outputs
    (:func:`svmtune.loo.rbsvm_groups.closed_form_lgo`): ``estimate``, ``criterion`` and the
    model entropy are theirs, ``info["n_groups"]`` counts the groups, and
    ``loo_exact_fraction`` is the share of rows whose group's output is provably exact
    (:func:`svmtune.loo.rbsvm_groups.lgo_exact_mask`).  Groups need ``nonsupport="model"``.
    """

    name = "rbsvm"
    loo_family = "l2"  # estimate: the L2-SVM's closed-form LOO error, eq. (27)
    kernels = ("rbf",)
    held_out = "groups"  # single rows, or whole groups with the block closed form
    _parameter_constraints = {
        **SEARCH_CONSTRAINTS,
        "loss": [Options(*LOSSES)],
        "nonsupport": [NONSUPPORT],
        "final_model": [Options("l2", "l1")],
    }

    def __init__(
        self,
        *,
        log2_sigma=(-8.0, 8.0),
        log2_C=(-8.0, 8.0),
        start="median",
        C0: float = 1.0,
        restarts: int = 0,
        jump_restarts: int = 3,
        tol: float = 1e-6,
        max_iter: int = 100,
        max_eval: int | None = None,
        loss: str = "cross_entropy",
        nonsupport: str = "model",
        final_model: str = "l2",
    ):
        self._set_options(
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
        self._set_options(loss=loss, nonsupport=nonsupport, final_model=final_model)

    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """See :meth:`svmtune.methods.base.Selector.run`."""
        X, y, sample_weight, groups = data.X, data.y, data.sample_weight, data.groups
        random_state = context.random_state
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        D2, theta0 = exact_search_start(
            X,
            self.start,
            self.C0,
            method=self.name,
            random_state=random_state,
            sample_weight=sw,
            sqdist=data.sqdist,
        )
        return self._search(D2, theta0, y, sw, random_state=random_state, groups=groups)

    def _search(self, D2, theta0, y, sample_weight=None, *, random_state=None, groups=None):
        """The search of :meth:`run` from the squared distances ``D2`` of the training
        points and the start ``theta0 = (log sigma, log C)``."""
        y = np.asarray(y)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        tasks = ovr_tasks(y)
        total_w = float(len(y)) if sw is None else float(sw.sum())
        codes = objective_codes(groups, len(y), self.nonsupport)  # once, not per evaluation

        def fun(theta: np.ndarray, state: dict | None):
            # the mean loss J / n keeps the gradient O(1), so L-BFGS-B's first step is moderate
            init = None if state is None else state["support"]
            obj = _rbsvm_objective(
                D2,
                tasks,
                theta,
                sw,
                init_support=init,
                loss=self.loss,
                nonsupport=self.nonsupport,
                codes=codes,
            )
            new_state = {"support": obj.supports, "n_sv": obj.n_support, "obj": _unfactored(obj)}
            return obj.value / total_w, obj.grad / total_w, new_state

        res = minimize_log_params(
            fun,
            theta0,
            bounds=[self.log2_sigma, self.log2_C],
            names=("sigma", "C"),
            tol=self.tol,
            max_iter=self.max_iter,
            max_eval=self.max_eval,
            restarts=self.restarts,
            jump_restarts=self.jump_restarts,
            random_state=random_state,
        )
        obj = res.state["obj"]
        sigma, C = (float(v) for v in np.exp(res.theta))
        # obj.loo: the closed-form LOO outputs (eq. (27)), whatever J took at non-SVs
        entropy = float(
            np.mean([model_entropy(t, r, sample_weight=sw) for t, r in zip(tasks, obj.loo)])
        )
        K = rbf_columns(D2, sigma)  # the certificates read the support columns only
        sols = [_refactored(sol, K) for sol in obj.solutions]
        if groups is None:
            masks = [loo_exact_mask(sol, K) for sol in sols]
        else:
            masks = [lgo_exact_mask(sol, K, groups) for sol in sols]
        exact = float(np.mean([mask.mean() for mask in masks]))
        info = {
            "model_entropy": entropy,
            "n_support": obj.n_support,
            "loo_exact_fraction": exact,
            **({} if groups is None else {"n_groups": int(np.unique(groups).size)}),
            **res.diagnostics(),
        }
        return Selection(
            params=rbf_params(sigma, C),
            estimate=loo_error_rate(y, obj.loo, sw),
            criterion=res.value,
            n_svm_fits=res.n_fits,
            history=res.history,
            final_model=self.final_model,
            info=info,
        )


def _unfactored(obj: LOOObjective) -> LOOObjective:
    """``obj`` with its solutions' factors dropped (``|S|^2`` floats each): the search keeps
    the states of its best and its last evaluation while it makes the next, and of those only
    the best's factors are read, once, at the end (:func:`_refactored`; issue 64: at 2,240
    rows they kept a 35 MB factor beside the evaluation's own at the exact stage's peak)."""
    sols = [dataclasses.replace(sol, factor=None) for sol in obj.solutions]
    return dataclasses.replace(obj, solutions=sols)


def _refactored(sol: DualSolution, K) -> DualSolution:
    """``sol`` with the factor of its support system made afresh from the kernel ``K``
    (``H_SS = K_SS + diag(H_diag_S)``, RBSVM eq. (22))."""
    S = np.flatnonzero(sol.support)
    H = kernel_block(K, S, S) + np.diag(sol.H_diag[S])
    return dataclasses.replace(sol, factor=ExtendedFactor.from_block(H, S))
