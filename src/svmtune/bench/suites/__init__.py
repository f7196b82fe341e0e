"""The benchmark suite shipped with the package, ``quick`` (one module exposing ``SUITE``).

The papers' suites live in the repository's ``benchmarks/suites/`` (not installed);
:func:`svmtune.bench.suite.get_suite` loads them by name or path.
"""

__all__: list[str] = []
