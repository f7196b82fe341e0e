"""The one check of a kernel matrix, and where it runs: at the door of a public function,
never inside an objective evaluation of a search or a candidate's scoring by the referee
(issue #55, "check once at the door"); likewise the checks of the low-rank searches' inputs
(``C``, the weights, the labels, the Nystroem factor, the landmarks' distances) and the
encoding of the groups."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable

import numpy as np
import pytest
import sklearn
import sklearn.utils.validation as skv
from sklearn.datasets import make_classification

import svmtune
import svmtune.methods
from svmtune import _dual_solution, _labels, _loo_losses, _validation
from svmtune._kernel_matrix_checks import TRAINED, check_kernel_matrix
from svmtune.kernels import rbf_columns, rbf_from_sqdist, squared_distances
from svmtune.loo import rbsvm_groups, referee, span, sphere, sphere_lowrank
from svmtune.lowrank import _nystroem, _solver
from svmtune.methods import _lowrank_search, get_selector
from svmtune.search.gradient import minimize_log_params


def test_check_kernel_matrix_messages():
    K = rbf_from_sqdist(squared_distances(np.arange(8.0).reshape(4, 2)), 1.0)
    assert check_kernel_matrix(K.tolist(), 4).dtype == float
    with pytest.raises(ValueError, match=r"K has shape \(4, 4\), expected \(3, 3\)$"):
        check_kernel_matrix(K, 3)
    with pytest.raises(ValueError, match="the model was trained on 3 samples: pass the kernel"):
        check_kernel_matrix(K, 3, what=TRAINED)
    columns = rbf_columns(squared_distances(np.arange(8.0).reshape(4, 2)), 1.0)
    assert check_kernel_matrix(columns, 4) is columns
    with pytest.raises(ValueError, match="K has shape"):
        check_kernel_matrix(columns, 5)
    for bad in (np.nan, np.inf):
        Kb = K.copy()
        Kb[0, 1] = bad
        with pytest.raises(ValueError, match="K contains NaN or infinity"):
            check_kernel_matrix(Kb, 4)
    huge = np.full((2, 2), 1e308)  # finite entries whose sum overflows
    assert check_kernel_matrix(huge, 2) is huge


def _replace_everywhere(monkeypatch, original: Callable, replacement: Callable) -> None:
    """Replace ``original`` in every svmtune module that holds it by name (the selectors'
    modules, which :func:`get_selector` imports on demand, imported first)."""
    for info in pkgutil.iter_modules(svmtune.methods.__path__, "svmtune.methods."):
        importlib.import_module(info.name)
    for name, module in list(sys.modules.items()):
        if name.startswith("svmtune") and module is not None:
            for attr, value in list(vars(module).items()):
                if value is original:
                    monkeypatch.setattr(module, attr, replacement)


class _Evaluations:
    """Counts the objective evaluations of the searches (and whatever else is wrapped by
    :meth:`_evaluation`), and knows whether a call is inside one (``depth``)."""

    depth = evaluations = 0

    def _evaluation(self, fun: Callable) -> Callable:
        def evaluation(*args, **kwargs):
            self.evaluations += 1
            self.depth += 1
            try:
                return fun(*args, **kwargs)
            finally:
                self.depth -= 1

        return evaluation

    def _searching(self, fun, *args, **kwargs):
        return minimize_log_params(self._evaluation(fun), *args, **kwargs)


class _Counter(_Evaluations):
    """Counts the ``O(n^2)`` checks of an ``n x n`` matrix, inside and outside the objective
    evaluations of the searches and the referee's scorings."""

    def __init__(self, monkeypatch, n: int):
        self.n = n
        self.inside = self.outside = 0
        _replace_everywhere(monkeypatch, check_kernel_matrix, self._counted(check_kernel_matrix))
        # scikit-learn's validate_data calls check_array through its module; under
        # assume_finite a pass reads no entry of an array already of float64
        monkeypatch.setattr(skv, "check_array", self._counted(skv.check_array, finite_only=True))
        _replace_everywhere(monkeypatch, minimize_log_params, self._searching)
        # the referee's unchecked kernels, which auto calls (and the public functions too)
        for name in ("_l1_loo_outputs", "_l2_loo_outputs", "_ovo_loo_outputs"):
            original = getattr(referee, name)
            _replace_everywhere(monkeypatch, original, self._evaluation(original))

    def _counted(self, check: Callable, finite_only: bool = False) -> Callable:
        def counted(*args, **kwargs):
            array = args[0] if args else kwargs.get("array")
            square = isinstance(array, np.ndarray) and array.shape == (self.n, self.n)
            if square and not (finite_only and sklearn.get_config()["assume_finite"]):
                if self.depth:
                    self.inside += 1
                else:
                    self.outside += 1
            return check(*args, **kwargs)

        return counted


#: noisy labels: most points are support vectors, so RBSVM's steps use the whole kernel
#: matrix (not its columns) and the referee's fits see all rows
X, Y = make_classification(200, 5, flip_y=0.2, class_sep=0.6, random_state=0)


