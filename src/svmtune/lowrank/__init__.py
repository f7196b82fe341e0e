"""Low-rank (Nystroem) L2-SVM for large n: ``O(n m^2)`` time; ``O(n m)`` memory where the
searches hold the features ``Z`` whole, ``O(m^2 + block x m)`` beyond the data in the
row-block path of :class:`svmtune.estimators_lowrank.LowRankL2SVC`.

The RBF kernel matrix is replaced by its Nystroem approximation ``K~ = Z Z^T`` on ``m`` fixed
landmarks, so that the L2-SVM matrix ``H = K~ + diag(d)``, ``d_i = 1 / (C w_i)`` (RBSVM eq.
(6)-(7)), is a diagonal plus a rank-``m`` term.

* :mod:`svmtune.lowrank._nystroem` -- landmarks by pivoted Cholesky (the rank rule) and the
  Nystroem factor with its exact ``log sigma`` derivative;
* :mod:`svmtune.lowrank._solver` -- the exact L2-SVM on ``Z`` (primal Newton) and its
  Woodbury factor of the support-set system (RBSVM eq. (22));
* :mod:`svmtune.lowrank._blocks`, :mod:`svmtune.lowrank._blocked_solver`,
  :mod:`svmtune.lowrank._dask_blocks` -- the same solver and its leave-one-out terms from
  passes over row blocks (NumPy, CSR or a dask array's chunks), never holding ``n x m``;
* the criteria on top live in :mod:`svmtune.loo`: the RBSVM objective
  (:mod:`svmtune.loo.rbsvm_lowrank`), the smoothed span (:mod:`svmtune.loo.span_lowrank`) and
  the radius-margin bound (:mod:`svmtune.loo.radius_margin_lowrank`).
"""

from __future__ import annotations

from svmtune._factor import WoodburyFactor
from svmtune.lowrank._nystroem import NystroemFactor, nystroem_factor, pivoted_cholesky_landmarks
from svmtune.lowrank._solver import (
    TaskSolutions,
    check_lowrank_solution,
    fit_l2_svm_lowrank,
    fit_tasks_lowrank,
    lowrank_support_system,
)

__all__ = [
    "NystroemFactor",
    "TaskSolutions",
    "WoodburyFactor",
    "check_lowrank_solution",
    "fit_l2_svm_lowrank",
    "fit_tasks_lowrank",
    "lowrank_support_system",
    "nystroem_factor",
    "pivoted_cholesky_landmarks",
]
