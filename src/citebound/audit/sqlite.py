"""SQLite audit sink: the embedded default. WAL, numbered migrations, append-only triggers.

Durability: every append is its own transaction with `synchronous=FULL`, so a record whose
`append` returned survives a killed process (and a power loss). The triggers refuse UPDATE
and DELETE even from other programs using the same file.

Thread-safe: one connection shared by every thread, each call under one lock. A pipeline built
on one thread and run from a web framework's worker threads used to fail every request with
AUDIT_FAILED ("SQLite objects created in a thread can only be used in that same thread"). The
lock also queues concurrent appends in arrival order; SQLite's own busy handler polls with
sleeps, and under 32 concurrent writers some waited tens of seconds (benchmarks/bench_server.py).

    >>> import tempfile, pathlib
    >>> sink = SQLiteAuditSink(pathlib.Path(tempfile.mkdtemp()) / "audit.sqlite")
    >>> sink.schema_version()
    6
    >>> sink.close()
"""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from citebound.audit.chain import GENESIS, ChainReport, ChainRow, link, verify
from citebound.audit.columns import COLUMN_NAMES, from_row, to_row
from citebound.audit.migrations import MIGRATIONS
from citebound.contracts.audit import AuditRecord, FeedbackRecord
from citebound.errors import AuditError

