"""``auto``'s last stage where the subsamples end before the data do: ``C`` refined on all
rows at the chosen width, on the Nystroem kernel (issue #62, item 3).

The stages before it choose the width and ``C`` on a subsample of ``s`` rows; ``C`` was then
carried to all ``n`` rows by a power law (:func:`svmtune.methods._fidelity.carry_C`), which
has no data behind it past ``s``: on ijcnn1's 49,990 rows it kept ``C = 56`` from a
200-row stage, where libsvm's test accuracy at that width still rose up to ``C = 5,000``
(``docs/notes/auto_fidelity.md``).  Here the low-rank L2-SVM's closed-form
leave-one-out outputs on every row (RBSVM eq. (27) on ``K~ = Z Z^T``,
:func:`svmtune.loo.rbsvm_lowrank.lowrank_rbsvm_objective`) score the carried ``C`` and a few
multiples of it at the chosen width, on one set of landmarks, and the referee decides
between them row by row (:class:`svmtune.methods._auto_referee.Referee`, the carried ``C``
the incumbent).

Only ``C`` moves: at a fixed width the landmarks are the same for every candidate and the
Nystroem kernel's error is shared by them, while between widths it is not (a narrow width
needs more landmarks, so a low-rank estimate favours the wider one: on ijcnn1's 49,990 rows
at 500 landmarks its leave-one-out error ranks ``sigma = 11.6`` before ``SVC()``'s 3.3, where
libsvm's test error ranks them the other way).  And only where the landmarks hold the kernel
at that width: a trace residual / n above :data:`MAX_RESIDUAL` leaves the carried ``C``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from svmtune._progress import describe
from svmtune.loo.rbsvm_lowrank import lowrank_rbsvm_objective
from svmtune.loo.referee import row_losses
from svmtune.methods._auto_referee import _add_losses
from svmtune.methods._auto_stage import Candidate, candidate
from svmtune.methods._lowrank_search import landmarks

__all__ = ["MAX_RESIDUAL", "C_FACTOR", "ORIGIN", "AllRowsC", "all_rows_stage", "refine_C"]

#: trace residual / n of the landmarks at the chosen width above which their kernel is too
#: coarse to rank values of ``C``: the low-rank searches' own tolerance for choosing
#: landmarks (:class:`svmtune.methods._lowrank_search.LowRankSearch`'s ``rank_tol``)
MAX_RESIDUAL = 1e-2
#: the origin of the candidates it adds in ``history``
ORIGIN = "C_all_rows"
#: factor between the values of ``C`` tried: two octaves (the grid baselines' step in ``C``
#: is one), so that a few evaluations span a factor of 64 on either side of the carried ``C``
C_FACTOR = 4.0


@dataclass
class AllRowsC:
    """What :func:`refine_C` did: the candidates it scored (the carried point first), and
    why it scored none beyond the carried point (``skipped``, else None)."""

    candidates: list[Candidate] = field(default_factory=list)
    rank: int = 0
    residual: float = float("nan")
    skipped: str | None = None


def refine_C(
    X,
    y: np.ndarray,
    tasks: list[np.ndarray],
    sw: np.ndarray | None,
    groups: np.ndarray | None,
    carried: Candidate,
    *,
    evals: int,
    rank: int,
    rank_tol: float,
    log2_C: tuple[float, float],
) -> AllRowsC:
    """Score ``carried`` and up to ``evals - 1`` values of ``C`` on all rows at its width.

    From the carried ``C`` the search steps by :data:`C_FACTOR` downhill of the RBSVM
    criterion (the mean leave-one-out cross-entropy, eq. (28)-(33); the sign of its
    derivative in ``log C`` at the carried point sets the direction), within ``log2_C``,
    while the criterion falls; every point scored is a candidate with its per-row losses for
    the referee (the point past the minimum too).  One set of landmarks at the width serves
    every evaluation (``rank`` at most, fewer where the trace rule ``rank_tol`` stops
    first), and each evaluation starts from the previous one's support sets.

    Returns
    -------
    AllRowsC
        The candidates, ``carried`` first (scored here on all rows), or only ``carried``,
        unscored, with ``skipped`` saying why, where the landmarks leave more than
        :data:`MAX_RESIDUAL` of the kernel's trace.
    """
    t0 = time.perf_counter()
    sigma = carried.sigma
    idx, residual, D2_nm, D2_mm = landmarks(X, sigma, rank=rank, rank_tol=rank_tol)
    out = AllRowsC(rank=int(idx.size), residual=float(residual))
    if residual > MAX_RESIDUAL:
        out.candidates = [carried]
        out.skipped = (
            f"{idx.size} landmarks leave {residual:.3g} of the kernel's trace / n at "
            f"sigma = {sigma:.4g} (more than {MAX_RESIDUAL}): C carried"
        )
        return out
    lo, hi = (float(b) * np.log(2.0) for b in log2_C)
    total_w = float(len(y)) if sw is None else float(sw.sum())
    step = np.log(C_FACTOR)
    t, prev, supports, direction = np.log(carried.C), None, None, 0.0
    for k in range(max(int(evals), 1)):
        obj = lowrank_rbsvm_objective(
            D2_nm,
            D2_mm,
            tasks,
            [np.log(sigma), t],
            sample_weight=sw,
            init_support=supports,
            gradient=k == 0,
            groups=groups,
        )
        cand = carried if k == 0 else candidate(ORIGIN, sigma, float(np.exp(t)), 0, 0.0)
        _add_losses(cand, "l2", row_losses(y, obj.loo), sw)
        cand.rank, cand.n_svm_fits = out.rank, cand.n_svm_fits + len(tasks)
        out.candidates.append(cand)
        value = obj.value / total_w
        if prev is not None and value >= prev:  # past the criterion's minimum along C
            break
        if k == 0:
            direction = -np.sign(obj.grad[1])
        prev, supports = value, obj.supports
        t_next = float(np.clip(t + direction * step, lo, hi))
        if direction == 0.0 or t_next == t:
            break
        t = t_next
    spent = time.perf_counter() - t0
    for c in out.candidates:
        c.time += spent / len(out.candidates)
    return out


def all_rows_stage(st, last, winner, carried, referee, history, progress, **options):
    """Run the all-rows stage ``st`` of ``auto`` (:class:`~svmtune.methods._auto_stage.
    StageData` of every row) from ``carried``, the winner of the stage ``last`` with ``C``
    carried: :func:`refine_C` with ``options``, the ``referee``'s decision among its
    candidates (``carried`` the incumbent), added to ``history`` and reported to
    ``progress``.  Returns the stage and its winner, or ``last`` and ``winner`` where the
    landmarks cannot hold the kernel at the width (``carried`` then joins ``history``
    unscored, its ``decided`` saying why)."""
    res = refine_C(st.X, st.y, st.tasks, st.sw, st.groups, carried,
                   evals=st.stage.steps + st.stage.scores, **options)  # fmt: skip
    progress.evaluated(st.stage, len(res.candidates))
    for c in res.candidates:
        c.stage, c.rows = st.index, st.size
    if res.skipped is not None:
        carried.decided = f"not scored: {res.skipped}"
        history.append(carried)
        progress.stage_done(st.index, f"stage {st.index}: {res.skipped}")
        return last, winner
    best = referee.decide(res.candidates, st.families)
    best.chosen_in_stage = True
    history.extend(res.candidates)
    text = f"stage {st.index}: {st.size:,} rows, C on all rows: {describe(best.params)}"
    progress.stage_done(st.index, text)
    return st, best
