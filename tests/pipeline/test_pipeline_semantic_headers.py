"""A0 (seed 002 §5.1): the ladder's templates step, `prompt_schema.json` as its data, and the
optional LLM header mapping (scripted model over real HTTP; fixed threshold; logged)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from importlib import resources

import pytest

from citebound.pipeline import Pipeline
from citebound.question.preprocess import map_header, preprocess
from citebound.testing import ScriptedLLMServer

PROMPT = (
    "Task: What torque should the HP-220 impeller bolts be tightened to?\n"
    "Wartungsfenster: night shift only\n"
    "Blah: irrelevant"
)


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as s:
        yield s


def test_prompt_schema_is_the_ladders_data() -> None:
    raw = resources.files("citebound.question").joinpath("prompt_schema.json").read_text("utf-8")
    schema = json.loads(raw)
    assert {
        "canonical_keys",
        "must_keys",
        "defaults",
        "aliases",
        "bilingual",
        "templates",
        "keywords",
        "typo_tolerance",
        "modes",
    } <= set(schema)
    assert schema["modes"]["semantic_enabled"] is False
    for phrase, key in schema["templates"].items():
        assert map_header(phrase).step == "templates" and map_header(phrase).key == key


@pytest.mark.parametrize(
    ("header", "key"),
    [
        ("What I need", "task"),
        ("Some background", "context"),
        ("Expected output", "format"),
        ("Who will read", "audience"),
        ("Act as", "system"),
    ],
)
def test_templates_step(header: str, key: str) -> None:
    decision = map_header(header)
    assert (decision.key, decision.step) == (key, "templates")


def test_template_header_makes_a_prompt_structured() -> None:
    body, unknown, decisions, _ = preprocess("What I need: torque of the bolts\nAct as: advisor")
    assert body.task == "torque of the bolts" and body.system == "advisor"
    assert [d.step for d in decisions] == ["templates", "templates"] and unknown == {}


@pytest.mark.integration
def test_llm_header_mapping_accepts_only_confident_canonical_keys(
    make_pipeline: Callable[..., Pipeline], server: ScriptedLLMServer
) -> None:
    server.reply(
        json.dumps(
            {
                "mappings": [
                    {"header": "Wartungsfenster", "key": "constraints", "confidence": 0.9},
                    {"header": "Blah", "key": "purpose", "confidence": 0.2},
                ]
            }
        )
    )
    server.reply(
        "NO_EVIDENCE: The provided evidence does not contain sufficient information "
        "to answer this question."
    )
    state = make_pipeline(
        **{
            "provider.name": "openai",
            "provider.model": "m",
            "provider.base_url": server.base_url,
            "stages.llm_header_mapping": True,
        }
    ).run(PROMPT)
    assert state.body is not None and state.body.constraints == "night shift only"
    assert state.extras["semantic_used"] is True
    assert state.extras["normalized_map"] == {"Wartungsfenster": "constraints"}
    assert state.extras["unknown_attributes"] == {"Blah": "irrelevant"}
    steps = {d["header"]: d["step"] for d in state.extras["decisions"]}
    assert steps["Wartungsfenster"] == "semantic" and steps["Blah"] == "semantic_rejected"
    call = state.extras["semantic_call"]
    assert len(call["prompt_sha256"]) == 64 and call["threshold"] == 0.7
    assert "CONSTRAINTS: night shift only" in state.prompt_ready
    sent = server.requests[0].messages()[1]["content"]
    assert '"Blah"' in sent and '"Wartungsfenster"' in sent and "Task" not in sent


def test_llm_header_mapping_off_keeps_unknown_headers(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    state = make_pipeline().run(PROMPT)
    assert state.extras["semantic_used"] is False
    assert set(state.extras["unknown_attributes"]) == {"Wartungsfenster", "Blah"}


def test_llm_header_mapping_without_an_llm_is_a_clear_error(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    state = make_pipeline(**{"stages.llm_header_mapping": True}).run(PROMPT)
    assert state.response is not None and state.response.failure_reason == "STAGE_DISABLED"
    assert "stages.llm_header_mapping" in state.extras["error"]["message"]
