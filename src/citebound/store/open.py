"""`open_store`: the embedded SQLite directory, or PostgreSQL when a database URL is given."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from citebound.errors import ConfigError
from citebound.store.base import IngestStore
from citebound.store.pg_connect import is_database_url, redact, url_key
from citebound.store.sqlite import SqliteStore


class ClosableStore(IngestStore, Protocol):
    def close(self) -> None: ...


def open_store(store_dir: str | Path, *, database: str | None = None) -> ClosableStore:
    """The store of a CLI command or a server.

    Args:
        store_dir: The embedded store directory. With a database it only holds this host's
            local index files (`<store_dir>/pg-cache/<hash of the URL>`), never shared state.
        database: A `postgresql://` URL, or None/"" for the embedded store.

    Raises:
        ConfigError: `database` is set but is not a PostgreSQL URL.
        StoreError: the store cannot be opened (unreachable database, missing driver...).
    """
    if database:
        if not is_database_url(database):
            raise ConfigError(
                f"database {redact(database)!r} is not a PostgreSQL URL "
                "(postgresql://user:password@host:port/dbname)",
                field="database",
            )
        # Lazy: store.postgres needs psycopg (extra postgres; ImportError without) and costs ~85 ms
        # to import.
        from citebound.store.postgres import PostgresStore

        return PostgresStore(database, root=Path(store_dir) / "pg-cache" / url_key(database))

    return SqliteStore(Path(store_dir))
