"""The hinge-loss optimal C as a function of the S&S ratio (S&S ratio eq. (22)-(23), (28), (32)).

:class:`CoptCurve` is ``C_opt(r)`` of ``r = sigma / d`` built at ``d = 1``: the paper's printed
curve (:data:`PAPER_CURVE`) or the regenerated table shipped with svmtune
(:func:`load_copt_table`, written by ``python -m svmtune.criteria.ss_table``).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from svmtune._option_values import check_positive
from svmtune.criteria.ss_core import ALPHA, SS_BREAK, SS_KERNEL, ratio_from_ss

__all__ = [
    "ExpPiece",
    "CoptCurve",
    "PAPER_CURVE",
    "ss_regime",
    "c_opt",
    "load_copt_table",
]

_TABLE_RESOURCE = "data/ss_copt_table.json"


@dataclass(frozen=True)
class ExpPiece:
    """``C(r) = a exp(b r) + c`` of ``r = sigma / d`` (the form of eq. (22)-(23))."""

    a: float
    b: float
    c: float

    def __call__(self, r: float | np.ndarray) -> float | np.ndarray:
        out = self.a * np.exp(self.b * np.asarray(r, dtype=float)) + self.c
        return float(out) if np.ndim(out) == 0 else out


@dataclass(frozen=True)
class CoptCurve:
    """Hinge-loss optimal ``C`` as a function of ``r = sigma / d`` at ``d = 1``.

    ``rising`` applies for ``r < r_break`` (S&S > 0, eq. (22)), ``falling`` for
    ``r_break <= r < r_kernel`` (-5 < S&S <= 0, eq. (23)).  For ``r >= r_kernel`` (S&S <= -5)
    the paper gives no value -- it asks for a kernel (eq. (32)); without a ``tail`` the curve
    returns its value at ``r_kernel``, with one (the regenerated table simulates that regime
    too) it follows ``tail`` up to ``r_max`` and stays constant beyond.  Values are floored
    at ``c_min`` (the printed constants make eq. (22)-(23) negative far outside their ranges).

    Attributes
    ----------
    rising, falling : ExpPiece
    r_break, r_kernel : float
    tail : ExpPiece or None
    r_max : float or None
        End of the simulated range of ``tail``.
    c_min : float
    source : str
        Where the constants come from.
    """

    rising: ExpPiece
    falling: ExpPiece
    r_break: float = 1.0 / 6.0
    r_kernel: float = 0.3
    tail: ExpPiece | None = None
    r_max: float | None = None
    c_min: float = 1e-3
    source: str = ""

    def __call__(self, r: float | np.ndarray) -> float | np.ndarray:
        r = np.asarray(r, dtype=float)
        if np.any(np.isnan(r)) or np.any(r < 0):
            raise ValueError("sigma / d must be non-negative")
        if self.tail is None:
            rc = np.minimum(r, self.r_kernel)
            out = np.where(rc < self.r_break, self.rising(rc), self.falling(rc))
        else:
            r_max = self.r_kernel if self.r_max is None else max(self.r_max, self.r_kernel)
            rc = np.minimum(r, r_max)
            out = np.where(
                rc < self.r_break,
                self.rising(rc),
                np.where(rc < self.r_kernel, self.falling(rc), self.tail(rc)),
            )
        out = np.maximum(out, self.c_min)
        return float(out) if out.ndim == 0 else out


#: eq. (22)-(23) with the printed constants; the switch is at S&S = 0 (eq. (28)), i.e.
#: sigma / d = 1/6, where the text puts the breaking point (eq. (22)-(23) print 0.16)
PAPER_CURVE = CoptCurve(
    rising=ExpPiece(0.7345, 33.6915, -0.5247),
    falling=ExpPiece(5164.4657, -21.2514, -0.8548),
    r_break=1.0 / 6.0,
    r_kernel=0.3,
    source="S&S ratio eq. (22)-(23), printed constants",
)


def ss_regime(ss: float) -> str:
    """Regime of eq. (28)/(32): "separable" (S&S > 0), "overlapping" (-5 < S&S <= 0) or
    "kernel" (S&S <= -5: not linearly separable in this space, the paper asks for a kernel).
    """
    ss = float(ss)
    if np.isnan(ss):
        raise ValueError("S&S must not be NaN")
    if ss > SS_BREAK:
        return "separable"
    if ss > SS_KERNEL:
        return "overlapping"
    return "kernel"


def c_opt(
    ss: float,
    *,
    d: float | None = None,
    curve: CoptCurve = PAPER_CURVE,
    rescale: bool = True,
    alpha: float = ALPHA,
) -> float:
    """Hinge-loss optimal ``C`` from the S&S ratio (S&S ratio eq. (22)-(23), (28), (32)).

    ``r = sigma / d = 10^(-S&S/20) / alpha`` is read off ``curve`` (built for ``d = 1``).
    With ``rescale=True`` and ``d`` given the value is divided by ``d^2``: the hinge-loss SVM
    on data scaled by ``a`` with penalty ``C / a^2`` has the same decision function, so a
    curve for ``d = 1`` transfers to separability ``d`` as ``C_curve(r) / d^2``.  The paper
    omits this factor (``rescale=False``).  ``S&S = +inf`` gives ``curve(0)``; for
    ``S&S <= -5`` see :class:`CoptCurve` (the paper's curve stops at ``r_kernel = 0.3``).
    """
    ss = float(ss)
    if np.isnan(ss):
        raise ValueError("S&S must not be NaN")
    r = 0.0 if ss == np.inf else (np.inf if ss == -np.inf else ratio_from_ss(ss, alpha))
    C = float(curve(r))
    if rescale:
        if d is None:
            raise ValueError("rescale=True needs the separability d (or pass rescale=False)")
        d = check_positive("d (the separability that rescales C)", d)
        C = C / d**2
    return C


def load_copt_table(path: str | Path | None = None) -> CoptCurve:
    """The regenerated C_opt curve shipped with svmtune (or the JSON at ``path``).

    The file is written by ``python -m svmtune.criteria.ss_table``; its ``"fit"`` entry holds
    the exponential pieces refitted to the simulated optimum ``C`` (see that module).
    """
    if path is None:
        return _shipped_copt_table()
    return _copt_curve(json.loads(Path(path).read_text()), path)


@functools.lru_cache(maxsize=1)
def _shipped_copt_table() -> CoptCurve:
    """The shipped curve, parsed once per process (it is read by every S&S-RB selection)."""
    return _copt_curve(
        json.loads(resources.files("svmtune.criteria").joinpath(_TABLE_RESOURCE).read_text())
    )


def _copt_curve(table: dict, path=None) -> CoptCurve:
    try:
        return _parse_copt_curve(table)
    except (KeyError, TypeError, AttributeError) as e:
        where = "the C_opt table" if path is None else f"C_opt table {str(path)!r}"
        raise ValueError(
            f"{where} is not a table written by `python -m svmtune.criteria.ss_table`: its "
            f'"fit" entry needs rising, falling (each with a, b, c), r_break and r_kernel '
            f"({type(e).__name__}: {e})"
        ) from None


def _parse_copt_curve(table: dict) -> CoptCurve:
    fit = table["fit"]
    tail = fit.get("tail")
    return CoptCurve(
        rising=ExpPiece(**fit["rising"]),
        falling=ExpPiece(**fit["falling"]),
        r_break=float(fit["r_break"]),
        r_kernel=float(fit["r_kernel"]),
        tail=None if tail is None else ExpPiece(**tail),
        r_max=None if fit.get("r_max") is None else float(fit["r_max"]),
        c_min=float(fit.get("c_min", 1e-3)),
        source=str(table.get("command", "svmtune.criteria.ss_table")),
    )
