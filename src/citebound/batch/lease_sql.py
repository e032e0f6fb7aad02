"""Run leases in a SQL table, taken and renewed by compare-and-swap (batch/run_lock.py).

A lease row is (name, holder token, holder identity, expiry). Every change is ONE conditional
statement, so two drivers can never both believe they hold a run:

* **acquire**: insert the row, or take over an existing one only WHERE its expiry has passed;
  the statement reports whether it wrote. Two contenders racing: the database serialises them
  on the row (PostgreSQL: the unique index and the row lock of `INSERT ... ON CONFLICT DO
  UPDATE ... WHERE`, at READ COMMITTED whatever the database's default; SQLite: `BEGIN
  IMMEDIATE`, one writer at a time), and the loser's WHERE sees the winner's unexpired
  lease, so exactly one wins.
* **renew**: `UPDATE ... WHERE holder = me AND expiry not passed`. A stale holder (its lease
  expired, or was taken over after expiring) changes nothing and gets `LeaseLost`, reason
  code BATCH_RUN_LOCKED, saying why; it must stop before its next commit.
* **release**: `DELETE ... WHERE holder = me`: never another driver's lease.

PostgreSQL reads the time from the database (`clock_timestamp()`), so drivers on hosts whose
clocks disagree still agree on whether a lease expired. SQLite is a local file, so every
contender is on one host and uses its clock.

`PostgresLeases` is what a batch run on a PostgreSQL store uses for output in an object store,
where no OS lock reaches and the object lease cannot compare-and-swap; `SQLiteLeases` serves
local output on a system without `flock` (the staging folder's `driver.lease.sqlite`).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from citebound.batch.run_lock import RunLocked
from citebound.contracts.enums import ReasonCode
from citebound.errors import ConfigError, StoreError
from citebound.store.pg_connect import CONNECT_TIMEOUT_S, STATEMENT_TIMEOUT_MS, migrate_url, redact


class LeaseLost(RunLocked):
    """A renewal found the lease no longer this holder's (expired, taken over, released)."""


class LeaseStore(Protocol):
    where: str

    def acquire(
        self, name: str, token: str, identity: dict[str, Any], seconds: float
    ) -> dict[str, Any] | None:
        """Take the lease (None) or leave it: the live holder's identity ({} if unknown)."""

    def renew(self, name: str, token: str, seconds: float) -> None:
        """Push the expiry `seconds` ahead; LeaseLost when the lease is not this holder's."""

    def release(self, name: str, token: str) -> None: ...

    def close(self) -> None: ...


def lost(name: str, where: str, holder: dict[str, Any] | None, token: str) -> LeaseLost:
    """The error of a renewal that changed nothing, from the row found after it."""
    if holder is None:
        why = "it was released or never taken"
    elif holder.get("token") == token:
        why = "it expired before this renewal (the driver stalled, or the store was unreachable, for longer than the lease)"  # noqa: E501
    else:
        why = (
            f"pid {holder.get('pid')} on {holder.get('host')} took it over after it expired "
            f"(since {holder.get('started_utc')})"
        )
    return LeaseLost(
        f"{ReasonCode.BATCH_RUN_LOCKED.value}: lease {name!r} ({where}) is no longer this "
        f"driver's: {why}; stopped before committing. Run the same run id again to resume "
        "once no other driver holds it"
    )


# -- SQLite ------------------------------------------------------------------------------------

# How long a lease change waits for another process's write on the file (each holds it for one
# statement, microseconds): past this, something else holds the file and the driver fails.
SQLITE_BUSY_TIMEOUT_S = 30.0

_SQLITE_TABLE = (
    "CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, "
    "identity TEXT NOT NULL, expires_at REAL NOT NULL)"
)
_SQLITE_TAKE = (
    "INSERT INTO leases (name, holder, identity, expires_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, identity = excluded.identity, "
    "expires_at = excluded.expires_at WHERE leases.expires_at <= ?"
)


