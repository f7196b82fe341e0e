"""Model files: skops (safe to load) and joblib/pickle (loading can run code).

``svmtune select --out model.skops`` saves with :func:`save_model`; ``svmtune predict``
loads with :func:`load_model`.

A skops file is a zip archive: ``schema.json`` describes every object of the model (its
type and the skops *loader* that rebuilds it) and each array is a ``.npy`` (a sparse matrix a
``.npz``) member beside it.  skops rebuilds an object by importing the type the file names
and, for some loaders, calling it with arguments from the file, so a file naming any callable
of an importable module can run code.  :func:`load_model` therefore reads ``schema.json``
itself, with the standard library only, and refuses the file before skops sees it unless

* every object is one of :data:`MODEL_TYPES`, the exact ``(loader, type)`` pairs a model
  written by :func:`save_model` holds (no module prefix is trusted: ``sklearn.utils`` holds
  functions that run shell commands);
* the archive's declared (uncompressed) sizes are bounded (:data:`MAX_UNPACKED_RATIO`,
  :data:`MAX_SCHEMA_BYTES`), each array member is read by one object only (skops writes each
  array once and names it by the object that holds it), and each array's ``.npy`` header
  declares no more bytes than the member holds;
* ``schema.json`` parses within :data:`MAX_PARSE_RATIO` times the unpacked size: the parse
  counts the Python objects it builds and stops at the first past that bound, whatever the
  JSON's shape (a crafted one can take eight times its text).

So no array is materialised before the checks pass, and loading allocates the arrays at most
twice (the member's bytes and the array), plus the parsed ``schema.json``.  Files are written
to a temporary name in the target's directory and renamed, so an interrupted save (full disk)
leaves no truncated model behind; a damaged or truncated file is reported as such
(:class:`DamagedModelError`).  A joblib/pickle file is unpickled only when the caller says it
trusts it (``trust_pickle=True``, the CLI's ``--trust-pickle``): unpickling runs whatever code
the file names.
"""

from __future__ import annotations

import copy
import io
import json
import math
import os
import pickle
import re
import secrets
import sys
import zipfile
import zlib
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

from svmtune.exceptions import DamagedModelError, UntrustedModelError

__all__ = [
    "DamagedModelError",
    "MAX_PARSE_RATIO",
    "MAX_SCHEMA_BYTES",
    "MAX_UNPACKED_RATIO",
    "MIN_PARSE_BYTES",
    "MODEL_TYPES",
    "UntrustedModelError",
    "is_skops_file",
    "load_model",
    "save_model",
]

