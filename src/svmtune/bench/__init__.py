"""The benchmark harness: suites of data sets x methods x protocol, a resumable runner, an
append-only result store and the report.

* :mod:`~svmtune.bench.suite` -- what a suite is (:class:`Suite`, :class:`Task`,
  :class:`MethodSpec`, :class:`Protocol`) and how one is found: ``quick`` ships with the
  package, the papers' suites are files in the repository's ``benchmarks/suites/``;
* :mod:`~svmtune.bench.runner` -- cells (task x split x method) run, in parallel or on a Dask
  cluster, each appended to the store as it finishes; a killed run resumes;
* :mod:`~svmtune.bench.store` -- the JSON-lines result store (atomic appends, locks,
  quarantine of damaged lines);
* :mod:`~svmtune.bench.stats` -- paired tests and summary tables;
* :mod:`~svmtune.bench.report` -- the report (Markdown and HTML) from stored results.

``svmtune bench`` and ``svmtune report`` are the command-line front ends.
"""

from __future__ import annotations

from svmtune.bench.report import build_report
from svmtune.bench.runner import run_suite
from svmtune.bench.store import ResultStore, load_results, read_rows
from svmtune.bench.suite import MethodSpec, Protocol, Suite, Task, available_suites, get_suite

__all__ = [
    "MethodSpec",
    "Protocol",
    "ResultStore",
    "Suite",
    "Task",
    "available_suites",
    "build_report",
    "get_suite",
    "load_results",
    "read_rows",
    "run_suite",
]
