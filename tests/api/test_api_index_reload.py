"""M4 (#21): a running server serves the index version another writer just built, without a
restart; it never answers NO_EVIDENCE from a stale, already loaded index."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from citebound.api import create_app
from citebound.api.sample import build_sample_store
from citebound.config import load_config
from citebound.ingest import ingest_paths
from citebound.store import SqliteStore

NEW_DOC = """# Cooling tower CT-9

## Fan belt

The CT-9 cooling tower fan belt tension must be set to 310 newtons.
"""
QUESTION = "What tension must the CT-9 cooling tower fan belt be set to?"


@pytest.mark.slow
def test_server_serves_an_index_built_after_it_started(tmp_path: Path) -> None:
    store_dir = build_sample_store(tmp_path, collection="demo")
    config = load_config(
        env={},
        overrides={
            "store": str(store_dir),
            "collection": "demo",
            "provider.name": "extractive",
            "audit.sqlite_path": str(tmp_path / "audit.sqlite"),
        },
    )
    with TestClient(create_app(config), base_url="http://localhost") as c:
        before = c.post("/v1/answer", json={"question": QUESTION}).json()
        assert "310" not in before["answer"]
        old_version = c.post("/v1/retrieve", json={"question": QUESTION}).json()["index_version"]
        # Another writer (its own store connection, as a second process has) adds a document
        # to the same folder and rebuilds the index.
        docs = tmp_path / "docs"
        (docs / "ct9_cooling_tower.md").write_text(NEW_DOC, encoding="utf-8")
        with SqliteStore(store_dir) as other:
            report = ingest_paths(other, [docs], collection="demo", progress=False)
        assert report.index_status == "updated"
        after = c.post("/v1/answer", json={"question": QUESTION}).json()
        assert after["status"] == "OK", after
        assert "310" in after["answer"]
        trace = c.post("/v1/retrieve", json={"question": QUESTION}).json()
        assert trace["index_version"] != old_version
