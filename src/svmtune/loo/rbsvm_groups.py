"""Leave-one-group-out outputs of the L2-SVM in closed form, and their exact gradient.

Beyond the RBSVM paper: the block version of its eq. (27), so that RBSVM can hold out whole
groups (the rows of one subject, patient or stretch of a series) instead of single rows.

Notation as in :mod:`svmtune.loo.rbsvm`: on the support set ``S`` (``m`` points) the L2-SVM
solves ``M x = [y_S; 0]`` with ``x = [beta; b]``, ``M = [[H_SS, 1], [1^T, 0]]``,
``H = K + diag(1/(C w))``, and ``P = M^{-1}``.  For a group ``G`` write ``g`` for the positions
of its support vectors in ``S`` and ``R`` for the other rows of the system (the remaining support
vectors and ``b``).

**Outputs.**  If removing the group leaves the other points' support status unchanged, the
reduced model solves ``M_RR x'_R = [y_{S-G}; 0]``.  From ``M_RR x_R + M_Rg beta_g = r_R`` and the
block inverse ``M_RR^{-1} M_Rg = -P_Rg P_gg^{-1}``,

    x^(-G) = x - P[:, g] P_gg^{-1} beta_g        (zero at ``g``: the padded reduced solution)

and every row ``j`` of the group, support vector or not, gets the reduced model's output

    r_j = [K_jS, 1] x^(-G).

For a support vector this equals ``y_g - P_gg^{-1} beta_g``, which for a group of one is
RBSVM eq. (27), ``y_i - beta_i / P_ii``.  A group without support vectors leaves the model
unchanged (``x^(-G) = x``): its rows get the full model's outputs, as single non-support
vectors do in :func:`svmtune.loo.closed_form.closed_form_loo`.

**Gradient.**  ``x^(-G)`` solves the reduced system, so for a fixed support set
``dx^(-G) = -Q_G dM x^(-G)`` with ``Q_G = P - P[:, g] P_gg^{-1} P[g, :]`` (``M_RR^{-1}``
padded with zeros).  With ``c_j = dJ/dr_j``, ``a_G = sum_{j in G} c_j [K_jS; 1]`` and
``z_G = Q_G a_G``,

    dJ = sum_j c_j dK_jS x^(-G_j)_S  -  <dH_SS, sum_G z_G,S x^(-G)_S^T>.

The first sum costs ``O(n m)`` per hyperparameter; the matrix of the second is built once per
step (``O(m^2)`` per group with support vectors, all groups without support vectors sharing one
term), after which each hyperparameter costs ``O(m^2)``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from svmtune._dual_solution import DualSolution, check_derivative, check_l2_solution, support_system
from svmtune._kernel_matrix_checks import TRAINED, check_kernel_matrix
from svmtune._loo_losses import check_group_nonsupport
from svmtune._validation import validate_groups
from svmtune._warnings import user_stacklevel
from svmtune.kernels import KernelColumns, kernel_columns
from svmtune.lowrank import lowrank_support_system

__all__ = [
    "closed_form_lgo",
    "group_codes",
    "lgo_exact_mask",
    "lgo_gradient",
    "objective_codes",
]


def group_codes(groups, n: int) -> np.ndarray:
    """Integer codes ``0..G-1`` of ``n`` group labels
    (:func:`svmtune._validation.validate_groups`).

    Raises
    ------
    ValueError
        If ``groups`` is None, does not hold one label per point or misses a label.
    """
    codes = validate_groups(groups, n)
    if codes is None:
        raise ValueError("groups is None: pass one group label per point")
    return codes


def objective_codes(groups, n: int, nonsupport: str) -> np.ndarray | None:
    """The group codes an RBSVM objective takes (:func:`group_codes`), or None without
    ``groups``; ``nonsupport`` must then be ``"model"``
    (:func:`svmtune._loo_losses.check_group_nonsupport`).

    The ``O(n)`` encoding of the objectives' doors (:func:`svmtune.loo.rbsvm.rbsvm_objective`,
    :func:`svmtune.loo.rbsvm_lowrank.lowrank_rbsvm_objective`) and of the searches' entries,
    which hand the codes to the unchecked kernels at each evaluation (issue #55).
    """
    if groups is None:
        return None
    check_group_nonsupport(nonsupport)
    return group_codes(groups, n)


@dataclass
class _Reduced:
    """The reduced solutions ``x^(-G)`` of the groups that hold support vectors."""

    x: np.ndarray  # (m+1,) full solution [beta; b]
    groups: np.ndarray  # (k,) codes of the groups with support vectors
    loc: list[np.ndarray]  # per such group: positions of its support vectors in S
    X: np.ndarray  # (m+1, k): x^(-G) per such group (zero column for a degenerate group)
    chol: list  # per such group: Cholesky factor of P_gg (None if degenerate)


def _cho(A: np.ndarray):
    """Cholesky factor of a small symmetric block of ``P``, or None if it is not positive
    definite in floating point."""
    try:
        return sla.cho_factor(A, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None


def _sv_groups(codes: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The codes of the groups that hold support vectors, and for each the positions of its
    support vectors in ``S``."""
    groups = np.unique(codes[S])
    return groups, _rows_by_group(codes[S], groups)


def _block_factors(groups: np.ndarray, loc: list[np.ndarray], m: int, block) -> list[tuple | None]:
    """Cholesky factors of the blocks ``P_gg = block(g)`` (None for a group whose removal
    leaves no support vector, or a block not positive definite in floating point; warned)."""
    chol = [None if g.size == m else _cho(block(g)) for g in loc]
    degenerate = [int(c) for c, f in zip(groups, chol) if f is None]
    if degenerate:
        warnings.warn(
            f"removing group(s) {degenerate[:5]} removes every support vector of the model (or "
            "leaves a numerically singular system), so the closed form cannot predict their "
            "rows; their leave-one-group-out outputs are set to 0 (no information). Use more, "
            "smaller groups",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )
    return chol


def _reduced(sol: DualSolution, codes: np.ndarray, P: np.ndarray) -> _Reduced:
    S, beta, b = support_system(sol)
    m = S.size
    x = np.append(beta, b)
    groups, loc = _sv_groups(codes, S)
    chol = _block_factors(groups, loc, m, lambda g: P[np.ix_(g, g)])
    X = np.zeros((m + 1, groups.size))
    for k, (g, fac) in enumerate(zip(loc, chol)):
        if fac is not None:
            X[:, k] = x - P[:, g] @ sla.cho_solve(fac, beta[g], check_finite=False)
    return _Reduced(x=x, groups=groups, loc=loc, X=X, chol=chol)


def _rows_by_group(codes: np.ndarray, groups: np.ndarray) -> list[np.ndarray]:
    """Row indices of each group in ``groups``."""
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    lo = np.searchsorted(sorted_codes, groups, side="left")
    hi = np.searchsorted(sorted_codes, groups, side="right")
    return [order[a:z] for a, z in zip(lo, hi)]


def _outputs(
    F: np.ndarray, A: np.ndarray, codes: np.ndarray, red: _Reduced
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Outputs ``F_j a + b`` of every row under its group's model, and the rows of the groups
    with support vectors.  ``F`` (n x p) and ``A`` (p x (1 + groups)) factor ``K_NS x``:
    ``F = K[:, S]``, ``A = [x; x^(-G)...]_S`` exactly, or ``F = Z``, ``A = Z_S^T [...]_S``
    on a Nystroem kernel; the first column is the full model."""
    m = red.x.size - 1
    r = F @ A[:, 0] + red.x[m]
    rows = _rows_by_group(codes, red.groups)
    for k, idx in enumerate(rows):
        r[idx] = 0.0 if red.chol[k] is None else F[idx] @ A[:, k + 1] + red.X[m, k]
    return r, rows


def _states(red: _Reduced) -> np.ndarray:
    """``[x, x^(-G)...]`` restricted to ``S``: the full and the reduced solutions' ``beta``."""
    m = red.x.size - 1
    return np.column_stack([red.x[:m], red.X[:m]])


def _plain_and_live(
    c: np.ndarray, red: _Reduced, rows: list[np.ndarray]
) -> tuple[np.ndarray, list[int]]:
    """``c`` at the rows whose group holds no support vector (0 elsewhere: they keep the full
    model) and the indices of the groups with a reduced model (not degenerate)."""
    cp = c.copy()
    for idx in rows:
        cp[idx] = 0.0
    return cp, [k for k in range(red.groups.size) if red.chol[k] is not None]


def _prepare(sol, K, groups, inverse):
    check_l2_solution(sol)
    n = sol.y.shape[0]
    K = check_kernel_matrix(K, n, what=TRAINED)
    codes = group_codes(groups, n)
    P = sol.factor.inverse() if inverse is None else np.asarray(inverse, dtype=float)
    return K, codes, P


def closed_form_lgo(
    sol: DualSolution,
    K: np.ndarray | KernelColumns,
    groups,
    *,
    inverse: np.ndarray | None = None,
) -> np.ndarray:
    """Leave-one-group-out decision values of an L2-SVM without retraining.

    The block version of RBSVM eq. (27) (module docstring): every row of a group gets the
    output of the model trained without the group, exact when removing the group leaves the
    other points' support status unchanged.

    Parameters
    ----------
    sol : DualSolution
        From :func:`svmtune.svm.fit_l2_svm` (its ``factor`` is reused).
    K : ndarray (n, n) or KernelColumns
        The kernel matrix the SVM was trained on (read at the support columns only).
    groups : array-like (n,)
        A group label per point.  Groups of one point give
        :func:`svmtune.loo.closed_form.closed_form_loo`.
    inverse : ndarray (m+1, m+1), optional
        ``M^{-1}`` if already computed.

    Returns
    -------
    ndarray of shape (n,)
        Rows of a group whose removal leaves no support vector get 0, with a warning.

    Raises
    ------
    ValueError
        If ``sol`` is not an L2-SVM solution, ``K`` not its ``(n, n)`` finite kernel matrix
        or ``groups`` not one label per point.
    """
    K, codes, P = _prepare(sol, K, groups, inverse)
    return _lgo_terms(sol, K, codes, P)[0]


def lgo_exact_mask(
    sol: DualSolution,
    K: np.ndarray | KernelColumns,
    groups,
    *,
    tol: float = 1e-8,
    inverse: np.ndarray | None = None,
) -> np.ndarray:
    """Rows whose closed-form leave-one-group-out output is provably the exact one.

    The reduced solution ``x^(-G)`` (module docstring) is the L2-SVM trained without the
    group iff it satisfies the KKT conditions of that problem: ``y_j beta'_j >= 0`` at the
    remaining support vectors and ``y_j f'(x_j) >= 1`` at the non-support vectors outside the
    group (:func:`svmtune.loo.closed_form.loo_exact_mask` for groups of one).  Checking every group
    costs ``O(n m)`` per group that holds support vectors; no retraining.  A group without
    support vectors is always exact; one whose removal leaves no support vector never is.

    Parameters
    ----------
    sol, K, groups, inverse
        As in :func:`closed_form_lgo`.
    tol : float
        KKT tolerance (that of the solver).

    Returns
    -------
    ndarray of bool, shape (n,)
        True at every row of a certified group.
    """
    K, codes, P = _prepare(sol, K, groups, inverse)
    y = sol.y
    S = np.flatnonzero(sol.support)
    m = S.size
    red = _reduced(sol, codes, P)
    rows = _rows_by_group(codes, red.groups)
    N = np.flatnonzero(~sol.support & np.isfinite(sol.H_diag))
    KNS = kernel_columns(K, S)[N] if N.size else np.empty((0, m))
    # y_j beta'_j >= 0 at the remaining support vectors (zero at the group's own)
    ok = np.all(y[S][:, None] * red.X[:m] >= -tol, axis=0)
    for lo in range(0, red.groups.size, 256):  # y_j f'(x_j) >= 1 off S, 256 groups at a time
        cols = slice(lo, lo + 256)
        margin = y[N][:, None] * (KNS @ red.X[:m, cols] + red.X[m, cols])
        margin[codes[N][:, None] == red.groups[None, cols]] = np.inf  # the group's own rows
        ok[cols] &= np.all(margin >= 1.0 - tol, axis=0)
    exact = np.ones(y.shape[0], dtype=bool)
    for k, idx in enumerate(rows):
        exact[idx] = bool(ok[k]) and red.chol[k] is not None
    return exact


def lgo_gradient(
    sol: DualSolution,
    K: np.ndarray | KernelColumns,
    dH: Sequence[np.ndarray],
    dLdr: np.ndarray,
    groups,
    *,
    inverse: np.ndarray | None = None,
) -> np.ndarray:
    """Exact gradient of ``sum_j c_j r_j`` over the leave-one-group-out outputs, support set
    fixed (module docstring).

    Parameters
    ----------
    sol, K, inverse
        As in :func:`closed_form_lgo`.
    dH : sequence of arrays
        One derivative per hyperparameter, as in
        :func:`svmtune.loo.rbsvm_gradient.loo_gradient`: the ``(n, m)`` support columns of
        ``dK`` (whose rows at ``S`` are ``dH_SS``) or an ``(m,)`` derivative of the diagonal of
        ``H_SS`` alone (``d/dlog C``).
    dLdr : array (n,)
        ``c_j = dJ/dr_j``.
    groups : array-like (n,)

    Returns
    -------
    ndarray of shape (len(dH),)
    """
    K, codes, P = _prepare(sol, K, groups, inverse)
    n = sol.y.shape[0]
    c = np.asarray(dLdr, dtype=float)
    if c.shape != (n,):
        raise ValueError(f"dLdr has shape {c.shape}; expected ({n},), one derivative per point")
    return _lgo_gradient(sol, K, dH, c, codes, P)


def _lgo_gradient(
    sol: DualSolution,
    K: np.ndarray | KernelColumns,
    dH: Sequence[np.ndarray],
    c: np.ndarray,
    codes: np.ndarray,
    P: np.ndarray,
    red: _Reduced | None = None,
    rows: list[np.ndarray] | None = None,
) -> np.ndarray:
    """:func:`lgo_gradient` on checked inputs (``red``/``rows`` reused from the outputs)."""
    n = sol.y.shape[0]
    S = np.flatnonzero(sol.support)
    m = S.size
    KS = kernel_columns(K, S)
    if red is None:
        red = _reduced(sol, codes, P)
    if rows is None:
        rows = _rows_by_group(codes, red.groups)
    cp, live = _plain_and_live(c, red, rows)
    a0 = np.append(KS.T @ cp, cp.sum())  # sum of a_G over the groups without support vectors
    W = np.outer((P @ a0)[:m], red.x[:m])
    if live:
        A = np.empty((m + 1, len(live)))
        for j, k in enumerate(live):
            idx = rows[k]
            A[:m, j] = KS[idx].T @ c[idx]
            A[m, j] = c[idx].sum()
        Z = P @ A
        for j, k in enumerate(live):
            g = red.loc[k]
            Z[:, j] -= P[:, g] @ sla.cho_solve(red.chol[k], Z[g, j], check_finite=False)
        W += Z[:m] @ red.X[:m, live].T
    out = np.empty(len(dH))
    for h, D in enumerate(dH):
        D = check_derivative(D, n, m)
        if D.ndim == 1:
            out[h] = -float(D @ np.diag(W))
            continue
        val = float(cp @ (D @ red.x[:m])) - float(np.sum(D[S] * W))
        for k in live:
            idx = rows[k]
            val += float(c[idx] @ (D[idx] @ red.X[:m, k]))
        out[h] = val
    return out


def _lgo_terms(
    sol: DualSolution, K: np.ndarray | KernelColumns, codes: np.ndarray, P: np.ndarray
) -> tuple[np.ndarray, _Reduced, list[np.ndarray]]:
    """Outputs and the by-products :func:`_lgo_gradient` reuses (for
    :func:`svmtune.loo.rbsvm.rbsvm_objective`)."""
    S = np.flatnonzero(sol.support)
    red = _reduced(sol, codes, P)
    r, rows = _outputs(kernel_columns(K, S), _states(red), codes, red)
    return r, red, rows


# ---------------------------------------------------------------------------------------------
# The same on a Nystroem kernel K~ = Z Z^T (svmtune.lowrank): O(|S| m) per group, no S x S matrix
# ---------------------------------------------------------------------------------------------
def _reduced_lowrank(sol: DualSolution, codes: np.ndarray) -> _Reduced:
    """:func:`_reduced` through the Woodbury factor: ``P_gg = B_gg = diag(1/d_g) - E_g E_g^T``
    and ``P[:, g] u = M^{-1} [E_g u; 0]``, one batched solve for all groups."""
    S, beta, b = lowrank_support_system(sol)
    fac = sol.factor
    m = S.size
    x = np.append(beta, b)
    groups, loc = _sv_groups(codes, S)
    chol = _block_factors(
        groups, loc, m, lambda g: np.diag(1.0 / fac.dS[g]) - fac.E[g] @ fac.E[g].T
    )
    U = np.zeros((m, groups.size))
    for k, (g, f) in enumerate(zip(loc, chol)):
        if f is not None:
            U[g, k] = sla.cho_solve(f, beta[g], check_finite=False)
    top, last = fac.solve(U, np.zeros(groups.size))
    X = x[:, None] - np.vstack([top, last])
    X[:, [f is None for f in chol]] = 0.0
    return _Reduced(x=x, groups=groups, loc=loc, X=X, chol=chol)


def lowrank_lgo(sol: DualSolution, Z: np.ndarray, groups) -> np.ndarray:
    """Leave-one-group-out outputs of the L2-SVM on ``K~ = Z Z^T`` (:func:`closed_form_lgo`
    through the Woodbury factor of :func:`svmtune.lowrank.fit_l2_svm_lowrank`).

    ``O(n m)`` plus ``O(|g|^2 m)`` per group that holds support vectors ``g`` (``m`` the rank).
    """
    Z = np.asarray(Z, dtype=float)
    return _lowrank_lgo_terms(sol, Z, group_codes(groups, Z.shape[0]))[0]


def _lowrank_lgo_terms(sol: DualSolution, Z: np.ndarray, codes: np.ndarray):
    """Outputs and the by-products :func:`_lowrank_lgo_gradient` reuses."""
    red = _reduced_lowrank(sol, codes)
    r, rows = _outputs(Z, Z[sol.support].T @ _states(red), codes, red)
    return r, red, rows


def lowrank_lgo_gradient(sol: DualSolution, nf, dLdr: np.ndarray, groups) -> np.ndarray:
    """Exact ``dJ / d(log sigma, log C)`` over the low-rank leave-one-group-out outputs, for a
    fixed support set and fixed landmarks (:func:`lgo_gradient` on ``K~``; the contraction
    with ``dK~`` as in :func:`svmtune.loo.rbsvm_lowrank.lowrank_loo_gradient`).

    Parameters
    ----------
    sol : DualSolution
        From :func:`svmtune.lowrank.fit_l2_svm_lowrank` on ``nf.Z``.
    nf : NystroemFactor
    dLdr : array (n,)
    groups : array-like (n,)

    Returns
    -------
    ndarray (2,)
    """
    n = nf.Z.shape[0]
    codes = group_codes(groups, n)
    c = np.asarray(dLdr, dtype=float)
    if c.shape != (n,):
        raise ValueError(f"dLdr has shape {c.shape}; expected ({n},), one derivative per point")
    red = _reduced_lowrank(sol, codes)
    return _lowrank_lgo_gradient(sol, nf, c, codes, red, _rows_by_group(codes, red.groups))


def _lowrank_lgo_gradient(sol, nf, c, codes, red: _Reduced, rows) -> np.ndarray:
    """``dJ = <dK~, Gamma> + d_C`` with ``Gamma_{j,S} = c_j x^(-G_j)_S^T - [j in S] W_j``,
    ``W = sum_G z_G,S x^(-G)_S^T`` (module docstring), formed only through ``Gamma G^T``
    and ``Gamma^T G^T`` (``n x m``)."""
    Z, GT = nf.Z, nf.G_T
    S = np.flatnonzero(sol.support)
    m = S.size
    fac = sol.factor
    ZS, GS = Z[S], GT[S]
    cp, live = _plain_and_live(c, red, rows)
    # states: the full solution (rows of groups without support vectors) and x^(-G) per group
    Xs = np.column_stack([red.x, red.X[:, live]])  # (m+1, 1+L)
    # a_G = [Z_S Z_G^T c_G; sum c_G]; z_G = Q_G a_G
    ZC = np.column_stack([Z.T @ cp] + [Z[rows[k]].T @ c[rows[k]] for k in live])
    csum = np.array([cp.sum()] + [c[rows[k]].sum() for k in live])
    Ytop, _ = fac.solve(ZS @ ZC, csum)
    corr = np.zeros((m, len(live)))
    for j, k in enumerate(live):
        g = red.loc[k]
        corr[g, j] = sla.cho_solve(red.chol[k], Ytop[g, j + 1], check_finite=False)
    if live:
        ctop, _ = fac.solve(corr, np.zeros(len(live)))
        Ytop[:, 1:] -= ctop
    Zm = Ytop  # z_G restricted to S, one column per state
    # Gamma G^T: rows j get c_j G_S^T x^(-G_j); rows in S lose (W G_S)
    GX = GS.T @ Xs[:m]  # (rank, 1+L)
    ZW = cp[:, None] * GX[:, 0][None, :]
    CG = np.column_stack([GT.T @ cp] + [GT[rows[k]].T @ c[rows[k]] for k in live])
    for j, k in enumerate(live):
        idx = rows[k]
        ZW[idx] += c[idx][:, None] * GX[:, j + 1][None, :]
    ZW[S] -= Zm @ GX.T
    # Gamma^T G^T: only rows in S
    WT = Xs[:m] @ CG.T - Xs[:m] @ (Zm.T @ GS)
    P, Q = nf.dlogsigma()
    d_sigma = float(np.sum(P * ZW)) + float(np.sum(P[S] * WT)) - float(np.sum(Q * (GT.T @ ZW)))
    d_C = float(np.sum(sol.H_diag[S] * np.einsum("ij,ij->i", Zm, Xs[:m])))
    return np.array([d_sigma, d_C])
