"""Span of the support vectors of a weighted L1-SVM; span-rule, span bound and xi-alpha bound.

Sarafis, Diou & Delopoulos, "Span error bound for weighted SVM with applications in
hyperparameter selection" (JMLR), cited as *Weighted span*.  The SVM is the hinge-loss SVM
with one penalty per sample, ``0 <= alpha_i <= C_i`` (Weighted span eq. (5)-(7)), as
:func:`svmtune.svm.fit_l1_svm` trains it (``C_i = C w_i``, ``sol.upper``).  Support vectors
are *in-bound* (``0 < alpha_i < C_i``, the set ``I`` of size ``n*``) or *bounded*
(``alpha_i = C_i``, ``m`` of them).

Span of a support vector ``p`` (eq. (24)-(32)): the distance in feature space from
``Phi(x_p)`` to

    Lambda_p = { sum_{i in I, i != p} lambda_i Phi(x_i) :  sum lambda_i = 1,
                 0 <= alpha_i + y_i y_p alpha_p lambda_i <= C_i }.

* :func:`span_rule_spans` -- the box constraints dropped (Theorem 2: they hold automatically
  when the in-bound / bounded sets survive leaving ``p`` out).  ``Lambda_p`` is then the
  affine hull of the other in-bound support vectors and every span has a closed form
  through the extended matrix ``M = [[K_II, 1], [1^T, 0]]`` of the in-bound support vectors
  (Vapnik & Chapelle 2000; Chapelle et al. 2002 eq. (10)):

      in-bound p:   S_p^2 = 1 / (M^{-1})_pp
      bounded p:    S_p^2 = K_pp - [k_Ip; 1]^T M^{-1} [k_Ip; 1]

  one factorisation (:class:`svmtune.svm.ExtendedFactor`) for all of them,
  ``O(n*^3 + n n*^2)``.
* :func:`box_constrained_spans` -- with the box constraints (eq. (28)-(32)), one QP per
  support vector solved by clarabel; ``inf`` where ``Lambda_p`` is empty.
* :func:`lemma1_condition` -- Lemma 1's existence condition (eq. (25)) per in-bound SV.

Estimates of the error rate of a trained model, all ``estimate_*(sol, K, ...) -> float``:

* :func:`estimate_span_rule` -- the span-rule ``t_l`` (Corollary 1, eq. (37)), which is the
  leave-one-out error itself when the support-vector sets are stable (Theorem 2, eq. (35)).
* :func:`estimate_span_bound` -- Theorem 1's bound (may exceed 1).
* :func:`estimate_xi_alpha` -- the xi-alpha bound, eq. (21) (Joachims 2000; Yang et al. 2015).
* :func:`estimate_kfold_cv` -- K-fold cross-validation through :mod:`svmtune.search.cv`.

Helpers for reproducing the paper's experiments: :func:`holdout_error`,
:func:`prediction_rmse` (Table 4), :func:`worst_case_at_minimum` (Tables 2-3),
:func:`best_slices` (Fig. 2-4), :func:`lemma1_statistics` (Table 5) and
:func:`make_ringnorm` (the synthetic data of Section 6.7, Fig. 5-6).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from svmtune._factor import ExtendedFactor
from svmtune._support import DualSolution, check_pm1, check_solution
from svmtune._warnings import user_stacklevel
from svmtune.loo.sphere import _check_kernel

__all__ = [
    "SpanCache",
    "span_rule_spans",
    "box_constrained_spans",
    "span_box",
    "lemma1_lhs",
    "lemma1_condition",
    "n_empty_spans",
    "span_rule_loo_decision",
    "estimate_span_rule",
    "span_bound_value",
    "enclosing_diameter",
    "estimate_span_bound",
    "xi_alpha_radius2",
    "estimate_xi_alpha",
    "estimate_kfold_cv",
    "ESTIMATES",
    "holdout_error",
    "prediction_rmse",
    "worst_case_at_minimum",
    "best_slices",
    "lemma1_statistics",
    "make_ringnorm",
]


# ---------------------------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------------------------
def _check_l1(sol: DualSolution) -> None:
    check_solution(
        sol,
        "the weighted span theory is for the hinge-loss (L1) SVM with box constraints "
        "alpha_i <= C_i; got an L2-SVM solution (use svmtune.loo.span for the L2-SVM)",
        loss="l1",
        factor=False,
    )


def _check(sol: DualSolution, K: np.ndarray) -> np.ndarray:
    _check_l1(sol)
    return _check_kernel(K, sol.y.shape[0])


def _check_spans(spans, n: int, name: str = "spans") -> np.ndarray:
    """Squared spans as floats after checking ``n`` of them, each ``>= 0`` or ``inf``."""
    S2 = np.asarray(spans, dtype=float)
    if S2.shape != (n,):
        raise ValueError(f"{name} has shape {S2.shape}; expected ({n},), one squared span each")
    if not np.all(S2 >= 0):  # also False for NaN
        raise ValueError(
            f"{name} must be squared spans, >= 0 (inf for an undefined span); got NaN or "
            "negative values"
        )
    return S2


def _pair_sqdist(K: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Feature-space squared distances ``K_pp + K_ii - 2 K_pi`` (rows p x cols i), >= 0."""
    d = np.diag(K)
    D2 = d[rows][:, None] + d[cols][None, :] - 2.0 * K[np.ix_(rows, cols)]
    return np.maximum(D2, 0.0)


