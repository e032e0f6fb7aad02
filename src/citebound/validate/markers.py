"""Citation markers: the exact pattern of a citation style, and the near misses we reject.

A marker is `[` + anchor label + `]` where the label is `SelectedEvidence.citation_anchor`
(`C0`, `S1`, `1`, `¹`). Anything that *looks* like a citation but is not the exact marker of the
bundle's style is MALFORMED_CITATION (malformed anchors, casing mismatch,
brackets missing). What counts as "looks like a citation":

- a bracketed anchor-like token whose exact text is not a marker of this style: `[c0]`,
  `(C0)`, `{C0}`, `[C-1]`, `[ C0 ]`, `[C0,C1]`, `[C0-C2]`, `[C 0]`, `【C0】`, and markers of
  another style (`[S1]` or `[1]` in a `C` answer);
- a bare allowed anchor label outside brackets (`C0` or `c0` in a `C` answer whose bundle has
  `C0`). Bare labels that are not anchors of this bundle (`C4 explosive`) are ordinary words.

For the `decimal` style, parentheses without a letter (`(1)`) are ordinary list numbering and
are not flagged; bare numbers are ordinary numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citebound.contracts.enums import CitationStyle
from citebound.prompt.anchors import (
    SUPERSCRIPT_DIGITS,
    citation_format,
)

# Exact anchor labels per style (`C0`, `C1`, ... for C; docs/design.md for the others).

_DIGIT = rf"[0-9{SUPERSCRIPT_DIGITS}]"
# Whitespace runs are bounded ({0,3}) and each optional part starts with a non-space, so the
# pattern cannot backtrack catastrophically on long runs of spaces or digits.
_ITEM = rf"\s{{0,3}}(?:[A-Za-z]\s{{0,3}})?(?:[-#:]\s{{0,3}})?{_DIGIT}{{1,12}}\s{{0,3}}"
_LIST = rf"{_ITEM}(?:[,;–—-]{_ITEM})*"
# Any bracket family around an anchor-like token or list of tokens.
_LOOSE_BRACKETED = re.compile(rf"\[{_LIST}\]|\({_LIST}\)|\{{{_LIST}\}}|【{_LIST}】|［{_LIST}］")


@dataclass(frozen=True)
class MarkerScan:
    """Markers found in a text: exact ones (labels, in order) and malformed near misses."""

    labels: tuple[str, ...]
    malformed: tuple[str, ...]


def marker_pattern(style: CitationStyle) -> str:
    """Regex (string) matching one exact marker of `style`, e.g. `\\[C\\d+\\]`."""
    return citation_format(style).marker_pattern


def _loose_is_candidate(token: str) -> bool:
    """Whether a bracketed anchor-like token should count as an attempted citation."""
    inner = token[1:-1]
    has_letter = any(ch.isalpha() for ch in inner)
    if has_letter:
        # Only anchor letters (C/S in any case) make a token citation-like: `[x1]` is a variable.
        letters = {ch for ch in inner if ch.isalpha()}
        return letters <= {"C", "c", "S", "s"}
    if token[0] == "(":
        # `(1)`, `(2, 3)` are list numbering in prose, not citations; `(¹)` is an attempt.
        return any(ch in SUPERSCRIPT_DIGITS for ch in inner)
    return True


def scan_markers(text: str, style: CitationStyle, allowed: tuple[str, ...]) -> MarkerScan:
    """Find exact markers (in order of appearance) and malformed near misses in `text`.

    >>> scan_markers("Torque 40 Nm [C0] (C1) [c2].", CitationStyle.C, ("C0", "C1"))
    MarkerScan(labels=('C0',), malformed=('(C1)', '[c2]'))
    """
    exact = re.compile(marker_pattern(style))
    labels = tuple(m.group()[1:-1] for m in exact.finditer(text))
    stripped = exact.sub(" ", text)
    malformed: list[str] = []
    for m in _LOOSE_BRACKETED.finditer(stripped):
        if _loose_is_candidate(m.group()):
            malformed.append(m.group())
    remaining = _LOOSE_BRACKETED.sub(" ", stripped)
    lowered = {a.casefold() for a in allowed}
    if style in (CitationStyle.C, CitationStyle.S):
        for m in re.finditer(r"(?<![\w\[])[A-Za-z]\d+(?![\w\]])", remaining):
            if m.group().casefold() in lowered:
                malformed.append(m.group())
    elif style is CitationStyle.SUPERSCRIPT:
        for m in re.finditer(f"[{SUPERSCRIPT_DIGITS}]+", remaining):
            if m.group() in allowed:
                malformed.append(m.group())
    return MarkerScan(labels=labels, malformed=tuple(malformed))


def strip_markers(text: str, style: CitationStyle) -> str:
    """`text` with exact markers replaced by a space (for word and number extraction)."""
    return re.sub(marker_pattern(style), " ", text)
