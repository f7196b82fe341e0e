"""Readers and sparse shapes at their bounds: a small input that asks for a huge allocation
is refused with a message naming the limit (or the line), without a traceback, and the
process stays small.

All cases run in one child process (one interpreter start for the module) under an
address-space limit, so that an unbounded reader fails the test instead of exhausting the
machine; after each case the child reports its peak resident memory
(``resource.getrusage(...).ru_maxrss``), which must stay under :data:`PEAK_BYTES`: the
bytes a case allocates are counted, not its seconds.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from svmtune.datasets.loaders import MAX_CSV_COLUMNS
from svmtune.preprocess import MAX_SPARSE_FEATURES

#: the acceptance bound: no small input drives the process past this
PEAK_BYTES = 1 << 30
#: the child's address space (a reader that ignores its bounds hits it and fails the case)
ADDRESS_SPACE = 6 << 30

_CHILD = textwrap.dedent(
    """
    import json, resource, sys, traceback, warnings
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import numpy as np, scipy.sparse as sp
    from click.testing import CliRunner
    from svmtune import SVMTuner
    from svmtune.cli import main
    from svmtune.datasets import load_file

    def cli(*args):
        r = CliRunner().invoke(main, list(args))
        if r.exception is not None and not isinstance(r.exception, SystemExit):
            raise r.exception
        return r.exit_code, r.output

    def wide_csr(d):
        return sp.csr_matrix((np.ones(4), [0, 1, d - 1, 0], [0, 1, 2, 3, 4]), shape=(4, d))

    cases = {cases}
    for name, code in cases.items():
        out = {{"name": name}}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out["result"] = repr(eval(code))[:400]
        except BaseException as exc:
            out["error"] = type(exc).__name__
            out["message"] = str(exc)[:600]
            out["traceback"] = traceback.format_exc()[-1500:]
        out["peak"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(json.dumps(out), flush=True)
    """
)


def _files(tmp: Path) -> dict[str, str]:
    """The inputs, each a few bytes to a few hundred KiB, and the call that reads it."""
    huge = tmp / "huge_index.svm"
    huge.write_text("1 1:0.5 2000000000:1\n0 1:0.25 2:1\n1 2:0.5\n0 1:1\n" * 3)
    past = tmp / "past_int64.svm"
    past.write_text("1 99999999999999999999:1\n0 1:2\n1 1:3\n0 1:1\n")
    # one more field on the first line than a CSV may have columns
    wide = tmp / "wide_first_line.csv"
    wide.write_text((",".join("1" for _ in range(MAX_CSV_COLUMNS + 1)) + "\n") * 2)
    header = tmp / "header_only.csv"
    header.write_text(",".join(f"c{j}" for j in range(MAX_CSV_COLUMNS + 1)) + "\n")
    # 96 MiB of text packed into about 100 KB (deflate's ratio is about 1000 to 1)
    bomb = tmp / "bomb.csv.gz"
    with gzip.open(bomb, "wb", compresslevel=6) as fh:
        fh.write(b"a,b,label\n")
        block = b"0,0,0\n0,0,1\n" * (1 << 16)
        for _ in range(96 * 2**20 // len(block)):
            fh.write(block)
    calls = {
        "svmlight huge index, load_file": f"load_file({str(huge)!r})",
        "svmlight huge index, select (sparse path)": (
            f"cli('select', {str(huge)!r}, '--method', 'grid')"
        ),
        "svmlight huge index, select auto": f"cli('select', {str(huge)!r})",
        "svmlight index past int64, load_file": f"load_file({str(past)!r})",
        "svmlight index past int64, select": f"cli('select', {str(past)!r}, '--method', 'grid')",
        "csv wide first line": f"load_file({str(wide)!r})",
        "csv wide first line, select": f"cli('select', {str(wide)!r})",
        "csv header only, wide": f"load_file({str(header)!r})",
        "gzip bomb, select": f"cli('select', {str(bomb)!r})",
        "sparse X of 2^31+1 columns": (
            "SVMTuner(method='default').fit(wide_csr(2**31 + 1), [0, 1, 0, 1])"
        ),
        "sparse X past the column bound, auto": (
            f"SVMTuner(method='auto').fit(wide_csr({MAX_SPARSE_FEATURES + 1}), [0, 1, 0, 1])"
        ),
    }
    return calls


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, dict]:
    calls = _files(tmp_path_factory.mktemp("bounds"))
    code = _CHILD.format(limit=ADDRESS_SPACE, cases=repr(calls))
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    found = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            found[entry["name"]] = entry
    assert found, proc.stderr[-3000:]
    return found


#: each case, and what its refusal must name
EXPECTED = {
    "svmlight huge index, load_file": ("line 1", "2000000000"),
    "svmlight huge index, select (sparse path)": ("line 1", "2000000000"),
    "svmlight huge index, select auto": ("line 1", "2000000000"),
    "svmlight index past int64, load_file": ("line 1", "99999999999999999999"),
    "svmlight index past int64, select": ("line 1", "99999999999999999999"),
    "csv wide first line": ("line 1", f"{MAX_CSV_COLUMNS:,}"),
    "csv wide first line, select": ("line 1", f"{MAX_CSV_COLUMNS:,}"),
    "csv header only, wide": ("line 1", f"{MAX_CSV_COLUMNS:,}"),
    "gzip bomb, select": ("64 MiB of text", "decompress it yourself"),
    "sparse X of 2^31+1 columns": (f"{2**31 + 1:,}", f"{MAX_SPARSE_FEATURES:,}"),
    "sparse X past the column bound, auto": (
        f"{MAX_SPARSE_FEATURES + 1:,}",
        f"{MAX_SPARSE_FEATURES:,}",
    ),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_an_input_past_a_bound_is_refused_clearly_and_small(outcomes, name):
    out = outcomes.get(name)
    assert out is not None, f"the child process died before case {name!r}"
    if out.get("result", "").startswith("(1,"):  # a CLI command: exit status 1, its message
        message = out["result"]
    else:
        assert out.get("error") in ("DataFileError", "ValueError"), out
        message = out["message"]
    assert "Traceback" not in message
    for part in EXPECTED[name]:
        assert part in message, (part, message)
    assert out["peak"] < PEAK_BYTES, f"{name}: peak {out['peak'] / 2**20:.0f} MiB"
