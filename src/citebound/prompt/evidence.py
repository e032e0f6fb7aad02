"""Evidence block rendering (R3), exact bytes.

Each entry is::

    [C0 | chunk_id=... | knowledge_id=... | source=...]
    <sanitized text>

Entries are separated by one blank line. Nothing else is added.
"""

from __future__ import annotations

import re

from citebound.prompt.template import HEADER_LINE

ENTRY_SEPARATOR = "\n\n"
# A line inside evidence that would read as a prompt section header or an evidence header.
# Near misses count too (#21): any case, any spacing, leading blanks, `[C1| chunk_id=x]` or
# `=== Evidence ===` read as structure to a model even when they are not the exact bytes.
_EVIDENCE_HEADER = re.compile(r"^\s*\[[^\]\n|]{1,12}\|\s*chunk_id\s*=", re.IGNORECASE)
NEAR_HEADER_LINE = re.compile(r"^\s*={2,}\s*[A-Za-z][A-Za-z _-]*?\s*={2,}\s*$")
_META_UNSAFE = re.compile(r"[\[\]|\n\r]")


def safe_meta(value: str) -> str:
    """Header metadata must not break the header line; brackets and pipes are replaced."""
    return _META_UNSAFE.sub(lambda m: {"[": "(", "]": ")", "|": "/"}.get(m.group(), " "), value)


def render_entry(label: str, chunk_id: str, knowledge_id: str, source: str, text: str) -> str:
    meta = f"chunk_id={chunk_id} | knowledge_id={knowledge_id} | source={safe_meta(source)}"
    return f"[{label} | {meta}]\n{text}"


def render_block(entries: list[str]) -> str:
    return ENTRY_SEPARATOR.join(entries)


def structure_conflict(text: str) -> str | None:
    """A line of evidence that would forge prompt structure, or None.

    Such text cannot be placed in the prompt without breaking P1 (duplicate headers) or P3.1
    (forged evidence headers), and evidence may not be rewritten, so the chunk is dropped.
    """
    for line in text.split("\n"):
        if HEADER_LINE.match(line) or NEAR_HEADER_LINE.match(line) or _EVIDENCE_HEADER.match(line):
            return line
    return None
