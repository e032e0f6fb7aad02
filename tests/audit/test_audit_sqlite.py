"""SQLite sink: contract suite, exact schema, WAL, migrations, append-only triggers, feedback."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from audit_samples import record_for
from audit_sink_contract import AuditSinkContract

from citebound.audit import COLUMN_NAMES, AuditRecord, FeedbackRecord, SQLiteAuditSink, open_sink
from citebound.audit.migrations import AUDIT_TABLE
from citebound.contracts.audit import ADDED_IN_VERSION
from citebound.errors import AuditError


@pytest.fixture
def sink(tmp_path: Path) -> Iterator[SQLiteAuditSink]:
    s = SQLiteAuditSink(tmp_path / "a" / "audit.sqlite")
    yield s
    s.close()


class TestSQLiteContract(AuditSinkContract):
    pass


EXPECTED_OBJECTS = [
    ("index", "audit_records_request_run", "audit_records"),
    ("index", "audit_records_time", "audit_records"),
    ("index", "feedback_request", "feedback"),
    ("table", "_migrations", "_migrations"),
    ("table", "audit_records", "audit_records"),
    ("table", "feedback", "feedback"),
    ("table", "sqlite_sequence", "sqlite_sequence"),
    ("trigger", "audit_records_no_delete", "audit_records"),
    ("trigger", "audit_records_no_update", "audit_records"),
    ("trigger", "feedback_no_delete", "feedback"),
    ("trigger", "feedback_no_update", "feedback"),
]


def test_exact_schema(sink: SQLiteAuditSink) -> None:
    conn = sqlite3.connect(sink.path)
    objects = conn.execute(
        "SELECT type, name, tbl_name FROM sqlite_master ORDER BY type, name"
    ).fetchall()
    assert objects == EXPECTED_OBJECTS
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name='audit_records'").fetchone()
    # Migrations 4, 5, 6 and 7 ALTER TABLE: they append columns to the stored CREATE statement.
    assert sql == AUDIT_TABLE.removesuffix(")") + (
        ", reranker TEXT, unsupported_sentences TEXT, model_calls TEXT, conversation TEXT, "
        "display_anchors TEXT, prev_hash TEXT, chain_hash TEXT)"
    )
    cols = [r[1] for r in conn.execute("PRAGMA table_info(audit_records)")]
    assert cols == ["seq", *COLUMN_NAMES, "prev_hash", "chain_hash"]
    fb = [(r[1], r[2], r[3]) for r in conn.execute("PRAGMA table_info(feedback)")]
    assert fb == [
        ("seq", "INTEGER", 0),
        ("request_id", "TEXT", 1),
        ("verdict", "TEXT", 1),
        ("comment", "TEXT", 1),
        ("timestamp_utc", "TEXT", 1),
    ]
    versions = [r[0] for r in conn.execute("SELECT version FROM _migrations ORDER BY version")]
    assert versions == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_columns_cover_every_record_field() -> None:
    from citebound.contracts.audit import ADDED_IN_VERSION

    assert sorted(COLUMN_NAMES) == sorted(AuditRecord.model_fields)
    # Version-1 columns in field order, then the later ones in the order they were added.
    later = sorted(ADDED_IN_VERSION, key=ADDED_IN_VERSION.__getitem__)
    v1 = [f for f in AuditRecord.model_fields if f not in ADDED_IN_VERSION]
    assert list(COLUMN_NAMES) == [*v1, *later]


def test_reopen_applies_no_migration_twice(tmp_path: Path) -> None:
    path = tmp_path / "audit.sqlite"
    SQLiteAuditSink(path).close()
    again = SQLiteAuditSink(path)
    assert again.schema_version() == 9
    again.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM _migrations").fetchone()[0] == 9
    conn.close()


def test_triggers_refuse_update_and_delete(sink: SQLiteAuditSink) -> None:
    sink.append(record_for("ok"))
    sink.append_feedback(
        FeedbackRecord(request_id="req-1", verdict="correct", timestamp_utc="2026-01-01T00:00:00Z")
    )
    conn = sqlite3.connect(sink.path)
    for sql in (
        "UPDATE audit_records SET failure_reason = 'x'",
        "DELETE FROM audit_records",
        "UPDATE feedback SET verdict = 'incorrect'",
        "DELETE FROM feedback",
    ):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(sql)
    conn.close()
    assert sink.find("req-1")[0].hash_ok()


def test_feedback_is_append_only_and_needs_a_request(sink: SQLiteAuditSink) -> None:
    sink.append(record_for("ok"))
    for verdict in ("correct", "incorrect"):
        sink.append_feedback(
            FeedbackRecord(
                request_id="req-1", verdict=verdict, comment=verdict, timestamp_utc="2026-01-01Z"
            )
        )
    assert [f.verdict for f in sink.feedback("req-1")] == ["correct", "incorrect"]
    with pytest.raises(AuditError, match="no audit record"):
        sink.append_feedback(
            FeedbackRecord(request_id="ghost", verdict="correct", timestamp_utc="2026-01-01Z")
        )


def test_open_sink_picks_sqlite(tmp_path: Path) -> None:
    s = open_sink(tmp_path / "x.sqlite")
    assert isinstance(s, SQLiteAuditSink)
    s.close()


def test_unwritable_location_is_an_audit_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(AuditError, match="cannot open"):
        SQLiteAuditSink(blocker / "audit.sqlite")


def test_a_version_1_store_is_upgraded_in_place(tmp_path: Path) -> None:
    """A file written before migration 4: its records keep their hashes, new ones name the
    reranker."""
    from citebound.audit.columns import to_row
    from citebound.audit.migrations import MIGRATIONS

    path = tmp_path / "audit.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "CREATE TABLE _migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at TEXT NOT NULL)"
    )
    for version, name, statements in MIGRATIONS[:3]:
        for sql in statements:
            conn.execute(sql)
        conn.execute(
            "INSERT INTO _migrations VALUES (?, ?, '2026-01-01T00:00:00Z')", (version, name)
        )
    new = record_for("ok", request_id="old")
    later = tuple(ADDED_IN_VERSION)  # every field added after version 1
    old = new.model_copy(update={"schema_version": 1, **dict.fromkeys(later)})
    old = old.model_copy(update={"record_hash": old.compute_hash()})
    row = {k: v for k, v in to_row(old, lists_as_json=True).items() if k not in later}
    conn.execute(
        f"INSERT INTO audit_records ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
        tuple(row.values()),
    )
    conn.close()

    with SQLiteAuditSink(path) as sink:
        assert sink.schema_version() == 9
        (back,) = sink.find("old")
        assert back == old and back.schema_version == 1 and back.reranker is None
        assert back.hash_ok()
        named = record_for("ok", request_id="new").model_copy(update={"reranker": "rr"})
        sink.append(named.model_copy(update={"record_hash": named.compute_hash()}))
        assert {r.request_id: r.reranker for r in sink.records()} == {"old": None, "new": "rr"}
        assert sink.integrity_check() == "ok"
