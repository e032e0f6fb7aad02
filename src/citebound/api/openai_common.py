"""What the OpenAI-compatible routes share: model names, messages -> (question, earlier turns),
usage, citation annotations, and the error body OpenAI SDKs read.

Models: `citebound` is the caller's default collection and `citebound:<collection>` a named one
(`GET /v1/models` lists the latter). Any other name is a 404 that lists the models, as OpenAI
does for an unknown model.

Messages: the last message must be `user` (the question); earlier `user`/`assistant` messages
form the turn pairs of the conversation, oldest first (a user message without an answer pairs
with an empty answer; an assistant message before any question, such as a greeting, is not a
turn). System and developer messages cannot change the frozen prompt: they are rejected with a
400 unless the request sets `citebound.system_message = "ignore"` (recorded in the trace).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple
from urllib.parse import quote

from citebound.api.runtime import ApiRuntime
from citebound.api.security import Principal
from citebound.contracts.api import COLLECTION_PATTERN
from citebound.contracts.conversation import ConversationTurn
from citebound.contracts.enums import PublicStatus
from citebound.contracts.public import PublicResponse
from citebound.errors import ContractError, NotFound
from citebound.pipeline import RequestState
from citebound.prompt import citation_format
from citebound.text import get_tokenizer

MODEL_PREFIX = "citebound:"
DEFAULT_MODEL = "citebound"


class Conversation(NamedTuple):
    """A request's messages as citebound reads them."""

    question: str
    history: list[ConversationTurn]
    system: list[str]


def model_names(rt: ApiRuntime, who: Principal) -> list[str]:
    return [MODEL_PREFIX + c for c in rt.visible_collections(who)]


def collection_of_model(rt: ApiRuntime, who: Principal, model: str) -> str | None:
    """The collection a model name selects (None: the caller's default); 404 for an unknown
    model, 400 for a malformed collection name, 403 (later) for one the caller may not read."""
    if model == DEFAULT_MODEL:
        return None
    why = ""
    if model.startswith(MODEL_PREFIX):
        name = model[len(MODEL_PREFIX) :]
        if not re.fullmatch(COLLECTION_PATTERN, name):
            raise ContractError(f"model {model!r}: {name!r} is not a collection name")
        if name in rt.collections() or not who.may_read(name):
            return name  # an unreadable collection is the caller's 403, decided later
        why = f" (there is no collection {name!r})"
    known = ", ".join([DEFAULT_MODEL, *model_names(rt, who)])
    raise NotFound(
        f"The model {model!r} does not exist{why}. Available models: {known} "
        f"({DEFAULT_MODEL!r} is your default collection)."
    )


def conversation_of(messages: Sequence[tuple[str, str]], system_mode: str) -> Conversation:
    """(role, text) messages -> question, earlier turn pairs and system texts."""
    if not any(role == "user" for role, _ in messages):
        raise ContractError("no user message: the last user message is the question")
    system: list[str] = []
    turns: list[ConversationTurn] = []
    pending: str | None = None
    for i, (role, text) in enumerate(messages):
        if role in ("system", "developer"):
            system.append(text)
        elif role == "tool":
            raise ContractError(
                f"messages[{i}]: tool messages are not supported (citebound calls no tools)"
            )
        elif role == "user":
            if pending is not None and pending.strip():
                turns.append(ConversationTurn(question=pending, answer=""))
            pending = text
        elif pending is not None:  # an assistant answer closes the pending question
            if pending.strip():
                turns.append(ConversationTurn(question=pending, answer=text))
            pending = None
    if messages[-1][0] != "user":
        raise ContractError("the last message must be a user message: it is the question to answer")
    assert pending is not None
    if not pending.strip():
        raise ContractError("the last user message is empty: ask a question")
    if system and system_mode != "ignore":
        raise ContractError(
            "system/developer messages are not supported: citebound's prompt is frozen and "
            "answers only from your documents. Remove the system message, or send "
            '"citebound": {"system_message": "ignore"} to have it ignored (recorded).'
        )
    return Conversation(question=pending, history=turns, system=system)


def is_refusal(r: PublicResponse) -> bool:
    return r.status is PublicStatus.NO_EVIDENCE


def usage_of(state: RequestState, rt: ApiRuntime) -> tuple[int, int]:
    """(prompt tokens, completion tokens): the provider's counts when it reported them, else
    the policy tokenizer's count of the prompt sent (0 when no model was called) and of the
    text returned."""
    r = state.response
    assert r is not None
    if r.token_usage.prompt is not None or r.token_usage.completion is not None:
        return r.token_usage.prompt or 0, r.token_usage.completion or 0
    tok = get_tokenizer(rt.ctx.policy.tokenizer)
    sent = state.llm_result is not None and state.llm_result.attempts > 0
    counts = state.prompt.token_counts if state.prompt is not None else None
    prompt = counts.prompt_tokens if sent and counts is not None else 0
    return prompt, tok.count(r.answer) if r.answer else 0


class Citation(NamedTuple):
    start: int
    end: int
    title: str
    url: str


def citations_in(state: RequestState, base_url: str) -> list[Citation]:
    """One entry per citation marker in the answer, in order, pointing at the cited document
    (and chunk, so the document view highlights the span)."""
    r = state.response
    assert r is not None
    if r.status is not PublicStatus.OK or state.answer_bundle is None:
        return []
    by_anchor = {c.anchor: c for c in r.citations}
    # The answer's anchors are the shown ones (first-citation order), not the prompt's.
    chunks = {a: e.chunk_id for a, e in state.shown_sources().items()}
    fmt = citation_format(state.answer_bundle.citation_style)
    out: list[Citation] = []
    for m in re.finditer(fmt.marker_regex, r.answer):
        c = by_anchor.get(m.group(1))
        if c is None:
            continue
        url = f"{base_url.rstrip('/')}/v1/documents/{quote(c.knowledge_id, safe='')}"
        if m.group(1) in chunks:
            url += f"?chunk_id={quote(chunks[m.group(1)], safe='')}"
        out.append(Citation(m.start(), m.end(), c.source_reference, url))
    return out


def text_of(parts: Iterable[str]) -> str:
    return "\n".join(parts)
