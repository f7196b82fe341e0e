"""S&S-RB: kernel, kernel parameter and C from the S&S ratio, with no search (Shamsi & Beheshti).

For every candidate kernel the data are mapped into (an approximation of) its feature space,
the S&S ratio of the worst class pair is computed (eq. (7)-(9), (31)), candidates with
``S&S <= -5`` are discarded, the one with the largest S&S is kept (eq. (26)-(27)) and ``C`` is
read off the C_opt curve (eq. (22)-(23), (28), (32)).  No SVM is trained while selecting:
the only SVM is the final fit :class:`svmtune.SVMTuner` makes with the selected parameters.

Candidate kernels
-----------------
* ``"linear"``: the input space itself.
* ``"poly"``: ``(gamma <x, x'> + coef0)^degree`` for ``degree`` in ``degrees`` with
  ``gamma = 1 / n_features`` (``gamma="scale"`` for standardised data) and ``coef0 = 1``.
* ``"rbf"``: widths ``sigma = sqrt(n_features) * 2^k``, ``k`` on the ``log2_sigma`` grid
  (default -3 .. 4 in steps of 0.5; ``sqrt(n_features)`` is the typical distance scale of
  standardised data), or the explicit ``sigmas``.

By default only the tuner's ``kernel`` family is searched; ``kernels="all"`` (or a tuple of
families) searches across families.  Candidates are ordered linear, polynomial by increasing
degree, RBF by decreasing width, and ties go to the first, i.e. the smoother kernel.

Feature spaces
--------------
``feature_map="auto"`` computes the directional S&S exactly from the kernel (the class sums
``K W`` without storing ``K``: O(n^2) time, O(n) memory; the same numbers as
:func:`~svmtune.criteria.ss_kernel.kernel_ss_ratio`) when ``n <= max_exact`` and otherwise in
the paper's approximate feature maps: random Fourier features for RBF, Tensor Sketch for
polynomial kernels, ``n_components`` dimensions (for ``spread="isotropic"`` always the
approximate maps, whose dimension fixes the per-coordinate spread).  ``"exact"`` forces the
exact kernel (directional) or the eigen-features of its matrix (isotropic), ``"approx"`` the
random maps, ``"nystroem"`` Nystroem features.
"""

from __future__ import annotations

import warnings
from numbers import Real
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from svmtune._option_values import check_float_values, check_log2_range
from svmtune._warnings import user_stacklevel
from svmtune.criteria.repeats import (
    SHARE_ROWS,
    positive_rows,
    repeat_mass,
    repeat_share,
    within_mass,
)
from svmtune.criteria.ss_copt import PAPER_CURVE, c_opt, load_copt_table, ss_regime
from svmtune.criteria.ss_core import (
    ALPHA,
    ESTIMATORS,
    SPREADS,
    SS_KERNEL,
    class_weight_matrix,
    gaussian_error_from_ss,
    ss_class_codes,
    ss_from_class_sums,
)
from svmtune.criteria.ss_features import exact_kernel_features, kernel_features, select_kernel
from svmtune.criteria.ss_kernel import SSMatrix, min_pairwise_ss, worst_pairs
from svmtune.kernels import Kernel, rbf_params
from svmtune.methods._constraints import Boolean, Check, IntegerLike, Interval, Options
from svmtune.methods._fidelity import nested_subsample, stage_rows
from svmtune.methods._ss_edges import kernel_label, warn_width_edge, width_edge
from svmtune.methods.base import Selection, SelectionContext, Selector, TrainingData
from svmtune.methods.baselines import log2_grid

__all__ = ["SSRatio"]

#: polynomial kernel entries held at once by the exact path (32 MiB)
_BLOCK_ENTRIES = 2**22

_FAMILIES = ("linear", "poly", "rbf")
_FEATURE_MAPS = ("auto", "exact", "approx", "nystroem")


