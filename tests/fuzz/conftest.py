"""Hypothesis profiles of the fuzz suite.

``ci`` (the default) is bounded so that the whole suite takes about a minute on two cores:
few examples per test, derandomised (the same cases on every run), no example database.
``long`` is the benchmark run (``SVMTUNE_FUZZ_PROFILE=long``; ``benchmarks/fuzz_long.py``
runs it): many random examples per test, scaled by ``SVMTUNE_FUZZ_SCALE`` (default 1).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "ci",
    max_examples=10,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=_SLOW_DATA,
    print_blob=True,
)
settings.register_profile(
    "long",
    max_examples=int(200 * float(os.environ.get("SVMTUNE_FUZZ_SCALE", "1"))),
    deadline=None,
    derandomize=False,
    database=None,
    suppress_health_check=_SLOW_DATA,
    print_blob=True,
)
settings.load_profile(os.environ.get("SVMTUNE_FUZZ_PROFILE", "ci"))
