"""The referee's closed-form leave-one-out outputs against retraining without each row."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC

from svmtune.kernels import Kernel
from svmtune.loo import brute_force_loo
from svmtune.loo.closed_form import loo_exact_mask
from svmtune.loo.rbsvm_groups import closed_form_lgo
from svmtune.loo.referee import (
    l1_loo_outputs,
    l2_loo_outputs,
    ovo_loo_outputs,
    ovo_loo_predictions,
    referee_error,
)
from svmtune.methods.base import ovr_tasks
from svmtune.svm import fit_l1_svm, fit_l2_svm
from tests.loo.test_span_rule import _stable_candidate, stable_mask


def _multiclass(seed: int, n: int = 36, k: int = 3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    X = rng.normal(size=(n, 2)) + 1.5 * np.column_stack([np.cos(y), np.sin(y)])
    K = Kernel("rbf", sigma=float(2 ** rng.uniform(-0.5, 1)))(X)
    return K, y


@pytest.mark.parametrize("seed", range(6))
def test_l2_outputs_equal_retraining_where_exact(seed):
    K, y = _multiclass(seed, k=2 + seed % 3)
    C = float(2 ** np.random.default_rng(seed).uniform(-2, 3))
    tasks = ovr_tasks(y)
    outs = l2_loo_outputs(K, tasks, C)
    assert len(outs) == (1 if y.max() == 1 else y.max() + 1)
    all_exact = np.ones(y.size, dtype=bool)
    brute, n_exact = [], 0
    for t, r in zip(tasks, outs):
        exact = loo_exact_mask(fit_l2_svm(K, t, C), K)
        f = brute_force_loo(K, t, C, loss="l2")
        np.testing.assert_allclose(r[exact], f[exact], rtol=1e-6, atol=1e-8)
        all_exact &= exact
        n_exact += exact.sum()
        brute.append(f)
    assert n_exact >= len(tasks) * y.size // 5  # the exact case is a common one
    # the error counts the same arg-max as the retrained models on the rows exact in every
    # task (all of them for seed 3)
    mask = all_exact
    assert mask.any() or seed != 3
    if not mask.any():
        return
    pred = (brute[0] > 0).astype(int) if len(brute) == 1 else np.argmax(np.column_stack(brute), 1)
    got = referee_error(y[mask], [r[mask] for r in outs])
    assert got == pytest.approx(np.mean(pred[mask] != y[mask]))


def test_l2_outputs_do_not_depend_on_the_warm_start():
    K, y = _multiclass(4, k=3)
    tasks = ovr_tasks(y)
    cold = l2_loo_outputs(K, tasks, 2.0)
    _, supports = l1_loo_outputs(K, tasks, 2.0)
    warm = l2_loo_outputs(K, tasks, 2.0, init_supports=supports)
    for a, b in zip(cold, warm):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_l2_outputs_with_groups_are_leave_one_group_out():
    K, y = _multiclass(3, k=2)
    groups = np.arange(y.size) // 3
    t = np.where(y == 1, 1.0, -1.0)
    outs = l2_loo_outputs(K, [t], 1.0, groups=groups)
    np.testing.assert_allclose(outs[0], closed_form_lgo(fit_l2_svm(K, t, 1.0), K, groups))


def test_l1_error_equals_brute_force_loo_on_stable_problems():
    # the problems of the span-rule's own exactness test (support sets survive every LOO)
    checked = 0
    for seed in (498, 604, 648, 1258, 1527):
        K, t, w, C = _stable_candidate(seed)
        sol = fit_l1_svm(t, C, K=K, sample_weight=w, tol=1e-10)
        if not stable_mask(K, t, C, w, sol).all():
            continue
        y = (t > 0).astype(int)
        outs, supports = l1_loo_outputs(K, [t], C, w)
        f = brute_force_loo(K, t, C, loss="l1", sample_weight=w, tol=1e-10)
        assert len(supports) == 1 and np.array_equal(supports[0], sol.support)
        np.testing.assert_allclose(outs[0], f, atol=2e-3)  # libsvm's tol=1e-3 in the referee
        assert referee_error(y, outs) == pytest.approx(np.mean(t * f <= 0))
        checked += 1
    assert checked >= 3


def test_ovo_votes_are_libsvm_votes():
    K, y = _multiclass(1, n=60, k=4)
    svc = SVC(kernel="precomputed", decision_function_shape="ovo").fit(K, y)
    pairwise = svc.decision_function(K)
    assert np.array_equal(ovo_loo_predictions(list(pairwise.T), 4), svc.predict(K))


def test_ovo_outputs_hold_out_only_the_pairs_a_row_is_in():
    K, y = _multiclass(2, n=30, k=3)
    outs = ovo_loo_outputs(K, y, 1.0)
    assert len(outs) == 3
    # pair (0, 1): rows of class 2 get the pair model's own value; held-out rows the
    # leave-one-out value of retraining the pair without them (where the span is exact)
    rows = np.flatnonzero(y < 2)
    t = np.where(y[rows] == 0, 1.0, -1.0)
    sol = fit_l1_svm(t, 1.0, K=K[np.ix_(rows, rows)])
    f_all = K[:, rows] @ sol.dual_coef + sol.b
    other = y == 2
    np.testing.assert_allclose(outs[0][other], f_all[other], rtol=1e-12)
    f_brute = brute_force_loo(K[np.ix_(rows, rows)], t, 1.0, loss="l1", tol=1e-10)
    nsv = ~sol.support
    np.testing.assert_allclose(outs[0][rows][nsv], f_brute[nsv], atol=2e-3)


def test_weighted_error_counts_weights_as_repeated_rows():
    y = np.array([0, 0, 1, 1])
    outs = [np.array([-1.0, 1.0, 1.0, -1.0])]  # rows 1 and 3 wrong
    assert referee_error(y, outs) == 0.5
    assert referee_error(y, outs, np.array([1.0, 3.0, 1.0, 0.0])) == pytest.approx(3 / 5)
