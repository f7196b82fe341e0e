"""Every exception and warning svmtune raises on purpose, in one place.

A leaf module: it imports only scikit-learn's exceptions, so any layer may raise these.

Warnings
--------
ConvergenceWarning
    A solver or search stopped before its tolerance (subclasses scikit-learn's, so
    ``warnings.filterwarnings("ignore", category=sklearn.exceptions.ConvergenceWarning)``
    silences svmtune's too).
BoundWarning
    A selected hyperparameter ended on a bound of its search range.
UnseenCategoryWarning
    Rows to predict hold categories the training data did not (``preprocess="auto"``):
    their one-hot entries are all 0.
BudgetWarning
    A method's budget is below the least its plan needs: the run will cost more.

Errors
------
DataFileError
    A data file cannot be read as requested (a ``ValueError``).
UntrustedModelError
    A model file refused: a pickle not trusted, or a skops file naming types outside the
    allow-list or past the archive bounds (a ``ValueError``).
DamagedModelError
    A model file that cannot be read: empty, truncated, damaged, or in neither model format
    (a ``ValueError``).
NotAResultsFile
    A file given as benchmark results that is not a JSON-lines file (a ``ValueError``).
StoreBusy
    Another process holds a lock of a benchmark result store (a ``RuntimeError``).
SelectionStopped
    A scikit-learn callback asked ``SVMTuner.fit`` to stop the selection (a
    ``RuntimeError``).
"""

from __future__ import annotations

from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning

__all__ = [
    "BoundWarning",
    "BudgetWarning",
    "ConvergenceWarning",
    "DamagedModelError",
    "NotANumberError",
    "DataFileError",
    "NotAResultsFile",
    "SelectionStopped",
    "StoreBusy",
    "UnseenCategoryWarning",
    "UntrustedModelError",
]


class ConvergenceWarning(_SklearnConvergenceWarning):
    """An SVM solver or hyperparameter search stopped before reaching its tolerance."""


class BoundWarning(UserWarning):
    """A hyperparameter ended on a bound of its search range."""


class UnseenCategoryWarning(UserWarning):
    """Rows to predict hold values of a categorical column that its training rows did not:
    the one-hot encoding of ``preprocess="auto"`` gives them no feature (all their one-hot
    entries are 0), so the model treats them as no category at all."""


class BudgetWarning(UserWarning):
    """A budget below the least the method's plan needs (the run costs that least), or one
    that kept ``auto``'s final model from libsvm's where the low-rank model's held-out error
    was beyond its tolerance (:mod:`svmtune.methods._auto_final`)."""


class NotANumberError(TypeError, ValueError):
    """A string, a bool or a sequence given where a real number is needed: a ``TypeError``,
    and a ``ValueError`` as scikit-learn's ``InvalidParameterError`` is, so that code
    catching either for a bad value catches it."""


class DataFileError(ValueError):
    """A data file cannot be read as requested (unparsable content, no target column, ...)."""


class UntrustedModelError(ValueError):
    """A model file that is not loaded: a pickle not trusted, or a skops file naming types
    outside the allow-list."""


class DamagedModelError(ValueError):
    """A model file that cannot be read: empty, truncated or damaged (a save interrupted by a
    full disk, a partial copy), or in neither format :func:`svmtune.save_model` writes.

    Not an :class:`UntrustedModelError`: nothing in the file was refused, and trusting it
    (``trust_pickle=True``) would not help."""


class NotAResultsFile(ValueError):
    """A file given as results that is not a JSON-lines file (``*.jsonl``)."""


class StoreBusy(RuntimeError):
    """Another process holds a lock of a benchmark result store."""


class SelectionStopped(RuntimeError):
    """A callback set with ``SVMTuner.set_callbacks`` asked to stop (its ``on_fit_task_end``
    returned True, scikit-learn's stop request): the selection stopped after that unit of
    work and ``fit`` raises this, the tuner left unfitted, since a method chooses its
    hyperparameters only at the end of its search.  ``units_done`` counts the units of work
    (CV fits, candidates, gradient steps) finished."""

    def __init__(self, message: str, units_done: int = 0):
        super().__init__(message)
        self.units_done = units_done
