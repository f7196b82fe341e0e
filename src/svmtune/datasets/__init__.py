"""Bundled benchmark data sets and loaders for user files.

``load_dataset(name)`` returns ``(X, y, info)`` for a bundled set (names: file stems, see
``list_datasets()`` / ``svmtune datasets``); ``load_file(path, target=...)`` reads the user's
CSV/TSV, svmlight/LIBSVM and ARFF/KEEL files (``load_table(path)``: every column, for new
rows that may have no labels).  Provenance: ``data/MANIFEST.md``.

The package ships the small sets its demo, the ``quick`` suite and the tests use; the
papers' benchmark sets live in the repository's ``benchmarks/data/``.  ``data_dirs()`` lists
where names are looked up: the package's directory, the directories of ``$SVMTUNE_DATA``
(``DATA_ENV``) and the first ``benchmarks/data`` found from the current directory upwards.
"""

from __future__ import annotations

from svmtune.datasets.loaders import FORMATS, DataFileError, load_file, load_table
from svmtune.datasets.registry import (
    DATA_DIR,
    DATA_ENV,
    DatasetInfo,
    ManifestEntry,
    data_dirs,
    dataset_path,
    datasets_table,
    list_datasets,
    load_dataset,
    manifest,
    resolve_name,
)

__all__ = [
    "DATA_DIR",
    "DATA_ENV",
    "FORMATS",
    "DataFileError",
    "DatasetInfo",
    "ManifestEntry",
    "data_dirs",
    "dataset_path",
    "datasets_table",
    "list_datasets",
    "load_dataset",
    "load_file",
    "load_table",
    "manifest",
    "resolve_name",
]
