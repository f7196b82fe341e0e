"""Regenerate the S&S ratio's C_opt curve by simulation (S&S ratio §3-4, eq. (17), (22)-(23)).

The paper simulates two Gaussian classes with centres ``d = 1`` apart and spread ``sigma``,
trains the hinge-loss linear SVM for a grid of ``C``, averages the test hinge loss over runs,
takes the minimising ``C`` for every ``sigma / d`` (eq. (17)) and fits the exponential pieces
eq. (22)-(23) to the result.  This module does the same, with three deliberate differences:

* the *expected* test hinge loss of a trained ``(w, b)`` is computed exactly for the Gaussian
  classes (:func:`expected_hinge_loss`) instead of on a 30% test split, removing test noise;
* the same standard-normal draws are reused for every ``sigma / d`` of a run (common random
  numbers), so the curve of ``C_opt`` is smooth in ``sigma / d``;
* the confidence band of ``C_opt`` comes from a bootstrap over runs, and, besides the paper's
  plain ``argmin``, the "one-standard-error" optimum (the smallest ``C`` whose mean loss is
  within one standard error of the minimum) is reported, because for separable classes the
  loss is flat once ``C`` is large enough for the hard margin and the plain argmin is then
  decided by noise.

``python -m svmtune.criteria.ss_table --out FILE.json`` writes the table with the command,
seed, number of runs and grids it was generated with; ``svmtune/criteria/data/
ss_copt_table.json`` is the shipped copy, read by :func:`svmtune.criteria.ss_copt.
load_copt_table`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from scipy.optimize import minimize_scalar

from svmtune._option_values import check_positive
from svmtune.criteria.ss_copt import PAPER_CURVE, ExpPiece
from svmtune.criteria.ss_core import ALPHA, ss_from_ratio
from svmtune.criteria.ss_simulation import (
    expected_error,
    expected_hinge_loss,
    gaussian_margin_hinge,
    simulate_two_gaussians,
)
from svmtune.kernels import Kernel
from svmtune.svm import fit_l1_svm

__all__ = [
    "simulate_two_gaussians",
    "gaussian_margin_hinge",
    "expected_hinge_loss",
    "expected_error",
    "linear_svm_qp",
    "linear_svm_path",
    "hinge_curves",
    "c_opt_from_curve",
    "fit_exp_piece",
    "build_table",
    "main",
]


# ---------------------------------------------------------------------------------------------
# the linear hinge-loss SVM along a grid of C
# ---------------------------------------------------------------------------------------------
def linear_svm_qp(X: np.ndarray, y: np.ndarray, C: float) -> tuple[np.ndarray, float]:
    """The linear hinge-loss SVM (S&S ratio eq. (3)-(4)) as a primal QP solved by Clarabel.

    ``min 1/2 |w|^2 + C sum xi`` s.t. ``y_i (w^T x_i + b) >= 1 - xi_i``, ``xi >= 0``.  Its cost
    does not grow with ``C``, unlike libsvm's on overlapping classes.
    """
    import clarabel

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise ValueError(
            f"X must be a finite 2-D array (n_samples, n_features), got shape {X.shape}"
        )
    n, p = X.shape
    if y.shape != (n,):
        raise ValueError(f"y must hold one label per row of X ({n}), got shape {y.shape}")
    if not np.all(np.abs(y) == 1) or np.unique(y).size != 2:
        raise ValueError(
            f"y must hold labels -1 and +1 of two classes (the QP's y_i in {{-1, +1}}), got "
            f"{np.unique(y)[:5]}"
        )
    check_positive("C", C)
    P = sp.block_diag([sp.eye(p), sp.csc_matrix((n + 1, n + 1))], format="csc")
    q = np.r_[np.zeros(p + 1), np.full(n, float(C))]
    A1 = sp.hstack([sp.csc_matrix(-(y[:, None] * X)), sp.csc_matrix(-y[:, None]), -sp.eye(n)])
    A2 = sp.hstack([sp.csc_matrix((n, p + 1)), -sp.eye(n)])
    A = sp.vstack([A1, A2], format="csc")
    rhs = np.r_[-np.ones(n), np.zeros(n)]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    sol = clarabel.DefaultSolver(P, q, A, rhs, [clarabel.NonnegativeConeT(2 * n)], settings).solve()
    if str(sol.status) not in ("Solved", "AlmostSolved"):
        raise RuntimeError(f"linear SVM QP failed: {sol.status}")
    x = np.asarray(sol.x)
    return x[:p], float(x[p])


def linear_svm_path(
    X: np.ndarray,
    y: np.ndarray,
    Cs: Sequence[float],
    *,
    max_libsvm_iter: int = 20000,
) -> tuple[np.ndarray, np.ndarray]:
    """``(w, b)`` of the linear hinge-loss SVM for every ``C`` in increasing ``Cs``.

    libsvm (:func:`svmtune.svm.fit_l1_svm`) trains each ``C`` until a fit needs more than
    ``max_libsvm_iter`` SMO iterations (large ``C`` on overlapping classes), after which
    :func:`linear_svm_qp` takes over.  Once a solution has no support vector at its bound
    ``C`` it is the hard-margin solution, optimal for every larger ``C`` too, and is reused.

    Returns
    -------
    W : ndarray (len(Cs), p), B : ndarray (len(Cs),)
    """
    Cs = np.asarray(Cs, dtype=float)
    if np.any(np.diff(Cs) <= 0) or np.any(Cs <= 0):
        raise ValueError("Cs must be positive and strictly increasing")
    X = np.asarray(X, dtype=float)
    W = np.empty((Cs.size, X.shape[1]))
    B = np.empty(Cs.size)
    lin = Kernel("linear")
    use_qp = False
    k = 0
    while k < Cs.size:
        C = float(Cs[k])
        if use_qp:
            W[k], B[k] = linear_svm_qp(X, y, C)
            k += 1
            continue
        sol = fit_l1_svm(y, C, X=X, kernel=lin, tol=1e-5)
        sv = sol.support
        W[k] = sol.dual_coef[sv] @ X[sv]
        B[k] = sol.b
        if not sol.bounded.any():
            W[k:] = W[k]
            B[k:] = B[k]
            break
        if sol.n_iter > max_libsvm_iter:
            use_qp = True
        k += 1
    return W, B


def _one_run(ratios, Cs, n_per_class, dim, seed, run, d=1.0, perp_scale=1.0):
    rng = np.random.default_rng([int(seed), int(run)])
    noise = rng.standard_normal((sum(n_per_class), dim))
    prior_pos = n_per_class[1] / sum(n_per_class)
    H = np.empty((len(ratios), len(Cs)))
    E = np.empty_like(H)
    for i, r in enumerate(ratios):
        std = np.full(dim, r * d * perp_scale)
        std[0] = r * d
        s = (std, std)
        X, y = simulate_two_gaussians(n_per_class, d, s, dim=dim, noise=noise)
        W, B = linear_svm_path(X, y, Cs)
        H[i] = expected_hinge_loss(W, B, d=d, sigmas=s, prior_pos=prior_pos)
        E[i] = expected_error(W, B, d=d, sigmas=s, prior_pos=prior_pos)
    return H, E


def hinge_curves(
    ratios: Sequence[float],
    Cs: Sequence[float],
    *,
    n_per_class: tuple[int, int] = (700, 700),
    runs: int = 20,
    dim: int = 2,
    d: float = 1.0,
    seed: int = 0,
    perp_scale: float = 1.0,
    n_jobs: int | None = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Expected test hinge loss and error for every run, ``sigma / d`` and ``C``.

    Run ``k`` draws its standard-normal sample from ``numpy.random.default_rng([seed, k])``
    and reuses it for every ratio (common random numbers).  ``sigma`` is the spread along
    the line between the centres; the other coordinates have ``perp_scale * sigma``
    (1: the paper's isotropic classes).

    Returns
    -------
    hinge, error : ndarray (runs, len(ratios), len(Cs))
    """
    if int(runs) < 1:
        raise ValueError("runs must be at least 1")
    out = Parallel(n_jobs=n_jobs)(
        delayed(_one_run)(
            list(ratios), np.asarray(Cs), tuple(n_per_class), dim, seed, k, d, perp_scale
        )
        for k in range(int(runs))
    )
    return np.stack([h for h, _ in out]), np.stack([e for _, e in out])


