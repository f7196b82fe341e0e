"""Landmarks and the Nystroem factor of the RBF kernel (the low-rank kernel of svmtune).

The RBF kernel matrix is replaced by its Nystroem approximation on ``m`` fixed landmarks
``X_L`` (rows of the training set),

    K~ = K_nm K_mm^{-1} K_mn = Z Z^T,     Z = K_nm R^{-1},   K_mm + jitter I = R^T R.

* **Landmarks / rank rule** (:func:`pivoted_cholesky_landmarks`).  Greedy pivoted Cholesky of
  the RBF kernel at a reference width: pivot on the largest residual diagonal
  ``K_ii - K~_ii``, from the row nearest the mean (all residuals are 1 at first), and
  stop as soon as the trace residual ``sum_i (K_ii - K~_ii)`` is at most
  ``tol * trace(K) = tol * n`` or ``m = max_rank``.  ``O(n m^2)`` time, ``O(n m)`` memory.
  On many rows it runs on a uniform subsample of them (:func:`landmark_subsample`).
* **Factor** (:func:`nystroem_factor`, :class:`NystroemFactor`): ``Z``, ``G^T = Z R^{-T}``
  and what the exact derivative in ``log sigma`` with the landmarks held fixed needs,

      dK~ = P G + G^T P^T - G^T Q G,   P = dK_nm, Q = dK_mm, G = (K_mm + jitter I)^{-1} K_mn,

  with ``P, Q`` from :func:`svmtune.kernels.rbf_dlogsigma`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils.random import sample_without_replacement

from svmtune._option_values import check_positive
from svmtune._validation import validate_sample_weight
from svmtune._warnings import user_stacklevel
from svmtune.kernels import (
    _check_points,
    rbf_dlogsigma,
    rbf_from_sqdist,
    sparse_row_norms,
    squared_distances,
)

__all__ = [
    "NystroemFactor",
    "check_landmark_distances",
    "landmark_subsample",
    "nystroem_factor",
    "pivoted_cholesky_landmarks",
]


def pivoted_cholesky_landmarks(
    X: np.ndarray,
    sigma: float,
    *,
    tol: float = 1e-2,
    max_rank: int = 500,
    min_rank: int = 1,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """Landmarks by greedy pivoted Cholesky of the RBF kernel (rank rule of the low-rank path).

    Pivots on the largest residual diagonal ``K_ii - K~_ii``, starting from the row nearest
    the (weighted) mean of the rows (:func:`central_row`: at the start every residual is 1,
    and a first index on that tie would make the landmarks depend on the order of the rows),
    and stops when the trace residual ``sum_i (K_ii - K~_ii)`` is at
    most ``tol * n`` (``trace K = n`` for the RBF kernel), but not before ``min_rank`` pivots,
    or when ``max_rank`` pivots are taken.  ``O(n m d + n m^2)`` time, ``O(n m)`` memory
    (Harbrecht, Peters & Schneider 2012).

    Parameters
    ----------
    X : ndarray or scipy sparse matrix (n, d)
        A sparse ``X`` is never densified: each kernel column comes from sparse dot
        products with the pivot row.
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
    sample_weight : ndarray (n,), optional
        Non-negative weights, a weight standing for repeated rows: only rows of positive
        weight are pivots, and the trace residual is ``sum_i w_i (K_ii - K~_ii)`` against
        ``tol * sum_i w_i``.  Integer weights therefore give the landmarks of the rows
        repeated in place (``np.repeat(X, w, axis=0)``), and rows of weight 0 play no part.

    Returns
    -------
    (indices, relative_residual) : (ndarray of int, float)
        Landmark row indices in pivot order and the final ``trace residual / n`` (weighted:
        ``/ sum_i w_i``).

    Raises
    ------
    ValueError
        If ``X`` is not a finite, non-empty 2-D array or a parameter is out of range.
    """
    X = _as_points(X)
    n = X.shape[0]
    if n == 0:
        raise ValueError("pivoted_cholesky_landmarks needs at least one point; X is empty")
    if not (0.0 < tol < 1.0):
        raise ValueError(f"rank tolerance must lie in (0, 1), got {tol}")
    if int(max_rank) != max_rank or max_rank < 1:
        raise ValueError(f"max_rank must be a positive integer, got {max_rank}")
    if int(min_rank) != min_rank or min_rank < 1:
        raise ValueError(f"min_rank must be a positive integer, got {min_rank}")
    check_positive("sigma", sigma)
    keep = None
    if sample_weight is not None:
        w = validate_sample_weight(sample_weight, n)
        keep = np.flatnonzero(w > 0)
        X, w = X[keep], w[keep]
        n = keep.size
    m_max = min(int(max_rank), n)
    norms = sparse_row_norms(X) if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    L = np.zeros((m_max, n))  # the factor's columns as rows: each update reads L[:k] in order
    resid = np.ones(n)
    piv: list[int] = []

    def trace_residual() -> float:
        return float(resid.sum()) if keep is None else float(w @ resid)

    total = float(n) if keep is None else float(w.sum())
    for k in range(m_max):
        if k >= min_rank and trace_residual() <= tol * total:
            break
        # later ties (duplicated rows) give the same kernel column whichever is taken
        j = central_row(X, None if keep is None else w) if k == 0 else int(np.argmax(resid))
        if resid[j] <= 1e-12:  # numerically exhausted (duplicates, sigma -> inf)
            break
        col = rbf_from_sqdist(_distances_to_row(X, j, norms), sigma)
        col -= L[:k].T @ L[:k, j]
        L[k] = col / np.sqrt(resid[j])
        resid -= L[k] ** 2
        np.maximum(resid, 0.0, out=resid)
        resid[j] = 0.0
        piv.append(j)
    idx = np.asarray(piv, dtype=int)
    return (idx if keep is None else keep[idx]), trace_residual() / total


def landmark_subsample(
    n: int, size: int | None, sample_weight: np.ndarray | None = None, random_state=None
) -> np.ndarray | None:
    """The rows the landmark rule runs on where there are more than ``size``: ``size`` rows
    drawn uniformly without replacement among those of positive weight, sorted.

    None (all rows) where ``n <= size`` or ``size`` is None: the rule is then the one on all
    rows.  Where at most ``size`` rows have positive weight, those rows, no draw.  Sorted,
    the rows do not depend on the order of the draw, and a subsample is read in the order of
    the rows (a dask array's rows by one indexing, :func:`svmtune.lowrank._dask_blocks.
    gather_rows`).  The draw is scikit-learn's ``sample_without_replacement`` (``O(size)``
    memory, besides the ``O(n)`` indices of the rows of positive weight).

    Parameters
    ----------
    n : int
        Rows.
    size : int or None
        Largest number of rows the rule runs on; None for all.
    sample_weight : ndarray (n,), optional
        Rows of weight 0 are never drawn (they take no part in the rule on all rows either,
        :func:`pivoted_cholesky_landmarks`).
    random_state : None, int or numpy.random.RandomState
        The draw's generator (scikit-learn's ``check_random_state``); read only where rows
        are drawn.

    Returns
    -------
    ndarray of int (at most ``size``,) or None
    """
    if size is None or n <= size:
        return None
    rows = np.arange(n) if sample_weight is None else np.flatnonzero(sample_weight > 0)
    if rows.size <= size:
        return rows
    rng = check_random_state(random_state)
    return rows[np.sort(sample_without_replacement(rows.size, int(size), random_state=rng))]


def central_row(X, sample_weight: np.ndarray | None = None) -> int:
    """The row of ``X`` nearest the mean of its rows (weighted by ``sample_weight``, a weight
    standing for repeated rows), the first pivot of :func:`pivoted_cholesky_landmarks`.

    Every diagonal of the RBF kernel is 1, so the greedy rule has no preference for the
    first pivot; the most central row is one that depends on the rows, not on their order
    (a permutation of the rows gives the same landmarks), and lies in the bulk of the data
    rather than at an outlier (the greedy rule reaches the outliers next).  The mean is
    weighted as the landmark rule weighs its trace residual, a weight standing for repeated
    rows, so integer weights still give the landmarks of the rows repeated in place.  The
    first such row on exact ties (duplicates, whose kernel columns are the same).
    ``O(nnz)`` time, ``O(n)`` memory: a sparse ``X`` is never densified.
    """
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if w is None:
        mean = np.asarray(X.mean(axis=0)).ravel()
    else:
        mean = np.asarray(X.T @ w).ravel() / w.sum()
    norms = sparse_row_norms(X) if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    # ||x - mean||^2 less the constant ||mean||^2: one pass, no n x d copy of X
    return int(np.argmin(norms - 2.0 * np.asarray(X @ mean).ravel()))


def _as_points(X):
    """``X`` as a finite float64 array, or a CSR matrix (with finite entries) if sparse."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=float)
        if not np.all(np.isfinite(X.data)):
            raise ValueError("X contains NaN or infinity; the points must be finite")
        return X
    X = np.asarray(X, dtype=float)
    _check_points(X)
    return X


def _distances_to_row(X, j: int, norms: np.ndarray) -> np.ndarray:
    """Squared distances of all rows of ``X`` to row ``j`` (one kernel column's), from the
    squared row norms ``norms`` and one matrix-vector product, ``O(nnz)`` for a sparse ``X``;
    clipped at 0, with an exact 0 at ``j``, as :func:`svmtune.kernels.squared_distances` gives.
    Unchecked: the pivot loop calls it once per landmark on the points it has checked."""
    if sp.issparse(X):  # the sparse column X x_j (its non-zeros only: d may be huge)
        col = sp.coo_matrix(X @ X[j].T)
        out = np.zeros(X.shape[0])
        out[col.row] = col.data  # a sparse product has no duplicate entries
    else:
        out = X @ X[j]
    out *= -2.0
    out += norms
    out += norms[j]
    np.maximum(out, 0.0, out=out)
    out[j] = 0.0
    return out


@dataclass
class NystroemFactor:
    """``K~ = Z Z^T`` on fixed landmarks, with what the exact sigma-derivative needs.

    ``K_nm`` and ``G_T``, which only the derivatives use, are computed at their first use
    (and kept): an evaluation without a gradient holds two ``n x m`` arrays (``Z`` and
    ``D2_nm``) instead of four (issue 64: the referee's low-rank scores).

    Attributes
    ----------
    Z : ndarray (n, m)
        ``K_nm R^{-1}``.
    D2_nm : ndarray (n, m)
        Squared distances of the points to the landmarks.
    K_mm, D2_mm : ndarray (m, m)
    R : ndarray (m, m)
        Upper Cholesky factor of ``K_mm + jitter I``.
    sigma, jitter : float
    landmarks : ndarray of int or None
    """

    Z: np.ndarray
    D2_nm: np.ndarray
    K_mm: np.ndarray
    D2_mm: np.ndarray
    R: np.ndarray
    sigma: float
    jitter: float
    landmarks: np.ndarray | None = None

    @cached_property
    def K_nm(self) -> np.ndarray:
        """``(n, m)``: the kernel of the points to the landmarks."""
        return rbf_from_sqdist(self.D2_nm, self.sigma)

    @cached_property
    def G_T(self) -> np.ndarray:
        """``(n, m)``: ``K_nm (K_mm + jitter I)^{-1} = Z R^{-T}`` (the transpose of ``G``)."""
        return sla.solve_triangular(self.R, self.Z.T, lower=False).T

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
    Checks its inputs and delegates to :func:`_nystroem_factor`.

    Raises
    ------
    ValueError
        If ``D2_mm`` is not ``(m, m)``, ``D2_nm`` not ``(n, m)``, a distance is negative
        or not finite, or ``sigma`` / ``jitter`` is out of range.
    """
    check_positive("sigma", sigma)
    if not (np.isfinite(jitter) and jitter >= 0):
        raise ValueError(f"jitter must be a non-negative number, got {jitter}")
    D2_nm, D2_mm = check_landmark_distances(D2_nm, D2_mm)
    return _nystroem_factor(D2_nm, D2_mm, float(sigma), float(jitter), landmarks)


def check_landmark_distances(D2_nm, D2_mm) -> tuple[np.ndarray, np.ndarray]:
    """``(D2_nm, D2_mm)`` as float arrays after checking that they are the ``(n, m)`` and
    ``(m, m)`` squared distances of points to landmarks and among them: finite and
    non-negative (an ``O(n m)`` pass, made once per set of landmarks by the searches,
    :func:`svmtune.methods._lowrank_search.landmarks`, not at each evaluation)."""
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
    return D2_nm, D2_mm


def _nystroem_factor(
    D2_nm: np.ndarray,
    D2_mm: np.ndarray,
    sigma: float,
    jitter: float,
    landmarks: np.ndarray | None = None,
    derivatives: bool = True,
) -> NystroemFactor:
    """:func:`nystroem_factor` on checked inputs (issue #55): float distances of
    :func:`check_landmark_distances`, a positive finite ``sigma`` and a finite ``jitter >= 0``.
    ``G_T`` is left to the factor's first use of it, and ``K_nm`` too unless ``derivatives``.

    The low-rank searches check their landmarks' distances once, when they choose the
    landmarks, and call this at each evaluation, so that no evaluation repeats the ``O(n m)``
    finiteness pass.  ``Z = K_nm R^{-1}`` is then finite: ``K_nm`` lies in ``[0, 1]`` and the
    Cholesky factor ``R`` of ``K_mm + jitter I`` has positive pivots.
    """
    m = D2_mm.shape[0]
    K_nm = rbf_from_sqdist(D2_nm, sigma)
    K_mm = rbf_from_sqdist(D2_mm, sigma)
    jit = jitter
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
    # without the derivatives Z takes K_nm's place (the factor computes K_nm again if asked)
    Z = sla.solve_triangular(R, K_nm.T, trans="T", lower=False, overwrite_b=not derivatives).T
    nf = NystroemFactor(
        Z=Z,
        D2_nm=D2_nm,
        K_mm=K_mm,
        D2_mm=D2_mm,
        R=R,
        sigma=sigma,
        jitter=jit,
        landmarks=landmarks,
    )
    if derivatives:  # kept: the gradient's evaluations need it (G_T at its first use)
        nf.K_nm = K_nm
    return nf
