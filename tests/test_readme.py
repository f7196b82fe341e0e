"""The README's Python code blocks run as written (in a fresh namespace each); its set-up
gives the two commands and says how long the tests take."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)


def test_readme_has_python_blocks():
    assert BLOCKS, "README.md has no ```python block"


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_block_runs(code, capsys):
    exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})


def test_setup_gives_two_commands_and_says_how_long_the_tests_take():
    """The set-up section: the install-and-demo command and CI's test command (the one
    ``.ci/run`` runs), then how long that takes, so nobody stops it thinking it hangs."""
    text = README.read_text(encoding="utf-8")
    setup = re.search(r"^## Set-up\n(.*?)^## ", text, re.M | re.S).group(1)
    commands = re.findall(r"^```\n(.*?)\n```", setup, re.M | re.S)
    assert commands == [
        "pip install . && svmtune demo",
        'pip install ".[test]" && python -m pytest -n 2 -q',
    ]
    ci = (README.parent / ".ci" / "run").read_text()
    assert commands[1] in ci.splitlines()
    after = setup.split(commands[1], 1)[1]
    assert re.search(r"tests take about \d+ minutes on two cores", after)
