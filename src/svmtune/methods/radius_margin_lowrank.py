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

from svmtune.loo.radius_margin_lowrank import _lowrank_radius_margin_objective
from svmtune.methods._lowrank_search import LowRankSearch
from svmtune.methods.gradient_baselines import radius_margin_step, radius_margin_summary

__all__ = ["RMSVMLowRank"]


class RMSVMLowRank(LowRankSearch):
    """Radius-margin bound minimised by gradient descent on a Nystroem kernel ("RMSVM", large n).

    The criterion is ``T = R^2 sum_k ||w_k||^2`` of the L2-SVM in the feature space of
    ``K~ + diag(1/(C w))``, ``K~`` the rank-``m`` Nystroem kernel
    (:func:`svmtune.loo.radius_margin_lowrank.lowrank_radius_margin_objective`), its exact
    gradient by the envelope theorem with the landmarks fixed; the optimiser is handed
    ``log T`` (gradient ``dT / T``), as in :class:`svmtune.methods.gradient_baselines.RMSVM`.
    ``O(n m^2)`` time and ``O(n m)`` memory per step.

    Parameters
    ----------
    rank, rank_tol, jitter, refresh, start_sample, final_model, log2_sigma, log2_C, start, C0,
    restarts, jump_restarts, tol, max_iter, max_eval
        :class:`svmtune.methods._lowrank_search.LowRankSearch` (the search options those of
        :class:`svmtune.methods.gradient_baselines.RMSVM`, same defaults).

    Notes
    -----
    ``estimate`` is None (``T / n`` bounds the LOO error of a binary SVM but is no estimate of
    it); ``criterion`` is ``T`` of the low-rank kernel at the chosen point; ``info`` holds
    ``R2``, ``w2``, ``n_ball``, ``bound = min(1, T/n)`` as RMSVM does, plus ``rank``,
    ``rank_residual`` (trace residual / n), ``landmark_sigma`` and ``n_refresh``.  The
    history's ``value`` is ``log T`` and its ``T`` column ``T``.

    This bound needs a finer approximation than the RBSVM criterion.  At widths narrower than
    the landmarks' the Nystroem kernel is coarse and overstates ``T``, so with landmarks fixed
    at the start width the search stops short of them.  The landmarks therefore follow the
    search to narrower widths (:mod:`svmtune.methods._lowrank_search`); the run that showed
    it is in ``docs/notes/radius_margin.md``.
    """

    name = "radius_margin_lowrank"

    def _evaluate(self, D2_nm, D2_mm, tasks, theta, sample_weight, state):
        """``log T`` and its gradient ``dT / T``, as RMSVM hands them to the optimiser
        (:func:`svmtune.methods.gradient_baselines.radius_margin_step`), by the unchecked
        kernel of :func:`svmtune.loo.radius_margin_lowrank.lowrank_radius_margin_objective`."""
        obj = _lowrank_radius_margin_objective(
            self._inputs(D2_nm, D2_mm, tasks, theta, sample_weight, state),
            ball_init=None if state is None else state["ball_support"],
            jitter=self.jitter,
        )
        value, grad, extra = radius_margin_step(obj)
        return value, grad, obj, extra

    def _summary(self, y, tasks, state, sample_weight):
        T, info = radius_margin_summary(state, len(y), sample_weight)
        return None, T, info
