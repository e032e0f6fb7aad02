"""PostgreSQL plumbing shared by the store and the audit sink: URLs, the pool, migrations.

psycopg is imported inside the functions that need it, so `import citebound` and the CLI start
without it (it is the `postgres` extra).

* **URL**: `postgresql://user:password@host:port/dbname?options` (libpq syntax; a socket
  directory goes in `?host=/path`). `is_database_url` decides between a URL and a directory.
* **Pool**: psycopg_pool with `POOL_MIN`..`POOL_MAX` connections, a connect timeout, and a
  server-side `statement_timeout` on every connection, so a stuck query fails the request
  instead of hanging it. Connections are in autocommit mode; every write is one explicit
  transaction or a single statement (the audit append: one INSERT), so nothing is
  half-written.
* **Migrations**: numbered, each in its own transaction, under a transaction-scoped advisory lock
  (one lock key per schema), so two replicas starting at once apply each migration exactly once;
  the second waits for the first and then sees it applied.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from citebound.errors import StoreError

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

SCHEMES = ("postgresql://", "postgres://")
# Pool size per process: the API runs `api.concurrency` pipelines at once (CPU cores by default)
# and each holds at most one connection at a time, so 8 covers a 2-8 core host; beyond that,
# requests wait POOL_WAIT_S for a free connection and then fail with a clear reason.
POOL_MIN = 1
POOL_MAX = 8
CONNECT_TIMEOUT_S = 5
POOL_WAIT_S = 10.0
# A statement running longer than this is cancelled by the server (the request fails closed).
STATEMENT_TIMEOUT_MS = 30_000
_PASSWORD = re.compile(r"(password=)[^&\s]*", re.IGNORECASE)


def is_database_url(value: str | None) -> bool:
    """True for a `postgresql://` or `postgres://` URL (anything else is a directory)."""
    return bool(value) and str(value).lower().startswith(SCHEMES)


def redact(url: str) -> str:
    """The URL with its password replaced by `***` (for messages and logs)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{host}"
    return _PASSWORD.sub(r"\1***", urlunsplit(parts._replace(netloc=netloc)))


def url_key(url: str) -> str:
    """A short stable name for a database (password excluded): names local cache directories."""
    return hashlib.sha256(redact(url).encode()).hexdigest()[:16]


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise StoreError(
            "a postgresql:// database needs the PostgreSQL driver: "
            "pip install 'citebound[postgres]'"
        ) from None
    return psycopg


def open_pool(
    url: str, *, what: str, max_size: int = POOL_MAX, role: str | None = None
) -> ConnectionPool:
    """A connection pool to `url`, checked with one connection before it is returned.

    `role`: every connection runs `SET ROLE role` when that role exists and the login user
    may assume it (a role with fewer rights than the login, e.g. the audit writer).

    Raises:
        StoreError: the driver is missing or the database cannot be reached (the message names
            the redacted URL and the server's reason).
    """
    if not is_database_url(url):
        raise StoreError(f"not a PostgreSQL URL: {redact(url)!r} (use postgresql://...)")
    _psycopg()
    from psycopg_pool import ConnectionPool

    def configure(conn: Connection[Any]) -> None:
        conn.execute(f"SET statement_timeout = {int(STATEMENT_TIMEOUT_MS)}")
        if role is not None:
            may = conn.execute(
                "SELECT pg_has_role(current_user, oid, 'MEMBER') FROM pg_roles WHERE rolname = %s",
                (role,),
            ).fetchone()
            if may is not None and may[0]:
                conn.execute(f'SET ROLE "{role}"')

    pool = ConnectionPool(
        url,
        min_size=POOL_MIN,
        max_size=max(POOL_MIN, max_size),
        kwargs={"connect_timeout": CONNECT_TIMEOUT_S, "autocommit": True},
        configure=configure,
        timeout=POOL_WAIT_S,
        open=False,
        name=f"citebound-{what}",
    )
    try:
        pool.open(wait=True, timeout=CONNECT_TIMEOUT_S + 1)
    except Exception as err:
        pool.close()
        raise StoreError(unreachable(url, what, err)) from None
    return pool


def migrate_url(
    url: str,
    *,
    what: str,
    table: str,
    lock_key: str,
    migrations: Sequence[tuple[int, str, Sequence[str]]],
) -> list[int]:
    """`migrate` on a dedicated connection as the login user (not a pooled one that may have
    switched to a restricted role).

    Raises:
        StoreError: unreachable database, failed or too new migrations.
    """
    psycopg = _psycopg()
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except Exception as err:
        raise StoreError(unreachable(url, what, err)) from None
    try:
        conn.execute(f"SET statement_timeout = {int(STATEMENT_TIMEOUT_MS)}")
        done: list[int] = migrate(conn, table=table, lock_key=lock_key, migrations=migrations)
        return done
    except StoreError:
        raise
    except Exception as err:
        raise StoreError(unreachable(url, what, err)) from None
    finally:
        conn.close()


def unreachable(url: str, what: str, err: BaseException) -> str:
    """The message of a database that cannot be reached or used."""
    reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return f"cannot reach the {what} database at {redact(url)}: {reason}"


def migrate(
    conn: Connection[Any],
    *,
    table: str,
    lock_key: str,
    migrations: Sequence[tuple[int, str, Sequence[str]]],
) -> list[int]:
    """Apply pending numbered migrations on `conn`; return the numbers applied here.

    Each migration runs in its own transaction holding `pg_advisory_xact_lock(lock_key)`, and
    re-checks `table` under the lock, so concurrent starters apply each one exactly once. A
    starter waits for another's migration however long it runs (the wait is not cut short by
    the statement timeout).

    Raises:
        StoreError: the database is at a migration newer than this citebound knows, or a
            migration failed (it is rolled back whole).
    """
    key = int.from_bytes(hashlib.sha256(lock_key.encode()).digest()[:8], "big", signed=True)
    known = {m[0] for m in migrations}
    applied: list[int] = []

    def wait_for_lock() -> None:
        # Another starter may hold the lock for a migration that rewrites a large table
        # (audit migration 9: minutes), past the connection's statement timeout: the wait
        # must not be cancelled by it (the replica would fail to start), so it is lifted for
        # this statement only and restored for the migration's own statements.
        row = conn.execute("SELECT current_setting('statement_timeout')").fetchone()
        timeout = str(row[0]) if row else "0"
        conn.execute("SET LOCAL statement_timeout = 0")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
        conn.execute("SELECT set_config('statement_timeout', %s, true)", (timeout,))

    with conn.transaction():
        wait_for_lock()
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
    for number, name, statements in migrations:
        with conn.transaction():
            wait_for_lock()
            done = {r[0] for r in conn.execute(f"SELECT id FROM {table}").fetchall()}
            if done - known:
                raise StoreError(
                    f"database schema ({table}) is at migration {max(done)}, newer than this "
                    f"citebound knows ({max(known)}); upgrade citebound"
                )
            if number in done:
                continue
            try:
                for sql in statements:
                    conn.execute(sql)
            except Exception as err:
                raise StoreError(f"migration {number} ({name}) of {table} failed: {err}") from err
            conn.execute(f"INSERT INTO {table} (id, name) VALUES (%s, %s)", (number, name))
        applied.append(number)
    return applied