#: The ``(skops loader, type)`` pairs a skops model file may hold, and no other.
#:
#: Derived from what :func:`save_model` writes: the types in ``schema.json`` of fitted
#: ``SVMTuner`` models of every registered method (binary and multiclass, final model
#: l1, l2 and lowrank, ``probability="platt"``, one-vs-one, fitted on sparse rows, with
#: ``preprocess="auto"``/``"none"``, class weights keyed by Python and NumPy labels, a
#: ``RandomState``) and of a scikit-learn ``Pipeline`` of ``ColumnTransformer``,
#: ``SimpleImputer``, ``OneHotEncoder`` and ``StandardScaler`` around an ``SVMTuner``.
#: ``tests/test_persist.py::test_model_types_are_exactly_what_models_hold`` re-derives the
#: list from those models and fails on a missing or an extra pair.  A new class a fitted
#: model holds (e.g. a final estimator in ``svmtune.estimators``) is one more line:
#: ``("ObjectNode", "svmtune.estimators.NewClass"),``.
MODEL_TYPES: tuple[tuple[str, str], ...] = (
    ("DTypeNode", "numpy.dtype"),
    ("DictNode", "builtins.dict"),
    ("FunctionNode", "svmtune.preprocess._as_categories"),
    ("FunctionNode", "svmtune.preprocess._as_float"),
    ("JsonNode", "builtins.str"),
    ("ListNode", "builtins.list"),
    ("MaskedArrayNode", "numpy.ma.MaskedArray"),
    ("NdArrayNode", "numpy.float64"),
    ("NdArrayNode", "numpy.ndarray"),
    ("ObjectNode", "sklearn.calibration.CalibratedClassifierCV"),
    ("ObjectNode", "sklearn.calibration._CalibratedClassifier"),
    ("ObjectNode", "sklearn.calibration._SigmoidCalibration"),
    ("ObjectNode", "sklearn.compose._column_transformer.ColumnTransformer"),
    ("ObjectNode", "sklearn.impute._base.SimpleImputer"),
    ("ObjectNode", "sklearn.pipeline.Pipeline"),
    ("ObjectNode", "sklearn.preprocessing._data.StandardScaler"),
    ("ObjectNode", "sklearn.preprocessing._encoders.OneHotEncoder"),
    ("ObjectNode", "sklearn.preprocessing._function_transformer.FunctionTransformer"),
    ("ObjectNode", "sklearn.svm._classes.SVC"),
    ("ObjectNode", "svmtune.estimators.L2SVC"),
    ("ObjectNode", "svmtune.estimators.OvRSVC"),
    ("ObjectNode", "svmtune.estimators_lowrank.LowRankL2SVC"),
    ("ObjectNode", "svmtune.methods.base.Selection"),
    ("ObjectNode", "svmtune.preprocess.WeightedImputer"),
    ("ObjectNode", "svmtune.tuner.SVMTuner"),
    ("RandomStateNode", "numpy.random.mtrand.RandomState"),
    ("SliceNode", "builtins.slice"),
    ("SparseMatrixNode", "scipy.sparse._csr.csr_matrix"),
    ("TupleNode", "builtins.tuple"),
    ("TypeNode", "builtins.int"),
    ("TypeNode", "builtins.str"),
    ("TypeNode", "numpy.float64"),
    ("TypeNode", "numpy.int64"),
    ("TypeNode", "numpy.str_"),
)

#: Types a final L2-SVM (``L2SVC.solutions_``) held before it kept only its support rows and
#: coefficients (issue #63): a file holding them and nothing else outside
#: :data:`MODEL_TYPES` is refused with a message saying how to re-save it
_FORMER_TYPES = frozenset(
    {
        "svmtune._dual_solution.DualSolution (ObjectNode)",
        "svmtune._factor.ExtendedFactor (ObjectNode)",
    }
)

#: The declared uncompressed sizes of a skops file's members (and of a ``.npz`` member's own
#: members) may sum to at most this many times the file's size.  :func:`save_model` stores
#: members uncompressed (ratio <= 1, scipy compresses a sparse matrix's ``.npz`` about
#: 2-10 times); ``skops.io.dump(..., compression=ZIP_DEFLATED)`` of svmtune's models gives
#: 2-35 (``schema.json`` alone up to ~60).  A zip bomb declares far more.
MAX_UNPACKED_RATIO = 100
#: ``schema.json`` is parsed whole (as skops parses it): at most 256 MiB (the largest of the
#: models ``MODEL_TYPES`` is derived from holds 18 MB, from the history of a class-weight
#: search).
MAX_SCHEMA_BYTES = 256 * 2**20

#: ``schema.json`` parses (its text and the Python objects) into at most this many times
#: the model's unpacked size (all members of the archive), as :func:`_parse_schema` counts
#: it.  svmtune's own models count 2.6-3.7 times (59 models of every method and option,
#: 40 kB to 27 MB; ``tracemalloc`` measures 2.3-3.4 times ``schema.json`` alone); JSON crafted
#: for the parser (one-key objects, empty lists, long integers) takes 5-8 times.
MAX_PARSE_RATIO = 4
#: ... and at least this many bytes: a few hand-written nodes parse at hundreds of times
#: their size in fixed costs (a ``dict`` is 184 bytes), and the smallest model
#: :func:`save_model` writes holds some 40 kB of ``schema.json``
MIN_PARSE_BYTES = 2**20
#: an upper bound of a ``str`` object's bytes beside its characters (``sys.getsizeof("")`` is
#: 49 for an ASCII string, 74-76 for others: a ``\\u`` escape's 6 characters pay the rest)
_STR_BYTES = 49
#: an upper bound of a ``list``'s bytes beside its item pointers (``sys.getsizeof([])`` is 56,
#: plus up to 6 pointers of overallocation)
_LIST_BYTES = 56 + 6 * 8

