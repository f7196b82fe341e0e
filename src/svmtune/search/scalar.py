"""One-dimensional maximisation: a coarse grid scan, then golden section (or Brent) inside.

Used for the RBF width on ``log2 sigma`` (ESDR-CV, LD: LD Sec. 5.3 uses golden section) and for
``log2 C`` in the cheaper C search.  The grid scan comes first so that a local maximum (e.g. the
spurious one of LD's plain distance at tiny sigma, LD Sec. 4) cannot capture the search: the
refinement only ever works inside the bracket ``[x_{i-1}, x_{i+1}]`` around the best grid point.
Every function counts its objective evaluations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize_scalar

from svmtune._option_values import check_int_option, check_positive

__all__ = [
    "REFINES",
    "ScalarSearch",
    "golden_section_max",
    "grid_then_refine_max",
    "first_crossing",
]

REFINES = ("golden", "brent", "none")
_INVPHI = (math.sqrt(5.0) - 1.0) / 2.0  # 0.618...
_INVPHI2 = 1.0 - _INVPHI  # 0.382...


@dataclass
class ScalarSearch:
    """Result of :func:`grid_then_refine_max` / :func:`first_crossing`.

    Attributes
    ----------
    x, fun : float
        Best point and its value.
    n_evals : int
        Objective evaluations, grid points included.
    grid, grid_values : ndarray
        The scan.
    bracket : (float, float)
        Interval the refinement worked in.
    xs, fs : ndarray
        Every evaluated point and value, in order (grid first).
    converged : bool
        The refinement reached ``xtol`` within ``max_evals``.
    method : str
    """

    x: float
    fun: float
    n_evals: int
    grid: np.ndarray
    grid_values: np.ndarray
    bracket: tuple[float, float]
    xs: np.ndarray
    fs: np.ndarray
    converged: bool
    method: str
    info: dict = field(default_factory=dict)


def _clean(v) -> float:
    v = float(v)
    return v if not math.isnan(v) else -math.inf


def _check_tol(xtol, max_evals) -> None:
    check_positive("xtol", xtol)
    check_int_option("max_evals", max_evals, minimum=1)


def golden_section_max(
    f: Callable[[float], float],
    a: float,
    b: float,
    *,
    c: float | None = None,
    fc: float | None = None,
    xtol: float = 1e-3,
    max_evals: int = 200,
) -> tuple[float, float, list[tuple[float, float]], bool]:
    """Maximise ``f`` on ``[a, b]`` by golden-section search.

    If an interior point ``c`` with known value ``fc`` is given (a bracket ``f(c) >= f(a),
    f(b)`` from a scan), it is reused as the first interior point (Numerical Recipes'
    ``golden``); otherwise the two golden points of ``[a, b]`` start the search.  Stops when the
    interval is shorter than ``xtol`` or after ``max_evals`` new evaluations.

    Returns
    -------
    x, fx : best point evaluated and its value
    evals : list of (x, f(x)) for every new evaluation, in order
    converged : bool
    """
    _check_tol(xtol, max_evals)
    if not (np.isfinite(a) and np.isfinite(b)):
        raise ValueError(f"the interval [a, b] must have finite ends, got a={a!r}, b={b!r}")
    a, b = float(min(a, b)), float(max(a, b))
    evals: list[tuple[float, float]] = []

    def F(x: float) -> float:
        v = _clean(f(x))
        evals.append((x, v))
        return v

    if c is not None and a < c < b and fc is not None:
        x0, x3 = a, b
        if b - c > c - a:
            x1, f1 = float(c), _clean(fc)
            x2 = x1 + _INVPHI2 * (b - x1)
            f2 = F(x2)
        else:
            x2, f2 = float(c), _clean(fc)
            x1 = x2 - _INVPHI2 * (x2 - a)
            f1 = F(x1)
    else:
        x0, x3 = a, b
        x1 = a + _INVPHI2 * (b - a)
        x2 = a + _INVPHI * (b - a)
        f1, f2 = F(x1), F(x2)
    while x3 - x0 > xtol and len(evals) < max_evals:
        if f2 > f1:
            x0, x1, f1 = x1, x2, f2
            x2 = x1 + _INVPHI2 * (x3 - x1)
            f2 = F(x2)
        else:
            x3, x2, f2 = x2, x1, f1
            x1 = x2 - _INVPHI2 * (x2 - x0)
            f1 = F(x1)
    converged = x3 - x0 <= xtol
    x, fx = (x1, f1) if f1 >= f2 else (x2, f2)
    return x, fx, evals, converged


def _scan(f, grid, f_grid):
    grid = np.asarray(grid, dtype=float)
    if grid.ndim != 1 or grid.size < 2:
        raise ValueError(f"the scan grid needs at least 2 points, got shape {grid.shape}")
    if not np.all(np.isfinite(grid)) or np.any(np.diff(grid) <= 0):
        raise ValueError("the scan grid must be finite and strictly increasing")
    if f_grid is not None:
        vals = np.asarray(f_grid(grid), dtype=float)
        if vals.shape != grid.shape:
            raise ValueError(f"f_grid returned shape {vals.shape}, expected {grid.shape}")
    else:
        vals = np.array([f(float(x)) for x in grid], dtype=float)
    return grid, np.where(np.isnan(vals), -np.inf, vals)


def grid_then_refine_max(
    f: Callable[[float], float],
    grid,
    *,
    f_grid: Callable[[np.ndarray], np.ndarray] | None = None,
    refine: str = "golden",
    xtol: float = 1e-2,
    max_evals: int = 100,
) -> ScalarSearch:
    """Maximise ``f`` by a grid scan and a refinement inside the bracket of the best grid point.

    Parameters
    ----------
    f : callable x -> float
        Objective for single points (NaN counts as -inf).
    grid : array
        Strictly increasing scan points (e.g. log2 sigma).
    f_grid : callable array -> array, optional
        Vectorised objective for the scan (one call; counted as ``len(grid)`` evaluations).
    refine : {"golden", "brent", "none"}
        Golden section reusing the best grid point as its first interior point, scipy's bounded
        Brent method (``xatol=xtol``), or no refinement.  Ties in the scan go to the smallest x.
        If the best grid point is an end point, the bracket is the half-step next to it.
    xtol : float
        Final bracket length.
    max_evals : int
        Cap on refinement evaluations.

    Returns
    -------
    ScalarSearch
        ``x`` is the best point evaluated (never worse than the best grid point).
    """
    if refine not in REFINES:
        raise ValueError(f"refine must be one of {REFINES}, got {refine!r}")
    _check_tol(xtol, max_evals)
    grid, vals = _scan(f, grid, f_grid)
    i = int(np.argmax(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    xs, fs = list(grid), list(vals)
    converged = True
    if refine == "golden":
        interior = 0 < i < grid.size - 1
        x, fx, evals, converged = golden_section_max(
            f,
            lo,
            hi,
            c=grid[i] if interior else None,
            fc=vals[i] if interior else None,
            xtol=xtol,
            max_evals=max_evals,
        )
        for xe, fe in evals:
            xs.append(xe)
            fs.append(fe)
    elif refine == "brent":
        count = [0]

        def neg(x):
            count[0] += 1
            v = _clean(f(float(x)))
            xs.append(float(x))
            fs.append(v)
            return -v

        res = minimize_scalar(
            neg, bounds=(lo, hi), method="bounded", options={"xatol": xtol, "maxiter": max_evals}
        )
        converged = bool(res.success)
    best = int(np.argmax(fs))
    return ScalarSearch(
        x=float(xs[best]),
        fun=float(fs[best]),
        n_evals=len(xs),
        grid=grid,
        grid_values=vals,
        bracket=(float(lo), float(hi)),
        xs=np.asarray(xs),
        fs=np.asarray(fs),
        converged=bool(converged),
        method=refine,
    )


def first_crossing(
    f: Callable[[float], float],
    grid,
    level: float,
    *,
    grid_values=None,
    f_grid: Callable[[np.ndarray], np.ndarray] | None = None,
    xtol: float = 1e-2,
    max_evals: int = 100,
) -> ScalarSearch:
    """Smallest ``x`` at which ``f`` reaches ``level``: first grid point, then bisection.

    The first grid point ``x_i`` with ``f(x_i) >= level`` is found; if ``i > 0`` the crossing in
    ``[x_{i-1}, x_i]`` is refined by bisection to ``xtol`` (keeping ``f >= level`` at the
    returned point).  Raises ``ValueError`` if no grid point reaches ``level``.
    """
    _check_tol(xtol, max_evals)
    if grid_values is None:
        grid, vals = _scan(f, grid, f_grid)
        n0 = grid.size
    else:
        grid = np.asarray(grid, float)
        if np.shape(grid_values) != grid.shape:
            raise ValueError(
                f"grid_values must hold one value per grid point: shape {grid.shape}, got "
                f"{np.shape(grid_values)}"
            )
        vals = np.where(np.isnan(grid_values), -np.inf, np.asarray(grid_values, float))
        n0 = 0
    hit = np.flatnonzero(vals >= level)
    if hit.size == 0:
        raise ValueError(f"no grid point reaches the level {level!r}")
    i = int(hit[0])
    xs, fs = [], []
    lo, hi, fhi = (grid[i - 1] if i > 0 else grid[0]), grid[i], vals[i]
    while i > 0 and hi - lo > xtol and len(xs) < max_evals:
        mid = 0.5 * (lo + hi)
        fm = _clean(f(float(mid)))
        xs.append(mid)
        fs.append(fm)
        if fm >= level:
            hi, fhi = mid, fm
        else:
            lo = mid
    return ScalarSearch(
        x=float(hi),
        fun=float(fhi),
        n_evals=n0 + len(xs),
        grid=grid,
        grid_values=vals,
        bracket=(float(lo), float(hi)),
        xs=np.asarray(list(grid) + xs) if n0 else np.asarray(xs),
        fs=np.asarray(list(vals) + fs) if n0 else np.asarray(fs),
        converged=bool(i == 0 or hi - lo <= xtol),
        method="bisection",
    )