class SQLiteLeases:
    """Leases in one SQLite file; each change is a conditional statement in BEGIN IMMEDIATE."""

    def __init__(self, path: Path) -> None:
        self.where = str(path)
        self._lock = threading.Lock()  # one connection, shared with the heartbeat thread
        self.busy_timeout = SQLITE_BUSY_TIMEOUT_S
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                path, isolation_level=None, timeout=self.busy_timeout, check_same_thread=False
            )
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.execute(_SQLITE_TABLE)
        except (OSError, sqlite3.Error) as err:
            raise ConfigError(f"cannot open the run lease file {path}: {err}") from err

    def _write(
        self, name: str, sql: str, params: tuple[Any, ...]
    ) -> tuple[int, dict[str, Any] | None]:
        """(rows changed, lease `name`'s identity after the statement), in one IMMEDIATE
        transaction: no other connection writes between the two. StoreError (a reason, not a
        traceback) when the file is locked past the busy timeout or cannot be written."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    changed = self._conn.execute(sql, params).rowcount
                    row = self._conn.execute(
                        "SELECT identity FROM leases WHERE name = ?", (name,)
                    ).fetchone()
                    self._conn.execute("COMMIT")
                except BaseException:
                    # SQLite may have rolled back already (an I/O error): a second ROLLBACK
                    # would fail and hide the error that matters.
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as err:
                raise StoreError(
                    f"run lease file {self.where}: {err} (locked: another process held it "
                    f"past the {self.busy_timeout:g} s busy timeout; otherwise the file cannot "
                    "be written); the lease is unchanged"
                ) from err
        return changed, (json.loads(row[0]) if row else None)

    def acquire(
        self, name: str, token: str, identity: dict[str, Any], seconds: float
    ) -> dict[str, Any] | None:
        now = time.time()
        changed, holder = self._write(
            name, _SQLITE_TAKE, (name, token, json.dumps(identity), now + seconds, now)
        )
        return None if changed == 1 else (holder or {})

    def renew(self, name: str, token: str, seconds: float) -> None:
        now = time.time()
        changed, holder = self._write(
            name,
            "UPDATE leases SET expires_at = ? WHERE holder = ? AND expires_at > ? AND name = ?",
            (now + seconds, token, now, name),
        )
        if changed != 1:
            raise lost(name, self.where, holder, token)

    def release(self, name: str, token: str) -> None:
        self._write(name, "DELETE FROM leases WHERE holder = ? AND name = ?", (token, name))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# -- PostgreSQL --------------------------------------------------------------------------------

LEASE_MIGRATIONS: list[tuple[int, str, tuple[str, ...]]] = [
    (
        1,
        "leases",
        (
            "CREATE TABLE citebound_leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, "
            "identity JSONB NOT NULL, expires_at TIMESTAMPTZ NOT NULL)",
        ),
    ),
]
_PG_TAKE = (
    "INSERT INTO citebound_leases AS l (name, holder, identity, expires_at) "
    "VALUES (%s, %s, %s::jsonb, clock_timestamp() + make_interval(secs => %s)) "
    "ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, identity = EXCLUDED.identity, "
    "expires_at = EXCLUDED.expires_at WHERE l.expires_at <= clock_timestamp() RETURNING holder"
)
_PG_RENEW = (
    "UPDATE citebound_leases SET expires_at = clock_timestamp() + make_interval(secs => %s) "
    "WHERE name = %s AND holder = %s AND expires_at > clock_timestamp() RETURNING holder"
)
_PG_HOLDER = "SELECT identity FROM citebound_leases WHERE name = %s"


class PostgresLeases:
    """Leases in the store database's `citebound_leases` table (its own migrations table).

    A connection per operation (a lease is touched every few tens of seconds): a connection
    dropped between renewals costs nothing, and the heartbeat thread shares no connection."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.where = f"{redact(url)} citebound_leases"
        migrate_url(
            url,
            what="run lease",
            table="citebound_lease_migrations",
            lock_key="citebound-lease-migrations",
            migrations=LEASE_MIGRATIONS,
        )

    def _run(self, sql: str, params: tuple[Any, ...], name: str) -> tuple[bool, Any]:
        """(whether `sql` returned a row, the lease's identity after it)."""
        import psycopg

        try:
            with psycopg.connect(
                self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
            ) as conn:
                conn.execute(f"SET statement_timeout = {int(STATEMENT_TIMEOUT_MS)}")
                # The compare-and-swap relies on READ COMMITTED: a statement that waited on
                # the row lock re-checks its WHERE against the winner's row and writes nothing.
                # A database whose default is stricter would raise a serialization error
                # instead, and the loser of a race would fail with that, not be refused.
                conn.execute("SET default_transaction_isolation = 'read committed'")
                wrote = conn.execute(sql, params).fetchone() is not None
                row = conn.execute(_PG_HOLDER, (name,)).fetchone()
        except psycopg.Error as err:
            raise StoreError(f"run lease database {redact(self.url)}: {err}") from err
        return wrote, (row[0] if row else None)

    def acquire(
        self, name: str, token: str, identity: dict[str, Any], seconds: float
    ) -> dict[str, Any] | None:
        wrote, holder = self._run(_PG_TAKE, (name, token, json.dumps(identity), seconds), name)
        return None if wrote else (holder or {})

    def renew(self, name: str, token: str, seconds: float) -> None:
        wrote, holder = self._run(_PG_RENEW, (seconds, name, token), name)
        if not wrote:
            raise lost(name, self.where, holder, token)

    def release(self, name: str, token: str) -> None:
        self._run(
            "DELETE FROM citebound_leases WHERE name = %s AND holder = %s RETURNING holder",
            (name, token),
            name,
        )

    def close(self) -> None:
        """Nothing held between operations."""