#: an upper bound of the bytes a distinct key takes in ``json``'s memo and in the parse's
#: own set of keys (a dict entry of 24 bytes and a set entry of 16, in tables at least a
#: third full, plus their indices)
_KEY_BYTES = 150

_MODEL_TYPES = frozenset(MODEL_TYPES)
#: the loaders whose node reads an archive member named by its ``file`` key
_FILE_LOADERS = frozenset({"NdArrayNode", "SparseMatrixNode"})
_MAX_NPY_HEADER = 10_000  # numpy's own limit for files it reads without allow_pickle
_SKOPS_HINT = (
    "skops is needed for .skops model files (a dependency of svmtune): "
    "pip install --force-reinstall svmtune (or pip install skops)"
)
#: how joblib's files start: an uncompressed pickle (protocol >= 2), or a compressed one
_PICKLE_PREFIXES = (
    b"\x80",
    b"x\x01",
    b"x^",
    b"x\x9c",
    b"x\xda",
    b"\x1f\x8b",
    b"BZ",
    b"]\x00",
    b"\xfd7zXZ",
    b'\x04"M\x18',
)


def _skops_io():
    try:
        import skops.io as sio
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_SKOPS_HINT) from exc
    return sio


def is_skops_file(path: str | Path) -> bool:
    """Whether ``path`` is a skops file (a zip archive holding ``schema.json``)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return "schema.json" in zf.namelist()
    except (zipfile.BadZipFile, OSError):
        return False


def _damaged(path, why: str) -> DamagedModelError:
    return DamagedModelError(f"model file {path} is damaged or truncated: {why}")


def _refused(path, why: str) -> UntrustedModelError:
    return UntrustedModelError(
        f"{path} {why}; it was not loaded (a model saved by `svmtune select --out` or "
        "svmtune.save_model holds none)"
    )


@lru_cache(maxsize=1)
def _skops_protocol() -> int:
    """The skops protocol the installed skops writes (read from a file it writes)."""
    with zipfile.ZipFile(io.BytesIO(_skops_io().dumps([]))) as zf:
        return json.loads(zf.read("schema.json"))["protocol"]


def _check_sizes(zf: zipfile.ZipFile, size: int, path, what: str = "") -> None:
    """Refuse an archive whose declared member sizes sum past :data:`MAX_UNPACKED_RATIO`
    times its ``size`` (zipfile never reads a member past its declared size)."""
    declared = sum(info.file_size for info in zf.infolist())
    if declared > MAX_UNPACKED_RATIO * max(size, 1):
        raise _refused(
            path,
            f"{what}declares {declared} unpacked bytes in {size} ({declared / max(size, 1):.0f} "
            f"times, more than the {MAX_UNPACKED_RATIO} a model file can reach)",
        )


def _parse_schema(text: str, unpacked: int, path) -> Any:
    """``json.loads(text)`` within :data:`MAX_PARSE_RATIO` times ``unpacked`` bytes (the
    text included; at least :data:`MIN_PARSE_BYTES`).

    Strings and lists have no ``json.loads`` hook: their bytes are bounded from the text
    before parsing (:data:`_STR_BYTES` a ``"`` pair, :data:`_LIST_BYTES` a ``[``, a pointer a
    ``,``, four bytes a character of a string holding a ``\\u`` escape).  Objects and numbers
    are counted (``sys.getsizeof``) as the parser creates them, and the parse stops at the
    first past the budget, or the first object that is not a skops node (no ``__loader__``)
    nor a mapping of nodes (``protocol``: the root; ``start``/``stop``/``step``: a slice).
    """
    # the text is held during the parse
    budget = max(MAX_PARSE_RATIO * unpacked, MIN_PARSE_BYTES) - len(text)
    quotes = text.count('"') - text.count('\\"') + text.count('\\\\"')  # unescaped, or more
    keys = text.count('":') - text.count('\\":')  # a key ends '":', or fewer
    spent = (
        # characters, but not a newline and its indent (no string holds a newline): one
        # transient copy (re.sub runs in C, faster than a Python loop over the matches:
        # docs/notes/cost_measurements.md)
        len(re.sub(r"\n *", "", text))
        + max(quotes // 2 - keys, 0) * _STR_BYTES  # keys: counted once each, below
        + text.count("[") * _LIST_BYTES
        + text.count(",") * 9
    )
    if "\\u" in text:  # a string of a non-ASCII character takes up to 4 bytes a character
        strings = re.finditer(r'"(?:[^"\\]|\\.)*"', text)
        spent += 3 * sum(len(m[0]) for m in strings if "\\u" in m[0])
    seen: set[str] = set()

    def spend(obj, extra: int = 0):
        nonlocal spent
        spent += sys.getsizeof(obj) + extra
        if spent > budget:
            raise _refused(
                path,
                f"has a schema.json whose parse takes more than {MAX_PARSE_RATIO} times the "
                f"model's {unpacked} unpacked bytes (svmtune's own models stay under "
                f"{MAX_PARSE_RATIO})",
            )
        return obj

    def node(pairs: list) -> dict:
        nonlocal spent
        obj = dict(pairs)
        spent -= 9 * max(len(pairs) - 1, 0)  # the commas between its pairs hold no pointer
        for key in obj.keys() - seen:  # json memoizes keys: each new one is one more str
            seen.add(key)
            spend(key, _KEY_BYTES)
        if not (
            "__loader__" in obj
            or "protocol" in obj
            or obj.keys() <= {"start", "stop", "step"}
            or all(type(value) is dict for value in obj.values())
        ):
            raise _refused(path, f"has a schema.json object that is no skops node: {pairs[:3]}")
        return spend(obj)

    def constant(name: str):
        raise ValueError(f"{name} is not JSON")

    spend(None)
    return json.loads(
        text,
        object_pairs_hook=node,
        parse_int=lambda s: spend(int(s)),
        parse_float=lambda s: spend(float(s)),
        parse_constant=constant,
    )


def _read_schema(zf: zipfile.ZipFile, path) -> dict:
    """``schema.json``, within :data:`MAX_SCHEMA_BYTES`, parsed within :data:`MAX_PARSE_RATIO`
    times the model's unpacked size (:func:`_parse_schema`)."""
    try:
        info = zf.getinfo("schema.json")
    except KeyError:
        raise _damaged(path, "a zip archive without schema.json (not a skops file)") from None
    if info.file_size > MAX_SCHEMA_BYTES:
        raise _refused(
            path, f"has a schema.json of {info.file_size} bytes (at most {MAX_SCHEMA_BYTES})"
        )
    unpacked = sum(member.file_size for member in zf.infolist())
    try:
        text = zf.read(info).decode("ascii")  # skops writes json.dumps' ASCII
    except UnicodeDecodeError:
        raise _refused(path, "has a schema.json that is not ASCII (skops writes ASCII)") from None
    try:
        schema = _parse_schema(text, unpacked, path)
    except UntrustedModelError:  # a ValueError too: refused, not damaged
        raise
    except (ValueError, RecursionError) as exc:
        raise _damaged(path, f"schema.json is not JSON ({exc})") from None
    if not isinstance(schema, dict):
        raise _damaged(path, "schema.json holds no skops object")
    protocol = schema.get("protocol")
    if type(protocol) is not int or protocol != _skops_protocol():
        raise _refused(
            path,
            f"was written with skops protocol {protocol!r}, not {_skops_protocol()} (the one "
            "the installed skops writes, whose loaders MODEL_TYPES lists): load it with the "
            "skops that wrote it and save it again",
        )
    return schema


