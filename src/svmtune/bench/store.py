"""The result store: one JSON-lines file per suite, appended one row at a time, crash-safe.

Layout: ``<out>/<suite>/results.jsonl``; experiment outputs go beside it.  Each row is one
JSON object on one line, written with a single ``write`` on a file opened with ``O_APPEND``,
then flushed to disk (``os.fsync``) before the next row.  A run killed mid-write leaves at most
one torn last line: :func:`read_rows` ignores it and :class:`ResultStore` cuts it off before
appending, so a resumed run never glues a new row onto a torn one.  Every row carries a
``key`` (:func:`cell_key`); a resumed run skips the keys already stored, so a killed-then-
resumed run ends with exactly the rows a clean run writes.

Several runs may write one store at once (two processes running different tasks of a suite):
each row is appended, after the torn-line check, under an exclusive ``flock`` on the store's
``.lock`` that is held only for that row, so rows never interleave and a live writer's row is
never mistaken for a torn one.  The file is opened by its path for every row, so a row is
never written to a file that another program has meanwhile replaced (``git stash``/``checkout``
and many editors write a new file under the old name; a descriptor kept open would go on
appending to the unlinked old one, and its rows would be lost).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
import warnings
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from svmtune._warnings import user_stacklevel
from svmtune.exceptions import NotAResultsFile, StoreBusy

__all__ = [
    "RESULTS_FILE",
    "ResultStore",
    "StoreBusy",
    "cell_key",
    "naming_file",
    "jsonable",
    "read_rows",
    "latest_by_key",
    "counts_as_done",
    "parse_time",
    "find_result_files",
    "load_results",
    "NotAResultsFile",
    "quarantine_path",
]

RESULTS_FILE = "results.jsonl"
#: suffix of the file a store moves its damaged lines to (``results.jsonl.damaged``)
DAMAGED_SUFFIX = ".damaged"


def jsonable(obj: Any) -> Any:
    """A JSON-serialisable copy of ``obj``: numpy scalars/arrays to Python, dict keys to str,
    non-finite floats to None, anything else unknown to its ``repr``."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, Path):
        return str(obj)
    return repr(obj)


