"""The command line with generated files and options: ``svmtune select`` succeeds, or
exits with a one-line ``Error:`` (no traceback); ``svmtune report`` on damaged result
files never fails with a traceback."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from svmtune.cli import main

from ._harness import case, examples
from ._strategies import RAW_BYTES, csv_texts, datasets

METHODS = ["default", "ld_c1", "ss", "grid", "rbsvm", "span_rule", "halving"]
PARAMS = st.sampled_from(
    [
        "max_iter=1e999",
        "max_iter=3",
        "rescale=false",
        "rescale=yes",
        "n_splits=2",
        "n_splits=inf",
        "log2_C=(-1,1,1)",
        "log2_C=(-1,1",
        "log2_sigma=(0,1,1)",
        "min_resources=2",
        "min_resources=True",
        "bogus=1",
        "x",
        "=1",
        "n_components=nan",
        "kernels='all'",
    ]
)


def _assert_clean_exit(result) -> None:
    assert "Traceback" not in result.output, result.output[-2000:]
    if result.exit_code == 0:
        return
    assert result.exit_code in (1, 2), (result.exit_code, result.output[-2000:])
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Error" in result.output, result.output[-2000:]


class _CliError(ValueError):
    """A command-line failure that is not a clean one-line error."""


def _invoke(args: list[str]):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = CliRunner().invoke(main, args, env={"COLUMNS": "200"})
    try:
        _assert_clean_exit(result)
    except AssertionError as exc:
        raise AssertionError(f"svmtune {' '.join(args)}: {exc}") from None
    return result


@pytest.mark.parametrize("method", METHODS)
@examples(ci=4, long=120)
@given(data=st.data())
def test_select_succeeds_or_errs_in_one_line(method, data):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / data.draw(st.sampled_from(["d.csv", "d.txt", "d.svm"]))
        if data.draw(st.booleans()):
            X, y, _ = data.draw(datasets(max_n=20))
            X = np.asarray(X, dtype=float).reshape(len(y), -1)
            pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])]).assign(label=y).to_csv(
                path, index=False
            )
        elif data.draw(st.booleans()):
            path.write_text(data.draw(csv_texts()), encoding="utf-8")
        else:
            path.write_bytes(data.draw(RAW_BYTES))
        args = ["select", str(path), "--method", method]
        for p in data.draw(st.lists(PARAMS, max_size=2, unique=True)):
            args += ["--param", p]
        if method in ("grid", "halving", "span_rule") and not any("log2" in a for a in args):
            args += ["--param", "log2_sigma=(0,1,1)", "--param", "log2_C=(-1,1,1)"]
        if data.draw(st.booleans()):
            args.append("--json")
        with case("cli", ["select"], expected=()):
            _invoke(args)


@examples(ci=15, long=600)
@given(lines=st.lists(st.one_of(RAW_BYTES, st.just(b'{"key": "a", "status": "ok"}')), max_size=6))
def test_report_on_damaged_results_files(lines):
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "suite"
        store.mkdir()
        (store / "results.jsonl").write_bytes(b"\n".join(lines))
        with case("cli", ["report"], expected=()):
            _invoke(["report", str(Path(tmp)), "--md", str(Path(tmp) / "r.md")])
