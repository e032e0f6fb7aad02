"""`POST /v1/chat/completions` and `GET /v1/models`, OpenAI-compatible.

Any OpenAI client gets grounded, validated answers and can hold a conversation::

    client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="<key or anything>")
    r = client.chat.completions.create(model="citebound:plant", messages=[...])
    r.choices[0].message.content       # validated answer, or the exact refusal text
    r.choices[0].message.refusal       # the refusal text when citebound refused, else None
    r.choices[0].message.annotations   # url_citation per marker -> /v1/documents/{id}
    r.model_extra["citebound"]         # status, citations, request_id

The whole messages array is read (see `openai_common`): the last user message is the question,
earlier user/assistant pairs are the conversation (the last N4 pairs go into the prompt's
fenced, never-citable Recent conversation block and into the follow-up retrieval rewrite).
`max_tokens` / `max_completion_tokens` lower the policy's output cap. `usage` holds the
provider's token counts, or the policy tokenizer's for the extractive provider. A FAILED
request (the answer did not pass validation) has empty content and
`finish_reason = "content_filter"`. Errors use OpenAI's error body.

With `stream=true` the pipeline runs to the end first (an answer is only sent once it is
validated), then the validated text goes out as `chat.completion.chunk` server-sent events,
the last chunk carrying `finish_reason`, `refusal`, `annotations` and the `citebound` field,
then `data: [DONE]`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from citebound.api.deps import Caller, Runtime, openai_errors
from citebound.api.limits import message_texts
from citebound.api.openai_common import (
    MODEL_PREFIX,
    citations_in,
    collection_of_model,
    conversation_of,
    is_refusal,
    usage_of,
)
from citebound.api.present import answer_view, stage_view
from citebound.api.runtime import ApiRuntime, ensure_recorded
from citebound.api.security import Principal
from citebound.contracts.chat import (
    ChatAnnotation,
    ChatChoice,
    ChatChunkChoice,
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    ChatDelta,
    ChatInMessage,
    ChatOutMessage,
    ChatUsage,
    CiteboundChatOptions,
    CiteboundResult,
    ModelCard,
    ModelList,
    UrlCitation,
)
from citebound.contracts.enums import PublicStatus
from citebound.errors import ContractError
from citebound.pipeline import RequestState

router = APIRouter(prefix="/v1")

_PIECE = re.compile(r"\S+\s*|\s+")
WORDS_PER_CHUNK = 4


def message_text(message: ChatInMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else "\n".join(p.text for p in content or [])


def run_conversation(
    rt: ApiRuntime,
    who: Principal,
    model: str,
    messages: Sequence[tuple[str, str]],
    options: CiteboundChatOptions | None,
    *,
    max_output_tokens: int | None,
) -> RequestState:
    """The (role, text) messages of either OpenAI route as a conversation: resolve the
    collection, run the pipeline on the last question after its turns, record."""
    # Lazy: citebound.retrieve loads tantivy and the retriever, ~40-60 ms more of importing this
    # module (measured in a fresh process, as python -X importtime shows).
    from citebound.retrieve import compile_filters

    conv = conversation_of(messages, options.system_message if options is not None else "reject")
    collection = options.collection if options is not None else None
    filters = options.filters if options is not None else None

    rt.check_question(conv.question)  # one input size policy (api.limits), before any work
    rt.check_texts(
        [
            conv.question,
            *(t for turn in conv.history for t in (turn.question, turn.answer)),
            *conv.system,  # ignored or rejected, but still caller text (/v1/responses too)
        ],
        "the conversation",
    )
    from_model = collection_of_model(rt, who, model)
    if collection is not None and from_model is not None and from_model != collection:
        # Answered from one collection and reported as another (#34): refuse instead.
        raise ContractError(
            f"model {model!r} names collection {from_model!r} but citebound.collection is "
            f"{collection!r}: send one of them, or the same collection in both"
        )
    named = collection or from_model
    resolved, filters = rt.resolve_collection(who, named, filters)
    compile_filters(filters)
    with rt.slot():
        state = rt.pipeline.start(
            conv.question,
            collection=resolved,
            filters=filters,
            history=conv.history,
            max_output_tokens=max_output_tokens,
        )
        if conv.system:
            ignored = {"system_messages_ignored": len(conv.system)}
            state = state.evolve(extras={**state.extras, **ignored})
        # Claim the id so a request reaches the model once (api.runtime.model_call).
        with rt.model_call(state.request_id, check_audit=False):
            state = ensure_recorded(rt.pipeline.finish(state))
    rt.metrics.observe_request(state)
    return state


def lower_cap(*caps: int | None) -> int | None:
    given = [c for c in caps if c is not None]
    return min(given) if given else None


def _usage(state: RequestState, rt: ApiRuntime) -> ChatUsage:
    prompt, completion = usage_of(state, rt)
    return ChatUsage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )


def _result(state: RequestState, view: bool) -> CiteboundResult:
    r = state.response
    assert r is not None
    return CiteboundResult(
        request_id=r.request_id,
        status=r.status,
        citations=r.citations,
        failure_reason=r.failure_reason,
        low_confidence=r.low_confidence,
        view=answer_view(state) if view else None,
        stages=[stage_view(state, rec) for rec in state.stage_log] if view else None,
    )


def _finish(state: RequestState) -> str:
    assert state.response is not None
    return "content_filter" if state.response.status is PublicStatus.FAILED else "stop"


def _annotations(state: RequestState, base_url: str) -> list[ChatAnnotation]:
    return [
        ChatAnnotation(
            url_citation=UrlCitation(start_index=c.start, end_index=c.end, title=c.title, url=c.url)
        )
        for c in citations_in(state, base_url)
    ]


def _sse(model: BaseModel) -> str:
    return f"data: {model.model_dump_json()}\n\n"


def word_pieces(text: str) -> Iterator[str]:
    words = _PIECE.findall(text)
    for i in range(0, len(words), WORDS_PER_CHUNK):
        yield "".join(words[i : i + WORDS_PER_CHUNK])


def stream_events(
    state: RequestState,
    rt: ApiRuntime,
    model: str,
    created: int,
    *,
    include_usage: bool,
    base_url: str,
    view: bool,
) -> Iterator[str]:
    """The SSE frames of a validated answer: role, content pieces, finish + citebound, [DONE]."""
    r = state.response
    assert r is not None
    cid = f"chatcmpl-{r.request_id}"

    def chunk(**kw: object) -> ChatCompletionChunk:
        return ChatCompletionChunk(id=cid, created=created, model=model, **kw)

    yield _sse(chunk(choices=[ChatChunkChoice(delta=ChatDelta(role="assistant", content=""))]))
    for piece in word_pieces(r.answer):
        yield _sse(chunk(choices=[ChatChunkChoice(delta=ChatDelta(content=piece))]))
    last = ChatDelta(
        refusal=r.answer if is_refusal(r) else None,
        annotations=_annotations(state, base_url) or None,
    )
    yield _sse(
        chunk(
            choices=[ChatChunkChoice(delta=last, finish_reason=_finish(state))],
            citebound=_result(state, view),
        )
    )
    if include_usage:
        yield _sse(chunk(choices=[], usage=_usage(state, rt)))
    yield "data: [DONE]\n\n"


def sse_response(frames: Iterator[str]) -> StreamingResponse:
    return StreamingResponse(
        frames,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.post(
    "/chat/completions",
    response_model=ChatCompletion,
    responses={
        **openai_errors(400, 401, 403, 404, 409, 413, 422, 503),
        200: {"content": {"text/event-stream": {}}, "description": "JSON, or SSE when stream"},
    },
)
def chat_completions(
    body: ChatCompletionRequest,
    request: Request,
    rt: Runtime,
    who: Caller,
) -> ChatCompletion | StreamingResponse:
    """OpenAI Chat Completions over the whole conversation: the validated answer to the last
    user message, or the exact refusal, with citations."""
    rt.check_texts(message_texts(body.messages))  # one input size policy (api.limits)
    options = body.citebound
    state = run_conversation(
        rt,
        who,
        body.model,
        [(m.role, message_text(m)) for m in body.messages],
        options,
        max_output_tokens=lower_cap(body.max_tokens, body.max_completion_tokens),
    )
    r = state.response
    assert r is not None
    created = int(time.time())
    base_url = str(request.base_url)
    view = bool(options and options.view)
    if body.stream:
        include = bool(body.stream_options and body.stream_options.include_usage)
        return sse_response(
            stream_events(
                state,
                rt,
                body.model,
                created,
                include_usage=include,
                base_url=base_url,
                view=view,
            )
        )
    message = ChatOutMessage(
        content=r.answer,
        refusal=r.answer if is_refusal(r) else None,
        annotations=_annotations(state, base_url),
    )
    return ChatCompletion(
        id=f"chatcmpl-{r.request_id}",
        created=created,
        model=body.model,
        choices=[ChatChoice(message=message, finish_reason=_finish(state))],
        usage=_usage(state, rt),
        citebound=_result(state, view),
    )


@router.get("/models", response_model=ModelList, responses=openai_errors(401))
def models(
    rt: Runtime,
    who: Caller,
) -> ModelList:
    """One model per collection the caller may read: `citebound:<collection>` (the name
    `citebound` also works and means the caller's default collection)."""
    return ModelList(data=[ModelCard(id=MODEL_PREFIX + c) for c in rt.visible_collections(who)])
