"""Bad input to the public criteria functions raises a ``ValueError`` that says what to fix."""

from __future__ import annotations

import json

import numpy as np
import pytest

from svmtune.criteria import (
    _common,
    blocks,
    esdr,
    likelihood,
    repeats,
    ss_copt,
    ss_core,
    ss_features,
    ss_kernel,
    ss_table,
)
from svmtune.kernels import rbf_from_sqdist, squared_distances

rng = np.random.default_rng(0)
X = np.vstack([rng.normal(0, 1, (10, 2)), rng.normal(1.5, 1, (10, 2))])
ypm = np.r_[-np.ones(10), np.ones(10)]
y01 = (ypm > 0).astype(int)
K = rbf_from_sqdist(squared_distances(X), 1.0)
Kas = K.copy()
Kas[np.triu_indices(20, 1)] *= 0.3
Xnan = X.copy()
Xnan[0, 0] = np.nan
Xrep = np.vstack([X, X[:3]])
yrep = np.r_[y01, y01[:3]]
m1, v1, m2, v2 = np.zeros(2), np.ones(2), np.ones(2), np.ones(2)
M3 = np.ones((1, 3, 3))


def _bad_table(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"fit": {"rising": {"a": 1, "b": 1, "c": 0}}}))
    return ss_copt.load_copt_table(p)


