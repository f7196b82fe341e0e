"""The simulated problem of the S&S ratio's C_opt curve: two Gaussian classes (S&S ratio §3).

Two classes with centres ``d`` apart and spread ``sigma`` (:func:`simulate_two_gaussians`),
and the exact expected test hinge loss and error of a linear model ``(w, b)`` on them
(:func:`expected_hinge_loss`, :func:`expected_error`): the margin ``y (w^T x + b)`` of a class
is Gaussian, and :func:`gaussian_margin_hinge` is ``E max(0, 1 - m)`` of a Gaussian margin.
:mod:`svmtune.criteria.ss_table` builds the table from them.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

__all__ = [
    "expected_error",
    "expected_hinge_loss",
    "gaussian_margin_hinge",
    "simulate_two_gaussians",
]


def simulate_two_gaussians(
    n_per_class: tuple[int, int],
    d: float,
    sigmas: tuple[float, float],
    *,
    dim: int = 2,
    noise: np.ndarray | None = None,
    random_state: int | np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Two isotropic Gaussian classes (S&S ratio §3, Fig. 2).

    Class ``-1`` is centred at the origin, class ``+1`` at ``d e_1``; coordinates have standard
    deviations ``sigmas = (sigma_-, sigma_+)`` (each a scalar, or one value per coordinate
    for axis-aligned anisotropic classes).

    Parameters
    ----------
    n_per_class : (n_-, n_+)
    d : float
        Separability (distance between the centres, eq. (7)).
    sigmas : (float or array, float or array)
    dim : int
        Input dimension (the paper uses 2).
    noise : ndarray (n_- + n_+, dim), optional
        Standard-normal draws to use instead of fresh ones (common random numbers).
    random_state : int or Generator

    Returns
    -------
    X : ndarray (n, dim), y : ndarray of {-1, +1}
    """
    n_neg, n_pos = (int(v) for v in n_per_class)
    if n_neg < 1 or n_pos < 1 or dim < 1:
        raise ValueError("need at least one point per class and dim >= 1")
    if not (d >= 0 and all(np.all(np.asarray(v) >= 0) for v in sigmas)):
        raise ValueError("d and the class spreads must be non-negative")
    if not (np.isfinite(d) and all(np.all(np.isfinite(np.asarray(v, float))) for v in sigmas)):
        raise ValueError(f"d and the class spreads must be finite, got d={d}, sigmas={sigmas}")
    if noise is None:
        rng = np.random.default_rng(random_state)
        noise = rng.standard_normal((n_neg + n_pos, dim))
    noise = np.asarray(noise, dtype=float)
    if noise.shape != (n_neg + n_pos, dim):
        raise ValueError(f"noise must have shape {(n_neg + n_pos, dim)}, got {noise.shape}")
    X = noise.copy()
    X[:n_neg] *= _stds(sigmas[0], dim)
    X[n_neg:] *= _stds(sigmas[1], dim)
    X[n_neg:, 0] += d
    y = np.r_[-np.ones(n_neg), np.ones(n_pos)]
    return X, y


def gaussian_margin_hinge(mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """``E[max(0, 1 - m)]`` for a Gaussian margin ``m ~ N(mean, std^2)``.

    ``E = (1 - mean) Phi(z) + std phi(z)`` with ``z = (1 - mean) / std``; ``max(0, 1 - mean)``
    when ``std = 0``.
    """
    mean = np.asarray(mean, dtype=float)
    std = np.asarray(std, dtype=float)
    if not np.all(np.isfinite(std)) or np.any(std < 0):
        raise ValueError("std must be finite and non-negative (a standard deviation)")
    if np.any(np.isnan(mean)):
        raise ValueError("mean must not be NaN")
    u = 1.0 - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(std > 0, u / np.where(std > 0, std, 1.0), 0.0)
    pdf = np.exp(-0.5 * z**2) / np.sqrt(2.0 * np.pi)
    out = np.where(std > 0, u * ndtr(z) + std * pdf, np.maximum(u, 0.0))
    return out


def _stds(s, dim: int) -> np.ndarray:
    s = np.asarray(s, dtype=float)
    if s.ndim == 0:
        return np.full(dim, float(s))
    if s.shape != (dim,):
        raise ValueError(f"per-coordinate spreads must have {dim} entries, got {s.shape}")
    return s


def _margin_moments(w, b, d, sigmas, prior_pos):
    w = np.atleast_2d(np.asarray(w, dtype=float))
    b = np.atleast_1d(np.asarray(b, dtype=float))
    p = w.shape[1]
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(b))):
        raise ValueError("w and b must be finite")
    if not (np.isfinite(d) and d >= 0):
        raise ValueError(f"d must be finite and non-negative, got {d}")
    for s in sigmas:
        if not np.all(np.isfinite(np.asarray(s, float))) or np.any(np.asarray(s, float) < 0):
            raise ValueError(f"the class spreads must be finite and non-negative, got {sigmas}")
    if not 0 <= prior_pos <= 1:
        raise ValueError(f"prior_pos must be a probability in [0, 1], got {prior_pos}")
    # y (w^T x + b): class -1 at the origin, class +1 at d e_1; std of w^T x is |diag(s) w|
    s_neg = np.sqrt((w**2) @ _stds(sigmas[0], p) ** 2)
    s_pos = np.sqrt((w**2) @ _stds(sigmas[1], p) ** 2)
    m_neg = -b
    m_pos = w[:, 0] * d + b
    return (m_neg, s_neg), (m_pos, s_pos)


def expected_hinge_loss(
    w: np.ndarray,
    b: float | np.ndarray,
    *,
    d: float,
    sigmas: tuple[float, float],
    prior_pos: float = 0.5,
) -> float | np.ndarray:
    """Expected test hinge loss (eq. (18)) of ``f(x) = w^T x + b`` on the simulated classes.

    For class ``c`` the margin ``y (w^T x + b)`` is Gaussian with mean ``y (w^T mu_c + b)`` and
    standard deviation ``sigma_c |w|`` (``|diag(sigma_c) w|`` for per-coordinate spreads);
    see :func:`gaussian_margin_hinge`.  ``w`` may be a stack of weight vectors (rows) with
    one ``b`` each.
    """
    (mn, sn), (mp, spos) = _margin_moments(w, b, d, sigmas, prior_pos)
    out = (1.0 - prior_pos) * gaussian_margin_hinge(mn, sn) + prior_pos * gaussian_margin_hinge(
        mp, spos
    )
    return float(out[0]) if out.shape == (1,) and np.ndim(b) == 0 else out


def expected_error(
    w: np.ndarray,
    b: float | np.ndarray,
    *,
    d: float,
    sigmas: tuple[float, float],
    prior_pos: float = 0.5,
) -> float | np.ndarray:
    """Expected test error ``P(y (w^T x + b) < 0)`` on the simulated classes."""
    (mn, sn), (mp, spos) = _margin_moments(w, b, d, sigmas, prior_pos)

    def p_neg(mean, std):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(std > 0, ndtr(-mean / np.where(std > 0, std, 1.0)), mean <= 0)

    out = (1.0 - prior_pos) * p_neg(mn, sn) + prior_pos * p_neg(mp, spos)
    return float(out[0]) if out.shape == (1,) and np.ndim(b) == 0 else out
