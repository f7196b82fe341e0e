from __future__ import annotations

import json
import math

import numpy as np
import pytest

from svmtune.bench.checkpoint import Checkpoint

SPEC = {"experiment": "exp", "grid": (1.0, 2.0), "seed": 0}


def test_units_survive_a_reopen_exactly(tmp_path):
    path = tmp_path / "exp.checkpoint.jsonl"
    ck = Checkpoint(path, SPEC)
    value = {
        "z": np.float64(0.1),  # key order is kept (it becomes a table's column order)
        "a": np.arange(3),
        "nan": float("nan"),
        "inf": -np.inf,
        "flag": np.bool_(True),
        "n": np.int64(7),
        "text": "x",
    }
    got = ck.put(["task", 0], value)
    assert list(got) == list(value)
    again = Checkpoint(path, {"seed": 0, "grid": [1.0, 2.0], "experiment": "exp"})  # same spec
    assert len(again) == 1 and ["task", 0] in again and ("task", 0) in again
    back = again.get(["task", 0])
    assert back == got and list(back) == list(value)
    assert back["z"] == 0.1 and back["a"] == [0, 1, 2] and back["n"] == 7
    assert back["flag"] is True and math.isnan(back["nan"]) and back["inf"] == -math.inf
    assert again.get(["task", 1]) is None and again.get(["task", 1], "no") == "no"


def test_get_or_run_computes_a_unit_once_across_runs(tmp_path):
    path = tmp_path / "c.jsonl"
    calls = []

    def compute(x, *, scale):
        calls.append(x)
        return [x * scale]

    assert Checkpoint(path, SPEC).get_or_run("u", compute, 2, scale=3.0) == [6.0]
    assert Checkpoint(path, SPEC).get_or_run("u", compute, 2, scale=3.0) == [6.0]
    assert calls == [2]


def test_a_torn_last_line_is_dropped_and_does_not_spoil_the_next_unit(tmp_path):
    path = tmp_path / "c.jsonl"
    ck = Checkpoint(path, SPEC)
    ck.put("a", 1)
    ck.put("b", 2)
    text = path.read_text()
    path.write_text(text[:-5])  # a run stopped while writing unit "b"
    ck = Checkpoint(path, SPEC)
    assert ("a" in ck, "b" in ck) == (True, False)
    ck.put("c", 3)  # appended on a clean line, not glued to the torn one
    ck = Checkpoint(path, SPEC)
    assert (ck.get("a"), ck.get("b"), ck.get("c")) == (1, None, 3)
    assert all(json.loads(line) for line in path.read_text().splitlines())


def test_another_spec_starts_afresh(tmp_path):
    path = tmp_path / "c.jsonl"
    Checkpoint(path, SPEC).put("a", 1)
    ck = Checkpoint(path, {**SPEC, "seed": 1})
    assert len(ck) == 0 and "a" not in ck
    assert Checkpoint(path, SPEC).get("a") is None  # the old units were overwritten
    path.write_text("not json\n")  # not a checkpoint at all
    assert len(Checkpoint(path, SPEC)) == 0


def test_discard_removes_the_file(tmp_path):
    path = tmp_path / "c.jsonl"
    ck = Checkpoint(path, SPEC)
    ck.put("a", 1)
    ck.discard()
    assert not path.exists() and len(ck) == 0
    ck.discard()  # twice is fine
    assert not list(tmp_path.iterdir())  # no temporary file left either


def test_values_must_be_json_like(tmp_path):
    ck = Checkpoint(tmp_path / "c.jsonl", SPEC)
    with pytest.raises(TypeError, match="JSON-like"):
        ck.put("a", object())
    assert "a" not in ck and len(Checkpoint(tmp_path / "c.jsonl", SPEC)) == 0
