"""numba's ``njit`` with its on-disk cache where there is a writable place for it, imported
and applied on first use.

The one place svmtune decorates compiled functions from: the pair loops of the data
criteria (:mod:`svmtune.criteria._pairloops`: LD, ESDR, DBTC, J4, the S&S ratio).  Importing
this module does not import numba: :func:`_njit` returns a :class:`_Deferred` stand-in, and
the first call of any stand-in of a module imports numba and replaces every stand-in of that
module, in the module's namespace, by its numba dispatcher (so that compiled functions calling
each other see dispatchers).  A selection that uses none of the compiled loops -- the default
``method="auto"``'s -- never imports numba, and its first fit in a fresh process costs what a
later one does (``benchmarks/first_call.md`` times numba's import and this first fit).
"""

from __future__ import annotations

import warnings
from typing import Any

from svmtune._warnings import user_stacklevel

__all__ = ["_njit"]

_cache_warned = False


class _Deferred:
    """A function to compile with ``numba.njit(cache=True, **options)`` on first use.

    Calling it, or reading an attribute of the dispatcher (``signatures``, ``stats``,
    ``py_func``), compiles the module's stand-ins (:func:`_materialize`) and forwards.
    """

    def __init__(self, func, options: dict[str, Any]) -> None:
        self.py_func = func
        self.options = options
        self.dispatcher = None
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__

    def __call__(self, *args):
        if self.dispatcher is None:
            _materialize(self.py_func.__globals__)
        return self.dispatcher(*args)

    def __getattr__(self, name: str):
        # only reached for names not set in __init__ (the dispatcher's own attributes)
        if name.startswith("__") or name in ("dispatcher", "py_func", "options"):
            raise AttributeError(name)  # e.g. copy's probes on an uninitialised instance
        if self.dispatcher is None:
            _materialize(self.py_func.__globals__)
        return getattr(self.dispatcher, name)

    def __repr__(self) -> str:
        state = "compiled" if self.dispatcher is not None else "not yet compiled"
        return f"<svmtune deferred njit {self.__qualname__} ({state})>"


def _materialize(namespace: dict[str, Any]) -> None:
    """Import numba and replace every :class:`_Deferred` in ``namespace`` (a module's
    globals) by its dispatcher (``numba.njit(cache=True, ...)``, or uncached when numba finds
    no writable cache directory: it raises at decoration time then, warned once).  Creating a
    dispatcher compiles nothing yet: numba compiles (or loads from its cache) each function
    on its first call with new argument types."""
    import numba  # deferred: the reason this module exists

    global _cache_warned
    for name, obj in list(namespace.items()):
        if not isinstance(obj, _Deferred) or obj.dispatcher is not None:
            continue
        try:
            disp = numba.njit(cache=True, **obj.options)(obj.py_func)
        except RuntimeError as exc:  # "cannot cache function ...: no locator available"
            if not _cache_warned:
                warnings.warn(
                    f"numba cannot cache svmtune's compiled loops ({exc}); they are "
                    "compiled in every process (a few seconds). Set NUMBA_CACHE_DIR to a "
                    "writable directory to keep them.",
                    RuntimeWarning,
                    stacklevel=user_stacklevel(),
                )
                _cache_warned = True
            disp = numba.njit(cache=False, **obj.options)(obj.py_func)
        obj.dispatcher = disp
        namespace[name] = disp


def _njit(**options):
    """``numba.njit(cache=True, **options)``, deferred to the first call (:class:`_Deferred`):
    importing a module of compiled loops does not import numba."""

    def decorate(func):
        return _Deferred(func, options)

    return decorate
