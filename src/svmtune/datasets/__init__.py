"""Bundled benchmark data sets and loaders for user files.

``load_dataset(name)`` returns ``(X, y, info)`` for a bundled set (names: file stems, see
``list_datasets()`` / ``svmtune datasets``); ``load_file(path, target=...)`` reads the user's
CSV/TSV, svmlight/LIBSVM and ARFF/KEEL files.  Provenance: ``data/MANIFEST.md``.
"""

from __future__ import annotations

from svmtune.datasets.loaders import FORMATS, DataFileError, load_file
from svmtune.datasets.registry import (
    DATA_DIR,
    DatasetInfo,
    ManifestEntry,
    dataset_path,
    datasets_table,
    list_datasets,
    load_dataset,
    manifest,
    resolve_name,
)

__all__ = [
    "DATA_DIR",
    "FORMATS",
    "DataFileError",
    "DatasetInfo",
    "ManifestEntry",
    "dataset_path",
    "datasets_table",
    "list_datasets",
    "load_dataset",
    "load_file",
    "manifest",
    "resolve_name",
]
