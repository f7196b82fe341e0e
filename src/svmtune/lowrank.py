"""Low-rank (Nystroem) closed forms of the L2-SVM for large n: O(n m^2) time, O(n m) memory.

The RBF kernel matrix is replaced by its Nystroem approximation on ``m`` fixed landmarks
``X_L`` (rows of the training set),

    K~ = K_nm K_mm^{-1} K_mn = Z Z^T,     Z = K_nm R^{-1},   K_mm + jitter I = R^T R,

so that the L2-SVM matrix ``H = K~ + diag(d)``, ``d_i = 1 / (C w_i)`` (RBSVM eq. (6)-(7)), is a
diagonal plus a rank-``m`` term.  Nothing here ever forms an ``n x n`` (or support x support)
matrix:

* **Landmarks / rank rule** (:func:`pivoted_cholesky_landmarks`).  Greedy pivoted Cholesky of
  the RBF kernel at a reference width: pivot on the largest residual diagonal
  ``K_ii - K~_ii`` and stop as soon as the trace residual ``sum_i (K_ii - K~_ii)`` is at most
  ``tol * trace(K) = tol * n`` or ``m = max_rank``.  ``O(n m^2)`` time, ``O(n m)`` memory.
* **Solver** (:func:`fit_l2_svm_lowrank`).  With the explicit features ``Z`` the L2-SVM is the
  linear squared-hinge SVM ``min 1/2 |v|^2 + C/2 sum_i w_i max(0, 1 - y_i (z_i^T v + b))^2``
  whose dual is exactly the hard-margin SVM on ``H`` (RBSVM eq. (6)-(7)).  It is solved by the
  primal (semismooth) Newton method with Armijo backtracking (Keerthi & DeCoste 2005; Chapelle
  2007), ``O(n m^2)`` per iteration, finitely convergent; a Newton step with the active set
  fixed is the support-set system ``M [beta; b] = [y_S; 0]`` of RBSVM eq. (22).  The final
  ``[beta; b]`` is recomputed from that system so the closed forms below see it exactly.
* **Support-set factor** (:class:`WoodburyFactor`).  ``H_SS = Z_S Z_S^T + D_S`` is inverted
  with the Woodbury identity ``H^{-1} = D^{-1} - F F^T``, ``F = D^{-1} Z_S A^{-T/2}``,
  ``A = I + Z_S^T D^{-1} Z_S``; the extended matrix ``M = [[H_SS, 1], [1^T, 0]]`` then has
  ``(M^{-1})_SS = B = D^{-1} - E E^T`` with ``E = [F, u / sqrt(s)]``, ``u = H^{-1} 1``,
  ``s = 1^T u`` -- the same quantities as :class:`svmtune.svm.ExtendedFactor`, in
  ``O(|S| m)`` memory.
* **LOO outputs** (:func:`lowrank_loo`): RBSVM eq. (27), ``r_i = y_i - beta_i / B_ii`` on the
  support set, ``f(x_i)`` elsewhere (see :mod:`svmtune.loo.rbsvm`).
* **Objective and exact gradient** (:func:`lowrank_rbsvm_objective`): the tanh cross-entropy of
  RBSVM eq. (29)-(33) and its exact gradient for a fixed support set.  The landmarks are held
  **fixed** and the approximate kernel is differentiated exactly in ``log sigma``:

      dK~ = P G + G^T P^T - G^T Q G,   P = dK_nm, Q = dK_mm, G = (K_mm + jitter I)^{-1} K_mn,

  with ``P, Q`` from :func:`svmtune.kernels.rbf_dlogsigma`.  The gradient of
  :func:`svmtune.loo.rbsvm.loo_gradient` is the contraction ``dJ = <dK~, Gamma>`` with the
  ``n x n`` matrix ``Gamma`` (``Gamma_SS = -(B diag(g) B + v beta^T)``,
  ``Gamma_NS = c_N beta^T``, zero elsewhere); it is never formed: only the products
  ``Gamma G^T`` and ``Gamma^T G^T`` (``n x m``) are, so

      dJ/dlog sigma = <P, Gamma G^T + Gamma^T G^T> - <Q, G Gamma G^T>,
      dJ/dlog C = sum_{i in S} d_i ((B diag(g) B)_ii + v_i beta_i).

  ``J`` is the RBSVM objective *of the approximate kernel*; it is the exact method's objective
  when ``m = n`` (all points are landmarks, ``jitter = 0``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from svmtune._warnings import user_stacklevel
from svmtune.kernels import _check_points, rbf_dlogsigma, rbf_from_sqdist, squared_distances
from svmtune.loo.rbsvm import LOSSES, check_group_nonsupport, check_nonsupport, objective_terms
from svmtune.svm import ConvergenceWarning, DualSolution, _support_mask, l2_diagonal

__all__ = [
    "NystroemFactor",
    "WoodburyFactor",
    "LowRankObjective",
    "pivoted_cholesky_landmarks",
    "nystroem_factor",
    "fit_l2_svm_lowrank",
    "lowrank_loo",
    "lowrank_loo_gradient",
    "lowrank_rbsvm_objective",
    "fit_tasks_lowrank",
    "TaskSolutions",
]


# ---------------------------------------------------------------------------------------------
# Landmarks and the Nystroem factor
# ---------------------------------------------------------------------------------------------
def pivoted_cholesky_landmarks(
    X: np.ndarray, sigma: float, *, tol: float = 1e-2, max_rank: int = 500, min_rank: int = 1
) -> tuple[np.ndarray, float]:
    """Landmarks by greedy pivoted Cholesky of the RBF kernel (rank rule of the low-rank path).

    Pivots on the largest residual diagonal ``K_ii - K~_ii`` (first index on ties, so the
    result is deterministic) and stops when the trace residual ``sum_i (K_ii - K~_ii)`` is at
    most ``tol * n`` (``trace K = n`` for the RBF kernel), but not before ``min_rank`` pivots,
    or when ``max_rank`` pivots are taken.  ``O(n m d + n m^2)`` time, ``O(n m)`` memory
    (Harbrecht, Peters & Schneider 2012).

    Parameters
    ----------
    X : ndarray (n, d)
    sigma : float
        RBF width at which the kernel is factored.
    tol : float
        Relative trace-residual tolerance in (0, 1).
    max_rank : int
        Largest number of landmarks.
    min_rank : int
        Smallest number of landmarks, whatever the residual (a landmark refresh at a wider
        width keeps the previous rank, :func:`svmtune.methods._lowrank_search.landmark_search`);
        fewer only when the kernel is numerically exhausted (duplicated points).

    Returns
    -------
    (indices, relative_residual) : (ndarray of int, float)
        Landmark row indices in pivot order and the final ``trace residual / n``.

    Raises
    ------
    ValueError
        If ``X`` is not a finite, non-empty 2-D array or a parameter is out of range.
    """
    X = np.asarray(X, dtype=float)
    _check_points(X)
    n = X.shape[0]
    if n == 0:
        raise ValueError("pivoted_cholesky_landmarks needs at least one point; X is empty")
    if not (0.0 < tol < 1.0):
        raise ValueError(f"rank tolerance must lie in (0, 1), got {tol}")
    if int(max_rank) != max_rank or max_rank < 1:
        raise ValueError(f"max_rank must be a positive integer, got {max_rank}")
    if int(min_rank) != min_rank or min_rank < 1:
        raise ValueError(f"min_rank must be a positive integer, got {min_rank}")
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be positive and finite, got {sigma}")
    m_max = min(int(max_rank), n)
    L = np.zeros((n, m_max))
    resid = np.ones(n)
    piv: list[int] = []
    for k in range(m_max):
        if k >= min_rank and float(resid.sum()) <= tol * n:
            break
        j = int(np.argmax(resid))
        if resid[j] <= 1e-12:  # numerically exhausted (duplicates, sigma -> inf)
            break
        col = rbf_from_sqdist(squared_distances(X, X[j : j + 1])[:, 0], sigma)
        col -= L[:, :k] @ L[j, :k]
        L[:, k] = col / np.sqrt(resid[j])
        resid -= L[:, k] ** 2
        np.maximum(resid, 0.0, out=resid)
        resid[j] = 0.0
        piv.append(j)
    return np.asarray(piv, dtype=int), float(resid.sum()) / n


@dataclass
class NystroemFactor:
    """``K~ = Z Z^T`` on fixed landmarks, with what the exact sigma-derivative needs.

    Attributes
    ----------
    Z : ndarray (n, m)
        ``K_nm R^{-1}``.
    G_T : ndarray (n, m)
        ``K_nm (K_mm + jitter I)^{-1} = Z R^{-T}`` (the transpose of ``G``).
    K_nm : ndarray (n, m)
    D2_nm : ndarray (n, m)
        Squared distances of the points to the landmarks.
    K_mm, D2_mm : ndarray (m, m)
    R : ndarray (m, m)
        Upper Cholesky factor of ``K_mm + jitter I``.
    sigma, jitter : float
    landmarks : ndarray of int or None
    """

    Z: np.ndarray
    G_T: np.ndarray
    K_nm: np.ndarray
    D2_nm: np.ndarray
    K_mm: np.ndarray
    D2_mm: np.ndarray
    R: np.ndarray
    sigma: float
    jitter: float
    landmarks: np.ndarray | None = None

    @property
    def rank(self) -> int:
        return self.Z.shape[1]

    @property
    def trace_residual(self) -> float:
        """Relative trace residual ``sum_i (K_ii - K~_ii) / n`` at this width (``K_ii = 1``).

        The quantity the rank rule of :func:`pivoted_cholesky_landmarks` bounds at the width
        the landmarks were chosen at; here at ``sigma``.  ``O(n m)``.
        """
        diag = np.einsum("ij,ij->i", self.Z, self.Z)
        return float(np.mean(np.maximum(1.0 - diag, 0.0)))

    def dlogsigma(self) -> tuple[np.ndarray, np.ndarray]:
        """``(P, Q) = (dK_nm, dK_mm) / dlog sigma`` (the landmarks held fixed)."""
        return (
            rbf_dlogsigma(self.K_nm, self.D2_nm, self.sigma),
            rbf_dlogsigma(self.K_mm, self.D2_mm, self.sigma),
        )

    def features(self, X_new: np.ndarray, X_landmarks: np.ndarray) -> np.ndarray:
        """Features ``k(x, X_L) R^{-1}`` of new points (for predictions of the low-rank model)."""
        K = rbf_from_sqdist(squared_distances(X_new, X_landmarks), self.sigma)
        return sla.solve_triangular(self.R, K.T, trans="T", lower=False).T


def nystroem_factor(
    D2_nm: np.ndarray,
    D2_mm: np.ndarray,
    sigma: float,
    *,
    jitter: float = 1e-8,
    landmarks: np.ndarray | None = None,
) -> NystroemFactor:
    """Nystroem factor of the RBF kernel at width ``sigma`` from squared distances to landmarks.

    ``K_mm + jitter I = R^T R`` (upper Cholesky; ``jitter`` is raised tenfold, with a warning,
    until the factorisation succeeds -- e.g. coinciding landmarks or ``sigma -> inf``),
    ``Z = K_nm R^{-1}`` and ``G^T = Z R^{-T}``.  ``O(n m^2)`` time, ``O(n m)`` memory.

    Raises
    ------
    ValueError
        If ``D2_mm`` is not ``(m, m)``, ``D2_nm`` not ``(n, m)``, a distance is negative
        or not finite, or ``sigma`` / ``jitter`` is out of range.
    """
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be positive and finite, got {sigma}")
    if not (np.isfinite(jitter) and jitter >= 0):
        raise ValueError(f"jitter must be a non-negative number, got {jitter}")
    D2_nm = np.asarray(D2_nm, dtype=float)
    D2_mm = np.asarray(D2_mm, dtype=float)
    if D2_mm.ndim != 2 or D2_mm.shape[0] != D2_mm.shape[1]:
        raise ValueError(
            f"D2_mm (landmark x landmark squared distances) must be square (m, m), "
            f"got shape {D2_mm.shape}"
        )
    m = D2_mm.shape[0]
    if D2_nm.ndim != 2 or D2_nm.shape[1] != m:
        raise ValueError(
            f"D2_nm (point x landmark squared distances) must have shape (n, {m}) to match "
            f"D2_mm, got {D2_nm.shape}"
        )
    for name, D in (("D2_nm", D2_nm), ("D2_mm", D2_mm)):
        if not (np.all(D >= 0) and np.all(np.isfinite(D))):
            raise ValueError(
                f"{name} must hold finite, non-negative squared distances (e.g. from "
                "svmtune.kernels.squared_distances); it has negative, NaN or inf entries"
            )
    K_nm = rbf_from_sqdist(D2_nm, sigma)
    K_mm = rbf_from_sqdist(D2_mm, sigma)
    jit = float(jitter)
    for _ in range(12):
        try:
            R = sla.cholesky(K_mm + jit * np.eye(m), lower=False, check_finite=False)
            break
        except np.linalg.LinAlgError:
            jit = max(10.0 * jit, 1e-10)
    else:  # pragma: no cover - K_mm + 1e1 I is positive definite
        raise np.linalg.LinAlgError("landmark kernel matrix is not positive definite")
    if jit != jitter:
        warnings.warn(
            f"landmark kernel matrix is numerically singular at sigma = {sigma:.4g}; "
            f"jitter raised to {jit:.1e}",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
    Z = sla.solve_triangular(R, K_nm.T, trans="T", lower=False).T
    G_T = sla.solve_triangular(R, Z.T, lower=False).T
    return NystroemFactor(
        Z=Z,
        G_T=G_T,
        K_nm=K_nm,
        D2_nm=D2_nm,
        K_mm=K_mm,
        D2_mm=D2_mm,
        R=R,
        sigma=float(sigma),
        jitter=jit,
        landmarks=landmarks,
    )


# ---------------------------------------------------------------------------------------------
# Woodbury factor of the extended support-set matrix
# ---------------------------------------------------------------------------------------------
@dataclass
class WoodburyFactor:
    """``M = [[Z_S Z_S^T + diag(d_S), 1], [1^T, 0]]`` through the Woodbury identity.

    Same interface as :class:`svmtune.svm.ExtendedFactor` (``solve``, ``solve_H``,
    ``inverse_diagonal``, ``size``) but ``O(|S| m)`` memory; ``inverse()`` (dense) is
    deliberately absent.  ``B = (M^{-1})_SS = diag(1/d) - E E^T``.
    """

    dS: np.ndarray
    F: np.ndarray
    u: np.ndarray
    s: float
    E: np.ndarray = field(repr=False)

    @classmethod
    def from_lowrank(cls, ZS: np.ndarray, dS: np.ndarray) -> WoodburyFactor:
        """Factor ``H = Z_S Z_S^T + diag(d_S)``, ``d_S > 0`` (RBSVM eq. (22) via Woodbury)."""
        ZS = np.asarray(ZS, dtype=float)
        dS = np.asarray(dS, dtype=float)
        m = ZS.shape[1]
        Zd = ZS / dS[:, None]
        A = np.eye(m) + ZS.T @ Zd
        Lc = sla.cholesky(A, lower=True, check_finite=False)
        F = sla.solve_triangular(Lc, Zd.T, lower=True, check_finite=False).T  # D^-1 Z A^-T/2
        u = 1.0 / dS - F @ F.sum(axis=0)
        s = float(u.sum())
        E = np.hstack([F, (u / np.sqrt(s))[:, None]])
        return cls(dS=dS, F=F, u=u, s=s, E=E)

    @property
    def size(self) -> int:
        return self.u.shape[0]

    def solve_H(self, rhs: np.ndarray) -> np.ndarray:
        """``H_SS^{-1} rhs`` (Woodbury)."""
        rhs = np.asarray(rhs, dtype=float)
        if rhs.ndim == 1:
            return rhs / self.dS - self.F @ (self.F.T @ rhs)
        return rhs / self.dS[:, None] - self.F @ (self.F.T @ rhs)

    def apply_B(self, X: np.ndarray) -> np.ndarray:
        """``B X`` with ``B`` the top-left block of ``M^{-1}``."""
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            return X / self.dS - self.E @ (self.E.T @ X)
        return X / self.dS[:, None] - self.E @ (self.E.T @ X)

    def solve(self, rhs_top: np.ndarray, rhs_last: float | np.ndarray = 0.0):
        """Solve ``M [x; z] = [rhs_top; rhs_last]``; returns ``(x, z)``."""
        h = self.solve_H(rhs_top)
        z = (np.ones(self.size) @ h - rhs_last) / self.s
        x = h - np.outer(self.u, z) if np.ndim(h) == 2 else h - self.u * z
        return x, z

    def inverse_diagonal(self) -> np.ndarray:
        """``(M^{-1})_ii = 1/d_i - |e_i|^2`` for the support vectors."""
        return 1.0 / self.dS - np.einsum("ij,ij->i", self.E, self.E)

    def weighted_square_diagonal(self, g: np.ndarray) -> np.ndarray:
        """``diag(B diag(g) B)`` in ``O(|S| m^2)``."""
        E = self.E
        ee = np.einsum("ij,ij->i", E, E)
        T = E.T @ (E * g[:, None])
        return g / self.dS**2 - 2.0 * g * ee / self.dS + np.einsum("ij,ij->i", E @ T, E)


# ---------------------------------------------------------------------------------------------
# Solver
# ---------------------------------------------------------------------------------------------
def _primal(Z, y, Cw, v, b):
    f = Z @ v + b
    xi = 1.0 - y * f
    act = (xi > 0) & (Cw > 0)
    val = 0.5 * float(v @ v) + 0.5 * float(Cw[act] @ xi[act] ** 2)
    return val, f, xi, act


class _ActiveGram:
    """``Z_A^T diag(c_A) [Z_A, 1, y_A]`` for the active set ``A``, updated by the rows that
    enter or leave ``A`` (few near the optimum) instead of recomputed: ``O(|change| m^2)``."""

    def __init__(self, Z, y, Cw):
        self.Z, self.y, self.Cw = Z, y, Cw
        m = Z.shape[1]
        self.act = np.zeros(Z.shape[0], dtype=bool)
        self.G = np.zeros((m + 2, m + 2))

    def _block(self, rows):
        Za = np.hstack([self.Z[rows], np.ones((rows.size, 1)), self.y[rows][:, None]])
        return Za.T @ (Za * self.Cw[rows][:, None])

    def update(self, act):
        change = np.flatnonzero(act != self.act)
        if 2 * change.size > act.sum():
            self.G = self._block(np.flatnonzero(act))
        elif change.size:
            add, rem = change[act[change]], change[~act[change]]
            self.G = self.G + self._block(add) - self._block(rem)
        self.act = act.copy()

    def newton_point(self, act):
        """Minimiser of the primal with the active set fixed (the support-set system (22))."""
        self.update(act)
        m = self.Z.shape[1]
        Hm = self.G[: m + 1, : m + 1].copy()
        Hm[np.diag_indices(m)] += 1.0
        Hm[m, m] += 1e-12
        rhs = self.G[: m + 1, m + 1]
        sol = sla.solve(Hm, rhs, assume_a="sym", check_finite=False)
        return sol[:m], float(sol[m])


def fit_l2_svm_lowrank(
    Z: np.ndarray,
    y: np.ndarray,
    C: float,
    *,
    sample_weight: np.ndarray | None = None,
    init_support: np.ndarray | None = None,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> DualSolution:
    """Exact L2-SVM on the low-rank kernel ``K~ = Z Z^T`` (RBSVM eq. (6)-(7), (22)).

    Primal Newton on ``(v, b)`` (module docstring) from the point solving the support-set
    system of ``init_support`` (warm start) or from ``v = 0, b = 0``; each iteration is
    ``O(n m^2)``.  Stops when a full Newton step leaves the active set unchanged (the iterate is
    then the exact optimum) or the KKT residual is below ``tol``.

    Parameters
    ----------
    Z : ndarray (n, m)
        Features with ``K~ = Z Z^T`` (:func:`nystroem_factor`).
    y : array of {-1, +1}
    C : float
    sample_weight : array (n,), optional
        Per-sample weights (``d_i = 1/(C w_i)``; ``w_i = 0`` means ``alpha_i = 0``).
    init_support : bool mask or index array, optional
        Starting active set (e.g. the previous hyperparameter step's support).
    tol : float
        KKT tolerance.
    max_iter : int

    Returns
    -------
    DualSolution
        ``factor`` is a :class:`WoodburyFactor` of the support set, ``H_diag = 1/(C w)``;
        ``[beta_S; b]`` solve ``M [beta_S; b] = [y_S; 0]`` exactly.

    Raises
    ------
    ValueError
        If ``Z`` is not a finite ``(n, m)`` array, ``y`` not -1/+1 with both classes among
        the samples of positive weight, ``C`` / the weights invalid, or ``init_support``
        out of range.
    """
    Z = np.asarray(Z, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    n = y.shape[0]
    if Z.ndim != 2 or Z.shape[0] != n:
        raise ValueError(f"Z must have shape ({n}, m), got {Z.shape}")
    if not np.all(np.isfinite(Z)):
        raise ValueError(
            "Z contains NaN or infinity; the low-rank features must be finite (check the "
            "distances and sigma they were computed from)"
        )
    if n == 0 or not np.all(np.isin(y, (-1.0, 1.0))) or np.all(y == y[0]):
        raise ValueError("labels must be -1/+1 with both classes present")
    d = l2_diagonal(n, C, sample_weight)
    Cw = np.where(np.isfinite(d), 1.0 / d, 0.0)
    if np.unique(y[Cw > 0]).size < 2:
        raise ValueError("L2-SVM needs points of both classes with positive weight")
    gram = _ActiveGram(Z, y, Cw)
    init_mask = None if init_support is None else _support_mask(init_support, n)
    if init_mask is not None and init_mask.sum() >= 2:
        act0 = init_mask & (Cw > 0)
        v, b = gram.newton_point(act0)
    else:
        v, b = np.zeros(Z.shape[1]), 0.0
    val, _, xi, act = _primal(Z, y, Cw, v, b)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007
        gv = v - Z[act].T @ (Cw[act] * y[act] * xi[act])
        gb = -float(Cw[act] @ (y[act] * xi[act]))
        vn, bn = gram.newton_point(act)
        dv, db = vn - v, bn - b
        slope = float(gv @ dv + gb * db)
        t = 1.0
        while True:
            val_t, _, xi_t, act_t = _primal(Z, y, Cw, v + t * dv, b + t * db)
            if val_t <= val + 1e-4 * t * slope or t < 1e-10:
                break
            t *= 0.5
        v, b, val, xi = v + t * dv, b + t * db, val_t, xi_t
        same = np.array_equal(act_t, act)
        act = act_t
        if t == 1.0 and same:
            converged = True
            break
        kkt = max(float(np.max(np.abs(gv), initial=0.0)), abs(gb))
        if kkt < tol * max(1.0, float(np.abs(Cw).max())) and same:
            converged = True
            break
    if not converged:
        warnings.warn(
            f"low-rank L2-SVM Newton solver stopped after {max_iter} iterations",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    S = np.flatnonzero(act)
    if S.size < 2 or np.all(y[S] == y[S][0]):
        raise FloatingPointError("low-rank L2-SVM support set degenerated to one class")
    fac = WoodburyFactor.from_lowrank(Z[S], d[S])
    beta, b_exact = fac.solve(y[S], 0.0)
    alpha = np.zeros(n)
    alpha[S] = np.maximum(y[S] * beta, 0.0)
    mask = np.zeros(n, dtype=bool)
    mask[S] = True
    return DualSolution(
        alpha=alpha,
        b=float(b_exact),
        y=y,
        upper=np.full(n, np.inf),
        loss="l2",
        support=mask,
        in_bound=mask.copy(),
        bounded=np.zeros(n, dtype=bool),
        factor=fac,
        H_diag=d,
        n_iter=it,
        extra={"beta": np.asarray(beta, dtype=float), "converged": converged},
    )


def _system(sol: DualSolution) -> tuple[np.ndarray, np.ndarray, float]:
    if not isinstance(sol.factor, WoodburyFactor):
        raise ValueError("need a low-rank solution from fit_l2_svm_lowrank")
    S = np.flatnonzero(sol.support)
    beta, b = sol.factor.solve(sol.y[S], 0.0)
    return S, np.asarray(beta, dtype=float), float(b)


def _safe(diag: np.ndarray) -> np.ndarray:
    floor = np.finfo(float).eps * max(float(np.max(np.abs(diag), initial=0.0)), 1e-300)
    bad = ~(diag > floor)
    if bad.any():
        warnings.warn(
            f"{int(bad.sum())} diagonal entries of M^-1 are not positive (round-off); floored",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
        diag = np.where(bad, floor, diag)
    return diag


# ---------------------------------------------------------------------------------------------
# Closed-form LOO and gradient
# ---------------------------------------------------------------------------------------------
def lowrank_loo(sol: DualSolution, Z: np.ndarray) -> np.ndarray:
    """Closed-form LOO decision values (RBSVM eq. (27)) of the L2-SVM on ``K~ = Z Z^T``.

    ``r_i = y_i - beta_i / (M^{-1})_ii`` on the support set (``(M^{-1})_ii`` by Woodbury) and the
    full model's output ``f(x_i) = z_i^T Z_S^T beta + b`` elsewhere; ``O(n m)`` given the factor.
    """
    S, beta, b = _system(sol)
    Z = np.asarray(Z, dtype=float)
    out = Z @ (Z[S].T @ beta) + b
    diag = _safe(sol.factor.inverse_diagonal())
    out[S] = sol.y[S] - beta / diag
    return out


def lowrank_loo_gradient(sol: DualSolution, nf: NystroemFactor, dLdr: np.ndarray) -> np.ndarray:
    """Exact ``dJ / d(log sigma, log C)`` of ``J = sum_i J_i(r_i)`` for a fixed support set.

    The low-rank counterpart of :func:`svmtune.loo.rbsvm.loo_gradient` (same ``c``, ``g``,
    ``v``), with ``dK~`` of the module docstring (landmarks fixed); ``O(n m^2)`` time,
    ``O(n m)`` memory.

    Parameters
    ----------
    sol : DualSolution
        From :func:`fit_l2_svm_lowrank` on ``nf.Z``.
    nf : NystroemFactor
    dLdr : array (n,)
        ``c_i = dJ/dr_i``.

    Returns
    -------
    ndarray (2,)
    """
    if not isinstance(nf, NystroemFactor):
        raise TypeError(
            f"nf must be the NystroemFactor of nystroem_factor, got {type(nf).__name__}"
        )
    S, beta, _ = _system(sol)
    fac: WoodburyFactor = sol.factor
    Z = nf.Z
    n = Z.shape[0]
    c = np.asarray(dLdr, dtype=float)
    N = np.flatnonzero(~sol.support)
    diag = _safe(fac.inverse_diagonal())
    cS, cN = c[S], c[N]
    g = cS * beta / diag**2
    h_top = -cS / diag + Z[S] @ (Z[N].T @ cN)
    h_last = float(cN.sum())
    v = fac.apply_B(h_top) + fac.u * h_last / fac.s
    # Gamma X and Gamma^T X for X = G^T (n x m)
    X = nf.G_T
    XS = X[S]
    WXS = fac.apply_B(g[:, None] * fac.apply_B(XS))
    bX = beta @ XS
    Y1 = np.zeros((n, X.shape[1]))
    Y1[S] = -(WXS + np.outer(v, bX))
    Y1[N] = np.outer(cN, bX)
    Y2S = -(WXS + np.outer(beta, v @ XS)) + np.outer(beta, cN @ X[N])
    P, Q = nf.dlogsigma()
    d_sigma = float(np.sum(P * Y1)) + float(np.sum(P[S] * Y2S)) - float(np.sum(Q * (X.T @ Y1)))
    dS = sol.H_diag[S]
    d_C = float(np.sum(dS * (fac.weighted_square_diagonal(g) + v * beta)))
    return np.array([d_sigma, d_C])


class TaskSolutions:
    """Mixin of the low-rank criteria's results: their per-task L2-SVM ``solutions``."""

    solutions: list[DualSolution]

    @property
    def supports(self) -> list[np.ndarray]:
        """Support mask of every task (the warm start of the next evaluation)."""
        return [s.support for s in self.solutions]

    @property
    def n_support(self) -> int:
        """Points that are support vectors of at least one task."""
        return int(np.logical_or.reduce(self.supports).sum())


@dataclass
class LowRankObjective(TaskSolutions):
    """Value, gradient and by-products of :func:`lowrank_rbsvm_objective` at one ``theta``."""

    value: float
    grad: np.ndarray | None
    loo: list[np.ndarray]
    solutions: list[DualSolution]
    theta: np.ndarray
    #: trace residual / n of the landmarks at this width (:attr:`NystroemFactor.trace_residual`)
    rank_residual: float = float("nan")


def fit_tasks_lowrank(
    D2_nm: np.ndarray,
    D2_mm: np.ndarray,
    tasks: Sequence[np.ndarray],
    theta: Sequence[float] | np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    init_support: Sequence[np.ndarray | None] | None = None,
    jitter: float = 1e-8,
    tol: float = 1e-8,
) -> tuple[np.ndarray, NystroemFactor, list[DualSolution]]:
    """The Nystroem factor at ``sigma = exp(theta[0])`` and the L2-SVM of every task at
    ``C = exp(theta[1])`` (:func:`fit_l2_svm_lowrank`, warm-started from ``init_support``):
    the shared first step of the low-rank criteria.  Returns ``(theta, factor, solutions)``
    with ``theta`` validated."""
    theta = np.asarray(theta, dtype=float).ravel()
    if theta.shape != (2,) or not np.all(np.isfinite(theta)):
        raise ValueError(f"theta must be finite (log sigma, log C), got {theta}")
    tasks = list(tasks)
    if not tasks:
        raise ValueError("need at least one task")
    n = np.asarray(D2_nm).shape[0]
    for t in tasks:
        if np.shape(t) != (n,):
            raise ValueError(f"every task must hold {n} labels, got shape {np.shape(t)}")
    if init_support is None:
        init_support = [None] * len(tasks)
    if len(init_support) != len(tasks):
        raise ValueError("init_support needs one entry per task")
    sigma, C = float(np.exp(theta[0])), float(np.exp(theta[1]))
    nf = nystroem_factor(D2_nm, D2_mm, sigma, jitter=jitter)
    sols = [
        fit_l2_svm_lowrank(nf.Z, y_t, C, sample_weight=sample_weight, init_support=init, tol=tol)
        for y_t, init in zip(tasks, init_support)
    ]
    return theta, nf, sols


def lowrank_rbsvm_objective(
    D2_nm: np.ndarray,
    D2_mm: np.ndarray,
    tasks: Sequence[np.ndarray],
    theta: Sequence[float] | np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    init_support: Sequence[np.ndarray | None] | None = None,
    loss: str = "cross_entropy",
    nonsupport: str = "model",
    gradient: bool = True,
    jitter: float = 1e-8,
    tol: float = 1e-8,
    groups: np.ndarray | None = None,
) -> LowRankObjective:
    """RBSVM objective (eq. (33)) of the Nystroem L2-SVM and its exact gradient.

    Parameters
    ----------
    D2_nm, D2_mm : ndarray
        Squared distances of the points to the landmarks and among the landmarks.
    tasks : sequence of {-1, +1} vectors
        One per binary / one-vs-rest task (summed, as :func:`svmtune.loo.rbsvm.rbsvm_objective`).
    theta : (log sigma, log C)
    sample_weight, init_support, loss, nonsupport, gradient, tol
        As :func:`svmtune.loo.rbsvm.rbsvm_objective`.
    jitter : float
        Added to ``K_mm`` before its Cholesky factorisation.
    groups : array (n,), optional
        A group label per point: ``J`` sums the leave-one-group-out outputs instead
        (:func:`svmtune.loo.rbsvm_groups.lowrank_lgo`); needs ``nonsupport="model"``.

    Returns
    -------
    LowRankObjective
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    check_nonsupport(nonsupport)
    if groups is not None:
        from svmtune.loo import rbsvm_groups  # it builds on this module

        check_group_nonsupport(nonsupport)
        codes = rbsvm_groups.group_codes(groups, np.shape(D2_nm)[0])
    theta, nf, sols = fit_tasks_lowrank(
        D2_nm,
        D2_mm,
        tasks,
        theta,
        sample_weight=sample_weight,
        init_support=init_support,
        jitter=jitter,
        tol=tol,
    )
    n = nf.Z.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    value, grad = 0.0, (np.zeros(2) if gradient else None)
    loo = []
    for sol in sols:
        if groups is None:
            r = lowrank_loo(sol, nf.Z)
        else:
            r, red, rows = rbsvm_groups._lowrank_lgo_terms(sol, nf.Z, codes)
        L, dL = objective_terms(sol, r, loss, nonsupport)
        value += float(w @ L)
        if gradient and groups is None:
            grad += lowrank_loo_gradient(sol, nf, w * dL)
        elif gradient:
            grad += rbsvm_groups._lowrank_lgo_gradient(sol, nf, w * dL, codes, red, rows)
        loo.append(r)
    return LowRankObjective(
        value=value,
        grad=grad,
        loo=loo,
        solutions=sols,
        theta=theta.copy(),
        rank_residual=nf.trace_residual,
    )
