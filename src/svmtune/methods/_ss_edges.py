"""Labels of S&S-RB's candidate kernels and the warning when the chosen RBF width is an end
of the candidate widths (Shamsi & Beheshti's S&S ratio, eq. (26)-(27), used by
:class:`svmtune.methods.ss_ratio.SSRatio`)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from svmtune._warnings import user_stacklevel
from svmtune.criteria.ss_core import SSResult
from svmtune.exceptions import BoundWarning
from svmtune.kernels import Kernel

__all__ = ["TINY_CLASS", "kernel_label", "warn_width_edge", "width_edge"]


def kernel_label(kern: Kernel) -> str:
    if kern.name == "rbf":
        return f"rbf(sigma={kern.sigma:.4g})"
    if kern.name == "poly":
        return f"poly(degree={int(kern.degree)})"
    return "linear"


def width_edge(kern: Kernel, cands: list[Kernel]) -> str | None:
    """``"lower"`` / ``"upper"`` when the chosen RBF width is the smallest / largest of
    several candidate widths, else None."""
    widths = [k.sigma for k in cands if k.name == "rbf"]
    if kern.name != "rbf" or len(widths) < 2:
        return None
    if kern.sigma == min(widths):
        return "lower"
    if kern.sigma == max(widths):
        return "upper"
    return None


#: a class of at most this many samples (of positive weight) is named as a cause when S&S
#: chooses the smallest width
TINY_CLASS = 2


def warn_width_edge(
    kern: Kernel,
    edge: str,
    X: np.ndarray,
    res: SSResult,
    threshold: float | None,
    share: float,
    smallest: tuple[Any, int] | None = None,
) -> None:
    """Warn that the chosen width is an end of the candidate widths, and why it may be.

    ``smallest`` is the smallest class (label, number of samples of positive weight): with
    :data:`TINY_CLASS` samples or fewer its spread rests on single rows, and S&S can rise
    without limit as the width shrinks (with two samples the leave-one-out centre of each is
    the other one), a third cause named at the lower end.

    At the lower end two causes are named when they apply.  When every candidate is at or
    below ``threshold`` (``None`` when one passed it; the paper's is -5 dB) the classes overlap
    in every candidate feature space, and the worst pair's S&S can keep rising as the width
    shrinks (glass's two window-glass classes, standardised: from -44 dB at sigma = 4.2 to
    -17.5 dB at 0.75): S&S then does not identify a width.  When exact repeats carry most of
    the within-class similarity (``share``, the chosen width's
    :func:`~svmtune.criteria.repeats.repeat_share`; common with categorical or coarsely
    rounded features) the repeats keep kernel value 1 while distinct rows stop being similar,
    and S&S can keep rising towards widths that only memorise them
    (``SSRatio(max_repeat_share=None)``, or every width repeat-dominated).  On the KEEL
    hayes-roth data (160 rows, 84 distinct, standardised) over 99.9 % of the within-class
    kernel mass of classes 1 and 2, the pair S&S scores, comes from repeated rows at
    sigma = 0.25, the width
    it chooses there.
    """
    word = "smallest" if edge == "lower" else "largest"
    msg = f"S&S chose sigma = {kern.sigma:.4g}, the {word} candidate width"
    causes = []
    if edge == "lower":
        if threshold is not None:
            causes.append(
                f"every candidate has S&S at or below {threshold:g} dB (here {res.ss:.1f} dB "
                f"for classes {res.classes[0]!r} and {res.classes[1]!r}), where the paper "
                "discards a kernel: the classes overlap and S&S does not identify a width; "
                "a cross-validated method (e.g. method='grid') is the safer choice here"
            )
        if share >= 0.5:
            n_rep = X.shape[0] - np.unique(X, axis=0).shape[0]
            causes.append(
                f"{n_rep} of the {X.shape[0]} rows repeat another row exactly and carry "
                f"{100 * share:.0f} % of the within-class similarity at this width: they stay "
                "similar at every width while distinct rows stop being similar as the width "
                "shrinks, which can make S&S favour widths that only memorise the repeats; if so, "
                "keep the widths above the distance between distinct rows (log2_sigma or sigmas)"
            )
        if smallest is not None and smallest[1] <= TINY_CLASS:
            causes.append(
                f"class {smallest[0]!r} has {smallest[1]} samples, so its spread rests on single "
                "rows and S&S can keep rising as the width shrinks without the classes being "
                "any better separated: S&S does not identify a width on so few samples; "
                "method='default' or a wider log2_sigma is the safer choice"
            )
    if causes:
        msg += "; " + "; ".join(causes)
    else:
        msg += (
            f"; the best width may be {'smaller' if edge == 'lower' else 'larger'}: "
            "widen log2_sigma or pass sigmas"
        )
    warnings.warn(msg, BoundWarning, stacklevel=user_stacklevel())
