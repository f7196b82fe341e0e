"""SpanSVM on a Nystroem kernel: the smoothed-span search of Chapelle et al. 2002 for large n.

Same criterion, constants and search options as :class:`svmtune.methods.gradient_baselines.SpanSVM`
(the smoothed span estimate of the L2-SVM's leave-one-out error, summed over one-vs-rest tasks,
minimised over ``(log sigma, log C)`` with its exact gradient; Chapelle, Vapnik, Bousquet &
Mukherjee, Machine Learning 46 (2002); RBSVM §II-D), but the kernel matrix is the rank-``m``
Nystroem approximation on pivoted-Cholesky landmarks and every step costs ``O(n m^2)`` time and
``O(n m)`` memory (:mod:`svmtune.loo.span_lowrank`).  The landmark handling is that of
:class:`svmtune.methods.rbsvm_lowrank.RBSVMLowRank`, whose search loop this class reuses:

* the smoothed span, its gradient and the span-rule estimate are those of the L2-SVM on
  ``K~ = Z Z^T``; the gradient differentiates ``K~`` exactly with the landmarks held fixed;
* landmarks, rank rule, refresh and start: :mod:`svmtune.methods._lowrank_search`;
* the default final model is libsvm's SVC (``final_model="l1"``): refitting the exact L2-SVM
  needs the ``n x n`` kernel matrix.
"""

from __future__ import annotations

from svmtune.loo.span import SPAN_A, SPAN_B, SPAN_ETA
from svmtune.loo.span_lowrank import lowrank_span_objective, lowrank_span_rule_error
from svmtune.methods.gradient_baselines import SpanSVM
from svmtune.methods.rbsvm_lowrank import RBSVMLowRank

__all__ = ["SpanSVMLowRank"]


class SpanSVMLowRank(RBSVMLowRank):
    """Smoothed span estimate (Chapelle et al. 2002) minimised on a Nystroem kernel.

    Parameters
    ----------
    eta : float
        Span regulariser (default :data:`svmtune.loo.span.SPAN_ETA` = 0.1; 0 disables it).
    A, B : float
        Sigmoid slope and offset (defaults 5 and 0, Chapelle et al. 2002).
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
        Default "l1" (see the module docstring).
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
    kernels = ("rbf",)

    def __init__(
        self,
        *,
        eta: float = SPAN_ETA,
        A: float = SPAN_A,
        B: float = SPAN_B,
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
        # RBSVMLowRank validates the landmark and search options; it has no span constants
        # and its LOO ``loss`` option (left at its default) is not used here
        super().__init__(
            rank=rank,
            rank_tol=rank_tol,
            jitter=jitter,
            refresh=refresh,
            start_sample=start_sample,
            final_model=final_model,
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
        # the span constants, validated (with the same messages) by the exact SpanSVM
        span = SpanSVM(eta=eta, A=A, B=B)
        self.eta, self.A, self.B = span.eta, span.A, span.B

    def _objective(self, D2_nm, D2_mm, tasks, theta, sample_weight, init_support):
        """Smoothed span estimate summed over tasks (not divided by ``n``: each term is a mean,
        as in SpanSVM) and its gradient (:func:`svmtune.loo.span_lowrank.lowrank_span_objective`).
        """
        obj = lowrank_span_objective(
            D2_nm,
            D2_mm,
            tasks,
            theta,
            sample_weight=sample_weight,
            init_support=init_support,
            eta=self.eta,
            A=self.A,
            B=self.B,
            jitter=self.jitter,
        )
        return obj.value, obj.grad, obj

    def _summary(self, y, tasks, obj, sample_weight) -> tuple[float, dict]:
        est = lowrank_span_rule_error(obj.solutions, obj.Z, y, sample_weight)
        return est, {"span_rule_error": est, "eta": self.eta, "A": self.A, "B": self.B}
