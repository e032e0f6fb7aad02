"""One freshness read per request on PostgreSQL (store.snapshot), without losing freshness."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest

from citebound.store.postgres import PostgresStore
from citebound.store.snapshot import request_snapshot
from citebound.testing.store_contract import make_doc


def _counting_reads(store: PostgresStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    read = store._read

    def counted(sql: str, params: Any = ()) -> list[Any]:
        seen.append(sql)
        return read(sql, params)

    monkeypatch.setattr(store, "_read", counted)
    return seen


def test_a_request_reads_collections_and_versions_once(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = PostgresStore(pg_url, root=tmp_path)
    for kid, coll in (("a", "x"), ("b", "y")):
        store.upsert_document(*make_doc(kid, 2, collection=coll))
    plain = (store.collections(), store.index_version("x"), store.index_version("y"))
    reads = _counting_reads(store, monkeypatch)
    with request_snapshot():
        for _ in range(3):  # what resolving a collection, loading and hydrating ask
            got = (store.collections(), store.index_version("x"), store.index_version("y"))
            assert got == plain
    assert len(reads) == 1, reads
    # outside a request every call reads the database, as before
    store.index_version("x")
    assert len(reads) == 2
    store.close()


def test_a_request_keeps_one_version_and_the_next_request_sees_the_write(
    pg_url: str, tmp_path: Path
) -> None:
    writer = PostgresStore(pg_url, root=tmp_path / "w")
    replica = PostgresStore(pg_url, root=tmp_path / "r")
    writer.upsert_document(*make_doc("a", 2))
    with request_snapshot():
        v0 = replica.index_version("default")
        # another process writes mid-request (a plain thread: it does not share the request)
        other = threading.Thread(target=writer.upsert_document, args=make_doc("b", 2))
        other.start()
        other.join()
        assert replica.index_version("default") == v0  # one request, one version
    with request_snapshot():  # the next request: fresh, no restart
        v1 = replica.index_version("default")
    assert v1 != v0 and v1 == writer.index_version("default")
    # a request that writes through its own store reads afresh after its write
    with request_snapshot():
        assert replica.collections() == ["default"]
        replica.upsert_document(*make_doc("c", 1, collection="other"))
        assert replica.collections() == ["default", "other"]
        assert replica.index_version("default") == v1
    writer.close()
    replica.close()


def test_an_uncomputed_version_is_computed_inside_a_request(pg_url: str, tmp_path: Path) -> None:
    store = PostgresStore(pg_url, root=tmp_path)
    store.upsert_document(*make_doc("a", 2))
    with request_snapshot():  # the state read finds no cached version: computed, then kept
        v = store.index_version("default")
        assert store.index_version("default") == v
        assert store.index_version("missing") == store.index_version("missing")
    assert store.index_version("default") == v
    store.close()


def test_a_version_the_state_read_found_missing_is_computed_without_asking_again(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = PostgresStore(pg_url, root=tmp_path)
    store.upsert_document(*make_doc("a", 2))  # a write: no version computed for it yet
    reads = _counting_reads(store, monkeypatch)
    with request_snapshot():
        v = store.index_version("default")
        assert store.index_version("default") == v
    # one read: the collections and their (missing) versions; no second per-collection ask
    assert len(reads) == 1 and "FROM collections" in reads[0], reads
    reads.clear()
    with request_snapshot():  # the next request finds the version computed above
        assert store.index_version("default") == v
    assert len(reads) == 1, reads
    store.close()


def test_served_answer_costs_three_statements(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the API: one freshness read, the audit chain's advisory lock (audit/chain.py:
    appends from every replica take one order) and one audit INSERT per answered question
    (there were seven reads)."""
    from fastapi.testclient import TestClient

    from citebound.api.app import create_app
    from citebound.config import load_config
    from citebound.ingest import ingest_paths
    from citebound.sample_corpus import DEMO_QUESTIONS

    corpus = Path(__file__).resolve().parents[2] / "src" / "citebound" / "sample_corpus"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gb7.md").write_text((corpus / "gb7_specification.md").read_text("utf-8"), "utf-8")
    with PostgresStore(pg_url, root=tmp_path / "ingest") as s:
        ingest_paths(s, [docs], collection="demo", progress=False)
    config = load_config(
        env={}, overrides={"store": str(tmp_path / "api"), "collection": "demo", "database": pg_url}
    )
    statements: Counter[str] = Counter()
    execute = psycopg.Connection.execute

    def counted(self: psycopg.Connection[Any], query: Any, *a: Any, **k: Any) -> Any:
        statements[str(query).split()[0].upper()] += 1
        return execute(self, query, *a, **k)

    with TestClient(create_app(config), base_url="http://127.0.0.1") as client:
        client.post("/v1/answer", json={"question": "warm up"})  # loads the index
        monkeypatch.setattr(psycopg.Connection, "execute", counted)
        for q in DEMO_QUESTIONS[:4]:
            r = client.post("/v1/answer", json={"question": q.text})
            assert r.status_code == 200, r.text
            assert r.json()["status"] in ("OK", "NO_EVIDENCE")
    assert statements == Counter({"SELECT": 8, "INSERT": 4}), statements


def test_two_databases_in_one_request_never_mix(pg_server: Any, tmp_path: Path) -> None:
    one = PostgresStore(str(pg_server.new_database()), root=tmp_path / "1")
    two = PostgresStore(str(pg_server.new_database()), root=tmp_path / "2")
    one.upsert_document(*make_doc("a", 2, collection="first"))
    two.upsert_document(*make_doc("b", 3, collection="second"))
    with request_snapshot():
        assert one.collections() == ["first"] and two.collections() == ["second"]
        assert one.index_version("first") != two.index_version("second")
    one.close()
    two.close()
