"""`POST /v1/assemble-prompt` (seed 004): camelCase JSON in and out, your packs or retrieved
ones, collection access like `/v1/retrieve`, and 4xx problems for bad input."""

from __future__ import annotations

from api_helpers import PLANT_QUESTION, SECRET_MARKERS, auth
from fastapi.testclient import TestClient

from citebound import assemble_prompt


def test_retrieved_packs_from_the_collection(client: TestClient) -> None:
    r = client.post(
        "/v1/assemble-prompt",
        json={
            "question": PLANT_QUESTION,
            "limit": 3,
            "perHitNeighbors": 1,
            "rank": "bm25",
            "headroomTokens": 100000,
        },
    )
    assert r.status_code == 200, r.text
    out = r.json()
    assert set(out) == {"prompt", "citations", "tokensEstimated"}
    assert [c["marker"] for c in out["citations"]] == ["[¹]", "[²]", "[³]"]
    assert set(out["citations"][0]) == {"marker", "packId", "docId", "headingPath", "spanOffsets"}
    assert out["prompt"]["user"].startswith(PLANT_QUESTION + "\n\n[¹]\nDoc: ")
    assert out["prompt"]["user"].endswith("You may reference [¹]…[³].")
    assert out["tokensEstimated"] == len(out["prompt"]["system"]) + len(out["prompt"]["user"])


def test_given_packs_are_assembled_exactly_like_the_library(client: TestClient) -> None:
    packs = [
        {
            "id": "p1",
            "docId": "corpus:abc123",
            "headingPath": ["Chapter 3"],
            "score": 0.4,
            "spans": [
                {"chunkId": "p1", "text": "Neural networks are layered.", "start": 0, "end": 28}
            ],
        },
        {
            "id": "p2",
            "docId": "corpus:def",
            "score": 0.9,
            "spans": [{"chunkId": "p2", "text": "机器学习。", "start": 3, "end": 8}],
        },
    ]
    body = {
        "question": "What is 机器学习?",
        "packs": packs,
        "citationStyle": "footnote",
        "style": "summarize",
        "headroomTokens": 1000,
    }
    r = client.post("/v1/assemble-prompt", json=body)
    assert r.status_code == 200, r.text
    expected = assemble_prompt(
        "What is 机器学习?", packs, 1000, style="summarize", citation_style="footnote"
    )
    assert r.json() == expected.model_dump(mode="json", by_alias=True)
    assert [c["packId"] for c in r.json()["citations"]] == ["p2", "p1"]


def test_empty_packs_give_the_question_alone(client: TestClient) -> None:
    r = client.post("/v1/assemble-prompt", json={"question": "What is this?", "packs": []})
    assert r.status_code == 200 and r.json()["citations"] == []
    assert r.json()["prompt"]["user"] == "What is this?"


def test_bad_input_is_a_422_naming_the_field(client: TestClient) -> None:
    for body, field in [
        ({"question": "Q", "packs": [], "headroomTokens": -5}, "headroomTokens"),
        ({"question": "Q", "packs": [], "citationStyle": "decimal"}, "citationStyle"),
        ({"question": "", "packs": []}, "question"),
        ({"question": "Q", "packs": [], "colour": "red"}, "colour"),
    ]:
        r = client.post("/v1/assemble-prompt", json=body)
        assert r.status_code == 422, (body, r.text)
        assert field in r.text


def test_collection_access_is_enforced(keyed_client: TestClient) -> None:
    denied = keyed_client.post(
        "/v1/assemble-prompt",
        json={"question": "launch code", "collection": "secret"},
        headers=auth("demo-reader"),
    )
    assert denied.status_code == 403, denied.text
    assert not any(m in denied.text for m in SECRET_MARKERS)
    ok = keyed_client.post(
        "/v1/assemble-prompt", json={"question": PLANT_QUESTION}, headers=auth("demo-reader")
    )
    assert ok.status_code == 200, ok.text
    anonymous = keyed_client.post("/v1/assemble-prompt", json={"question": PLANT_QUESTION})
    assert anonymous.status_code == 401


def test_cli_retrieves_packs_from_a_store(api_store: object) -> None:
    """`citebound assemble-prompt` without --packs retrieves from the store (same packs as the
    library) and prints camelCase JSON; --packs-only prints the packs."""
    import json

    from click.testing import CliRunner

    from citebound.cli import main

    args = [
        "assemble-prompt",
        PLANT_QUESTION,
        "--store",
        str(api_store),
        "--collection",
        "demo",
        "--limit",
        "2",
        "--per-hit-neighbors",
        "1",
        "--headroom-tokens",
        "100000",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert [c["marker"] for c in out["citations"]] == ["[¹]", "[²]"]
    packs = CliRunner().invoke(main, [*args, "--packs-only"])
    assert packs.exit_code == 0, packs.stderr
    listed = json.loads(packs.stdout)
    assert [p["id"] for p in listed] == [c["packId"] for c in out["citations"]]
    assert all(len(p["spans"]) >= 1 and "docId" in p for p in listed)
