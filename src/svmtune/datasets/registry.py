"""Registry of the benchmark data sets: the package's own and those of data directories.

The package ships the few small sets its demo, quick suite and tests use, in
``svmtune/datasets/data/``; more data directories are searched after it (:func:`data_dirs`):
those named by the environment variable ``SVMTUNE_DATA`` (``os.pathsep``-separated) and a
repository's ``benchmarks/data`` found from the current directory upwards (where the papers'
benchmark sets live).  Every data set is one gzip CSV in a data directory (header row, feature
columns, then the class labels in a last column ``target``; empty cells are missing values;
categorical features are kept as the source gives them).  Names are the file stems (``"pima"``,
``"ijcnn1_train"``, ``"mnist_2v9_test"``, ...).  A ``MANIFEST.md`` beside the files records each
set's provenance, licence, size and class counts; :func:`datasets_table` reads those rows
without loading any data.  Side files ``<name>.<kind>.npz`` (e.g. ``spect.splits.npz``,
``parkinson_speech_train.groups.npz``) hold row-aligned arrays or index splits.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from svmtune.preprocess import categorical_columns

__all__ = [
    "DATA_DIR",
    "DATA_ENV",
    "data_dirs",
    "TARGET",
    "DatasetInfo",
    "ManifestEntry",
    "list_datasets",
    "datasets_table",
    "manifest",
    "load_dataset",
    "dataset_path",
    "file_sha256",
    "resolve_name",
]

#: directory of the files shipped with the package
DATA_DIR: Path = Path(__file__).resolve().parent / "data"
#: environment variable naming more data directories (``os.pathsep``-separated)
DATA_ENV = "SVMTUNE_DATA"
#: where a repository keeps its benchmark data, relative to the repository's root
REPO_DATA_SUBDIR = Path("benchmarks") / "data"
#: name of the label column of every data set's CSV
TARGET = "target"
_SUFFIX = ".csv.gz"
#: missing-value markers of the data sets' CSVs (empty cells); pandas' defaults apart from "" are
#: switched off so that category strings such as "NA" or "None" stay categories
_NA_VALUES = [""]


@dataclass(frozen=True)
class ManifestEntry:
    """One data-file row of ``MANIFEST.md``.

    Attributes
    ----------
    name : str
        File stem (the registry name).
    file : str
    papers : str
        Which of the five papers use the set (``"A, C, E"``; see MANIFEST.md).
    n, d : int
        Rows and feature columns (the ``target`` column not counted).
    n_classes : int
    class_counts : dict
        Label (as printed in the manifest) -> count.
    missing : int or None
        Number of empty cells.
    source : str
        Where the file was read from (repository, path, commit; or PyPI wheel).
    provenance : str
        Original provenance and licence.
    notes : str
        Preprocessing notes (recodings, dropped columns, ...).
    """

    name: str
    file: str
    papers: str
    n: int
    d: int
    n_classes: int
    class_counts: dict[str, int] = field(hash=False)
    missing: int | None
    source: str
    provenance: str
    notes: str


@dataclass(frozen=True)
class DatasetInfo:
    """What :func:`load_dataset` knows about a loaded data set.

    Also readable like a mapping (``info["version"]``) for callers that store it as a dict.

    Attributes
    ----------
    name : str
    n, d : int
        Rows and feature columns of ``X``.
    n_classes : int
    class_counts : dict
        Label (as in ``y``) -> number of rows.
    missing : int
        Number of missing (NaN) cells in ``X``.
    categorical : tuple of str
        Non-numeric columns of ``X`` (strings as the source gives them).
    version : str
        SHA-256 of the file's bytes (benchmark rows record it).
    path : str
        The data set's file.
    source, provenance, notes, papers : str
        From the data set's row of MANIFEST.md ("" when the manifest has no row for it).
    side_files : dict
        Kind -> path of the side files ``<name>.<kind>.npz`` (e.g. ``{"splits": ...}``);
        read them with :meth:`load_side`.
    """

    name: str
    n: int
    d: int
    n_classes: int
    class_counts: dict[Any, int] = field(hash=False)
    missing: int
    categorical: tuple[str, ...]
    version: str
    path: str
    source: str = ""
    provenance: str = ""
    notes: str = ""
    papers: str = ""
    side_files: dict[str, str] = field(default_factory=dict, hash=False)

    def __getitem__(self, key: str) -> Any:
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default) if key in self.__dataclass_fields__ else default

    def keys(self) -> list[str]:
        return list(self.__dataclass_fields__)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly copy (labels of ``class_counts`` as strings)."""
        out = asdict(self)
        out["class_counts"] = {str(_py(k)): int(v) for k, v in self.class_counts.items()}
        out["categorical"] = list(self.categorical)
        return out

    def load_side(self, kind: str) -> dict[str, np.ndarray]:
        """Arrays of the side file ``<name>.<kind>.npz`` (e.g. ``"splits"``, ``"groups"``)."""
        if kind not in self.side_files:
            have = ", ".join(sorted(self.side_files)) or "none"
            raise KeyError(f"data set {self.name!r} has no {kind!r} side file (has: {have})")
        with np.load(self.side_files[kind], allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}

    def add_group_column(self, X, column: str):
        """``X`` (this data set's features, in file order) with the array ``column`` of its
        ``groups`` side file as a last column, so that ``--groups COLUMN`` finds it; ``X``
        itself when it already has that column or the side file has no such array."""
        if column in X.columns or "groups" not in self.side_files:
            return X
        side = self.load_side("groups")
        if column not in side or len(side[column]) != len(X):
            return X
        return X.assign(**{column: side[column]})


