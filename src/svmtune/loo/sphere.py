"""Smallest sphere enclosing the training points in feature space.

The radius ``R`` of the smallest ball containing ``Phi(x_1), ..., Phi(x_n)`` enters the
radius-margin bound ``T = R^2 ||w||^2`` (Chapelle, Vapnik, Bousquet & Mukherjee, "Choosing
multiple parameters for support vector machines", Machine Learning 46, 2002, hereafter
Chapelle et al. 2002; RBSVM eq. (8)) and the span bound of the weighted SVM (Weighted span,
where ``D = 2R``).
``R^2`` is the optimum of the quadratic program over the simplex (Chapelle et al. 2002,
radius-margin section; Vapnik 1998)

    R^2 = max_beta  sum_i beta_i K_ii - beta^T K beta,   beta_i >= 0,  sum_i beta_i = 1,

whose solution gives the centre ``c = sum_i beta_i Phi(x_i)``.  On the support set
``S = {i : beta_i > 0}`` (the points on the sphere) the KKT conditions are the linear system

    [[2 K_SS, 1], [1^T, 0]] [beta_S; mu] = [diag(K)_S; 1],

with ``R^2 = mu + beta^T K beta``, and every other point must lie inside the ball,
``||Phi(x_i) - c||^2 = K_ii - 2 (K beta)_i + beta^T K beta <= R^2``.  :func:`enclosing_ball`
finds ``S`` with the same primal-dual active-set (semismooth Newton) iteration that
:func:`svmtune.svm.fit_l2_svm` uses for the SVM, warm-started from a previous support set;
when ``K_SS`` is singular (linear kernel, duplicated points, ``sigma -> inf``) and the
iteration cannot settle, it falls back to the interior-point QP solver clarabel and then
polishes clarabel's support set with the exact Newton step.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from svmtune._warnings import user_stacklevel

__all__ = [
    "BallSolution",
    "Direction",
    "check_ridge",
    "clarabel_simplex_weights",
    "direction_block",
    "direction_diagonal",
    "enclosing_ball",
    "min_enclosing_ball",
    "radius2_derivative",
]


@dataclass
class BallSolution:
    """The smallest enclosing ball of a kernel matrix.

    Attributes
    ----------
    R2 : float
        Squared radius.
    beta : ndarray of shape (n,)
        Simplex weights of the centre ``c = sum_i beta_i Phi(x_i)``.
    support : ndarray of bool
        Points on the sphere (``beta_i > 0``), reusable as ``init_support`` of the next call.
    n_iter : int
        Active-set iterations.
    method : {"newton", "clarabel", "trivial"}
        How the solution was obtained.
    """

    R2: float
    beta: np.ndarray
    support: np.ndarray
    n_iter: int
    method: str


def _solve_kkt(
    K: np.ndarray, r: np.ndarray, k: np.ndarray, S: np.ndarray
) -> tuple[np.ndarray, float] | None:
    """Solve ``[[2 (K + diag r)_SS, 1], [1^T, 0]] [b; mu] = [k_S; 1]``; None if singular.

    Through the Cholesky factor of ``K_SS`` (Schur complement on the multiplier) when
    ``K_SS`` is positive definite, otherwise through a least-squares solve of the whole
    extended system, accepted only if its residual is at round-off level.
    """
    Kss = K[np.ix_(S, S)]
    Kss[np.diag_indices_from(Kss)] += r[S]
    kS = k[S]
    m = S.shape[0]
    ones = np.ones(m)
    try:
        cf = sla.cho_factor(Kss, lower=True, check_finite=False)
        diag = np.diag(cf[0])
        if diag.min() > 1e-7 * max(diag.max(), 1e-300):
            a = sla.cho_solve(cf, kS, check_finite=False)
            u = sla.cho_solve(cf, ones, check_finite=False)
            s = ones @ u
            if s > 0 and np.isfinite(s):
                # 2 K b + mu 1 = k, 1^T b = 1  =>  b = (a - mu u) / 2, mu = (1^T a - 2) / s
                mu = (ones @ a - 2.0) / s
                return 0.5 * (a - mu * u), float(mu)
    except np.linalg.LinAlgError:
        pass
    M = np.zeros((m + 1, m + 1))
    M[:m, :m] = 2.0 * Kss
    M[:m, m] = M[m, :m] = 1.0
    rhs = np.append(kS, 1.0)
    sol, *_ = sla.lstsq(M, rhs, check_finite=False, cond=1e-13)
    scale = max(1.0, float(np.abs(rhs).max()), float(np.abs(M).max()))
    if np.abs(M @ sol - rhs).max() > 1e-9 * scale * max(1.0, float(np.abs(sol).max())):
        return None
    return sol[:m], float(sol[m])


def _kkt_ok(
    K: np.ndarray, r: np.ndarray, k: np.ndarray, S: np.ndarray, b: np.ndarray, mu: float, tol: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """Negative weights in ``S`` and points outside the ball; also returns ``R^2``."""
    Kb = K[:, S] @ b
    Kb[S] += r[S] * b
    bKb = float(b @ Kb[S])
    R2 = mu + bKb
    outside = k - 2.0 * Kb + bKb - R2  # squared distance to the centre minus R^2
    neg = b < -tol
    return neg, outside, R2


def clarabel_simplex_weights(
    P, q: np.ndarray, A, rhs: np.ndarray, n_zero: int, n: int, tol: float
) -> np.ndarray:
    """The ball weights ``beta`` (the first ``n`` variables) of a clarabel QP
    ``min 1/2 x^T P x + q^T x`` s.t. ``A x + s = rhs`` with the first ``n_zero`` rows equalities
    and the last ``n`` rows ``beta >= 0``; clipped at 0 and renormalised onto the simplex."""
    import clarabel

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = min(1e-10, tol)
    settings.tol_feas = min(1e-10, tol)
    settings.max_iter = 500
    cones = [clarabel.ZeroConeT(n_zero), clarabel.NonnegativeConeT(n)]
    out = clarabel.DefaultSolver(P, q, A, rhs, cones, settings).solve()
    b = np.maximum(np.asarray(out.x, dtype=float)[:n], 0.0)
    total = b.sum()
    if not (np.all(np.isfinite(b)) and total > 0):  # pragma: no cover - clarabel failure
        raise RuntimeError(f"clarabel failed on the enclosing-ball QP: {out.status}")
    return b / total


def _clarabel_ball(K: np.ndarray, k: np.ndarray, tol: float) -> np.ndarray:
    """Solve the ball QP with clarabel: ``min b^T K b - k^T b``, ``b >= 0``, ``1^T b = 1``."""
    n = k.shape[0]
    P = sp.triu(sp.csc_matrix(2.0 * K), format="csc")
    A = sp.vstack([sp.csc_matrix(np.ones((1, n))), -sp.eye(n, format="csc")], format="csc")
    rhs = np.concatenate([[1.0], np.zeros(n)])
    return clarabel_simplex_weights(P, -k, A, rhs, 1, n, tol)


#: default tolerance and active-set iterations of :func:`enclosing_ball`
BALL_TOL = 1e-10
BALL_MAX_ITER = 100


def _check_direction(direction: Direction, n: int | None) -> None:
    """Raise a ``ValueError`` unless an array direction is ``(n, n)`` or ``(n,)`` (callables
    are checked block by block in :func:`direction_block`)."""
    if n is None or callable(direction):
        return
    shape = np.shape(direction)
    if shape not in ((n, n), (n,)):
        raise ValueError(
            f"a direction (derivative of the kernel matrix) has shape {shape}; expected "
            f"({n}, {n}) for a matrix or ({n},) for a diagonal direction"
        )


def _check_init_support(init_support, n: int) -> None:
    """Raise a ``ValueError`` unless ``init_support`` is a bool mask of length ``n`` or
    indices in ``0..n-1``."""
    s = np.asarray(init_support)
    if s.dtype == bool:
        if s.shape != (n,):
            raise ValueError(
                f"init_support is a bool mask of shape {s.shape}; expected ({n},), one entry "
                "per point"
            )
        return
    if s.size and (s.dtype.kind not in "iu" or s.ndim != 1 or s.min() < 0 or s.max() >= n):
        raise ValueError(
            f"init_support must be a bool mask of length {n} or indices in 0..{n - 1}, got "
            f"{s.dtype} values of shape {s.shape}"
            + (f" ranging {s.min()}..{s.max()}" if s.dtype.kind in "iuf" and s.ndim == 1 else "")
        )


def check_ridge(ridge: np.ndarray | None, n: int) -> np.ndarray:
    """The ball's ridge as ``n`` finite non-negative numbers (zeros when None)."""
    if ridge is None:
        return np.zeros(n)
    r = np.asarray(ridge, dtype=float)
    if r.shape != (n,) or not np.all(np.isfinite(r)) or np.any(r < 0):
        raise ValueError(f"ridge must be {n} finite non-negative numbers")
    return r


