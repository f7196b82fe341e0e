"""``method="auto"``: data-only starts, a short exact-gradient refinement, a closed-form referee.

The published methods are complementary, and this method composes them:

1. **Starts** -- data-only candidates, each at about one SVM fit or less: scikit-learn's
   ``SVC()`` point (``gamma="scale"``, ``C = 1``; always a candidate), the median heuristic
   width with ``C = 1`` (RBSVM's start), LD's width with ``C = 1`` (Menezes et al. 2019,
   ``ld_c1``) and the S&S ratio's ``(sigma, C)`` (Shamsi & Beheshti, ``ss``).
2. **Referee** -- every candidate is scored by a closed-form leave-one-out estimate of each
   model it could become (:mod:`svmtune.loo.referee`): the span-rule for libsvm's hinge-loss
   SVC (Weighted span Corollary 1, eq. (37)) and RBSVM eq. (27) for the L2-SVM.  The
   candidate and final model family with the lowest estimate win; the estimate becomes
   ``estimate``.
3. **Refinement** -- from the start the referee ranks first, a short exact-gradient descent of
   a leave-one-out criterion (RBSVM's cross-entropy, ``refine="rbsvm"``, or the smoothed
   span, ``"span"``; :func:`svmtune.search.gradient.minimize_log_params`) within
   ``max_eval`` SVM trainings; its end point joins the candidates before the referee decides.

Ties of the referee (leave-one-out errors are counts) go to the earlier candidate in the
order above (``SVC()``'s point first: a move away from it has to show fewer leave-one-out
errors), and for one candidate to the family listed first in ``families``.

The defaults -- the median start besides ``SVC()``'s point, one RBSVM refinement, both
families with ties to the L2-SVM -- were chosen on 43 bundled data sets by comparing every
combination of starts, refinements, families and tie order offline
(``benchmarks/auto_study.py`` records every candidate's estimates and test accuracy,
``benchmarks/auto_rules.py`` compares the rules and picks one by leave-one-data-set-out
cross-validation; ``benchmarks/auto_rules.md``) among the rules within the cost budget of one
refinement; LD's start, which the cross-validation also picks, is left out by its cost (its
pair statistics cost more SVM fits than it gains).

**Size.**  Above ``max_dense`` training rows (default 5,000), or when the exact path's
dense ``n x n`` matrices do not fit in memory (:func:`svmtune._validation.check_dense_memory`),
the low-rank path runs instead: the same starts but LD (its pair statistics are ``O(n^2)``),
the referee is RBSVM eq. (27) of the L2-SVM on a Nystroem kernel
(:class:`svmtune.methods.rbsvm_lowrank.RBSVMLowRank`, ``O(n m^2)``), the refinement RBSVM on
that kernel, and the final model libsvm's SVC (refitting the exact L2-SVM needs the ``n x n``
kernel).

**Sparse X.**  A scipy sparse ``X`` (CSR/CSC) always takes the low-rank path, whatever ``n``:
its Nystroem factor needs only kernel columns between the rows and ``m`` landmarks, from
sparse dot products (:mod:`svmtune.methods._lowrank_search`), so ``X`` is never densified;
``SVC()``'s point takes ``gamma="scale"`` from the sparse matrix as scikit-learn does
(:class:`svmtune.methods.default.DefaultSVC`), the median width a random subsample's
distances, and the final model is libsvm's SVC, which fits on the sparse rows.  (An exact
path for small sparse ``X`` would compute the same dense ``n x n`` kernel from sparse dot
products, but its LD and S&S starts and its L2-SVM final model need dense ``X``; one path
for all sparse ``X`` keeps it simple and its memory ``O(nnz + n m)``.)  Starts that need a
dense ``X`` (LD, S&S) are skipped there, as LD is on the low-rank path.

**Groups.**  With ``groups`` the referee and the refinement hold out whole groups: the
leave-one-group-out outputs of the L2-SVM (:func:`svmtune.loo.rbsvm_groups.closed_form_lgo`)
and RBSVM with groups; the span-rule holds out single rows, so the family is the L2-SVM.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from svmtune._progress import current as current_progress
from svmtune._progress import describe
from svmtune._validation import available_memory
from svmtune.kernels import rbf_from_sqdist, squared_distances
from svmtune.loo.referee import (
    FAMILIES,
    l1_loo_outputs,
    l2_loo_outputs,
    ovo_loo_outputs,
    referee_error,
)
from svmtune.methods._constraints import Check, IntegerLike
from svmtune.methods.base import Selection, Selector, get_selector, ovr_tasks
from svmtune.methods.baselines import LOG2_RANGE, rbf_params
from svmtune.search.start import EXACT_DENSE_MATRICES, initial_sigma

__all__ = ["Auto", "START_NAMES", "REFINERS"]

#: the data-only starts, in the referee's tie order
START_NAMES = ("default", "median", "ld", "ss")
#: refinements: the exact gradient searches (the low-rank path refines with rbsvm_lowrank)
REFINERS = ("rbsvm", "span")


def _check_names(name: str, value, allowed, *, empty_ok: bool) -> tuple[str, ...]:
    vals = (value,) if isinstance(value, str) else value
    try:
        vals = tuple(vals)
    except TypeError:
        vals = (value,)
    bad = [v for v in vals if not isinstance(v, str) or v not in allowed]
    if bad or (not vals and not empty_ok) or len(set(vals)) != len(vals):
        raise ValueError(
            f"{name} must be {'a possibly empty' if empty_ok else 'a non-empty'} list of "
            f"distinct names among {tuple(allowed)}, got {value!r}"
        )
    return vals


def _names(allowed, *, empty_ok: bool) -> Check:
    """The constraint "a list of distinct names among ``allowed``" (:func:`_check_names`)."""
    return Check(
        lambda name, value: _check_names(name, value, allowed, empty_ok=empty_ok),
        f"a list of distinct names among {tuple(allowed)}",
    )


class Auto(Selector):
    """The default method: data-only starts, a short gradient refinement, a closed-form referee.

    Parameters
    ----------
    starts : sequence of {"default", "median", "ld", "ss"}
        Data-only starting candidates besides ``SVC()``'s point, which is always one.
    refine : sequence of {"rbsvm", "span"}
        Gradient refinements run from the best start (each adds one candidate); empty for
        none.  ``"span"`` holds out single rows and is skipped with ``groups``.
    max_eval : int
        SVM trainings per refinement (the gradient search's ``max_eval``; default 10).
    families : sequence of {"l1", "l2"}
        Final models the referee may choose: libsvm's hinge-loss SVC, the L2-SVM; equal
        estimates go to the one listed first (default ``("l2", "l1")``).
    log2_sigma, log2_C : (lo, hi)
        Box of the refinement in log2 units (default ``(-8, 8)``, the grid baselines').
    max_dense : int
        Largest number of training rows for the exact path (default 5,000: its ``n x n``
        matrices then take ``EXACT_DENSE_MATRICES * 8 n^2`` = 1.2 GB and more rows make its
        ``O(n_sv^3)`` steps the cost); above it, and for sparse ``X`` at any size, the
        low-rank path runs.
    rank : int
        Nystroem rank of the low-rank path
        (as :class:`~svmtune.methods.rbsvm_lowrank.RBSVMLowRank`).

    Notes
    -----
    ``history`` holds one entry per candidate: ``origin``, ``sigma``, ``C``, the referee's
    ``estimate_l1`` / ``estimate_l2`` (None where not scored), ``n_svm_fits`` and ``time``
    (seconds) it cost.  ``info`` holds ``path`` ("exact" or "lowrank"), ``chosen`` (origin)
    and ``family``.
    """

    name = "auto"
    kernels = ("rbf",)
    accepts_sparse = True  # sparse X: the low-rank path (module docstring)
    held_out = "groups"
    _parameter_constraints = {
        "starts": [_names(START_NAMES[1:], empty_ok=True)],
        "refine": [_names(REFINERS, empty_ok=True)],
        "max_eval": [IntegerLike(1)],
        "families": [_names(FAMILIES, empty_ok=False)],
        "log2_sigma": [LOG2_RANGE],
        "log2_C": [LOG2_RANGE],
        "max_dense": [IntegerLike(2)],
        "rank": [IntegerLike(1)],
    }

    def __init__(
        self,
        *,
        starts=("median",),
        refine=("rbsvm",),
        max_eval: int = 10,
        families=("l2", "l1"),
        log2_sigma=(-8.0, 8.0),
        log2_C=(-8.0, 8.0),
        max_dense: int = 5000,
        rank: int = 500,
    ):
        opts = self._validate_options(
            starts=starts,
            refine=refine,
            max_eval=max_eval,
            families=families,
            log2_sigma=log2_sigma,
            log2_C=log2_C,
            max_dense=max_dense,
            rank=rank,
        )
        for key, value in opts.items():
            setattr(self, key, value)

    # ------------------------------------------------------------------ starts
    def _start_points(self, X, y, sw, D2, multiclass, random_state) -> list[dict[str, Any]]:
        """The data-only candidates ``{"origin", "sigma", "C", "n_svm_fits", "time"}``."""
        out = []
        for origin in ("default", *self.starts):
            if origin == "ld" and D2 is None:
                continue  # O(n^2) pair statistics: exact path only
            if origin == "ss" and sp.issparse(X) and not get_selector("ss").accepts_sparse:
                continue  # its statistics need a dense X
            t0 = time.perf_counter()
            if origin == "median":
                sigma, C, fits = self._median_sigma(X, sw, D2, random_state), 1.0, 0
            else:
                name = {"default": "default", "ld": "ld_c1", "ss": "ss"}[origin]
                with warnings.catch_warnings():  # a start's own advice is not the user's
                    warnings.simplefilter("ignore")
                    sel = get_selector(name).select(
                        X, y, sw, random_state=random_state, multiclass=multiclass
                    )
                sigma, C, fits = sel.params["sigma"], sel.params["C"], sel.n_svm_fits
            out.append(
                {
                    "origin": origin,
                    "sigma": float(sigma),
                    "C": float(C),
                    "n_svm_fits": fits,
                    "time": time.perf_counter() - t0,
                }
            )
        return out

    @staticmethod
    def _median_sigma(X, sw, D2, random_state) -> float:
        keep = np.ones(X.shape[0], dtype=bool) if sw is None else sw > 0
        if D2 is not None:
            return initial_sigma(D2[np.ix_(keep, keep)], rule="median")
        rng = np.random.RandomState(random_state)
        idx = np.flatnonzero(keep)
        sub = rng.choice(idx, size=min(idx.size, 2000), replace=False)
        return initial_sigma(squared_distances(X[sub]), rule="median")

    # ------------------------------------------------------------------ referee
    def _referee_exact(self, cand, D2, y, tasks, sw, multiclass, groups) -> None:
        """Closed-form LOO error of each family at ``cand`` (added to ``cand`` in place; a
        family whose estimate the refinement already gave is kept)."""
        t0 = time.perf_counter()
        K = rbf_from_sqdist(D2, cand["sigma"])
        C, fits, supports = cand["C"], 0, None
        pairwise = multiclass == "ovo" and len(tasks) > 1
        if "estimate_l1" not in cand:  # first: its support vectors start the L2-SVM's solver
            err = None
            if "l1" in self.families and groups is None:  # the span-rule holds out rows
                if pairwise:
                    outs = ovo_loo_outputs(K, y, C, sw)
                else:
                    outs, supports = l1_loo_outputs(K, tasks, C, sw)
                err, fits = referee_error(y, outs, sw, pairwise=pairwise), len(outs)
            cand["estimate_l1"] = err
        if "estimate_l2" not in cand:
            err = None
            if "l2" in self.families:
                outs = l2_loo_outputs(K, tasks, C, sw, groups=groups, init_supports=supports)
                err, fits = referee_error(y, outs, sw), fits + len(tasks)
            cand["estimate_l2"] = err
        cand["n_svm_fits"] += fits
        cand["time"] += time.perf_counter() - t0

    def _referee_lowrank(self, cand, X, y, sw, groups, random_state) -> None:
        """Low-rank closed-form LOO error of the L2-SVM at ``cand`` (one objective evaluation
        of RBSVM on a Nystroem kernel, :class:`~svmtune.methods.rbsvm_lowrank.RBSVMLowRank`)."""
        cand["estimate_l1"] = None
        if "estimate_l2" in cand:  # the refinement's own: the same closed form
            return
        t0 = time.perf_counter()
        with warnings.catch_warnings():  # one evaluation: the search's budget warning
            warnings.simplefilter("ignore")
            sel = self._lowrank_search((cand["sigma"], cand["C"]), 1).select(
                X,
                y,
                sw,
                random_state=random_state,
                **({} if groups is None else {"groups": groups}),
            )
        cand["estimate_l2"] = sel.estimate
        cand["n_svm_fits"] += sel.n_svm_fits
        cand["time"] += time.perf_counter() - t0

    def _lowrank_search(self, start, max_eval: int):
        return get_selector(
            "rbsvm_lowrank",
            {
                "start": start,
                "max_eval": max_eval,
                "rank": self.rank,
                "jump_restarts": 0,
                "log2_sigma": self.log2_sigma,
                "log2_C": self.log2_C,
            },
        )

    # ------------------------------------------------------------------ refinement
    def _refine(self, refiner, best, X, D2, y, sw, groups, random_state):
        """A gradient search from ``best`` (exact: on the selection's ``D2``; low rank when
        ``D2`` is None), as a candidate."""
        t0 = time.perf_counter()
        start = (best["sigma"], best["C"])
        kw = {} if groups is None else {"groups": groups}
        with warnings.catch_warnings():  # bound and budget warnings of an inner search
            warnings.simplefilter("ignore")
            if D2 is None:
                search = self._lowrank_search(start, self.max_eval)
                sel = search.select(X, y, sw, random_state=random_state, **kw)
            else:
                opts = {"max_eval": self.max_eval, "jump_restarts": 0}
                opts.update(log2_sigma=self.log2_sigma, log2_C=self.log2_C)
                search = get_selector(refiner, opts)
                sel = search.search(D2, np.log(start), y, sw, random_state=random_state, **kw)
        cand = {
            "origin": refiner,
            "sigma": float(sel.params["sigma"]),
            "C": float(sel.params["C"]),
            "n_svm_fits": int(sel.n_svm_fits),
            "time": time.perf_counter() - t0,
        }
        if refiner == "rbsvm":  # its estimate is the referee's: eq. (27) at its end point
            cand["estimate_l2"] = sel.estimate
        return cand

    # ------------------------------------------------------------------ select
    def _exact_fits(self, n: int) -> bool:
        if n > self.max_dense:
            return False
        avail = available_memory()
        return avail is None or EXACT_DENSE_MATRICES * 8.0 * n * n <= avail

    def select(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None = None,
        *,
        groups: np.ndarray | None = None,
        kernel: str = "rbf",
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        multiclass: str = "ovr",
    ) -> Selection:
        """See :meth:`svmtune.methods.base.Selector.select`."""
        self.check_kernel(kernel)
        self.check_groups(groups)
        if groups is not None and "l2" not in self.families:
            raise ValueError(
                f"families={self.families!r} cannot hold out groups: the span-rule of libsvm's "
                "SVC holds out single rows; include 'l2' (leave-one-group-out of the L2-SVM)"
            )
        sparse = sp.issparse(X)  # the low-rank path, never densified (module docstring)
        X = sp.csr_matrix(X, dtype=float) if sparse else np.asarray(X, dtype=float)
        y = np.asarray(y)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        tasks = ovr_tasks(y)
        exact = not sparse and self._exact_fits(len(y))
        D2 = squared_distances(X) if exact else None
        cands = self._start_points(X, y, sw, D2, multiclass, random_state)
        cands = [c for i, c in enumerate(cands) if not _same_point(c, cands[:i])]

        reporter = current_progress()

        def referee(c):
            if exact:
                self._referee_exact(c, D2, y, tasks, sw, multiclass, groups)
            else:
                self._referee_lowrank(c, X, y, sw, groups, random_state)
            if reporter is not None:
                reporter.advance(1, "candidates")
                errs = ", ".join(
                    f"{f} {c[f'estimate_{f}']:.4f}"
                    for f in FAMILIES
                    if c.get(f"estimate_{f}") is not None
                )
                reporter.line(f"{c['origin']} {describe(c)}: leave-one-out error {errs}")

        refiners = [r for r in self.refine if not (r == "span" and groups is not None)]
        if not exact:  # the low-rank path refines with RBSVM on the Nystroem kernel
            refiners = refiners[:1]
        if reporter is not None:
            reporter.cover(len(cands) + len(refiners), "candidates")
        for c in cands:
            referee(c)
        fams = list(self.families) if exact else ["l2"]  # low rank: the L2-SVM's estimate
        best = min(cands, key=lambda c: _best(c, fams)[0])
        for r in refiners:
            c = self._refine(r, best, X, D2, y, sw, groups, random_state)
            referee(c)
            cands.append(c)
        chosen = min(cands, key=lambda c: _best(c, fams)[0])
        family = _best(chosen, fams)[1]
        for c in cands:
            c["chosen"] = c is chosen
        return Selection(
            params=rbf_params(chosen["sigma"], chosen["C"]),
            estimate=chosen[f"estimate_{family}"],
            criterion=chosen[f"estimate_{family}"],
            n_svm_fits=int(sum(c["n_svm_fits"] for c in cands)),
            history=cands,
            final_model=family if exact else "l1",
            info={
                "path": "exact" if exact else "lowrank",
                "chosen": chosen["origin"],
                "family": family if exact else "l1",
                "referee": "span-rule / eq. (27)" if exact else "eq. (27), Nystroem",
                **({} if groups is None else {"n_groups": int(np.unique(groups).size)}),
            },
        )


def _best(c: dict[str, Any], families: list[str]) -> tuple[float, str]:
    """``c``'s lowest estimate and its family; equal estimates go to the family listed first
    (``min`` keeps the first of equal keys, and so does the ``min`` over candidates)."""
    scores = [(c[f"estimate_{f}"], f) for f in families if c.get(f"estimate_{f}") is not None]
    return min(scores, key=lambda s: s[0])


def _same_point(c: dict[str, Any], others: list[dict[str, Any]]) -> bool:
    return any(
        np.isclose(c["sigma"], o["sigma"], rtol=1e-9) and np.isclose(c["C"], o["C"], rtol=1e-9)
        for o in others
    )
