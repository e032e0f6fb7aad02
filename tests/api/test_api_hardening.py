"""Regression tests of issue #21: each fails on the code before the fix.

H1 step mode hands out no model text; H2 every model call is recorded once, and a state cannot
be replayed into a second call; M3 one input size policy; M5 Host allow-list and CORS; M6
feedback across collections; step tokens bound to the key, non-ASCII tokens a 4xx."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from api_helpers import KEYS, PLANT_QUESTION, UNANSWERABLE, auth
from fastapi.testclient import TestClient

from citebound.api import create_app, hash_key
from citebound.config import Config
from citebound.contracts.provider import ProviderReply, ProviderRequest
from citebound.pipeline import PipelineContext

INVENTED = "The bolts need 99 bar. HALLUCINATED-4242 [C1]"


class CountingInventor:
    """Answers with an invented fact (the validator rejects it) and counts its calls."""

    name = "inventing"
    model = "inventing-v1"

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def complete(self, request: ProviderRequest) -> ProviderReply:
        with self._lock:
            self.calls += 1
        return ProviderReply(text=INVENTED, finish_reason="stop")


@contextmanager
def inventing_client(config: Config) -> Iterator[tuple[TestClient, CountingInventor]]:
    provider = CountingInventor()
    ctx = PipelineContext(config, provider_override=provider)
    with TestClient(create_app(config, ctx=ctx), base_url="http://localhost") as c:
        yield c, provider


def records(c: TestClient, request_id: str) -> int:
    """Records of the caller's `request_id`, recorded scoped by its collection (`demo`)."""
    rt = c.app.state.runtime  # type: ignore[attr-defined]
    return len(rt.ctx.sinks[0].find(f"demo:{request_id}"))


def step(c: TestClient, prev: dict[str, Any], **kw: Any) -> Any:
    return c.post(
        "/v1/steps", json={"state": prev["state"], "state_token": prev["state_token"], **kw}
    )


def to_prompt_built(c: TestClient, request_id: str) -> dict[str, Any]:
    s = c.post("/v1/steps", json={"question": PLANT_QUESTION, "request_id": request_id}).json()
    while s["next_stage"] != "executed":
        s = step(c, s).json()
    return s  # type: ignore[no-any-return]


# --- H1 / H2 -------------------------------------------------------------------------------


def test_step_mode_never_returns_rejected_model_text(make_config: Callable[..., Config]) -> None:
    with inventing_client(make_config()) as (c, _):
        s = to_prompt_built(c, "h1-steps")
        done = step(c, s)
        assert done.status_code == 200
        body = done.json()
        assert body["result"]["response"]["status"] == "FAILED"
        assert "HALLUCINATED" not in done.text and "99 bar" not in done.text
        verdict = next(v for v in body["views"] if v["stage"] == "validated")["verdict"]
        assert "UNSUPPORTED_NEW_FACT" in verdict["reason_codes"]
        assert "withheld" in verdict["message"]
        auto = c.post("/v1/steps", json={"question": PLANT_QUESTION, "to_end": True})
        assert "HALLUCINATED" not in auto.text and "99 bar" not in auto.text


def test_the_model_call_is_recorded_before_its_state_leaves(
    make_config: Callable[..., Config],
) -> None:
    with inventing_client(make_config()) as (c, provider):
        s = to_prompt_built(c, "h2-record")
        assert provider.calls == 0 and records(c, "h2-record") == 0
        r = step(c, s, stage="executed").json()
        # Whether or not the caller steps on, the request is recorded now, once.
        assert provider.calls == 1 and records(c, "h2-record") == 1
        assert r["next_stage"] is None


def test_a_pre_model_state_cannot_be_replayed_into_a_second_call(
    make_config: Callable[..., Config],
) -> None:
    with inventing_client(make_config()) as (c, provider):
        s = to_prompt_built(c, "h2-replay")
        assert step(c, s).status_code == 200
        for _ in range(5):
            again = step(c, s)
            assert again.status_code == 409, again.text
            assert again.headers["content-type"].startswith("application/problem+json")
        assert provider.calls == 1 and records(c, "h2-replay") == 1