# ---------------------------------------------------------------------------------------------
# from loss curves to C_opt and to the exponential pieces
# ---------------------------------------------------------------------------------------------
def c_opt_from_curve(
    log2_C: np.ndarray,
    mean_loss: np.ndarray,
    se_loss: np.ndarray | None = None,
    *,
    rule: str = "argmin",
) -> float:
    """``log2 C_opt`` of a mean loss curve on a log2 grid (eq. (6), (17)).

    ``rule="argmin"``: the grid minimum refined by the vertex of the parabola through it and
    its two neighbours (clamped to the neighbouring grid points).  ``rule="1se"``: the smallest
    ``C`` whose mean loss is within one standard error (``se_loss`` at the minimum) of the
    minimum, linearly interpolated between grid points.
    """
    x = np.asarray(log2_C, dtype=float)
    m = np.asarray(mean_loss, dtype=float)
    if x.shape != m.shape or x.size < 3:
        raise ValueError("need at least three grid points and one loss per point")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(m))):
        raise ValueError("log2_C and mean_loss must be finite (no NaN or infinity)")
    if x.ndim != 1 or np.any(np.diff(x) <= 0):
        raise ValueError("log2_C must be a strictly increasing 1-D grid")
    i = int(np.argmin(m))
    if rule == "argmin":
        if i == 0 or i == x.size - 1:
            return float(x[i])
        y0, y1, y2 = m[i - 1], m[i], m[i + 1]
        h = x[i + 1] - x[i]
        denom = y0 - 2 * y1 + y2
        if denom <= 0:
            return float(x[i])
        off = 0.5 * h * (y0 - y2) / denom
        return float(np.clip(x[i] + off, x[i - 1], x[i + 1]))
    if rule == "1se":
        if se_loss is None:
            raise ValueError("rule='1se' needs se_loss")
        se = np.asarray(se_loss, dtype=float)
        if se.shape != m.shape or not np.all(np.isfinite(se)) or np.any(se < 0):
            raise ValueError(
                f"se_loss must be {m.size} finite non-negative standard errors, one per grid "
                f"point, got shape {se.shape}"
            )
        level = m[i] + float(se[i])
        below = np.flatnonzero(m <= level)
        j = int(below[0])
        if j == 0:
            return float(x[0])
        # m[j-1] > level >= m[j]: interpolate the crossing
        t = (m[j - 1] - level) / (m[j - 1] - m[j])
        return float(x[j - 1] + t * (x[j] - x[j - 1]))
    raise ValueError(f"rule must be 'argmin' or '1se', got {rule!r}")