def _trained(sol: DualSolution) -> np.ndarray | None:
    """Indices of the samples the model was trained on (``C_i > 0``); None when all were.

    :func:`svmtune.svm.fit_l1_svm` leaves the samples of weight 0 (``C_i = 0``) out of the
    fit, and every estimate here treats them as absent rows: they count neither as errors
    nor in the number of samples ``l``, nor in the kernel-matrix quantities (``D``,
    ``R_Delta``) of the training set.
    """
    keep = sol.upper > 0
    return None if keep.all() else np.flatnonzero(keep)


def _n_trained(sol: DualSolution) -> int:
    """``l``: the number of samples the model was trained on (of positive ``C_i``)."""
    keep = _trained(sol)
    return sol.y.shape[0] if keep is None else keep.size


# ---------------------------------------------------------------------------------------------
# Spans
# ---------------------------------------------------------------------------------------------
class SpanCache:
    """Squared spans already computed on one kernel matrix, kept by support-vector pattern.

    The spans of :func:`span_rule_spans` depend only on the kernel matrix and on which
    samples are in-bound and which bounded support vectors -- not on ``alpha``, the labels or
    the per-sample penalties.  Models on the same kernel matrix that share that pattern (the
    one-vs-rest tasks of a candidate, neighbouring ``C`` at a small RBF width where every
    sample is an in-bound support vector) then need one factorisation instead of one each.
    Keep one cache per kernel matrix and never share it between matrices: the key does not
    identify the matrix.

    Parameters
    ----------
    maxsize : int, default=256
        Patterns kept; the oldest is dropped beyond that (each entry holds ``n`` floats).

    Attributes
    ----------
    hits, misses : int
        Lookups answered from the cache / computed.
    """

    def __init__(self, maxsize: int = 256) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be a positive integer; got {maxsize!r}")
        self.maxsize = int(maxsize)
        self.hits = 0
        self.misses = 0
        self._spans: dict[bytes, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self._spans)

    @staticmethod
    def key(sol: DualSolution) -> bytes:
        """The in-bound and support masks of ``sol``, packed (same length for one ``n``)."""
        return np.packbits(sol.in_bound).tobytes() + np.packbits(sol.support).tobytes()

    def get(self, key: bytes) -> np.ndarray | None:
        S2 = self._spans.get(key)
        if S2 is None:
            self.misses += 1
            return None
        self.hits += 1
        return S2.copy()

    def put(self, key: bytes, S2: np.ndarray) -> None:
        if key not in self._spans and len(self._spans) >= self.maxsize:
            del self._spans[next(iter(self._spans))]
        self._spans[key] = S2.copy()


def span_rule_spans(
    sol: DualSolution, K: np.ndarray, *, cache: SpanCache | None = None
) -> np.ndarray:
    """Squared spans ``S_p^2`` of every support vector, box constraints dropped (closed form).

    With the box constraints (31) dropped -- exact under the assumption of Weighted span
    Theorem 2 -- ``Lambda_p`` (eq. (24)) is the affine hull of the in-bound support vectors
    other than ``p`` and ``S_p^2`` (eq. (26), (28)-(30), (32)) is the squared distance of
    ``Phi(x_p)`` to it.  With ``M = [[K_II, 1], [1^T, 0]]`` the extended matrix of the
    in-bound support vectors (factored once by :class:`svmtune.svm.ExtendedFactor`):

    * in-bound ``p``: ``S_p^2 = 1 / (M^{-1})_pp`` (Schur complement; Chapelle et al. 2002
      eq. (10));
    * bounded ``p``: ``S_p^2 = K_pp - [k_Ip; 1]^T M^{-1} [k_Ip; 1]``.

    Cost ``O(n*^3 + m n*^2)``.  Each value is clipped to ``[0, min_i ||Phi_p - Phi_i||^2]``
    (every in-bound ``Phi_i`` lies in the hull), which guards the round-off of a nearly
    singular ``K_II`` (large RBF width, duplicated points).

    Parameters
    ----------
    sol : DualSolution
        A hinge-loss SVM from :func:`svmtune.svm.fit_l1_svm`.
    K : ndarray (n, n)
        Its training kernel matrix.
    cache : SpanCache, optional
        Spans computed before on this same ``K`` (see :class:`SpanCache`); the result is
        taken from it when ``sol`` has a pattern seen before, and added to it otherwise.

    Returns
    -------
    ndarray of shape (n,)
        ``S_p^2`` for the support vectors; 0 for the other points (``alpha_p = 0``, they do
        not enter eq. (37)); ``inf`` where the hull is empty: every support vector when there
        is no in-bound one, and the in-bound one when it is the only one.
    """
    K = _check(sol, K)
    if cache is None:
        return _spans(sol, K)
    key = cache.key(sol)
    S2 = cache.get(key)
    if S2 is None:
        S2 = _spans(sol, K)
        cache.put(key, S2)
    return S2


