"""Sphinx configuration of the svmtune documentation.

Tooling, as in scikit-learn-contrib's project template: the docstrings are already in
numpydoc style (``numpydoc``), the examples gallery is made of scripts that
``sphinx-gallery`` executes on every build (so every figure and number in it comes from the
code as it is), and ``pydata-sphinx-theme`` is the theme of scikit-learn and its ecosystem.
Pages are Markdown (MyST, ``myst-parser``) except the generated API reference (reST).

Build with warnings as errors: ``bash docs/build.sh`` (or
``sphinx-build -W --keep-going -b html docs docs/_build/html``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(DOCS / "_scripts"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import gen_api  # noqa: E402
import gen_snippets  # noqa: E402

import svmtune  # noqa: E402

project = "svmtune"
author = "the svmtune developers"
copyright = "the svmtune developers, BSD-3-Clause"
release = svmtune.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # a copy of MathJax served with the site, so that the notes' equations render without
    # a network connection (package sphinx-mathjax-offline)
    "sphinx-mathjax-offline",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "ARCHITECTURE.md",
    "**/README.md",
    "_generated/*.md",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.json",
]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]

# --- generated sources: the API reference from __all__, tables from benchmarks/*.md -------
gen_api.write(DOCS / "api")
gen_snippets.write(DOCS / "_generated")

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()

import re  # noqa: E402

#: tracker references in docstrings are not something a reader of the site can open
_ISSUE = re.compile(r"\s*\((?:[^()]*?\s)?issue #\d+[^()]*\)|\bissue #\d+'s\s+|\s*issue #\d+")


def _strip_issue_refs(app, what, name, obj, options, lines):
    lines[:] = [_ISSUE.sub("", line) for line in lines]


def _skip_foreign(app, what, name, obj, skip, options):
    """Leave out members scikit-learn's base classes add (get_params, set_*_request, ...):
    their docstrings belong to scikit-learn's site."""
    module = getattr(obj, "__module__", "") or ""
    if module.startswith("sklearn") or (name.startswith("set_") and name.endswith("_request")):
        return True
    return skip


def _viewcode_links_to_anchors(app, env):
    """Point every "[docs]" link of the highlighted source at a page that has its anchor.

    ``sphinx.ext.viewcode`` keeps one anchor prefix per module (the first public name it
    met, e.g. ``svmtune.Selection``) and the last page that showed the object (the method
    pages show each selector's docstring with ``:no-index:``, the API reference lists some
    objects under two public names): the link then names a page without that anchor.  Each
    link is set to the page where the Python domain indexed that anchor, and dropped where
    none did (``docs/_scripts/check_links.py`` checks the result)."""
    objects = env.get_domain("py").objects
    modules = getattr(env, "_viewcode_modules", {})
    for modname, entry in list(modules.items()):
        if not entry:
            continue
        code, tags, used, refname = entry
        # the public namespace under which most of the module's shown names are indexed
        # (viewcode keeps the first one it met, e.g. ``svmtune`` for svmtune.methods.base
        # through ``svmtune.available_methods``, where Selection is not indexed)
        counts: dict[str, int] = {}
        for name in used:
            for prefix in {full[: -len(name) - 1] for full in objects if full.endswith("." + name)}:
                counts[prefix] = counts.get(prefix, 0) + 1
        if counts:
            refname = max(sorted(counts), key=lambda p: (counts[p], p == refname))
            modules[modname] = (code, tags, used, refname)
        for name in list(used):
            obj = objects.get(f"{refname}.{name}")
            if obj is None or obj.node_id != f"{refname}.{name}":
                del used[name]
            else:
                used[name] = obj.docname


def setup(app):
    app.connect("autodoc-process-docstring", _strip_issue_refs)
    app.connect("autodoc-skip-member", _skip_foreign)
    app.connect("env-updated", _viewcode_links_to_anchors)


# --- examples gallery --------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "image_scrapers": ("matplotlib",),
    "show_memory": False,
    "doc_module": ("svmtune",),
    "backreferences_dir": "api/backreferences",
    "reference_url": {"svmtune": None},
}

# --- theme -------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "svmtune"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "header_links_before_dropdown": 7,
    # the method pages' equation tables need the width more than an "on this page" column
    "secondary_sidebar_items": {
        "**": ["page-toc"],
        **{
            f"{p.parent.name}/{p.stem}": []
            for d in ("methods", "notes", "user_guide")
            for p in (DOCS / d).glob("*.md")
        },
    },
}
# single pages without sub-pages need no section navigation
html_sidebars = {"index": [], "getting_started": [], "choosing": [], "benchmarks": []}
html_show_sourcelink = False