CASES = [
    # 12: kernel S&S needs a symmetric (PSD) kernel matrix
    ("kernel_ss_ratio Kas", lambda: ss_kernel.kernel_ss_ratio(Kas, ypm), "not symmetric"),
    ("kernel_ss_matrix Kas", lambda: ss_kernel.kernel_ss_matrix(Kas, ypm), "not symmetric"),
    ("kernel_ss_matrix -K", lambda: ss_kernel.kernel_ss_matrix(-K, ypm), "negative diagonal"),
    # 13: Z path label length
    ("pairwise_ss Z len", lambda: ss_kernel.pairwise_ss(ypm[:12], Z=X), "Z has 20 rows"),
    ("min_pairwise_ss Z len", lambda: ss_kernel.min_pairwise_ss(ypm[:12], Z=X), "Z has 20 rows"),
    # 14: exact features
    ("exact_kernel_features rtol", lambda: ss_features.exact_kernel_features(K, np.nan), "rtol"),
    ("exact_kernel_features -K", lambda: ss_features.exact_kernel_features(-K), "semi-definite"),
    ("exact_kernel_features Kas", lambda: ss_features.exact_kernel_features(Kas), "symmetric"),
    # 18: repeats
    (
        "repeat_share w nan",
        lambda: repeats.repeat_share(Xrep, yrep, np.r_[np.nan, np.ones(22)], 1.0),
        "NaN",
    ),
    ("repeat_share w neg", lambda: repeats.repeat_share(Xrep, yrep, -np.ones(23), 1.0), "negative"),
    ("repeat_share X nan", lambda: repeats.repeat_share(Xnan, y01, None, 1.0), "NaN"),
    (
        "repeat_share max_rows",
        lambda: repeats.repeat_share(Xrep, yrep, None, 1.0, max_rows=0),
        "max_rows",
    ),
    ("positive_rows y len", lambda: repeats.positive_rows(X, y01[:5], None), "y has 5"),
    (
        "repeat_floor w len",
        lambda: repeats.repeat_floor(Xrep, yrep, np.ones(3), [1.0, 2.0], 0.5),
        "expected (23,)",
    ),
    (
        "within_mass 2-D R",
        lambda: repeats.within_mass(np.ones((20, 2)), y01, np.ones(20)),
        "shape (s, 20, k)",
    ),
    # 19: X_eval validated like X
    (
        "rbf_class_sums X_eval nan",
        lambda: blocks.rbf_class_sums(X, y01, 1.0, X_eval=Xnan),
        "X_eval contains NaN",
    ),
    # 20: likelihood similarities
    (
        "ovr_similarities 2-D",
        lambda: likelihood.ovr_similarities(np.ones((2, 2)), np.ones(2)),
        "(s, k, k)",
    ),
    ("ovo_similarities 2-D", lambda: likelihood.ovo_similarities(np.ones((3, 3))), "(s, k, k)"),
    ("ovr_similarities w 0", lambda: likelihood.ovr_similarities(M3, np.zeros(3)), "positive"),
    ("ovr_similarities w neg", lambda: likelihood.ovr_similarities(M3, -np.ones(3)), "positive"),
    ("ovr_similarities w len", lambda: likelihood.ovr_similarities(M3, np.ones(2)), "shape (3,)"),
    # 21: ESDR pair functions
    ("esdr_pair nan", lambda: esdr.esdr_pair(np.nan, 2.0, 1.0, 0.5, 0.5), "s11 must be finite"),
    ("esdr_pair neg w", lambda: esdr.esdr_pair(1.0, 2.0, 1.0, -0.5, 0.5), "non-negative"),
    ("j4_pair nan", lambda: esdr.j4_pair(1.0, np.nan, 1.0, 0.5, 0.5), "s12 must be finite"),
    ("dbtc_pair nan", lambda: esdr.dbtc_pair(1.0, 1.0, np.inf), "s22 must be finite"),
    ("pair_index neg w", lambda: esdr.pair_index("esdr", np.ones((2, 2)), -np.ones(2)), "positive"),
    (
        "pair_index 1 class",
        lambda: esdr.pair_index("esdr", np.ones((1, 1)), np.ones(1)),
        "two classes",
    ),
    (
        "pair_index w len",
        lambda: esdr.pair_index("esdr", np.ones((3, 3)), np.ones(2)),
        "shape (3,)",
    ),
    ("j4_scatter neg w", lambda: esdr.j4_scatter(np.ones((2, 2)), np.r_[1.0, -1.0]), "positive"),
    # 22: Gaussian classes
    (
        "gaussian_esdr sigma nan",
        lambda: esdr.gaussian_esdr(m1, v1, m2, v2, np.nan),
        "positive and finite",
    ),
    (
        "gaussian_esdr sigma neg",
        lambda: esdr.gaussian_esdr(m1, v1, m2, v2, -1.0),
        "positive and finite",
    ),
    (
        "gaussian_between sigma 0",
        lambda: esdr.gaussian_between_sqdist(m1, v1, m2, v2, 0.0),
        "positive and finite",
    ),
    ("gaussian_within var neg", lambda: esdr.gaussian_within_sqdist(-v1, 1.0), "non-negative"),
    (
        "gaussian_within sigma neg",
        lambda: esdr.gaussian_within_sqdist(v1, -1.0),
        "positive and finite",
    ),
    (
        "gaussian_esdr n 0",
        lambda: esdr.gaussian_esdr(m1, v1, m2, v2, 1.0, n1=0, n2=0),
        "n1 must be a positive",
    ),
    (
        "gaussian_esdr_input n neg",
        lambda: esdr.gaussian_esdr_input(m1, v1, m2, v2, n1=-1),
        "n1 must be a positive",
    ),
    # 23: S&S C_opt table
    ("linear_svm_qp 0/1", lambda: ss_table.linear_svm_qp(X, y01, 1.0), "-1 and +1"),
    ("linear_svm_qp 1 class", lambda: ss_table.linear_svm_qp(X, np.ones(20), 1.0), "two classes"),
    ("linear_svm_qp X nan", lambda: ss_table.linear_svm_qp(Xnan, ypm, 1.0), "finite 2-D"),
    ("linear_svm_qp X 1-D", lambda: ss_table.linear_svm_qp(X[:, 0], ypm, 1.0), "finite 2-D"),
    ("linear_svm_qp y len", lambda: ss_table.linear_svm_qp(X, ypm[:5], 1.0), "one label per row"),
    (
        "expected_error prior",
        lambda: ss_table.expected_error([1.0, 0.0], 0.0, d=1.0, sigmas=(1, 1), prior_pos=1.5),
        "prior_pos",
    ),
    (
        "expected_hinge prior",
        lambda: ss_table.expected_hinge_loss([1.0, 0.0], 0.0, d=1.0, sigmas=(1, 1), prior_pos=-1),
        "prior_pos",
    ),
    (
        "expected_error sigma nan",
        lambda: ss_table.expected_error([1.0, 0.0], 0.0, d=1.0, sigmas=(np.nan, 1)),
        "spreads",
    ),
    (
        "expected_error w nan",
        lambda: ss_table.expected_error([np.nan, 0.0], 0.0, d=1.0, sigmas=(1, 1)),
        "w and b",
    ),
    ("gaussian_margin_hinge std nan", lambda: ss_table.gaussian_margin_hinge(0.0, np.nan), "std"),
    ("gaussian_margin_hinge std neg", lambda: ss_table.gaussian_margin_hinge(0.0, -1.0), "std"),
    (
        "c_opt_from_curve nan",
        lambda: ss_table.c_opt_from_curve([0, 1, 2], [1.0, np.nan, 2.0]),
        "finite",
    ),
    (
        "c_opt_from_curve decreasing",
        lambda: ss_table.c_opt_from_curve([2, 1, 0], [1.0, 0.0, 2.0]),
        "increasing",
    ),
    (
        "c_opt_from_curve 1se se",
        lambda: ss_table.c_opt_from_curve([0, 1, 2], [1.0, 0.0, 2.0], [0.1], rule="1se"),
        "se_loss",
    ),
    (
        "simulate sigma inf",
        lambda: ss_table.simulate_two_gaussians((5, 5), 1.0, (np.inf, 1.0)),
        "finite",
    ),
    # 24: NaN scalars
    ("pooled_sigma nan", lambda: ss_core.pooled_sigma([np.nan, 1.0], [1.0, 1.0]), "finite"),
    ("gaussian_error_from_ss nan", lambda: ss_core.gaussian_error_from_ss(np.nan), "NaN"),
    (
        "select_kernel threshold nan",
        lambda: ss_features.select_kernel([0.0, 1.0], threshold=np.nan),
        "threshold",
    ),
    # 37: labels, shapes, table keys
    (
        "encode_classes None",
        lambda: _common.encode_classes(np.array(["a", None, "b"], dtype=object)),
        "missing label",
    ),
    (
        "ss_ratio None label",
        lambda: ss_core.ss_ratio(X, np.array(["a", None] * 10, dtype=object)),
        "missing label",
    ),
    ("ss_ratio NaN label", lambda: ss_core.ss_ratio(X, np.r_[np.nan, ypm[1:]]), "missing label"),
    (
        "kernel_ss_ratio NaN label",
        lambda: ss_kernel.kernel_ss_ratio(K, np.r_[np.nan, ypm[1:]]),
        "missing label",
    ),
    ("worst_pairs 2-D", lambda: ss_kernel.worst_pairs(np.ones((3, 3))), "(s, k, k)"),
    ("worst_pairs 1 class", lambda: ss_kernel.worst_pairs(np.ones((1, 1, 1))), "k >= 2"),
]


@pytest.mark.parametrize("name, call, fragment", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises(name, call, fragment):
    with pytest.raises(ValueError, match=None) as err:
        call()
    assert fragment in str(err.value), str(err.value)


def test_load_copt_table_missing_keys(tmp_path):
    with pytest.raises(ValueError, match="is not a table written by"):
        _bad_table(tmp_path)