def test_concurrent_replays_make_one_model_call(make_config: Callable[..., Config]) -> None:
    with inventing_client(make_config()) as (c, provider):
        s = to_prompt_built(c, "h2-race")
        codes: list[int] = []
        threads = [
            threading.Thread(target=lambda: codes.append(step(c, s).status_code)) for _ in range(6)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(codes) == [200] + [409] * 5
        assert provider.calls == 1 and records(c, "h2-race") == 1


# --- step tokens ---------------------------------------------------------------------------


def test_non_ascii_state_token_is_403_not_500(client: TestClient) -> None:
    s = client.post("/v1/steps", json={"question": PLANT_QUESTION}).json()
    r = client.post("/v1/steps", json={"state": s["state"], "state_token": "v2.ü€😀"})
    assert r.status_code == 403, r.text


def test_a_new_key_with_a_revoked_keys_name_cannot_continue_its_states(
    make_config: Callable[..., Config], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEBOUND_API_STATE_SECRET", "shared-secret-for-replicas")

    def keyed(key: str) -> Config:
        entry = {"name": "ops", "sha256": hash_key(key), "role": "reader", "collections": ["*"]}
        return make_config(**{"api.keys": [entry]})

    with TestClient(create_app(keyed("old-key")), base_url="http://localhost") as old:
        bearer = {"Authorization": "Bearer old-key"}
        s = old.post("/v1/steps", json={"question": PLANT_QUESTION}, headers=bearer).json()
        assert step(old, s).status_code == 401  # sanity: the key is required
    with TestClient(create_app(keyed("new-key")), base_url="http://localhost") as new:
        r = new.post(
            "/v1/steps",
            json={"state": s["state"], "state_token": s["state_token"]},
            headers={"Authorization": "Bearer new-key"},
        )
        assert r.status_code == 403, r.text


# --- M3: one input size policy -------------------------------------------------------------

CHAT = "/v1/chat/completions"


def _chat(content: str, *, history: int = 0) -> dict[str, Any]:
    earlier = [{"role": "user", "content": "x" * 2000}, {"role": "assistant", "content": "ok"}]
    return {
        "model": "citebound",
        "messages": earlier * history + [{"role": "user", "content": content}],
    }


def _message(r: Any) -> str:
    """The error text: problem+json `detail`, or OpenAI's `error.message` on the OpenAI routes."""
    body = r.json()
    return str(body["error"]["message"] if "error" in body else body["detail"])


@pytest.mark.parametrize("path", [CHAT, "/v1/responses"])
def test_a_model_and_a_collection_that_disagree_are_400(client: TestClient, path: str) -> None:
    """#34: `model: citebound:secret` with `citebound.collection: demo` was answered from
    demo and reported as secret."""
    ask = {"role": "user", "content": "What is the torque?"}
    body: dict[str, Any] = ({"messages": [ask]} if path == CHAT else {"input": [ask]}) | {
        "model": "citebound:secret",
        "citebound": {"collection": "demo"},
    }
    r = client.post(path, json=body)
    assert r.status_code == 400, r.text
    assert "names collection 'secret' but citebound.collection is 'demo'" in _message(r)
    same = client.post(path, json=body | {"citebound": {"collection": "secret"}})
    assert same.status_code == 200, same.text


def test_chat_completions_has_the_size_limit(client: TestClient) -> None:
    big = client.post(CHAT, json=_chat("What torque? " + "pad " * 5000))
    assert big.status_code == 413 and "8000" in _message(big)
    history = client.post(CHAT, json=_chat(PLANT_QUESTION, history=4))  # 8,000+ in all
    assert history.status_code == 413 and "api.max_input_chars" in _message(history)
    text = client.get("/metrics").text
    assert all(f'citebound_answers_total{{status="{s}"}} 0' in text for s in ("OK", "FAILED"))


@pytest.mark.parametrize("path", ["/v1/answer", "/v1/steps", "/v1/retrieve", CHAT])
def test_whitespace_and_over_token_questions_are_4xx(client: TestClient, path: str) -> None:
    def ask(q: str) -> Any:
        if path == CHAT:
            return client.post(path, json=_chat(q))
        return client.post(path, json={"question": q})

    blank = ask(" \n\t ")
    assert blank.status_code in (400, 422), blank.text
    long = ask("bolt torque " * 200)  # ~400 tokens, 2,400 characters
    assert long.status_code == 413, long.text
    assert "max_question_tokens 256" in _message(long)


@pytest.mark.parametrize(
    "path", ["/v1/answer", "/v1/steps", "/v1/retrieve", "/v1/assemble-prompt", CHAT]
)
def test_a_question_over_8000_characters_is_413_on_every_route(
    client: TestClient, path: str
) -> None:
    """#34: the contracts' max_length made it 422 where docs/api.md says 413."""
    question = "x" * 8001
    r = client.post(path, json=_chat(question) if path == CHAT else {"question": question})
    assert r.status_code == 413, r.text
    assert "8000" in _message(r)


@pytest.mark.parametrize("path", ["/v1/answer", "/v1/steps", "/v1/retrieve", CHAT])
def test_a_question_holding_nul_is_400_before_any_work(client: TestClient, path: str) -> None:
    # PostgreSQL stores no U+0000: the audit could not keep this question, so no work starts.
    question = PLANT_QUESTION.replace(" ", "\x00", 1)
    body = _chat(question) if path == CHAT else {"question": question}
    r = client.post(path, json=body)
    assert r.status_code == 400 and "U+0000" in _message(r), r.text
    text = client.get("/metrics").text
    assert all(f'citebound_answers_total{{status="{s}"}} 0' in text for s in ("OK", "FAILED"))


@pytest.mark.parametrize("path", ["/v1/answer", "/v1/steps", "/v1/retrieve", CHAT])
def test_a_question_with_a_lone_surrogate_is_400_before_any_work(
    client: TestClient, path: str
) -> None:
    # "\ud800" is valid JSON and no character: the tokenizer and the audit hash fail on it.
    # The request models refuse it as a string (422); a chat message's text is checked by
    # the input limits (400). Either way a 4xx saying so, and no work.
    question = PLANT_QUESTION.replace(" ", "\ud800", 1)
    body = _chat(question) if path == CHAT else {"question": question}
    r = client.post(path, content=json.dumps(body), headers={"content-type": "application/json"})
    assert r.status_code in (400, 422) and "unicode" in _message(r).casefold(), r.text
    text = client.get("/metrics").text
    assert all(f'citebound_answers_total{{status="{s}"}} 0' in text for s in ("OK", "FAILED"))


def test_the_input_limit_is_configurable(make_config: Callable[..., Config]) -> None:
    with TestClient(
        create_app(make_config(**{"api.max_input_chars": 40})), base_url="http://localhost"
    ) as c:
        r = c.post("/v1/answer", json={"question": PLANT_QUESTION})
        assert r.status_code == 413 and "40 characters" in r.json()["detail"]


# --- M5: Host allow-list and CORS -----------------------------------------------------------


def test_foreign_host_header_is_refused(client: TestClient) -> None:
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", ""):
        r = client.get("/v1/collections", headers={"Host": host})
        assert r.status_code == 421, host
        assert "allowed_hosts" in r.json()["detail"]
    for host in ("localhost", "localhost:8000", "127.0.0.1:5", "[::1]:8000"):
        assert client.get("/v1/collections", headers={"Host": host}).status_code == 200, host


def test_allowed_hosts_and_cors_are_configurable(make_config: Callable[..., Config]) -> None:
    config = make_config(
        **{"api.allowed_hosts": ["qa.internal"], "api.cors_origins": ["https://app.internal"]}
    )
    with TestClient(create_app(config), base_url="http://qa.internal") as c:
        assert c.get("/healthz").status_code == 200
        assert c.get("/healthz", headers={"Host": "localhost"}).status_code == 421
        pre = {"Origin": "https://app.internal", "Access-Control-Request-Method": "POST"}
        ok = c.options("/v1/answer", headers=pre)
        assert ok.headers.get("access-control-allow-origin") == "https://app.internal"
        bad = c.options("/v1/answer", headers={**pre, "Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in bad.headers


def test_no_cors_by_default(client: TestClient) -> None:
    r = client.get("/healthz", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers


# --- M6: feedback across collections -------------------------------------------------------


def test_feedback_on_a_record_without_evidence_is_404_for_scoped_keys(
    keyed_client: TestClient,
) -> None:
    """An early failure (or a refusal) cites no document, so its record does not say whose
    it is: only a key on every collection may judge it, and others get the 404 of an
    unknown id (they cannot learn which ids exist)."""
    from citebound.audit import build_audit_record
    from citebound.respond import package_failure

    c = keyed_client
    rt = c.app.state.runtime  # type: ignore[attr-defined]
    failure = package_failure("m6-early", "RETRIEVAL_FAILED", latency_ms=1.0)
    rt.ctx.sinks[0].append(
        build_audit_record(policy=rt.ctx.policy, question="zebra launch?", response=failure)
    )
    body = {"request_id": "m6-early", "verdict": "incorrect"}
    theirs = c.post("/v1/feedback", json=body, headers=auth("demo-reader"))
    absent = c.post(
        "/v1/feedback", json={**body, "request_id": "m6-nope"}, headers=auth("demo-reader")
    )
    assert theirs.status_code == absent.status_code == 404
    assert theirs.json()["detail"].replace("m6-early", "ID") == absent.json()["detail"].replace(
        "m6-nope", "ID"
    )
    assert c.post("/v1/feedback", json=body, headers=auth("admin")).status_code == 201


def test_feedback_on_another_collections_refusal_is_404(keyed_client: TestClient) -> None:
    c = keyed_client
    r = c.post(
        "/v1/answer",
        json={"question": UNANSWERABLE, "request_id": "m6-secret-refusal"},
        headers=auth("secret-reader"),
    )
    assert r.json()["status"] == "NO_EVIDENCE"
    rid = r.json()["request_id"]
    assert rid == "secret:m6-secret-refusal"  # scoped by its collection
    body = {"request_id": rid, "verdict": "incorrect"}
    theirs = c.post("/v1/feedback", json=body, headers=auth("demo-reader"))
    absent = c.post(
        "/v1/feedback", json={**body, "request_id": "m6-nope"}, headers=auth("demo-reader")
    )
    assert theirs.status_code == absent.status_code == 404
    assert theirs.json()["detail"].replace(rid, "ID") == absent.json()["detail"].replace(
        "m6-nope", "ID"
    )
    assert c.post("/v1/feedback", json=body, headers=auth("admin")).status_code == 201
    assert KEYS["admin"][2] == ["*"]


@pytest.mark.parametrize(
    ("switch", "stage"),
    [
        ("llm_header_mapping", "preprocessed"),
        ("llm_shape", "a2"),
        ("llm_rewrite", "retrieval"),
        ("llm_gate", "a3"),
        ("llm_condense", "a4"),
        ("llm_format", "a5"),
    ],
)
def test_every_llm_switch_makes_its_stage_a_recorded_model_call(switch: str, stage: str) -> None:
    """Step mode records a request in the call that reaches a model: every `[stages] llm_*`
    switch must name its stage, or a caller could stop stepping after an unaudited call."""
    from types import SimpleNamespace

    from citebound.api.steps import model_stages
    from citebound.config import StageSwitches

    off = SimpleNamespace(config=SimpleNamespace(stages=StageSwitches()))
    on = SimpleNamespace(config=SimpleNamespace(stages=StageSwitches(**{switch: True})))
    assert model_stages(off) == {"executed"}  # type: ignore[arg-type]
    assert model_stages(on) == {"executed", stage}  # type: ignore[arg-type]
