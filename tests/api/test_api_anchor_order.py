"""Anchors numbered in the order the answer cites them (#15) on every HTTP surface: /v1/answer,
/v1/steps (the web page's answer view), /v1/chat/completions and /v1/responses. Each shown
anchor must still name the chunk the model cited there (the audit's display_anchors)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from fastapi.testclient import TestClient

from citebound.audit import SQLiteAuditSink
from citebound.contracts.audit import AuditRecord
from citebound.respond.renumber import numbering_problem

# Cites the sample corpus out of rank order (prompt anchors C1, C3, C4 when written); the
# test below fails, rather than passing vacuously, if it stops doing so.
QUESTION = "How do I replace the HP-220 mechanical seal?"


def _record(client: TestClient, request_id: str) -> AuditRecord:
    sink = client.app.state.runtime.ctx.sinks[0]  # type: ignore[attr-defined]
    assert isinstance(sink, SQLiteAuditSink)
    (record,) = sink.find(request_id)
    return record


def _shown_chunks(record: AuditRecord) -> dict[str, str]:
    """shown anchor -> chunk id, from the audit record alone."""
    assert record.display_anchors is not None
    return {shown: record.anchor_map[a] for a, shown in record.display_anchors.items()}


def test_every_route_shows_anchors_in_citation_order(client: TestClient) -> None:
    body = client.post("/v1/answer", json={"question": QUESTION, "request_id": "a1"}).json()
    anchors = [c["anchor"] for c in body["citations"]]
    assert body["status"] == "OK" and numbering_problem(body["answer"], anchors, "C") is None
    record = _record(client, "demo:a1")
    assert record.validated_citations != anchors, "no longer cites out of order: new QUESTION"
    chunks = _shown_chunks(record)
    assert list(chunks) == anchors

    steps = client.post(
        "/v1/steps", json={"question": QUESTION, "request_id": "s1", "to_end": True}
    ).json()
    view = steps["result"]
    assert view["response"]["answer"] == body["answer"]
    # The web page's sources: shown anchors, each opening the chunk cited there.
    assert [(s["anchor"], s["chunk_id"]) for s in view["sources"]] == list(chunks.items())
    assert all(s["support"] > 0 for s in view["sources"])

    chat = client.post(
        "/v1/chat/completions",
        json={
            "model": "citebound:demo",
            "messages": [{"role": "user", "content": QUESTION}],
            "citebound": {"view": True},
        },
    ).json()
    message = chat["choices"][0]["message"]
    cb = chat["citebound"]
    assert message["content"] == body["answer"]
    assert [c["anchor"] for c in cb["citations"]] == anchors
    assert [s["chunk_id"] for s in cb["view"]["sources"]] == list(chunks.values())
    assert len(message["annotations"]) == message["content"].count("[C")
    for note in message["annotations"]:
        cited = message["content"][
            note["url_citation"]["start_index"] : note["url_citation"]["end_index"]
        ]
        url = urlparse(note["url_citation"]["url"])
        assert parse_qs(url.query)["chunk_id"] == [chunks[cited[1:-1]]]

    resp = client.post("/v1/responses", json={"model": "citebound:demo", "input": QUESTION})
    part = resp.json()["output"][0]["content"][0]
    assert part["text"] == body["answer"]
    assert len(part["annotations"]) == part["text"].count("[C")
    for note in part["annotations"]:
        cited = part["text"][note["start_index"] : note["end_index"]]
        assert parse_qs(urlparse(note["url"]).query)["chunk_id"] == [chunks[cited[1:-1]]]
