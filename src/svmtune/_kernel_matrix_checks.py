"""The one check of a kernel matrix handed to a solver or a closed form (issue #55).

The public functions of :mod:`svmtune.svm` and :mod:`svmtune.loo` that take a training
kernel matrix ``K`` check it here, once, at their door (the enclosing balls,
:func:`svmtune.loo.sphere.enclosing_ball` and ``span_bounds.xi_alpha_radius2``, keep checks of
their own, which also ask for symmetry); the searches and the referee, which
build ``K`` themselves (:func:`svmtune.kernels.rbf_from_sqdist` of checked distances), call
the private unchecked kernels of those functions instead, so that no objective evaluation
repeats this ``O(n^2)`` pass.  Positive semi-definiteness is left to the factorisations.
"""

from __future__ import annotations

import numpy as np

from svmtune.kernels import KernelColumns

__all__ = ["TRAINED", "all_finite", "check_kernel_matrix"]

#: ``what`` of the closed forms that take a fitted solution and its kernel matrix
TRAINED = "the model was trained on"


def check_kernel_matrix(
    K: np.ndarray | KernelColumns, n: int, *, what: str | None = None
) -> np.ndarray | KernelColumns:
    """``K`` as a float array after checking that it is a finite ``(n, n)`` kernel matrix.

    A :class:`svmtune.kernels.KernelColumns` is returned unchanged after its shape is
    checked: its values are computed on demand (and checked as they are), so reading them
    all here would cost a fit.  The finiteness test sums ``K`` first and scans it entry by
    entry only when the sum is not finite, so a finite ``K`` costs one pass and no ``n x n``
    temporary.

    Parameters
    ----------
    K : array-like (n, n) or KernelColumns
    n : int
        The number of training points (of the labels, or of the fitted solution).
    what : str, optional
        How the caller knows ``n``, e.g. :data:`TRAINED` for a fitted solution: the shape
        error then names it and asks for the kernel matrix the model was trained on.

    Returns
    -------
    ndarray (n, n) of float or KernelColumns

    Raises
    ------
    ValueError
        If ``K`` is not ``(n, n)`` or holds NaN or infinity.
    """
    columns = isinstance(K, KernelColumns)
    if not columns:
        K = np.asarray(K, dtype=float)
    if K.shape != (n, n):
        hint = (
            ""
            if what is None
            else f"; {what} {n} samples: pass the kernel matrix the solution was fitted on"
        )
        raise ValueError(f"K has shape {K.shape}, expected ({n}, {n}){hint}")
    if not columns and not all_finite(K):
        raise ValueError(
            "K contains NaN or infinity; the kernel matrix must be finite (check the "
            "features and kernel parameters it was computed from)"
        )
    return K


def all_finite(A: np.ndarray) -> bool:
    """Whether every entry of the float array ``A`` is finite: its sum first (one pass, no
    temporary of ``A``'s size), entry by entry only when the sum is not finite (an overflow
    of finite entries, or a NaN or infinity)."""
    return bool(np.isfinite(A.sum()) or np.all(np.isfinite(A)))
