"""The fenced Recent conversation block of the `qa_conversation_v1` template: earlier turn pairs
(docs/conversations.md) as context, never as evidence."""

from __future__ import annotations

import re
from collections.abc import Sequence

from citebound.contracts.conversation import ConversationTurn
from citebound.contracts.enums import CitationStyle
from citebound.prompt.anchors import citation_format


def _one_line(text: str) -> str:
    return " ".join(text.split())


def conversation_lines(
    turns: Sequence[ConversationTurn], style: CitationStyle | str
) -> list[tuple[str, str]]:
    """(user line, assistant line) per turn pair, as they appear in the fenced block.

    Each turn is folded to one line, so no turn text can form a section header or close the
    fence (every line starts with `User:` or `Assistant:`). Citation markers are removed from
    earlier answers: their anchors named earlier evidence, and this block is never citable.
    """
    marker = re.compile(r"\s*" + citation_format(style).marker_pattern)
    pairs = []
    for t in turns:
        answer = _one_line(marker.sub("", t.answer)) or "(no answer)"
        pairs.append((f"User: {_one_line(t.question)}", f"Assistant: {answer}"))
    return pairs


def render_conversation(pairs: Sequence[tuple[str, str]]) -> str:
    """The block between the fences: the pairs oldest first, one line per turn."""
    return "\n".join(line for pair in pairs for line in pair)
