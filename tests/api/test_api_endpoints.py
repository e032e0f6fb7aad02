"""The /v1 REST endpoints on a real store (FastAPI TestClient; real SQLite, real indexes)."""

from __future__ import annotations

import math
from pathlib import Path

from api_helpers import (
    PLANT_QUESTION,
    UNANSWERABLE,
    auth,
    non_finite_copy,
    refusals,
    strict_json,
)
from fastapi.testclient import TestClient

from citebound.audit import audit_json
from citebound.contracts.api import AuditView
from citebound.text import split_sentences


def test_answer_is_cited_and_audited(client: TestClient) -> None:
    r = client.post("/v1/answer", json={"question": PLANT_QUESTION})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "OK"
    assert "45 Nm" in body["answer"]
    assert body["citations"] and all(c["anchor"] in body["answer"] for c in body["citations"])
    # R6: no chunk text, no scores, no internal debug structures in the public response.
    assert set(body) == {
        "request_id",
        "status",
        "answer",
        "citations",
        "token_usage",
        "latency_ms",
        "low_confidence",
        "confidence",
        "failure_reason",
    }
    assert body["confidence"] in ("high", "medium", "low")  # a level, never a score
    assert "similarity" not in r.text and "chunk_text" not in r.text
    rt = client.app.state.runtime  # type: ignore[attr-defined]
    records = [x for s in rt.ctx.sinks for x in s.find(body["request_id"])]
    assert len(records) == 1 and records[0].status.value == "OK"


def test_unanswerable_gets_the_exact_refusal(client: TestClient) -> None:
    r = client.post("/v1/answer", json={"question": UNANSWERABLE, "request_id": "refuse-1"})
    body = r.json()
    assert (r.status_code, body["status"], body["citations"]) == (200, "NO_EVIDENCE", [])
    assert body["answer"] in refusals(client)
    again = client.post("/v1/answer", json={"question": UNANSWERABLE, "request_id": "refuse-1"})
    assert again.status_code == 409 and "already recorded" in again.json()["detail"]


def test_retrieve_assemble_validate_chain(client: TestClient) -> None:
    r = client.post("/v1/retrieve", json={"question": PLANT_QUESTION, "request_id": "chain-1"})
    assert r.status_code == 200, r.text
    bundle = r.json()
    assert bundle["retrieval_status"] == "SUCCESS" and bundle["results"]
    assert bundle["filters_applied"]["collection"] == "demo"

    a = client.post("/v1/assemble", json={"bundle": bundle})
    assert a.status_code == 200, a.text
    out = a.json()
    ab, prompt = out["answer_bundle"], out["prompt"]
    assert ab["assembly_status"] == "OK" and len(prompt["prompt_sha256"]) == 64
    anchor = ab["selected_evidence"][0]["citation_anchor"]
    sentences = split_sentences(ab["selected_evidence"][0]["sanitized_text"])
    sentence = max((s for s in sentences if s.endswith(".")), key=len)

    ok = client.post(
        "/v1/validate", json={"answer_bundle": ab, "raw_text": f"{sentence} [{anchor}]"}
    )
    assert ok.status_code == 200 and ok.json()["validation_status"] == "PASSED", ok.text
    bad = client.post("/v1/validate", json={"answer_bundle": ab, "raw_text": f"{sentence} [C99]"})
    assert bad.json()["validation_status"] == "FAILED"
    assert bad.json()["failure_reason"] == "INVALID_CITATION_REFERENCE"


def test_assemble_reports_bad_ranks_as_failed_not_500(client: TestClient) -> None:
    bundle = client.post("/v1/retrieve", json={"question": PLANT_QUESTION}).json()
    bundle["results"][0]["rank"] = 5  # V2: ranks must start at 0 and increase
    a = client.post("/v1/assemble", json={"bundle": bundle})
    assert a.status_code == 200
    assert a.json()["answer_bundle"]["assembly_status"] == "FAILED"
    assert "V2_RANK_INTEGRITY" in a.json()["answer_bundle"]["reason_codes"]


def test_document_view_highlights_the_cited_span(client: TestClient) -> None:
    body = client.post("/v1/answer", json={"question": PLANT_QUESTION}).json()
    rt = client.app.state.runtime  # type: ignore[attr-defined]
    record = rt.ctx.sinks[0].find(body["request_id"])[0]
    c0 = body["citations"][0]
    chunk_id = record.anchor_map[c0["anchor"]]
    r = client.get(f"/v1/documents/{c0['knowledge_id']}", params={"chunk_id": chunk_id})
    assert r.status_code == 200, r.text
    doc = r.json()
    h = doc["highlight"]
    assert doc["collection"] == "demo" and h["chunk_id"] == chunk_id
    span = doc["text"][h["char_start"] : h["char_end"]]
    chunk = rt.ctx.store.get_chunks([chunk_id])[0]
    assert span == chunk.text or chunk.text.split()[0] in span
    assert "45 Nm" in span or any(w in span for w in c0["heading_path"])
    other = client.get(f"/v1/documents/{c0['knowledge_id']}", params={"chunk_id": "nope"})
    assert other.status_code == 404


