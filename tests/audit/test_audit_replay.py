"""Replay re-validates the stored raw text, reports verdict changes, never guesses evidence."""

from __future__ import annotations

import pytest
from audit_samples import EVIDENCE, POLICY, QUESTION, record_for

from citebound.audit import build_audit_record, replay
from citebound.contracts.base import sha256_hex
from citebound.respond import package_response
from citebound.testing.bundles import make_answer_bundle, make_llm_result
from citebound.validate import validate_answer


@pytest.mark.parametrize("path", ["ok", "refusal", "rejected", "retries_exhausted"])
def test_replay_with_stored_evidence_keeps_the_verdict(path: str) -> None:
    r = record_for(path, store_evidence_text=True)
    report = replay(r, POLICY)
    assert report.replayable, report.reason
    assert report.verdict_changed is False
    assert report.policy_fingerprint_matches
    assert report.new_result is not None
    assert report.new_result.failure_reason == r.failure_reason


def test_without_evidence_texts_replay_says_so_then_uses_given_texts() -> None:
    r = record_for("ok")
    report = replay(r, POLICY)
    assert not report.replayable and "store_evidence_text" in report.reason
    texts = {sha256_hex(t)[:16]: t for t in EVIDENCE}
    assert replay(r, POLICY, chunk_texts=texts).replayable


def test_changed_evidence_is_refused() -> None:
    r = record_for("ok")
    texts = {sha256_hex(t)[:16]: t + " (revised)" for t in EVIDENCE}
    report = replay(r, POLICY, chunk_texts=texts)
    assert not report.replayable and "changed" in report.reason


def test_no_model_output_is_not_replayable() -> None:
    report = replay(record_for("gate"), POLICY)
    assert not report.replayable and "not called" in report.reason


def test_tampered_record_is_not_replayed() -> None:
    r = record_for("ok", store_evidence_text=True).model_copy(update={"raw_model_text": "x"})
    assert not replay(r, POLICY).replayable


def test_verdict_change_is_reported() -> None:
    # The answer was passed by an older, lenient validator configuration (new facts flagged,
    # no support floor).
    loose = {"new_facts": "flag", "min_sentence_support": 0.0}
    lenient = POLICY.model_copy(update={"validation": POLICY.validation.model_copy(update=loose)})
    b = make_answer_bundle(EVIDENCE, question=QUESTION)
    llm = make_llm_result(b, "Torque the M8 cylinder head bolts to 30 Nm [C0].")
    v = validate_answer(b, llm, lenient)
    assert v.validation_status == "PASSED"
    resp = package_response(b, llm, v, policy=POLICY, latency_ms=1.0)
    r = build_audit_record(
        policy=POLICY,
        response=resp,
        question=QUESTION,
        bundle=b,
        llm=llm,
        validation=v,
        store_evidence_text=True,
    )
    report = replay(r, POLICY)
    assert report.replayable and report.verdict_changed
    assert report.new_result is not None
    assert report.new_result.failure_reason == "UNSUPPORTED_NEW_FACT"
