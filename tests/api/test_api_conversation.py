"""Conversations over HTTP with the official `openai` package against a real uvicorn server on
loopback: follow-up questions, refusals, usage, annotations, unknown models, max_tokens, the
Responses API (plain and streaming), and `history` on `/v1/answer`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from api_helpers import PLANT_QUESTION, UNANSWERABLE
from fastapi.testclient import TestClient

from citebound.contracts.chat import MAX_MESSAGES
from citebound.text import get_tokenizer

openai = pytest.importorskip("openai", reason="the openai package is in the test extra")

pytestmark = pytest.mark.integration

OIL = "What oil grade does the GB-7 gearbox use?"
HOLD = "How many litres of it does it hold?"


def _client(url: str) -> Any:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=60)


def _refusals(srv: Any) -> set[str]:
    policy = srv.app.state.runtime.ctx.policy
    return {policy.refusal.no_evidence_text, policy.refusal.model_text}


def test_two_turn_conversation_with_citations(live_server: Callable[..., Any]) -> None:
    with live_server() as srv:
        client = _client(srv.url)
        first = client.chat.completions.create(
            model="citebound:demo", messages=[{"role": "user", "content": OIL}]
        )
        a1 = first.choices[0].message.content or ""
        assert "ISO VG 220" in a1
        # The follow-up alone does not make sense, so it is refused ...
        alone = client.chat.completions.create(
            model="citebound:demo", messages=[{"role": "user", "content": HOLD}]
        )
        assert alone.choices[0].message.refusal in _refusals(srv)
        # ... and answered, with citations, after the first turn.
        r = client.chat.completions.create(
            model="citebound:demo",
            messages=[
                {"role": "user", "content": OIL},
                {"role": "assistant", "content": a1},
                {"role": "user", "content": HOLD},
            ],
        )
        msg = r.choices[0].message
        assert "18 litres" in (msg.content or "") and msg.refusal is None
        assert r.choices[0].finish_reason == "stop"
        assert msg.annotations, "citations are message.annotations"
        for a in msg.annotations:
            assert a.type == "url_citation"
            marker = (msg.content or "")[a.url_citation.start_index : a.url_citation.end_index]
            assert marker.startswith("[C") and marker.endswith("]")
            assert a.url_citation.url.startswith(f"{srv.url}/v1/documents/")
            doc = httpx.get(a.url_citation.url, timeout=30)
            assert doc.status_code == 200 and doc.json()["highlight"] is not None
        assert r.usage is not None and r.usage.total_tokens > 0
        assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
        cb = (r.model_extra or {})["citebound"]
        assert cb["status"] == "OK" and cb["citations"]
        # The follow-up request was audited once, with the conversation template.
        sink = srv.app.state.runtime.ctx.sinks[0]
        [record] = sink.find(cb["request_id"])
        assert record.template_id == "qa_conversation_v1" and record.question == HOLD
        # ... with the earlier turn as the request received it and the query searched.
        conv = record.conversation
        assert conv is not None and [(t.question, t.answer) for t in conv.turns] == [(OIL, a1)]
        assert conv.rewrite is not None and conv.rewrite.carried[0] == "GB-7"


def test_refusal_sets_message_refusal(live_server: Callable[..., Any]) -> None:
    with live_server() as srv:
        r = _client(srv.url).chat.completions.create(
            model="citebound", messages=[{"role": "user", "content": UNANSWERABLE}]
        )
        msg = r.choices[0].message
        assert msg.refusal in _refusals(srv) and msg.content == msg.refusal
        assert msg.annotations == [] and r.choices[0].finish_reason == "stop"
        assert r.usage is not None and r.usage.prompt_tokens == 0  # no model was called
        assert r.usage.completion_tokens > 0 and r.usage.total_tokens > 0


def test_unknown_model_is_not_found_and_lists_the_models(
    live_server: Callable[..., Any],
) -> None:
    with live_server() as srv:
        client = _client(srv.url)
        with pytest.raises(openai.NotFoundError) as err:
            client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": PLANT_QUESTION}]
            )
        assert "citebound:demo" in str(err.value) and "gpt-4o" in str(err.value)
        with pytest.raises(openai.NotFoundError):
            client.responses.create(model="citebound:nope", input=PLANT_QUESTION)
        # Validation errors reach the SDK with their message (OpenAI's error body).
        with pytest.raises(openai.UnprocessableEntityError, match="max_tokens"):
            client.chat.completions.create(
                model="citebound",
                messages=[{"role": "user", "content": PLANT_QUESTION}],
                max_tokens=0,
            )
        too_many = [{"role": "user", "content": "q"}] * (MAX_MESSAGES + 1)
        with pytest.raises(openai.UnprocessableEntityError, match="messages"):
            client.chat.completions.create(model="citebound", messages=too_many)  # type: ignore[arg-type]
        with pytest.raises(openai.BadRequestError, match="last message must be a user"):
            client.chat.completions.create(
                model="citebound",
                messages=[
                    {"role": "user", "content": PLANT_QUESTION},
                    {"role": "assistant", "content": "45 Nm"},
                ],
            )


def test_max_tokens_lowers_the_output_cap(live_server: Callable[..., Any]) -> None:
    count = get_tokenizer("cl100k_base").count
    with live_server() as srv:
        client = _client(srv.url)
        full = client.chat.completions.create(
            model="citebound", messages=[{"role": "user", "content": OIL}]
        )
        full_text = full.choices[0].message.content or ""
        assert count(full_text) > 5
        tiny = client.chat.completions.create(
            model="citebound", messages=[{"role": "user", "content": OIL}], max_tokens=5
        )
        # Never a cut answer: what does not fit the lowered cap is not shown.
        assert tiny.choices[0].message.content == ""
        assert tiny.choices[0].finish_reason == "content_filter"
        roomy = client.chat.completions.create(
            model="citebound", messages=[{"role": "user", "content": OIL}], max_tokens=10_000
        )
        assert roomy.choices[0].message.content == full_text  # never raised above the policy


def test_chat_streaming_carries_refusal_and_annotations(live_server: Callable[..., Any]) -> None:
    with live_server() as srv:
        client = _client(srv.url)
        chunks = list(
            client.chat.completions.create(
                model="citebound:demo",
                messages=[
                    {"role": "user", "content": OIL},
                    {"role": "assistant", "content": "ISO VG 220 mineral gear oil."},
                    {"role": "user", "content": HOLD},
                ],
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert "18 litres" in text
        last = next(c for c in chunks if c.choices and c.choices[0].finish_reason)
        notes = (last.choices[0].delta.model_extra or {}).get("annotations") or []
        assert notes and all(n["type"] == "url_citation" for n in notes)
        assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
        refused = list(
            client.chat.completions.create(
                model="citebound",
                messages=[{"role": "user", "content": UNANSWERABLE}],
                stream=True,
            )
        )
        end = next(c for c in refused if c.choices and c.choices[0].finish_reason)
        assert end.choices[0].delta.refusal in _refusals(srv)


def test_responses_api(live_server: Callable[..., Any]) -> None:
    with live_server() as srv:
        client = _client(srv.url)
        r = client.responses.create(model="citebound:demo", input=PLANT_QUESTION)
        assert r.status == "completed" and "45 Nm" in r.output_text
        part = r.output[0].content[0]
        assert part.type == "output_text" and part.annotations
        assert r.usage is not None and r.usage.total_tokens > 0
        follow = client.responses.create(
            model="citebound:demo",
            input=[
                {"role": "user", "content": OIL},
                {"role": "assistant", "content": "ISO VG 220 mineral gear oil."},
                {"role": "user", "content": HOLD},
            ],
        )
        assert "18 litres" in follow.output_text
        refused = client.responses.create(model="citebound", input=UNANSWERABLE)
        assert refused.output_text in _refusals(srv)
        assert [p.type for p in refused.output[0].content] == ["output_text", "refusal"]
        with pytest.raises(openai.BadRequestError, match="system/developer messages"):
            client.responses.create(model="citebound", input=OIL, instructions="Be creative.")
        with pytest.raises(openai.BadRequestError, match="previous_response_id"):
            client.responses.create(model="citebound", input=HOLD, previous_response_id=r.id)


def test_responses_api_streaming(live_server: Callable[..., Any]) -> None:
    with live_server() as srv:
        events = list(
            _client(srv.url).responses.create(
                model="citebound:demo", input=PLANT_QUESTION, stream=True
            )
        )
        kinds = [e.type for e in events]
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        assert "response.output_text.delta" in kinds
        assert [e.sequence_number for e in events] == list(range(len(events)))
        text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
        done = events[-1].response
        assert text == done.output_text and "45 Nm" in text
        assert done.usage is not None and done.usage.total_tokens > 0


def test_answer_endpoint_takes_history(client: TestClient) -> None:
    first = client.post("/v1/answer", json={"question": OIL}).json()
    alone = client.post("/v1/answer", json={"question": HOLD}).json()
    follow = client.post(
        "/v1/answer",
        json={"question": HOLD, "history": [{"question": OIL, "answer": first["answer"]}]},
    ).json()
    assert alone["status"] == "NO_EVIDENCE"
    assert follow["status"] == "OK" and "18 litres" in follow["answer"] and follow["citations"]
    bad = client.post("/v1/answer", json={"question": HOLD, "history": [{"question": ""}]})
    assert bad.status_code == 422 and "history" in bad.text
    retrieve = client.post("/v1/retrieve", json={"question": HOLD, "history": [{"question": OIL}]})
    assert retrieve.status_code == 400 and "/v1/answer" in retrieve.text
    steps = client.post(
        "/v1/steps",
        json={"question": HOLD, "history": [{"question": OIL}], "to_end": True},
    ).json()
    assert steps["result"]["response"]["status"] == "OK"
