"""Fail-fast validation V1-V5 (seed 001) and R2.0A hard-fail conditions (seed 000)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from assembly_factories import make_bundle, make_row

from citebound.assemble import assemble
from citebound.contracts import AssemblyStatus, ReasonCode
from citebound.policy import load_policy

POLICY = load_policy("strict-v1")


def _without(d: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != key}


@pytest.mark.parametrize(
    ("mutate", "code"),
    [
        (lambda b: b["results"][0].pop("chunk_id"), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].pop("knowledge_id"), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].pop("chunk_text"), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].__setitem__("chunk_text", None), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].pop("rank"), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].__setitem__("rank", "0"), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].__setitem__("rank", 0.0), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].__setitem__("rank", True), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].pop("similarity"), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].__setitem__("similarity", "0.9"), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].__setitem__("similarity", None), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].__setitem__("surprise", 1), ReasonCode.V1_SCHEMA),
        (lambda b: b.__setitem__("results", "not a list"), ReasonCode.V1_SCHEMA),
        (lambda b: b.pop("results"), ReasonCode.V1_SCHEMA),
        (lambda b: b.pop("index_version"), ReasonCode.MISSING_TRACE),
        (lambda b: b.pop("embedding_model"), ReasonCode.MISSING_TRACE),
        (lambda b: b.__setitem__("index_version", ""), ReasonCode.MISSING_TRACE),
        (lambda b: b.pop("top_k"), ReasonCode.MISSING_TRACE),
        (lambda b: b["results"][1].__setitem__("chunk_id", "chunk-000"), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].__setitem__("chunk_id", "a|b"), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][0].__setitem__("knowledge_id", "doc]\n[C1"), ReasonCode.V1_SCHEMA),
        (lambda b: b["results"][1].__setitem__("rank", 0), ReasonCode.V2_RANK_INTEGRITY),
        (
            lambda b: [r.__setitem__("rank", r["rank"] + 1) for r in b["results"]],
            ReasonCode.V2_RANK_INTEGRITY,
        ),
        (lambda b: b["results"][0].__setitem__("rank", -1), ReasonCode.V2_RANK_INTEGRITY),
        (
            lambda b: b["results"][0].__setitem__("similarity", 1.5),
            ReasonCode.V3_SIMILARITY_INTEGRITY,
        ),
        (
            lambda b: b["results"][0].__setitem__("similarity", -0.1),
            ReasonCode.V3_SIMILARITY_INTEGRITY,
        ),
        (
            lambda b: b["results"][0].__setitem__("similarity", float("nan")),
            ReasonCode.V3_SIMILARITY_INTEGRITY,
        ),
        (
            lambda b: b["results"][0].__setitem__("similarity", float("inf")),
            ReasonCode.V3_SIMILARITY_INTEGRITY,
        ),
        (lambda b: b["results"][0].__setitem__("chunk_text", ""), ReasonCode.V4_TEXT_INTEGRITY),
        (
            lambda b: b["results"][0].__setitem__("chunk_text", "  \n\t "),
            ReasonCode.V4_TEXT_INTEGRITY,
        ),
        (
            lambda b: b["results"][0].__setitem__("knowledge_type_effective", "rumour"),
            ReasonCode.V5_DOMAIN_INTEGRITY,
        ),
        (lambda b: b.__setitem__("retrieval_status", "FAILED"), ReasonCode.RETRIEVAL_FAILED),
        (lambda b: b.__setitem__("retrieval_status", "MAYBE"), ReasonCode.V1_SCHEMA),
        (lambda b: b.__setitem__("user_question", "   "), ReasonCode.QUESTION_EMPTY),
        (lambda b: b.__setitem__("user_question", "why " * 400), ReasonCode.QUESTION_TOO_LONG),
    ],
)
def test_bad_bundle_is_failed_with_reason_code(mutate: Any, code: ReasonCode) -> None:
    b = make_bundle([make_row(0), make_row(1)])
    mutate(b)
    out = assemble(b, POLICY)
    assert out.assembly_status is AssemblyStatus.FAILED
    assert code.value in out.reason_codes
    assert out.messages and all(m for m in out.messages)
    assert out.evidence_block_text == "" and out.selected_evidence == []


def test_similarity_score_alias_and_faiss_id_accepted() -> None:
    r = _without(make_row(0), "similarity") | {"similarity_score": 0.9, "faiss_id": 17}
    out = assemble(make_bundle([r]), POLICY)
    assert out.assembly_status is AssemblyStatus.OK
    assert out.selected_evidence[0].similarity_score == 0.9


def test_integer_similarity_is_a_number() -> None:
    out = assemble(make_bundle([make_row(0, similarity=1)]), POLICY)
    assert out.assembly_status is AssemblyStatus.OK


def test_empty_bundle_is_no_evidence_only_when_retrieval_says_so() -> None:
    ok = assemble(make_bundle([], retrieval_status="NO_EVIDENCE"), POLICY)
    assert ok.assembly_status is AssemblyStatus.NO_EVIDENCE
    bad = assemble(make_bundle([], retrieval_status="SUCCESS"), POLICY)
    assert bad.assembly_status is AssemblyStatus.FAILED
    assert bad.failure_reason == ReasonCode.EMPTY_BUNDLE


def test_gate_refused_bundle_with_rows_is_no_evidence() -> None:
    out = assemble(make_bundle([make_row(0)], retrieval_status="NO_EVIDENCE"), POLICY)
    assert out.assembly_status is AssemblyStatus.NO_EVIDENCE
    assert out.failure_reason == ReasonCode.RETRIEVAL_NO_EVIDENCE


@pytest.mark.parametrize("raw", ["", "not json", "[1,2]", b"\xff\xfe", "null", "42"])
def test_garbage_input_is_failed_never_raises(raw: str | bytes) -> None:
    out = assemble(raw, POLICY, request_id="fallback")
    assert out.assembly_status is AssemblyStatus.FAILED
    assert out.failure_reason == ReasonCode.V1_SCHEMA
    assert out.request_id == "fallback"


def test_unordered_rows_are_reordered_by_rank() -> None:
    rows = [make_row(2), make_row(0), make_row(1)]
    out = assemble(json.dumps(make_bundle(rows)), POLICY)
    assert [e.rank for e in out.selected_evidence] == [0, 1, 2]
    assert [e.citation_anchor for e in out.selected_evidence] == ["C0", "C1", "C2"]


def test_non_contiguous_ranks_are_allowed() -> None:
    out = assemble(make_bundle([make_row(0), make_row(3), make_row(7)]), POLICY)
    assert out.assembly_status is AssemblyStatus.OK
    assert [e.rank for e in out.selected_evidence] == [0, 3, 7]


def test_any_knowledge_type_under_hybridrag() -> None:
    out = assemble(
        make_bundle([make_row(0, knowledge_type_effective="rumour")]), load_policy("hybridrag")
    )
    assert out.assembly_status is AssemblyStatus.OK


def test_bad_trace_field_types_are_missing_trace() -> None:
    out = assemble('{"request_id": 5}', POLICY)
    assert out.assembly_status is AssemblyStatus.FAILED
    assert out.failure_reason == ReasonCode.MISSING_TRACE
    assert out.trace is None
