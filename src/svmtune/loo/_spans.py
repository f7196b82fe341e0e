"""Spans of the support vectors of a weighted L1-SVM (Weighted span Section 4).

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

  one factorisation (:class:`svmtune._factor.ExtendedFactor`) for all of them,
  ``O(n*^3 + n n*^2)``.
* :func:`box_constrained_spans` -- with the box constraints (eq. (28)-(32)), one QP per
  support vector solved by clarabel; ``inf`` where ``Lambda_p`` is empty.
* :func:`lemma1_condition` -- Lemma 1's existence condition (eq. (25)) per in-bound SV.

The estimates built on them are in :mod:`svmtune.loo.span_rule` (the span rule) and
:mod:`svmtune.loo.span_bounds` (Theorem 1's span bound, the xi-alpha bound).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from svmtune._dual_solution import DualSolution, check_solution
from svmtune._factor import ExtendedFactor
from svmtune._kernel_matrix_checks import TRAINED, check_kernel_matrix
from svmtune._warnings import user_stacklevel

__all__ = [
    "SpanCache",
    "box_constrained_spans",
    "lemma1_condition",
    "lemma1_lhs",
    "n_empty_spans",
    "span_box",
    "span_rule_spans",
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
    return check_kernel_matrix(K, sol.y.shape[0], what=TRAINED)


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
    in-bound support vectors (factored once by :class:`svmtune._factor.ExtendedFactor`):

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
