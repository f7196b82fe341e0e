"""The svmlight/LIBSVM reader, with the bounds on what a file may make it build."""

from __future__ import annotations

import codecs
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from svmtune.datasets._text import (
    BOMS,
    EXPANSION_FLOOR,
    MAX_EXPANSION,
    _compression,
    decode,
    read_bytes,
)
from svmtune.exceptions import DataFileError
from svmtune.preprocess import MAX_DENSIFY_BYTES, MAX_SPARSE_FEATURES

_SVMLIGHT_INDEX = re.compile(rb"(?:^|\s)(\d+):")

SVMLIGHT_LINE = re.compile(r"^\s*[-+]?[0-9.eE+-]+(\s+(qid:\S+|\d+:\S+))*\s*(#.*)?$")


#: largest dense feature matrix (bytes of float64) an svmlight/LIBSVM file may make the loader
#: build: ``rows x (largest feature index) x 8``; a larger one is refused with a message
MAX_DENSE_BYTES = MAX_DENSIFY_BYTES


#: largest number of feature columns an svmlight/LIBSVM file may declare (its largest index)
MAX_SVMLIGHT_FEATURES = 1 << 20


# ---------------------------------------------------------------------------- svmlight
def _load(path: Path) -> tuple[sp.csr_matrix, np.ndarray, int]:
    """The file's values as a CSR matrix whose column ``j`` is the file's index ``j``, its
    labels, and its bytes of text; memory grows with the values the file holds, not with its
    indices, and a compressed file expands within :func:`svmtune.datasets._text.read_bytes`'
    bounds."""
    from sklearn.datasets import load_svmlight_file

    source: str | io.BytesIO = str(path)
    size = path.stat().st_size
    head = read_bytes(path, 4)
    if head.startswith(codecs.BOM_UTF8) or any(head.startswith(bom) for bom, _ in BOMS):
        # scikit-learn's parser reads bytes as UTF-8/ASCII without a byte-order mark
        source = io.BytesIO(decode(read_bytes(path), path).encode("utf-8"))
        size = len(source.getvalue())
    elif _compression(path):  # expanded here, within read_bytes' bounds
        source = io.BytesIO(read_bytes(path))
        size = len(source.getvalue())
    try:
        Xs, y = load_svmlight_file(source, zero_based=True)
    except OverflowError:  # an index past a C int (scikit-learn's parser, and LIBSVM's)
        _svmlight_bound_error(
            path,
            2**31 - 1,
            f"is past {2**31 - 1:,}, the largest index of the LIBSVM format (a C int)",
        )
    except (ValueError, RuntimeError, OSError) as exc:
        msg = " ".join(str(exc).split())
        raise DataFileError(f"cannot parse {path} as svmlight/LIBSVM: {msg}") from None
    if Xs.shape[0] == 0:
        raise DataFileError(f"cannot parse {path} as svmlight/LIBSVM: no data rows")
    return Xs, y, size


def _numbering(path: Path, Xs: sp.csr_matrix, zero_based: bool | str) -> bool:
    """Whether the file's indices count from 0 (``zero_based`` True, False, or "auto": if
    index 0 occurs, as scikit-learn's ``load_svmlight_file`` decides)."""
    has_zero = Xs.nnz == 0 or Xs.indices.min() == 0
    if zero_based == "auto":
        return bool(has_zero)
    if not zero_based and Xs.nnz and has_zero:
        raise DataFileError(
            f"cannot parse {path} as svmlight/LIBSVM with 1-based feature indices (LIBSVM's "
            "numbering): it holds feature index 0"
        )
    return bool(zero_based)


def _amount(nbytes: int) -> str:
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:,.0f} MiB"


def _labels(y: np.ndarray) -> np.ndarray:
    return y.astype(np.int64) if np.all(np.isfinite(y)) and np.all(y == np.round(y)) else y


