"""The cost model of ``method="auto"``'s plan (:mod:`svmtune.methods._fidelity`): the work of
an ``SVC()`` fit, of an exact and of a low-rank evaluation and of the final-model rule, in
kernel-entry units, all pure functions of counts (rows, features, tasks, landmarks, the
probes' shares of support vectors), never of a clock.

**Cost model.**  The unit is one fit of scikit-learn's ``SVC()`` on all ``n`` rows.  Work is
counted in kernel-entry units and converted with constants measured on this project's
machines (``benchmarks/auto_cost_model.py`` prints them; ``benchmarks/auto_cost_model.md``):

* ``SVC()`` on ``s`` rows: ``s^2 (d + D_EXP) f / SV_FRACTION`` -- libsvm computes kernel
  columns of ``s`` entries (each ``d`` flops and an exponential, :data:`D_EXP`) for the rows
  that stay active, about the support vectors: ``f`` is the share of support vectors of
  ``SVC()`` on a probe subsample of :data:`PROBE_ROWS` rows, which ``auto`` fits first (an
  easy data set like ijcnn1 keeps a quarter of its rows as support vectors, a hard one like
  eeg_eye_state four fifths, and its ``SVC()`` costs that much more against the closed
  forms), and :data:`SV_FRACTION` the median of that share over the calibration's data sets;
* an exact objective evaluation or referee score on ``s`` rows:
  ``KAPPA_KERNEL s^2 (d + D_EXP) + KAPPA_CUBE T s^3`` -- the kernel matrix and the work that
  grows like it, and per task (``T``) the support-set factorisation, its inverse and the
  gradient's products, each ``O(s^3)`` when the support set is a fair share of the rows;
* a low-rank evaluation on ``s`` rows and ``m`` landmarks:
  ``KAPPA_LOWRANK * (s m (LANDMARK_PASSES d + D_EXP) + T s m^2)`` -- the landmarks' pivoted
  Cholesky and the kernel to them read every row's ``d`` features ``LANDMARK_PASSES`` times
  per landmark (:func:`svmtune.estimators_lowrank.lowrank_fit_flops` counts 4 and 2), the
  factor and the solver's products ``s m^2`` per task.

The model takes the support set as large as the rows; the benchmark reports the measured
cost beside the plan (``benchmarks/scaling_auto.md``, ``benchmarks/auto_eta.py``).

**The final-model rule's work.**  Where the last stage is not exact on all rows, ``auto``
chooses the final model by fitting, on :func:`rule_rows` rows ``r``, scikit-learn's
``SVC()`` and libsvm at the chosen point (both counted as ``SVC()`` fits on ``r`` rows at
the share of support vectors of ``r`` rows, :func:`sv_fraction_at`), predicting
:func:`held_out_rows` held-out rows ``h`` with the latter (``h`` rows against its support
vectors: ``h / r`` of a fit's kernel columns), computing the low-rank model's landmarks on
the ``r`` rows where the last stage was exact, and fitting the low-rank L2-SVM there (and
predicting the ``h`` rows on its landmarks) where it is the cheaper final model
(:func:`svmtune.methods._auto_final.final_rule`).  Two counts are bounds: the landmarks are
priced at the plan's cap ``rank`` (the trace rule stops earlier where the kernel's spectrum
falls fast), and the low-rank fit wherever that model is the cheaper final one (the rule
fits it only where libsvm's predicted fit also exceeds what the budget has left).  Beside
the rule, the learning-curve test (:mod:`svmtune.methods._auto_curve`) fits libsvm at the
chosen point and at ``SVC()``'s on the ``r`` rows and on ``r / GROWTH`` of them, and predicts
the ``h`` rows with each: priced wherever the rule is, though it runs only where the chosen
point is not ``SVC()``'s (a third bound), and only where the last stage holds fewer than
``n`` rows and libsvm's fit is the plan's reserve for the final model.
:func:`rule_work` counts these steps and
:func:`rule_cost` prices them; ``tests/methods/test_fidelity.py`` counts what the rule
really fits and predicts against them.  Until issue 63 the plan charged two fits at the
share of support vectors of all ``n`` rows and nothing else: on ijcnn1 (20,000 rows) the
rule took 0.16 ``SVC()`` fits against 0.031 planned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "GROWTH",
    "HELD_OUT_ROWS",
    "RuleWork",
    "exact_eval_cost",
    "held_out_rows",
    "lowrank_eval_cost",
    "rule_cost",
    "rule_rows",
    "rule_work",
    "sv_fraction_at",
    "svc_fit_cost",
]

#: flops-equivalent of one kernel entry beyond its ``d`` products (the exponential, libsvm's
#: cache bookkeeping); measured by ``benchmarks/auto_cost_model.py``
D_EXP = 8.0
#: an exact evaluation's ``s^2`` work against one ``SVC()`` fit on the same rows, and its
#: ``s^3`` work per task: a least-absolute-log-error fit over 20 cells (5 bundled sets, 250
#: to 2,000 rows, the unit scaled by each set's probe share of support vectors;
#: ``benchmarks/auto_cost_model.md``, median error 13 %)
KAPPA_KERNEL = 1.2
KAPPA_CUBE = 0.118
#: a low-rank evaluation's work (``O(s m^2)`` matrix products, a few Newton steps) against
#: ``SVC()``'s: the median over the cells of ``benchmarks/auto_cost_model.md`` of at least
#: 2,000 rows, where the path is planned (1.0 over all its cells, down to 250 rows)
KAPPA_LOWRANK = 1.38
#: rows of the probe ``SVC()`` fit whose share of support vectors scales the unit
PROBE_ROWS = 1000
#: the median share of support vectors of ``SVC()`` on the probe over the calibration's data
#: sets (``benchmarks/auto_cost_model.md``)
SV_FRACTION = 0.52
#: the smallest share taken (a probe with almost no support vectors would make the unit vanish)
MIN_SV_FRACTION = 0.05
#: passes over the features per landmark of a low-rank evaluation: pivoted Cholesky's
#: distances (4) and the kernel to the landmarks (2), as counted by
#: :func:`svmtune.estimators_lowrank.lowrank_fit_flops`
LANDMARK_PASSES = 6.0
#: rows above which the selection's work stops growing (issue 64; the budget of
#: :func:`svmtune.methods._fidelity.default_budget` and the rule's rows, :func:`rule_rows`)
LARGE_ROWS = 100_000
#: most held-out rows of the final-model rule's comparison
HELD_OUT_ROWS = 20000
#: growth of the plan's stage sizes (successive halving's usual factor 3 to 4), and the ratio
#: of the learning-curve test's two training sizes (:mod:`svmtune.methods._auto_curve`)
GROWTH = 4


def svc_fit_cost(s: float, d: int, sv_fraction: float | None = None) -> float:
    """Work of one ``SVC()`` fit on ``s`` rows of ``d`` features whose probe ``SVC()`` kept
    ``sv_fraction`` of its rows as support vectors (None: :data:`SV_FRACTION`; module
    docstring)."""
    f = SV_FRACTION if sv_fraction is None else max(float(sv_fraction), MIN_SV_FRACTION)
    return float(s) ** 2 * (d + D_EXP) * f / SV_FRACTION


def sv_fraction_at(n: int, rows, fractions) -> float:
    """``SVC()``'s share of support vectors on ``n`` rows from its shares ``fractions`` on
    nested probes of ``rows`` rows: the last share where ``n`` is at most its probe's rows or
    only one probe was fitted, else the power law through the last two probes, its exponent
    clipped to ``[-1, 0]`` (:mod:`svmtune.methods._fidelity`'s docstring)."""
    rows = [float(r) for r in rows]
    fractions = [float(f) for f in fractions]
    f = fractions[-1]
    if len(rows) < 2 or n <= rows[-1] or rows[-1] <= rows[-2] or min(fractions[-2:]) <= 0:
        return f
    slope = np.log(fractions[-1] / fractions[-2]) / np.log(rows[-1] / rows[-2])
    return float(f * (n / rows[-1]) ** float(np.clip(slope, -1.0, 0.0)))


def exact_eval_cost(s: float, d: int, n_tasks: int) -> float:
    """Work of one exact closed-form evaluation on ``s`` rows (module docstring)."""
    return KAPPA_KERNEL * float(s) ** 2 * (d + D_EXP) + KAPPA_CUBE * n_tasks * float(s) ** 3


def lowrank_eval_cost(s: float, d: int, n_tasks: int, rank: int) -> float:
    """Work of one low-rank evaluation on ``s`` rows and ``rank`` landmarks."""
    m = float(min(rank, s))
    return KAPPA_LOWRANK * (
        float(s) * m * (LANDMARK_PASSES * d + D_EXP) + n_tasks * float(s) * m * m
    )


def rule_rows(n: int, first: int) -> int:
    """Rows of the final-model rule's fits (:func:`svmtune.methods._auto_final.final_rule`):
    the first stage's ``first`` rows, at most ``2 * PROBE_ROWS`` of them (the larger probe's
    size, where libsvm's counts already served the cost model), or an eighth of all ``n``
    rows (of at most :data:`LARGE_ROWS`, where the selection's work stops growing:
    12,500) where that is more.  A large low-rank first stage (sparse rows: 15,944 of
    20,000) made the rule's two libsvm fits cost a minute, more than the final fit; an
    eighth of ``10^6`` rows would take libsvm many minutes."""
    return max(min(first, 2 * PROBE_ROWS), min(n, LARGE_ROWS) // 8, 1)


def held_out_rows(n: int, rows: int) -> int:
    """Held-out rows of the final-model rule: the next rows of the nested order after its
    ``rows``, as many, at most :data:`HELD_OUT_ROWS` (none where no row is left)."""
    return max(0, min(int(rows), HELD_OUT_ROWS, int(n) - int(rows)))


@dataclass(frozen=True)
class RuleWork:
    """What the final-model rule does on ``n`` rows (module docstring): ``libsvm_fits`` fits
    on ``rows`` rows, predictions of ``held`` held-out rows by the chosen point's SVC,
    the low-rank model's ``landmarks`` on the rows (where the last stage was exact) and its
    ``lowrank_fit`` with predictions of the held-out rows (where it may be the final
    model), and (``curve``) the learning-curve test's libsvm fits at the chosen point and
    ``SVC()``'s on ``rows`` and ``rows // GROWTH`` rows, each predicting the ``held`` rows
    (:mod:`svmtune.methods._auto_curve`)."""

    rows: int
    held: int
    libsvm_fits: int = 2
    landmarks: bool = False
    lowrank_fit: bool = False
    curve: bool = True

    def work(
        self,
        d: int,
        n_tasks: int,
        rank: int,
        sv_fraction: float | None,
        small_fraction: float | None = None,
    ) -> float:
        """The steps' work (:func:`svc_fit_cost` units) at ``sv_fraction``, the share of
        support vectors on :attr:`rows` rows, and ``small_fraction``, on the learning-curve
        test's ``rows // GROWTH`` (default ``sv_fraction``)."""
        r = float(self.rows)
        fit = svc_fit_cost(r, d, sv_fraction)
        m = float(min(rank, r))
        work = (self.libsvm_fits + self.held / r) * fit
        if self.curve:  # the learning-curve test: libsvm at two points on r and s rows
            s = float(max(self.rows // GROWTH, 1))
            small = svc_fit_cost(s, d, sv_fraction if small_fraction is None else small_fraction)
            work += 2 * (fit + small) + 2 * self.held * (fit / r + small / s)
        if self.landmarks:  # pivoted Cholesky and the kernel to the landmarks on the rows
            work += KAPPA_LOWRANK * r * m * (LANDMARK_PASSES * d + D_EXP)
        if self.lowrank_fit:  # its fit, and the held-out rows' kernel to its landmarks
            work += lowrank_eval_cost(r, d, n_tasks, rank)
            work += KAPPA_LOWRANK * self.held * m * (d + D_EXP)
        return work


def rule_work(
    n: int, first: int, *, landmarks: bool, lowrank_fit: bool, curve: bool = True
) -> RuleWork:
    """The final-model rule's steps on ``n`` rows after a first stage of ``first`` rows
    (:func:`rule_rows`, :func:`held_out_rows`), with the learning-curve test's (``curve``:
    where the last stage holds fewer than ``n`` rows)."""
    rows = rule_rows(n, first)
    held = held_out_rows(n, rows)
    return RuleWork(rows, held, landmarks=landmarks, lowrank_fit=lowrank_fit, curve=curve)


def rule_cost(
    n: int,
    d: int,
    n_tasks: int,
    first: int,
    *,
    rank: int,
    unit: float,
    share: Callable[[int], float | None],
    landmarks: bool,
    lowrank_fit: bool,
    curve: bool = True,
) -> float:
    """The final-model rule's work (:func:`rule_work`) in ``SVC()`` fits of work ``unit``,
    each of its libsvm fits at ``share(rows)``, the share of support vectors on its rows."""
    steps = rule_work(n, first, landmarks=landmarks, lowrank_fit=lowrank_fit, curve=curve)
    small = share(max(steps.rows // GROWTH, 1))
    return steps.work(d, n_tasks, rank, share(steps.rows), small) / unit
