"""The docs stay guides: relative links resolve and pages stay short enough to read.

Checks every relative Markdown link (and its `#anchor`, GitHub's heading slugs) in README.md,
docs/ and benchmarks/results/, and the size limits: README ≤ 12 KB, each docs page ≤ 40 KB
(measurement logs belong in benchmarks/results/, which has no limit).
Run alone: `python tests/core/test_docs_links.py` prints every broken link.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_MAX_BYTES = 12 * 1024
GUIDE_MAX_BYTES = 40 * 1024

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target) or [text](target "title"); images too. Code spans are removed first.
_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def pages() -> list[Path]:
    """The Markdown files whose links are checked."""
    found = [ROOT / "README.md"]
    found += sorted((ROOT / "docs").glob("*.md"))
    found += sorted((ROOT / "benchmarks" / "results").glob("*.md"))
    return found


def _prose_lines(path: Path) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every heading anchor of a Markdown file (a repeated heading gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    out = set()
    for line in _prose_lines(path) if path.suffix == ".md" else []:
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        out.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return frozenset(out)


def broken_links(path: Path) -> list[str]:
    """`file: target (why)` for each relative link of `path` that does not resolve."""
    problems = []
    for line in _prose_lines(path):
        for target in _LINK.findall(_CODE_SPAN.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, mailto:, ...
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            name = path.relative_to(ROOT)
            if not dest.exists():
                problems.append(f"{name}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{name}: {target} (no heading #{anchor})")
    return problems


@pytest.mark.parametrize("path", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path: Path) -> None:
    assert broken_links(path) == []


def test_readme_is_short() -> None:
    size = (ROOT / "README.md").stat().st_size
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes; move detail into docs/"


@pytest.mark.parametrize("path", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_guide_pages_are_short(path: Path) -> None:
    size = path.stat().st_size
    assert size <= GUIDE_MAX_BYTES, f"{path.name} is {size} bytes; move logs to benchmarks/results/"


def test_every_docs_page_is_in_the_index() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    missing = [
        p.name
        for p in sorted((ROOT / "docs").glob("*.md"))
        if p.name != "index.md" and f"]({p.name}" not in index
    ]
    assert missing == []


def test_slug_matches_github() -> None:
    assert slug("Dense search at scale: int8 scan, certified exact rescoring") == (
        "dense-search-at-scale-int8-scan-certified-exact-rescoring"
    )
    assert slug("The gate: rare words held (`rare_min_score`)") == (
        "the-gate-rare-words-held-rare_min_score"
    )


if __name__ == "__main__":
    bad = [problem for page in pages() for problem in broken_links(page)]
    print("\n".join(bad) or f"all relative links resolve in {len(pages())} files")
    sys.exit(1 if bad else 0)
