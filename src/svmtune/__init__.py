"""svmtune: fast, published hyperparameter selection for support vector machines.

The estimator is :class:`SVMTuner` (``method="auto"`` by default); the selection methods
are in :mod:`svmtune.methods`, the closed forms they rest on in :mod:`svmtune.loo` and
:mod:`svmtune.criteria`, the searches in :mod:`svmtune.search`, data sets and file readers in
:mod:`svmtune.datasets`, the benchmark harness in :mod:`svmtune.bench`, and every warning and
error svmtune raises in :mod:`svmtune.exceptions`.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from svmtune.estimators import L2SVC
from svmtune.estimators_lowrank import LowRankL2SVC
from svmtune.kernels import Kernel, gamma_from_sigma, sigma_from_gamma
from svmtune.methods import available_methods
from svmtune.persist import load_model, save_model
from svmtune.plotting import plot_landscape
from svmtune.tuner import SVMTuner

try:
    __version__ = version("svmtune")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "SVMTuner",
    "L2SVC",
    "LowRankL2SVC",
    "Kernel",
    "available_methods",
    "load_model",
    "save_model",
    "plot_landscape",
    "gamma_from_sigma",
    "sigma_from_gamma",
    "__version__",
]