def _py(value: Any) -> Any:
    """numpy scalar -> Python scalar (for readable reprs and JSON)."""
    return value.item() if isinstance(value, np.generic) else value


# ---------------------------------------------------------------------------- names
def _repo_data_dir() -> Path | None:
    """The first ``benchmarks/data`` directory in the current directory or a parent."""
    here = Path.cwd().resolve()
    for base in (here, *here.parents):
        if (base / REPO_DATA_SUBDIR).is_dir():
            return base / REPO_DATA_SUBDIR
    return None


def data_dirs() -> list[Path]:
    """The data directories searched, in order (the first holding a name wins).

    Returns
    -------
    list of Path
        :data:`DATA_DIR` (the package's files), each existing directory of the environment
        variable ``SVMTUNE_DATA`` (``os.pathsep``-separated), then the first
        ``benchmarks/data`` directory found in the current directory or one of its parents
        (a repository's benchmark data).
    """
    env = [Path(p).expanduser() for p in os.environ.get(DATA_ENV, "").split(os.pathsep) if p]
    out: list[Path] = []
    for d in [DATA_DIR, *env, _repo_data_dir()]:
        if d is not None and d.is_dir() and d.resolve() not in {o.resolve() for o in out}:
            out.append(d)
    return out


def _index() -> dict[str, Path]:
    """Registry name -> file, over :func:`data_dirs` (the first directory holding a name
    wins)."""
    out: dict[str, Path] = {}
    for d in data_dirs():
        for p in sorted(d.glob("*" + _SUFFIX)):
            out.setdefault(p.name[: -len(_SUFFIX)], p)
    return out


def list_datasets() -> list[str]:
    """Names of the data sets (file stems) in the package and the data directories
    (:func:`data_dirs`), sorted."""
    return sorted(_index())


def _normalise(name: str) -> str:
    key = str(name).strip().lower()
    for suffix in (_SUFFIX, ".csv"):
        if key.endswith(suffix):
            key = key[: -len(suffix)]
    return key.replace("-", "_").replace(" ", "_")


