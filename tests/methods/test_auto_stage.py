"""The pieces of auto's stages (:mod:`svmtune.methods._auto_stage`)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.svm import SVC

from svmtune.methods._auto_final import default_svc_fit, libsvm_cost_ratio, svc_sv_fraction


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_default_svc_fit_is_svc(sparse, weighted, n_classes):
    """The unchecked libsvm call fits what ``SVC().fit`` fits: the same support vectors and
    iterations (the probe's cost model reads both), on labels that need encoding."""
    X, y = make_classification(
        160, 6, n_informative=4, n_classes=n_classes, flip_y=0.1, random_state=n_classes
    )
    X[X < -0.5] = 0.0  # some zeros, so that the sparse matrix is sparse
    y = np.array(["b", "a", "c"])[y]
    w = np.random.RandomState(0).uniform(0.2, 3.0, y.size) if weighted else None
    Xf = sp.csr_matrix(X) if sparse else X
    svc = SVC().fit(Xf, y, sample_weight=w)
    assert default_svc_fit(Xf, y, w) == (int(svc.n_support_.sum()), int(svc.n_iter_.sum()))


def test_cost_model_counts_do_not_depend_on_the_names_of_the_classes():
    """The probe's share of support vectors and the final fit's predicted cost count libsvm's
    support vectors and iterations, which depend on the classes' sorted order unless libsvm
    is given codes of first occurrence (issue 63): swapped labels give the same counts."""
    X, y = make_classification(300, 4, n_informative=3, n_redundant=0, random_state=3)
    params = {"kernel": "rbf", "sigma": 1.5, "gamma": 1 / (2 * 1.5**2), "C": 30.0}
    for labels in (1 - y, np.array(["pos", "neg"])[y]):
        assert svc_sv_fraction(X, labels, None) == svc_sv_fraction(X, y, None)
        got = libsvm_cost_ratio(params, X, labels, None, "ovr")[0]
        assert got == libsvm_cost_ratio(params, X, y, None, "ovr")[0]
