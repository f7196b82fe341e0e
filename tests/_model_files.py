"""Hand-written skops archives, as an attacker writes them: ``schema.json`` built node by node
(the layout of skops' own files, see ``skops/io/_general.py``), members added at will."""

from __future__ import annotations

import io
import itertools
import json
import zipfile

_ids = itertools.count(10_000)


def _node(loader: str, module: str, cls: str, **rest) -> dict:
    return {"__class__": cls, "__module__": module, "__loader__": loader, **rest,
            "__id__": next(_ids)}  # fmt: skip


def json_node(value) -> dict:
    return _node("JsonNode", "builtins", "str", content=json.dumps(value), is_json=True)


def tuple_node(*items: dict) -> dict:
    return _node("TupleNode", "builtins", "tuple", content=list(items))


def call_node(module: str, name: str, *args) -> dict:
    """``module.name(*args)`` when skops constructs it (its ConstructorFromReduceNode)."""
    return _node(
        "ConstructorFromReduceNode", module, name, content=tuple_node(*map(json_node, args))
    )


def function_node(module: str, name: str) -> dict:
    """The function ``module.name`` itself, as an attribute value."""
    return _node("FunctionNode", module, name)


def array_node(member: str, ident: int | None = None) -> dict:
    """An array read from the archive's ``member``; nodes of one ``ident`` are one object."""
    node = _node("NdArrayNode", "numpy", "ndarray", type="numpy", file=member)
    if ident is not None:
        node["__id__"] = ident
    return node


def list_node(*items: dict) -> dict:
    return _node("ListNode", "builtins", "list", content=list(items))


def archive(
    root: dict,
    members: dict[str, bytes] | None = None,
    *,
    compression: int = zipfile.ZIP_STORED,
    indent: int | None = 2,
    protocol: int | None = None,
) -> bytes:
    """A skops archive of the node ``root`` and the extra ``members``."""
    if protocol is None:
        import skops.io as sio

        with zipfile.ZipFile(io.BytesIO(sio.dumps([]))) as zf:
            protocol = json.loads(zf.read("schema.json"))["protocol"]
    schema = dict(root, protocol=protocol, _skops_version="0.16.0")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as zf:
        for name, data in (members or {}).items():
            zf.writestr(name, data)
        zf.writestr("schema.json", json.dumps(schema, indent=indent))
    return buffer.getvalue()


def schema_of(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return json.loads(zf.read("schema.json"))


def with_attribute(model_file: bytes, name: str, node: dict) -> bytes:
    """The skops file ``model_file`` of a fitted estimator, with one more attribute."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(model_file)) as src, zipfile.ZipFile(buffer, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "schema.json":
                schema = json.loads(data)
                schema["content"]["content"][name] = node
                data = json.dumps(schema, indent=2).encode()
            dst.writestr(info.filename, data)
    return buffer.getvalue()


def npy(array) -> bytes:
    import numpy as np

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()
