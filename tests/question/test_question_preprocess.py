"""A0 mapping ladder and MUST fields (seed 002 §5.1)."""

from __future__ import annotations

import pytest

from citebound.question import map_header, preprocess, retrieval_query


@pytest.mark.parametrize(
    ("header", "key", "step"),
    [
        ("TASK", "task", "exact"),
        ("  Context ", "context", "exact"),
        ("Question", "task", "alias"),
        ("Goal", "purpose", "alias"),
        ("Output format", "format", "alias"),
        ("Contxt", "context", "typo"),
        ("purpse", "purpose", "typo"),
        ("Taks", "task", "typo"),
        ("Aufgabe", "task", "bilingual"),
        ("Zielgruppe", "audience", "bilingual"),
        ("Hintergrund", "context", "bilingual"),
        ("Desired output format", "format", "keyword"),
        ("Target audience", "audience", "keyword"),
        ("Note", None, "unknown"),
        ("ABC", None, "unknown"),
    ],
)
def test_mapping_ladder(header: str, key: str | None, step: str) -> None:
    d = map_header(header)
    assert (d.key, d.step) == (key, step)


def test_plain_question_becomes_task_verbatim() -> None:
    body, unknown, decisions, ready = preprocess("  What torque for the HP-220   bolts?\n")
    assert body.task == "What torque for the HP-220 bolts?"
    assert unknown == {} and decisions == []
    assert ready == "TASK: What torque for the HP-220 bolts?"


def test_text_with_an_unknown_colon_line_stays_plain() -> None:
    body, unknown, _, _ = preprocess("Note: the pump is loud. Why?")
    assert body.task == "Note: the pump is loud. Why?"
    assert unknown == {}


def test_structured_prompt_with_unknown_header_in_extras() -> None:
    text = "TASK: Find the torque\nKontext: HP-220 pump\nzweck: audit\nPriority: high\nsecond line"
    body, unknown, decisions, ready = preprocess(text)
    assert (body.task, body.context, body.purpose) == ("Find the torque", "HP-220 pump", "audit")
    assert unknown == {"Priority": "high\nsecond line"}
    assert [d.step for d in decisions] == ["exact", "typo", "bilingual", "unknown"]
    assert ready.splitlines() == ["TASK: Find the torque", "CONTEXT: HP-220 pump", "PURPOSE: audit"]
    assert retrieval_query(body) == "Find the torque HP-220 pump audit"


def test_task_context_rule() -> None:
    body, *_ = preprocess("CONTEXT: HP-220 bolts loosened after service")
    assert body.task == "HP-220 bolts loosened after service"
    body, *_ = preprocess("Why did it fail?\nCONTEXT: incident 117")
    assert body.task == "Why did it fail?" and body.context == "incident 117"


def test_preprocess_is_deterministic() -> None:
    text = "Aufgabe: x\nZiel: y\nFormat: table"
    assert preprocess(text) == preprocess(text)
