"""API fixtures: one real store (a copy of the session demo store, plus `secret`), built
once per session; apps with keys; real uvicorn servers on loopback for client tests."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from api_helpers import KEYS, SECRET_DOC
from api_live import LiveServer
from fastapi.testclient import TestClient

from citebound.api import create_app, hash_key
from citebound.config import Config, load_config
from citebound.ingest import ingest_paths
from citebound.store.sqlite import SqliteStore


@pytest.fixture(scope="session")
def api_store(demo_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the session's demo store (collection `demo`, sample corpus + PDF) with one
    more collection, `secret`, that most keys may not read."""
    root = tmp_path_factory.mktemp("api-store")
    store_dir = root / "store"
    shutil.copytree(demo_store_dir, store_dir, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    secret = root / "secret-docs"
    secret.mkdir()
    (secret / "zebra_launch_plan.md").write_text(SECRET_DOC, encoding="utf-8")
    with SqliteStore(store_dir) as store:
        ingest_paths(store, [secret], collection="secret", progress=False)
    return store_dir


@pytest.fixture
def make_config(api_store: Path, tmp_path: Path) -> Callable[..., Config]:
    """Config on the shared store, a fresh audit file per test; `keys=True` adds KEYS."""

    def _make(*, keys: bool = False, **overrides: Any) -> Config:
        values: dict[str, Any] = {
            "store": str(api_store),
            "collection": "demo",
            "provider.name": "extractive",
            "audit.sqlite_path": str(tmp_path / "audit.sqlite"),
        }
        if keys:
            values["api.keys"] = [
                {"name": n, "sha256": hash_key(k), "role": r, "collections": c}
                for n, (k, r, c) in KEYS.items()
            ]
        values.update(overrides)
        return load_config(env={}, overrides=values)

    return _make


@pytest.fixture
def client(make_config: Callable[..., Config]) -> Iterator[TestClient]:
    """Anonymous (no keys) app."""
    with TestClient(create_app(make_config()), base_url="http://localhost") as c:
        yield c


@pytest.fixture
def keyed_client(make_config: Callable[..., Config]) -> Iterator[TestClient]:
    """App with KEYS configured."""
    with TestClient(create_app(make_config(keys=True)), base_url="http://localhost") as c:
        yield c


@pytest.fixture
def live_server(make_config: Callable[..., Config]) -> Callable[..., LiveServer]:
    def _start(**kw: Any) -> LiveServer:
        return LiveServer(make_config(**kw))

    return _start
