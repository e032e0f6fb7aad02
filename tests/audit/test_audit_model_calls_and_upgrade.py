"""Schema v4: `model_calls` lists every model call; v1-v3 records keep their hashes; SQLite and
Delta stores written by schema v3 code upgrade in place (PostgreSQL: tests/postgres)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from audit_samples import EVIDENCE, POLICY, QUESTION, record_for, with_conversation

from citebound.audit import (
    COLUMN_NAMES,
    AuditRecord,
    ModelCallRecord,
    SentenceFailure,
    SQLiteAuditSink,
    build_audit_record,
    replay,
)
from citebound.contracts.audit import ADDED_IN_VERSION, AUDIT_SCHEMA_VERSION
from citebound.respond import package_response
from citebound.testing.bundles import make_answer_bundle, make_llm_result
from citebound.validate import validate_answer

# Records exactly as citebound wrote them with schema version 3 (before `model_calls`), dumped
# by that version's code from audit_samples (the "ok" one with evidence texts).
_V3 = {
    row["path"]: AuditRecord.model_validate(row["record"])
    for row in map(
        json.loads, (Path(__file__).parent / "records_v3.jsonl").read_text().splitlines()
    )
}
PATHS = list(_V3)
V4_ONLY = [f for f, v in ADDED_IN_VERSION.items() if v >= 4]


@pytest.mark.parametrize("path", PATHS)
def test_version_3_records_keep_their_hashes(path: str) -> None:
    v3 = _V3[path]
    assert v3.schema_version == 3 and v3.model_calls is None
    assert v3.hash_ok()  # verified by today's code
    new = record_for(path, store_evidence_text=(path == "ok"))
    assert new.schema_version == AUDIT_SCHEMA_VERSION and new.model_calls is not None
    assert new.record_hash != v3.record_hash  # v4 hashes cover model_calls


def test_a_version_3_record_cannot_carry_model_calls() -> None:
    from pydantic import ValidationError

    data = _V3["ok"].model_dump()
    with pytest.raises(ValidationError, match="schema_version 3 record has no"):
        AuditRecord.model_validate({**data, "model_calls": []})


def test_the_single_answer_call_is_listed_with_its_verdict() -> None:
    ok, rejected, gate = record_for("ok"), record_for("rejected"), record_for("gate")
    (call,) = ok.model_calls or []
    assert (call.stage, call.raw_output, call.validation_status) == (
        "answer",
        ok.raw_model_text,
        "PASSED",
    )
    assert call.prompt_sha256 == ok.prompt_sha256 and call.attempts == ok.attempts
    (bad,) = rejected.model_calls or []
    assert bad.validation_failure_reason == "INVALID_CITATION_REFERENCE"
    assert gate.model_calls == []  # no model was called
    (failed,) = record_for("retries_exhausted").model_calls or []
    assert (failed.generation_status, failed.failure_reason, failed.attempts) == (
        "FAILED",
        "LLM_RETRIES_EXHAUSTED",
        3,
    )


def test_model_calls_are_hashed() -> None:
    r = record_for("ok")
    (call,) = r.model_calls or []
    changed = r.model_copy(update={"model_calls": [call.model_copy(update={"attempts": 2})]})
    assert not changed.hash_ok()


def _two_calls() -> AuditRecord:
    """A request whose first answer was rejected (uncited sentence) and regenerated."""
    b = make_answer_bundle(EVIDENCE, request_id="req-2", question=QUESTION)
    first = make_llm_result(b, "Torque the M8 cylinder head bolts to 25 Nm [C0]. Mars is red.")
    v1 = validate_answer(b, first, POLICY)
    second = make_llm_result(b, "Torque the M8 cylinder head bolts to 25 Nm [C0].")
    second = second.model_copy(update={"prompt_sha256": "f" * 64, "response_id": "resp-2"})
    v2 = validate_answer(b, second, POLICY)
    assert (v1.failure_reason, v2.validation_status) == ("UNCITED_FACTUAL_STATEMENT", "PASSED")
    calls = [
        ModelCallRecord.of("answer", first, "qa_v1").judged(
            v1, [SentenceFailure(index=1, reason_code="UNCITED_FACTUAL_STATEMENT")]
        ),
        ModelCallRecord.of("regenerate", second, "regenerate_v1").judged(v2),
    ]
    return build_audit_record(
        policy=POLICY,
        response=package_response(b, second, v2, policy=POLICY, latency_ms=9.0),
        question=QUESTION,
        bundle=b,
        llm=second,
        validation=v2,
        store_evidence_text=True,
        model_calls=calls,
        timestamp_utc="2026-01-02T03:04:05.000006Z",
    )


def test_replay_of_a_regenerated_record_judges_both_calls() -> None:
    r = _two_calls()
    report = replay(r, POLICY)
    assert report.replayable and not report.verdict_changed
    assert [(c.stage, c.new_validation_status, c.new_failure_reason) for c in report.calls] == [
        ("answer", "FAILED", "UNCITED_FACTUAL_STATEMENT"),
        ("regenerate", "PASSED", None),
    ]
    assert not any(c.verdict_changed for c in report.calls)
    # The record's verdict must be its last judged call's.
    swapped = r.model_copy(update={"model_calls": list(reversed(r.model_calls or []))})
    swapped = swapped.model_copy(update={"record_hash": swapped.compute_hash()})
    assert not replay(swapped, POLICY).replayable


def _v3_sqlite(path: Path) -> AuditRecord:
    """A file exactly as schema v3 code left it (migrations 1-5) holding one v3 record."""
    from citebound.audit.columns import to_row
    from citebound.audit.migrations import MIGRATIONS

    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "CREATE TABLE _migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at TEXT NOT NULL)"
    )
    for version, name, statements in MIGRATIONS[:5]:
        for sql in statements:
            conn.execute(sql)
        conn.execute(
            "INSERT INTO _migrations VALUES (?, ?, '2026-01-01T00:00:00Z')", (version, name)
        )
    old = _V3["rejected"]
    row = {k: v for k, v in to_row(old, lists_as_json=True).items() if k not in V4_ONLY}
    conn.execute(
        f"INSERT INTO audit_records ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
        tuple(row.values()),
    )
    conn.close()
    return old


def test_a_version_3_sqlite_store_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "audit.sqlite"
    old = _v3_sqlite(path)
    with SQLiteAuditSink(path) as sink:
        assert sink.schema_version() == 9
        (back,) = sink.find(old.request_id)
        assert back == old and back.schema_version == 3 and back.model_calls is None
        assert back.conversation is None and back.hash_ok()
        new = _two_calls()
        sink.append(new)
        (again,) = sink.find(new.request_id)
        assert again == new and again.hash_ok() and len(again.model_calls or []) == 2
        follow = with_conversation(record_for("ok", request_id="new"))  # a follow-up's history
        sink.append(follow)
        (back_follow,) = sink.find("new")
        assert back_follow == follow and back_follow.hash_ok()
        assert sink.integrity_check() == "ok"
    with SQLiteAuditSink(path) as sink:  # reopening applies nothing twice
        assert sink.schema_version() == 9 and len(sink.records()) == 3


def test_a_version_3_delta_table_gains_model_calls(tmp_path: Path) -> None:
    deltalake = pytest.importorskip("deltalake")
    pa = pytest.importorskip("pyarrow")
    from citebound.audit.delta import DeltaAuditSink, arrow_schema, records_to_arrow

    path = tmp_path / "audit.delta"
    v3_schema = pa.schema([f for f in arrow_schema() if f.name not in V4_ONLY])
    deltalake.DeltaTable.create(
        str(path), schema=v3_schema, configuration={"delta.appendOnly": "true"}
    )
    old = _V3["ok"]
    deltalake.write_deltalake(
        str(path), records_to_arrow([old]).drop_columns(V4_ONLY), mode="append"
    )
    sink = DeltaAuditSink(path)
    fields = [f.name for f in deltalake.DeltaTable(str(path)).schema().fields]
    assert fields == [*COLUMN_NAMES, "chain_seq", "prev_hash", "chain_hash"]
    (back,) = sink.find(old.request_id)
    assert back == old and back.model_calls is None and back.hash_ok()
    new = _two_calls()
    sink.append(new)
    (again,) = sink.find("req-2")
    assert again == new and [c.stage for c in again.model_calls or []] == ["answer", "regenerate"]