_CHAIN_COLUMNS = ("prev_hash", "chain_hash")
_INSERT = (
    f"INSERT INTO audit_records ({', '.join((*COLUMN_NAMES, *_CHAIN_COLUMNS))}) "
    f"VALUES ({', '.join(':' + n for n in (*COLUMN_NAMES, *_CHAIN_COLUMNS))})"
)
_SELECT = f"SELECT {', '.join(COLUMN_NAMES)} FROM audit_records"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SQLiteAuditSink:
    """Append-only audit records and feedback in one SQLite file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, one transaction per append.
            # check_same_thread=False: every use is serialized by self._lock instead.
            self._conn = sqlite3.connect(
                self.path, isolation_level=None, timeout=30.0, check_same_thread=False
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except (OSError, sqlite3.Error) as err:
            raise AuditError(f"cannot open audit store {self.path}: {err}") from err

    # --- schema -----------------------------------------------------------------------------

    def _migrate(self) -> None:
        c = self._conn
        c.execute(
            "CREATE TABLE IF NOT EXISTS _migrations ("
            "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        done = {row[0] for row in c.execute("SELECT version FROM _migrations")}
        for version, name, statements in MIGRATIONS:
            if version in done:
                continue
            c.execute("BEGIN IMMEDIATE")
            try:
                # Another process may have migrated between our read and the lock.
                if c.execute("SELECT 1 FROM _migrations WHERE version=?", (version,)).fetchone():
                    c.execute("COMMIT")
                    continue
                for step in statements:
                    if isinstance(step, str):
                        c.execute(step)
                    else:
                        step(c)
                c.execute(
                    "INSERT INTO _migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, _now()),
                )
                c.execute("COMMIT")
            except sqlite3.Error:
                c.execute("ROLLBACK")
                raise

    def schema_version(self) -> int:
        """Highest applied migration number."""
        with self._lock:
            row = self._conn.execute("SELECT max(version) FROM _migrations").fetchone()
        return int(row[0] or 0)

    # --- audit records ----------------------------------------------------------------------

    def append(self, record: AuditRecord) -> None:
        """Durably append one record; refuses duplicates and records whose hash is wrong."""
        if not record.hash_ok():
            raise AuditError(f"record {record.request_id} has a wrong record_hash; not stored")
        try:
            with self._transaction():  # BEGIN IMMEDIATE: no other writer between read and insert
                last = self._conn.execute(
                    "SELECT chain_hash FROM audit_records ORDER BY seq DESC LIMIT 1"
                ).fetchone()
                prev = last[0] if last and last[0] else GENESIS
                row = to_row(record, lists_as_json=True)
                row |= {"prev_hash": prev, "chain_hash": link(prev, record.record_hash)}
                self._conn.execute(_INSERT, row)
        except sqlite3.IntegrityError as err:
            raise AuditError(
                f"audit record for request_id={record.request_id!r} run_id={record.run_id!r} "
                f"already exists (one record per request per run): {err}"
            ) from err
        except sqlite3.Error as err:
            raise AuditError(f"cannot append to audit store {self.path}: {err}") from err

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[AuditRecord]:
        try:
            with self._lock:
                rows = self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as err:
            raise AuditError(f"cannot read audit store {self.path}: {err}") from err
        return [from_row(dict(zip(COLUMN_NAMES, row, strict=True))) for row in rows]

    def find(self, request_id: str) -> list[AuditRecord]:
        return self._rows(f"{_SELECT} WHERE request_id = ? ORDER BY seq", (request_id,))

    def records(self) -> list[AuditRecord]:
        return self._rows(f"{_SELECT} ORDER BY timestamp_utc, request_id, ifnull(run_id, '')")

    def chain_rows(self) -> list[ChainRow]:
        """Every record with its seq and chain columns, in append order (audit/chain.py)."""
        sql = f"SELECT seq, prev_hash, chain_hash, {', '.join(COLUMN_NAMES)} FROM audit_records"
        try:
            with self._lock:
                rows = self._conn.execute(f"{sql} ORDER BY seq").fetchall()
        except sqlite3.Error as err:
            raise AuditError(f"cannot read audit store {self.path}: {err}") from err
        return [
            ChainRow(r[0], from_row(dict(zip(COLUMN_NAMES, r[3:], strict=True))), r[1], r[2])
            for r in rows
        ]

    def verify_chain(self, anchor: str | None = None) -> ChainReport:
        """Walk the chain (audit/chain.py); AUTOINCREMENT's counter shows a truncated tail."""
        rows = self.chain_rows()
        with self._lock:
            issued = self._conn.execute(
                "SELECT seq FROM sqlite_sequence WHERE name = 'audit_records'"
            ).fetchone()
        return verify(rows, issued=int(issued[0]) if issued else None, anchor=anchor)

    # --- feedback ---------------------------------------------------------------------------

    def append_feedback(self, feedback: FeedbackRecord) -> None:
        """Append a verdict on a recorded request; unknown request ids are refused."""
        with self._lock:  # reentrant: the transaction below takes it again
            self._append_feedback(feedback)

    def _append_feedback(self, feedback: FeedbackRecord) -> None:
        known = self._conn.execute(
            "SELECT 1 FROM audit_records WHERE request_id = ? LIMIT 1", (feedback.request_id,)
        ).fetchone()
        if known is None:
            raise AuditError(f"no audit record for request_id={feedback.request_id!r}")
        try:
            with self._transaction():
                self._conn.execute(
                    "INSERT INTO feedback (request_id, verdict, comment, timestamp_utc) "
                    "VALUES (?, ?, ?, ?)",
                    (
                        feedback.request_id,
                        feedback.verdict,
                        feedback.comment,
                        feedback.timestamp_utc,
                    ),
                )
        except sqlite3.Error as err:
            raise AuditError(f"cannot append feedback to {self.path}: {err}") from err

    def feedback(self, request_id: str) -> list[FeedbackRecord]:
        """Feedback on `request_id`, oldest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT request_id, verdict, comment, timestamp_utc FROM feedback "
                "WHERE request_id = ? ORDER BY seq",
                (request_id,),
            ).fetchall()
        return [
            FeedbackRecord(request_id=r[0], verdict=r[1], comment=r[2], timestamp_utc=r[3])
            for r in rows
        ]

    # --- plumbing ---------------------------------------------------------------------------

    def _transaction(self) -> _Tx:
        return _Tx(self._conn, self._lock)

    def integrity_check(self) -> str:
        """`PRAGMA integrity_check` result ("ok" when the file is sound)."""
        with self._lock:
            return str(self._conn.execute("PRAGMA integrity_check").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SQLiteAuditSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Tx:
    """BEGIN IMMEDIATE ... COMMIT, ROLLBACK on error (the connection is in autocommit mode),
    holding the sink's lock for the whole transaction."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock):
        self._conn = conn
        self._lock = lock

    def __enter__(self) -> None:
        self._lock.acquire()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise

    def __exit__(self, exc_type: object, *rest: object) -> None:
        try:
            if exc_type is not None:
                self._conn.execute("ROLLBACK")
                return
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error:
                # A failed COMMIT (disk full, I/O error) can leave the transaction open, and
                # every later BEGIN would fail; end it so the sink stays usable.
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        finally:
            self._lock.release()
