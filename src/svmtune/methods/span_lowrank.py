"""SpanSVM on a Nystroem kernel: the smoothed-span search of Chapelle et al. 2002 for large n.

Same criterion, constants and search options as :class:`svmtune.methods.gradient_baselines.SpanSVM`
(the smoothed span estimate of the L2-SVM's leave-one-out error, summed over one-vs-rest tasks,
minimised over ``(log sigma, log C)`` with its exact gradient; Chapelle, Vapnik, Bousquet &
Mukherjee, Machine Learning 46 (2002); RBSVM §II-D), but the kernel matrix is the rank-``m``
Nystroem approximation on pivoted-Cholesky landmarks and every step costs ``O(n m^2)`` time and
``O(n m)`` memory (:mod:`svmtune.loo.span_lowrank`):

* the smoothed span, its gradient and the span-rule estimate are those of the L2-SVM on
  ``K~ = Z Z^T``; the gradient differentiates ``K~`` exactly with the landmarks held fixed;
* landmarks, rank rule, refresh and start: :mod:`svmtune.methods._lowrank_search`;
* the default final model is libsvm's SVC (``final_model="l1"``): refitting the exact L2-SVM
  needs the ``n x n`` kernel matrix.
"""

from __future__ import annotations

from svmtune.loo.span import SPAN_A, SPAN_B, SPAN_ETA
from svmtune.loo.span_lowrank import _lowrank_span_objective, lowrank_span_rule_error
from svmtune.methods._lowrank_search import LowRankSearch
from svmtune.methods.gradient_baselines import SPAN_CONSTRAINTS

__all__ = ["SpanSVMLowRank"]


class SpanSVMLowRank(LowRankSearch):
    """Smoothed span estimate (Chapelle et al. 2002) minimised on a Nystroem kernel.

    Parameters
    ----------
    eta : float
        Span regulariser (default :data:`svmtune.loo.span.SPAN_ETA` = 0.1; 0 disables it).
    A, B : float
        Sigmoid slope and offset (defaults 5 and 0, Chapelle et al. 2002).
    rank, rank_tol, jitter, refresh, start_sample, final_model
        The low-rank options (:class:`svmtune.methods._lowrank_search.LowRankSearch`).
    log2_sigma, log2_C, start, C0, restarts, jump_restarts, tol, max_iter, max_eval
        Search options, as :class:`svmtune.methods.gradient_baselines.SpanSVM` (same
        defaults).

    Notes
    -----
    ``criterion`` is the smoothed span estimate of the low-rank L2-SVM at the chosen point,
    summed over one-vs-rest tasks (as SpanSVM's); ``estimate`` its plain (step-function,
    ``eta = 0``) span-rule LOO error (:func:`svmtune.loo.span_lowrank.lowrank_span_rule_error`).
    ``info`` holds ``span_rule_error``, ``eta``, ``A``, ``B``, ``rank``, ``rank_residual``
    (trace residual / n), ``landmark_sigma``, ``n_refresh`` and the optimiser's diagnostics.
    """

    name = "span_lowrank"
    _parameter_constraints = SPAN_CONSTRAINTS  # the exact SpanSVM's

    def __init__(
        self,
        *,
        eta: float = SPAN_ETA,
        A: float = SPAN_A,
        B: float = SPAN_B,
        **options,
    ):
        super().__init__(**options)
        opts = self._validate_options(eta=eta, A=A, B=B)
        self.eta, self.A, self.B = (float(opts[k]) for k in ("eta", "A", "B"))

    def _evaluate(self, D2_nm, D2_mm, tasks, theta, sample_weight, state):
        """Smoothed span estimate summed over tasks (not divided by ``n``: each term is a mean,
        as in SpanSVM) and its gradient (:func:`svmtune.loo.span_lowrank.lowrank_span_objective`,
        by its unchecked kernel)."""
        obj = _lowrank_span_objective(
            self._inputs(D2_nm, D2_mm, tasks, theta, sample_weight, state),
            eta=self.eta,
            A=self.A,
            B=self.B,
            jitter=self.jitter,
        )
        return obj.value, obj.grad, obj, {}

    def _summary(self, y, tasks, state, sample_weight):
        obj = state["obj"]
        est = lowrank_span_rule_error(obj.solutions, obj.Z, y, sample_weight)
        info = {"span_rule_error": est, "eta": self.eta, "A": self.A, "B": self.B}
        return est, obj.value, info
