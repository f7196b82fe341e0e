"""numba's ``njit`` with its on-disk cache where there is a writable place for it.

The one place svmtune decorates compiled functions from: the pair loops of the data
criteria (:mod:`svmtune.criteria._pairloops`) and the factor updates of the L2-SVM solver
(:mod:`svmtune._factor`).  Importing this module imports numba.
"""

from __future__ import annotations

import warnings

import numba

from svmtune._warnings import user_stacklevel

__all__ = ["_njit"]

_cache_warned = False


def _njit(**options):
    """``numba.njit(cache=True, **options)``, or without the on-disk cache when numba has
    no writable place for it (it raises at decoration time then)."""

    def decorate(func):
        global _cache_warned
        try:
            return numba.njit(cache=True, **options)(func)
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
            return numba.njit(cache=False, **options)(func)

    return decorate
