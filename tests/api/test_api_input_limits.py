"""Issue 34 item 5: one set of input limits on every route (413 size, 400 empty or invisible)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

INVISIBLE_ONLY = ["\u200d", "\u200c", "\u00ad", "\u034f", "\ufe0f", "\u200d\u200c\u00ad"]


@pytest.mark.parametrize("question", ["\u0005", "\u200b", *INVISIBLE_ONLY])
def test_assemble_prompt_refuses_an_empty_question_with_400(
    client: TestClient, question: str
) -> None:
    r = client.post("/v1/assemble-prompt", json={"question": question})
    assert r.status_code == 400, r.text  # was 500 "the question is empty"


def test_assemble_prompt_applies_the_answer_routes_limits(client: TestClient) -> None:
    assert client.post("/v1/assemble-prompt", json={"question": "pump\u0000"}).status_code == 400
    long = " ".join(["pump"] * 1200)
    assert client.post("/v1/answer", json={"question": long}).status_code == 413
    assert client.post("/v1/assemble-prompt", json={"question": long}).status_code == 413


@pytest.mark.parametrize("question", INVISIBLE_ONLY)
def test_an_invisible_only_question_is_400_not_no_evidence(
    client: TestClient, question: str
) -> None:
    r = client.post("/v1/answer", json={"question": question})
    assert r.status_code == 400, r.text


def test_steps_history_has_the_answer_routes_limits(client: TestClient) -> None:
    nul = [{"question": "Which pump?", "answer": "The HP-220\u0000."}]
    r = client.post("/v1/steps", json={"question": "What torque for its bolts?", "history": nul})
    assert r.status_code == 400, r.text
    huge = [{"question": "Which pump?", "answer": "x" * 28_000}] * 4  # 112,000 characters
    r = client.post("/v1/steps", json={"question": "What torque for its bolts?", "history": huge})
    assert r.status_code == 413, r.text