def _spans(sol: DualSolution, K: np.ndarray) -> np.ndarray:
    """:func:`span_rule_spans` without the checks and the cache."""
    n = sol.y.shape[0]
    S2 = np.zeros(n)
    I = np.flatnonzero(sol.in_bound)
    O = np.flatnonzero(sol.support & ~sol.in_bound)
    if I.size == 0:
        S2[sol.support] = np.inf
        return S2
    fac = ExtendedFactor.from_H(K[np.ix_(I, I)])
    if I.size == 1:
        S2[I] = np.inf
    else:
        D2 = _pair_sqdist(K, I, I)
        np.fill_diagonal(D2, np.inf)
        diag = fac.inverse_diagonal()
        with np.errstate(divide="ignore"):
            s = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), np.inf)
        S2[I] = np.clip(s, 0.0, D2.min(axis=1))
    if O.size:
        kIO = K[np.ix_(I, O)]
        x, z = fac.solve(kIO, np.ones(O.size))
        quad = np.einsum("ij,ij->j", kIO, x) + z
        ub = _pair_sqdist(K, O, I).min(axis=1)
        S2[O] = np.clip(np.diag(K)[O] - quad, 0.0, ub)
    return S2


def span_box(sol: DualSolution, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The set ``I \\ {p}`` and the box of eq. (31) on its ``lambda_i`` for support vector ``p``.

    ``0 <= alpha_i + y_i y_p alpha_p lambda_i <= C_i`` (Weighted span eq. (24), (31)) reads
    ``-alpha_i / alpha_p <= lambda_i <= (C_i - alpha_i) / alpha_p`` for ``y_i = y_p`` and
    ``(alpha_i - C_i) / alpha_p <= lambda_i <= alpha_i / alpha_p`` for ``y_i != y_p``.

    Returns
    -------
    idx : ndarray of int
        The in-bound support vectors other than ``p``.
    lo, hi : ndarray
        Bounds on their ``lambda_i``.
    """
    _check_l1(sol)
    n = sol.y.shape[0]
    if not (isinstance(p, (int, np.integer)) and 0 <= p < n):
        raise ValueError(f"p must be a sample index in 0..{n - 1}, got {p!r}")
    if not sol.support[p]:
        raise ValueError(f"sample {p} is not a support vector (alpha_p = 0): it has no span")
    idx = np.flatnonzero(sol.in_bound)
    idx = idx[idx != p]
    a, C = sol.alpha[idx], sol.upper[idx]
    same = sol.y[idx] == sol.y[p]
    ap = sol.alpha[p]
    lo = np.where(same, -a, a - C) / ap
    hi = np.where(same, C - a, a) / ap
    return idx, lo, hi


def _box_qp_clarabel(
    Kq: np.ndarray, k: np.ndarray, lo: np.ndarray, hi: np.ndarray, tol: float
) -> np.ndarray | None:
    """``argmin lambda^T Kq lambda - 2 k^T lambda`` s.t. ``1^T lambda = 1``, ``lo <= lambda <= hi``.

    Solved with clarabel; None when clarabel declares the problem infeasible.
    """
    import clarabel

    m = k.shape[0]
    P = sp.triu(sp.csc_matrix(2.0 * Kq), format="csc")
    eye = sp.eye(m, format="csc")
    A = sp.vstack([sp.csc_matrix(np.ones((1, m))), eye, -eye], format="csc")
    b = np.concatenate([[1.0], hi, -lo])
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = tol
    settings.tol_feas = tol
    settings.max_iter = 500
    cones = [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(m), clarabel.NonnegativeConeT(m)]
    out = clarabel.DefaultSolver(P, -2.0 * k, A, b, cones, settings).solve()
    status = str(out.status)
    if "Infeasible" in status:
        return None
    lam = np.asarray(out.x, dtype=float)
    if not np.all(np.isfinite(lam)):  # pragma: no cover - clarabel numerical failure
        raise RuntimeError(f"clarabel failed on a span QP: {status}")
    if "Solved" not in status:
        warnings.warn(
            f"span QP: clarabel stopped with status {status}",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
    return np.clip(lam, lo, hi)


def box_constrained_spans(
    sol: DualSolution,
    K: np.ndarray,
    indices: np.ndarray | None = None,
    *,
    shortcut: bool = True,
    tol: float = 1e-10,
) -> np.ndarray:
    """Squared spans with the box constraints kept (Weighted span eq. (28)-(32)), by QP.

    For each support vector ``p``::

        S_p^2 = min_lambda || Phi(x_p) - sum_{i in I, i != p} lambda_i Phi(x_i) ||^2
                s.t. sum lambda_i = 1,  lo_i <= lambda_i <= hi_i    (box of :func:`span_box`)

    a QP in ``n*`` (or ``n* - 1``) variables solved with clarabel.  ``Lambda_p`` is empty
    -- the span undefined, reported as ``inf`` -- exactly when ``sum lo > 1`` or
    ``sum hi < 1``; for in-bound ``p`` that is Lemma 1's condition (eq. (25)) failing.

    Parameters
    ----------
    sol : DualSolution
        Hinge-loss SVM from :func:`svmtune.svm.fit_l1_svm`.
    K : ndarray (n, n)
        Training kernel matrix.
    indices : array of int, optional
        Support vectors whose spans are wanted (default: all support vectors).
    shortcut : bool
        When the minimiser without box constraints (the closed form of
        :func:`span_rule_spans`) already lies in the box, it is the constrained minimiser too
        and no QP is solved.  ``False`` sends every span through clarabel.
    tol : float
        clarabel's gap and feasibility tolerances.

    Returns
    -------
    ndarray of shape (len(indices),)
        ``S_p^2`` aligned with ``indices``; ``inf`` where ``Lambda_p`` is empty.
    """
    K = _check(sol, K)
    idx = sol.support_indices if indices is None else np.asarray(indices, dtype=int).ravel()
    n = sol.y.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(
            f"indices must be sample indices in 0..{n - 1}, got values {idx.min()}..{idx.max()}"
        )
    out = np.empty(idx.shape[0])
    I = np.flatnonzero(sol.in_bound)
    pos = {int(i): j for j, i in enumerate(I)}
    Minv = None
    fac = None
    if shortcut and I.size:
        fac = ExtendedFactor.from_H(K[np.ix_(I, I)])
        if I.size > 1:
            Minv = fac.inverse()
    for j, p in enumerate(idx):
        p = int(p)
        Ip, lo, hi = span_box(sol, p)
        if Ip.size == 0:
            out[j] = np.inf
            continue
        slack = 1e-12 * max(1.0, float(np.abs(hi).sum() + np.abs(lo).sum()))
        if lo.sum() > 1.0 + slack or hi.sum() < 1.0 - slack:
            out[j] = np.inf
            continue
        k = K[Ip, p]
        Kq = K[np.ix_(Ip, Ip)]
        lam = None
        if fac is not None:
            if p in pos:
                if Minv is not None:
                    col = Minv[: I.size, pos[p]]
                    lam = -col[I != p] / col[pos[p]]
            else:
                lam, _ = fac.solve(k, 1.0)
            if lam is not None and not (np.all(lam >= lo - 1e-12) and np.all(lam <= hi + 1e-12)):
                lam = None
        if lam is None:
            lam = _box_qp_clarabel(Kq, k, lo, hi, tol)
            if lam is None:
                out[j] = np.inf
                continue
        val = K[p, p] - 2.0 * k @ lam + lam @ Kq @ lam
        out[j] = max(float(val), 0.0)
    return out


# ---------------------------------------------------------------------------------------------
# Lemma 1
# ---------------------------------------------------------------------------------------------
def lemma1_lhs(sol: DualSolution) -> np.ndarray:
    """Left-hand side of Lemma 1's condition (Weighted span eq. (25)) per sample.

    ``sum_{i in I, i != p, y_i = y_p} C_i + y_p sum_{i bounded} y_i C_i`` for every in-bound
    support vector ``p``; 0 for the other samples (the lemma is about in-bound SVs).
    """
    _check_l1(sol)
    y, C = sol.y, sol.upper
    I, B = sol.in_bound, sol.bounded
    same_class_inbound = {c: float(C[I & (y == c)].sum()) for c in (-1.0, 1.0)}
    bounded_signed = float((y[B] * C[B]).sum())
    out = np.zeros(y.shape[0])
    for c in (-1.0, 1.0):
        sel = I & (y == c)
        out[sel] = same_class_inbound[c] - C[sel] + c * bounded_signed
    return out


def lemma1_condition(sol: DualSolution, *, rtol: float = 1e-10) -> np.ndarray:
    """Lemma 1 (Weighted span eq. (25)): is ``Lambda_p`` non-empty, per in-bound SV ``p``?

    Returns a boolean array over all samples: True for the in-bound support vectors whose
    condition holds (up to ``rtol`` times the total penalty of the support vectors, for the
    round-off in ``sum y_i alpha_i = 0``), False for in-bound ones where it fails and for
    every sample that is not an in-bound support vector.
    """
    lhs = lemma1_lhs(sol)
    scale = float(sol.upper[sol.support].sum()) if sol.support.any() else 1.0
    return sol.in_bound & (lhs >= -rtol * scale)


def n_empty_spans(sol: DualSolution) -> int:
    """``k`` of Theorem 1: in-bound support vectors with ``Lambda_p`` empty (eq. (25) fails)."""
    return int(np.sum(sol.in_bound & ~lemma1_condition(sol)))


# ---------------------------------------------------------------------------------------------
# Span-rule (Theorem 2, Corollary 1)
# ---------------------------------------------------------------------------------------------
def span_rule_loo_decision(
    sol: DualSolution, K: np.ndarray, *, spans: np.ndarray | None = None
) -> np.ndarray:
    """Leave-one-out decision values ``f^p(x_p)`` predicted by the span (Theorem 2, eq. (35)).

    ``y_p (f^0(x_p) - f^p(x_p)) = alpha_p S_p^2``, so ``f^p(x_p) = f^0(x_p) -
    y_p alpha_p S_p^2`` for every support vector; a non-support vector keeps ``f^0(x_p)``
    (removing it leaves the solution unchanged).  Exact when the in-bound and bounded sets
    do not change when ``p`` is left out.  Support vectors with an undefined span get
    ``-y_p * inf`` (counted as leave-one-out errors).

    Parameters
    ----------
    spans : ndarray (n,), optional
        Squared spans from :func:`span_rule_spans` (computed when omitted).
    """
    K = _check(sol, K)
    S2 = span_rule_spans(sol, K) if spans is None else _check_spans(spans, sol.y.shape[0])
    f = sol.decision_function(K)
    sv = sol.support
    out = f.copy()
    out[sv] = f[sv] - sol.y[sv] * sol.alpha[sv] * S2[sv]
    return out


def estimate_span_rule(
    sol: DualSolution, K: np.ndarray, *, spans: np.ndarray | None = None
) -> float:
    """Span-rule estimate of the leave-one-out error (Weighted span Corollary 1, eq. (37)).

    ``t_l = (1/l) sum_{p in SV} theta(alpha_p S_p^2 - y_p f^0(x_p))`` with ``theta(t) = 1``
    for ``t >= 0``, and ``S_p`` the spans without box constraints
    (:func:`span_rule_spans`).  Equal to the leave-one-out error when the support-vector
    sets are stable (Theorem 2).  Every training sample counts once, whatever its ``C_i``;
    ``l`` is the number of samples of positive ``C_i``: a sample of weight 0 was left out of
    the fit and is left out of the count as a removed row would be.
    """
    K = _check(sol, K)
    S2 = span_rule_spans(sol, K) if spans is None else _check_spans(spans, sol.y.shape[0])
    sv = sol.support
    f = sol.decision_function(K)
    with np.errstate(invalid="ignore"):
        t = sol.alpha[sv] * S2[sv] - sol.y[sv] * f[sv]
    return float(np.sum(t >= 0) / _n_trained(sol))


# ---------------------------------------------------------------------------------------------
# Span bound (Theorem 1)
# ---------------------------------------------------------------------------------------------
def span_bound_value(
    spans_inbound: np.ndarray,
    alpha_inbound: np.ndarray,
    C_inbound: np.ndarray,
    D: float,
    m: int,
    l: int,
) -> float:
    """Theorem 1's bound from its ingredients (Weighted span Theorem 1, eq. (66)-(67)).

    ``(S sum_{p: Lambda_p != empty} max(D, 1/sqrt(C_p)) alpha_p + k + m) / l`` with
    ``S = max S_p`` over the in-bound SVs with non-empty ``Lambda_p`` (eq. (33)) and ``k``
    the in-bound SVs with empty ``Lambda_p``.

    Parameters
    ----------
    spans_inbound : ndarray
        Squared box-constrained spans of the in-bound SVs, ``inf`` where ``Lambda_p`` is empty.
    alpha_inbound, C_inbound : ndarray
        Their ``alpha_p`` and ``C_p``.
    D : float
        Diameter of the smallest sphere enclosing the training set in feature space.
    m : int
        Number of bounded support vectors.
    l : int
        Training set size.

    Raises
    ------
    ValueError
        If the arrays differ in length, a span is NaN or negative, an ``alpha_p`` is not
        finite and ``>= 0``, a ``C_p`` is not finite and positive, ``D`` is not finite and
        ``>= 0``, ``m`` is not an integer ``>= 0`` or ``l`` not a positive integer.
    """
    S2 = np.asarray(spans_inbound, dtype=float)
    a = np.asarray(alpha_inbound, dtype=float)
    C = np.asarray(C_inbound, dtype=float)
    if S2.ndim != 1 or a.shape != S2.shape or C.shape != S2.shape:
        raise ValueError(
            "spans_inbound, alpha_inbound and C_inbound must be 1-D arrays of one length (one "
            f"entry per in-bound SV), got shapes {S2.shape}, {a.shape} and {C.shape}"
        )
    if not np.all(S2 >= 0):
        raise ValueError("spans_inbound must be >= 0 (inf for an empty Lambda_p), got NaN or < 0")
    if not np.all(np.isfinite(a) & (a >= 0)):
        raise ValueError("alpha_inbound must be finite and >= 0")
    if not np.all(np.isfinite(C) & (C > 0)):
        raise ValueError("C_inbound must be finite and > 0 (the penalties C_p of in-bound SVs)")
    if not (np.isfinite(D) and D >= 0):
        raise ValueError(f"D must be a non-negative finite diameter, got {D}")
    if not (int(m) == m and m >= 0):
        raise ValueError(f"m (bounded support vectors) must be an integer >= 0, got {m}")
    if not (int(l) == l and l >= 1):
        raise ValueError(f"l (training set size) must be a positive integer, got {l}")
    ok = np.isfinite(S2)
    k = int(np.sum(~ok))
    if ok.any():
        S = float(np.sqrt(S2[ok].max()))
        total = S * float(np.sum(np.maximum(D, 1.0 / np.sqrt(C[ok])) * a[ok]))
    else:
        total = 0.0
    return (total + k + int(m)) / int(l)


def enclosing_diameter(K: np.ndarray) -> float:
    """Diameter ``D = 2R`` of the smallest sphere enclosing the training set in feature space.

    ``R^2`` from :func:`svmtune.loo.sphere.min_enclosing_ball` (the ``D`` of Weighted span
    Lemma 2 and Theorem 1).
    """
    from svmtune.loo.sphere import min_enclosing_ball

    R2, _ = min_enclosing_ball(K)
    return 2.0 * float(np.sqrt(max(R2, 0.0)))


def estimate_span_bound(
    sol: DualSolution,
    K: np.ndarray,
    *,
    D: float | None = None,
    spans: np.ndarray | None = None,
) -> float:
    """Span bound of the leave-one-out error (Weighted span Theorem 1).

    The ``m`` bounded SVs and the ``k`` in-bound SVs with empty ``Lambda_p`` (Lemma 1) count
    as errors; each other in-bound SV contributes ``S max(D, 1/sqrt(C_p)) alpha_p``, with the
    box-constrained spans of :func:`box_constrained_spans`.  The value can exceed 1.  ``l``
    and the training set are the samples of positive ``C_i`` (a sample of weight 0 is a
    removed row).

    Parameters
    ----------
    D : float, optional
        Diameter of the smallest sphere enclosing the training set in feature space; by
        default ``2 R`` from :func:`svmtune.loo.sphere.min_enclosing_ball` on the samples of
        positive ``C_i``.
    spans : ndarray, optional
        Box-constrained squared spans of the in-bound SVs (in the order of
        ``np.flatnonzero(sol.in_bound)``).
    """
    K = _check(sol, K)
    I = np.flatnonzero(sol.in_bound)
    if spans is None:
        spans = box_constrained_spans(sol, K, I)
    spans = np.asarray(spans, dtype=float)
    if spans.shape != I.shape:
        raise ValueError(f"spans must hold one value per in-bound SV ({I.size}), got {spans.shape}")
    if D is None:
        keep = _trained(sol)
        D = enclosing_diameter(K if keep is None else K[np.ix_(keep, keep)])
    if not (np.isfinite(D) and D >= 0):
        raise ValueError(f"D must be a non-negative finite diameter, got {D}")
    return span_bound_value(
        spans, sol.alpha[I], sol.upper[I], float(D), int(sol.bounded.sum()), _n_trained(sol)
    )


# ---------------------------------------------------------------------------------------------
# xi-alpha bound (eq. (21))
# ---------------------------------------------------------------------------------------------
def xi_alpha_radius2(K: np.ndarray) -> float:
    """``R_Delta^2`` of the xi-alpha bound: the smallest ``R`` with ``c <= K_ij <= c + R^2``.

    Over the training kernel matrix, ``R_Delta^2 = max K_ij - min K_ij`` (Weighted span
    eq. (21); Joachims 2000).

    Raises
    ------
    ValueError
        If ``K`` is not a non-empty square matrix of finite values.
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.size == 0:
        raise ValueError(f"K must be a non-empty square kernel matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("K contains NaN or infinite entries")
    return float(K.max() - K.min())


def estimate_xi_alpha(
    sol: DualSolution, K: np.ndarray, *, rho: float = 2.0, r2_delta: float | None = None
) -> float:
    """The xi-alpha bound of the weighted SVM (Weighted span eq. (21); Yang et al. 2015).

    ``(1/l) sum_p theta(rho alpha_p R_Delta^2 + xi_p - 1)`` with ``rho = 2``,
    ``xi_p = max(0, 1 - y_p f(x_p))`` the slacks and ``theta(t) = 1`` for ``t >= 0``.  The
    sum and ``l`` run over the samples of positive ``C_i`` (a sample of weight 0 is a
    removed row).

    Parameters
    ----------
    rho : float
        Joachims' constant (2 for the SVM with threshold ``b``).
    r2_delta : float, optional
        ``R_Delta^2`` (default :func:`xi_alpha_radius2` of ``K`` on the samples of positive
        ``C_i``).
    """
    K = _check(sol, K)
    if not (np.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be positive, got {rho}")
    keep = _trained(sol)
    if r2_delta is not None:
        R2 = float(r2_delta)
        if not (np.isfinite(R2) and R2 >= 0):
            raise ValueError(
                f"r2_delta must be a finite R_Delta^2 >= 0 (max K_ij - min K_ij), got {r2_delta}"
            )
    else:
        R2 = xi_alpha_radius2(K if keep is None else K[np.ix_(keep, keep)])
    xi = np.maximum(0.0, 1.0 - sol.y * sol.decision_function(K))
    t = rho * sol.alpha * R2 + xi - 1.0
    return float(np.mean(t >= 0 if keep is None else t[keep] >= 0))


# ---------------------------------------------------------------------------------------------
# K-fold cross-validation
# ---------------------------------------------------------------------------------------------
def estimate_kfold_cv(
    sol: DualSolution,
    K: np.ndarray,
    *,
    X: np.ndarray,
    params: dict[str, Any],
    n_splits: int = 5,
    folds: list[tuple] | None = None,
    random_state=None,
    n_jobs: int | None = None,
    check_kernel: bool = True,
) -> float:
    """K-fold cross-validation error of the model's hyperparameters (the paper's K = 5).

    Unlike the other estimates it refits: each fold trains the weighted SVM with the same
    per-sample penalties ``C_i`` (``sol.upper``) on the other folds, through the shared CV
    path :func:`svmtune.search.cv.cv_errors` (stratified folds of
    :func:`svmtune.search.cv.make_folds`).  The features ``X`` and the kernel ``params``
    (``best_params_`` style: kernel, sigma/gamma, C) are therefore needed; ``K`` must be the
    kernel matrix of ``X`` under ``params`` (checked when ``check_kernel``).  Any
    ``class_weight`` in ``params`` is ignored: ``sol.upper / C`` already holds every
    per-sample multiplier.
    """
    from svmtune.kernels import Kernel
    from svmtune.search.cv import cv_errors, make_folds

    K = _check(sol, K)
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] != sol.y.shape[0]:
        raise ValueError(f"X must have one row per training sample ({sol.y.shape[0]})")
    if "C" not in params:
        raise ValueError("params must contain the penalty 'C' the model was trained with")
    C = float(params["C"])
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"params['C'] must be positive, got {C}")
    cand = {k: v for k, v in params.items() if k != "class_weight"}
    if check_kernel:
        Kx = Kernel.from_params(cand)(X)
        if not np.allclose(Kx, K, rtol=1e-8, atol=1e-10):
            raise ValueError("K is not the kernel matrix of X under params; pass matching ones")
    y01 = (sol.y > 0).astype(int)
    w = sol.upper / C
    if folds is None and not (isinstance(n_splits, (int, np.integer)) and n_splits >= 2):
        raise ValueError(
            f"n_splits must be an integer >= 2 (K-fold needs two folds), got {n_splits!r}"
        )
    if folds is None:
        folds = make_folds(y01, n_splits, random_state, w)
    err = cv_errors(X, y01, [cand], folds=folds, sample_weight=w, n_jobs=n_jobs)
    return float(err[0])


#: Name -> estimate function; every one is ``f(sol, K, **options) -> float``.
ESTIMATES: dict[str, Callable[..., float]] = {
    "span_rule": estimate_span_rule,
    "span_bound": estimate_span_bound,
    "xi_alpha": estimate_xi_alpha,
    "kfold_cv": estimate_kfold_cv,
}


# ---------------------------------------------------------------------------------------------
# Paper-reproduction helpers (Tables 4-5, Fig. 2-6)
# ---------------------------------------------------------------------------------------------
def holdout_error(sol: DualSolution, K_test_train: np.ndarray, y_test: np.ndarray) -> float:
    """Error rate of the trained model on test data (labels in {-1, +1}).

    The "actual test error" the paper's predictions are compared with (Table 4, Fig. 2-4);
    a zero decision value counts as the negative class, as in libsvm.
    """
    if not isinstance(sol, DualSolution):
        raise TypeError(f"expected a DualSolution, got {type(sol)}")
    y = check_pm1(np.ravel(y_test), name="y_test")
    Kt = np.asarray(K_test_train, dtype=float)
    n = sol.y.shape[0]
    if Kt.ndim != 2 or Kt.shape[1] != n:
        raise ValueError(
            f"K_test_train has shape {Kt.shape}; expected (n_test, {n}), one column per "
            "training sample"
        )
    if not np.all(np.isfinite(Kt)):
        raise ValueError("K_test_train contains NaN or infinite entries")
    f = sol.decision_function(K_test_train)
    if f.shape != y.shape:
        raise ValueError(f"K_test_train has {f.shape[0]} rows but y_test has {y.shape[0]} labels")
    return float(np.mean(np.where(f > 0, 1.0, -1.0) != y))


def prediction_rmse(predicted, actual) -> float:
    """Root-mean-square difference between predicted and actual test errors (Table 4)."""
    p = np.asarray(predicted, dtype=float).ravel()
    a = np.asarray(actual, dtype=float).ravel()
    if p.shape != a.shape or p.size == 0:
        raise ValueError("predicted and actual must be non-empty and of equal length")
    return float(np.sqrt(np.mean((p - a) ** 2)))


def worst_case_at_minimum(predicted, actual) -> float:
    """Test error of the model a prediction rule selects, ties resolved pessimistically.

    Weighted span Tables 2-3: "if the minimum of a prediction rule is encountered more than
    once, the worst case outcome is reported" -- the largest ``actual`` among the models
    where ``predicted`` is minimal.
    """
    p = np.asarray(predicted, dtype=float).ravel()
    a = np.asarray(actual, dtype=float).ravel()
    if p.shape != a.shape or p.size == 0:
        raise ValueError("predicted and actual must be non-empty and of equal length")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(a))):
        raise ValueError("predicted and actual contain NaN or infinity; drop those models")
    return float(a[p == p.min()].max())


