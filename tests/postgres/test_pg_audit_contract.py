"""The audit sink contract against PostgreSQL, plus what only a server database can enforce."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "audit"))

from audit_samples import record_for
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
    assert {s.schema_version() for s in sinks} == {5}
    for s in sinks:
        s.close()


def test_unreachable_database_is_a_clear_audit_error() -> None:
    with pytest.raises(AuditError, match=r"cannot reach the audit database at .*\*\*\*"):
        PostgresAuditSink("postgresql://u:secret@127.0.0.1:9/none?connect_timeout=1")
