"""One AuditRecord per request path, built with the real stages' contracts."""

from __future__ import annotations

from citebound.audit import AuditRecord, build_audit_record
from citebound.contracts.enums import AssemblyStatus, GenerationStatus
from citebound.policy import load_policy
from citebound.respond import package_failure, package_response, package_without_generation
from citebound.testing.bundles import make_answer_bundle, make_llm_result
from citebound.validate import validate_answer

POLICY = load_policy("strict-v1")
EVIDENCE = [
    "Torque the M8 cylinder head bolts to 25 Nm in a cross pattern.",
    "Replace the hydraulic filter every 500 operating hours.",
]
OK_TEXT = (
    "Torque the M8 cylinder head bolts to 25 Nm [C0]. Replace the filter every 500 hours [C1]."
)
QUESTION = "How do I service the pump?"


def record_for(
    path: str,
    request_id: str = "req-1",
    run_id: str | None = "run-1",
    *,
    store_evidence_text: bool = False,
    timestamp: str = "2026-01-02T03:04:05.000006Z",
) -> AuditRecord:
    """Paths: ok, refusal, rejected, retries_exhausted, gate, assembly_failed, early_failure."""
    common = {
        "policy": POLICY,
        "question": QUESTION,
        "run_id": run_id,
        "timestamp_utc": timestamp,
        "store_evidence_text": store_evidence_text,
    }
    if path in ("gate", "assembly_failed"):
        status = AssemblyStatus.NO_EVIDENCE if path == "gate" else AssemblyStatus.FAILED
        b = make_answer_bundle([], status=status, request_id=request_id)
        resp = package_without_generation(b, POLICY, latency_ms=3.0)
        return build_audit_record(response=resp, bundle=b, **common)  # type: ignore[arg-type]
    if path == "early_failure":
        resp = package_failure(request_id, "RETRIEVAL_FAILED", latency_ms=1.0)
        return build_audit_record(response=resp, **common)  # type: ignore[arg-type]
    b = make_answer_bundle(EVIDENCE, request_id=request_id, question=QUESTION)
    text = {"ok": OK_TEXT, "refusal": POLICY.refusal.model_text, "rejected": OK_TEXT + " [C7]"}
    if path == "retries_exhausted":
        llm = make_llm_result(
            b,
            "",
            status=GenerationStatus.FAILED,
            failure_reason="LLM_RETRIES_EXHAUSTED",
            attempts=3,
        )
    else:
        llm = make_llm_result(b, text[path])
    v = validate_answer(b, llm, POLICY)
    resp = package_response(b, llm, v, policy=POLICY, latency_ms=250.0)
    return build_audit_record(
        response=resp,
        bundle=b,
        llm=llm,
        validation=v,
        **common,  # type: ignore[arg-type]
    )


def with_conversation(record: AuditRecord) -> AuditRecord:
    """`record` as a follow-up: asked after two turns, one used, rewritten; re-hashed."""
    from citebound.contracts.audit import AuditConversation
    from citebound.contracts.conversation import ConversationTurn, FollowupRewrite

    conv = AuditConversation(
        turns=[
            ConversationTurn(question="Which pump?", answer="The HP-220. [C0]"),
            ConversationTurn(question="What does it need?", answer=""),
        ],
        turns_received=2,
        turns_used=1,
        rewrite=FollowupRewrite(
            original=QUESTION,
            query="How do I service the pump HP-220?",
            carried=["HP-220"],
            rule="followup:reference",
            turns_used=1,
            from_answers=["HP-220"],
        ),
    )
    new = record.model_copy(update={"conversation": conv})
    return new.model_copy(update={"record_hash": new.compute_hash()})


PATHS = (
    "ok",
    "refusal",
    "rejected",
    "retries_exhausted",
    "gate",
    "assembly_failed",
    "early_failure",
)