@contextlib.contextmanager
def naming_file(path: str | Path):
    """Re-raise an ``OSError`` that names no file (a full disk, ``ENOSPC``, on ``write``;
    an I/O error on ``fsync``) as the same error naming ``path``, so that the message says
    which file could not be written."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise type(exc)(exc.errno, exc.strerror or str(exc), str(path)) from exc


def cell_key(**fields: Any) -> str:
    """Stable 16-hex-digit key of a cell from its identifying fields (order-independent)."""
    text = json.dumps(jsonable(fields), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """All complete rows of a JSON-lines file.

    A last line without its newline (a write cut short) is ignored silently; an unparsable
    line elsewhere is skipped with a warning.  Missing file -> ``[]``.
    """
    path = Path(path)
    if not path.exists():
        return []
    return _complete_rows(path.read_bytes(), path)[0]


def quarantine_path(path: str | Path) -> Path:
    """Where :class:`ResultStore` moves the damaged lines of results file ``path``:
    ``<path>.damaged`` beside it."""
    path = Path(path)
    return path.with_name(path.name + DAMAGED_SUFFIX)


def _parse_line(line: bytes) -> tuple[dict | None, str]:
    """A results line as its row, or None and what is wrong with it."""
    try:
        row = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte 0x{line[exc.start]:02x} at column {exc.start + 1})"
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at column {exc.colno}: a line cut short?)"
    if not isinstance(row, dict):
        return None, f"not a JSON object (a {type(row).__name__})"
    return row, ""


def _complete_rows(data: bytes, path: Path) -> tuple[list[dict], int]:
    """The rows of the complete lines of ``data`` (a torn last line is left out) and the
    number of bytes they span; warnings name the file and number the lines from the start
    of ``data``."""
    end = data.rfind(b"\n") + 1
    rows = []
    for i, line in enumerate(data[:end].split(b"\n")[:-1]):
        if not line.strip():
            continue
        row, problem = _parse_line(line)
        if row is None:
            warnings.warn(
                f"{path}: skipping damaged line {i + 1}: {problem}; the next 'svmtune bench' "
                f"run on this store moves it to {quarantine_path(path).name}",
                RuntimeWarning,
                stacklevel=user_stacklevel(),
            )
            continue
        rows.append(row)
    return rows, end


def latest_by_key(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows deduplicated by ``key`` (the last written wins), in first-written order."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        k = row.get("key")
        if k is None:
            continue
        if k in out:
            out.pop(k)
        out[k] = row
    return list(out.values())


def parse_time(value: str | datetime | None, name: str = "time") -> datetime | None:
    """An ISO 8601 time (or datetime) as an aware datetime; a naive one is taken as UTC."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        try:
            value = datetime.fromisoformat(str(value))
        except ValueError:
            raise ValueError(
                f"{name} must be an ISO 8601 time such as 2026-11-24T01:30:00+00:00, got {value!r}"
            ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def counts_as_done(
    row: dict[str, Any], ok_only: bool = False, since: datetime | None = None
) -> bool:
    """Whether a stored row stands for its cell: not an error (if ``ok_only``) and, with
    ``since``, written at or after it (a row without a readable ``timestamp`` is older)."""
    if ok_only and row.get("status") != "ok":
        return False
    if since is None:
        return True
    try:
        written = parse_time(row.get("timestamp"))
    except ValueError:
        return False
    return written is not None and written >= since


class ResultStore:
    """Append-only JSON-lines store of one suite's rows.

    Use as a context manager.  Each :meth:`append` takes an exclusive ``flock`` on ``.lock``
    for the one row it writes (cutting a torn last line left by a killed writer first), so
    several stores, in one process or in several, can append to the same file at once;
    :meth:`exclusive` holds a named lock for longer work that must not run twice at once
    (a whole run of :func:`svmtune.bench.run_suite`, the experiments).

    Parameters
    ----------
    directory : path
        The suite's output directory (created if missing); rows go to ``results.jsonl``.
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.path = self.directory / RESULTS_FILE
        self._lock_fd: int | None = None  # set while the store is open

    # -------------------------------------------------------------- lifecycle
    def open(self) -> ResultStore:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock_fd = os.open(self.directory / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            with self._locked():
                self._repair_tail()
                self._quarantine()
                os.close(os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))
        except BaseException:
            self.close()  # no descriptor left open by a failed open
            raise
        return self

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> ResultStore:
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def _locked(self):
        """Hold the store's exclusive lock (blocking: other writers hold it for one row)."""
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def exclusive(self, name: str, why: str = ""):
        """Hold an exclusive lock named ``name`` of this store (a file ``.<name>.lock``
        holding the holder's process id).

        Raises :class:`StoreBusy` at once if another holder has it, instead of waiting,
        naming the holder's pid (and ``why``: what to do).  The lock is the kernel's
        ``flock``, released when its holder exits in any way (even SIGKILL): a lock file
        left by a dead process is no lock, and the next holder takes it over.
        """
        lock = self.directory / f".{name}.lock"
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
                who = f"process {holder}" if holder.isdigit() else "another process"
                msg = f"{who} holds the {name!r} lock of {self.path} ({lock}){why}"
                raise StoreBusy(msg) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _repair_tail(self) -> None:
        """Cut a torn last line (no trailing newline) left by a killed writer."""
        if not self.path.exists():
            return
        with open(self.path, "r+b") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return
            # find the last newline: everything after it is the torn line
            pos, chunk = size, 1 << 16
            keep = 0
            while pos > 0:
                start = max(0, pos - chunk)
                fh.seek(start)
                buf = fh.read(pos - start)
                j = buf.rfind(b"\n")
                if j >= 0:
                    keep = start + j + 1
                    break
                pos = start
            fh.truncate(keep)
            fh.flush()
            os.fsync(fh.fileno())

    def _quarantine(self) -> None:
        """Move the damaged complete lines (not UTF-8, not JSON, not an object: a line cut
        short and then followed by other rows, or bytes written over) to
        :func:`quarantine_path`, once, with one warning naming them; the results file keeps
        the other lines in their order (rewritten atomically: a new file moved over it)."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        lines = data.split(b"\n")[:-1]  # the tail is complete here (_repair_tail)
        bad = [(i, ln) for i, ln in enumerate(lines) if ln.strip() and _parse_line(ln)[0] is None]
        if not bad:
            return
        qpath = quarantine_path(self.path)
        with open(qpath, "ab") as fh:  # kept first: a crash now loses nothing
            fh.write(b"".join(ln + b"\n" for _, ln in bad))
            fh.flush()
            os.fsync(fh.fileno())
        damaged = {i for i, _ in bad}
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "wb") as fh:
            fh.write(b"".join(ln + b"\n" for i, ln in enumerate(lines) if i not in damaged))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        shown = ", ".join(f"{i + 1} ({_parse_line(ln)[1]})" for i, ln in bad[:5])
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        warnings.warn(
            f"{self.path}: moved {len(bad)} damaged line(s) to {qpath}: line {shown}{more}",
            RuntimeWarning,
            stacklevel=user_stacklevel(),
        )

    # -------------------------------------------------------------- rows
    def rows(self) -> list[dict[str, Any]]:
        """Stored rows, deduplicated by key (last wins)."""
        return latest_by_key(read_rows(self.path))

    def rows_from(self, offset: int) -> tuple[list[dict[str, Any]], int]:
        """The complete rows written from byte ``offset`` (a line start) on, and the offset
        to read from next time: a writer that follows the file reads each row once."""
        if not self.path.exists():
            return [], 0
        with open(self.path, "rb") as fh:
            if fh.seek(0, os.SEEK_END) < offset:  # cut below offset: read it all again
                offset = 0
            fh.seek(offset)
            rows, n = _complete_rows(fh.read(), self.path)
        return rows, offset + n

    def keys(self, *, ok_only: bool = False, since: datetime | None = None) -> set[str]:
        """Keys of the stored rows that stand for their cells (:func:`counts_as_done`)."""
        return {r["key"] for r in self.rows() if counts_as_done(r, ok_only, since)}

    def append(self, row: dict[str, Any]) -> None:
        """Write one row as one line, atomically (O_APPEND write + fsync under the lock), to
        the file now at the store's path (opened for this row)."""
        if self._lock_fd is None:
            raise RuntimeError("ResultStore.append() outside 'with ResultStore(...)'")
        if "key" not in row:
            raise ValueError("a result row needs a 'key'")
        line = json.dumps(jsonable(row), sort_keys=True, allow_nan=False) + "\n"
        data = line.encode()
        with self._locked(), naming_file(self.path):
            self._repair_tail()  # a writer killed mid-row: its torn line goes first
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                written = os.write(fd, data)
                while written < len(data):  # a short write: finish it (same line, appended)
                    written += os.write(fd, data[written:])
                os.fsync(fd)
            finally:
                os.close(fd)


def find_result_files(path: str | Path) -> list[Path]:
    """Result files under ``path``: the file itself (a ``*.jsonl`` file such as
    ``results.jsonl``; any other file raises :class:`NotAResultsFile`), or every ``*.jsonl``
    below a directory."""
    path = Path(path)
    if path.is_file():
        if path.suffix != ".jsonl":
            raise NotAResultsFile(
                f"{path} is not a results file: give a results directory (e.g. "
                f"benchmarks/results) or a JSON-lines file such as {RESULTS_FILE}"
            )
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"no such results file or directory: {path}")
    return sorted(p for p in path.rglob("*.jsonl") if p.is_file())


def load_results(path: str | Path) -> list[dict[str, Any]]:
    """All rows of every result file under ``path`` (deduplicated by key, last wins)."""
    rows: list[dict[str, Any]] = []
    for f in find_result_files(path):
        for r in read_rows(f):
            r.setdefault("_file", str(f))
            rows.append(r)
    return latest_by_key(rows)
