"""Model files as an attacker or a failing disk writes them: crafted skops payloads naming
callables (inside scikit-learn and elsewhere) under every loader that builds objects, archive
bombs (declared sizes, one array read by many objects), and damaged copies of a real model.
``load_model`` returns a model or raises ``UntrustedModelError``/``DamagedModelError`` naming
the file; nothing in a crafted file runs and no file allocates more than 4 times its unpacked
size."""

from __future__ import annotations

import functools
import tempfile
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from svmtune import SVMTuner
from svmtune.persist import MODEL_TYPES, DamagedModelError, UntrustedModelError, load_model

from .._model_files import (
    _node,
    archive,
    array_node,
    call_node,
    function_node,
    json_node,
    list_node,
    npy,
    tuple_node,
    with_attribute,
)
from ._harness import case, examples

pytest.importorskip("skops.io")

_REFUSED = (UntrustedModelError, DamagedModelError)
#: callables that act on the outside world when called with a path (the first three are the
#: ones a probe found trusted by a module-prefix allow-list)
_CALLABLES = [
    ("sklearn.utils._testing", "check_output"),
    ("sklearn.utils._testing", "assert_run_python_script_without_output"),
    ("sklearn.datasets._species_distributions", "remove"),
    ("sklearn.datasets._base", "makedirs"),
    ("sklearn.utils._testing", "TempMemmap"),
    ("svmtune.persist", "save_model"),
    ("numpy", "save"),
    ("os", "remove"),
    ("os", "system"),
    ("builtins", "open"),
    ("builtins", "eval"),
    ("shutil", "rmtree"),
]
_LISTED = sorted({name for _, name in MODEL_TYPES})
_LOADERS = ["ConstructorFromReduceNode", "FunctionNode", "TypeNode", "ObjectNode", "ReduceNode",
            "OperatorFuncNode", "PartialNode", "MethodNode", "DictNode", "TupleNode"]  # fmt: skip


@functools.lru_cache(maxsize=1)
def _model_file() -> bytes:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    with tempfile.TemporaryDirectory() as tmp:
        from svmtune.persist import save_model

        save_model(SVMTuner(method="default").fit(X, y), Path(tmp) / "m.skops")
        return (Path(tmp) / "m.skops").read_bytes()


def _payload(module: str, name: str, loader: str, target: str) -> dict:
    if loader == "ConstructorFromReduceNode":
        return call_node(module, name, target)
    if loader == "FunctionNode":
        return function_node(module, name)
    if loader == "ReduceNode":
        args = tuple_node(json_node(target))
        return _node(loader, module, name, content=json_node(None),
                     __reduce__={"args": args, "constructor": {}})  # fmt: skip
    if loader == "PartialNode":
        content = {"func": function_node(module, name), "args": tuple_node(json_node(target)),
                   "kwds": json_node({}), "namespace": json_node(None)}  # fmt: skip
        return _node(loader, "functools", "partial", content=content)
    return _node(loader, module, name, content=tuple_node(json_node(target)))


@examples(ci=30, long=2000)
@given(
    target=st.sampled_from(_CALLABLES + [tuple(n.rsplit(".", 1)) for n in _LISTED]),
    loader=st.sampled_from(_LOADERS),
    where=st.sampled_from(["alone", "in_a_model", "in_a_list"]),
)
def test_crafted_payload_refused_and_nothing_runs(target, loader, where):
    module, name = target
    if (loader, f"{module}.{name}") in set(MODEL_TYPES):
        return  # a listed pair is what models hold
    with tempfile.TemporaryDirectory() as tmp:
        victim = Path(tmp) / "victim"
        victim.write_text("keep me")
        node = _payload(module, name, loader, str(victim))
        if where == "in_a_list":
            node = list_node(json_node(1), node)
        if where == "alone":
            data = archive(node)
        else:
            data = with_attribute(_model_file(), "x_", node)
        path = Path(tmp) / "crafted.skops"
        path.write_bytes(data)
        with case("model_files", [str(path)], expected=_REFUSED):
            load_model(path)
            raise AssertionError("a crafted file loaded")
        assert victim.read_text() == "keep me"
        assert sorted(p.name for p in Path(tmp).iterdir()) == ["crafted.skops", "victim"]


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@examples(ci=12, long=500)
@given(
    references=st.integers(1, 200),
    shared_id=st.booleans(),
    mib=st.integers(1, 3),
    compressed=st.booleans(),
    zeros=st.booleans(),
)
def test_archive_bomb_refused_or_within_4x(references, shared_id, mib, compressed, zeros):
    n = mib * 2**20 // 8
    array = np.zeros(n) if zeros else np.random.default_rng(references).random(n)
    member = npy(array)
    root = list_node(*[array_node("a.npy", 7 if shared_id else None) for _ in range(references)])
    compression = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    data = archive(root, {"a.npy": member}, compression=compression)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bomb.skops"
        path.write_bytes(data)
        unpacked = sum(i.file_size for i in zipfile.ZipFile(path).infolist())
        loaded = []

        def load():
            with case("model_files", [str(path)], expected=_REFUSED):
                loaded.append(load_model(path))

        assert _peak(load) <= 4 * unpacked
        if loaded:  # only an array read once, from an archive not packed 100 times over
            assert len(loaded[0]) == references
            assert shared_id or references == 1


_MUTATIONS = ["truncate", "cut_range", "flip", "zero_tail"]


@examples(ci=25, long=2000)
@given(kind=st.sampled_from(_MUTATIONS), data=st.data())
def test_damaged_model_file_loads_or_is_named(kind, data):
    content = bytearray(_model_file())
    n = len(content)
    at = data.draw(st.integers(0, n - 1))
    if kind == "truncate":
        content = content[:at]
    elif kind == "cut_range":
        content = content[:at] + content[at + data.draw(st.integers(1, 4096)) :]
    elif kind == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            content[data.draw(st.integers(0, n - 1))] ^= data.draw(st.integers(1, 255))
    else:
        content[at:] = bytes(n - at)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.skops"
        path.write_bytes(bytes(content))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with case("model_files", [str(path)], expected=_REFUSED):
                model = load_model(path)
                assert isinstance(model, SVMTuner)
