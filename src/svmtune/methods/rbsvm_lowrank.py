"""RBSVM on a Nystroem kernel: the RBSVM search (RBSVM Algorithm 1) for large n.

Same objective, loss, optimiser and options as :class:`svmtune.methods.rbsvm.RBSVM`, but the
kernel matrix is the rank-``m`` Nystroem approximation on pivoted-Cholesky landmarks and every
step costs ``O(n m^2)`` time and ``O(n m)`` memory (:mod:`svmtune.lowrank`).  Differences from
the exact method (and from the paper, beyond those listed in :mod:`svmtune.methods.rbsvm`):

* the LOO outputs, objective and gradient are those of the L2-SVM on ``K~ = Z Z^T``; the
  gradient differentiates ``K~`` exactly with the landmarks held fixed;
* landmarks, rank rule, refresh and start: :mod:`svmtune.methods._lowrank_search`;
* the default final model is libsvm's SVC (``final_model="l1"``): refitting the exact L2-SVM
  needs the ``n x n`` kernel matrix;
* with ``groups``, leave-one-group-out outputs as in :class:`svmtune.methods.rbsvm.RBSVM`,
  through the Woodbury factor (:func:`svmtune.loo.rbsvm_groups.lowrank_lgo`);
* a scipy sparse ``X`` (CSR/CSC) is taken without densifying it: the landmarks' kernel
  columns and the start's distances come from sparse dot products
  (:mod:`svmtune.methods._lowrank_search`); the final model is then libsvm's SVC.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from svmtune._loo_losses import LOSSES
from svmtune.kernels import rbf_params
from svmtune.loo.closed_form import loo_error_rate
from svmtune.loo.entropy import model_entropy
from svmtune.loo.rbsvm_groups import objective_codes
from svmtune.loo.rbsvm_lowrank import _lowrank_rbsvm_objective
from svmtune.methods._constraints import Options
from svmtune.methods._lowrank_search import LowRankSearch, landmarks
from svmtune.methods.base import Selection, SelectionContext, TrainingData
from svmtune.methods.rbsvm import NONSUPPORT

__all__ = ["RBSVMLowRank"]


class RBSVMLowRank(LowRankSearch):
    """RBSVM (Algorithm 1) on a pivoted-Cholesky Nystroem kernel, ``O(n m^2)`` per step.

    Parameters
    ----------
    loss : {"cross_entropy", "squared"}
        As :class:`svmtune.methods.rbsvm.RBSVM`.
    nonsupport : {"model", "label"}
        As :class:`svmtune.methods.rbsvm.RBSVM`.
    rank, rank_tol, jitter, refresh, start_sample, final_model
        The low-rank options (:class:`svmtune.methods._lowrank_search.LowRankSearch`; the
        default final model is libsvm's SVC, see the module docstring).
    log2_sigma, log2_C, start, C0, restarts, jump_restarts, tol, max_iter, max_eval
        As :class:`svmtune.methods.rbsvm.RBSVM`.

    Notes
    -----
    ``criterion`` is ``J / n`` of the low-rank L2-SVM at the optimum and ``estimate`` its
    closed-form LOO error rate; ``info`` adds ``model_entropy``, ``rank``, ``rank_residual``
    (trace residual / n), ``landmark_sigma`` and ``n_refresh``.  With ``groups`` the LOO
    outputs are the low-rank leave-one-group-out outputs
    (:func:`svmtune.loo.rbsvm_groups.lowrank_lgo`) and ``info["n_groups"]`` counts the groups.
    """

    name = "rbsvm_lowrank"
    loo_family = "l2"  # estimate: the L2-SVM's closed-form LOO error, eq. (27)
    # the search needs only squared distances to landmarks (sparse dot products, never a
    # dense X); the final model is libsvm's SVC on sparse rows (the L2-SVM is refused)
    accepts_sparse = True
    held_out = "groups"  # single rows, or whole groups with the block closed form
    _parameter_constraints = {
        "loss": [Options(*LOSSES)],
        "nonsupport": [NONSUPPORT],
    }

    def __init__(self, *, loss: str = "cross_entropy", nonsupport: str = "model", **options):
        super().__init__(**options)
        self._set_options(loss=loss, nonsupport=nonsupport)

    def _group_codes(self, groups: np.ndarray) -> np.ndarray:
        """:func:`svmtune.loo.rbsvm_groups.objective_codes` of ``groups``, once per search."""
        return objective_codes(groups, len(groups), self.nonsupport)

    def _evaluate(
        self, D2_nm, D2_mm, tasks, theta, sample_weight, state, codes=None, gradient=True
    ):
        """Mean LOO loss ``J / sum(w)`` (:func:`svmtune.loo.rbsvm_lowrank.lowrank_rbsvm_objective`,
        by its unchecked kernel), of the leave-one-group-out outputs with group ``codes``;
        its gradient unless ``gradient`` is false (then ``grad`` is None)."""
        obj = _lowrank_rbsvm_objective(
            self._inputs(D2_nm, D2_mm, tasks, theta, sample_weight, state),
            loss=self.loss,
            nonsupport=self.nonsupport,
            codes=codes,
            gradient=gradient,
            jitter=self.jitter,
        )
        n = len(tasks[0])
        total_w = float(n) if sample_weight is None else float(sample_weight.sum())
        grad = None if obj.grad is None else obj.grad / total_w
        return obj.value / total_w, grad, obj, {}

    def estimate_at(
        self, data: TrainingData, context: SelectionContext, params: dict[str, Any]
    ) -> Selection:
        """The closed-form LOO error rate of the low-rank L2-SVM at ``params`` (``sigma``,
        ``C``), on the rank rule's landmarks at that ``sigma`` (``info["rank"]`` of them:
        fewer than the option where the trace rule stops first): one objective evaluation
        without its gradient, where a search started there with ``max_eval=1`` would also
        take a line-search step (``auto``'s referee on the low-rank path,
        :mod:`svmtune.methods.auto`).  ``info["loo"]`` holds each task's leave-one-out
        outputs, for the referee's row-by-row comparisons."""
        X, y, sw, tasks, by_group = self._prepare(data.X, data.y, data.sample_weight, data.groups)
        sigma, C = float(params["sigma"]), float(params["C"])
        idx, _, D2_nm, D2_mm = landmarks(X, sigma, rank=self.rank, rank_tol=self.rank_tol)
        theta = np.log([sigma, C])
        _, _, obj, _ = self._evaluate(
            D2_nm, D2_mm, tasks, theta, sw, None, gradient=False, **by_group
        )
        return Selection(
            params=rbf_params(sigma, C),
            estimate=self._summary(y, tasks, {"obj": obj}, sw)[0],
            n_svm_fits=len(tasks),
            final_model=self.final_model,
            # the LOO outputs per task: auto's referee compares candidates row by row
            info={"rank": int(idx.size), "loo": list(obj.loo)},
        )

    def _summary(self, y, tasks, state, sample_weight):
        obj = state["obj"]
        entropy = float(
            np.mean(
                [model_entropy(t, r, sample_weight=sample_weight) for t, r in zip(tasks, obj.loo)]
            )
        )
        n = len(y)
        total_w = float(n) if sample_weight is None else float(sample_weight.sum())
        return (
            loo_error_rate(y, obj.loo, sample_weight),
            obj.value / total_w,
            {"model_entropy": entropy},
        )
