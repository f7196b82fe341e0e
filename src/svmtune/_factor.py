"""The factorisation of the L2-SVM's extended support-set matrix, and its updates.

The exact L2-SVM (:func:`svmtune.svm.fit_l2_svm`) solves, on its support set ``S``, the KKT
system ``M [beta; b] = [y_S; 0]`` with

    M = [[H_SS, 1], [1^T, 0]],   H = K + diag(1 / (C w))          (RBSVM eq. (22))

and the closed-form leave-one-out outputs, the smoothed span and the radius-margin terms read
``M^{-1}`` from the same factorisation.  :class:`ExtendedFactor` factors ``M`` through the
Cholesky factor ``L`` of ``H_SS`` and the scalar Schur complement ``s = 1^T H_SS^{-1} 1``.

When the active-set iteration moves points in or out of ``S``, the factor is updated instead of
recomputed (:meth:`ExtendedFactor.add`, :meth:`ExtendedFactor.remove`):

* **adding** ``k`` points appends them to the factor by block bordering: with ``H_SA`` the new
  columns, ``L_21 = (L^{-1} H_SA)^T`` (one triangular solve) and ``L_22 = chol(H_AA - L_21
  L_21^T)``, ``O(k m^2)`` flops (Golub & Van Loan, *Matrix Computations*, 4th ed., §4.2.9);
* **removing** the point at factor position ``p`` deletes row and column ``p`` of ``L``; the
  trailing block then satisfies ``L_33' L_33'^T = L_33 L_33^T + l l^T`` with ``l`` the removed
  column below the diagonal, a rank-one *update* (never a downdate) done by Givens rotations,
  ``O((m - p)^2)`` flops and backward stable (Golub & Van Loan §6.5.4; LINPACK ``dchud``).

Appended points go to the end of the factor, so the factor's order (:attr:`ExtendedFactor.order`)
need not be the sorted order of ``S``; every method takes and returns vectors and matrices in
the sorted order (ascending point index) that the rest of svmtune uses.

**When an update is refused.**  An addition whose new pivot ``L_22[j, j]^2`` (the Schur
complement of the new point given the others) is below ``UPDATE_PIVOT_TOL * H_jj`` has lost
about ``-log10(UPDATE_PIVOT_TOL)`` digits to cancellation (the point is nearly a combination of
the support set, e.g. a duplicated row with a huge ``C``), and :meth:`ExtendedFactor.add`
returns ``None``: the caller factors the new matrix afresh.  The solver also checks the
residual of its KKT system after every solve with an updated factor and refactorises when it
exceeds a fresh factorisation's (:func:`svmtune.svm.fit_l2_svm`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
from scipy.linalg import blas, lapack

from svmtune._warnings import user_stacklevel

__all__ = ["ExtendedFactor", "WoodburyFactor", "mirror_lower", "sandwich", "UPDATE_PIVOT_TOL"]

#: an added point whose squared pivot falls below this fraction of its diagonal entry of ``H``
#: is refused by :meth:`ExtendedFactor.add` (a fresh factorisation is made instead)
UPDATE_PIVOT_TOL = 1e-6


def mirror_lower(A: np.ndarray) -> np.ndarray:
    """Make a square matrix whose strict upper triangle is zero symmetric, in place, by
    copying its lower triangle up; returns ``A``.  For the one-triangle output of LAPACK /
    BLAS (``potri``, ``syrk``).

    A block of :data:`_MIRROR_BLOCK` columns at a time: the transposing copy of one block
    stays in cache, so numpy's strided copy runs near memory speed (within 1.1-1.6 times a
    compiled cache-blocked loop from ``m = 1000`` up; ``benchmarks/first_call.md``), with
    no compiled code to load.

    Raises
    ------
    ValueError
        If ``A`` is not a square 2-D array.
    """
    if np.ndim(A) != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"mirror_lower needs a square 2-D array, got shape {np.shape(A)}")
    m = A.shape[0]
    b = _MIRROR_BLOCK
    for j0 in range(0, m, b):
        j1 = min(j0 + b, m)
        D = A[j0:j1, j0:j1]
        D += np.tril(D, -1).T  # the diagonal block: its strict upper triangle is zero
        if j1 < m:
            A[j0:j1, j1:] = A[j1:, j0:j1].T
    return A


#: columns per block of :func:`mirror_lower` (128 columns of a 3000-row matrix, 3 MB)
_MIRROR_BLOCK = 128


#: values of ``B``'s scaled columns :func:`sandwich` makes at a time (8 MB)
_SANDWICH_VALUES = 2**20


def sandwich(B: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``B diag(g) B`` for a symmetric ``B``: symmetric rank-k updates (BLAS ``syrk``) on the
    columns with ``g > 0`` and ``g < 0``, half the flops of a general product, taken
    :data:`_SANDWICH_VALUES` values of scaled columns at a time (a scaled copy of all of
    ``B`` was one more ``m x m`` array at the exact stage's peak: issue 64)."""
    m = B.shape[0]
    out = np.zeros((m, m), order="F")
    step = max(1, _SANDWICH_VALUES // max(m, 1))
    for sign in (1.0, -1.0):
        cols = np.flatnonzero(sign * g > 0)
        for start in range(0, cols.size, step):
            c = cols[start : start + step]
            # A^T of the C-ordered A = B_c diag(sqrt|g_c|) is Fortran-ordered: A A^T by syrk's
            # trans=1 form without a copy
            Bc = B if c.size == m else B[:, c]  # one block of all columns: no copy of B
            A = np.ascontiguousarray(Bc * np.sqrt(sign * g[c]))
            out = blas.dsyrk(sign, A.T, beta=1.0, c=out, trans=1, lower=1, overwrite_c=1)
    return mirror_lower(out)  # syrk wrote the lower triangle only


def _rank_one_update(L: np.ndarray, x: np.ndarray, start: int) -> None:
    """``L[start:, start:] <- chol(L L^T + x x^T)`` in place for the lower-triangular trailing
    block (``x`` indexed like the rows of ``L``, read from ``start``; overwritten), by Givens
    rotations (LINPACK ``dchud``; Golub & Van Loan §6.5.4): the rotation of column ``k``
    zeroes ``x[k]`` against ``L[k, k]`` and is applied to the rest of the column and of ``x``
    by one BLAS ``drot``.

    ``L`` must be Fortran-ordered (its columns contiguous, rotated in place) and ``x`` a
    contiguous float64 vector.  One BLAS call per column, ``O(t^2)`` flops for a trailing
    block of size ``t``, plus the Python loop's fixed cost per column, which
    :func:`svmtune.svm._update_is_cheaper` weighs (``docs/notes/cost_measurements.md``).
    """
    if not (L.flags.f_contiguous and x.flags.c_contiguous and x.dtype == np.float64):
        # drot would rotate copies: the update would be lost
        raise ValueError("_rank_one_update needs a Fortran-ordered L and a contiguous float x")
    n = L.shape[0]
    rot = blas.drot
    for k in range(start, n):
        lkk = float(L[k, k])
        xk = float(x[k])
        r = math.hypot(lkk, xk)
        L[k, k] = r
        if k + 1 < n:  # the column and x are contiguous: drot rotates them in place
            rot(
                L[:, k],
                x,
                lkk / r,
                xk / r,
                n=n - k - 1,
                offx=k + 1,
                offy=k + 1,
                overwrite_x=1,
                overwrite_y=1,
            )


def _potrs(L: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``(L L^T)^{-1} rhs`` by LAPACK ``potrs`` (``scipy.linalg.cho_solve`` without its
    argument checks, which cost more than the solve for small systems)."""
    rhs = np.asarray(rhs, dtype=float)
    if rhs.shape[0] == 0:
        return rhs.copy()
    x, info = lapack.dpotrs(L, rhs, lower=1)
    if info != 0:  # pragma: no cover - arguments are valid
        raise ValueError(f"LAPACK dpotrs failed (info={info})")
    return x


def _cholesky(H: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of a symmetric positive definite ``H`` (Fortran order, zero upper
    triangle), with diagonal jitter as a last resort.

    ``H = K_SS + diag(1/(C w))`` is positive definite in exact arithmetic; ``potrf`` fails on it
    only when rounding makes it numerically singular (duplicated rows, a very wide width with a
    large C).  A jitter within the backward error of the Cholesky factorisation itself,
    ``(m + 1) m eps max_i H_ii`` (Higham, *Accuracy and Stability of Numerical Algorithms*,
    2nd ed., Thm. 10.3), changes the system by no more than rounding already does: it is
    numerical housekeeping and not warned.  A larger one is a ``RuntimeWarning`` saying what
    it means and what to change."""
    m = H.shape[0]
    jitter, scale = 0.0, max(1.0, float(np.max(np.diag(H)))) if m else 1.0
    # a C-ordered symmetric H is its own transpose, a Fortran-ordered array: copied as is
    src = H.T if H.flags.c_contiguous else H
    for _ in range(8):
        A = np.array(src, dtype=float, order="F", copy=True)
        if jitter:
            A.flat[:: m + 1] += jitter
        L, info = lapack.dpotrf(A, lower=1, clean=1, overwrite_a=1)
        if info == 0:
            break
        jitter = max(jitter * 10.0, 1e-12 * scale)
    else:  # H = K + D, D > 0, is positive definite for a positive semi-definite K
        raise np.linalg.LinAlgError(
            "support-set matrix H = K_SS + diag(1/(C w)) is not positive definite: the "
            "kernel matrix K must be symmetric positive semi-definite"
        )
    if jitter > (m + 1) * m * np.finfo(float).eps * scale:
        warnings.warn(
            f"the SVM's support-vector kernel matrix is singular beyond rounding ({m} support "
            f"vectors; {jitter / scale:.0e} of its diagonal added to factor it): its "
            "leave-one-out values are approximate at this point. Remove duplicated rows, or "
            "lower the upper end of log2_C or log2_sigma so that the search avoids it",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
    return L


@dataclass
class ExtendedFactor:
    """Factorisation of the extended matrix ``M = [[H, 1], [1^T, 0]]`` of a support set.

    ``H`` is symmetric positive definite, so ``M`` is factored through the Cholesky factor of
    ``H`` and the scalar Schur complement ``s = 1^T H^{-1} 1``:

        M^{-1} = [[H^-1 - u u^T / s,  u / s],
                  [u^T / s,          -1 / s]],   u = H^{-1} 1.

    Attributes
    ----------
    chol : (L, True)
        Lower Cholesky factor of ``H`` with its rows and columns in the factor's order
        (``cho_factor`` format; Fortran order, the strict upper triangle zero).
    u : ndarray
        ``H^{-1} 1`` in sorted order.
    s : float
        ``1^T H^{-1} 1``.
    order : ndarray of int or None
        ``order[i]`` is the factor position of the ``i``-th point in sorted order; ``None``
        when the two orders agree (a fresh factorisation).
    index : ndarray of int or None
        The points (sorted) when the factor was made by :meth:`from_block` and can be updated.
    """

    chol: tuple[np.ndarray, bool]
    u: np.ndarray
    s: float
    order: np.ndarray | None = None
    index: np.ndarray | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_H(cls, H: np.ndarray) -> ExtendedFactor:
        """Fresh factorisation of ``H`` (rows and columns in sorted order)."""
        L = _cholesky(H)
        return cls._finish(L, None, None)

    @classmethod
    def from_block(cls, H: np.ndarray, index: np.ndarray) -> ExtendedFactor:
        """Fresh factorisation of ``H = H_full[index, index]`` that remembers ``index`` (sorted
        point indices), so that :meth:`add` and :meth:`remove` can update it."""
        fac = cls.from_H(H)
        fac.index = np.asarray(index).copy()
        return fac

    @classmethod
    def _finish(cls, L, order, index) -> ExtendedFactor:
        m = L.shape[0]
        uf = _potrs(L, np.ones(m))
        u = uf if order is None else uf[order]
        return cls(chol=(L, True), u=u, s=float(uf.sum()), order=order, index=index)

    @property
    def size(self) -> int:
        return self.u.shape[0]

    @property
    def factor_index(self) -> np.ndarray:
        """The points in the factor's order."""
        if self.order is None:
            return self.index
        out = np.empty_like(self.index)
        out[self.order] = self.index
        return out

    # ------------------------------------------------------------------ updates
    def add(self, new: np.ndarray, H_cols: np.ndarray, H_new: np.ndarray) -> ExtendedFactor | None:
        """The factor of the support set with the points ``new`` added, by block bordering.

        Parameters
        ----------
        new : ndarray of int
            Points not in :attr:`index`.
        H_cols : ndarray (m, k)
            ``H[index, new]`` (rows in sorted order).
        H_new : ndarray (k, k)
            ``H[new, new]``.

        Returns
        -------
        ExtendedFactor or None
            None when a new pivot fails the test of the module docstring
            (:data:`UPDATE_PIVOT_TOL`); the caller factors afresh.
        """
        L = self.chol[0]
        m, k = L.shape[0], len(new)
        rows = H_cols if self.order is None else H_cols[np.argsort(self.order)]
        L21t = sla.solve_triangular(L, rows, lower=True, check_finite=False)  # (m, k)
        schur = H_new - L21t.T @ L21t
        d = np.diag(H_new)
        if np.any(np.diag(schur) <= UPDATE_PIVOT_TOL * d):
            return None
        L22, info = lapack.dpotrf(np.asfortranarray(schur), lower=1, clean=1)
        if info != 0 or np.any(np.diag(L22) ** 2 <= UPDATE_PIVOT_TOL * d):
            return None
        Lnew = np.zeros((m + k, m + k), order="F")
        Lnew[:m, :m] = L
        Lnew[m:, :m] = L21t.T
        Lnew[m:, m:] = L22
        fidx = np.concatenate([self.factor_index, np.asarray(new)])
        return self._from_factor_order(Lnew, fidx)

    def remove(self, points: np.ndarray) -> ExtendedFactor:
        """The factor of the support set without ``points`` (a subset of :attr:`index`).

        With ``keep`` the remaining factor positions, ``H[keep, keep] = L[keep, keep]
        L[keep, keep]^T + sum_p L[keep, p] L[keep, p]^T`` over the removed positions ``p``,
        and ``L[keep, keep]`` is lower triangular: one compaction, then one Givens rank-one
        update of the trailing block per removed point (each column ``L[keep, p]`` is zero
        above the first kept position after ``p``).
        """
        L = self.chol[0]
        fidx = self.factor_index
        gone = np.isin(fidx, points)
        keep = np.flatnonzero(~gone)
        pos = np.flatnonzero(gone)
        Lt = L.T  # C-ordered view of the Fortran-ordered factor
        Lk = Lt[np.ix_(keep, keep)].T  # one copy, Fortran order
        X = L[np.ix_(keep, pos)]
        starts = np.searchsorted(keep, pos)
        for j, q in enumerate(starts):
            if q < keep.size:
                _rank_one_update(Lk, np.ascontiguousarray(X[:, j]), q)
        return self._from_factor_order(Lk, fidx[keep])

    @classmethod
    def _from_factor_order(cls, L: np.ndarray, fidx: np.ndarray) -> ExtendedFactor:
        order = np.argsort(fidx, kind="stable")  # factor position of each sorted point
        sorted_already = bool(np.all(order == np.arange(order.size)))
        return cls._finish(L, None if sorted_already else order, fidx[order])

    # ------------------------------------------------------------------ solves and inverses
    def solve_H(self, rhs: np.ndarray) -> np.ndarray:
        """``H^{-1} rhs`` (rows of ``rhs`` in sorted order)."""
        if self.order is None:
            return _potrs(self.chol[0], rhs)
        inv = np.argsort(self.order)
        return _potrs(self.chol[0], np.asarray(rhs)[inv])[self.order]

    def solve(self, rhs_top: np.ndarray, rhs_last: float | np.ndarray = 0.0):
        """Solve ``M [x; z] = [rhs_top; rhs_last]``; returns ``(x, z)``."""
        h = self.solve_H(rhs_top)
        z = (np.ones(self.size) @ h - rhs_last) / self.s
        if np.ndim(h) == 2:
            x = h - np.outer(self.u, z)
        else:
            x = h - self.u * z
        return x, z

    def inverse(self) -> np.ndarray:
        """The full ``(m+1) x (m+1)`` inverse of ``M`` (sorted order).

        ``H^{-1}`` from the lower Cholesky factor by LAPACK ``potri`` (``2/3 m^3`` flops, a
        third of solving against the identity), which writes the lower triangle only.
        """
        m = self.size
        out = np.empty((m + 1, m + 1))
        if m:
            Hinv, info = lapack.dpotri(self.chol[0], lower=1)
            if info != 0:  # pragma: no cover - the factor is non-singular
                raise np.linalg.LinAlgError(f"LAPACK dpotri failed (info={info})")
            Hinv = mirror_lower(Hinv)  # the factor's upper triangle is zero
            if self.order is not None:
                Hinv = Hinv[np.ix_(self.order, self.order)].T  # symmetric: Fortran order
            # H^{-1} - u u^T / s in place (BLAS ger)
            Hinv = blas.dger(-1.0 / self.s, self.u, self.u, a=Hinv, overwrite_a=1)
            out[:m, :m] = Hinv
        out[:m, m] = out[m, :m] = self.u / self.s
        out[m, m] = -1.0 / self.s
        return out

    def inverse_diagonal(self) -> np.ndarray:
        """``(M^{-1})_ii`` for the ``m`` support vectors (not the bias entry), sorted order.

        ``(H^{-1})_ii = ||L^{-1} e_i||^2`` with ``L^{-1}`` from LAPACK ``trtri`` (``m^3 / 3``
        flops).
        """
        if self.size == 0:
            return np.zeros(0)
        Linv, info = lapack.dtrtri(self.chol[0], lower=1)
        if info != 0:  # pragma: no cover - the factor is non-singular
            raise np.linalg.LinAlgError(f"LAPACK dtrtri failed (info={info})")
        dg = np.einsum("ij,ij->j", Linv, Linv)
        if self.order is not None:
            dg = dg[self.order]
        return dg - self.u**2 / self.s


# ---------------------------------------------------------------------------------------------
# The same matrix with a low-rank H (Woodbury)
# ---------------------------------------------------------------------------------------------
@dataclass
class WoodburyFactor:
    """``M = [[Z_S Z_S^T + diag(d_S), 1], [1^T, 0]]`` through the Woodbury identity.

    Same interface as :class:`ExtendedFactor` (``solve``, ``solve_H``,
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
        # D^-1 Z A^-T/2, in Zd's place; F is then kept as a view of E (one |S| x m array)
        F = sla.solve_triangular(Lc, Zd.T, lower=True, check_finite=False, overwrite_b=True).T
        u = 1.0 / dS - F @ F.sum(axis=0)
        s = float(u.sum())
        E = np.empty((F.shape[0], m + 1))
        E[:, :m] = F
        E[:, m] = u / np.sqrt(s)
        return cls(dS=dS, F=E[:, :m], u=u, s=s, E=E)

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