def best_slices(actual: np.ndarray, *predicted: np.ndarray) -> list[tuple[np.ndarray, ...]]:
    """1-D curves through the grid model with the smallest actual test error (Fig. 2-4).

    Weighted span Fig. 2-4 plot, for each training parameter, the test error and the
    predictions along that parameter with the other parameters fixed at the model of minimum
    actual test error.

    Parameters
    ----------
    actual : ndarray
        Actual test errors on the parameter grid (one axis per parameter).
    *predicted : ndarray
        Predictions on the same grid (span-rule, CV, xi-alpha, ...).

    Returns
    -------
    list of tuples
        For each axis ``a``: ``(actual_slice, predicted_1_slice, ...)`` along ``a``.
    """
    A = np.asarray(actual, dtype=float)
    P = [np.asarray(p, dtype=float) for p in predicted]
    if any(p.shape != A.shape for p in P):
        raise ValueError("every prediction grid must have the shape of the actual-error grid")
    best = np.unravel_index(int(np.argmin(A)), A.shape)
    out = []
    for axis in range(A.ndim):
        sl = tuple(slice(None) if k == axis else best[k] for k in range(A.ndim))
        out.append((A[sl],) + tuple(p[sl] for p in P))
    return out


def lemma1_statistics(n_empty, n_inbound, n_sv) -> dict[str, float]:
    """Table 5's columns over a set of models: mean and std of ``k``, ``n*`` and ``n``.

    Parameters are per-model counts (e.g. the ``n_empty``, ``n_inbound`` and ``n_sv``
    entries of a :class:`svmtune.methods.span_rule.SpanRule` selection's history).
    """
    out: dict[str, float] = {}
    for name, v in (("empty", n_empty), ("inbound", n_inbound), ("sv", n_sv)):
        a = np.asarray(v, dtype=float).ravel()
        if a.size == 0:
            raise ValueError("lemma1_statistics needs the counts of at least one model")
        out[f"{name}_mean"] = float(a.mean())
        out[f"{name}_std"] = float(a.std())
    return out


def make_ringnorm(
    n: int, d: int, *, p_positive: float = 0.3, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic data of Weighted span Section 6.7 (their variant of Breiman's ringnorm).

    Class +1 (prior ``p_positive`` = 0.3) ~ ``N(1_d, I)``; class -1 (prior 0.7) ~
    ``N(0, 4 I)``.  The class of each sample is drawn from the priors.

    Returns
    -------
    X : ndarray (n, d)
    y : ndarray (n,) of {-1, +1}
    """
    from sklearn.utils import check_random_state

    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n}")
    if int(d) != d or d < 1:
        raise ValueError(f"d must be a positive integer, got {d}")
    if not 0.0 < p_positive < 1.0:
        raise ValueError(f"p_positive must be in (0, 1), got {p_positive}")
    rng = check_random_state(random_state)
    y = np.where(rng.random_sample(int(n)) < p_positive, 1.0, -1.0)
    Z = rng.standard_normal((int(n), int(d)))
    X = np.where(y[:, None] > 0, 1.0 + Z, 2.0 * Z)
    return X, y
