"""Access control: a reader of collection A never receives text, citations or document views
from collection B, through any endpoint. The positive control (the B reader does get the
secret) shows the probes would notice a leak."""

from __future__ import annotations

import json

import httpx
import pytest
from api_helpers import PLANT_QUESTION, SECRET_MARKERS, SECRET_QUESTION, auth
from fastapi.testclient import TestClient

from citebound.api import KeyRing, check_bind, hash_key, new_key
from citebound.config import ApiKey
from citebound.errors import AccessDenied, ConfigError

A = auth("demo-reader")


def _clean(r: httpx.Response, *ids: str) -> None:
    """No secret text, and none of the secret document's / chunks' ids, in the response."""
    leaked = [m for m in (*SECRET_MARKERS, *ids) if m in r.text]
    assert not leaked, f"{r.request.method} {r.request.url} leaked {leaked}: {r.text[:300]}"


def _secret_doc(c: TestClient) -> tuple[str, str]:
    kid, *chunk_ids = _secret_ids(c)
    return kid, chunk_ids[0]


def _secret_ids(c: TestClient) -> list[str]:
    store = c.app.state.runtime.ctx.store  # type: ignore[attr-defined]
    doc = store.list_documents("secret")[0]
    return [doc.knowledge_id, *(ch.chunk_id for ch in store.iter_chunks("secret"))]


def test_positive_control_secret_reader_gets_the_secret(keyed_client: TestClient) -> None:
    r = keyed_client.post(
        "/v1/answer", json={"question": SECRET_QUESTION}, headers=auth("secret-reader")
    )
    assert r.json()["status"] == "OK" and "4471-ALPHA" in r.json()["answer"], r.text
    kid, cid = _secret_doc(keyed_client)
    d = keyed_client.get(f"/v1/documents/{kid}?chunk_id={cid}", headers=auth("secret-reader"))
    assert d.status_code == 200 and "4471" in d.text


def test_reader_of_a_never_sees_b(keyed_client: TestClient) -> None:
    c = keyed_client
    kid, cid = _secret_doc(c)
    ids = _secret_ids(c)
    # The B reader's own request, for the feedback / audit / step-replay probes.
    theirs = c.post(
        "/v1/answer", json={"question": SECRET_QUESTION}, headers=auth("secret-reader")
    ).json()
    their_step = c.post(
        "/v1/steps",
        json={"question": SECRET_QUESTION, "to_end": False},
        headers=auth("secret-reader"),
    ).json()

    allowed = [
        c.post("/v1/answer", json={"question": SECRET_QUESTION}, headers=A),
        c.post("/v1/retrieve", json={"question": SECRET_QUESTION}, headers=A),
        c.post("/v1/steps", json={"question": SECRET_QUESTION, "to_end": True}, headers=A),
        c.post(
            "/v1/chat/completions",
            json={"model": "citebound", "messages": [{"role": "user", "content": SECRET_QUESTION}]},
            headers=A,
        ),
        c.post(
            "/v1/chat/completions",
            json={
                "model": "citebound",
                "stream": True,
                "messages": [{"role": "user", "content": SECRET_QUESTION}],
            },
            headers=A,
        ),
        c.get("/v1/collections", headers=A),
        c.get("/v1/models", headers=A),
    ]
    for r in allowed:
        assert r.status_code == 200, r.text
        _clean(r, *ids)
    assert allowed[0].json()["status"] == "NO_EVIDENCE"
    assert all(row["knowledge_id"] != kid for row in allowed[1].json()["results"])
    assert allowed[5].json()["collections"] == ["demo"]
    assert [m["id"] for m in allowed[6].json()["data"]] == ["citebound:demo"]

    forbidden = [
        c.post("/v1/answer", json={"question": SECRET_QUESTION, "collection": "secret"}, headers=A),
        c.post(
            "/v1/answer",
            json={"question": SECRET_QUESTION, "filters": {"collection": "secret"}},
            headers=A,
        ),
        c.post(
            "/v1/retrieve", json={"question": SECRET_QUESTION, "collection": "secret"}, headers=A
        ),
        c.post("/v1/steps", json={"question": SECRET_QUESTION, "collection": "secret"}, headers=A),
        # Replaying the B reader's step state: the token is bound to the B caller.
        c.post(
            "/v1/steps",
            json={"state": their_step["state"], "state_token": their_step["state_token"]},
            headers=A,
        ),
        c.post(
            "/v1/chat/completions",
            json={
                "model": "citebound:secret",
                "messages": [{"role": "user", "content": SECRET_QUESTION}],
            },
            headers=A,
        ),
        c.post(
            "/v1/chat/completions",
            json={
                "model": "citebound",
                "messages": [{"role": "user", "content": SECRET_QUESTION}],
                "citebound": {"collection": "secret"},
            },
            headers=A,
        ),
        c.get(f"/v1/audit/{theirs['request_id']}", headers=A),
    ]
    for r in forbidden:
        assert r.status_code == 403, r.text
        _clean(r, *ids)

    hidden = [
        c.get(f"/v1/documents/{kid}", headers=A),
        c.get(f"/v1/documents/{kid}?chunk_id={cid}", headers=A),
        c.post(
            "/v1/feedback",
            json={"request_id": theirs["request_id"], "verdict": "incorrect"},
            headers=A,
        ),
        c.get(f"/v1/audit/{theirs['request_id']}", headers=auth("demo-admin")),
    ]
    for r in hidden:
        assert r.status_code == 404, r.text
        _clean(r, *ids[1:])
    # The same 404 for a document that does not exist: no probing of other collections.
    missing = c.get("/v1/documents/does-not-exist", headers=A)
    assert missing.status_code == 404
    assert c.get(f"/v1/audit/{theirs['request_id']}", headers=auth("admin")).status_code == 200


