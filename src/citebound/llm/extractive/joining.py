"""Putting chosen sentences together (extractive answerer): every piece is `sentence [anchor]`
(a whole table row the validator's splitter cuts in several: each of its sentences so cited,
`cited`); `join` only accepts a text the validator's splitter cuts back into exactly those
sentences (fail closed otherwise)."""

from __future__ import annotations

from citebound.contracts.enums import CitationStyle
from citebound.prompt.anchors import citation_format
from citebound.text import split_sentences
from citebound.text.tokens import get_tokenizer


def citation_marker(anchor: str) -> str:
    """The marker for an anchor label: `C0` -> `[C0]`, `¹` -> `[¹]`."""
    return f"[{anchor}]"


def marker_pattern(style: CitationStyle) -> str:
    """Regex matching one well-formed marker of `style` (for `split_sentences(marker=...)`)."""
    return citation_format(style).marker_pattern


def cited(parts: tuple[str, ...], anchor: str) -> tuple[str, ...]:
    """Each sentence of a quote with its marker: `("Sep.", "21, 2014")` ->
    `("Sep. [C0]", "21, 2014 [C0]")`."""
    return tuple(f"{part} {citation_marker(anchor)}" for part in parts)


def join(
    pieces: list[tuple[str, ...]], marker: str, breaks: frozenset[int] = frozenset()
) -> str | None:
    """Join cited quotes so the validator's splitter gives back exactly their sentences.

    A piece is one quote: its cited sentences, written one space apart (a row cut at "Sep."
    reads "...; Sep. [C0] 21, 2014 [C0]").

    One space reads best; a sentence that does not end on a terminator the splitter accepts
    (a heading, a list item, `etc.`) would merge with the next one, so then lines are used.
    The pieces at the indices in `breaks` (quoted commands) always start a new line.
    Returns None when neither form round-trips (never expected; fail closed).
    """
    expected = [sentence for piece in pieces for sentence in piece]
    for separator in (" ", "\n"):
        text = "".join(
            ("" if i == 0 else "\n" if i in breaks else separator) + " ".join(piece)
            for i, piece in enumerate(pieces)
        )
        if split_sentences(text, marker=marker) == expected:
            return text
    return None


def count_tokens(text: str) -> int:
    """Output tokens as the default policy counts them (cl100k_base, offline)."""
    return get_tokenizer("cl100k_base").count(text)
