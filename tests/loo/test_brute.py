from __future__ import annotations

import numpy as np
import pytest

from svmtune.kernels import Kernel
from svmtune.loo import brute_force_loo
from svmtune.svm import fit_l1_svm, fit_l2_svm

from ..conftest import make_problem


@pytest.mark.parametrize("loss", ["l2", "l1"])
def test_brute_force_loo_is_retraining(loss):
    X, y = make_problem(25, 2, 4)
    K = Kernel("rbf", sigma=1.0)(X)
    out = brute_force_loo(K, y, 2.0, loss=loss, indices=[0, 7, 19])
    for k, i in enumerate([0, 7, 19]):
        keep = np.arange(25) != i
        if loss == "l2":
            sol = fit_l2_svm(K[np.ix_(keep, keep)], y[keep], 2.0)
        else:
            sol = fit_l1_svm(y[keep], 2.0, K=K[np.ix_(keep, keep)], tol=1e-8)
        assert out[k] == pytest.approx(sol.decision_function(K[i : i + 1, keep])[0], abs=1e-6)


def test_non_support_vectors_keep_their_output():
    X, y = make_problem(30, 2, 9)
    K = Kernel("rbf", sigma=1.2)(X)
    full = fit_l2_svm(K, y, 1.0)
    out = brute_force_loo(K, y, 1.0)
    f = full.decision_function(K)
    nsv = ~full.support
    assert nsv.any()
    assert np.allclose(out[nsv], f[nsv], atol=1e-8)