@pytest.mark.parametrize("method", ["rbsvm", "span", "radius_margin", "rbsvm_lowrank"])
def test_no_kernel_matrix_check_inside_an_evaluation(monkeypatch, method):
    """The ``n x n`` checks of a selection are a constant at its entry: none inside the
    objective evaluations, so as many at ``max_eval`` 3 as at 8."""
    totals, evaluations = [], []
    for max_eval in (3, 8):
        with monkeypatch.context() as patch:
            counter = _Counter(patch, len(Y))
            get_selector(method, {"max_eval": max_eval}).select(X, Y, random_state=0)
        assert counter.inside == 0
        totals.append(counter.outside)
        evaluations.append(counter.evaluations)
    # the longer search evaluates more (L-BFGS-B may converge before its budget)
    assert evaluations[0] >= 3 and evaluations[1] > evaluations[0]
    assert totals[0] == totals[1] <= 2


def test_no_kernel_matrix_check_inside_the_referee(monkeypatch):
    """``auto``'s referee scores each candidate on its own kernel matrix without checking it
    again (``SVMTuner``'s default method)."""
    counter = _Counter(monkeypatch, len(Y))
    svmtune.SVMTuner(random_state=0).fit(X, Y)
    scorings = counter.evaluations
    assert scorings > 2  # the referee's scorings, besides the refinement's evaluations
    assert counter.inside == 0


#: the checks an objective evaluation of a search made before issue #55 and makes no more:
#: scalar options, weights, labels, the Nystroem factor and the landmarks' distances (both
#: ``O(n m)``), the solutions, and the groups' ``O(n)`` encoding
EVALUATION_CHECKS = {
    "check_C": _dual_solution.check_C,
    "validate_sample_weight": _validation.validate_sample_weight,
    "check_pm1": _labels.check_pm1,
    "check_task_labels": _solver.check_task_labels,
    "support_mask": _dual_solution.support_mask,
    "check_ridge": sphere.check_ridge,
    "check_init_support": sphere._check_init_support,
    "check_ball_options": sphere_lowrank.check_ball_options,
    "check_loss": _loo_losses.check_loss,
    "check_nonsupport": _loo_losses.check_nonsupport,
    "check_span_constants": span.check_span_constants,
    "check_lowrank_solution": _solver.check_lowrank_solution,
    "Z": _solver.check_features,
    "landmark distances": _nystroem.check_landmark_distances,
    "group_codes": rbsvm_groups.group_codes,
}


#: the landmark choice of the low-rank searches, counted once per landmark set
LANDMARKS = _lowrank_search.landmarks


class _CheckCounter(_Evaluations):
    """Counts the calls of :data:`EVALUATION_CHECKS` inside and outside the objective
    evaluations of a search, and the landmark sets a low-rank search chooses."""

    def __init__(self, monkeypatch):
        self.inside = dict.fromkeys(EVALUATION_CHECKS, 0)
        self.total = dict.fromkeys(EVALUATION_CHECKS, 0)
        self.landmark_sets = 0
        for name, check in EVALUATION_CHECKS.items():
            _replace_everywhere(monkeypatch, check, self._counted(name, check))
        _replace_everywhere(monkeypatch, minimize_log_params, self._searching)
        _replace_everywhere(monkeypatch, LANDMARKS, self._landmarks)

    def _counted(self, name: str, check: Callable) -> Callable:
        def counted(*args, **kwargs):
            self.total[name] += 1
            self.inside[name] += bool(self.depth)
            return check(*args, **kwargs)

        return counted

    def _landmarks(self, *args, **kwargs):
        self.landmark_sets += 1
        return LANDMARKS(*args, **kwargs)


@pytest.mark.parametrize(
    ("method", "weighted", "grouped"),
    [
        ("rbsvm_lowrank", False, False),
        ("rbsvm_lowrank", True, True),
        ("span_lowrank", True, False),
        ("radius_margin_lowrank", False, False),
        ("radius_margin_lowrank", True, False),
        ("rbsvm", False, True),
    ],
)
def test_no_input_check_inside_an_evaluation(monkeypatch, method, weighted, grouped):
    """A search checks its inputs and encodes its groups at its entry, and the landmarks'
    distances once per landmark set: no evaluation repeats a check, so there are as many at
    ``max_eval`` 3 as at 8."""
    rng = np.random.RandomState(0)
    sample_weight = rng.uniform(0.5, 2.0, len(Y)) if weighted else None
    groups = np.arange(len(Y)) // 4 if grouped else None
    params = {} if method == "rbsvm" else {"rank": 30}
    counters = []
    for max_eval in (3, 8):
        with monkeypatch.context() as patch:
            counter = _CheckCounter(patch)
            get_selector(method, {"max_eval": max_eval, **params}).select(
                X, Y, sample_weight=sample_weight, groups=groups, random_state=0
            )
        assert counter.inside == dict.fromkeys(EVALUATION_CHECKS, 0)
        assert counter.total["landmark distances"] == counter.landmark_sets
        counters.append(counter)
    few, many = counters
    assert many.evaluations > few.evaluations >= 3
    assert {k: v for k, v in few.total.items() if k != "landmark distances"} == {
        k: v for k, v in many.total.items() if k != "landmark distances"
    }
    # grouped: the search's encoding, and its certificate's at the chosen point
    assert (few.total["group_codes"] >= 1) == grouped and few.total["group_codes"] <= 2