def test_edited_step_state_is_refused(keyed_client: TestClient) -> None:
    c = keyed_client
    s = c.post("/v1/steps", json={"question": PLANT_QUESTION}, headers=A).json()
    state = json.loads(s["state"])
    state["collection"] = "secret"  # try to switch collection mid-request
    r = c.post(
        "/v1/steps",
        json={"state": json.dumps(state), "state_token": s["state_token"]},
        headers=A,
    )
    assert r.status_code == 403 and "state_token" in r.json()["detail"]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/documents/..",
        "/v1/documents/..%2F..%2Fetc%2Fpasswd",
        "/v1/documents/%2e%2e%2f%2e%2e%2fstore.sqlite",
        "/v1/documents/..%5C..%5Cstore.sqlite",
        "/v1/documents/a%00b",
        "/v1/documents/ok?chunk_id=..%2F..%2Fetc%2Fpasswd",
    ],
)
def test_document_views_reject_path_traversal(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code in (400, 404), r.text
    assert "root:" not in r.text and "SQLite format" not in r.text
    assert r.headers["content-type"].startswith("application/problem+json")


def test_keys_are_hashed_and_compared_in_constant_time() -> None:
    key, entry = new_key("ops", role="admin", collections=["demo"])
    assert entry.sha256 == hash_key(key) and key not in entry.model_dump_json()
    ring = KeyRing([entry, ApiKey(name="other", sha256=hash_key("k2"), collections=["*"])])
    assert ring.authenticate(key).name == "ops" and ring.authenticate(key).is_admin
    assert ring.authenticate("k2").all_collections
    for wrong in ("", None, key[:-1], key + "x", entry.sha256):
        with pytest.raises(AccessDenied) as err:
            ring.authenticate(wrong)
        assert err.value.status == 401
    with pytest.raises(ConfigError):
        KeyRing([entry, entry])
    import inspect

    assert "compare_digest" in inspect.getsource(KeyRing.authenticate)


def test_no_keys_means_loopback_only() -> None:
    empty = KeyRing([])
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        check_bind(host, empty)
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.org"):
        with pytest.raises(ConfigError, match="without API keys"):
            check_bind(host, empty)
    _, entry = new_key("ops", role="reader", collections=["*"])
    check_bind("0.0.0.0", KeyRing([entry]))


def test_keys_from_env_as_json() -> None:
    from citebound.config import load_config

    _, entry = new_key("ci", role="reader", collections=["demo"])
    cfg = load_config(env={"CITEBOUND_API_KEYS": json.dumps([entry.model_dump()])})
    assert cfg.api.keys == [entry]
    with pytest.raises(ConfigError, match="CITEBOUND_API_KEYS"):
        load_config(env={"CITEBOUND_API_KEYS": "not json"})
    with pytest.raises(ConfigError, match=r"api\.keys"):
        load_config(
            env={"CITEBOUND_API_KEYS": '[{"name": "x", "sha256": "abc", "collections": ["a"]}]'}
        )