def fit_exp_piece(
    r: np.ndarray, C: np.ndarray, b_bounds: tuple[float, float] = (-200.0, 200.0)
) -> ExpPiece:
    """Fit ``C(r) = a exp(b r) + c`` (the form of eq. (22)-(23)) by relative least squares.

    Minimises ``sum ((a e^(b r) + c) / C - 1)^2`` -- relative residuals, so that the decades
    of ``C`` weigh alike.  For fixed ``b`` the problem is linear in ``(a, c)``; ``b`` is found
    by a grid over ``b_bounds`` refined by a bounded scalar search (variable projection).
    """
    r = np.asarray(r, dtype=float)
    C = np.asarray(C, dtype=float)
    if r.size < 3 or r.shape != C.shape or np.any(C <= 0) or not np.all(np.isfinite(C)):
        raise ValueError("need at least three (r, C > 0) points")

    def solve(b: float) -> tuple[float, float, float]:
        A = np.column_stack([np.exp(b * r), np.ones_like(r)]) / C[:, None]
        coef, *_ = np.linalg.lstsq(A, np.ones_like(r), rcond=None)
        res = float(np.sum((A @ coef - 1.0) ** 2))
        return res, float(coef[0]), float(coef[1])

    lo, hi = (float(v) for v in b_bounds)
    grid = np.linspace(lo, hi, 801)
    vals = [solve(b)[0] for b in grid]
    k = int(np.argmin(vals))
    sol = minimize_scalar(
        lambda b: solve(b)[0],
        bounds=(grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]),
        method="bounded",
        options={"xatol": 1e-8},
    )
    b = float(sol.x) if sol.fun <= vals[k] else float(grid[k])
    _, a, c = solve(b)
    return ExpPiece(a=a, b=b, c=c)


