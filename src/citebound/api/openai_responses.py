"""`POST /v1/responses`: the OpenAI Responses API (non-streaming and streaming).

    r = client.responses.create(model="citebound:plant", input="What torque ...?")
    r.output_text                        # validated answer, or the exact refusal text
    r.output[0].content[0].annotations   # url_citation per marker -> /v1/documents/{id}

`input` may be the conversation (a list of messages ending with the user's question); it is
read exactly like the Chat Completions messages (see `openai_common`). `previous_response_id`
is not supported (citebound keeps no conversation state on the server): send the turns in
`input`. With `stream=true` the pipeline runs to the end first, then the validated text goes
out as `response.output_text.delta` events between the usual created / added / done /
completed events.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from citebound.api.deps import Caller, Runtime, openai_errors
from citebound.api.openai_common import citations_in, is_refusal, usage_of
from citebound.api.openai_compat import lower_cap, run_conversation, sse_response, word_pieces
from citebound.api.runtime import ApiRuntime
from citebound.contracts.chat import CiteboundResult
from citebound.contracts.enums import PublicStatus
from citebound.contracts.responses import (
    OutputAnnotation,
    OutputMessage,
    OutputRefusal,
    OutputText,
    ResponseObject,
    ResponsesRequest,
    ResponseUsage,
)
from citebound.errors import ContractError
from citebound.pipeline import RequestState

router = APIRouter(prefix="/v1")


def response_object(
    state: RequestState, rt: ApiRuntime, body: ResponsesRequest, created: int, base_url: str
) -> ResponseObject:
    r = state.response
    assert r is not None
    text = OutputText(
        text=r.answer,
        annotations=[
            OutputAnnotation(start_index=c.start, end_index=c.end, title=c.title, url=c.url)
            for c in citations_in(state, base_url)
        ],
    )
    parts: list[OutputText | OutputRefusal] = [text]
    if is_refusal(r):
        parts.append(OutputRefusal(refusal=r.answer))
    failed = r.status is PublicStatus.FAILED
    prompt, completion = usage_of(state, rt)
    return ResponseObject(
        id=f"resp_{r.request_id}",
        created_at=created,
        status="incomplete" if failed else "completed",
        incomplete_details={"reason": "content_filter"} if failed else None,
        model=body.model,
        output=[
            OutputMessage(
                id=f"msg_{r.request_id}",
                status="incomplete" if failed else "completed",
                content=parts,
            )
        ],
        usage=ResponseUsage(
            input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion
        ),
        instructions=body.instructions,
        max_output_tokens=body.max_output_tokens,
        metadata=body.metadata or {},
        temperature=body.temperature,
        top_p=body.top_p,
        citebound=CiteboundResult(
            request_id=r.request_id,
            status=r.status,
            citations=r.citations,
            failure_reason=r.failure_reason,
            low_confidence=r.low_confidence,
        ),
    )


def _event(seq: list[int], kind: str, **data: Any) -> str:
    import json

    seq[0] += 1
    payload = {"type": kind, "sequence_number": seq[0], **data}
    return f"event: {kind}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n"


def stream_response(final: ResponseObject) -> Iterator[str]:
    """The Responses streaming events of a finished, validated response."""
    seq = [-1]
    message = final.output[0]
    text_part = message.content[0]
    assert isinstance(text_part, OutputText)
    start = final.model_copy(update={"status": "in_progress", "output": [], "usage": None})
    started = start.model_dump(mode="json")
    yield _event(seq, "response.created", response=started)
    yield _event(seq, "response.in_progress", response=started)
    item: dict[str, Any] = {
        "type": "message",
        "id": message.id,
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    yield _event(seq, "response.output_item.added", output_index=0, item=item)
    where = {"item_id": message.id, "output_index": 0, "content_index": 0}
    empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    yield _event(seq, "response.content_part.added", **where, part=empty)
    for piece in word_pieces(text_part.text):
        yield _event(seq, "response.output_text.delta", **where, delta=piece, logprobs=[])
    yield _event(seq, "response.output_text.done", **where, text=text_part.text, logprobs=[])
    yield _event(seq, "response.content_part.done", **where, part=text_part.model_dump(mode="json"))
    yield _event(
        seq, "response.output_item.done", output_index=0, item=message.model_dump(mode="json")
    )
    yield _event(seq, "response.completed", response=final.model_dump(mode="json"))


@router.post(
    "/responses",
    response_model=ResponseObject,
    responses={
        **openai_errors(400, 401, 403, 404, 409, 413, 422, 503),
        200: {"content": {"text/event-stream": {}}, "description": "JSON, or SSE when stream"},
    },
)
def responses(
    body: ResponsesRequest,
    request: Request,
    rt: Runtime,
    who: Caller,
) -> ResponseObject | StreamingResponse:
    """OpenAI Responses API: the validated answer to the last user input, or the exact
    refusal, with citations."""
    if body.previous_response_id is not None:
        raise ContractError(
            "previous_response_id is not supported: citebound keeps no conversation on the "
            "server; send the earlier turns as messages in `input`"
        )
    try:
        messages = body.messages()
    except ValueError as err:
        raise ContractError(str(err)) from None
    state = run_conversation(
        rt,
        who,
        body.model,
        messages,
        body.citebound,
        max_output_tokens=lower_cap(body.max_output_tokens),
    )
    final = response_object(state, rt, body, int(time.time()), str(request.base_url))
    if body.stream:
        return sse_response(stream_response(final))
    return final
