"""The audit sink contract against PostgreSQL, plus what only a server database can enforce."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "audit"))

from audit_samples import record_for, with_conversation
from audit_sink_contract import AuditSinkContract

from citebound.audit import FeedbackRecord, utc_now
from citebound.audit.columns import COLUMN_NAMES
from citebound.audit.postgres import AUDIT_ROLE, PostgresAuditSink
from citebound.contracts.base import canonical_json
from citebound.errors import AuditError


class TestPostgresAuditSink(AuditSinkContract):
    @pytest.fixture
    def sink(self, pg_url: str) -> Iterator[PostgresAuditSink]:
        s = PostgresAuditSink(pg_url)
        yield s
        s.close()


def _migrate_to(pg_url: str, last: int) -> None:
    """Bring the audit database to migration `last` only, as older code would have left it."""
    from citebound.audit.postgres import AUDIT_MIGRATIONS, AUDIT_MIGRATIONS_TABLE
    from citebound.store.pg_connect import migrate_url

    migrate_url(
        pg_url,
        what="audit",
        table=AUDIT_MIGRATIONS_TABLE,
        lock_key="citebound-audit-migrations",
        migrations=AUDIT_MIGRATIONS[:last],
    )


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
    assert {s.schema_version() for s in sinks} == {11}
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
    from citebound.contracts.audit import ADDED_IN_VERSION, AuditRecord

    _migrate_to(pg_url, 5)
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
    assert sink.schema_version() == 11
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


def _odd_record() -> Any:
    """A record whose evidence column holds NaN and -Infinity next to text that looks like
    those tokens (`:NaN,`, quotes, backslashes): the conversion must touch numbers only."""
    import math

    base = record_for("ok", request_id="odd")
    evidence = [
        e.model_copy(
            update={
                "similarity_score": math.nan if i == 0 else -math.inf,
                "knowledge_id": 'kb:NaN,"x\\" Infinity] -Infinity}' if i == 0 else e.knowledge_id,
            }
        )
        for i, e in enumerate(base.evidence)
    ]
    odd = base.model_copy(
        update={"evidence": evidence, "min_support": math.nan, "question": "NaN? [Infinity]"}
    )
    return odd.model_copy(update={"record_hash": odd.compute_hash()})


def test_json_columns_are_jsonb_that_sql_reads(pg_url: str) -> None:
    """The JSON columns hold JSON (jsonb), not a JSON text in a text column (or a JSON string
    in a JSON column): SQL reaches inside them, and the record still reads back exactly."""
    import psycopg

    from citebound.audit.postgres import JSONB_COLUMNS

    odd = _odd_record()
    with PostgresAuditSink(pg_url) as sink:
        sink.append(record_for("ok"))
        sink.append(odd)
        (back,) = sink.find("odd")
    assert back.hash_ok() and canonical_json(back) == canonical_json(odd)
    with psycopg.connect(pg_url) as conn:
        types = dict(
            conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = 'audit_records'"
            ).fetchall()
        )
        assert {types[c] for c in JSONB_COLUMNS} == {"jsonb"}
        row = conn.execute(
            "SELECT jsonb_typeof(anchor_map), evidence->0->>'chunk_id', "
            "evidence->0->>'similarity_score', jsonb_typeof(reason_codes) "
            "FROM audit_records WHERE request_id = 'odd'"
        ).fetchone()
    assert row == ("object", odd.evidence[0].chunk_id, "NaN", "array")


def test_a_version_8_database_gets_jsonb_columns_and_its_rows_still_verify(pg_url: str) -> None:
    """Rows written by the code before migration 9 (canonical JSON text in TEXT columns, bare
    NaN tokens included) are converted in place and read back with their hashes; a row an
    older replica appends after the migration (its JSON text lands as a jsonb string) reads
    back too."""
    import json

    import psycopg

    from citebound.audit.columns import COLUMN_NAMES, to_row

    _migrate_to(pg_url, 8)
    old_insert = (
        f"INSERT INTO audit_records ({', '.join(COLUMN_NAMES)}) SELECT {', '.join(COLUMN_NAMES)} "
        "FROM json_populate_record(NULL::audit_records, %s::json)"
    )
    odd, plain = _odd_record(), with_conversation(record_for("ok", request_id="plain"))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for r in (odd, plain):  # the encoding of the code before migration 9
            conn.execute(old_insert, (json.dumps(to_row(r, lists_as_json=True)),))
    with PostgresAuditSink(pg_url) as sink:
        assert sink.schema_version() == 11
        for r in (odd, plain):
            (back,) = sink.find(r.request_id)
            assert back.hash_ok() and canonical_json(back) == canonical_json(r)
        late = record_for("rejected", request_id="late")
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(old_insert, (json.dumps(to_row(late, lists_as_json=True)),))
        assert sink.find("late") == [late]
        new = record_for("ok", request_id="new")
        sink.append(new)
        assert sink.find("new") == [new] and sink.count() == 4


def _negative_zero_record(request_id: str) -> Any:
    """A record holding -0.0 (a rounded tiny negative score) in a jsonb column and a real
    column, next to a text that spells -0.0 and a -0.05 that must stay a number."""
    base = record_for("ok", request_id=request_id)
    evidence = [
        e.model_copy(
            update={
                "similarity_score": -0.0 if i == 0 else -0.05,
                "knowledge_id": "kb:-0.0," if i == 0 else e.knowledge_id,
            }
        )
        for i, e in enumerate(base.evidence)
    ]
    odd = base.model_copy(update={"evidence": evidence, "min_support": -0.0})
    return odd.model_copy(update={"record_hash": odd.compute_hash()})


def test_negative_zero_keeps_its_sign_in_jsonb(pg_url: str) -> None:
    """jsonb stores numbers as numeric, which has no -0: a -0.0 appended (or converted by
    migration 9) came back as 0.0 and the honest record failed its hash check."""
    import json
    import math

    import psycopg

    from citebound.audit.columns import to_row

    _migrate_to(pg_url, 8)
    old = _negative_zero_record("old")
    with psycopg.connect(pg_url, autocommit=True) as conn:  # written before migration 9
        conn.execute(
            f"INSERT INTO audit_records ({', '.join(COLUMN_NAMES)}) SELECT "
            f"{', '.join(COLUMN_NAMES)} FROM json_populate_record(NULL::audit_records, %s::json)",
            (json.dumps(to_row(old, lists_as_json=True)),),
        )
    new = _negative_zero_record("new")
    with PostgresAuditSink(pg_url) as sink:
        sink.append(new)
        for r in (old, new):
            (back,) = sink.find(r.request_id)
            assert math.copysign(1.0, back.evidence[0].similarity_score) == -1.0
            assert back.evidence[1].similarity_score == -0.05
            assert back.evidence[0].knowledge_id == "kb:-0.0,"
            assert back.hash_ok() and canonical_json(back) == canonical_json(r)


def test_a_replica_waits_for_another_replicas_long_migration(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 9 rewrites the whole audit table, which takes minutes on a large one, past
    the statement timeout. A replica starting meanwhile waits on the migration lock; that wait
    was cancelled by its statement timeout and the replica failed to start ("cannot reach the
    audit database"). Here the statement timeout is made short and the lock held past it."""
    import hashlib
    import threading

    import psycopg

    import citebound.store.pg_connect as pg_connect

    monkeypatch.setattr(pg_connect, "STATEMENT_TIMEOUT_MS", 200)
    key = int.from_bytes(
        hashlib.sha256(b"citebound-audit-migrations").digest()[:8], "big", signed=True
    )
    held, release = threading.Event(), threading.Event()

    def long_migration() -> None:
        with psycopg.connect(pg_url) as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
            held.set()
            release.wait(30)

    other = threading.Thread(target=long_migration)
    other.start()
    try:
        assert held.wait(30)
        threading.Timer(1.0, release.set).start()  # five statement timeouts later
        with PostgresAuditSink(pg_url) as sink:
            assert sink.schema_version() == 11
    finally:
        release.set()
        other.join()
