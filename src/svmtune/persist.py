"""Model files: skops (safe to load) and joblib/pickle (loading can run code).

``svmtune select --out model.skops`` saves with :func:`save_model`; ``svmtune predict``
loads with :func:`load_model`.  A skops file is loaded only if every type it names that skops
does not trust by default is svmtune's or scikit-learn's own (:data:`TRUSTED_MODULES`, and
scipy's sparse matrices, :data:`TRUSTED_TYPES`);
anything else is refused with :class:`UntrustedModelError` naming the types.  A joblib/pickle
file is unpickled only when the caller says it trusts it (``trust_pickle=True``, the CLI's
``--trust-pickle``): unpickling runs whatever code the file names.

skops is an optional dependency: ``pip install "svmtune[skops]"``.
"""

from __future__ import annotations

import copy
import zipfile
from pathlib import Path
from typing import Any

from svmtune.exceptions import UntrustedModelError

__all__ = [
    "TRUSTED_MODULES",
    "TRUSTED_TYPES",
    "UntrustedModelError",
    "is_skops_file",
    "load_model",
    "save_model",
    "trusted_types",
]

#: top-level modules whose types a skops model file may name beyond skops' own defaults
TRUSTED_MODULES = ("svmtune", "sklearn")
#: scipy's sparse matrices, data containers an SVC fitted on sparse rows holds (its support
#: vectors), trusted by exact name
TRUSTED_TYPES = (
    "scipy.sparse._csr.csr_matrix",
    "scipy.sparse._csc.csc_matrix",
    "scipy.sparse._csr.csr_array",
    "scipy.sparse._csc.csc_array",
)

_SKOPS_HINT = 'skops is needed for .skops model files: pip install "svmtune[skops]" (or skops)'


def _skops_io():
    try:
        import skops.io as sio
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_SKOPS_HINT) from exc
    return sio


def is_skops_file(path: str | Path) -> bool:
    """Whether ``path`` is a skops file (a zip archive holding ``schema.json``)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return "schema.json" in zf.namelist()
    except (zipfile.BadZipFile, OSError):
        return False


def trusted_types(types: list[str]) -> tuple[list[str], list[str]]:
    """Split type names (``module.Class``) into those of :data:`TRUSTED_MODULES` and
    :data:`TRUSTED_TYPES` and the others."""
    ok, bad = [], []
    for name in types:
        trusted = name.split(".", 1)[0] in TRUSTED_MODULES or name in TRUSTED_TYPES
        (ok if trusted else bad).append(name)
    return ok, bad


def _without_routing_requests(model):
    """A copy of ``model`` without the metadata-routing requests of its fitted steps.

    ``set_fit_request`` stores a request that points back at its estimator (a cycle skops
    cannot write); it matters only for fitting with metadata routing, never for predicting.
    """
    from sklearn.base import BaseEstimator

    model = copy.deepcopy(model)
    seen: set[int] = set()

    def strip(obj: Any) -> None:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, BaseEstimator):
            vars(obj).pop("_metadata_request", None)
            for value in vars(obj).values():
                strip(value)
        elif isinstance(obj, (list, tuple)):
            for value in obj:
                strip(value)
        elif isinstance(obj, dict):
            for value in obj.values():
                strip(value)

    strip(model)
    return model


def save_model(model, path: str | Path) -> str:
    """Save a fitted model: skops for a ``.skops`` path, joblib otherwise.

    Returns
    -------
    str
        ``"skops"`` or ``"joblib"``.

    Raises
    ------
    ImportError
        For a ``.skops`` path when skops is not installed (the message says what to install).
    """
    if Path(path).suffix.lower() == ".skops":
        _skops_io().dump(_without_routing_requests(model), path)
        return "skops"
    import joblib

    joblib.dump(model, path)
    return "joblib"


def load_model(path: str | Path, *, trust_pickle: bool = False):
    """Load a model saved by :func:`save_model`.

    A skops file (recognised by its content, whatever its name) is loaded trusting the types
    of :data:`TRUSTED_MODULES` only; any other file is taken for joblib/pickle and unpickled
    only with ``trust_pickle=True``.

    Raises
    ------
    UntrustedModelError
        A skops file naming other types, or a pickle without ``trust_pickle``.
    ImportError
        A skops file when skops is not installed.
    """
    if is_skops_file(path):
        sio = _skops_io()
        ok, bad = trusted_types(list(sio.get_untrusted_types(file=path)))
        if bad:
            shown = ", ".join(bad[:5]) + (" ..." if len(bad) > 5 else "")
            raise UntrustedModelError(
                f"{path} names types that are neither svmtune's nor scikit-learn's: {shown}; "
                "it was not loaded (a model saved by `svmtune select --out` names none)"
            )
        return sio.load(path, trusted=ok)
    if not trust_pickle:
        raise UntrustedModelError(
            f"{path} is not a skops file, so it is a joblib/pickle file, and loading one can "
            "run any code it contains; if you trust where it came from, pass --trust-pickle "
            "(Python: trust_pickle=True), or save models with `svmtune select --out "
            "model.skops`"
        )
    import joblib

    return joblib.load(path)