def resolve_name(name: str) -> str:
    """Registry name for ``name`` (case, '-' for '_' and a '.csv.gz' suffix forgiven).

    Raises ``ValueError`` listing close matches when there is no such data set.
    """
    if not isinstance(name, str):
        raise TypeError(f"data set name must be a string, got {type(name).__name__}")
    names = list_datasets()
    if name in names:
        return name
    key = _normalise(name)
    if key in names:
        return key
    close = difflib.get_close_matches(key, names, n=5, cutoff=0.6)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    looked = ", ".join(str(d) for d in data_dirs())
    raise ValueError(
        f"unknown data set {name!r}.{hint} Looked in: {looked}. `svmtune datasets` (or "
        "svmtune.datasets.list_datasets()) lists the known ones; the papers' benchmark sets "
        "are in a repository's benchmarks/data (run from the repository), and "
        f"${DATA_ENV} (directories separated by {os.pathsep!r}) adds more directories."
    )


def dataset_path(name: str) -> Path:
    """Path of the file of data set ``name`` (in the package or a data directory)."""
    return _index()[resolve_name(name)]


def _side_files(name: str, directory: Path = DATA_DIR) -> dict[str, str]:
    out = {}
    for p in sorted(directory.glob(f"{name}.*.npz")):
        kind = p.name[len(name) + 1 : -len(".npz")]
        if kind and "." not in kind:
            out[kind] = str(p)
    return out


