"""The regeneration prompt (`regenerate_v1`): frozen, hash-pinned, golden bytes; it is the first
prompt byte for byte plus one section that names sentences by number and reason code only.
Regenerate goldens with CITEBOUND_UPDATE_GOLDEN=1 only for a reviewed contract change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from assembly_factories import make_bundle, make_row

from citebound.assemble import assemble, assemble_and_build
from citebound.contracts.base import sha256_hex
from citebound.contracts.execution import SentenceFailure
from citebound.contracts.retrieval import RetrievalBundle
from citebound.policy import Policy, load_policy
from citebound.prompt import build_prompt
from citebound.prompt.regenerate import (
    HEADER,
    build_regeneration_prompt,
    failure_lines,
    load_regenerate_template,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
UPDATE = os.environ.get("CITEBOUND_UPDATE_GOLDEN") == "1"
REGENERATE_SHA256 = "c24fffdef5a02c108aa683a70a7c3bc8c5168ab489ea10a51769faf0eb4d172b"
FAILURES = [
    SentenceFailure(index=1, reason_code="LOW_SUPPORT"),
    SentenceFailure(index=2, reason_code="UNCITED_FACTUAL_STATEMENT"),
    SentenceFailure(index=None, reason_code="META_COMMENTARY"),
]
ROWS = [
    make_row(0, text="Torque the impeller bolts of pump P-100 to 40 Nm in a cross pattern."),
    make_row(1, text="Check the mechanical seal for leaks after restarting the pump."),
]


def test_regenerate_template_hash_is_pinned() -> None:
    t = load_regenerate_template()
    assert (t.template_id, t.sha256) == ("regenerate_v1", REGENERATE_SHA256)
    assert t.text.startswith(HEADER + "\n")


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_bytes(text.encode("utf-8"))
    assert path.exists(), f"missing golden {path}; run with CITEBOUND_UPDATE_GOLDEN=1"
    assert text.encode("utf-8") == path.read_bytes()


def _policy(preset: str) -> Policy:
    return load_policy(preset)


@pytest.mark.parametrize(
    ("preset", "golden"),
    [("strict-v1", "regenerate_v1_qa.txt"), ("superprompt-v1", "regenerate_superprompt.txt")],
)
def test_golden_regeneration_prompt_bytes(preset: str, golden: str) -> None:
    policy = _policy(preset)
    if preset == "strict-v1":
        out = assemble_and_build(make_bundle(ROWS, user_question="What torque?"), policy)
    else:
        bundle = assemble(
            RetrievalBundle.model_validate(make_bundle(ROWS)), policy, question="What torque?"
        )
        out = build_prompt(bundle, policy)
    first = out.prompt
    assert first.build_status.value == "OK", first.message
    second = build_regeneration_prompt(first, out.bundle, policy, FAILURES)
    assert second.build_status.value == "OK"
    _golden(golden, second.prompt_text)
    # The first prompt, byte for byte, then one blank line and the frozen section.
    assert second.prompt_text.startswith(first.prompt_text)
    rest = second.prompt_text[len(first.prompt_text) :].lstrip("\n")
    assert rest.startswith(HEADER) and "\n\n\n" not in second.prompt_text[-len(rest) - 3 :]
    system, user = second.messages
    assert system.content == first.messages[0].content
    assert system.content + "\n\n" + user.content == second.prompt_text
    assert second.prompt_sha256 == sha256_hex(second.prompt_text) != first.prompt_sha256
    assert (second.template_id, second.template_sha256) == ("regenerate_v1", REGENERATE_SHA256)
    # Same inputs, same bytes.
    again = build_regeneration_prompt(first, out.bundle, policy, FAILURES)
    assert again.prompt_text == second.prompt_text


def test_failures_are_named_by_number_and_code_only() -> None:
    assert failure_lines(FAILURES) == (
        "- sentence 2: LOW_SUPPORT\n"
        "- sentence 3: UNCITED_FACTUAL_STATEMENT\n"
        "- the whole answer: META_COMMENTARY"
    )


def test_a_regeneration_prompt_over_budget_is_not_built() -> None:
    policy = load_policy("strict-v1")
    out = assemble_and_build(make_bundle(ROWS, user_question="What torque?"), policy)
    assert out.prompt.token_counts is not None
    total = out.prompt.token_counts.total_prompt_tokens
    tight = policy.evolve(max_evidence_tokens=1, max_total_prompt_tokens=total + 1)
    second = build_regeneration_prompt(out.prompt, out.bundle, tight, FAILURES)
    assert (second.build_status.value, second.failure_reason) == ("FAILED", "PROMPT_OVER_BUDGET")
    assert second.prompt_text == "" and second.messages == []