def _check_families(name: str, kernels: Any) -> tuple[str, ...]:
    """The kernel families of option ``kernels``: "all", one family or a tuple of them."""
    if isinstance(kernels, str):
        if kernels == "all":
            return _FAMILIES
        if kernels in _FAMILIES:
            return (kernels,)
        raise ValueError(f"{name} must be None, 'all' or a tuple of {_FAMILIES}, got {kernels!r}")
    fam = tuple(kernels)
    bad = [k for k in fam if k not in _FAMILIES]
    if not fam or bad:
        raise ValueError(
            f"{name} must be None, 'all' or a non-empty tuple of {_FAMILIES}; unknown: {bad}"
        )
    return tuple(k for k in _FAMILIES if k in fam)


def _check_sigmas(name: str, sigmas: Any) -> np.ndarray:
    """Explicit RBF widths: a non-empty array of positive finite numbers."""
    s = check_float_values(name, sigmas, what="a non-empty sequence of positive widths")
    if s.size == 0 or np.any(~np.isfinite(s)) or np.any(s <= 0):
        raise ValueError(f"{name} must be a non-empty sequence of positive widths")
    return s


def _check_rel_sigmas(name: str, log2_sigma: Any) -> np.ndarray:
    """The relative widths ``2^k`` of the log2 grid ``(lo, hi[, step])``."""
    return log2_grid(*check_log2_range(name, log2_sigma, with_step=True))


def _check_degrees(name: str, degrees: Any) -> tuple[int, ...]:
    """Polynomial degrees: positive integers, sorted, each once."""
    deg = check_float_values(name, degrees, what="positive integers")
    if (
        deg.size == 0
        or not np.all(np.isfinite(deg))
        or np.any(deg != np.round(deg))
        or np.any(deg < 1)
    ):
        raise ValueError(f"{name} must be positive integers, got {degrees!r}")
    return tuple(sorted({int(v) for v in deg}))


def _history(results, shares, dropped) -> list[dict[str, Any]]:
    """One history row per candidate kernel: its parameters, S&S and repeat share (its
    C_opt is added by :meth:`SSRatio.select`)."""
    return [
        dict(
            k.params(),
            label=kernel_label(k),
            ss=float(r.ss),
            d=float(r.d),
            scatteredness=float(r.sigma),
            pair=list(pr),
            repeat_share=float(sh),
            discarded_for_repeats=bool(dr),
        )
        for (k, pr, r), sh, dr in zip(results, shares, dropped)
    ]


