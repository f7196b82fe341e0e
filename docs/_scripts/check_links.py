"""Check a built HTML site for internal links to anchors that do not exist and for
Sphinx roles left as raw text.

Sphinx's ``-W`` stops at warnings, but two faults pass it: a link whose page exists and whose
``#anchor`` does not (``viewcode``'s "[docs]" links point at the page that documents an object
under a name it may not have there), and a role that was not parsed (``:meth:`x``` in a
place docutils reads as plain text or a heading) rendered as its source.  This script reads
every page of the built site: each ``href="page.html#id"`` relative link must name an
existing page with that ``id``, and no page's text may hold a role's source
(``:meth:`...```, ``:class:``, ...).  Pages of highlighted source code (``_modules/``) are
checked for links only: their text is the source, roles included.

Run by ``docs/build.sh`` after the build: ``python docs/_scripts/check_links.py
docs/_build/html``; exits 1 listing every fault.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: the source of a Sphinx role, as it shows when docutils did not parse it
RAW_ROLE = re.compile(r":(?:py:)?(?:meth|class|func|mod|attr|data|exc|obj|ref|doc|term):`")


class _Page(HTMLParser):
    """The ids, relative links and visible text (outside ``<pre>``/code) of one page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.text: list[str] = []
        self._code = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag in ("pre", "code", "script", "style"):
            self._code += 1

    def handle_endtag(self, tag):
        if tag in ("pre", "code", "script", "style") and self._code:
            self._code -= 1

    def handle_data(self, data):
        if not self._code:
            self.text.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def check_site(root: str | Path) -> list[str]:
    """Every fault of the built site under ``root``: ``"page: message"`` lines."""
    root = Path(root).resolve()
    pages = {p.resolve(): _parse(p) for p in sorted(root.rglob("*.html"))}
    faults = []
    for path, page in pages.items():
        rel = path.relative_to(root)
        for href in page.links:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith("mailto:"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.suffix != ".html":
                continue
            if target not in pages:
                faults.append(f"{rel}: link to a missing page {href}")
                continue
            if parts.fragment:
                if unquote(parts.fragment) not in pages[target].ids:
                    faults.append(f"{rel}: link to a missing anchor {href}")
        if rel.parts[0] in ("_modules", "_sources"):
            continue
        text = "".join(page.text)
        for m in RAW_ROLE.finditer(text):
            faults.append(f"{rel}: a role left as text: {text[m.start() : m.start() + 60]!r}")
    return faults


def main(argv: list[str]) -> int:
    root = argv[1] if len(argv) > 1 else "docs/_build/html"
    faults = check_site(root)
    for f in faults:
        print(f, file=sys.stderr)
    if faults:
        print(f"check_links: {len(faults)} fault(s) in {root}", file=sys.stderr)
        return 1
    print(f"check_links: every internal link and role of {root} resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
