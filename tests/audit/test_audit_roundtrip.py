"""Any text survives the SQLite sink byte for byte, and prompt opt-ins are honoured."""

from __future__ import annotations

import tempfile
from pathlib import Path

from audit_samples import EVIDENCE, POLICY, QUESTION, record_for
from hypothesis import given, settings
from hypothesis import strategies as st

from citebound.audit import SQLiteAuditSink, build_audit_record
from citebound.contracts.assembly import PromptBuildResult
from citebound.contracts.base import sha256_hex
from citebound.contracts.enums import BuildStatus
from citebound.respond import package_response
from citebound.testing.bundles import make_answer_bundle, make_llm_result
from citebound.validate import validate_answer


@settings(max_examples=40, deadline=None)
@given(question=st.text(max_size=300), raw=st.text(max_size=300), latency=st.floats(0, 1e9))
def test_arbitrary_text_round_trips(question: str, raw: str, latency: float) -> None:
    base = record_for("ok")
    r = base.model_copy(update={"question": question, "raw_model_text": raw, "latency_ms": latency})
    r = r.model_copy(update={"record_hash": r.compute_hash()})
    with tempfile.TemporaryDirectory() as d, SQLiteAuditSink(Path(d) / "a.sqlite") as sink:
        sink.append(r)
        (back,) = sink.find(r.request_id)
    assert back == r and back.hash_ok()


def _prompt(request_id: str) -> PromptBuildResult:
    text = "SYSTEM\n...\nEVIDENCE\n...\nQUESTION\n" + QUESTION
    return PromptBuildResult(
        request_id=request_id,
        build_status=BuildStatus.OK,
        template_id="qa_v1",
        template_sha256="t" * 64,
        prompt_text=text,
        prompt_sha256=sha256_hex(text),
        tokenizer="cl100k_base",
    )


def test_prompt_hash_always_text_only_on_opt_in() -> None:
    b = make_answer_bundle(EVIDENCE, question=QUESTION)
    llm = make_llm_result(b, "Torque the M8 cylinder head bolts to 25 Nm [C0].")
    v = validate_answer(b, llm, POLICY)
    resp = package_response(b, llm, v, policy=POLICY, latency_ms=9.0)
    prompt = _prompt(b.request_id)
    common = {"policy": POLICY, "response": resp, "question": QUESTION, "bundle": b}
    plain = build_audit_record(prompt=prompt, llm=llm, validation=v, **common)  # type: ignore[arg-type]
    assert plain.prompt_sha256 == prompt.prompt_sha256 and plain.template_id == "qa_v1"
    assert plain.prompt_text is None
    kept = build_audit_record(
        prompt=prompt,
        llm=llm,
        validation=v,
        store_prompt_text=True,
        **common,  # type: ignore[arg-type]
    )
    assert kept.prompt_text == prompt.prompt_text and kept.hash_ok()
    assert kept.record_hash != plain.record_hash
