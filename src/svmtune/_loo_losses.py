"""The losses of the tanh-mapped leave-one-out outputs (RBSVM eq. (29)-(33)) and the
options that choose them: :func:`loo_loss` per point and :func:`objective_terms` per
one-vs-rest task of an L2-SVM solution (:class:`svmtune._dual_solution.DualSolution`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from svmtune._labels import check_pm1

if TYPE_CHECKING:
    from svmtune._dual_solution import DualSolution

__all__ = [
    "LOSSES",
    "NONSUPPORT",
    "loo_loss",
    "check_loss",
    "check_nonsupport",
    "check_group_nonsupport",
    "objective_terms",
]


#: loss variants of :func:`loo_loss`
LOSSES = ("cross_entropy", "squared")


#: what the RBSVM objective takes as a non-support vector's LOO output: the full model's
#: output (exact) or its label (RBSVM eq. (27) read literally with ``alpha_i = 0``)
NONSUPPORT = ("model", "label")


def loo_loss(
    y: np.ndarray, r: np.ndarray, loss: str = "cross_entropy"
) -> tuple[np.ndarray, np.ndarray]:
    """Per-point loss of the tanh-mapped LOO output and its derivative in ``r``.

    Parameters
    ----------
    y : array of {-1, +1}
    r : array
        LOO decision values.
    loss : {"cross_entropy", "squared"}
        ``"cross_entropy"`` (RBSVM eq. (29)): ``log(1 + exp(-2 y r))``, derivative
        ``tanh(r) - y`` (eq. (31)).  ``"squared"``: the Brier score of the probability
        ``(1 + tanh r)/2``, ``(tanh r - y)^2 / 4``, derivative ``(tanh r - y)(1 - tanh^2 r)/2``
        (bounded, so single badly predicted points weigh less).

    Returns
    -------
    (values, derivatives) : ndarrays of the shape of ``r``

    Raises
    ------
    ValueError
        If ``y`` holds other labels than -1 and +1 or does not have the shape of ``r``.
    """
    y = check_pm1(y)
    r = np.asarray(r, dtype=float)
    if y.shape != r.shape:
        raise ValueError(
            f"y has shape {y.shape} but r has shape {r.shape}; pass one label per LOO output"
        )
    return _loo_loss(y, r, loss)


def _loo_loss(y: np.ndarray, r: np.ndarray, loss: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`loo_loss` of float labels ``y`` in {-1, +1} and outputs ``r`` of one shape (a
    solution's labels and its LOO outputs): the objectives' per-task step, unchecked."""
    t = np.tanh(r)
    if loss == "cross_entropy":
        return np.logaddexp(0.0, -2.0 * y * r), t - y
    if loss == "squared":
        return 0.25 * (t - y) ** 2, 0.5 * (t - y) * (1.0 - t * t)
    raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def check_loss(loss: str) -> None:
    """Raise ``ValueError`` unless ``loss`` is one of :data:`LOSSES`."""
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def check_nonsupport(nonsupport: str) -> None:
    """Raise ``ValueError`` unless ``nonsupport`` is one of :data:`NONSUPPORT`."""
    if nonsupport not in NONSUPPORT:
        raise ValueError(f"nonsupport must be one of {NONSUPPORT}, got {nonsupport!r}")


def check_group_nonsupport(nonsupport: str) -> None:
    """Raise ``ValueError`` unless ``nonsupport`` is ``"model"``, the only reading that
    leave-one-group-out outputs have (:mod:`svmtune.loo.rbsvm_groups`)."""
    if nonsupport != "model":
        raise ValueError(
            "groups need nonsupport='model': a row of a group that holds support vectors gets "
            "the reduced model's output whether or not it is a support vector itself"
        )


def objective_terms(
    sol: DualSolution, r: np.ndarray, loss: str = "cross_entropy", nonsupport: str = "model"
) -> tuple[np.ndarray, np.ndarray]:
    """Per-point terms of the RBSVM objective ``J`` (RBSVM eq. (33)) and their derivatives in
    ``r`` (:func:`loo_loss`).

    ``nonsupport="model"``: the closed-form LOO outputs ``r`` as they are (a non-support
    vector's exact LOO output is the model's output).  ``"label"``: a non-support vector
    enters with ``r_i = y_i`` (RBSVM eq. (27) read literally with ``alpha_i = 0``), a constant,
    so its derivative is 0.  ``r`` is not modified.

    The options are not checked here: the objectives (:func:`svmtune.loo.rbsvm.rbsvm_objective`
    and its low-rank twin) check ``loss`` and ``nonsupport`` once at their door, and the
    labels are the solution's own, so a task's step repeats no check (issue #55).
    """
    if nonsupport == "label":
        r = np.where(sol.support, r, sol.y)
    L, dL = _loo_loss(sol.y, r, loss)
    if nonsupport == "label":
        dL[~sol.support] = 0.0
    return L, dL