def _round(a, nd=6):
    return np.round(np.asarray(a, dtype=float), nd).tolist()


def build_table(
    *,
    ratios: Sequence[float],
    log2_C: Sequence[float],
    runs: int,
    seed: int = 0,
    n_per_class: tuple[int, int] = (700, 700),
    dim: int = 2,
    n_boot: int = 200,
    r_break: float = 1.0 / 6.0,
    r_kernel: float = 0.3,
    n_jobs: int | None = 1,
    command: str = "",
) -> dict[str, Any]:
    """Simulate, find ``C_opt`` per ``sigma / d`` with a bootstrap band, fit eq. (22)-(23).

    Returns the JSON-ready table: inputs (command, seed, runs, grids), per-ratio ``C_opt``
    (argmin and one-standard-error rules, 2.5-97.5% bootstrap band of the argmin), the mean
    and standard error of the loss curves, the exponential pieces fitted to the argmin on
    ``r < r_break`` (eq. (22)), ``r_break <= r <= r_kernel`` (eq. (23)) and -- beyond the
    paper, when at least three ratios lie there -- ``r >= r_kernel`` (the "tail"), the
    empirical peak of ``C_opt`` and the paper's curve evaluated on the same ratios.
    """
    ratios = np.asarray(ratios, dtype=float)
    x = np.asarray(log2_C, dtype=float)
    Cs = 2.0**x
    t0 = time.perf_counter()
    H, E = hinge_curves(
        ratios, Cs, n_per_class=n_per_class, runs=runs, dim=dim, seed=seed, n_jobs=n_jobs
    )
    elapsed = time.perf_counter() - t0
    mean = H.mean(axis=0)
    se = H.std(axis=0, ddof=1) / np.sqrt(runs) if runs > 1 else np.zeros_like(mean)
    copt = np.array([c_opt_from_curve(x, mean[i]) for i in range(ratios.size)])
    copt_1se = np.array(
        [c_opt_from_curve(x, mean[i], se[i], rule="1se") for i in range(ratios.size)]
    )
    rng = np.random.default_rng([int(seed), 999_983])
    boot = np.empty((int(n_boot), ratios.size))
    for b in range(int(n_boot)):
        idx = rng.integers(0, runs, runs)
        mb = H[idx].mean(axis=0)
        boot[b] = [c_opt_from_curve(x, mb[i]) for i in range(ratios.size)]
    lo, hi = (np.percentile(boot, q, axis=0) for q in (2.5, 97.5))

    C_opt = 2.0**copt
    rising_m = ratios < r_break
    falling_m = (ratios >= r_break) & (ratios <= r_kernel + 1e-12)
    rising = fit_exp_piece(ratios[rising_m], C_opt[rising_m])
    falling = fit_exp_piece(ratios[falling_m], C_opt[falling_m])
    tail_m = ratios >= r_kernel - 1e-12
    tail = fit_exp_piece(ratios[tail_m], C_opt[tail_m]) if tail_m.sum() >= 3 else None
    ipk = int(np.argmax(copt))
    paper = np.asarray(PAPER_CURVE(ratios))
    inside = (np.log2(paper) >= lo - 1e-9) & (np.log2(paper) <= hi + 1e-9)
    return {
        "generator": "svmtune.criteria.ss_table",
        "command": command,
        "seed": int(seed),
        "runs": int(runs),
        "n_per_class": [int(v) for v in n_per_class],
        "dim": int(dim),
        "d": 1.0,
        "alpha": ALPHA,
        "n_boot": int(n_boot),
        "loss": "expected test hinge loss (exact for the Gaussian classes)",
        "solver": "libsvm (svmtune.svm.fit_l1_svm, tol 1e-5) + Clarabel primal QP at large C",
        "elapsed_seconds": round(elapsed, 1),
        "versions": _versions(),
        "ratios": _round(ratios),
        "ss": _round(ss_from_ratio(ratios)),
        "log2_C": _round(x),
        "log2_c_opt": _round(copt),
        "log2_c_opt_1se": _round(copt_1se),
        "log2_c_opt_lo": _round(lo),
        "log2_c_opt_hi": _round(hi),
        "c_opt": _round(C_opt, 4),
        "min_hinge": _round(mean.min(axis=1)),
        "error_at_c_opt": _round(
            [E.mean(axis=0)[i, int(np.argmin(mean[i]))] for i in range(ratios.size)]
        ),
        "mean_hinge": [_round(row) for row in mean],
        "se_hinge": [_round(row, 7) for row in se],
        "peak": {"ratio": float(ratios[ipk]), "ss": float(ss_from_ratio(ratios[ipk]))},
        "fit": {
            "rising": {"a": rising.a, "b": rising.b, "c": rising.c},
            "falling": {"a": falling.a, "b": falling.b, "c": falling.c},
            "r_break": float(r_break),
            "r_kernel": float(r_kernel),
            "tail": None if tail is None else {"a": tail.a, "b": tail.b, "c": tail.c},
            "r_max": float(ratios.max()) if tail is not None else None,
            "c_min": 1e-3,
        },
        "paper": {
            "rising": {"a": 0.7345, "b": 33.6915, "c": -0.5247},
            "falling": {"a": 5164.4657, "b": -21.2514, "c": -0.8548},
            "c_opt": _round(paper, 4),
            "inside_band": [bool(v) for v in inside],
        },
    }


