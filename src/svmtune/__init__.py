"""svmtune: fast, published hyperparameter selection for support vector machines."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from svmtune.estimators import L2SVC
from svmtune.kernels import Kernel, gamma_from_sigma, sigma_from_gamma
from svmtune.methods.base import available_methods
from svmtune.plotting import plot_landscape
from svmtune.tuner import SVMTuner

try:
    __version__ = version("svmtune")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "SVMTuner",
    "L2SVC",
    "Kernel",
    "available_methods",
    "plot_landscape",
    "gamma_from_sigma",
    "sigma_from_gamma",
    "__version__",
]