# ---------------------------------------------------------------------------- manifest
def _split_row(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _parse_int(cell: str) -> int | None:
    cell = cell.strip()
    return int(cell) if re.fullmatch(r"\d+", cell) else None


def parse_class_counts(cell: str) -> tuple[int, dict[str, int]]:
    """Parse a manifest ``classes: counts`` cell, e.g. ``"2: b: 126; g: 225"``.

    Returns the number of classes and ``{label: count}`` (labels as printed).
    """
    k, _, rest = cell.partition(": ")
    counts: dict[str, int] = {}
    for part in rest.split("; "):
        label, _, count = part.rpartition(": ")
        if not label or not count.strip().isdigit():
            raise ValueError(f"cannot parse class counts {cell!r}")
        counts[label] = int(count)
    if int(k) != len(counts):
        raise ValueError(f"class counts {cell!r} list {len(counts)} classes, not {k}")
    return int(k), counts


def _read_manifest_text(directory: Path = DATA_DIR) -> str:
    path = directory / "MANIFEST.md"
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def manifest() -> dict[str, ManifestEntry]:
    """The data-file rows of the ``MANIFEST.md`` of every data directory
    (:func:`data_dirs`), keyed by registry name (the first directory's row wins; cached per
    directory)."""
    out: dict[str, ManifestEntry] = {}
    for d in data_dirs():
        for name, entry in _manifest_of(d.resolve()).items():
            out.setdefault(name, entry)
    return out


@functools.lru_cache(maxsize=8)
def _manifest_of(directory: Path) -> dict[str, ManifestEntry]:
    """The data-file rows of ``directory``'s ``MANIFEST.md``."""
    header: list[str] | None = None
    out: dict[str, ManifestEntry] = {}
    for line in _read_manifest_text(directory).splitlines():
        if not line.startswith("|"):
            header = None if not line.strip() else header
            continue
        cells = _split_row(line)
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue  # the |---| separator
        row = dict(zip(header, cells))
        file = row.get("file", "")
        if not file.endswith(_SUFFIX):
            continue  # side files (npz) have no size columns
        n, d = _parse_int(row.get("n", "")), _parse_int(row.get("d", ""))
        if n is None or d is None:
            raise ValueError(f"MANIFEST.md row for {file} has no integer n/d")
        k, counts = parse_class_counts(row.get("classes: counts", ""))
        name = file[: -len(_SUFFIX)]
        out[name] = ManifestEntry(
            name=name,
            file=file,
            papers=row.get("papers", ""),
            n=n,
            d=d,
            n_classes=k,
            class_counts=counts,
            missing=_parse_int(row.get("missing cells", "")),
            source=row.get("source", "").replace("`", ""),
            provenance=row.get("original provenance / license", ""),
            notes=row.get("preprocessing & notes", ""),
        )
    return out


def datasets_table() -> list[dict[str, Any]]:
    """One row per data set (:func:`list_datasets`), from MANIFEST.md (nothing is loaded).

    Keys: name, n, d, n_classes, papers, missing, source.  Sets missing from the manifest
    appear with ``None`` sizes.
    """
    rows = []
    entries = manifest()
    for name in list_datasets():
        e = entries.get(name)
        rows.append(
            {
                "name": name,
                "n": e.n if e else None,
                "d": e.d if e else None,
                "n_classes": e.n_classes if e else None,
                "papers": e.papers if e else "",
                "missing": e.missing if e else None,
                "source": e.source if e else "",
            }
        )
    return rows


# ---------------------------------------------------------------------------- loading
def file_sha256(path: str | Path, *, cache: bool = True) -> str:
    """SHA-256 hex digest of a file's bytes.

    Cached per path, size and modification time; ``cache=False`` reads the file every time
    (for a file that may be rewritten, with the same size, within the file system's time
    resolution).
    """
    if not cache:
        return _sha256(str(path))
    st = Path(path).stat()
    return _sha256_cached(str(path), st.st_size, st.st_mtime_ns)


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@functools.lru_cache(maxsize=256)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    return _sha256(path)


@functools.lru_cache(maxsize=8)
def _read_frame(path: Path, version: str) -> pd.DataFrame:
    """Parsed CSV of a data set's file (cached per process; callers must copy)."""
    df = pd.read_csv(path, na_values=_NA_VALUES, keep_default_na=False)
    if TARGET not in df.columns:
        raise ValueError(f"data file {path.name} has no {TARGET!r} column")
    if df[TARGET].isna().any():
        raise ValueError(f"data file {path.name} has missing labels")
    return df


def load_dataset(name: str, *, as_frame: bool = True) -> tuple[Any, np.ndarray, DatasetInfo]:
    """Load a data set of the package or of a data directory (:func:`data_dirs`).

    Parameters
    ----------
    name : str
        Registry name, i.e. the file stem (``"pima"``, ``"ijcnn1_train"``); case, ``-`` for
        ``_`` and a ``.csv.gz`` suffix are forgiven.  Unknown names raise ``ValueError``
        listing close matches.
    as_frame : bool, default=True
        Return ``X`` as a DataFrame (categorical string columns kept, missing = NaN).  With
        False, ``X`` is a float ndarray; data sets with categorical columns then raise
        ``ValueError`` (use the DataFrame with ``SVMTuner(preprocess="auto")``).

    Returns
    -------
    X : DataFrame or ndarray of shape (n, d)
    y : ndarray of shape (n,)
        The labels as the source gives them (strings or numbers).
    info : DatasetInfo
    """
    name = resolve_name(name)
    path = dataset_path(name)
    version = file_sha256(path)
    df = _read_frame(path, version)
    X = df.drop(columns=[TARGET]).copy(deep=True)
    y = df[TARGET].to_numpy(copy=True)
    categorical = tuple(str(c) for c in categorical_columns(X))
    labels, counts = np.unique(y, return_counts=True)
    entry = manifest().get(name)
    info = DatasetInfo(
        name=name,
        n=int(X.shape[0]),
        d=int(X.shape[1]),
        n_classes=int(len(labels)),
        class_counts={_py(lab): int(c) for lab, c in zip(labels, counts)},
        missing=int(X.isna().to_numpy().sum()),
        categorical=categorical,
        version=version,
        path=str(path),
        source=entry.source if entry else "",
        provenance=entry.provenance if entry else "",
        notes=entry.notes if entry else "",
        papers=entry.papers if entry else "",
        side_files=_side_files(name, path.parent),
    )
    if as_frame:
        return X, y, info
    if categorical:
        raise ValueError(
            f"data set {name!r} has categorical columns {list(categorical)}; load it with "
            "as_frame=True and fit SVMTuner(preprocess='auto') (impute + one-hot + standardise)"
        )
    return X.to_numpy(dtype=float), y, info
