"""Memory the process has freed, handed back to the system (issue 64, "Past one machine").

glibc's allocator keeps freed memory in its heaps for reuse, so a process's resident size
stays near its highest point after the arrays that made it are gone: at 10^6 rows 156 MB of
the selection's freed matrices were still resident when the final fit started, 26 MB with
:func:`release_freed_memory` (``benchmarks/memory_steps.md``; the peak, the exact stage's,
is the same either way).  :func:`release_freed_memory` asks glibc to return them
(``malloc_trim(0)``), as dask's workers do for their "unmanaged" memory
(https://distributed.dask.org/en/stable/worker-memory.html#manually-trim-memory).  Elsewhere
(macOS, Windows, musl) it does nothing: those allocators return large blocks on their own.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["release_freed_memory"]


def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_TRIM = _malloc_trim()


def release_freed_memory() -> bool:
    """Return the memory the allocator holds free to the system; whether it could be asked
    (glibc only).  ``O(heap size)``: call it where large arrays were just freed."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True