class SSRatio(Selector):
    """S&S ratio-based selection of kernel, kernel parameter and C (S&S-RB).

    Parameters
    ----------
    kernels : None, "all" or tuple of {"linear", "poly", "rbf"}
        Kernel families to compare; None searches only the tuner's ``kernel``.
    sigmas : sequence of float, optional
        Explicit RBF widths (override ``log2_sigma``).
    log2_sigma : (lo, hi[, step])
        RBF widths ``sqrt(n_features) * 2^k`` for ``k`` in ``lo..hi`` by ``step`` (default 1).
    degrees : sequence of int
        Polynomial degrees (``gamma = 1 / n_features``, ``coef0 = poly_coef0``).
    poly_coef0 : float
    spread : {"directional", "isotropic"}
        Per-class spread of eq. (8); see :mod:`svmtune.criteria.ss_core`.
    estimator : {"loo", "plain"}
        Leave-one-out / unbiased estimates (default) or the paper's in-sample ones.
    feature_map : {"auto", "exact", "approx", "nystroem"}
    n_components : int
        Dimension of the approximate feature maps.
    max_exact : int
        Largest ``n`` for which "auto" uses the exact kernel (default 20,000: up to that size
        the compiled RBF class sums cost less than the 512-dimensional random maps, which are
        only approximate; ``docs/notes/cost_measurements.md``).
    curve : {"table", "paper"}
        C_opt curve: the regenerated one shipped with svmtune
        (:func:`~svmtune.criteria.ss_copt.load_copt_table`) or eq. (22)-(23) as printed.
    rescale : bool
        Divide the curve's C by ``d^2`` (scale covariance of the SVM; the paper does not).
    threshold : float
        Candidates with ``S&S <= threshold`` are discarded (eq. (26): -5 dB).
    max_samples : int, optional
        Compute S&S on a stratified random subsample of this size (large data).
    max_repeat_share : float or None, default=0.5
        RBF widths at which exact repeats (rows equal to another row of the same class) carry
        at least this share of the within-class similarity (:func:`repeat_share`) are
        discarded before the threshold rule: there S&S describes which rows repeat, not how
        the classes lie (beyond the paper, which has no rule for repeated rows; ``None``
        keeps every width, as the paper does).  If every RBF width would be discarded none is.

    Notes
    -----
    When no candidate passes ``threshold`` the paper has no rule; the candidate with the
    largest S&S is used, ``info["admissible"]`` is False and ``info["regime"]`` is
    ``"kernel"``, and C comes from the curve's ``S&S <= -5`` range (the regenerated table
    simulates it; the paper's curve stops at ``sigma / d = 0.3``).  A warning says so (the
    classes overlap in every candidate feature space, a cross-validated method is safer), or
    that no candidate separates the class centres at all (S&S = -inf everywhere), and a
    :class:`~svmtune.exceptions.BoundWarning` when the chosen RBF width is the smallest
    or largest candidate (``info["width_at_bound"]``); at the smallest it says when every
    candidate is below the threshold (S&S then tends to rise as the width shrinks) and when
    exact repeated rows carry most of the within-class similarity (:func:`repeat_share`),
    which can make S&S favour ever smaller widths.
    """

    name = "ss"
    kernels = ("rbf", "linear", "poly")
    _parameter_constraints = {
        "kernels": [Check(_check_families, f"'all' or a tuple of {_FAMILIES}"), None],
        "sigmas": [Check(_check_sigmas, "a non-empty sequence of positive widths"), None],
        "log2_sigma": [Check(_check_rel_sigmas, "(lo, hi[, step])")],
        "degrees": [Check(_check_degrees, "positive integers")],
        "poly_coef0": [Interval(Real, None, None)],
        "spread": [Options(*SPREADS)],
        "estimator": [Options(*ESTIMATORS)],
        "feature_map": [Options(*_FEATURE_MAPS)],
        "n_components": [IntegerLike(2)],
        "max_exact": [IntegerLike(0)],
        "curve": [Options("table", "paper")],
        "threshold": [Interval(Real, None, None, note="S&S in dB")],
        "max_samples": [IntegerLike(4), None],
        "rescale": [Boolean()],
        "max_repeat_share": [Interval(Real, 0.0, 1.0, closed="right"), None],
    }

    def __init__(
        self,
        *,
        kernels: Any = None,
        sigmas: Any = None,
        log2_sigma: tuple[float, float, float] = (-3.0, 4.0, 0.5),
        degrees: Any = (2, 3),
        poly_coef0: float = 1.0,
        spread: str = "directional",
        estimator: str = "loo",
        feature_map: str = "auto",
        n_components: int = 512,
        max_exact: int = 20000,
        curve: str = "table",
        rescale: bool = True,
        threshold: float = SS_KERNEL,
        max_samples: int | None = None,
        max_repeat_share: float | None = 0.5,
    ):
        opts = self._validate_options(
            kernels=kernels,
            sigmas=sigmas,
            log2_sigma=log2_sigma,
            degrees=degrees,
            poly_coef0=poly_coef0,
            spread=spread,
            estimator=estimator,
            feature_map=feature_map,
            n_components=n_components,
            max_exact=max_exact,
            curve=curve,
            threshold=threshold,
            max_samples=max_samples,
            rescale=rescale,
            max_repeat_share=max_repeat_share,
        )
        self.families = opts.pop("kernels")
        self.rel_sigmas = opts.pop("log2_sigma")
        for key, value in opts.items():
            setattr(self, key, value)
        self.poly_coef0 = float(self.poly_coef0)
        self.threshold = float(self.threshold)
        if self.max_repeat_share is not None:
            self.max_repeat_share = float(self.max_repeat_share)

    # ------------------------------------------------------------------ candidates
    def _candidates(self, families: tuple[str, ...], p: int) -> list[Kernel]:
        out: list[Kernel] = []
        if "linear" in families:
            out.append(Kernel("linear"))
        if "poly" in families:
            out += [
                Kernel("poly", degree=d, gamma=1.0 / p, coef0=self.poly_coef0) for d in self.degrees
            ]
        if "rbf" in families:
            sig = self.sigmas if self.sigmas is not None else np.sqrt(p) * self.rel_sigmas
            out += [Kernel("rbf", sigma=float(s)) for s in sorted(sig, reverse=True)]
        return out

    def _how(self, n: int) -> str:
        if self.feature_map != "auto":
            return self.feature_map
        if self.spread == "directional" and n <= self.max_exact:
            return "exact"
        return "approx"

    def _subsample(self, X, y, w, rs):
        n = y.shape[0]
        if self.max_samples is None or n <= self.max_samples:
            return X, y, w
        # auto's stratified order, whose random draws belong to the rows: the subsample does
        # not depend on the names of the classes, as train_test_split's per-class draws in
        # sorted class order did (issue 63)
        idx = stage_rows(nested_subsample(y, rs), self.max_samples)
        return X[idx], y[idx], None if w is None else w[idx]

    def check_kernel(self, kernel: str) -> None:
        """``kernel`` is checked where ``families`` is None: the families replace it."""
        if self.families is None:
            super().check_kernel(kernel)

    # ------------------------------------------------------------------ select
    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """See :meth:`svmtune.methods.base.Selector.run`."""
        X, y, sample_weight = data.X, data.y, data.sample_weight
        kernel, random_state = context.kernel, context.random_state
        if self.families is None:
            families: tuple[str, ...] = (kernel,)
        else:
            families = self.families
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        rs = check_random_state(random_state)
        Xs, ys, ws = self._subsample(X, y, sample_weight, rs)
        seed = int(rs.randint(np.iinfo(np.int32).max))
        how = self._how(ys.shape[0])
        cands = self._candidates(families, X.shape[1])

        results, within = self._scores(Xs, ys, ws, cands, how, seed)
        shares = self._repeat_shares(Xs, ys, ws, cands, seed, within=within)
        best, admissible, dropped = self._choose(results, shares, cands)
        kern, pair, res = results[best]
        edge = self._warn_choice(kern, res, admissible, cands, shares[best], Xs, ys, ws, seed)
        curve = load_copt_table() if self.curve == "table" else PAPER_CURVE
        C = self._c_of(res, curve)
        params = self._params(kern, C)
        history = _history(results, shares, dropped)
        for h, (_, _, r) in zip(history, results):  # the C each candidate kernel would get
            h["C"] = float(self._c_of(r, curve))
        info = {
            "d": float(res.d),
            "sigma": float(res.sigma),
            "ss": float(res.ss),
            "kernel_scores": {kernel_label(k): float(r.ss) for k, _, r in results},
            "C_opt": float(C),
            "regime": ss_regime(res.ss),
            "admissible": bool(admissible),
            "width_at_bound": edge,
            "pair": list(pair),
            "class_sigmas": list(res.class_sigmas),
            "gaussian_error": float(gaussian_error_from_ss(res.ss)),
            "spread": self.spread,
            "estimator": self.estimator,
            "feature_map": how,
            "curve": self.curve,
            "rescale": self.rescale,
            "alpha": ALPHA,
            "n_used": int(ys.shape[0]),
            "repeat_share": float(shares[best]),
            "n_discarded_for_repeats": int(sum(dropped)),
        }
        return Selection(
            params=params,
            estimate=None,
            criterion=float(res.ss),
            n_svm_fits=0,
            history=history,
            final_model="l1",
            info=info,
        )

    def _scores(self, Xs, ys, ws, cands: list[Kernel], how: str, seed: int):
        """``[(kernel, worst pair, SSResult)]`` of every candidate (Shamsi & Beheshti eq. (7)-(9),
        (31)) and, on the exact directional path, the within-class similarities
        (:func:`within_mass`; None otherwise)."""
        within = None
        if how == "exact" and self.spread == "directional":
            results, within = self._exact_directional(Xs, ys, ws, cands)
        else:
            results = []
            for kern in cands:
                if how == "exact":
                    Z = Xs if kern.name == "linear" else exact_kernel_features(kern(Xs))
                else:
                    method = (
                        "nystroem"
                        if how == "nystroem"
                        else ("rff" if kern.name == "rbf" else "tensor_sketch")
                    )
                    Z = kernel_features(
                        Xs, kern, method=method, n_components=self.n_components, random_state=seed
                    )
                pair, res = min_pairwise_ss(
                    ys, Z=Z, sample_weight=ws, spread=self.spread, estimator=self.estimator
                )
                results.append((kern, pair, res))

        return results, within

    def _choose(self, results, shares, cands: list[Kernel]) -> tuple[int, bool, list[bool]]:
        """The chosen candidate (largest S&S above the threshold, eq. (26)-(27)), whether it
        passed the threshold, and which RBF widths were discarded for repeated rows."""
        scores = [r.ss for _, _, r in results]
        dropped = [
            self.max_repeat_share is not None and sh >= self.max_repeat_share for sh in shares
        ]
        rbf = [c for c, k in enumerate(cands) if k.name == "rbf"]
        if any(dropped) and not all(dropped[c] for c in rbf):
            scores = [-np.inf if dr else sc for sc, dr in zip(scores, dropped)]
        else:
            dropped = [False] * len(cands)
        best, admissible = select_kernel(scores, self.threshold)
        return best, admissible, dropped

    def _warn_choice(self, kern, res, admissible, cands, share, Xs, ys, ws, seed) -> str | None:
        """Warn when no candidate separates the class centres, when none passes the threshold,
        and when the chosen RBF width is an end of the candidates; return that end (or None)."""
        if res.ss == -np.inf:
            warnings.warn(
                "no candidate kernel separates the class centres (S&S = -inf for every "
                "candidate): C is read at the end of the C_opt curve",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        edge = width_edge(kern, cands)
        if not admissible and res.ss > -np.inf and edge != "lower":  # (lower: said below)
            warnings.warn(
                f"every candidate has S&S at or below {self.threshold:g} dB, where the paper "
                f"discards a kernel (the best: {res.ss:.1f} dB for classes {res.classes[0]!r} "
                f"and {res.classes[1]!r}): the classes overlap in every candidate feature "
                "space, S&S says little about the width, and C is read from the C_opt curve "
                "beyond the threshold; a cross-validated method (e.g. method='grid') is the "
                "safer choice here",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        if edge is not None:
            threshold = None if admissible else self.threshold
            if edge == "lower" and not np.isfinite(share):  # not computed: max_repeat_share=None
                share = repeat_share(Xs, ys, ws, kern.sigma, max_rows=SHARE_ROWS, random_state=seed)
            labels, counts = np.unique(ys if ws is None else ys[ws > 0], return_counts=True)
            smallest = (labels.tolist()[int(np.argmin(counts))], int(counts.min()))
            warn_width_edge(kern, edge, Xs, res, threshold, share, smallest)
        return edge

    def _exact_directional(self, X, y, w, cands: list[Kernel]):
        """Directional S&S of every candidate from its kernel: the class sums ``K W`` (all RBF
        widths in one compiled pass over the pairs, a matrix product for linear and
        polynomial kernels), then all class pairs of all candidates at once
        (:func:`ss_from_class_sums`)."""
        labels, codes, w = ss_class_codes(y, w, X.shape[0], self.estimator)
        Wm = class_weight_matrix(codes, w, labels.shape[0])
        R = np.empty((len(cands), X.shape[0], labels.shape[0]))
        kdiag = np.ones((len(cands), X.shape[0]))
        rbf = [c for c, kern in enumerate(cands) if kern.name == "rbf"]
        if rbf:  # every width in one compiled pass over the pairs, no kernel matrix
            from svmtune.criteria._pairloops import rbf_class_sums_multi

            sig = np.array([cands[c].sigma for c in rbf])
            R[rbf] = rbf_class_sums_multi(X, codes, w, sig, labels.shape[0])
        sq = np.einsum("ij,ij->i", X, X)
        rows_per = max(1, _BLOCK_ENTRIES // max(X.shape[0], 1))
        for c, kern in enumerate(cands):
            if kern.name == "linear":  # K W = X (X^T W): no kernel matrix
                R[c] = X @ (X.T @ Wm)
                kdiag[c] = sq
            elif kern.name == "poly":  # row blocks of the kernel matrix, never all of it
                deg = int(kern.degree)
                for start in range(0, X.shape[0], rows_per):
                    blk = slice(start, start + rows_per)
                    Kb = X[blk] @ X.T
                    Kb *= kern.gamma
                    Kb += kern.coef0
                    R[c, blk] = (Kb**deg) @ Wm
                kdiag[c] = (kern.gamma * sq + kern.coef0) ** deg
        d, sig, pooled, ss = ss_from_class_sums(R, kdiag, codes, w, self.estimator)
        sizes = Wm.sum(axis=0)
        out = []
        for c, (kern, a, b) in enumerate(zip(cands, *worst_pairs(ss))):
            m = SSMatrix(labels, d[c], sig[c], sizes, pooled[c], ss[c], self.estimator)
            res = m.result(a, b)
            out.append((kern, res.classes, res))
        return out, within_mass(R, codes, w)  # the repeat shares need no extra pass

    def _repeat_shares(self, X, y, w, cands: list[Kernel], seed: int, within=None):
        """:func:`repeat_share` of every RBF candidate (nan for the other kernels, and for
        every candidate when ``max_repeat_share`` is None: not needed).  ``within``: the
        within-class similarities of the exact path (:func:`within_mass`), which make it free;
        otherwise :func:`repeat_share`'s one pass over at most ``SHARE_ROWS`` rows (none
        when no row repeats)."""
        out = np.full(len(cands), np.nan)
        rbf = np.array([c for c, k in enumerate(cands) if k.name == "rbf"], dtype=int)
        if self.max_repeat_share is None or rbf.size == 0:
            return out
        if within is not None:
            repeats = repeat_mass(*positive_rows(X, y, w))
            # as repeat_share: 0 without repeats, also where a narrow width leaves no
            # within-class similarity at all (every off-diagonal kernel value flushed to 0)
            out[rbf] = repeats / within[rbf] if repeats > 0 else 0.0
        else:
            sig = np.array([cands[c].sigma for c in rbf])
            out[rbf] = repeat_share(X, y, w, sig, max_rows=SHARE_ROWS, random_state=seed)
        return out

    def _c_of(self, res, curve) -> float:
        """C_opt of one kernel's S&S result on ``curve`` (S&S Sec. 4)."""
        if res.d > 0:
            return c_opt(res.ss, d=res.d, curve=curve, rescale=self.rescale)
        return c_opt(-np.inf, curve=curve, rescale=False)  # no separation: nothing to rescale by

    @staticmethod
    def _params(kern: Kernel, C: float) -> dict[str, Any]:
        if kern.name == "rbf":
            return rbf_params(kern.sigma, C)
        out = kern.params()
        out["C"] = float(C)
        return out
