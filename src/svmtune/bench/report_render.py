"""Renderers of a report's sections: markdown (figures copied beside it) and one
self-contained HTML page."""

from __future__ import annotations

import base64
import html as htmlmod
import shutil
from collections.abc import Sequence
from pathlib import Path

from svmtune.bench.report_model import Section, _slug

__all__ = ["render_markdown", "render_html"]


def _md_cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def render_markdown(sections: Sequence[Section], header: str, md_path: Path) -> str:
    """Markdown text; figures are copied to ``<md stem>_files/`` and linked relatively."""
    out = ["# svmtune benchmark report", "", header, ""]
    assets = md_path.parent / f"{md_path.stem}_files"
    if any(s.figures or s.files for s in sections):
        if assets.exists():
            shutil.rmtree(assets)
        assets.mkdir(parents=True)
    for sec in sections:
        out += [f"## {sec.title}", ""]
        for t in sec.text:
            out += [t, ""]
        for tab in sec.tables:
            out += [f"### {tab.title}", ""]
            out.append("| " + " | ".join(_md_cell(c) for c in tab.columns) + " |")
            out.append("|" + "---|" * len(tab.columns))
            for r in tab.rows:
                out.append("| " + " | ".join(_md_cell(c) for c in r) + " |")
            out.append("")
            if tab.note:
                out += [f"*{tab.note}*", ""]
        for fig in sec.figures:
            dest = assets / f"{_slug(sec.title)}-{fig.path.name}"
            shutil.copyfile(fig.path, dest)
            out += [f"![{fig.title}]({assets.name}/{dest.name})", ""]
        for fname, text in sec.files:
            if fname.endswith(".md"):
                out += [text.strip(), ""]
            else:
                assets.mkdir(parents=True, exist_ok=True)
                dest = assets / f"{_slug(sec.title)}-{fname}"
                dest.write_text(text)
                out += [f"- output file: [{fname}]({assets.name}/{dest.name})", ""]
    return "\n".join(out).rstrip() + "\n"


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:110em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em 0;font-size:0.85em}
th,td{border:1px solid #ccc;padding:0.2em 0.5em;text-align:right}
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}
.note{color:#555;font-size:0.85em}h2{border-bottom:2px solid #888;margin-top:2em}
img{max-width:100%}
"""


def render_html(sections: Sequence[Section], header: str) -> str:
    """One self-contained HTML page (figures embedded as base64 PNGs)."""
    e = htmlmod.escape
    out = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        "<title>svmtune benchmark report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>svmtune benchmark report</h1>",
        f"<p>{e(header)}</p>",
    ]
    for sec in sections:
        out.append(f"<h2>{e(sec.title)}</h2>")
        for t in sec.text:
            out.append(f"<p>{e(t)}</p>")
        for tab in sec.tables:
            out.append(f"<h3>{e(tab.title)}</h3><table><thead><tr>")
            out.append("".join(f"<th>{e(str(c))}</th>" for c in tab.columns))
            out.append("</tr></thead><tbody>")
            for r in tab.rows:
                out.append("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>")
            out.append("</tbody></table>")
            if tab.note:
                out.append(f"<p class='note'>{e(tab.note)}</p>")
        for fig in sec.figures:
            data = base64.b64encode(fig.path.read_bytes()).decode()
            out.append(
                f"<figure><img alt='{e(fig.title)}' src='data:image/png;base64,{data}'>"
                f"<figcaption>{e(fig.title)}</figcaption></figure>"
            )
        for fname, text in sec.files:
            out.append(f"<details><summary>{e(fname)}</summary><pre>{e(text)}</pre></details>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
