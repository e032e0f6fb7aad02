"""A model's output holding U+0000 is audited, once and losslessly, on SQLite and PostgreSQL.

PostgreSQL's TEXT and jsonb refuse U+0000; questions holding one are refused up front, but a
model's reply cannot be. Before audit/pg_text.py, such a reply failed its audit INSERT on
PostgreSQL: the request had reached the model and was withheld unaudited (AUDIT_FAILED).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "audit"))

from audit_samples import record_for, with_conversation

from citebound.audit import FeedbackRecord, utc_now
from citebound.audit.columns import COLUMNS
from citebound.audit.pg_text import (
    ESCAPE_COLUMN,
    ESCAPED_COLUMNS,
    UNESCAPED_TEXT,
    escape_text,
    text_columns,
    unescape_text,
)
from citebound.audit.postgres import PostgresAuditSink
from citebound.audit.sqlite import SQLiteAuditSink
from citebound.cli import main
from citebound.contracts.audit import AuditRecord
from citebound.contracts.base import canonical_json
from citebound.errors import AuditError

CORPUS = Path(__file__).resolve().parents[2] / "src" / "citebound" / "sample_corpus"
NUL = "\x00"
# What a NUL-bearing reply looks like next to text the escape itself uses.
TRICKY = f"Oil{NUL} grade \\0 is not a NUL, \\\\ nor {NUL}{NUL}\\ [C0]"


@pytest.fixture(params=["sqlite", "postgres"])
def sink(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        s: Any = SQLiteAuditSink(tmp_path / "audit.sqlite")
    else:
        s = PostgresAuditSink(request.getfixturevalue("pg_url"))
    yield s
    s.close()


def _nul_record(request_id: str = "nul") -> AuditRecord:
    """A record with a NUL in every kind of column a model's output reaches: plain text,
    text lists, and jsonb (object values and keys, nested lists), next to backslashes."""
    base = with_conversation(record_for("ok", request_id=request_id, store_evidence_text=True))
    data = base.model_dump(mode="json")
    data.update(
        raw_model_text=TRICKY,
        validated_answer_text=TRICKY,
        llm_failure_reason=f"provider said{NUL}no",
        model_name=f"m{NUL}",
        response_id=f"resp{NUL}1",
        suspicious_new_ids=[f"C9{NUL}"],
        unsupported_sentences=[
            {
                "index": 0,
                "score": 0.1,
                "coverage": 0.2,
                "reason": TRICKY,
                "best_evidence_span": f"span{NUL}",
            }
        ],
        prompt_text=f"prompt {NUL}",
    )
    data["evidence_texts"] = [f"{t}{NUL}" for t in data["evidence_texts"]]
    data["anchor_map"] = {**data["anchor_map"], f"C{NUL}7": f"chunk{NUL}\\0"}
    # An earlier turn's answer (an assistant message: a model's earlier output) in the history.
    data["conversation"]["turns"][0]["answer"] = TRICKY
    for call in data["model_calls"] or []:
        call["raw_output"] = TRICKY
    record = AuditRecord.model_validate(data)
    return record.model_copy(update={"record_hash": record.compute_hash()})


def test_every_text_column_is_placed_on_purpose() -> None:
    """A new text or JSON column must be listed as escaped or as an id/enum column."""
    assert set(ESCAPED_COLUMNS) | set(UNESCAPED_TEXT) == set(text_columns())
    assert not set(ESCAPED_COLUMNS) & set(UNESCAPED_TEXT)
    kinds = {c.name: c.kind for c in COLUMNS}
    for free_text in ("raw_model_text", "validated_answer_text", "model_calls", "conversation",
                      "unsupported_sentences", "question", "llm_failure_reason"):  # fmt: skip
        assert free_text in ESCAPED_COLUMNS, (free_text, kinds[free_text])


@pytest.mark.parametrize("text", ["", NUL, "\\", "\\0", f"\\{NUL}", TRICKY, "\\\\0\\"])
def test_the_escape_is_reversible(text: str) -> None:
    assert NUL not in escape_text(text)
    assert unescape_text(escape_text(text)) == text


def test_a_nul_bearing_record_reads_back_byte_identical(sink: Any) -> None:
    record = _nul_record()
    assert record.hash_ok() and "\\u0000" in canonical_json(record)
    sink.append(record)
    (back,) = sink.find("nul")
    assert back == record and back.hash_ok()
    assert canonical_json(back) == canonical_json(record)  # the bytes the hash covers
    assert back.raw_model_text == TRICKY and f"C{NUL}7" in back.anchor_map
    assert back.conversation is not None and back.conversation.turns[0].answer == TRICKY
    plain = record_for("ok", request_id="plain")
    sink.append(plain)  # a row without a NUL next to it is untouched
    assert sink.find("plain") == [plain]
    assert sorted(r.request_id for r in sink.records()) == ["nul", "plain"]
    with pytest.raises(AuditError, match="already exists"):
        sink.append(record)  # still one record per request and run


def test_feedback_comment_with_a_nul_round_trips(sink: Any) -> None:
    sink.append(record_for("ok"))
    note = FeedbackRecord(
        request_id="req-1", verdict="incorrect", comment=f"wrong{NUL}\\0", timestamp_utc=utc_now()
    )
    sink.append_feedback(note)
    assert sink.feedback("req-1") == [note]


def test_postgres_keeps_rows_without_a_nul_as_plain_sql_text(pg_url: str) -> None:
    """Only a NUL-bearing row is escaped (and says so): other rows read as written from SQL."""
    import psycopg

    plain = record_for("ok", request_id="plain")
    plain = plain.model_copy(update={"raw_model_text": "a \\0 b [C0]"})
    plain = plain.model_copy(update={"record_hash": plain.compute_hash()})
    with PostgresAuditSink(pg_url) as sink:
        sink.append(plain)
        sink.append(_nul_record())
        assert sink.schema_version() == 11
    with psycopg.connect(pg_url) as conn:
        rows = dict(
            conn.execute(
                f"SELECT request_id, {ESCAPE_COLUMN} FROM audit_records ORDER BY request_id"
            ).fetchall()
        )
        raw = conn.execute(
            "SELECT raw_model_text FROM audit_records WHERE request_id = 'plain'"
        ).fetchone()
    assert rows == {"nul": "nul-v1", "plain": None}
    assert raw == ("a \\0 b [C0]",)


def test_a_nul_in_an_id_fails_closed_with_a_reason(pg_url: str) -> None:
    bad = record_for("ok", request_id=f"id{NUL}")
    with PostgresAuditSink(pg_url) as sink, pytest.raises(AuditError, match="request_id holds U"):
        sink.append(bad)


def test_an_unknown_escape_is_refused_not_misread(pg_url: str) -> None:
    import psycopg

    with PostgresAuditSink(pg_url) as sink:
        sink.append(record_for("ok"))
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("ALTER TABLE audit_records DISABLE TRIGGER USER")
            conn.execute(f"UPDATE audit_records SET {ESCAPE_COLUMN} = 'nul-v9'")
        with pytest.raises(AuditError, match="upgrade citebound"):
            sink.find("req-1")


@pytest.mark.integration
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_ask_audits_a_model_reply_holding_a_nul_once(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real path: `citebound ask` on each store, an OpenAI-compatible server whose reply
    holds U+0000. The request reached the model, so it has exactly one record, which reads
    back with the NUL, verifies, and replays."""
    from citebound.testing import ScriptedLLMServer

    monkeypatch.chdir(tmp_path)
    if backend == "postgres":
        monkeypatch.setenv("CITEBOUND_DATABASE_URL", request.getfixturevalue("pg_url"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gb7.md").write_text((CORPUS / "gb7_specification.md").read_text("utf-8"), "utf-8")
    runner = CliRunner()
    r = runner.invoke(main, ["ingest", str(docs), "--collection", "plant", "--no-progress"])
    assert r.exit_code == 0, r.output
    reply = f"The GB-7 gearbox uses ISO VG 220{NUL} oil [C0]."
    with ScriptedLLMServer(default_text=reply) as server:
        r = runner.invoke(main, ["ask", "What is the GB-7 gearbox oil grade?", "--collection",
                                 "plant", "--json", "--provider", "openai", "--model", "m",
                                 "--base-url", server.base_url])  # fmt: skip
        calls = len(server.requests)
    assert calls >= 1 and "AUDIT" not in r.output and "Traceback" not in r.output, r.output
    answer = json.loads(r.stdout)
    if backend == "postgres":
        sink: Any = PostgresAuditSink(request.getfixturevalue("pg_url"))
    else:
        sink = SQLiteAuditSink(tmp_path / ".citebound" / "audit.sqlite")
    with sink:
        (record,) = sink.find(answer["request_id"])
        assert len(sink.records()) == 1
    assert record.hash_ok() and record.raw_model_text is not None
    assert NUL in record.raw_model_text and record.attempts == calls
    r = runner.invoke(main, ["audit", "show", answer["request_id"]])
    assert r.exit_code == 0 and json.loads(r.output)["record_hash"] == record.record_hash
    assert json.loads(r.output)["raw_model_text"] == record.raw_model_text
    r = runner.invoke(main, ["audit", "replay", answer["request_id"]])
    assert r.exit_code == 0, r.output
