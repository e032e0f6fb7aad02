"""Putting chosen sentences together (extractive answerer): every piece is `sentence [anchor]`;
`join` only accepts a text the validator's splitter cuts back into exactly those pieces (fail
closed otherwise)."""

from __future__ import annotations

from citebound.contracts.enums import CitationStyle
from citebound.prompt.anchors import citation_format
from citebound.text import split_sentences


def citation_marker(anchor: str) -> str:
    """The marker for an anchor label: `C0` -> `[C0]`, `¹` -> `[¹]`."""
    return f"[{anchor}]"


def marker_pattern(style: CitationStyle) -> str:
    """Regex matching one well-formed marker of `style` (for `split_sentences(marker=...)`)."""
    return citation_format(style).marker_pattern


def join(pieces: list[str], marker: str, breaks: frozenset[int] = frozenset()) -> str | None:
    """Join cited sentences so the validator's splitter gives back exactly `pieces`.

    One space reads best; a sentence that does not end on a terminator the splitter accepts
    (a heading, a list item, `etc.`) would merge with the next one, so then lines are used.
    The pieces at the indices in `breaks` (quoted commands) always start a new line.
    Returns None when neither form round-trips (never expected; fail closed).
    """
    for separator in (" ", "\n"):
        text = "".join(
            ("" if i == 0 else "\n" if i in breaks else separator) + piece
            for i, piece in enumerate(pieces)
        )
        if split_sentences(text, marker=marker) == pieces:
            return text
    return None


def count_tokens(text: str) -> int:
    """Output tokens as the default policy counts them (cl100k_base, offline)."""
    from citebound.text.tokens import get_tokenizer

    return get_tokenizer("cl100k_base").count(text)