def _nodes(schema: dict):
    """Every skops node (a dict with ``__loader__``) anywhere in ``schema``: a superset of
    those skops builds (it builds nodes from some of these dicts only)."""
    stack: list[Any] = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "__loader__" in item:
                yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _check_types(schema: dict, path) -> tuple[set[str], dict[str, set]]:
    """The type names of ``schema``'s nodes, all in :data:`MODEL_TYPES`, and the archive
    members its nodes read, each with the ids of the objects reading it."""
    names: set[str] = set()
    bad: set[str] = set()
    reads: dict[str, set] = {}
    for node in _nodes(schema):
        loader, module, cls = node.get("__loader__"), node.get("__module__"), node.get("__class__")
        name = f"{module}.{cls}"
        if not isinstance(loader, str) or (loader, name) not in _MODEL_TYPES:
            bad.add(f"{name} ({loader})" if isinstance(loader, str) else name)
            continue
        names.add(name)
        if loader in _FILE_LOADERS and "file" in node:
            ident = node.get("__id__")  # skops shares only objects with an (int) id
            ident = ident if type(ident) is int and ident else object()
            reads.setdefault(str(node["file"]), set()).add(ident)
    if bad and bad <= _FORMER_TYPES:
        raise UntrustedModelError(
            f"{path} is a final L2-SVM saved by an earlier svmtune: it holds the solver's "
            "solutions (L2SVC.solutions_, the square factor of the support set), which "
            "models no longer keep, and it was not loaded; to keep it, load it with the "
            "svmtune that saved it (svmtune.load_model), `del model.estimator_.solutions_`, "
            "save it again (svmtune.save_model), or run the selection again"
        )
    if bad:
        shown = ", ".join(sorted(bad)[:5]) + (" ..." if len(bad) > 5 else "")
        raise _refused(path, f"names types an svmtune model never holds: {shown}")
    return names, reads


