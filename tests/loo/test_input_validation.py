"""Bad inputs to the public svmtune.loo functions raise ValueError saying what to fix."""

import numpy as np
import pytest

from svmtune._loo_losses import loo_loss
from svmtune.kernels import rbf_from_sqdist, squared_distances
from svmtune.loo._spans import (
    box_constrained_spans,
    lemma1_condition,
    lemma1_lhs,
    n_empty_spans,
    span_box,
)
from svmtune.loo.brute import brute_force_loo
from svmtune.loo.closed_form import closed_form_loo, loo_error_rate, loo_exact_mask
from svmtune.loo.decremental import decremental_loo
from svmtune.loo.entropy import l2_model_entropy, model_entropy
from svmtune.loo.radius_margin import margin_norm2, margin_norm2_derivative, radius_margin
from svmtune.loo.radius_margin_lowrank import (
    lowrank_enclosing_ball,
    lowrank_margin_norm2,
    lowrank_radius_margin,
)
from svmtune.loo.rbsvm import rbsvm_objective
from svmtune.loo.rbsvm_gradient import loo_gradient
from svmtune.loo.span import (
    smoothed_span,
    span_loo_margins,
    span_rule_error,
    span_rule_error_ovr,
)
from svmtune.loo.span_bounds import (
    enclosing_diameter,
    estimate_xi_alpha,
    span_bound_value,
    xi_alpha_radius2,
)
from svmtune.loo.span_lowrank import lowrank_span_rule_error
from svmtune.loo.span_rule import estimate_span_rule, span_rule_loo_decision
from svmtune.loo.sphere import enclosing_ball, min_enclosing_ball, radius2_derivative
from svmtune.lowrank import fit_l2_svm_lowrank, nystroem_factor
from svmtune.search.estimates import estimate_kfold_cv
from svmtune.svm import fit_l1_svm, fit_l2_svm

rng = np.random.default_rng(0)
X = np.vstack([rng.normal(0, 1, (10, 2)), rng.normal(1.5, 1, (10, 2))])
YPM = np.r_[-np.ones(10), np.ones(10)]
Y01 = (YPM > 0).astype(int)
D2 = squared_distances(X)
K = rbf_from_sqdist(D2, 1.0)
KNAN = K.copy()
KNAN[0, 1] = KNAN[1, 0] = np.nan
KASYM = K.copy()
KASYM[np.triu_indices(20, 1)] *= 0.3
SOL2 = fit_l2_svm(K, YPM, 1.0)
SOL1 = fit_l1_svm(YPM, 1.0, K=K)
NF = nystroem_factor(D2[:, :6], D2[:6, :6], 1.0)
SOLR = fit_l2_svm_lowrank(NF.Z, YPM, 1.0)
R = closed_form_loo(SOL2, K)
DLDR = np.ones(20)

BAD_K = [(np.eye(25), "shape"), (K[:15, :15], "shape"), (KNAN, "NaN")]


@pytest.mark.parametrize(("Kb", "msg"), BAD_K)
@pytest.mark.parametrize(
    "call",
    [
        lambda Kb: closed_form_loo(SOL2, Kb),
        lambda Kb: decremental_loo(SOL2, Kb),
        lambda Kb: loo_exact_mask(SOL2, Kb),
        lambda Kb: loo_gradient(SOL2, Kb, [], DLDR),
        lambda Kb: span_loo_margins(SOL2, Kb),
        lambda Kb: smoothed_span(Kb, SOL2),
        lambda Kb: margin_norm2(Kb, SOL2),
        lambda Kb: radius_margin(Kb, [SOL2]),
        lambda Kb: span_rule_error(SOL2, Kb),
        lambda Kb: span_rule_error_ovr([SOL2, SOL2], Kb, Y01),
        lambda Kb: estimate_span_rule(SOL1, Kb),
    ],
)
def test_kernel_must_match_solution(call, Kb, msg):
    with pytest.raises(ValueError, match=msg):
        call(Kb)


def test_direction_and_dldr_shapes():
    with pytest.raises(ValueError, match="dLdr has shape"):
        loo_gradient(SOL2, K, [], np.ones(25))
    with pytest.raises(ValueError, match="direction"):
        margin_norm2_derivative(SOL2, np.eye(25))
    with pytest.raises(ValueError, match="direction"):
        smoothed_span(K, SOL2, [np.eye(5)])
    with pytest.raises(ValueError, match="direction"):
        radius_margin(K, [SOL2], [np.ones(7)])
    with pytest.raises(ValueError, match="direction"):
        radius2_derivative(np.full(20, 0.05), np.eye(30))


@pytest.mark.parametrize(
    ("y", "w", "msg"),
    [
        (YPM, None, "encoded labels"),
        (np.array(["a", "b"] * 10), None, "encoded labels"),
        (Y01[:5], None, "shape"),
        (Y01, -np.ones(20), "negative"),
        (Y01, np.zeros(20), "all zero"),
        (Y01, np.r_[np.nan, np.ones(19)], "NaN"),
        (Y01, np.ones(3), "shape"),
    ],
)
def test_error_rates_check_labels_and_weights(y, w, msg):
    with pytest.raises(ValueError, match=msg):
        loo_error_rate(y, [R], w)
    with pytest.raises(ValueError, match=msg):
        span_rule_error_ovr([SOL2], K, y, w)
    with pytest.raises(ValueError, match=msg):
        lowrank_span_rule_error([SOLR], NF.Z, y, w)


