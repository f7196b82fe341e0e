"""CHANGELOG.md is kept in the Keep a Changelog layout: an Unreleased section on top, then
released versions, each with entries under the format's own headings."""

from __future__ import annotations

import re
from pathlib import Path

CHANGELOG = Path(__file__).resolve().parents[1] / "CHANGELOG.md"
#: the kinds of change Keep a Changelog 1.1.0 names
KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def test_changelog_has_an_unreleased_section_of_keep_a_changelog_kinds():
    text = CHANGELOG.read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n") and "keepachangelog.com" in text
    versions = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert versions and versions[0] == "Unreleased"
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in versions[1:]), versions
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        kinds = re.findall(r"^### (.+)$", section, re.M)
        assert kinds and set(kinds) <= set(KINDS), kinds
        assert len(kinds) == len(set(kinds))  # each kind once per version
        for block in re.split(r"^### .+$", section, flags=re.M)[1:]:
            assert re.search(r"^- \S", block, re.M), "a heading without entries"


def test_changelog_lists_the_changes_of_issue_63():
    unreleased = re.split(r"^## ", CHANGELOG.read_text(encoding="utf-8"), flags=re.M)[1]
    for mention in ("target_column_", "UnseenCategoryWarning", "py.typed", "solutions_"):
        assert mention in unreleased