def _check_npy(fh, declared: int, member: str, path) -> None:
    """The ``.npy`` header of ``fh`` declares exactly the ``declared`` bytes of data after
    it, of a dtype without Python objects."""
    from numpy.lib import format as npy

    try:
        version = npy.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = npy.read_array_header_1_0(fh, max_header_size=_MAX_NPY_HEADER)
        else:
            shape, _, dtype = npy.read_array_header_2_0(fh, max_header_size=_MAX_NPY_HEADER)
    except (ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise _damaged(path, f"{member} is not a .npy array ({exc})") from None
    if dtype.hasobject:
        raise _refused(path, f"holds an array of Python objects ({member})")
    need = math.prod(int(d) for d in shape) * dtype.itemsize
    if need != declared - fh.tell():
        raise _damaged(
            path, f"{member} declares an array of {need} bytes but holds {declared - fh.tell()}"
        )


def _check_members(zf: zipfile.ZipFile, reads: dict[str, set], path) -> None:
    """Each member the nodes read exists, is read by one object, and holds the array its
    header declares (a ``.npz``: its own members, bounded as the archive's)."""
    for member, readers in reads.items():
        if len(readers) > 1:
            raise _refused(
                path,
                f"reads the member {member} for {len(readers)} objects (skops writes each "
                "array once): an archive that unpacks to many times its size",
            )
        try:
            info = zf.getinfo(member)
        except KeyError:
            raise _damaged(path, f"the archive lacks {member}") from None
        if member.endswith(".npz"):
            data = zf.read(info)
            with zipfile.ZipFile(io.BytesIO(data)) as inner:
                _check_sizes(inner, len(data), path, f"the member {member} ")
                for sub in inner.infolist():
                    with inner.open(sub) as fh:
                        _check_npy(fh, sub.file_size, f"{member}/{sub.filename}", path)
        else:
            with zf.open(info) as fh:
                _check_npy(fh, info.file_size, member, path)


def _load_skops(fh: BinaryIO, size: int, path):
    """The model in the skops archive open as ``fh``, after every check of this module."""
    sio = _skops_io()
    try:
        with zipfile.ZipFile(fh) as zf:
            _check_sizes(zf, size, path)
            schema = _read_schema(zf, path)
            names, reads = _check_types(schema, path)
            del schema
            _check_members(zf, reads, path)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise _damaged(path, str(exc) or type(exc).__name__) from None
    fh.seek(0)
    try:
        return sio.load(fh, trusted=sorted(names))
    except (
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
        KeyError,
        IndexError,
        ValueError,
        TypeError,
        AttributeError,
        RecursionError,
    ) as exc:
        raise _damaged(path, f"{type(exc).__name__}: {exc}") from None


def _without_routing_requests(model):
    """A copy of ``model`` without the metadata-routing requests of its fitted steps.

    ``set_fit_request`` stores a request that points back at its estimator (a cycle skops
    cannot write); it matters only for fitting with metadata routing, never for predicting.
    """
    from sklearn.base import BaseEstimator

    model = copy.deepcopy(model)
    seen: set[int] = set()

    def strip(obj: Any) -> None:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, BaseEstimator):
            vars(obj).pop("_metadata_request", None)
            for value in vars(obj).values():
                strip(value)
        elif isinstance(obj, (list, tuple)):
            for value in obj:
                strip(value)
        elif isinstance(obj, dict):
            for value in obj.values():
                strip(value)

    strip(model)
    return model