def _versions() -> dict[str, str]:
    import scipy
    import sklearn

    return {
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
    }


def _grid(lo: float, hi: float, step: float) -> np.ndarray:
    if not (hi >= lo and step > 0):
        raise ValueError(f"grid needs lo <= hi and step > 0, got ({lo}, {hi}, {step})")
    return np.round(np.arange(lo, hi + step / 2, step), 10)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m svmtune.criteria.ss_table --out FILE.json [options]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(
        prog="python -m svmtune.criteria.ss_table",
        description="Regenerate the S&S ratio C_opt table (Shamsi & Beheshti §4) by simulation.",
    )
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--runs", type=int, default=40, help="simulation runs per sigma/d")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-per-class", type=int, default=700, help="training points per class")
    ap.add_argument("--dim", type=int, default=2)
    ap.add_argument(
        "--ratio-grid",
        type=float,
        nargs=3,
        action="append",
        metavar=("LO", "HI", "STEP"),
        help="sigma/d grid LO..HI by STEP; repeat to join grids "
        "(default: 0.02..0.4 by 0.02 and 0.45..1.0 by 0.05)",
    )
    ap.add_argument(
        "--log2-C", type=float, nargs=3, default=(-4.0, 12.0, 0.25), metavar=("LO", "HI", "STEP")
    )
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--r-break", type=float, default=1.0 / 6.0)
    ap.add_argument("--r-kernel", type=float, default=0.3)
    ap.add_argument("--n-jobs", type=int, default=1)
    args = ap.parse_args(argv)
    if args.runs < 2:
        ap.error("--runs must be at least 2 (standard errors and the bootstrap need it)")
    grids = args.ratio_grid or [(0.02, 0.4, 0.02), (0.45, 1.0, 0.05)]
    ratios = np.unique(np.concatenate([_grid(*g) for g in grids]))
    table = build_table(
        ratios=ratios,
        log2_C=_grid(*args.log2_C),
        runs=args.runs,
        seed=args.seed,
        n_per_class=(args.n_per_class, args.n_per_class),
        dim=args.dim,
        n_boot=args.n_boot,
        r_break=args.r_break,
        r_kernel=args.r_kernel,
        n_jobs=args.n_jobs,
        command=shlex.join(["python", "-m", "svmtune.criteria.ss_table", *argv]),
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(table, indent=1) + "\n")
    print(f"wrote {out} ({table['elapsed_seconds']} s simulation)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
