"""Bad input is a 4xx problem+json with a clear message, never a 500; one error mapping."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from api_helpers import PLANT_QUESTION
from fastapi.testclient import TestClient

from citebound.api import create_app
from citebound.api.problems import STATUS_BY_ERROR, status_for
from citebound.config import Config
from citebound.errors import (
    AccessDenied,
    AuditError,
    CiteboundError,
    ConfigError,
    ContractError,
    NotFound,
    PipelineOrderError,
    ProviderError,
    StageError,
    StoreError,
)


def _problem(r: object, status: int) -> dict[str, object]:
    resp = r  # httpx.Response
    assert resp.status_code == status, resp.text  # type: ignore[attr-defined]
    assert resp.headers["content-type"].startswith("application/problem+json")  # type: ignore[attr-defined]
    body = resp.json()  # type: ignore[attr-defined]
    assert body["status"] == status and body["title"] and body["detail"]
    assert "Traceback" not in resp.text  # type: ignore[attr-defined]
    return body  # type: ignore[no-any-return]


def test_malformed_json_is_400(client: TestClient) -> None:
    r = client.post(
        "/v1/answer", content=b'{"question": "x",', headers={"content-type": "application/json"}
    )
    assert "not valid JSON" in str(_problem(r, 400)["detail"])


def test_unknown_field_is_422_naming_it(client: TestClient) -> None:
    r = client.post("/v1/answer", json={"question": "x", "colection": "demo"})
    body = _problem(r, 422)
    assert "colection" in str(body["detail"]) and "unknown field" in str(body["detail"])
    assert body["errors"] == [
        {"loc": "body.colection", "msg": "unknown field (not part of this endpoint's schema)"}
    ]


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        ({}, "body.question"),
        ({"question": ""}, "body.question"),
        ({"question": "x", "collection": "../etc"}, "body.collection"),
        ({"question": "x", "request_id": "a/b"}, "body.request_id"),
        ({"question": "x", "filters": {"equipment": "HP-220"}}, "body.filters.equipment"),
        ([1, 2], "body"),
    ],
)
def test_invalid_bodies_are_422(client: TestClient, payload: object, where: str) -> None:
    body = _problem(client.post("/v1/answer", json=payload), 422)
    assert any(e["loc"] == where for e in body["errors"]), body  # type: ignore[attr-defined]


def test_bad_filter_date_is_400(client: TestClient) -> None:
    r = client.post(
        "/v1/answer",
        json={"question": PLANT_QUESTION, "filters": {"date_range": {"start": "2024/03/05"}}},
    )
    assert "ISO date" in str(_problem(r, 400)["detail"])


def test_oversized_body_is_413(make_config: Callable[..., Config]) -> None:
    app = create_app(make_config(**{"api.max_body_bytes": 2048}))
    with TestClient(app, base_url="http://localhost") as c:
        big = {"question": "x" * 5000}
        assert "2048" in str(_problem(c.post("/v1/answer", json=big), 413)["detail"])

        # Without Content-Length (chunked upload) the limit still holds while reading.
        def chunks() -> object:
            for _ in range(10):
                yield b" " * 1000

        r = c.post("/v1/answer", content=chunks(), headers={"content-type": "application/json"})
        _problem(r, 413)
        assert c.post("/v1/answer", json={"question": PLANT_QUESTION}).status_code == 200


def test_unknown_route_and_method_are_problems(client: TestClient) -> None:
    _problem(client.get("/v1/nope"), 404)
    _problem(client.get("/v1/answer"), 405)
    # Every 405 says which methods the path has (#34: none had an Allow header).
    assert client.get("/v1/answer").headers["allow"] == "POST"
    assert client.delete("/v1/collections").headers["allow"] == "GET"
    assert client.put("/v1/audit/x").headers["allow"] == "GET"


def test_keys_required_when_configured(keyed_client: TestClient) -> None:
    r = keyed_client.post("/v1/answer", json={"question": PLANT_QUESTION})
    _problem(r, 401)
    assert r.headers["www-authenticate"] == "Bearer"
    bad = keyed_client.post(
        "/v1/answer", json={"question": "x"}, headers={"Authorization": "Bearer wrong"}
    )
    assert "not valid" in str(_problem(bad, 401)["detail"])
    ok = keyed_client.post(
        "/v1/answer", json={"question": PLANT_QUESTION}, headers={"X-API-Key": "key-demo-reader"}
    )
    assert ok.status_code == 200
    assert keyed_client.get("/healthz").json()["auth_required"] is True


def test_one_mapping_covers_the_tree() -> None:
    cases: list[tuple[CiteboundError, int]] = [
        (NotFound("x"), 404),
        (AccessDenied("x", status=401), 401),
        (AccessDenied("x"), 403),
        (ContractError("x"), 400),
        (PipelineOrderError("x"), 409),
        (ProviderError("x", reason_code="LLM_TIMEOUT", provider="p", transient=True), 503),
        (ProviderError("x", reason_code="LLM_AUTH", provider="p"), 502),
        (StageError("x", stage="a2", reason_code="STAGE_DISABLED"), 502),
        (StoreError("x"), 503),
        (AuditError("x"), 503),
        (ConfigError("x"), 500),
        (CiteboundError("x"), 500),
    ]
    for err, status in cases:
        assert status_for(err)[0] == status, err
    # Every class of the tree is listed explicitly.
    listed = {cls for cls, _, _ in STATUS_BY_ERROR}
    subclasses = set(CiteboundError.__subclasses__()) | {CiteboundError, ProviderError}
    assert subclasses <= listed


def test_audit_failure_is_503_not_an_answer(
    make_config: Callable[..., Config], tmp_path: object
) -> None:
    from citebound.audit import AuditRecord

    class BrokenSink:
        def append(self, record: AuditRecord) -> None:
            raise AuditError("disk full")

        def find(self, request_id: str) -> list[AuditRecord]:
            return []

        def records(self) -> list[AuditRecord]:
            return []

        def close(self) -> None:
            pass

    from citebound.pipeline import PipelineContext

    config = make_config()
    ctx = PipelineContext(config, sinks_override=[BrokenSink()])
    with TestClient(create_app(config, ctx=ctx), base_url="http://localhost") as c:
        r = c.post("/v1/answer", json={"question": PLANT_QUESTION})
        body = _problem(r, 503)
        assert "disk full" in str(body["detail"]) and "45 Nm" not in r.text
