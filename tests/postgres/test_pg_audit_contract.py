"""The audit sink contract against PostgreSQL, plus what only a server database can enforce."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "audit"))

from audit_samples import record_for, with_conversation
from audit_sink_contract import AuditSinkContract

from citebound.audit import FeedbackRecord, utc_now
from citebound.audit.postgres import AUDIT_ROLE, PostgresAuditSink
from citebound.errors import AuditError


class TestPostgresAuditSink(AuditSinkContract):
    @pytest.fixture
    def sink(self, pg_url: str) -> Iterator[PostgresAuditSink]:
        s = PostgresAuditSink(pg_url)
        yield s
        s.close()


def test_the_database_refuses_update_delete_truncate(pg_url: str) -> None:
    import psycopg

    sink = PostgresAuditSink(pg_url)
    sink.append(record_for("ok"))
    sink.append_feedback(
        FeedbackRecord(request_id="req-1", verdict="correct", comment="", timestamp_utc=utc_now())
    )
    # As the login (superuser here): the triggers refuse.
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for sql in (
            "UPDATE audit_records SET status = 'x'",
            "DELETE FROM audit_records",
            "TRUNCATE audit_records",
            "UPDATE feedback SET comment = 'x'",
            "DELETE FROM feedback",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
                conn.execute(sql)
        # As the writer role: no UPDATE/DELETE rights at all (refused before any trigger).
        conn.execute(f"SET ROLE {AUDIT_ROLE}")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
            conn.execute("UPDATE audit_records SET status = 'x'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
            conn.execute("DELETE FROM audit_records")
    assert sink.writer_role_active()
    (back,) = sink.find("req-1")
    assert back == record_for("ok") and back.hash_ok()
    sink.close()


def test_one_record_per_request_across_replicas(pg_url: str) -> None:
    a, b = PostgresAuditSink(pg_url), PostgresAuditSink(pg_url)
    a.append(record_for("ok", run_id="r"))
    with pytest.raises(AuditError, match="already exists"):
        b.append(record_for("ok", run_id="r"))
    assert [r.request_id for r in b.records()] == ["req-1"] and a.count() == 1
    a.close()
    b.close()


def test_two_sinks_starting_at_once_migrate_once(pg_url: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        sinks = list(pool.map(lambda _: PostgresAuditSink(pg_url), range(4)))
    assert {s.schema_version() for s in sinks} == {8}
    for s in sinks:
        s.close()


def test_unreachable_database_is_a_clear_audit_error() -> None:
    with pytest.raises(AuditError, match=r"cannot reach the audit database at .*\*\*\*"):
        PostgresAuditSink("postgresql://u:secret@127.0.0.1:9/none?connect_timeout=1")


def test_a_version_3_database_is_upgraded_in_place(pg_url: str) -> None:
    """A database migrated by schema v3 code (migrations 1-5) holding a v3 record: opening it
    adds `model_calls` (migration 6); the old record keeps its hash, v4 records round-trip."""
    import json

    import psycopg

    from citebound.audit.columns import to_row
    from citebound.audit.postgres import AUDIT_MIGRATIONS, AUDIT_MIGRATIONS_TABLE
    from citebound.contracts.audit import ADDED_IN_VERSION, AuditRecord
    from citebound.store.pg_connect import migrate_url

    migrate_url(
        pg_url,
        what="audit",
        table=AUDIT_MIGRATIONS_TABLE,
        lock_key="citebound-audit-migrations",
        migrations=AUDIT_MIGRATIONS[:5],
    )
    rows = (Path(__file__).resolve().parents[1] / "audit" / "records_v3.jsonl").read_text()
    old = AuditRecord.model_validate(json.loads(rows.splitlines()[2])["record"])
    later = [f for f, v in ADDED_IN_VERSION.items() if v >= 4]
    row = {k: v for k, v in to_row(old, lists_as_json=True).items() if k not in later}
    with psycopg.connect(pg_url, autocommit=True) as conn:
        cols = [
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'audit_records'"
            ).fetchall()
        ]
        assert "model_calls" not in cols
        conn.execute(
            f"INSERT INTO audit_records ({', '.join(row)}) "
            f"VALUES ({', '.join('%(' + k + ')s' for k in row)})",
            row,
        )
    sink = PostgresAuditSink(pg_url)
    assert sink.schema_version() == 8
    (back,) = sink.find(old.request_id)
    assert back == old and back.schema_version == 3 and back.model_calls is None
    assert back.hash_ok()
    new = record_for("rejected", request_id="req-4")
    sink.append(new)
    (again,) = sink.find("req-4")
    assert again == new and [c.stage for c in again.model_calls or []] == ["answer"]
    assert again.conversation is None
    follow = with_conversation(record_for("ok", request_id="new"))
    sink.append(follow)
    assert sink.find("new") == [follow]
    sink.close()


def test_awkward_text_and_floats_round_trip_exactly(pg_url: str) -> None:
    """The row goes to PostgreSQL as one JSON parameter: escapes, non-BMP text and floats
    without a short decimal form must come back as the same record (same hash)."""
    base = record_for("ok", request_id="awkward")
    record = base.model_copy(
        update={
            "question": 'é 日本 "quoted" \\ back\nslash\t\u2028 🙂 %s %(x)s',
            "latency_ms": 0.1 + 0.2,
            "min_support": 1e-07,
        }
    )
    record = record.model_copy(update={"record_hash": record.compute_hash()})
    with PostgresAuditSink(pg_url) as sink:
        sink.append(record)
        (back,) = sink.find("awkward")
    assert back == record and back.hash_ok()
    assert back.latency_ms == 0.30000000000000004


def test_the_row_is_encoded_before_a_pool_connection_is_taken(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool connection is held for the INSERT only: other requests' appends wait for a
    connection, so the record's encoding (CPU work) happens before one is taken."""
    from contextlib import contextmanager
    from typing import Any

    import citebound.audit.postgres as pg_audit

    sink = PostgresAuditSink(pg_url)
    held: list[bool] = []
    encoded_while_held: list[bool] = []
    take = sink._pool.connection
    encode = pg_audit.to_row

    @contextmanager
    def connection(*args: Any, **kwargs: Any) -> Iterator[Any]:
        held.append(True)
        try:
            with take(*args, **kwargs) as conn:
                yield conn
        finally:
            held.pop()

    def to_row(*args: Any, **kwargs: Any) -> Any:
        encoded_while_held.append(bool(held))
        return encode(*args, **kwargs)

    monkeypatch.setattr(sink._pool, "connection", connection)
    monkeypatch.setattr(pg_audit, "to_row", to_row)
    sink.append(record_for("ok", request_id="encoded-first"))
    assert encoded_while_held == [False]
    assert [r.request_id for r in sink.find("encoded-first")] == ["encoded-first"]
    sink.close()
