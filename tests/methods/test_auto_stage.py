"""The pieces of auto's stages (:mod:`svmtune.methods._auto_stage`)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.svm import SVC

from svmtune.methods._auto_stage import default_svc_fit


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