def test_span_rule_error_weights_and_lowrank_inputs():
    with pytest.raises(ValueError, match="negative"):
        span_rule_error(SOL2, K, -np.ones(20))
    with pytest.raises(ValueError, match="non-empty"):
        lowrank_span_rule_error([], NF.Z, Y01)
    Zn = NF.Z.copy()
    Zn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        lowrank_span_rule_error([SOLR], Zn, Y01)


def test_pm1_labels():
    with pytest.raises(ValueError, match="-1 and \\+1"):
        loo_loss(Y01, R)
    with pytest.raises(ValueError, match="shape"):
        loo_loss(YPM[:1], R)


@pytest.mark.parametrize("fn", [lemma1_condition, n_empty_spans, lemma1_lhs])
def test_lemma1_rejects_l2(fn):
    with pytest.raises(ValueError, match="L2-SVM"):
        fn(SOL2)


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        ({"D": np.nan}, "D must"),
        ({"l": -5}, "l \\(training"),
        ({"l": 0}, "l \\(training"),
        ({"m": -4}, "m \\(bounded"),
        ({"C": [0.0, 1.0]}, "C_inbound"),
        ({"spans": [-1.0, 1.0]}, "spans_inbound"),
        ({"spans": [1.0, 1.0, 1.0]}, "one length"),
    ],
)
def test_span_bound_value_parameters(kwargs, msg):
    args = {"spans": [0.5, 1.0], "alpha": [0.1, 0.2], "C": [1.0, 1.0], "D": 2.0, "m": 1, "l": 10}
    args.update(kwargs)
    with pytest.raises(ValueError, match=msg):
        span_bound_value(args["spans"], args["alpha"], args["C"], args["D"], args["m"], args["l"])


def test_span_rule_helpers():
    for r2 in (-1.0, np.nan):
        with pytest.raises(ValueError, match="r2_delta"):
            estimate_xi_alpha(SOL1, K, r2_delta=r2)
    for Kb in (KNAN, K[0], K[:, :5]):
        with pytest.raises(ValueError, match="K "):
            xi_alpha_radius2(Kb)
    for spans in (np.full(20, np.nan), -np.ones(20), np.ones(3)):
        with pytest.raises(ValueError, match="spans"):
            estimate_span_rule(SOL1, K, spans=spans)
        with pytest.raises(ValueError, match="spans"):
            span_rule_loo_decision(SOL1, K, spans=spans)
    with pytest.raises(ValueError, match="sample index"):
        span_box(SOL1, 50)
    with pytest.raises(ValueError, match="sample indices"):
        box_constrained_spans(SOL1, K, [50])
    with pytest.raises(ValueError, match="n_splits"):
        estimate_kfold_cv(SOL1, K, X=X, params={"sigma": 1.0, "C": 1.0}, n_splits=1)


@pytest.mark.parametrize("fn", [enclosing_ball, min_enclosing_ball, enclosing_diameter])
def test_ball_needs_symmetric_kernel(fn):
    with pytest.raises(ValueError, match="not symmetric"):
        fn(KASYM)


@pytest.mark.parametrize("init", [[0, 50], [-1], np.ones(5, dtype=bool)])
def test_ball_init_support_range(init):
    with pytest.raises(ValueError, match="init_support"):
        enclosing_ball(K, init_support=init)
    with pytest.raises(ValueError, match="init_support"):
        lowrank_enclosing_ball(NF.Z, init_support=init)


def test_ball_rejects_negative_diagonal():
    with pytest.raises(ValueError, match="positive semi-definite"):
        enclosing_ball(-K)


def test_misc_items():
    with pytest.raises(ValueError, match="finite"):
        model_entropy(YPM, R, sample_weight=np.r_[np.inf, np.ones(19)])
    with pytest.raises(ValueError, match="tasks is empty"):
        rbsvm_objective(D2, [], [0.0, 0.0])
    with pytest.raises(ValueError, match="list of"):
        rbsvm_objective(D2, YPM, [0.0, 0.0])
    with pytest.raises(ValueError, match="fit_l2_svm_lowrank"):
        lowrank_margin_norm2(NF.Z, SOL2)
    with pytest.raises(ValueError, match="fit_l2_svm_lowrank"):
        lowrank_radius_margin(NF, [SOL2])
    params = {"sigma": 1.0, "C": 1.0}
    for y in (Y01 + 1, Y01 + 0.5):
        with pytest.raises(ValueError, match="encoded labels"):
            l2_model_entropy(X, y, params)
    with pytest.raises(ValueError, match="sample_weight"):
        l2_model_entropy(X, Y01, params, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="indices"):
        brute_force_loo(K, YPM, 1.0, indices=[50])
