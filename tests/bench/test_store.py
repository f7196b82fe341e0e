"""The JSON-lines result store: atomic rows, torn-line repair, keys, concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
import os

import numpy as np
import pytest

from svmtune.bench.store import (
    NotAResultsFile,
    ResultStore,
    StoreBusy,
    cell_key,
    find_result_files,
    jsonable,
    latest_by_key,
    load_results,
    parse_time,
    read_rows,
)


def test_jsonable_converts_numpy_and_keys():
    obj = {
        1: np.float64(0.5),
        "a": np.arange(3),
        "b": (np.int64(2), np.bool_(True)),
        "c": float("nan"),
        "d": {np.int64(4): None},
    }
    out = jsonable(obj)
    assert out == {"1": 0.5, "a": [0, 1, 2], "b": [2, True], "c": None, "d": {"4": None}}
    json.dumps(out, allow_nan=False)


def test_cell_key_is_stable_and_order_independent():
    k1 = cell_key(suite="s", task="t", split=0, params={"a": 1, "b": 2})
    k2 = cell_key(params={"b": 2, "a": 1}, split=0, task="t", suite="s")
    assert k1 == k2 and len(k1) == 16
    assert cell_key(suite="s", task="t", split=1, params={"a": 1, "b": 2}) != k1
    # known value: the key must not depend on the process (no salted hash())
    assert cell_key(a=1) == "015abd7f5cc57a2d"


def test_append_and_read(tmp_path):
    with ResultStore(tmp_path / "s") as st:
        st.append({"key": "k1", "v": np.float32(1.5)})
        st.append({"key": "k2", "v": 2})
    rows = read_rows(tmp_path / "s" / "results.jsonl")
    assert rows == [{"key": "k1", "v": 1.5}, {"key": "k2", "v": 2}]
    with pytest.raises(ValueError, match="key"):
        with ResultStore(tmp_path / "s") as st:
            st.append({"v": 1})


def test_rows_reach_a_file_replaced_while_the_store_is_open(tmp_path):
    # git stash/checkout and many editors write a new file under the old name; a row must
    # go to the file now at the path, not to the unlinked one an old descriptor points to
    path = tmp_path / "s" / "results.jsonl"
    with ResultStore(tmp_path / "s") as st:
        st.append({"key": "k1"})
        tmp = path.with_name("results.tmp")
        tmp.write_bytes(path.read_bytes())
        os.replace(tmp, path)  # same content, new inode
        st.append({"key": "k2"})
        assert read_rows(path) == [{"key": "k1"}, {"key": "k2"}]
        path.unlink()  # removed altogether: the next row starts a new file
        st.append({"key": "k3"})
    assert read_rows(path) == [{"key": "k3"}]
    with pytest.raises(RuntimeError, match="outside"):
        st.append({"key": "k4"})


def test_torn_last_line_is_ignored_and_repaired(tmp_path):
    d = tmp_path / "s"
    with ResultStore(d) as st:
        st.append({"key": "k1", "status": "ok"})
        st.append({"key": "k2", "status": "ok"})
    path = d / "results.jsonl"
    with open(path, "ab") as fh:  # a writer killed in the middle of its row
        fh.write(b'{"key": "k3", "status": "o')
    assert [r["key"] for r in read_rows(path)] == ["k1", "k2"]
    with ResultStore(d) as st:  # reopening cuts the torn line before appending
        assert st.keys() == {"k1", "k2"}
        st.append({"key": "k3", "status": "ok"})
    assert path.read_bytes().count(b"\n") == 3
    assert [r["key"] for r in read_rows(path)] == ["k1", "k2", "k3"]


def test_torn_only_line(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    (d / "results.jsonl").write_bytes(b'{"key": "x"')
    assert read_rows(d / "results.jsonl") == []
    with ResultStore(d) as st:
        st.append({"key": "k1"})
    assert read_rows(d / "results.jsonl") == [{"key": "k1"}]


def test_corrupt_middle_line_warns(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text('{"key": "a"}\nnot json\n{"key": "b"}\n')
    with pytest.warns(RuntimeWarning, match="line 2"):
        rows = read_rows(p)
    assert [r["key"] for r in rows] == ["a", "b"]


def test_last_row_per_key_wins(tmp_path):
    rows = [{"key": "a", "v": 1}, {"key": "b", "v": 2}, {"key": "a", "v": 3}]
    assert latest_by_key(rows) == [{"key": "b", "v": 2}, {"key": "a", "v": 3}]
    with ResultStore(tmp_path) as st:
        for r in rows:
            st.append(r)
        assert st.keys(ok_only=True) == set()
        assert {r["key"]: r["v"] for r in st.rows()} == {"a": 3, "b": 2}


def test_concurrent_writers_share_the_store(tmp_path):
    """Two stores open on one directory append in turn; every row stays whole, and a torn
    line left by a killed writer is cut by whichever writer appends next."""
    with ResultStore(tmp_path) as a, ResultStore(tmp_path) as b:
        a.append({"key": "a1"})
        b.append({"key": "b1"})
        with open(a.path, "ab") as fh:  # a third writer killed mid-row
            fh.write(b'{"key": "dead", "sta')
        a.append({"key": "a2"})
        assert b.keys() == {"a1", "b1", "a2"}
    assert [r["key"] for r in read_rows(tmp_path / "results.jsonl")] == ["a1", "b1", "a2"]


def test_rows_from_follows_the_file(tmp_path):
    with ResultStore(tmp_path) as st:
        assert st.rows_from(0) == ([], 0)
        st.append({"key": "a"})
        rows, off = st.rows_from(0)
        assert [r["key"] for r in rows] == ["a"] and off == st.path.stat().st_size
        st.append({"key": "b"})
        with open(st.path, "ab") as fh:  # a row being written: not complete yet
            fh.write(b'{"key": "c"')
        rows, off2 = st.rows_from(off)
        assert [r["key"] for r in rows] == ["b"]  # each row once; the torn one left out
        with open(st.path, "ab") as fh:
            fh.write(b"}\n")
        assert [r["key"] for r in st.rows_from(off2)[0]] == ["c"]
        assert [r["key"] for r in st.rows_from(10**9)[0]] == ["a", "b", "c"]  # file was cut


def _append_many(directory, tag, n):
    """Append ``n`` rows, each in many short writes (a child process: ``os.write`` patched)."""
    real = os.write
    os.write = lambda fd, data: real(fd, bytes(data[:64]))
    with ResultStore(directory) as st:
        for i in range(n):
            st.append({"key": f"{tag}{i}", "pad": "x" * 600})


def test_writer_processes_never_interleave_rows(tmp_path):
    """Rows written in pieces (short writes) by two processes at once stay whole."""
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(tmp_path, t, 80)) for t in "pq"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    data = (tmp_path / "results.jsonl").read_bytes()
    rows = read_rows(tmp_path / "results.jsonl")  # would warn on a garbled line
    assert data.count(b"\n") == len(rows) == 160
    assert {r["key"] for r in rows} == {f"{t}{i}" for t in "pq" for i in range(80)}


def test_exclusive_lock_is_refused_while_held(tmp_path):
    with ResultStore(tmp_path) as a, ResultStore(tmp_path) as b:
        with a.exclusive("experiments"):
            with pytest.raises(StoreBusy, match="'experiments' lock"):
                with b.exclusive("experiments"):
                    pass
            with b.exclusive("other"):  # another name is another lock
                b.append({"key": "z"})
        with b.exclusive("experiments"):  # released on exit
            pass


def test_find_and_load_results(tmp_path):
    for name in ("a", "b"):
        with ResultStore(tmp_path / name) as st:
            st.append({"key": name, "suite": name})
    files = find_result_files(tmp_path)
    assert [f.parent.name for f in files] == ["a", "b"]
    assert {r["key"] for r in load_results(tmp_path)} == {"a", "b"}
    assert find_result_files(files[0]) == [files[0]]
    with pytest.raises(FileNotFoundError):
        find_result_files(tmp_path / "missing")


def test_a_file_that_is_not_jsonl_is_not_a_results_file(tmp_path):
    other = tmp_path / "data.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(NotAResultsFile, match="data.csv is not a results file"):
        find_result_files(other)
    with pytest.raises(NotAResultsFile):
        load_results(other)


def test_keys_since_a_time_count_only_rows_written_then_or_later(tmp_path):
    rows = [
        {"key": "old", "status": "ok", "timestamp": "2026-01-01T00:00:00+00:00"},
        {"key": "new", "status": "ok", "timestamp": "2026-01-02T00:00:00+01:00"},
        {"key": "bad", "status": "error: x", "timestamp": "2026-01-03T00:00:00+00:00"},
        {"key": "none", "status": "ok"},  # no time: older than any
    ]
    with ResultStore(tmp_path) as st:
        for r in rows:
            st.append(r)
        since = parse_time("2026-01-01T12:00:00")  # naive: UTC
        assert st.keys(since=since) == {"new", "bad"}
        assert st.keys(ok_only=True, since=since) == {"new"}
        assert st.keys() == {"old", "new", "bad", "none"}
        assert parse_time("2026-01-01T23:00:00+00:00") == parse_time("2026-01-02T00:00+01:00")
    with pytest.raises(ValueError, match="rerun_before must be an ISO 8601 time"):
        parse_time("soon", "rerun_before")


# ------------------------------------------------------------ damaged lines (#50)
_DAMAGED = b'{"key": "a"}\n\x80\x81 not utf-8\n{"key": "b", "v": 1\n[1, 2]\n{"key": "c"}\n'


def test_damaged_lines_are_named_by_file_line_and_cause(tmp_path):
    p = tmp_path / "results.jsonl"
    p.write_bytes(_DAMAGED)
    with pytest.warns(RuntimeWarning) as rec:
        rows = read_rows(p)
    assert [r["key"] for r in rows] == ["a", "c"]
    msgs = [str(w.message) for w in rec]
    assert len(msgs) == 3 and all(str(p) in m for m in msgs)
    assert "line 2: not UTF-8 text (byte 0x80" in msgs[0]
    assert "line 3: not JSON" in msgs[1] and "line 4: not a JSON object" in msgs[2]
    assert all("moves it to results.jsonl.damaged" in m for m in msgs)
    with pytest.warns(RuntimeWarning, match="line 2: not UTF-8"):
        assert [r["key"] for r in load_results(tmp_path)] == ["a", "c"]


def test_a_store_quarantines_damaged_lines_once(tmp_path):
    import warnings

    from svmtune.bench.store import quarantine_path

    p = tmp_path / "results.jsonl"
    p.write_bytes(_DAMAGED)
    with pytest.warns(RuntimeWarning, match=r"moved 3 damaged line\(s\) .* line 2 \(not UTF-8"):
        with ResultStore(tmp_path) as store:
            store.append({"key": "d"})
    assert p.read_bytes() == b'{"key": "a"}\n{"key": "c"}\n{"key": "d"}\n'
    assert quarantine_path(p).read_bytes() == b'\x80\x81 not utf-8\n{"key": "b", "v": 1\n[1, 2]\n'
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning again: the file is clean now
        with ResultStore(tmp_path) as store:
            assert [r["key"] for r in store.rows()] == ["a", "c", "d"]
        assert [r["key"] for r in read_rows(p)] == ["a", "c", "d"]


def test_report_on_a_damaged_results_file_is_no_traceback(tmp_path):
    from click.testing import CliRunner

    from svmtune.cli._bench import report

    p = tmp_path / "s" / "results.jsonl"
    p.parent.mkdir()
    p.write_bytes(b"\x80\n")
    r = CliRunner().invoke(report, [str(tmp_path), "--md", str(tmp_path / "r.md")])
    assert "Traceback" not in r.output and "codec can't decode" not in r.output
    assert not isinstance(r.exception, UnicodeDecodeError)


def test_exclusive_lock_names_its_holder_and_outlives_no_dead_process(tmp_path):
    """A lock held by another process is refused naming that process's pid; once the holder
    is killed (SIGKILL: no clean-up) the lock file left behind is no lock."""
    import signal
    import subprocess
    import sys

    ResultStore(tmp_path).__enter__().close()  # the directory and its files exist
    code = (
        "import sys\n"
        "from svmtune.bench.store import ResultStore\n"
        f"with ResultStore({str(tmp_path)!r}) as s, s.exclusive('run'):\n"
        "    print('locked', flush=True)\n"
        "    sys.stdin.read()\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    holder = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    try:
        assert holder.stdout.readline().strip() == b"locked"
        with ResultStore(tmp_path) as s:
            with pytest.raises(StoreBusy, match=f"process {holder.pid} holds the 'run' lock"):
                with s.exclusive("run", ": wait for it"):
                    pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(60)
    assert (tmp_path / ".run.lock").exists()  # left behind by the dead holder
    with ResultStore(tmp_path) as s, s.exclusive("run"):
        assert (tmp_path / ".run.lock").read_text().strip() == str(os.getpid())


def test_a_full_disk_names_the_results_file(tmp_path, monkeypatch):
    """``ENOSPC`` from ``write`` names no file; the store's error names its results file,
    and so does the checkpoint's."""
    import errno
    import types

    import svmtune.bench.checkpoint as checkpoint_module
    import svmtune.bench.store as store_module
    from svmtune.bench.checkpoint import Checkpoint

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    with ResultStore(tmp_path) as s:
        monkeypatch.setattr(
            store_module, "os", types.SimpleNamespace(**{**vars(os), "write": full})
        )
        with pytest.raises(OSError, match="No space left on device") as info:
            s.append({"key": "a", "status": "ok"})
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(s.path)
    assert str(s.path) in str(info.value)
    monkeypatch.undo()
    ck = Checkpoint(tmp_path / "x.checkpoint.jsonl", {"experiment": "x"})
    monkeypatch.setattr(
        checkpoint_module, "os", types.SimpleNamespace(**{**vars(os), "fsync": full})
    )
    with pytest.raises(OSError, match="No space left on device") as info:
        ck.put(1, 2.0)
    assert info.value.filename == str(ck.path)
