"""A look at the landscape a selection searched: :func:`plot_landscape`.

The left panel shows the method's criterion at every evaluated (log2 sigma, log2 C), with the
path the search took (the evaluations in order) and the chosen point; the right panel, where
the method computed one, the cross-validated or closed-form leave-one-out error of the same
points.  Everything comes from the fitted tuner's ``cv_results_``: nothing is recomputed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from svmtune.methods.base import selector_class

__all__ = ["plot_landscape"]

#: the criterion column of ``cv_results_`` per kind of method, in order of preference, with
#: its label (the first one present with a finite value is shown)
_CRITERIA = (
    ("value", "criterion (the gradient search's objective)"),
    ("cv_loss", "CV loss"),
    ("span_rule", "span-rule LOO error"),
    ("span_bound", "span bound"),
    ("xi_alpha", "xi-alpha bound"),
)


def _criterion(res: dict[str, Any]) -> tuple[np.ndarray, str]:
    """The values the method optimised, one per row (NaN where it has none), and a label."""
    for key, label in _CRITERIA:
        if key in res:
            values = np.asarray(res[key], dtype=float)
            if np.isfinite(values).any():
                return values, label
    score = np.asarray(res["mean_test_score"], dtype=float)
    if np.isfinite(score).any():
        return 1.0 - score, "LOO error (the referee's)"
    return score, "no criterion recorded"


def _error(res: dict[str, Any]) -> np.ndarray | None:
    """The held-out error of each row (1 - accuracy) where the method computed one."""
    score = np.asarray(res["mean_test_score"], dtype=float)
    # a gradient method scores its chosen point alone (1 - its leave-one-out estimate): no
    # landscape of held-out errors
    return 1.0 - score if np.isfinite(score).sum() > 1 else None


def _panel(ax, x, y, values, order, best, title, cmap="viridis_r"):
    """One panel: the points coloured by ``values`` (contours between them for a grid, i.e.
    without ``order``), the path through ``order`` and the chosen point ``best``."""
    import matplotlib.pyplot as plt

    ok = np.isfinite(values)
    grid = not order and len(np.unique(x[ok])) > 2 and len(np.unique(y[ok])) > 2
    if grid and ok.sum() >= 6:
        try:
            ax.tricontourf(x[ok], y[ok], values[ok], levels=14, cmap=cmap, alpha=0.6)
        except (ValueError, RuntimeError):  # collinear points: no triangulation
            pass
    sc = ax.scatter(x[ok], y[ok], c=values[ok], cmap=cmap, s=28, edgecolors="k", linewidths=0.4)
    ax.scatter(x[~ok], y[~ok], marker="x", c="grey", s=20)
    if order:
        ax.plot(x[order], y[order], "-", color="tab:red", lw=1, alpha=0.8, label="search path")
    ax.scatter([x[best]], [y[best]], marker="*", s=260, c="gold", edgecolors="k", zorder=5,
               label="chosen")  # fmt: skip
    ax.margins(0.05)
    ax.set_xlabel("log2 sigma")
    ax.set_ylabel("log2 C")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="best", fontsize=8)
    plt.colorbar(sc, ax=ax)


def plot_landscape(tuner, *, path: str | None = None, figsize=(11, 4.5)):
    """Plot the criterion over (log2 sigma, log2 C) with the search's path and the chosen
    point, beside the held-out error where the method computed it.

    Parameters
    ----------
    tuner : fitted SVMTuner
    path : str, optional
        Save the figure there (any format matplotlib writes, e.g. ``.png``).
    figsize : tuple

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If no evaluated row has both sigma and C (``ss`` and ``ld_c1`` choose C by a rule:
        there is no landscape over C to show; ``default`` shows its one point).

    Notes
    -----
    The path joins the evaluations in the order made: a gradient search's steps, the
    sequential searches' trials, ``auto``'s candidates; a grid has no path (its order says
    nothing).  Rows without C (the width stage of ``esdr``, ``dbtc``, ``j4``, ``ld``) are left
    out.
    """
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(
            'plot_landscape needs matplotlib: pip install "svmtune[plot]" (or matplotlib)'
        ) from exc

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    res = tuner.cv_results_
    if "param_C" not in res or "param_sigma" not in res:
        raise ValueError(
            f"method {tuner.method!r} evaluated no (sigma, C) pairs (C comes from a rule): "
            "there is no landscape to plot"
        )
    has = ~(np.ma.getmaskarray(res["param_C"]) | np.ma.getmaskarray(res["param_sigma"]))
    if not has.any():
        raise ValueError(f"method {tuner.method!r} evaluated no (sigma, C) pairs to plot")
    rows = np.flatnonzero(has)
    if rows.size > 1 and np.ptp(np.asarray(res["param_C"].data[rows], dtype=float)) == 0:
        raise ValueError(
            f"method {tuner.method!r} takes C from a rule (one C for all its candidate "
            "widths): there is no (sigma, C) landscape to plot"
        )
    x = np.log2(np.asarray(res["param_sigma"].data[rows], dtype=float))
    y = np.log2(np.asarray(res["param_C"].data[rows], dtype=float))
    crit, label = _criterion(res)
    crit = crit[rows]
    best = int(np.flatnonzero(rows == tuner.best_index_)[0]) if has[tuner.best_index_] else 0
    order = [] if selector_class(tuner.method).grid else list(range(len(rows)))
    err = _error(res)
    panels = 2 if err is not None and not np.allclose(err[rows], crit, equal_nan=True) else 1
    fig, axes = plt.subplots(1, panels, figsize=figsize if panels == 2 else (6, 4.5))
    axes = np.atleast_1d(axes)
    _panel(axes[0], x, y, crit, order, best, f"{tuner.method}: {label}")
    if panels == 2:
        _panel(axes[1], x, y, err[rows], order, best, f"{tuner.method}: held-out error")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig
