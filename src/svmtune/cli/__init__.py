"""The ``svmtune`` command line.

``svmtune datasets``           the bundled data sets (from MANIFEST.md)
``svmtune select FILE ...``    select hyperparameters for a file or a bundled data set
``svmtune demo``               a short selection on a bundled data set, with test accuracy
``svmtune predict MODEL FILE`` apply a model saved by ``select --out`` to new rows
``svmtune bench``              run (or resume) a benchmark suite
``svmtune report DIR``         tables and figures from a results directory

One module per command (``_select``, ``_demo``, ``_predict``, ``_datasets``, ``_bench``)
above the shared helpers (``_common``: parsing, JSON, errors; ``_source``: data sources and
the columns taken off them; ``_options``: the options ``select`` and ``demo`` share);
``_main`` assembles the group.  Expected failures (missing file, unparsable data, unknown
method, bad labels, ...) end with a one-line ``Error: ...`` message and exit status 1 (2 for
usage errors); ``svmtune --debug ...`` shows the traceback instead.
"""

from __future__ import annotations

from svmtune.cli._common import parse_param, parse_params, to_jsonable
from svmtune.cli._main import main

__all__ = ["main", "parse_param", "parse_params", "to_jsonable"]
