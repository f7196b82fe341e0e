"""svmtune: fast, published hyperparameter selection for support vector machines."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from svmtune.estimators import L2SVC
from svmtune.kernels import Kernel, gamma_from_sigma, sigma_from_gamma
from svmtune.methods.base import available_methods
from svmtune.tuner import SVMTuner


def plot_landscape(tuner, **kwargs):
    """The criterion over (log2 sigma, log2 C) with the search's path and the chosen point
    (matplotlib); see :func:`svmtune.plotting.plot_landscape`."""
    from svmtune.plotting import plot_landscape as plot

    return plot(tuner, **kwargs)


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
