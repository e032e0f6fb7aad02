"""Issue 34 item 5 (reproduction 6): request ids are scoped by collection.

A reader key for `demo` posting an id that `secret` will use must neither claim it (secret's
later request with that id is answered) nor learn whether secret has recorded it (the reply is
the one an unused id gets)."""

from __future__ import annotations

from api_helpers import PLANT_QUESTION, UNANSWERABLE, auth
from fastapi.testclient import TestClient


def _ask(c: TestClient, key: str, rid: str, question: str = UNANSWERABLE) -> tuple[int, dict]:
    r = c.post("/v1/answer", json={"question": question, "request_id": rid}, headers=auth(key))
    return r.status_code, r.json()


def test_another_collections_id_is_not_claimed(keyed_client: TestClient) -> None:
    c = keyed_client
    squat, body = _ask(c, "demo-reader", "secret-ticket-42")
    assert squat == 200 and body["request_id"] == "demo:secret-ticket-42"
    code, theirs = _ask(c, "secret-reader", "secret-ticket-42")
    assert code == 200, theirs
    assert theirs["request_id"] == "secret:secret-ticket-42"
    # Within one collection the id is still used once: the second post is the 409.
    again, problem = _ask(c, "secret-reader", "secret-ticket-42")
    assert again == 409 and "secret:secret-ticket-42" in problem["detail"]


def test_a_409_never_confirms_another_collections_id(keyed_client: TestClient) -> None:
    c = keyed_client
    assert _ask(c, "secret-reader", "launch-7")[0] == 200
    # The demo key posting secret's id (bare or scoped) is answered as a new id of demo.
    for rid in ("launch-7", "secret:launch-7"):
        code, body = _ask(c, "demo-reader", rid, PLANT_QUESTION)
        assert code == 200, body
        assert body["request_id"] == f"demo:{rid}"
    # Each record is its own collection's: one per scoped id.
    rt = c.app.state.runtime  # type: ignore[attr-defined]
    sink = rt.ctx.sinks[0]
    assert [r.request_id for r in sink.find("secret:launch-7")] == ["secret:launch-7"]
    assert len(sink.find("demo:secret:launch-7")) == 1


def test_steps_scope_request_ids_too(keyed_client: TestClient) -> None:
    c = keyed_client
    start = {"question": UNANSWERABLE, "request_id": "s-9", "to_end": True}
    first = c.post("/v1/steps", json=start, headers=auth("demo-reader"))
    assert first.status_code == 200, first.text
    other = c.post("/v1/steps", json=start, headers=auth("secret-reader"))
    assert other.status_code == 200, other.text
    assert c.post("/v1/steps", json=start, headers=auth("demo-reader")).status_code == 409


def test_feedback_and_audit_by_the_scoped_id(keyed_client: TestClient) -> None:
    """A refusal cites nothing, but its scoped id names its collection: its own reader may
    judge it; another collection's reader gets the 404 of an unknown id."""
    c = keyed_client
    _, body = _ask(c, "secret-reader", "fb-1")
    rid = body["request_id"]
    verdict = {"request_id": rid, "verdict": "correct"}
    assert c.post("/v1/feedback", json=verdict, headers=auth("secret-reader")).status_code == 201
    assert c.post("/v1/feedback", json=verdict, headers=auth("demo-reader")).status_code == 404
    assert c.get(f"/v1/audit/{rid}", headers=auth("admin")).status_code == 200
    assert c.get(f"/v1/audit/{rid}", headers=auth("demo-admin")).status_code == 404
