"""PostgreSQL audit sink: one append-only audit trail shared by every API replica.

Same columns as the SQLite sink (`audit.columns`; bools as 0/1, non-finite reals as words),
except that the JSON columns (text lists included) are jsonb (migration 9); same record hash
check (`AuditRecord.hash_ok`) on append, same ordering. Append-only is enforced by the database
twice:

* triggers refuse UPDATE, DELETE and TRUNCATE on `audit_records` and `feedback`, whoever asks;
* the sink's connections `SET ROLE citebound_audit_writer`, a role granted only SELECT and
  INSERT (when the migrating user may create roles; docs/postgres.md shows how to create it
  by hand otherwise).

Exactly one record per (request_id, run_id) across all replicas: a unique index on
`(request_id, coalesce(run_id, ''))`; a second append fails with AuditError("already exists").
`append` returns after COMMIT, i.e. after the server flushed the WAL (synchronous_commit on,
the PostgreSQL default): an acknowledged record survives a killed replica.

TEXT and jsonb cannot hold U+0000: a row whose model or caller text holds one is written with
a reversible escape and read back as given (`audit.pg_text`, migration 10).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from citebound.audit.chain import GENESIS, ChainReport, ChainRow, verify
from citebound.audit.columns import COLUMN_NAMES, COLUMNS, from_row, to_row
from citebound.audit.pg_text import (
    ESCAPE_COLUMN,
    ESCAPED_COLUMNS,
    ESCAPED_FEEDBACK_COLUMNS,
    UNESCAPED_TEXT,
    escape_row,
    unescape_row,
)
from citebound.contracts.audit import AuditRecord, FeedbackRecord
from citebound.errors import AuditError, CiteboundError
from citebound.store.pg_connect import migrate_url, open_pool, redact

AUDIT_ROLE = "citebound_audit_writer"
AUDIT_MIGRATIONS_TABLE = "citebound_audit_migrations"
_SQL_TYPES = {
    "text": "TEXT",
    "int": "BIGINT",
    "real": "DOUBLE PRECISION",
    "bool": "INTEGER",
    "text_list": "TEXT",
    "json": "TEXT",
}
# Columns added by a later migration (as in SQLite): not in the CREATE TABLE of migration 1.
_LATER = {"reranker": 4, "model_calls": 6, "conversation": 7, "display_anchors": 8}
_V1 = [c for c in COLUMNS if c.name not in _LATER]
_TABLE = (
    "CREATE TABLE audit_records (\n    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n"
    + ",\n".join(
        f"    {c.name} {_SQL_TYPES[c.kind]}{'' if c.nullable else ' NOT NULL'}" for c in _V1
    )
    + "\n)"
)
_REFUSE = """CREATE FUNCTION citebound_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END $$"""
_ROLE = f"""DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{AUDIT_ROLE}') THEN
        CREATE ROLE {AUDIT_ROLE} NOLOGIN;
    END IF;
    GRANT SELECT, INSERT ON audit_records, feedback TO {AUDIT_ROLE};
    REVOKE UPDATE, DELETE, TRUNCATE ON audit_records, feedback FROM {AUDIT_ROLE};
    GRANT SELECT ON {AUDIT_MIGRATIONS_TABLE} TO {AUDIT_ROLE};
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot create role {AUDIT_ROLE}: append-only relies on the triggers alone';
END $$"""

# Migration 9: the JSON columns (`json` and `text_list` kinds) become jsonb, so SQL reads them
# as JSON (`evidence->0->>'chunk_id'`). Until then they were TEXT holding canonical JSON, and the
# insert encoded each one as a JSON string inside the JSON row parameter: encoded twice. Rows
# written before are converted in place; their canonical text may hold the bare tokens NaN,
# Infinity, -Infinity, which jsonb refuses, so those (outside JSON strings only: the text is
# cut into string literals and the rest) become the strings "NaN", ... as `json_safe` writes
# them, and read back as the same floats. So does -0.0, which jsonb's numeric would turn into
# 0 (`columns.NEGATIVE_ZERO`; Python writes it only as `-0.0`, and `-0.05` is left alone). A
# row keeps its values, so its hash still verifies.
JSONB_COLUMNS = tuple(c.name for c in COLUMNS if c.kind in ("json", "text_list"))
_TEXT_TO_JSONB = r"""CREATE FUNCTION citebound_audit_jsonb(t text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    -- a JSON string literal (escapes included), or a run of text outside strings
    pieces CONSTANT text := '("(?:[^"\\]|\\.)*"|[^"]+)';
    safe text;
BEGIN
    IF t IS NULL THEN
        RETURN NULL;
    END IF;
    IF position('-0.0' in t) = 0 THEN  -- no negative zero to keep: the plain cast if valid
        BEGIN
            RETURN t::jsonb;
        EXCEPTION WHEN invalid_text_representation THEN
            NULL;  -- a bare non-finite token: rewritten below, outside string literals only
        END;
    END IF;
    SELECT string_agg(
        CASE WHEN left(p.m[1], 1) = '"' THEN p.m[1]
             ELSE regexp_replace(
                 regexp_replace(p.m[1], '(-?Infinity|NaN)', '"\1"', 'g'),
                 '-0\.0(?![0-9eE])', '"-0.0"', 'g') END,
        '' ORDER BY p.n)
    INTO safe
    FROM regexp_matches(t, pieces, 'g') WITH ORDINALITY AS p(m, n);
    RETURN safe::jsonb;
END $$"""

AUDIT_MIGRATIONS: list[tuple[int, str, tuple[str, ...]]] = [
    (
        1,
        "audit_records",
        (
            _TABLE,
            "CREATE UNIQUE INDEX audit_records_request_run "
            "ON audit_records (request_id, coalesce(run_id, ''))",
            "CREATE INDEX audit_records_time ON audit_records (timestamp_utc, request_id)",
        ),
    ),
    (
        2,
        "feedback",
        (
            "CREATE TABLE feedback (\n"
            "    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n"
            "    request_id TEXT NOT NULL,\n"
            "    verdict TEXT NOT NULL CHECK (verdict IN ('correct', 'incorrect')),\n"
            "    comment TEXT NOT NULL,\n"
            "    timestamp_utc TEXT NOT NULL\n"
            ")",
            "CREATE INDEX feedback_request ON feedback (request_id, seq)",
        ),
    ),
    (
        3,
        "append_only_triggers",
        (
            _REFUSE,
            *(
                f"CREATE TRIGGER {t}_append_only BEFORE UPDATE OR DELETE ON {t} "
                "FOR EACH ROW EXECUTE FUNCTION citebound_append_only()"
                for t in ("audit_records", "feedback")
            ),
            *(
                f"CREATE TRIGGER {t}_no_truncate BEFORE TRUNCATE ON {t} "
                "FOR EACH STATEMENT EXECUTE FUNCTION citebound_append_only()"
                for t in ("audit_records", "feedback")
            ),
        ),
    ),
    (4, "reranker", ("ALTER TABLE audit_records ADD COLUMN reranker TEXT",)),
    (5, "writer_role", (_ROLE,)),
    (6, "model_calls", ("ALTER TABLE audit_records ADD COLUMN model_calls TEXT",)),
    (7, "conversation", ("ALTER TABLE audit_records ADD COLUMN conversation TEXT",)),
    (8, "display_anchors", ("ALTER TABLE audit_records ADD COLUMN display_anchors TEXT",)),
    (
        9,
        "jsonb_columns",
        (
            "SET LOCAL statement_timeout = 0",  # rewrites the table: as long as it takes
            _TEXT_TO_JSONB,
            "ALTER TABLE audit_records "
            + ", ".join(
                f"ALTER COLUMN {c} TYPE jsonb USING citebound_audit_jsonb({c})"
                for c in JSONB_COLUMNS
            ),
            "DROP FUNCTION citebound_audit_jsonb(text)",
        ),
    ),
    (
        10,
        "text_escape",
        # U+0000 in model or caller text (audit/pg_text.py): NULL on a row stored as given.
        (
            f"ALTER TABLE audit_records ADD COLUMN {ESCAPE_COLUMN} TEXT",
            f"ALTER TABLE feedback ADD COLUMN {ESCAPE_COLUMN} TEXT",
        ),
    ),
    (
        11,
        "audit_chain",
        # The audit chain (audit/chain.py): existing records chained from the first, in seq
        # order, with the append-only trigger off for this one transaction.
        (
            "SET LOCAL statement_timeout = 0",
            "ALTER TABLE audit_records ADD COLUMN prev_hash TEXT, ADD COLUMN chain_hash TEXT",
            "ALTER TABLE audit_records DISABLE TRIGGER audit_records_append_only",
            f"""DO $$
DECLARE
    prev text := '{GENESIS}';
    r record;
BEGIN
    FOR r IN SELECT seq, record_hash FROM audit_records ORDER BY seq LOOP
        UPDATE audit_records SET prev_hash = prev,
            chain_hash = 'sha256:' || encode(sha256(convert_to(
                'citebound-audit-chain-v1' || chr(10) || prev || chr(10) || r.record_hash,
                'UTF8')), 'hex')
        WHERE seq = r.seq
        RETURNING chain_hash INTO prev;
    END LOOP;
END $$""",
            "ALTER TABLE audit_records ENABLE TRIGGER audit_records_append_only",
        ),
    ),
]

# The row travels as ONE json parameter, typed by the table's own row type: with one
# placeholder per column (52 > psycopg's MAX_CACHED_STATEMENT_PARAMS = 50) psycopg re-parsed
# the whole statement on every append, on the request thread (~0.1 ms of GIL per answer).
# Values are what `to_row` gives (text, integers, finite floats, NULL, the words NaN,
# Infinity, -Infinity for non-finite reals, and JSON data for the jsonb columns, non-finite
# numbers inside written as those words; audit.columns): JSON numbers parse to the same
# BIGINT/DOUBLE PRECISION (Python writes floats in shortest round-trip form), JSON strings to
# the same text or, for those words, the same non-finite DOUBLE PRECISION; the audit contract
# suite checks every record reads back equal.
# `text_escape` (migration 10) rides along: absent from the JSON of a row without a NUL, so NULL.
_PG_COLUMNS = (*COLUMN_NAMES, ESCAPE_COLUMN)
# The chain columns (migration 11) are computed in the INSERT from the newest row's, under a
# transaction-scoped advisory lock that orders appends across replicas (audit/chain.py).
_INSERT = (
    f"INSERT INTO audit_records ({', '.join(_PG_COLUMNS)}, prev_hash, chain_hash) "
    f"SELECT {', '.join(_PG_COLUMNS)}, p.h, 'sha256:' || encode(sha256(convert_to("
    "'citebound-audit-chain-v1' || chr(10) || p.h || chr(10) || j.record_hash, 'UTF8')), 'hex') "
    "FROM json_populate_record(NULL::audit_records, %s::json) j, "
    f"(SELECT coalesce((SELECT chain_hash FROM audit_records ORDER BY seq DESC LIMIT 1), "
    f"'{GENESIS}') AS h) p"
)
_CHAIN_LOCK = int.from_bytes(
    hashlib.sha256(b"citebound-audit-chain").digest()[:8], "big", signed=True
)
_SELECT = f"SELECT {', '.join(_PG_COLUMNS)} FROM audit_records"
# json.dumps writes U+0000 as this escape (ASCII output): its absence rules out a NUL in the
# row at the cost of one substring search (a backslash before `u0000` in text gives a false
# alarm, which only sends the row through the exact check).
_NUL_IN_JSON = "\\u0000"


def _pg_row(record: AuditRecord) -> str:
    """The row of `record` as the one JSON parameter of `_INSERT` (audit/pg_text.py escapes
    NUL-bearing text)."""
    row = to_row(record, lists_as_json=True, nested_json=True)
    text = json.dumps(row, allow_nan=False)
    if _NUL_IN_JSON not in text:
        return text
    what = f"audit record {record.request_id}"
    escaped = escape_row(row, ESCAPED_COLUMNS, what=what, unescaped=UNESCAPED_TEXT)
    return json.dumps(escaped, allow_nan=False)


class PostgresAuditSink:
    """Append-only audit records and feedback in PostgreSQL (thread-safe: a pool)."""

    def __init__(self, url: str) -> None:
        self.url = url
        try:
            migrate_url(
                url,
                what="audit",
                table=AUDIT_MIGRATIONS_TABLE,
                lock_key="citebound-audit-migrations",
                migrations=AUDIT_MIGRATIONS,
            )
            self._pool = open_pool(url, what="audit", role=AUDIT_ROLE)
        except CiteboundError as err:
            raise AuditError(str(err)) from None

    def __repr__(self) -> str:
        return f"PostgresAuditSink({redact(self.url)!r})"

    @property
    def path(self) -> str:
        """Where the records are (the redacted URL), as `SQLiteAuditSink.path` names a file."""
        return redact(self.url)

    def schema_version(self) -> int:
        rows = self._query(f"SELECT max(id) FROM {AUDIT_MIGRATIONS_TABLE}")
        return int(rows[0][0] or 0)

    def writer_role_active(self) -> bool:
        """True when this sink's connections run as the INSERT/SELECT-only role."""
        return bool(self._query("SELECT current_user = %s", (AUDIT_ROLE,))[0][0])

    # --- audit records ----------------------------------------------------------------------

    def append(self, record: AuditRecord) -> None:
        """Durably append one record; refuses duplicates and records whose hash is wrong."""
        if not record.hash_ok():
            raise AuditError(f"record {record.request_id} has a wrong record_hash; not stored")
        import psycopg

        try:
            # Encoded before a connection is taken: a pool connection is held only for the
            # INSERT itself, not for CPU work other requests' appends would wait behind.
            row = _pg_row(record)
        except ValueError as err:  # never expected: to_row writes non-finite reals as words
            raise AuditError(f"cannot encode audit record {record.request_id}: {err}") from err
        try:
            # One transaction: the chain lock, then the INSERT that links to the newest row;
            # committed (WAL flushed) when the block ends. Appends from every replica queue
            # on the lock for the INSERT alone: the chain needs one order.
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_CHAIN_LOCK,))
                conn.execute(_INSERT, (row,))
        except psycopg.errors.UniqueViolation as err:
            raise AuditError(
                f"audit record for request_id={record.request_id!r} run_id={record.run_id!r} "
                f"already exists (one record per request per run): {err}"
            ) from err
        except Exception as err:
            raise AuditError(f"cannot append to audit database {self.path}: {err}") from err

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        try:
            with self._pool.connection() as conn:
                return conn.execute(sql, params).fetchall()
        except Exception as err:
            raise AuditError(f"cannot read audit database {self.path}: {err}") from err

    def _records(self, sql: str, params: tuple[Any, ...] = ()) -> list[AuditRecord]:
        rows = self._query(sql, params)
        return [
            from_row(
                unescape_row(
                    dict(zip(_PG_COLUMNS, row, strict=True)),
                    ESCAPED_COLUMNS,
                    what=f"audit record {row[1]}",
                )
            )
            for row in rows
        ]

    def find(self, request_id: str) -> list[AuditRecord]:
        return self._records(f"{_SELECT} WHERE request_id = %s ORDER BY seq", (request_id,))

    def records(self) -> list[AuditRecord]:
        # COLLATE "C": byte order, as SQLite compares text.
        return self._records(
            f'{_SELECT} ORDER BY timestamp_utc COLLATE "C", request_id COLLATE "C", '
            "coalesce(run_id, '') COLLATE \"C\""
        )

    def chain_rows(self) -> list[ChainRow]:
        """Every record with its seq and chain columns, in append order (audit/chain.py)."""
        rows = self._query(f"SELECT seq, prev_hash, chain_hash, {_SELECT[7:]} ORDER BY seq")
        return [
            ChainRow(
                r[0],
                from_row(
                    unescape_row(
                        dict(zip(_PG_COLUMNS, r[3:], strict=True)),
                        ESCAPED_COLUMNS,
                        what=f"audit record {r[4]}",
                    )
                ),
                r[1],
                r[2],
            )
            for r in rows
        ]

    def verify_chain(self, anchor: str | None = None) -> ChainReport:
        """Walk the chain (audit/chain.py). An identity's counter skips values on failed
        inserts, so a truncated tail shows only against an anchor."""
        return verify(self.chain_rows(), anchor=anchor)

    def count(self) -> int:
        """Number of audit records (one per answered request and run)."""
        return int(self._query("SELECT count(*) FROM audit_records")[0][0])

    # --- feedback ---------------------------------------------------------------------------

    def append_feedback(self, feedback: FeedbackRecord) -> None:
        """Append a verdict on a recorded request; unknown request ids are refused."""
        what = f"feedback on {feedback.request_id}"
        row = escape_row(
            feedback.model_dump(), ESCAPED_FEEDBACK_COLUMNS, what=what, unescaped=("request_id",)
        )
        try:
            with self._pool.connection() as conn, conn.transaction():
                known = conn.execute(
                    "SELECT 1 FROM audit_records WHERE request_id = %s LIMIT 1",
                    (feedback.request_id,),
                ).fetchone()
                if known is None:
                    raise AuditError(f"no audit record for request_id={feedback.request_id!r}")
                conn.execute(
                    "INSERT INTO feedback (request_id, verdict, comment, timestamp_utc, "
                    f"{ESCAPE_COLUMN}) VALUES (%s, %s, %s, %s, %s)",
                    (
                        row["request_id"],
                        row["verdict"],
                        row["comment"],
                        row["timestamp_utc"],
                        row[ESCAPE_COLUMN],
                    ),
                )
        except AuditError:
            raise
        except Exception as err:
            raise AuditError(f"cannot append feedback to {self.path}: {err}") from err

    def feedback(self, request_id: str) -> list[FeedbackRecord]:
        """Feedback on `request_id`, oldest first."""
        names = ("request_id", "verdict", "comment", "timestamp_utc", ESCAPE_COLUMN)
        rows = self._query(
            f"SELECT {', '.join(names)} FROM feedback WHERE request_id = %s ORDER BY seq",
            (request_id,),
        )
        what = f"feedback on {request_id}"
        return [
            FeedbackRecord.model_validate(
                unescape_row(dict(zip(names, r, strict=True)), ESCAPED_FEEDBACK_COLUMNS, what=what)
            )
            for r in rows
        ]

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> PostgresAuditSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
