"""Putting chosen sentences together: steps in order, markers, a text the validator splits back.

Every piece is `sentence [anchor]`; `join` only accepts a text that the validator's splitter
cuts back into exactly those pieces (fail closed: otherwise the caller refuses).
"""

from __future__ import annotations

from citebound.contracts.enums import CitationStyle
from citebound.prompt.anchors import citation_format
from citebound.text import split_sentences

from .candidates import Candidate


def citation_marker(anchor: str) -> str:
    """The marker for an anchor label: `C0` -> `[C0]`, `¹` -> `[¹]`."""
    return f"[{anchor}]"


def marker_pattern(style: CitationStyle) -> str:
    """Regex matching one well-formed marker of `style` (for `split_sentences(marker=...)`)."""
    return citation_format(style).marker_pattern


def steps(lead: Candidate, cands: list[Candidate], max_steps: int) -> list[Candidate]:
    """The list items / table rows / steps that follow `lead` in its evidence, in order."""
    after = [c for c in cands if c.ev == lead.ev and (c.line, c.pos) > (lead.line, lead.pos)]
    out: list[Candidate] = []
    expected_line = lead.line
    for c in after:
        if len(out) >= max_steps:
            break
        if c.line == lead.line and not lead.intro:
            continue  # rest of the lead's own line: only steps on their own lines follow
        if c.line > expected_line + 1 and out:
            break  # a gap (dropped markup or another block) ends the list
        if c.kind == "prose" and not (lead.intro or lead.kind != "prose"):
            break
        if c.kind == "prose" and (out or lead.kind != "prose") and not c.first:
            continue
        if c.kind == "prose" and lead.intro and c.line > lead.line + 1:
            break
        if not c.first:
            continue  # one sentence per step keeps a step list short
        out.append(c)
        expected_line = c.line
    return out


def join(pieces: list[str], marker: str) -> str | None:
    """Join cited sentences so the validator's splitter gives back exactly `pieces`.

    One space reads best; a sentence that does not end on a terminator the splitter accepts
    (a heading, a list item, `etc.`) would merge with the next one, so then lines are used.
    Returns None when neither form round-trips (never expected; fail closed).
    """
    for separator in (" ", "\n"):
        text = separator.join(pieces)
        if split_sentences(text, marker=marker) == pieces:
            return text
    return None


def count_tokens(text: str) -> int:
    """Output tokens as the default policy counts them (cl100k_base, offline)."""
    from citebound.text.tokens import get_tokenizer

    return get_tokenizer("cl100k_base").count(text)
