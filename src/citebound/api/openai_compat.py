"""`POST /v1/chat/completions` and `GET /v1/models`, OpenAI-compatible.

Any OpenAI client gets grounded, validated answers::

    client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="<key or anything>")
    r = client.chat.completions.create(model="citebound:plant", messages=[...])
    r.choices[0].message.content      # validated answer, or the exact refusal text
    r.model_extra["citebound"]        # status, citations, request_id

The last `user` message is the question; earlier turns are not evidence and are ignored.
The collection comes from `citebound.collection` (extra body), else from the model name
`citebound:<collection>`, else the caller's default. A FAILED request (the answer did not pass
validation) has empty content and `finish_reason = "content_filter"`.

With `stream=true` the pipeline runs to the end first (an answer is only sent once it is
validated), then the validated text goes out as `chat.completion.chunk` server-sent events,
the last chunk carrying `finish_reason` and the `citebound` field, then `data: [DONE]`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from citebound.api.deps import Caller, Runtime, problems
from citebound.api.limits import message_texts
from citebound.api.runtime import ensure_recorded
from citebound.contracts.api import COLLECTION_PATTERN
from citebound.contracts.chat import (
    ChatChoice,
    ChatChunkChoice,
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    ChatDelta,
    ChatOutMessage,
    ChatUsage,
    CiteboundResult,
    ModelCard,
    ModelList,
)
from citebound.contracts.enums import PublicStatus
from citebound.contracts.public import PublicResponse
from citebound.errors import ContractError

router = APIRouter(prefix="/v1")

MODEL_PREFIX = "citebound:"
_PIECE = re.compile(r"\S+\s*|\s+")
WORDS_PER_CHUNK = 4


def question_of(body: ChatCompletionRequest) -> str:
    """Text of the last user message; 400 when there is none or it is empty."""
    for message in reversed(body.messages):
        if message.role != "user":
            continue
        content = message.content
        text = content if isinstance(content, str) else "\n".join(p.text for p in content or [])
        if not text.strip():
            raise ContractError("the last user message is empty: ask a question")
        return text
    raise ContractError("no user message: the last user message is the question")


def collection_of(body: ChatCompletionRequest) -> str | None:
    if body.citebound is not None and body.citebound.collection:
        return body.citebound.collection
    if body.model.startswith(MODEL_PREFIX):
        name = body.model[len(MODEL_PREFIX) :]
        if not re.fullmatch(COLLECTION_PATTERN, name):
            raise ContractError(f"model {body.model!r}: {name!r} is not a collection name")
        return name
    return None


def _usage(r: PublicResponse) -> ChatUsage:
    prompt = r.token_usage.prompt or 0
    completion = r.token_usage.completion or 0
    return ChatUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=r.token_usage.total or prompt + completion,
    )


def _result(r: PublicResponse) -> CiteboundResult:
    return CiteboundResult(
        request_id=r.request_id,
        status=r.status,
        citations=r.citations,
        failure_reason=r.failure_reason,
        low_confidence=r.low_confidence,
    )


def _finish(r: PublicResponse) -> str:
    return "content_filter" if r.status is PublicStatus.FAILED else "stop"


def _sse(model: BaseModel) -> str:
    return f"data: {model.model_dump_json()}\n\n"


def stream_events(
    r: PublicResponse, model: str, created: int, include_usage: bool
) -> Iterator[str]:
    """The SSE frames of a validated answer: role, content pieces, finish + citebound, [DONE]."""
    cid = f"chatcmpl-{r.request_id}"

    def chunk(**kw: object) -> ChatCompletionChunk:
        return ChatCompletionChunk(id=cid, created=created, model=model, **kw)

    yield _sse(chunk(choices=[ChatChunkChoice(delta=ChatDelta(role="assistant", content=""))]))
    words = _PIECE.findall(r.answer)
    for i in range(0, len(words), WORDS_PER_CHUNK):
        piece = "".join(words[i : i + WORDS_PER_CHUNK])
        yield _sse(chunk(choices=[ChatChunkChoice(delta=ChatDelta(content=piece))]))
    yield _sse(
        chunk(
            choices=[ChatChunkChoice(delta=ChatDelta(), finish_reason=_finish(r))],
            citebound=_result(r),
        )
    )
    if include_usage:
        yield _sse(chunk(choices=[], usage=_usage(r)))
    yield "data: [DONE]\n\n"


@router.post(
    "/chat/completions",
    response_model=ChatCompletion,
    responses={
        **problems(400, 401, 403, 422),
        200: {"content": {"text/event-stream": {}}, "description": "JSON, or SSE when stream"},
    },
)
def chat_completions(
    body: ChatCompletionRequest,
    rt: Runtime,
    who: Caller,
) -> ChatCompletion | StreamingResponse:
    """OpenAI Chat Completions: the validated answer or the exact refusal, with citations."""
    from citebound.retrieve import compile_filters

    rt.check_texts(message_texts(body.messages))  # one input size policy (api.limits)
    question = rt.check_question(question_of(body))
    filters = body.citebound.filters if body.citebound is not None else None
    collection, filters = rt.resolve_collection(who, collection_of(body), filters)
    compile_filters(filters)
    with rt.slot():
        state = ensure_recorded(rt.pipeline.run(question, collection=collection, filters=filters))
    rt.metrics.observe_request(state)
    r = state.response
    assert r is not None
    created = int(time.time())
    if body.stream:
        include = bool(body.stream_options and body.stream_options.include_usage)
        return StreamingResponse(
            stream_events(r, body.model, created, include),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    return ChatCompletion(
        id=f"chatcmpl-{r.request_id}",
        created=created,
        model=body.model,
        choices=[
            ChatChoice(
                message=ChatOutMessage(content=r.answer),
                finish_reason=_finish(r),
            )
        ],
        usage=_usage(r),
        citebound=_result(r),
    )


@router.get("/models", response_model=ModelList, responses=problems(401))
def models(
    rt: Runtime,
    who: Caller,
) -> ModelList:
    """One model per collection the caller may read: `citebound:<collection>`."""
    return ModelList(data=[ModelCard(id=MODEL_PREFIX + c) for c in rt.visible_collections(who)])
