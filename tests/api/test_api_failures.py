"""A model that breaks the rules: the API returns FAILED (no text), the OpenAI endpoint sends
empty content with finish_reason content_filter, and /metrics counts the reason. Plus
concurrent requests over real HTTP: every answer audited exactly once."""

from __future__ import annotations

import threading
from collections.abc import Callable

import httpx
import pytest
from api_helpers import PLANT_QUESTION, UNANSWERABLE
from fastapi.testclient import TestClient

from citebound.api import create_app
from citebound.config import Config
from citebound.contracts.provider import ProviderReply, ProviderRequest
from citebound.pipeline import PipelineContext


class InventingProvider:
    """Answers with a made-up fact and an anchor that is not in the evidence."""

    name = "inventing"
    model = "inventing-v1"

    def complete(self, request: ProviderRequest) -> ProviderReply:
        return ProviderReply(text="The bolts need 99 Nm. [C99]", finish_reason="stop")


def test_invalid_model_answer_is_failed_everywhere(make_config: Callable[..., Config]) -> None:
    config = make_config()
    ctx = PipelineContext(config, provider_override=InventingProvider())
    with TestClient(create_app(config, ctx=ctx), base_url="http://localhost") as c:
        r = c.post("/v1/answer", json={"question": PLANT_QUESTION}).json()
        assert (r["status"], r["answer"], r["citations"]) == ("FAILED", "", [])
        assert r["failure_reason"] == "INVALID_CITATION_REFERENCE"
        chat = c.post(
            "/v1/chat/completions",
            json={"model": "citebound", "messages": [{"role": "user", "content": PLANT_QUESTION}]},
        ).json()
        assert chat["choices"][0]["message"]["content"] == ""
        assert chat["choices"][0]["finish_reason"] == "content_filter"
        assert chat["citebound"]["status"] == "FAILED"
        assert "99 Nm" not in str(chat)
        steps = c.post("/v1/steps", json={"question": PLANT_QUESTION, "to_end": True}).json()
        verdict = next(v for v in steps["views"] if v["stage"] == "validated")["verdict"]
        assert verdict["validation_status"] == "FAILED"
        assert "INVALID_CITATION_REFERENCE" in verdict["reason_codes"]
        assert steps["result"]["confidence"]["level"] == "none"
        text = c.get("/metrics").text
        assert 'citebound_validation_failures_total{reason="INVALID_CITATION_REFERENCE"} 3' in text
        assert 'citebound_failures_total{reason="INVALID_CITATION_REFERENCE"} 3' in text
        assert 'citebound_answers_total{status="FAILED"} 3' in text
        assert "citebound_refusals_total 0" in text


@pytest.mark.integration
def test_concurrent_requests_are_each_audited_once(live_server: Callable[..., object]) -> None:
    with live_server() as srv:  # type: ignore[attr-defined]
        answered: list[str] = []
        errors: list[str] = []
        lock = threading.Lock()

        def worker(n: int) -> None:
            with httpx.Client(base_url=srv.url, timeout=120) as http:
                for i in range(4):
                    q = PLANT_QUESTION if (n + i) % 2 else UNANSWERABLE
                    r = http.post("/v1/answer", json={"question": q})
                    with lock:
                        if r.status_code == 200:
                            answered.append(r.json()["request_id"])
                        else:
                            errors.append(r.text)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and len(answered) == 32
        records = srv.app.state.runtime.ctx.sinks[0].records()  # type: ignore[attr-defined]
        assert sorted(r.request_id for r in records) == sorted(answered)
