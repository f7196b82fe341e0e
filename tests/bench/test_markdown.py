"""Markdown tables of the suites' experiment files (svmtune.bench.markdown)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from svmtune.bench.markdown import format_cell, markdown_table


def test_cells_keep_whole_numbers_in_full():
    assert format_cell(11906) == "11906"
    assert format_cell(np.int64(16384)) == "16384"
    assert format_cell(11906.0) == "11906"  # an integer column with a gap is read as float
    assert format_cell(0.123456) == "0.1235"
    assert format_cell(74412.5) == "7.441e+04"
    assert format_cell(float("inf")) == "inf"
    assert format_cell(np.nan) == format_cell(None) == ""
    assert format_cell(np.True_) == "True" and format_cell("not run") == "not run"


def test_table_rows_follow_the_frame():
    df = pd.DataFrame({"task": ["a", "b"], "n_train": [11906.0, np.nan], "time": [0.25, np.nan]})
    assert markdown_table(df).splitlines() == [
        "| task | n_train | time |",
        "|---|---|---|",
        "| a | 11906 | 0.25 |",
        "| b |  |  |",
    ]
