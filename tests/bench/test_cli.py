"""``svmtune bench`` option parsing (:mod:`svmtune.bench.cli`)."""

from __future__ import annotations

import pytest

from svmtune.bench.cli import _split_list
from svmtune.bench.suite import get_suite


def test_split_list_keeps_commas_inside_parentheses():
    assert _split_list(None) is None
    assert _split_list(" , ") is None
    assert _split_list("RBSVM, default") == ["RBSVM", "default"]
    assert _split_list("Span-rule (sigma, C),5-fold CV (sigma, C)") == [
        "Span-rule (sigma, C)",
        "5-fold CV (sigma, C)",
    ]


@pytest.mark.parametrize("suite", ["rbsvm-paper", "span-paper"])
def test_every_method_label_of_a_suite_can_be_selected_alone(suite):
    for m in get_suite(suite).methods:
        assert _split_list(m.label) == [m.label]