def test_feedback_is_appended_and_admin_reads_audit(keyed_client: TestClient) -> None:
    body = keyed_client.post(
        "/v1/answer", json={"question": PLANT_QUESTION}, headers=auth("demo-reader")
    ).json()
    rid = body["request_id"]
    for verdict in ("correct", "incorrect"):
        r = keyed_client.post(
            "/v1/feedback",
            json={"request_id": rid, "verdict": verdict, "comment": f"said {verdict}"},
            headers=auth("demo-reader"),
        )
        assert r.status_code == 201, r.text
    unknown = keyed_client.post(
        "/v1/feedback", json={"request_id": "nope", "verdict": "correct"}, headers=auth("admin")
    )
    assert unknown.status_code == 404
    assert keyed_client.get(f"/v1/audit/{rid}", headers=auth("demo-reader")).status_code == 403
    a = keyed_client.get(f"/v1/audit/{rid}", headers=auth("admin"))
    assert a.status_code == 200, a.text
    view = a.json()
    assert [f["verdict"] for f in view["feedback"]] == ["correct", "incorrect"]
    assert len(view["records"]) == 1 and view["records"][0]["request_id"] == rid
    # The encoding of `audit show` / `export` (canonical JSON: the bytes the hashes cover).
    assert a.text == audit_json(AuditView.model_validate_json(a.text))
    assert keyed_client.get("/v1/audit/unknown-id", headers=auth("admin")).status_code == 404


def test_healthz_collections_models(client: TestClient) -> None:
    h = client.get("/healthz").json()
    assert h["status"] == "ok" and h["auth_required"] is False
    cols = client.get("/v1/collections").json()
    assert cols["collections"] == ["demo", "secret"] and cols["default"] == "demo"
    assert cols["principal"] == "anonymous"
    models = client.get("/v1/models").json()
    assert [m["id"] for m in models["data"]] == ["citebound:demo", "citebound:secret"]


def test_metrics_count_statuses_refusals_and_stage_latency(client: TestClient) -> None:
    client.post("/v1/answer", json={"question": PLANT_QUESTION})
    client.post("/v1/answer", json={"question": UNANSWERABLE})
    client.post("/v1/answer", json={"question": ""})  # 422
    text = client.get("/metrics").text
    assert 'citebound_answers_total{status="OK"} 1' in text
    assert 'citebound_answers_total{status="NO_EVIDENCE"} 1' in text
    assert "citebound_refusals_total 1" in text
    assert 'citebound_http_requests_total{code="422",method="POST",route="/v1/answer"} 1' in text
    assert 'citebound_http_requests_total{code="200",method="POST",route="/v1/answer"} 2' in text
    assert 'citebound_stage_latency_seconds_count{stage="retrieval"} 2' in text
    assert "# TYPE citebound_validation_failures_total counter" in text
    # Every sample line is `name{labels} value` with a numeric value.
    for line in text.splitlines():
        if line and not line.startswith("#"):
            float(line.rsplit(" ", 1)[1])


def test_docs_page_uses_only_local_assets(client: TestClient) -> None:
    # FastAPI's Swagger UI pulled its code from a CDN (a blank page offline): /docs is ours.
    import re

    r = client.get("/docs")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    refs = re.findall(r'(?:src|href)="([^"]+)"', r.text)
    assert refs and all(ref.startswith("/") for ref in refs), refs
    for ref in refs:
        assert client.get(ref).status_code == 200, ref
    assert "http" not in client.get("/ui/docs.js").text
    assert client.get("/redoc").status_code == 404


def test_audit_with_non_finite_numbers_is_strict_json_that_verifies(
    keyed_client: TestClient,
) -> None:
    """A record holding NaN / ±Infinity: GET /v1/audit answers strict JSON (a browser's
    JSON.parse refuses bare NaN), the numbers come back as the documented strings, and the
    record read with the schema keeps its values and verifies against its hash."""
    body = keyed_client.post(
        "/v1/answer", json={"question": PLANT_QUESTION}, headers=auth("admin")
    ).json()
    rt = keyed_client.app.state.runtime  # type: ignore[attr-defined]
    (sink,) = rt.ctx.sinks
    (real,) = sink.find(body["request_id"])
    odd = non_finite_copy(real, "non-finite-1")
    sink.append(odd)
    a = keyed_client.get("/v1/audit/non-finite-1", headers=auth("admin"))
    assert a.status_code == 200, a.text
    parsed = strict_json(a.text)["records"][0]
    assert (parsed["min_support"], parsed["attribution_coverage"]) == ("NaN", "Infinity")
    assert parsed["llm_latency_ms"] == "-Infinity"
    assert [e["similarity_score"] for e in parsed["evidence"]][:2] == ["NaN", "-Infinity"]
    (back,) = AuditView.model_validate_json(a.text).records
    assert back.hash_ok() and back.record_hash == odd.record_hash
    assert audit_json(back) == audit_json(odd)  # the canonical bytes the hash covers
    assert math.isnan(back.min_support or 0.0) and back.attribution_coverage == math.inf


def test_the_readme_curl_example_is_a_valid_request(client: TestClient) -> None:
    """The README's `curl` body, sent as written: its collection is `demo`, the one of
    `serve --demo` and of this suite's store."""
    import json
    import re

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    (body,) = re.findall(
        r"curl -s http://127\.0\.0\.1:8000/v1/answer .*?-d '(\{.*?\})'", readme, re.S
    )
    request = json.loads(body)
    assert request["collection"] == "demo"
    r = client.post("/v1/answer", json=request)
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "OK" and r.json()["citations"]