def _replace_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """Write ``path`` through ``write(temporary)`` to a new name in its directory, flushed to
    disk, then renamed over ``path``: ``path`` is the old file or the whole new one, never a
    part (the temporary keeps ``path``'s suffix, from which joblib picks its compression)."""
    tmp = path.with_name(f".{secrets.token_hex(6)}.tmp-{path.name}")
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:  # pragma: no cover - the directory went away
            pass
        raise


def save_model(model, path: str | Path) -> str:
    """Save a fitted model: skops for a ``.skops`` path, joblib otherwise.

    The file is written to a temporary name in the same directory and renamed over ``path``
    when complete, so a failed save (a full disk) leaves ``path`` as it was.

    Returns
    -------
    str
        ``"skops"`` or ``"joblib"``.

    Raises
    ------
    OSError
        The file cannot be written (``path`` is then unchanged).
    """
    path = Path(path)
    if path.suffix.lower() == ".skops":
        data = _skops_io().dumps(_without_routing_requests(model))

        def write(tmp: Path) -> None:
            with open(tmp, "xb") as fh:
                fh.write(data)

        _replace_atomically(path, write)
        return "skops"
    import joblib

    _replace_atomically(path, lambda tmp: joblib.dump(model, tmp))
    return "joblib"


def load_model(path: str | Path, *, trust_pickle: bool = False):
    """Load a model saved by :func:`save_model`.

    A skops file (recognised by its content, whatever its name) is loaded when it holds
    only :data:`MODEL_TYPES` within the bounds of this module (checked before skops reads
    it); a joblib/pickle file is unpickled only with ``trust_pickle=True``.

    Raises
    ------
    UntrustedModelError
        A skops file naming other types or past the bounds, or a pickle without
        ``trust_pickle``.
    DamagedModelError
        An empty, truncated or otherwise damaged file ("model file ... is damaged or
        truncated: ..."), or one in neither format.
    """
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        head = fh.read(8)
        if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):  # a zip archive: skops
            return _load_skops(fh, size, path)
        if size == 0:
            raise _damaged(path, "it is empty (0 bytes)")
        if not head.startswith(_PICKLE_PREFIXES):
            raise DamagedModelError(
                f"{path} is not a model file (not a model saved by `svmtune select --out`?): "
                f"neither a skops archive nor a joblib/pickle file, it starts with {head[:4]!r}"
            )
        if head.startswith(b"\x80"):  # an uncompressed pickle ends with its STOP opcode
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b".":
                raise _damaged(path, "the pickle stops before its end")
    if not trust_pickle:
        raise UntrustedModelError(
            f"{path} is a joblib/pickle file, and loading one can run any code it "
            "contains; if you trust where it came from, pass --trust-pickle (Python: "
            "trust_pickle=True), or save models with `svmtune select --out model.skops`"
        )
    import joblib

    try:
        return joblib.load(path)
    except (EOFError, pickle.UnpicklingError, zlib.error) as exc:
        raise _damaged(path, f"{type(exc).__name__}: {exc}") from None
