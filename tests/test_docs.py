"""The API reference lists every public name of ``svmtune``.

The reference's source is generated from the packages' ``__all__`` by
``docs/_scripts/gen_api.py`` (run by ``docs/conf.py`` before every build); this test runs the
generator into a temporary folder and checks that each name of ``svmtune.__all__`` (and of
each documented subpackage's ``__all__``) appears in it, so the reference follows the code.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import svmtune

GEN_API = Path(__file__).resolve().parents[1] / "docs" / "_scripts" / "gen_api.py"


@pytest.fixture(scope="module")
def api_source(tmp_path_factory) -> str:
    spec = importlib.util.spec_from_file_location("gen_api", GEN_API)
    gen_api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_api)
    path = gen_api.write(tmp_path_factory.mktemp("api"))
    return path.read_text(encoding="utf-8")


def _listed(source: str, package: str) -> set[str]:
    """Names listed under ``.. currentmodule:: package`` (autosummary rows or py:data)."""
    names, current = set(), None
    for line in source.splitlines():
        m = re.match(r"\.\. currentmodule:: (\S+)", line)
        if m:
            current = m.group(1)
            continue
        if current != package:
            continue
        m = re.match(r"\.\. py:data:: (\S+)", line) or re.match(r"   ([A-Za-z_]\w*)$", line)
        if m:
            names.add(m.group(1))
    return names


def test_every_public_name_of_svmtune_is_in_the_api_reference(api_source):
    missing = set(svmtune.__all__) - _listed(api_source, "svmtune")
    assert not missing, f"not in the generated API reference: {sorted(missing)}"


def test_every_subpackage_all_is_in_the_api_reference(api_source):
    spec = importlib.util.spec_from_file_location("gen_api2", GEN_API)
    gen_api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_api)
    for package, names in gen_api.public_packages():
        missing = set(names) - _listed(api_source, package)
        assert not missing, f"{package}: not in the API reference: {sorted(missing)}"


def test_benchmark_snippets_and_method_pages_are_generated():
    """The measured tables the pages include are found in ``benchmarks/`` (a renamed heading
    or a missing file fails here before it fails the docs build), and every registered method
    has its reference snippet."""
    path = GEN_API.parent / "gen_snippets.py"
    spec = importlib.util.spec_from_file_location("gen_snippets", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    snippets = gen.snippets()
    assert all(text.strip() for text in snippets.values())
    assert "| | auto | grid |" in snippets["auto_eval_summary"]
    methods = gen.method_snippets()
    assert set(methods) == {f"method_{name}" for name in svmtune.available_methods()}


def _resolve(dotted: str) -> bool:
    """Whether ``svmtune.a.b.c`` names a module, or an attribute reached from one."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        try:
            for attr in parts[k:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def test_every_svmtune_name_the_pages_mention_exists():
    """The pages name functions in plain text (equation tables, notes): each
    ``svmtune.x.y`` they mention still exists, so a moved function fails here, not in a
    reader's hands."""
    root = Path(__file__).resolve().parents[1]
    pages = [root / "README.md"] + [
        p for p in (root / "docs").rglob("*.md") if not {"_build", "_generated"} & set(p.parts)
    ]
    missing = sorted(
        f"{p.relative_to(root)}: {name}"
        for p in pages
        for name in set(re.findall(r"\bsvmtune(?:\.[A-Za-z_]\w*)+", p.read_text()))
        if not _resolve(name)
    )
    assert not missing, "names that no longer exist:\n" + "\n".join(missing)


CHECK_LINKS = GEN_API.parent / "check_links.py"
BUILD = GEN_API.parents[1] / "build.sh"


def _check_links_module():
    spec = importlib.util.spec_from_file_location("check_links", CHECK_LINKS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_build_checks_internal_anchors_and_roles(tmp_path):
    """The docs build runs a check that every internal link's anchor exists and that no
    role is left as text (the two faults Sphinx's -W lets through), and the check finds
    them: a "[docs]" link of the highlighted source to a page without the anchor, and a
    ``:meth:`` rendered as a heading."""
    assert "check_links.py docs/_build/html" in BUILD.read_text()
    check = _check_links_module()
    (tmp_path / "methods").mkdir()
    (tmp_path / "_modules").mkdir()
    (tmp_path / "methods" / "auto.html").write_text(
        '<h1 id="auto">Auto</h1><dl><dt id="svmtune.methods.Auto">Auto</dt></dl>'
    )
    (tmp_path / "store.html").write_text("<p>ok <code>:meth:`x`</code></p>")
    (tmp_path / "_modules" / "auto.html").write_text(
        '<a class="viewcode-back" href="../methods/auto.html#svmtune.methods.Auto">[docs]</a>'
        "<pre>:meth:`in source code`</pre>"
    )
    assert check.check_site(tmp_path) == []
    (tmp_path / "_modules" / "auto.html").write_text(
        '<a href="../methods/auto.html#svmtune.methods.auto.Auto">[docs]</a>'
        '<a href="../methods/gone.html">x</a>'
    )
    (tmp_path / "store.html").write_text("<h2>:meth:`append` takes an exclusive lock</h2>")
    faults = check.check_site(tmp_path)
    assert len(faults) == 3, faults
    assert any("missing anchor ../methods/auto.html#svmtune.methods.auto.Auto" in f for f in faults)
    assert any("missing page ../methods/gone.html" in f for f in faults)
    assert any("store.html: a role left as text" in f for f in faults)


def test_the_beyond_one_machine_example_runs_as_written():
    """The example of ``docs/user_guide/beyond_one_machine.md`` -- ``auto`` on a dask array
    under a ``LocalCluster`` -- run as the page shows it: a fitted tuner, lazy predictions."""
    pytest.importorskip("dask.distributed")
    import dask.array as da

    page = GEN_API.parents[1] / "user_guide" / "beyond_one_machine.md"
    text = page.read_text(encoding="utf-8").split("## An example", 1)[1]
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    scope: dict = {}
    exec(compile(code, str(page), "exec"), scope)  # noqa: S102 - the page's own code
    tuner = scope["tuner"]
    assert tuner.final_model_ in ("l1", "l2", "lowrank")
    assert "dask array that fits in memory" in tuner.selection_.info["final_rule"]
    assert isinstance(scope["labels"], da.Array) and scope["accuracy"] > 0.8
