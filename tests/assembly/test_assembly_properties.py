"""Hypothesis properties: order invariance, budgets never exceeded, never an exception."""

from __future__ import annotations

import json
from typing import Any

from assembly_factories import make_bundle, make_row
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citebound.assemble import assemble, assemble_and_build
from citebound.contracts import AssemblyStatus, BuildStatus
from citebound.policy import Policy, load_policy
from citebound.text import get_tokenizer

BASE = load_policy("strict-v1")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

words = st.text(
    alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "Zs", "Cc"]),
    min_size=1,
    max_size=400,
)


@st.composite
def bundles(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(min_value=1, max_value=25))
    rows = []
    for i in range(n):
        text = draw(
            st.one_of(words, st.sampled_from(["Shared sentence about pump P1.", "Torque 45 Nm."]))
        )
        rows.append(
            make_row(
                i,
                text=text,
                knowledge_id=f"doc-{draw(st.integers(0, 4))}",
                similarity=draw(st.floats(0.0, 1.0)),
            )
        )
    return make_bundle(rows)


@SETTINGS
@given(bundles(), st.randoms(use_true_random=False))
def test_any_permutation_of_rows_gives_the_same_prompt_bytes(b: dict[str, Any], rnd: Any) -> None:
    shuffled = dict(b, results=list(b["results"]))
    rnd.shuffle(shuffled["results"])
    first = assemble_and_build(b, BASE)
    second = assemble_and_build(shuffled, BASE)
    assert first.prompt.prompt_text.encode() == second.prompt.prompt_text.encode()
    assert first.bundle.anchor_map == second.bundle.anchor_map
    assert first.bundle.assembly_metrics == second.bundle.assembly_metrics


@st.composite
def policies(draw: st.DrawFn) -> Policy:
    evidence = draw(st.integers(min_value=50, max_value=2500))
    reserved = draw(st.integers(min_value=0, max_value=1000))
    total = evidence + reserved + draw(st.integers(min_value=0, max_value=1500))
    return Policy.model_validate(
        {
            **BASE.model_dump(),
            "max_evidence_tokens": evidence,
            "reserved_output_tokens": reserved,
            "max_total_prompt_tokens": total,
            "max_chunks": draw(st.integers(1, 10)),
            "max_chunks_per_knowledge_id": draw(st.integers(1, 4)),
            "max_chunk_token_ratio": draw(st.floats(0.05, 1.0)),
            "min_top_similarity": draw(st.floats(0.0, 0.6)),
            "min_similarity_floor": draw(st.floats(0.0, 0.6)),
            "tokenizer": draw(st.sampled_from(["cl100k_base", "chars", "o200k_base"])),
        }
    )


@SETTINGS
@given(bundles(), policies())
def test_budgets_are_never_exceeded(b: dict[str, Any], policy: Policy) -> None:
    out = assemble_and_build(b, policy)
    tok = get_tokenizer(policy.tokenizer)
    m = out.bundle.assembly_metrics
    assert m.selected_k <= policy.max_chunks
    counts: dict[str, int] = {}
    for e in out.bundle.selected_evidence:
        counts[e.knowledge_id] = counts.get(e.knowledge_id, 0) + 1
        assert (
            e.token_count <= int(policy.max_chunk_token_ratio * policy.max_evidence_tokens)
            or not e.truncated
        )
    assert all(c <= policy.max_chunks_per_knowledge_id for c in counts.values())
    if out.prompt.build_status is BuildStatus.OK:
        assert tok.count(out.bundle.evidence_block_text) <= policy.max_evidence_tokens
        assert out.prompt.token_counts is not None
        assert out.prompt.token_counts.total_prompt_tokens <= policy.max_total_prompt_tokens
        assert (
            tok.count(out.prompt.prompt_text) + policy.reserved_output_tokens
            <= policy.max_total_prompt_tokens
        )
    else:
        assert out.prompt.prompt_text == ""


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=20,
)


@st.composite
def malformed(draw: st.DrawFn) -> Any:
    b = make_bundle([make_row(i) for i in range(draw(st.integers(0, 4)))])
    for _ in range(draw(st.integers(1, 4))):
        rows = b.get("results")
        # An earlier step may have replaced `results` with any JSON value: only its dict rows
        # can be mutated further (a None row drew `.keys()` on None, a flaky generator).
        dicts = [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
        target = b
        if dicts and draw(st.booleans()):
            target = dicts[draw(st.integers(0, len(dicts) - 1))]
        key = draw(st.sampled_from(sorted([*target.keys(), "extra"])))
        if draw(st.booleans()):
            target.pop(key, None)
        else:
            target[key] = draw(json_values)
    return b


@SETTINGS
@given(st.one_of(malformed(), json_values, st.binary(max_size=60)))
def test_random_or_malformed_bundles_never_raise(raw: Any) -> None:
    if isinstance(raw, dict):
        variants: list[Any] = [raw, json.dumps(raw, default=str)]
    else:
        variants = [raw] if isinstance(raw, (bytes, str)) else [json.dumps(raw)]
    for v in variants:
        out = assemble_and_build(v, BASE)
        assert out.bundle.assembly_status in set(AssemblyStatus)
        if out.bundle.assembly_status is not AssemblyStatus.OK:
            assert out.prompt.prompt_text == ""
            assert out.bundle.failure_reason


@SETTINGS
@given(bundles())
def test_assembly_is_a_pure_function(b: dict[str, Any]) -> None:
    assert assemble(b, BASE) == assemble(json.dumps(b), BASE)
