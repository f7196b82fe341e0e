"""Leave-one-out estimates from one trained SVM, and the brute-force references.

Each module is one paper's closed form (kernel matrix in, numbers out):

* :mod:`~svmtune.loo.closed_form`, :mod:`~svmtune.loo.decremental`,
  :mod:`~svmtune.loo.rbsvm_gradient`, :mod:`~svmtune.loo.rbsvm` -- RBSVM: the exact
  leave-one-out outputs of the L2-SVM (eq. (27)), their gradient and the cross-entropy
  objective;
* :mod:`~svmtune.loo.rbsvm_groups` -- the same with whole groups held out;
* :mod:`~svmtune.loo.rbsvm_lowrank` -- the RBSVM objective on a Nystroem factor;
* :mod:`~svmtune.loo.entropy` -- RBSVM's model entropy;
* :mod:`~svmtune.loo.span`, :mod:`~svmtune.loo.radius_margin` (and their ``_lowrank``
  versions) -- the smoothed span and radius-margin bounds (Chapelle et al.);
* :mod:`~svmtune.loo.span_rule`, :mod:`~svmtune.loo.span_bounds`,
  :mod:`~svmtune.loo.weights` -- the weighted span rule (Theorem 2, Corollary 1);
* :mod:`~svmtune.loo.sphere` -- the smallest enclosing ball (radius-margin's ``R^2``);
* :mod:`~svmtune.loo.referee` -- leave-one-out outputs of libsvm's SVC and the L2-SVM that
  ``method="auto"`` compares candidates by;
* :mod:`~svmtune.loo.brute` -- leave-one-out by ``n`` re-trainings, the reference every
  closed form is tested against.
"""

from __future__ import annotations

from svmtune.loo.brute import brute_force_lgo, brute_force_loo
from svmtune.loo.closed_form import closed_form_loo, loo_error_rate, loo_predictions
from svmtune.loo.decremental import decremental_loo
from svmtune.loo.entropy import l2_model_entropy, model_entropy
from svmtune.loo.radius_margin import RadiusMargin, radius_margin
from svmtune.loo.rbsvm import LOOObjective, rbsvm_objective
from svmtune.loo.rbsvm_gradient import loo_gradient
from svmtune.loo.rbsvm_groups import closed_form_lgo, lgo_gradient
from svmtune.loo.rbsvm_lowrank import lowrank_loo, lowrank_rbsvm_objective
from svmtune.loo.referee import l1_loo_outputs, l2_loo_outputs, ovo_loo_outputs, referee_error
from svmtune.loo.span import SmoothedSpan, smoothed_span, span_rule_error
from svmtune.loo.span_rule import estimate_span_rule, span_rule_loo_decision
from svmtune.loo.sphere import enclosing_ball, min_enclosing_ball
from svmtune.loo.weights import sigmoid_sample_weights

__all__ = [
    "LOOObjective",
    "RadiusMargin",
    "SmoothedSpan",
    "brute_force_lgo",
    "brute_force_loo",
    "closed_form_lgo",
    "closed_form_loo",
    "decremental_loo",
    "enclosing_ball",
    "estimate_span_rule",
    "l1_loo_outputs",
    "l2_loo_outputs",
    "l2_model_entropy",
    "lgo_gradient",
    "loo_error_rate",
    "loo_gradient",
    "loo_predictions",
    "lowrank_loo",
    "lowrank_rbsvm_objective",
    "min_enclosing_ball",
    "model_entropy",
    "ovo_loo_outputs",
    "radius_margin",
    "rbsvm_objective",
    "referee_error",
    "sigmoid_sample_weights",
    "smoothed_span",
    "span_rule_error",
    "span_rule_loo_decision",
]
