"""ESDR-CV, DBTC-CV and J4-CV: the RBF width from a class-separability index, then C by CV.

Yin & Yin (ESDR, Information Sciences 2016), Sec. 4.1, steps 1-5: on standardised features,
evaluate the index for every sigma in ``{2^-8, 2^-7.5, ..., 2^9}``, take the sigma that
maximises it, then choose C by 10-fold CV over ``{2^-1, 2^-0.5, ..., 2^16}``.  The indices live
in :mod:`svmtune.criteria.esdr`; their class-block kernel means in :mod:`svmtune.criteria.blocks`
(exact for small n, a pair-distance histogram with a stated bound otherwise).

:class:`WidthIndexSelector` is the shared base of these three methods and of LD-CV / LD-C1
(:mod:`svmtune.methods.ld`): a data-only objective of sigma, maximised by a grid scan plus a
continuous refinement (:func:`svmtune.search.scalar.grid_then_refine_max`), then C fixed or
chosen through the shared CV path :func:`svmtune.search.cv.cv_errors`.

Differences from the paper (each an option; the paper's procedure is
``refine="none", plateau="argmax", c_search="grid", max_repeat_share=None``).  The default
width rule ``"auto"`` and the default ``c_search="golden"`` were compared with the paper's
choices on the five ESDR Table 1 data sets (and held-out splits of other bundled sets);
``plateau_fraction=0.99`` was fixed beforehand, not tuned:

* ``refine="golden"``: golden-section refinement of log2 sigma inside the best grid bracket
  (the paper stops at the grid).
* ``plateau``: ESDR and J4 often rise monotonically to their input-space value as
  sigma -> inf (ESDR Sec. 4.1, data 1), so the argmax sits at the top of the grid, a nearly
  linear kernel that needs a huge C.  ``"fraction"`` takes the smallest sigma at which the
  index has completed ``plateau_fraction`` of its rise over the scan, i.e. reaches
  ``min + plateau_fraction * (max - min)`` of the grid values (crossing refined by
  bisection; measured from the grid minimum because ESDR's floor is 1, not 0);
  ``"auto"`` does so only when a plateau is detected (the index at the top of the grid has
  reached that level) and keeps the argmax otherwise.
* ``couple_C``: for sigma > 1 shift the log2 C range by ``2 log2 sigma`` (an RBF SVM with a
  large sigma and penalty ``C`` behaves like a linear SVM with ``C / sigma^2``, Keerthi & Lin
  2003, cited in ESDR Sec. 4.1), the other remedy for the plateau.
* ``c_search="golden"`` (default): C on a coarse log2 grid (step ``c_coarse_step``) then
  golden section on log2 C to ``c_xtol`` -- about 14 candidates instead of the paper's 35.
* Multiclass (the paper is binary): the index of the worst-separated class pair
  (``multiclass="min"``) or the mean over pairs.
* ``max_repeat_share=0.5`` (ESDR, DBTC and J4; LD keeps every width): rows repeated exactly
  keep kernel value 1 at every width while distinct rows fade, so at the narrowest widths
  the class kernel means describe which rows repeat (one repeated pair suffices once the
  others have faded) and the indices can peak there.  Widths at which the repeats carry at
  least half of the within-class similarity (:mod:`svmtune.criteria.repeats`, the rule of
  ``method="ss"``) are left out of the scan, unless every width is.  Not tuned: the
  threshold is S&S's.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np

from svmtune._warnings import user_stacklevel
from svmtune.criteria._common import BlockStats
from svmtune.criteria.blocks import METHODS as BLOCK_METHODS
from svmtune.criteria.blocks import RBFBlocks
from svmtune.criteria.esdr import index_uncertainty, index_values
from svmtune.criteria.repeats import repeat_floor
from svmtune.exceptions import BoundWarning
from svmtune.kernels import rbf_params
from svmtune.methods._constraints import Boolean, Interval, Options, Positive
from svmtune.methods.base import Selection, SelectionContext, Selector, TrainingData
from svmtune.methods.baselines import LOG2_GRID
from svmtune.search.cv import cv_errors, make_folds
from svmtune.search.scalar import REFINES, first_crossing, grid_then_refine_max

__all__ = ["WidthIndexSelector", "ESDRCV", "DBTCCV", "J4CV"]

PLATEAU_RULES = ("argmax", "fraction", "auto")
C_SEARCHES = ("golden", "grid", "fixed")
SCORINGS = ("error", "hinge", "f1", "f1_macro")

#: tolerance under which scan values count as equal to the scan maximum (for the scan-edge
#: warning only; the choice is unchanged): ``v`` ties with ``vmax`` when
#: ``vmax - v <= TIE_RTOL * max(1, |vmax|)``.  The indices are built from kernel means of
#: magnitude <= 1, so their round-off is about ``eps`` absolute below 1 and ``eps`` relative
#: above; ``1e-12`` (~4500 eps) leaves room for sums over many pairs, while an index changes by
#: far more between scan points half an octave apart unless it has saturated (kernel
#: numerically the identity at narrow widths, or an index that ignores the width)
TIE_RTOL = 1e-12

#: options shared by every width-index selector, with their base defaults
BASE_DEFAULTS: dict[str, Any] = {
    "log2_sigma": (-8.0, 9.0, 0.5),
    "refine": "golden",
    "sigma_xtol": 0.01,
    "plateau": "auto",
    "plateau_fraction": 0.99,
    "c_search": "golden",
    "log2_C": (-1.0, 16.0, 0.5),
    "C": 1.0,
    "couple_C": False,
    "c_coarse_step": 2.0,
    "c_xtol": 0.25,
    "n_splits": 10,
    "scoring": "error",
    "multiclass": "min",
    "blocks": "auto",
    "max_pairs": None,
    "chunk_size": 2**20,
    "max_repeat_share": None,
}


def _log2_grid(lo: float, hi: float, step: float) -> np.ndarray:
    """``lo, lo + step, ...`` up to ``hi``, with ``hi`` appended if the steps miss it."""
    g = np.arange(lo, hi + step / 2, step)
    if g[-1] < hi - 1e-12:
        g = np.append(g, hi)
    return g


def _largest_kernel_note(X: np.ndarray | None, sigma: float) -> str:
    """``" (here the largest kernel value between distinct rows is ...)"`` from the smallest
    positive pairwise squared distance of ``X`` (small data only: one O(n^2 d) pass, as one
    exact index evaluation); ``""`` when ``X`` is None or too large."""
    if X is None or X.shape[0] < 2 or X.shape[0] > 2048:
        return ""
    sq = np.einsum("ij,ij->i", X, X)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    pos = d2[d2 > 1e-12 * max(1.0, float(np.max(sq)))]  # equal rows give ~0 (round-off)
    if pos.size == 0:
        return ""
    kmax = float(np.exp(-float(np.min(pos)) / (2.0 * sigma**2)))
    return f" (here the largest kernel value between distinct rows is {kmax:.2g})"


class WidthIndexSelector(Selector):
    """RBF width maximising a data-only objective, then C fixed or by K-fold CV.

    Subclasses set ``name``, ``index`` (for the info), ``defaults`` (overrides of
    :data:`BASE_DEFAULTS`), ``fixed`` (options the method does not let the user change) and
    implement :meth:`objective`.

    Parameters
    ----------
    log2_sigma : (lo, hi, step)
        Scan grid of log2 sigma (ESDR family: the paper's ``(-8, 9, 0.5)``, 35 widths).
    refine : {"golden", "brent", "none"}
        Continuous refinement of log2 sigma inside the bracket of the best grid point.
    sigma_xtol : float
        Final bracket length of the refinement, log2 units.
    plateau : {"argmax", "fraction", "auto"}
        Width rule (see the module docstring); default "auto" (LD: "argmax").
    plateau_fraction : float in (0, 1]
        Fraction of the rise of the index over the scan (grid minimum to maximum) for the
        "fraction" / "auto" rules.
    c_search : {"golden", "grid", "fixed"}
        C by coarse grid + golden section on log2 C, by the full grid ``log2_C``, or fixed to
        ``C`` (no CV, no estimate).
    log2_C : (lo, hi, step)
        C range in log2 units; the step is the grid step of ``c_search="grid"``.
    C : float
        The C of ``c_search="fixed"``.
    couple_C : bool
        Shift the log2 C range by ``2 log2 sigma`` when sigma > 1 (Keerthi & Lin's
        ``C = C~ sigma^2``).
    c_coarse_step, c_xtol : float
        Coarse grid step and final bracket length (log2 units) of ``c_search="golden"``.
    n_splits : int
        CV folds (stratified; the same folds for every C candidate).
    scoring : {"error", "hinge", "f1", "f1_macro"}
        CV loss; the estimate is reported for "error" only.
    multiclass : {"min", "mean"}
        Reduction over class pairs (ESDR family) or one-vs-rest tasks (LD).
    blocks : {"auto", "exact", "histogram"}
        How the class-block kernel means are computed (:class:`RBFBlocks`).
    max_pairs : int, optional
        Subsample this many pairs when there are more (unbiased, with standard errors).
    chunk_size : int
        Maximum number of pairwise distances held in memory.
    max_repeat_share : float in (0, 1], None or "default"
        Scan widths at which exact repeated rows (rows equal to another row of the same
        class) carry at least this share of the within-class similarity
        (:func:`svmtune.criteria.repeats.repeat_share`) are left out before the width rule,
        unless every width is; None keeps every width (the papers' scan).  "default": 0.5
        for the ESDR family (as ``method="ss"``), None for LD.  Repeats keep kernel value 1
        at every width while distinct rows fade, so the class-separability indices can rise
        towards the narrowest widths, which only tell which rows repeat (beyond the papers,
        which have no rule for repeated rows).
    """

    kernels = ("rbf",)
    index: ClassVar[str] = ""
    defaults: ClassVar[dict[str, Any]] = {}
    fixed: ClassVar[dict[str, Any]] = {}
    #: options a method does not accept at all (meaningless for it)
    unused: ClassVar[tuple[str, ...]] = ()
    _parameter_constraints = {
        "log2_sigma": [LOG2_GRID],
        "refine": [Options(*REFINES)],
        "sigma_xtol": [Positive()],
        "plateau": [Options(*PLATEAU_RULES)],
        "plateau_fraction": [Positive()],
        "c_search": [Options(*C_SEARCHES)],
        "log2_C": [LOG2_GRID],
        "C": [Positive()],
        "couple_C": [Boolean()],
        "c_coarse_step": [Positive()],
        "c_xtol": [Positive()],
        "n_splits": [Interval(Integral, 2, None, closed="left")],
        "scoring": [Options(*SCORINGS)],
        "multiclass": [Options("min", "mean")],
        "blocks": [Options(*BLOCK_METHODS)],
        "max_pairs": [Interval(Integral, 2, None, closed="left"), None],
        "chunk_size": [Interval(Integral, 1, None, closed="left")],
        "max_repeat_share": [Interval(Real, 0.0, 1.0, closed="right"), None],
    }

    def __init__(
        self,
        *,
        log2_sigma=None,
        refine=None,
        sigma_xtol=None,
        plateau=None,
        plateau_fraction=None,
        c_search=None,
        log2_C=None,
        C=None,
        couple_C=None,
        c_coarse_step=None,
        c_xtol=None,
        n_splits=None,
        scoring=None,
        multiclass=None,
        blocks=None,
        max_pairs=None,
        chunk_size=None,
        max_repeat_share="default",
    ):
        args = dict(locals())
        # None means "the method's default" for every option but max_repeat_share, where it
        # switches the rule off (as for method="ss")
        given = {
            k: v
            for k, v in args.items()
            if k != "self" and (v is not None if k != "max_repeat_share" else v != "default")
        }
        for key in given:
            if key in self.fixed or key in self.unused:
                raise ValueError(
                    f"method {self.name!r} does not take the option {key!r}"
                    + (f" (it is fixed to {self.fixed[key]!r})" if key in self.fixed else "")
                )
        opts = self._validate_options(**{**BASE_DEFAULTS, **self.defaults, **given, **self.fixed})
        if "C" in given and opts["c_search"] != "fixed":
            raise ValueError("the option C is used only with c_search='fixed'")
        if opts["plateau_fraction"] > 1:
            raise ValueError(
                f"plateau_fraction must be in (0, 1], got {opts['plateau_fraction']!r}"
            )
        for key, value in opts.items():
            setattr(self, key, value)
        if self.max_repeat_share is not None:
            self.max_repeat_share = float(self.max_repeat_share)

    # ----------------------------------------------------------------- hooks
    def objective(self, stats: BlockStats, scheme: str = "ovr") -> np.ndarray:
        """The data-only objective (to maximise) for every width in ``stats``.

        ``scheme`` is the final SVM's multiclass decomposition ("ovr" or "ovo"), for
        objectives that have one per scheme.
        """
        raise NotImplementedError

    def uncertainty(self, stats: BlockStats) -> dict[str, float]:
        """Error bound / standard error of the objective at one width (for the info)."""
        return {
            "block_mean_bound": float(np.max(stats.mean_bound)),
            "block_mean_se": float(np.max(stats.mean_se)),
        }

    # ----------------------------------------------------------------- steps
    def scan_grid(self) -> np.ndarray:
        """The log2 sigma scan grid of ``log2_sigma``."""
        return _log2_grid(*self.log2_sigma)

    def repeat_rule(self, X, y, sample_weight, random_state) -> tuple[int, dict[str, Any]]:
        """How many of the narrowest scan widths ``max_repeat_share`` leaves out, and the
        info on it (``{}`` when the rule is off)."""
        if self.max_repeat_share is None:
            return 0, {}
        grid = self.scan_grid()
        start, share = repeat_floor(
            X, y, sample_weight, 2.0**grid, self.max_repeat_share, random_state=random_state
        )
        every = start == grid.size  # every width repeat-dominated: keep them all (as S&S)
        info = {
            "max_repeat_share": self.max_repeat_share,
            "widths_left_out": 0 if every else int(start),
            "repeat_share_at_narrowest_kept": float(share),
            "every_width_repeat_dominated": bool(every),
        }
        return (0 if every else int(start)), info

    def width_search(self, blocks: RBFBlocks, scheme: str = "ovr", start: int = 0):
        """Choose log2 sigma: grid scan (from the ``start``-th width), then the plateau rule
        or the refined argmax.

        ``res.info`` says where the choice sits, whatever the refinement did afterwards:
        ``"edge"`` is "narrow" / "wide" when the best scan point is the first / last width or
        the scan values tied with the maximum (within :data:`TIE_RTOL`, i.e. equal to
        round-off) include it, else None; ``"flat"`` when every scan value ties (the index
        does not depend on the width); ``"narrow_plateau"`` when the ties form a run of two
        or more widths from the narrowest one (the index has reached its narrow-width limit).
        """
        grid = self.scan_grid()[start:]

        def curve(log2s: np.ndarray) -> np.ndarray:
            return self.objective(blocks.stats(2.0 ** np.asarray(log2s, float)), scheme)

        def f(x: float) -> float:
            return float(curve(np.array([x]))[0])

        vals = curve(grid)
        vmin, vmax = float(np.min(vals)), float(np.max(vals))
        tied = vals >= vmax - TIE_RTOL * max(1.0, abs(vmax))  # all False if vmax is NaN
        flat = bool(np.all(tied))
        level = vmin + self.plateau_fraction * (vmax - vmin)
        # a rise of the index below round-off is no rise: no plateau rule on a flat index
        plateau_found = bool(vmax > vmin and not flat and vals[-1] >= level)
        use_fraction = (
            vmax > vmin
            and not flat
            and (self.plateau == "fraction" or (self.plateau == "auto" and plateau_found))
        )
        if use_fraction:
            res = first_crossing(f, grid, level, grid_values=vals, xtol=self.sigma_xtol)
            res.n_evals += grid.size
            res.xs = np.concatenate([grid, res.xs])
            res.fs = np.concatenate([vals, res.fs])
            rule = f"smallest sigma completing {self.plateau_fraction:g} of the index rise"
            edge = None  # a crossing on the scan's end is caught by its position
        else:
            res = grid_then_refine_max(
                f, grid, f_grid=lambda g: vals, refine=self.refine, xtol=self.sigma_xtol
            )
            rule = "argmax" + ("" if self.refine == "none" else f" + {self.refine} refinement")
            i = int(np.argmax(res.grid_values))  # the scan point the refinement started from
            edge = (
                "narrow"
                if i == 0 or tied[0]
                else "wide"
                if i == grid.size - 1 or tied[-1]
                else None
            )
        res.info.update(
            edge=edge,
            flat=flat,
            narrow_plateau=bool(not flat and edge == "narrow" and tied[0] and tied[1]),
        )
        return res, grid, vals, rule, plateau_found

    def _warn_scan_edge(
        self,
        log2_sigma: float,
        grid: np.ndarray,
        repeat_info: dict,
        search_info: dict | None = None,
        X: np.ndarray | None = None,
    ) -> None:
        """A ``BoundWarning`` when the choice is on the edge of the scan: the best scan point
        is the narrowest or the widest width scanned (``search_info["edge"]``, from
        :meth:`width_search`), or the chosen width is within ``sigma_xtol`` of it.  The index
        may then peak outside the scan; a maximum on a round-off plateau from the narrowest
        width and an index constant over the scan get their own message."""
        if grid.size < 2:
            return
        search_info = search_info or {}
        edge = search_info.get("edge")
        sigma = 2.0**log2_sigma
        left_out = repeat_info.get("widths_left_out", 0)
        why = (
            f"; the {left_out} narrower widths of log2_sigma were left out because exact "
            "repeated rows carry at least "
            f"{repeat_info['max_repeat_share']:g} of the within-class similarity there "
            "(max_repeat_share)"
            if left_out
            else ""
        )
        check = "check the choice against a cross-validated method (e.g. method='grid')"
        if search_info.get("flat"):
            msg = (
                f"{self.index.upper()} chose sigma = {sigma:.4g}, but the index is constant "
                f"(to round-off) over every width scanned{why}: it does not depend on the "
                "width and cannot identify one; choose sigma by a cross-validated method "
                "(e.g. method='grid')"
            )
        elif search_info.get("narrow_plateau"):
            msg = (
                f"{self.index.upper()} chose sigma = {sigma:.4g}, on a plateau where the index "
                "stays at its maximum (equal to round-off) down to the narrowest width "
                f"scanned{why}, so the choice along it follows round-off. Such a plateau means "
                "the kernel has reached its narrow-width limit (1 between equal rows, 0 between "
                "distinct rows), where an SVM predicts by its bias alone away from the training "
                f"rows{_largest_kernel_note(X, sigma)}; {check}"
            )
        else:
            if edge == "narrow" or log2_sigma - grid[0] <= self.sigma_xtol:
                where, end = f"the narrowest width scanned{why}", grid[0]
            elif edge == "wide" or grid[-1] - log2_sigma <= self.sigma_xtol:
                where, end = "the widest width scanned; widen log2_sigma", grid[-1]
            else:
                return
            if abs(log2_sigma - end) > self.sigma_xtol:
                where = "next to " + where  # refined off the best scan point, on the edge
            msg = (
                f"{self.index.upper()} chose sigma = {sigma:.4g}, {where}. The index may keep "
                f"rising beyond it; {check}"
            )
        warnings.warn(msg, BoundWarning, stacklevel=user_stacklevel())

    def holdout(self) -> str:
        return "none" if self.c_search == "fixed" else "folds"

    def c_search_cv(
        self, X, y, sigma, sample_weight, random_state, n_jobs, multiclass="ovr", groups=None
    ):
        """C for a fixed sigma: fixed, full grid, or coarse grid + golden section (CV)."""
        if self.c_search == "fixed":
            return self.C, None, 0, [], {"c_search": "fixed"}
        folds = make_folds(y, self.n_splits, random_state, sample_weight, groups)
        cells: dict[float, tuple[list[float], float]] = {}  # log2 C -> fold losses, seconds

        def errs(log2Cs) -> np.ndarray:
            log2Cs = np.atleast_1d(log2Cs)
            cands = [rbf_params(sigma, 2.0**c) for c in log2Cs]
            means, fold_losses, times = cv_errors(
                X,
                y,
                cands,
                folds=folds,
                sample_weight=sample_weight,
                multiclass=multiclass,
                scoring=self.scoring,
                n_jobs=n_jobs,
                return_folds=True,
            )
            for c, fl, ft in zip(log2Cs, fold_losses, times):
                cells[float(c)] = ([float(v) for v in fl], float(np.mean(ft)))
            return means

        lo, hi, step = self.log2_C
        shift = 2.0 * np.log2(sigma) if (self.couple_C and sigma > 1) else 0.0
        lo, hi = lo + shift, hi + shift
        if self.c_search == "grid":
            xs = _log2_grid(lo, hi, step)
            es = errs(xs)
        else:
            coarse = _log2_grid(lo, hi, self.c_coarse_step) if hi > lo else np.array([lo])
            if coarse.size < 2:
                xs, es = coarse, errs(coarse)
            else:
                res = grid_then_refine_max(
                    lambda c: -float(errs(c)[0]),
                    coarse,
                    f_grid=lambda g: -errs(g),
                    refine="golden",
                    xtol=self.c_xtol,
                )
                xs, es = res.xs, -res.fs
        best = int(np.argmin(es))  # ties: the first evaluated (grid order: the smallest C)
        history = [
            {"stage": "C", "log2_C": float(c), "C": float(2.0**c), "cv_loss": float(e)}
            for c, e in zip(xs, es)
        ]
        for h in history:  # each fold's loss and a fold's seconds (cv_results_'s splits)
            if h["log2_C"] in cells:
                h["split_losses"], h["fit_time"] = cells[h["log2_C"]]
        info = {
            "c_search": self.c_search,
            "n_C_candidates": int(len(xs)),
            "n_folds": len(folds),
            "log2_C_range": [float(lo), float(hi)],
        }
        return float(2.0 ** xs[best]), float(es[best]), len(xs) * len(folds), history, info

    # ----------------------------------------------------------------- contract
    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """See :meth:`svmtune.methods.base.Selector.run`."""
        X, y, sample_weight, groups = data.X, data.y, data.sample_weight, data.groups
        random_state, n_jobs, multiclass = context.random_state, context.n_jobs, context.multiclass
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        blocks = RBFBlocks(
            X,
            y,
            sample_weight=sample_weight,
            method=self.blocks,
            max_pairs=self.max_pairs,
            chunk_size=self.chunk_size,
            random_state=random_state,
        )
        start, repeat_info = self.repeat_rule(X, y, sample_weight, random_state)
        res, grid, vals, rule, plateau_found = self.width_search(blocks, multiclass, start)
        sigma = float(2.0**res.x)
        self._warn_scan_edge(
            res.x, grid, repeat_info, res.info, X if blocks.method_ == "exact" else None
        )
        at_star = blocks.stats([sigma])
        crit = float(self.objective(at_star, multiclass)[0])
        C, loss, n_fits, c_hist, c_info = self.c_search_cv(
            X, y, sigma, sample_weight, random_state, n_jobs, multiclass, groups
        )
        history = [
            {"stage": "sigma", "log2_sigma": float(x), "sigma": float(2.0**x), self.index: float(v)}
            for x, v in zip(res.xs, res.fs)
        ] + c_hist
        info = {
            "index": self.index,
            "n_objective_evals": int(res.n_evals),
            "sigma_grid": [float(s) for s in 2.0**grid],
            "index_curve": [float(v) for v in vals],
            "sigma_rule": rule,
            "plateau": self.plateau,
            "plateau_detected": plateau_found,
            "sigma_bracket": [float(2.0 ** res.bracket[0]), float(2.0 ** res.bracket[1])],
            "refine_converged": bool(res.converged),
            "block_method": blocks.method_,
            "n_pairs": int(blocks.n_pairs_),
            **self.uncertainty(at_star),
            **repeat_info,
            **c_info,
        }
        estimate = loss if (loss is not None and self.scoring == "error") else None
        return Selection(
            params=rbf_params(sigma, C),
            estimate=estimate,
            criterion=crit,
            n_svm_fits=int(n_fits),
            history=history,
            final_model="l1",
            info=info,
        )


class _SeparabilityIndexCV(WidthIndexSelector):
    """ESDR / DBTC / J4 objective: the pairwise index reduced over class pairs."""

    defaults: ClassVar[dict[str, Any]] = {"max_repeat_share": 0.5}

    def objective(self, stats: BlockStats, scheme: str = "ovr") -> np.ndarray:
        # the index is defined over class pairs (ESDR eq. (16)) whatever the final scheme
        return index_values(stats, self.index, reduce=self.multiclass)

    def uncertainty(self, stats: BlockStats) -> dict[str, float]:
        bound, se = index_uncertainty(stats, self.index, reduce=self.multiclass)
        return {"index_bound": float(bound[0]), "index_se": float(se[0])}


class ESDRCV(_SeparabilityIndexCV):
    """ESDR-CV (ESDR Sec. 4.1): sigma maximising the expected square distance ratio, C by CV.

    ESDR = E d_F^2(between classes) / (w_1 E d_F^2(class 1) + w_2 E d_F^2(class 2)) (eq. (8)).
    When the rows of every class coincide (no within-class spread) the ratio is +inf at every
    width, and so is ``criterion``: the index then cannot tell widths apart.
    Options: see :class:`WidthIndexSelector`.
    """

    name = "esdr"
    index = "esdr"


class DBTCCV(_SeparabilityIndexCV):
    """DBTC-CV (ESDR Sec. 4.1): sigma maximising the distance between the class means in
    feature space (ESDR eq. (13)/(16); Sun et al. 2010), C by CV.

    DBTC -> 0 as sigma -> inf (all points collapse in feature space), so it has an interior
    maximum; options: see :class:`WidthIndexSelector`.
    """

    name = "dbtc"
    index = "dbtc"


class J4CV(_SeparabilityIndexCV):
    """J4-CV (ESDR Sec. 4.1): sigma maximising the scatter ratio tr(S_b) / tr(S_w)
    (ESDR eq. (14)), C by CV.  With no within-class scatter (the rows of every class
    coincide) the ratio, and ``criterion``, are +inf at every width, as for ESDR.
    Options: see :class:`WidthIndexSelector`.
    """

    name = "j4"
    index = "j4"
