"""The builder produces one complete, hashed record for every request path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from audit_samples import (
    EVIDENCE,
    OK_TEXT,
    PATHS,
    POLICY,
    QUESTION,
    record_for,
    with_conversation,
)

from citebound.audit import build_audit_record
from citebound.contracts.audit import AUDIT_SCHEMA_VERSION, AuditRecord
from citebound.contracts.base import sha256_hex
from citebound.errors import ContractError
from citebound.respond import package_failure


@pytest.mark.parametrize("path", PATHS)
def test_every_path_builds_a_hashed_record(path: str) -> None:
    r = record_for(path)
    assert r.hash_ok()
    assert r.record_hash.startswith("sha256:")
    assert r.question == QUESTION and r.policy_version == POLICY.policy_version
    assert r.policy_fingerprint == POLICY.fingerprint
    assert r.prompt_text is None and r.evidence_texts is None  # nothing opted in
    tampered = r.model_copy(update={"latency_ms": r.latency_ms + 1})
    assert not tampered.hash_ok()


def test_ok_record_columns() -> None:
    r = record_for("ok")
    assert (r.status, r.generation_status, r.validation_status) == ("OK", "OK", "PASSED")
    assert r.validated_answer_text == OK_TEXT and r.raw_model_text == OK_TEXT
    assert r.validated_citations == ["C0", "C1"] and r.citation_count == 2
    assert r.anchor_map == {"C0": sha256_hex(EVIDENCE[0])[:16], "C1": sha256_hex(EVIDENCE[1])[:16]}
    assert [(e.anchor, e.similarity_score, e.rank) for e in r.evidence] == [
        ("C0", 0.9, 0),
        ("C1", 0.8, 1),
    ]
    assert r.evidence[0].text_sha256 == sha256_hex(EVIDENCE[0])
    assert (r.model_name, r.attempts, r.total_tokens, r.latency_ms) == ("test-model", 1, 340, 250.0)
    assert (r.embedding_model, r.index_version, r.run_id) == ("test-embedder", "idx-1", "run-1")
    assert r.prompt_sha256 and r.validator_version


def test_rejected_record_keeps_raw_text_but_no_validated_text() -> None:
    r = record_for("rejected")
    assert r.validation_status == "FAILED" and r.failure_reason == "INVALID_CITATION_REFERENCE"
    assert r.validated_answer_text is None and r.raw_model_text is not None
    assert r.invalid_anchor_count == 1


def test_retries_exhausted_record() -> None:
    r = record_for("retries_exhausted")
    assert (r.status, r.failure_reason, r.llm_failure_reason, r.attempts) == (
        "FAILED",
        "GENERATION_FAILED",
        "LLM_RETRIES_EXHAUSTED",
        3,
    )


def test_paths_without_a_model() -> None:
    gate = record_for("gate")
    assert (gate.status, gate.generation_status, gate.validation_status) == (
        "NO_EVIDENCE",
        "NO_EVIDENCE",
        None,
    )
    assert gate.raw_model_text is None and gate.attempts == 0 and gate.prompt_sha256 is None
    failed = record_for("assembly_failed")
    assert (failed.status, failed.assembly_status, failed.failure_reason) == (
        "FAILED",
        "FAILED",
        "RETRIEVAL_NO_EVIDENCE",
    )
    early = record_for("early_failure")
    assert (early.assembly_status, early.failure_reason) == (None, "RETRIEVAL_FAILED")


def test_opt_in_columns() -> None:
    r = record_for("ok", store_evidence_text=True)
    assert r.evidence_texts == EVIDENCE and r.hash_ok()


def test_mixed_requests_are_refused() -> None:
    b = record_for("ok")
    resp = package_failure("other", "X", latency_ms=1.0)
    from citebound.testing.bundles import make_answer_bundle

    with pytest.raises(ContractError):
        build_audit_record(
            policy=POLICY, response=resp, question="q", bundle=make_answer_bundle(EVIDENCE)
        )
    assert b.request_id == "req-1"


# record_hash of every sample path as citebound wrote it with schema version 1 (before the
# reranker field existed), computed by that version's code. A v1 record must keep its hash.
V1_HASHES = {
    "ok": "sha256:01af56789d4bb7bdee5a3fe10f6b1ef704e826f81004c58030a363dec6d33e1d",
    "refusal": "sha256:4baf5e04de24a5a4b5c6cf2b9deeeed2c1ce8141f949fb6b16dc71719aad404c",
    "rejected": "sha256:0fd9cb98d14893e6c2fbb01ca8e818fac1e57d79fadd5cd497f1d24c6fb268ba",
    "retries_exhausted": "sha256:f2e0849b8f3937ee9ace027e84a24dc99717a35dafde7b7eb58a476f31579d6e",
    "gate": "sha256:31d9efce20c5e60d0fc22c21c35755ae620fa407f315cc9872f25bf4e48e3f06",
    "assembly_failed": "sha256:b6ea1625d8aa59c3c2ee683653fcf244c7b8e961c7fe1109851b9847714a66cf",
    "early_failure": "sha256:5686b8013c6bda7ae4d916387efacf5bdfd3170f843b60bdbacf12c32cb14d71",
}


# Records exactly as citebound wrote them with schema version 2 (before the support check
# added `unsupported_sentences`), dumped by that version's code from audit_samples.
_V2 = {
    row["path"]: AuditRecord.model_validate(row["record"])
    for row in map(
        json.loads, (Path(__file__).parent / "records_v2.jsonl").read_text().splitlines()
    )
}


@pytest.mark.parametrize("path", PATHS)
def test_version_1_records_keep_their_hashes(path: str) -> None:
    v2 = _V2[path]
    old = v2.model_copy(update={"schema_version": 1, "record_hash": V1_HASHES[path]})
    old = old.model_copy(update={"reranker": None})
    assert old.hash_ok()  # the stored hash of a v1 record still verifies


@pytest.mark.parametrize("path", PATHS)
def test_version_2_records_keep_their_hashes(path: str) -> None:
    v2 = _V2[path]
    assert v2.schema_version == 2 and v2.unsupported_sentences is None
    assert v2.hash_ok()  # verified by today's code
    new = record_for(path, store_evidence_text=(path == "ok"))
    assert new.schema_version == AUDIT_SCHEMA_VERSION
    assert new.record_hash != v2.record_hash  # later hashes cover the new fields


# Records exactly as citebound wrote them with schema version 3 (before `conversation`),
# dumped by that version's code from audit_samples.
_V3 = {
    row["path"]: AuditRecord.model_validate(row["record"])
    for row in map(
        json.loads, (Path(__file__).parent / "records_v3.jsonl").read_text().splitlines()
    )
}


# Fields today's code fills differently from v3's: the v4 model calls, and what the policy
# and the validator decide (the fingerprint, the validator version and the support scores of
# the refitted rule, #14).
_TODAY = {
    "schema_version",
    "validator_version",
    "record_hash",
    "model_calls",
    "display_anchors",
    "policy_fingerprint",
    "min_support",
    "unsupported_sentences",
}


@pytest.mark.parametrize("path", PATHS)
def test_version_3_records_keep_their_hashes(path: str) -> None:
    v3 = _V3[path]
    assert v3.schema_version == 3 and v3.conversation is None
    assert v3.hash_ok()  # verified by today's code
    new = record_for(path, store_evidence_text=(path == "ok"))
    assert new.model_dump(exclude=_TODAY) == v3.model_dump(exclude=_TODAY)
    assert new.record_hash != v3.record_hash  # v4 hashes cover `conversation` (null here)


def test_a_version_3_record_cannot_carry_a_conversation() -> None:
    from pydantic import ValidationError

    data = with_conversation(record_for("ok")).model_dump()
    with pytest.raises(ValidationError, match="schema_version 3 record has no"):
        AuditRecord.model_validate({**data, "schema_version": 3})


def test_the_conversation_is_recorded_and_hashed() -> None:
    r = with_conversation(record_for("ok"))
    assert r.hash_ok() and r.conversation is not None
    assert r.conversation.rewrite is not None
    assert r.conversation.rewrite.query == "How do I service the pump HP-220?"
    edited = r.conversation.turns[0].model_copy(update={"answer": "The HP-330."})
    conv = r.conversation.model_copy(update={"turns": [edited, *r.conversation.turns[1:]]})
    assert not r.model_copy(update={"conversation": conv}).hash_ok()


def test_a_version_2_record_cannot_carry_the_support_findings() -> None:
    from pydantic import ValidationError

    data = _V2["rejected"].model_dump()
    with pytest.raises(ValidationError, match="schema_version 2 record has no"):
        AuditRecord.model_validate({**data, "unsupported_sentences": []})


def test_unsupported_sentences_are_recorded_and_hashed() -> None:
    from citebound.contracts.execution import UnsupportedSentence

    plain = record_for("ok")
    assert plain.unsupported_sentences == []
    finding = UnsupportedSentence(
        index=1, score=0.0, coverage=0.5, reason="negation", best_evidence_span="x"
    )
    changed = plain.model_copy(update={"unsupported_sentences": [finding]})
    assert not changed.hash_ok()


def test_a_version_1_record_cannot_carry_later_fields() -> None:
    from pydantic import ValidationError

    from citebound.contracts.audit import AuditRecord

    data = record_for("ok").model_dump()
    with pytest.raises(ValidationError, match="schema_version 1 record has no"):
        AuditRecord.model_validate({**data, "schema_version": 1, "reranker": "x"})


def test_the_reranker_is_recorded_and_hashed() -> None:
    plain = record_for("ok")
    named = plain.model_copy(update={"reranker": "onnx-cross-encoder:ms-marco"})
    assert not named.hash_ok()  # changing it breaks the hash: it is covered


def test_failures_before_the_model_record_the_responses_reason(demo_store_copy: Path) -> None:
    """#21: an early failure's record said GENERATION_FAILED where the response said
    QUESTION_EMPTY / QUESTION_TOO_LONG."""
    from citebound.config import load_config
    from citebound.pipeline import Pipeline, PipelineContext

    # A copy of the session's demo store: the audit goes to STORE/audit.sqlite.
    store = demo_store_copy
    config = load_config(env={}, overrides={"store": str(store), "provider.name": "extractive"})
    ctx = PipelineContext(config)
    try:
        pipeline = Pipeline(ctx)
        for question, reason in (
            ("  \t ", "QUESTION_EMPTY"),
            ("bolt torque " * 200, "QUESTION_TOO_LONG"),
        ):
            state = pipeline.run(question, collection="demo")
            assert state.response is not None and state.response.failure_reason == reason
            (record,) = ctx.sinks[0].find(state.request_id)
            assert record.failure_reason == reason and record.reason_codes[0] == reason
            assert record.hash_ok()
    finally:
        ctx.close()
