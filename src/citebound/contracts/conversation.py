"""Conversation contracts: the earlier turns a follow-up question is asked after.

A turn pair is what the user asked and what citebound answered. Earlier turns are context for
understanding a follow-up question; they are never evidence and never citable (see
`citebound.question.conversation`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from citebound.contracts.base import Contract

# A sane cap on the number of turns one request may carry. Only the last N4 pairs
# (`superprompt.n4_recent_conv_max_pairs`) are used; this bounds parsing work, not the policy.
MAX_HISTORY_TURNS = 64
# Per-turn text caps, the same order as `contracts.api.MAX_QUESTION_CHARS`.
MAX_TURN_QUESTION_CHARS = 8000
MAX_TURN_ANSWER_CHARS = 32000


class ConversationTurn(Contract):
    """One earlier turn pair: the user's question and the answer it got (may be a refusal)."""

    question: str = Field(
        min_length=1, max_length=MAX_TURN_QUESTION_CHARS, description="What the user asked."
    )
    answer: str = Field(
        default="",
        max_length=MAX_TURN_ANSWER_CHARS,
        description="What was answered (the validated answer or the refusal); may be empty.",
    )


class FollowupRewrite(Contract):
    """How the retrieval query of a request was derived from the question and earlier turns."""

    original: str = Field(description="Retrieval query from the question alone.")
    query: str = Field(description="Query actually searched.")
    carried: list[str] = Field(default_factory=list, description="Terms appended, in order.")
    rule: str = Field(
        description="no_history, standalone, followup:reference, followup:substitution, "
        "followup:no_entity or llm (docs/conversations.md)."
    )
    turns_used: int = Field(default=0, ge=0, description="Earlier turn pairs considered (≤ N4).")
    from_answers: list[str] = Field(
        default_factory=list,
        description="The carried terms that came from earlier answers (a subset of carried).",
    )


def request_text_chars(question: str, history: Sequence[ConversationTurn] = ()) -> int:
    """Characters of caller text one request carries (question plus every turn).

    The single place where a conversational request's text is measured, so one input-size
    policy can bound it before any work.
    """
    return len(question) + sum(len(t.question) + len(t.answer) for t in history)
