"""Every registered method's options, each given generated values: the selector is built,
or a ``ValueError``/``TypeError`` names the option."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svmtune.methods.base import available_methods, get_selector, method_options

from ._harness import case, examples
from ._strategies import ODD_VALUES, SMALL_VALUES


@pytest.mark.parametrize("method", available_methods())
@examples(ci=15, long=400)
@given(data=st.data())
def test_options_are_taken_or_named(method, data):
    options = method_options(method)
    if not options:
        params = data.draw(st.dictionaries(st.sampled_from(["C", "x"]), ODD_VALUES, max_size=1))
    else:
        keys = st.sampled_from(options)
        params = data.draw(
            st.dictionaries(keys, st.one_of(ODD_VALUES, SMALL_VALUES), min_size=1, max_size=3)
        )
    with case("options", [*params, "method_params"]):
        selector = get_selector(method, params)
        assert selector.name == method
