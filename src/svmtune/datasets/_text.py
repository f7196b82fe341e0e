"""Reading a data file's bytes and text: compression, size bounds, encodings, the first
lines for sniffing (used by every format reader in :mod:`svmtune.datasets.loaders`)."""

from __future__ import annotations

import bz2
import codecs
import gzip
import lzma
import zlib
from pathlib import Path

from svmtune.exceptions import DataFileError

# byte-order marks of the UTF-16/32 text some tools write (e.g. a spreadsheet's "Unicode
# text" export); UTF-32's little-endian mark starts with UTF-16's, so it is tried first
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


# ---------------------------------------------------------------------------- target
def column_list(columns: list[str], limit: int = 12) -> str:
    shown = ", ".join(repr(c) for c in columns[:limit])
    return shown + (f", ... ({len(columns)} columns)" if len(columns) > limit else "")


_COMPRESSION = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


SNIFF_BYTES = 1 << 16


#: largest text (after decompression) read from a data file
MAX_TEXT_BYTES = 1 << 31

#: most text a compressed file may expand to, per byte of the file, beyond
#: :data:`EXPANSION_FLOOR`: deflate reaches about 1000 to 1, bzip2 and xz far more, so a
#: small compressed file could otherwise stand for gigabytes of text (and the parse of it);
#: data compress 2 to 20 to 1 in practice.  Decompress a file that expands further and read
#: the plain file (up to :data:`MAX_TEXT_BYTES`)
MAX_EXPANSION = 64

#: text any compressed file may expand to (64 MiB), whatever its ratio
EXPANSION_FLOOR = 1 << 26


# ---------------------------------------------------------------------------- helpers
def _compression(path: Path) -> str | None:
    return path.suffix.lower() if path.suffix.lower() in _COMPRESSION else None


def base_suffix(path: Path) -> str:
    """Extension without a compression suffix (``data.csv.gz`` -> ``.csv``)."""
    stem = path.with_suffix("") if _compression(path) else path
    return stem.suffix.lower()


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """The file's bytes (decompressed), its first ``limit`` only if given; more than
    :data:`MAX_TEXT_BYTES` is refused, and so is a compressed file expanding past
    :data:`MAX_EXPANSION` times its size (beyond :data:`EXPANSION_FLOOR`), as it expands
    (a small compressed file can expand to any size)."""
    opener = _COMPRESSION.get(_compression(path) or "", open)
    most = MAX_TEXT_BYTES
    try:
        with opener(path, "rb") as fh:
            if limit is not None:
                return fh.read(limit)
            if opener is open:
                size = path.stat().st_size
                if size <= MAX_TEXT_BYTES:
                    return fh.read()
            else:  # in pieces: the expanded size is known only by expanding
                packed = path.stat().st_size
                most = min(MAX_TEXT_BYTES, max(EXPANSION_FLOOR, MAX_EXPANSION * packed))
                chunks, size = [], 0
                while size <= most:
                    chunk = fh.read(1 << 20)
                    if not chunk:
                        return b"".join(chunks)
                    chunks.append(chunk)
                    size += len(chunk)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise DataFileError(f"cannot read {path}: {exc}") from None
    if most < MAX_TEXT_BYTES:
        raise DataFileError(
            f"cannot read {path}: it expands to more than {most / 2**20:,.0f} MiB of text, "
            f"more than {MAX_EXPANSION} times its size, the most svmtune decompresses (beyond "
            f"{EXPANSION_FLOOR / 2**20:g} MiB: a small file that expands further could stand "
            "for any amount of data); decompress it yourself and read the plain file"
        )
    raise DataFileError(
        f"cannot read {path}: it holds more than {MAX_TEXT_BYTES / 2**30:g} GiB of text"
        f"{' after decompression' if _compression(path) else ''}, more than svmtune "
        "reads from one data file; select the rows and columns you need first"
    )


def decode(raw: bytes, path: Path, *, partial: bool = False) -> str:
    """Text of a data file: UTF-16/32 when it starts with their byte-order mark, else
    UTF-8 (with or without a mark), else Latin-1.  ``partial``: ``raw`` is the file's
    first bytes only, so a character cut at its end is dropped, not an error."""
    for bom, encoding in BOMS:
        if raw.startswith(bom):
            try:
                return codecs.getincrementaldecoder(encoding)().decode(raw, final=not partial)
            except UnicodeDecodeError as exc:
                raise DataFileError(
                    f"cannot parse {path}: it starts with a {encoding.upper()} byte-order mark "
                    f"but is not valid {encoding.upper()} text ({exc.reason} at byte "
                    f"{exc.start}); save it as UTF-8"
                ) from None
    if b"\x00" in raw[:SNIFF_BYTES]:
        raise DataFileError(
            f"cannot parse {path}: it holds NUL bytes, so it is a binary file (not CSV/TSV, "
            "svmlight or ARFF text) or text in an encoding such as UTF-16 without a "
            "byte-order mark; save it as UTF-8 text"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def first_lines(text: str, k: int, comment: str | None = None) -> list[str]:
    out = []
    for line in text.splitlines():
        s = line.strip()
        if not s or (comment and s.startswith(comment)):
            continue
        out.append(line)
        if len(out) >= k:
            break
    return out


def check_path(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if not p.exists():
        raise FileNotFoundError(f"file not found: {path}")
    if p.is_dir():
        raise DataFileError(f"{path} is a directory, not a data file")
    return p


def line_number(text: str, line: str) -> int:
    """The 1-based number of the first line of ``text`` equal to ``line`` (for messages)."""
    for i, ln in enumerate(text.splitlines(), 1):
        if ln == line:
            return i
    return 0