def read_svmlight_sparse(
    path: Path, zero_based: bool | str = "auto"
) -> tuple[sp.csr_matrix, np.ndarray, bool]:
    """The features of svmlight/LIBSVM file ``path`` as a CSR matrix (column 0: the first
    feature), its labels, and whether its indices were read as 0-based (``zero_based``:
    True, False, or "auto": 0-based if index 0 occurs).

    Memory grows with the values the file holds, and the columns are bounded before anything
    of one entry per column is built: a largest index past
    :data:`svmtune.preprocess.MAX_SPARSE_FEATURES` columns (or past a C int, the format's
    own limit) is refused naming its line."""
    Xs, y, _ = _load(path)
    zero_based = _numbering(path, Xs, zero_based)
    base = 0 if zero_based else 1  # the file's index of column 0
    if Xs.shape[1] - base > MAX_SPARSE_FEATURES:
        _svmlight_bound_error(
            path,
            MAX_SPARSE_FEATURES - 1 + base,
            f"exceeds the {MAX_SPARSE_FEATURES:,} feature columns svmtune takes in a sparse "
            "matrix (standardising keeps one number per column)",
        )
    return (Xs[:, 1:] if base else Xs).tocsr(), _labels(y), zero_based


def read_svmlight(
    path: Path, zero_based: bool | str = "auto"
) -> tuple[pd.DataFrame, np.ndarray, bool]:
    """Features ``f1 ... fd``, labels, and whether the file's indices were read as 0-based
    (``zero_based`` as in :func:`read_svmlight_sparse`): the file made dense, at most
    :data:`MAX_SVMLIGHT_FEATURES` columns (its largest index) and :data:`MAX_DENSE_BYTES`
    bytes, and at most :data:`~svmtune.datasets._text.MAX_EXPANSION` times its bytes of
    text (beyond :data:`~svmtune.datasets._text.EXPANSION_FLOOR`): a few values at a large
    index cannot stand for gigabytes of zeros."""
    Xs, y, size = _load(path)
    # the loader densifies: bound the dense matrix before building it
    width = Xs.shape[1]
    if width > MAX_SVMLIGHT_FEATURES:
        _svmlight_bound_error(
            path,
            MAX_SVMLIGHT_FEATURES - 1,
            f"exceeds the {MAX_SVMLIGHT_FEATURES:,} feature columns svmtune reads from an "
            "svmlight/LIBSVM file",
        )
    most = min(MAX_DENSE_BYTES, max(EXPANSION_FLOOR, MAX_EXPANSION * size))
    if Xs.shape[0] * width * 8 > most:
        cap = most // (8 * Xs.shape[0])
        _svmlight_bound_error(
            path,
            cap - 1,
            f"makes {Xs.shape[0]:,} rows x {width:,} columns = "
            f"{_amount(Xs.shape[0] * width * 8)} of dense features, more than the "
            f"{_amount(most)} svmtune builds from this file ({MAX_EXPANSION} times its "
            f"{size / 2**10:,.0f} KiB of text, at least {EXPANSION_FLOOR / 2**20:g} MiB, at "
            f"most {MAX_DENSE_BYTES / 2**30:g} GiB; {cap:,} columns at {Xs.shape[0]:,} rows)",
        )
    zero_based = _numbering(path, Xs, zero_based)
    if not zero_based:
        Xs = Xs[:, 1:]
    X = pd.DataFrame(Xs.toarray(), columns=[f"f{j + 1}" for j in range(Xs.shape[1])])
    return X, _labels(y), zero_based


def _svmlight_bound_error(path: Path, bound: int, why: str) -> None:
    """Raise a ``DataFileError`` naming the first line of svmlight file ``path`` with a
    feature index above ``bound`` (the largest index of the file when none is), and
    ``why`` it is refused."""
    where = ""
    data = read_bytes(path)
    for i, line in enumerate(data.splitlines(), 1):
        body = line.split(b"#", 1)[0]
        for m in _SVMLIGHT_INDEX.finditer(body):
            idx = int(m.group(1))
            if idx > bound:
                where = f"line {i}: feature index {idx}"
                break
        if where:
            break
    raise DataFileError(
        f"cannot parse {path} as svmlight/LIBSVM: {where or 'its largest feature index'} "
        f"{why}; renumber the features compactly (1, 2, ...), or read the file with "
        "sklearn.datasets.load_svmlight_file (sparse) and select the columns you need"
    )
