"""One input size policy for every endpoint, checked before any work.

Every route that takes caller text calls `check_question` (or `check_texts` for a list of
chat messages) before it resolves collections, claims a slot or calls the pipeline. The
limits live in two places only, both data: `[api] max_input_chars` (characters of caller text
per request, all chat messages together; the request body itself is capped earlier by
`[api] max_body_bytes`) and the policy's `max_question_tokens` (what the prompt builder
accepts). A question over either is the caller's 4xx with the limit in the message, never an
HTTP 200 FAILED after retrieval, and never stored: the audit only ever sees text within
the limits.

    >>> limits = InputLimits(max_chars=20, max_question_tokens=256, tokenizer="cl100k_base")
    >>> check_question("   ", limits)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    citebound.api.limits.QuestionEmpty: the question is empty (only whitespace or invisible ...)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from citebound.errors import ContractError
from citebound.text.confusables import is_invisible_only
from citebound.text.sanitize import normalize_question, storage_problem
from citebound.text.tokens import get_tokenizer


class InputTooLarge(ContractError):
    """Caller text over a limit (HTTP 413); the message names the limit."""


class QuestionEmpty(ContractError):
    """A question with no visible characters (HTTP 400)."""


class TextNotStorable(ContractError):
    """Caller text holding U+0000, which the audit cannot store (HTTP 400)."""


@dataclass(frozen=True)
class InputLimits:
    """The limits in force (built once per server from config and policy)."""

    max_chars: int
    max_question_tokens: int
    tokenizer: str


def check_texts(texts: Iterable[str], limits: InputLimits, what: str = "the messages") -> None:
    """Raise InputTooLarge when the texts together exceed `max_chars` (counted lazily, so a
    huge input costs no more than reading up to the limit), TextNotStorable when one holds
    U+0000 or a lone surrogate (`citebound.text.sanitize.storage_problem`)."""
    total = 0
    for text in texts:
        total += len(text)
        if total > limits.max_chars:
            raise InputTooLarge(
                f"{what} exceed {limits.max_chars} characters (api.max_input_chars): "
                "shorten the input"
            )
        why = storage_problem(text)
        if why is not None:
            raise TextNotStorable(f"{what} {why}")


def check_question(question: str, limits: InputLimits) -> str:
    """Return `question` unchanged when it is within the limits; raise a 4xx error otherwise.

    Order: characters first (cheap and bounds the tokenizer's work), then emptiness, then
    tokens with the policy's tokenizer (the same count the prompt builder applies later).
    """
    check_texts([question], limits, what="the question")
    # The prompt builder's own normalization and count (assemble_and_build), so a question
    # passes here exactly when it would pass there.
    normal = normalize_question(question)
    # ZWJ, soft hyphens, variation selectors ... survive normalization but show nothing.
    if not normal or is_invisible_only(normal):
        raise QuestionEmpty(
            "the question is empty (only whitespace or invisible characters): ask a question"
        )
    tokens = get_tokenizer(limits.tokenizer).count(normal)
    if tokens > limits.max_question_tokens:
        raise InputTooLarge(
            f"the question has {tokens} tokens, over the policy's max_question_tokens "
            f"{limits.max_question_tokens}: shorten it"
        )
    return question


def message_texts(messages: Iterable[object]) -> Iterable[str]:
    """Every text of a chat `messages` array (string content, or the `text` of content
    parts), lazily: whatever shape a message has, all caller text counts against the limit."""
    for message in messages:
        content = getattr(message, "content", None)
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            for part in content:
                text = getattr(part, "text", None)
                if isinstance(text, str):
                    yield text