def enclosing_ball(
    K: np.ndarray,
    *,
    ridge: np.ndarray | None = None,
    init_support: np.ndarray | None = None,
    tol: float = BALL_TOL,
    max_iter: int = BALL_MAX_ITER,
) -> BallSolution:
    """Smallest ball enclosing the points of kernel matrix ``K`` in feature space.

    Solves ``max sum_i beta_i K_ii - beta^T K beta`` over the simplex (Chapelle et al. 2002)
    by a primal-dual active-set iteration on the KKT system
    ``[[2 K_SS, 1], [1^T, 0]] [beta_S; mu] = [diag(K)_S; 1]``: drop points with
    ``beta_i < 0``, add points outside the ball, until neither exists.  If the iteration
    cycles or ``K_SS`` is singular, clarabel solves the QP and the exact step is re-run from
    clarabel's support set.

    Parameters
    ----------
    K : ndarray (n, n)
        Symmetric positive semi-definite kernel matrix.
    ridge : ndarray (n,), optional
        Non-negative diagonal added to ``K``: the ball of ``K + diag(ridge)`` (the L2-SVM's
        ``K~ = K + diag(1 / (C w))``) without forming that matrix.
    init_support : bool mask or index array, optional
        Starting support set (warm start, e.g. ``previous.support``); default all points.
    tol : float
        Tolerance, relative to ``max_i K_ii``, on ``beta_i >= 0`` and on the squared
        distances ``||Phi(x_i) - c||^2 <= R^2``.
    max_iter : int
        Active-set iterations before the clarabel fallback.

    Returns
    -------
    BallSolution
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("K contains NaN or infinite entries")
    n = K.shape[0]
    if n == 0:
        raise ValueError("the enclosing ball needs at least one point")
    kmax = float(np.abs(K).max())
    if float(np.max(np.abs(K - K.T))) > 1e-8 * kmax:
        raise ValueError(
            "K is not symmetric (K != K.T beyond round-off); pass a kernel matrix, e.g. "
            "(K + K.T) / 2 if the asymmetry is numerical noise"
        )
    if np.any(np.diag(K) < 0):
        raise ValueError(
            "K has negative diagonal entries, so it is not positive semi-definite; pass a "
            "kernel (Gram) matrix"
        )
    r = check_ridge(ridge, n)
    if init_support is not None:
        _check_init_support(init_support, n)
    return _enclosing_ball(K, r, init_support, tol, max_iter)


def _enclosing_ball(
    K: np.ndarray,
    r: np.ndarray,
    init_support=None,
    tol: float = BALL_TOL,
    max_iter: int = BALL_MAX_ITER,
) -> BallSolution:
    """:func:`enclosing_ball` on inputs already checked (``K`` a finite symmetric float
    matrix, ``r`` from :func:`check_ridge`): the step of the radius-margin search, whose
    kernel matrices are checked once per step by the caller."""
    n = K.shape[0]
    if n == 1:
        return BallSolution(0.0, np.ones(1), np.ones(1, dtype=bool), 0, "trivial")
    k = np.diag(K) + r
    scale = max(float(np.abs(k).max()), 1e-300)
    atol = tol * scale

    if init_support is None:
        S_mask = np.ones(n, dtype=bool)
    else:
        S_mask = np.zeros(n, dtype=bool)
        S_mask[np.asarray(init_support)] = True
        if not S_mask.any():
            S_mask[:] = True

    seen: set[bytes] = set()
    for it in range(1, max_iter + 1):
        S = np.flatnonzero(S_mask)
        res = _solve_kkt(K, r, k, S)
        if res is None:
            break
        b, mu = res
        neg, outside, R2 = _kkt_ok(K, r, k, S, b, mu, tol)
        viol = ~S_mask & (outside > atol)
        if not neg.any() and not viol.any():
            beta = np.zeros(n)
            beta[S] = np.maximum(b, 0.0)
            beta /= beta.sum()
            return BallSolution(max(float(R2), 0.0), beta, beta > 0, it, "newton")
        key = S_mask.tobytes()
        if key in seen:
            break
        seen.add(key)
        new = S_mask.copy()
        new[S[neg]] = False
        new |= viol
        if not new.any():
            break
        S_mask = new

    # Fallback: interior point, then polish with the exact step from its support set.
    Kr = K + np.diag(r)
    beta = _clarabel_ball(Kr, k, tol)
    thr = 1e-7 * beta.max()
    S = np.flatnonzero(beta > thr)
    res = _solve_kkt(K, r, k, S)
    if res is not None:
        b, mu = res
        neg, outside, R2 = _kkt_ok(K, r, k, S, b, mu, tol)
        mask = np.zeros(n, dtype=bool)
        mask[S] = True
        if not neg.any() and not (~mask & (outside > 10 * atol)).any():
            beta = np.zeros(n)
            beta[S] = np.maximum(b, 0.0)
            beta /= beta.sum()
            return BallSolution(max(float(R2), 0.0), beta, beta > 0, max_iter, "clarabel")
    R2 = float(k @ beta - beta @ Kr @ beta)
    if R2 < 0.0:
        warnings.warn(
            f"enclosing ball: negative R^2 = {R2:.2e} from round-off; clipped to 0",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
    return BallSolution(max(R2, 0.0), beta, beta > thr, max_iter, "clarabel")


def min_enclosing_ball(
    K: np.ndarray,
    *,
    ridge: np.ndarray | None = None,
    init_support: np.ndarray | None = None,
    tol: float = 1e-10,
) -> tuple[float, np.ndarray]:
    """Squared radius and centre weights of the smallest ball enclosing the points of ``K``.

    ``R^2 = max_{beta >= 0, sum beta = 1} sum_i beta_i K_ii - beta^T K beta``
    (Chapelle et al. 2002); see :func:`enclosing_ball` for the solver.

    Returns
    -------
    R2 : float
    beta : ndarray of shape (n,)
    """
    sol = enclosing_ball(K, ridge=ridge, init_support=init_support, tol=tol)
    return sol.R2, sol.beta


#: A derivative of a kernel matrix along one hyperparameter: the full (n, n) matrix, an (n,)
#: vector for a purely diagonal direction, or a callable ``block(I) -> (len(I), len(I))``
#: returning the sub-matrix on the sorted indices ``I`` (so that only the blocks a criterion
#: reads, e.g. the support set's, are computed).
Direction = np.ndarray | Callable[[np.ndarray], np.ndarray]


def direction_block(direction: Direction, I: np.ndarray) -> np.ndarray:
    """The ``I x I`` block of a kernel-matrix direction (see :data:`Direction`)."""
    I = np.asarray(I)
    if callable(direction):
        out = np.asarray(direction(I), dtype=float)
        if out.shape != (I.size, I.size):
            raise ValueError(
                f"direction block for {I.size} indices has shape {out.shape}, "
                f"expected ({I.size}, {I.size})"
            )
        return out
    D = np.asarray(direction, dtype=float)
    if D.ndim == 1:
        return np.diag(D[I])
    return D[np.ix_(I, I)]


def direction_diagonal(direction: Direction, I: np.ndarray) -> np.ndarray:
    """The diagonal entries ``(i, i)``, ``i in I``, of a kernel-matrix direction."""
    if not callable(direction):
        D = np.asarray(direction, dtype=float)
        if D.ndim == 1:
            return D[np.asarray(I)]
    return np.diag(direction_block(direction, I)).copy()


def radius2_derivative(beta: np.ndarray, dK: Direction) -> float:
    """Derivative of ``R^2`` along a kernel-matrix direction ``dK`` (envelope theorem).

    With the optimal ``beta`` held fixed (the envelope argument Chapelle et al. 2002 use for
    the gradient of the radius),

        dR^2 = sum_i beta_i dK_ii - beta^T dK beta.

    ``dK`` is a :data:`Direction`: an (n, n) matrix, an (n,) vector holding the diagonal of
    a purely diagonal direction, or a callable giving blocks (only the block on the sphere's
    support is read).

    Raises
    ------
    ValueError
        If ``beta`` is not a 1-D finite vector or an array ``dK`` does not match its length.
    """
    beta = np.asarray(beta, dtype=float)
    if beta.ndim != 1 or not np.all(np.isfinite(beta)):
        raise ValueError(
            f"beta must be the ball's finite weights, one per point (shape (n,)), got shape "
            f"{beta.shape}" + ("" if beta.ndim != 1 else " with NaN or infinity")
        )
    _check_direction(dK, beta.shape[0])
    S = np.flatnonzero(beta)
    b = beta[S]
    dss = direction_block(dK, S)
    return float(b @ np.diag(dss) - b @ dss @ b)
