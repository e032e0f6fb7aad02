"""The audit chain on PostgreSQL (issue 34 item 4): verify names an edit, a deletion, a
reorder, a forged append and (against an anchor) a truncated tail; existing databases are
chained from their first record by migration 11."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "audit"))
from chain_tamper import records, rehashed

from citebound.audit.postgres import PostgresAuditSink, _pg_row


def _store(pg_url: str) -> str:
    with PostgresAuditSink(pg_url) as sink:
        for r in records():
            sink.append(r)
        return sink.verify_chain().anchor


def _sql(pg_url: str, *statements: str, params: tuple[object, ...] = ()) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE audit_records DISABLE TRIGGER USER")  # the owner can
        for sql in statements:
            conn.execute(sql, params if "%s" in sql else ())


def _edit(url: str) -> None:
    _sql(url, "UPDATE audit_records SET question = 'What is forged?' WHERE seq = 3")


def _edit_rehashed(url: str) -> None:
    forged = rehashed(records()[2], question="What is forged?")
    _sql(url, "UPDATE audit_records SET question = %s, record_hash = %s WHERE seq = 3",
         params=(forged.question, forged.record_hash))  # fmt: skip


def _delete(url: str) -> None:
    _sql(url, "DELETE FROM audit_records WHERE seq = 3")


def _reorder(url: str) -> None:
    _sql(
        url,
        "ALTER TABLE audit_records ALTER COLUMN seq DROP IDENTITY",
        "UPDATE audit_records SET seq = -2 WHERE seq = 2",
        "UPDATE audit_records SET seq = 2 WHERE seq = 3",
        "UPDATE audit_records SET seq = 3 WHERE seq = -2",
    )


def _forge_append(url: str) -> None:
    forged = rehashed(records()[4], request_id="req-forged")
    _sql(
        url,
        "INSERT INTO audit_records OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_record(NULL::audit_records, %s::json)",
        params=(_pg_row(forged).replace("{", '{"seq": 99, ', 1),),
    )


TAMPERING: list[tuple[Callable[[str], None], str, str]] = [
    (_edit, "EDITED", "req-2"),
    (_edit_rehashed, "EDITED", "req-2"),
    (_delete, "MISSING", "req-3"),
    (_reorder, "REORDERED", "req-2"),
    (_forge_append, "UNCHAINED", "req-forged"),
]


@pytest.mark.parametrize(
    ("tamper", "kind", "request_id"), TAMPERING, ids=lambda x: getattr(x, "__name__", str(x))
)
def test_verify_names_each_kind_of_tampering(
    pg_url: str, tamper: Callable[[str], None], kind: str, request_id: str
) -> None:
    anchor = _store(pg_url)
    with PostgresAuditSink(pg_url) as sink:
        assert sink.verify_chain(anchor).ok
    tamper(pg_url)
    with PostgresAuditSink(pg_url) as sink:
        report = sink.verify_chain()
    assert (kind, request_id) in {(p.kind, p.request_id) for p in report.problems}, report.problems


def test_a_truncated_tail_is_caught_by_the_anchor(pg_url: str) -> None:
    anchor = _store(pg_url)
    _sql(pg_url, "DELETE FROM audit_records WHERE seq >= 4")
    with PostgresAuditSink(pg_url) as sink:
        assert sink.verify_chain().ok
        assert [p.kind for p in sink.verify_chain(anchor).problems] == ["TRUNCATED"]


def test_an_existing_database_is_chained_from_its_first_record(pg_url: str) -> None:
    import psycopg

    from citebound.audit.postgres import AUDIT_MIGRATIONS, AUDIT_MIGRATIONS_TABLE
    from citebound.store.pg_connect import migrate_url

    migrate_url(
        pg_url,
        what="audit",
        table=AUDIT_MIGRATIONS_TABLE,
        lock_key="citebound-audit-migrations",
        migrations=AUDIT_MIGRATIONS[:10],
    )
    old = records(3)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for r in old:
            conn.execute(
                "INSERT INTO audit_records OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_record(NULL::audit_records, %s::json) "
                "ON CONFLICT DO NOTHING",
                (_pg_row(r).replace("{", f'{{"seq": {old.index(r) + 1}, ', 1),),
            )
        conn.execute("SELECT setval(pg_get_serial_sequence('audit_records', 'seq'), 3)")
    with PostgresAuditSink(pg_url) as sink:
        assert sink.schema_version() == 11
        report = sink.verify_chain()
        assert report.ok and report.count == 3, report.problems
        sink.append(records(4)[3])
        assert sink.verify_chain().ok and sink.verify_chain().count == 4
