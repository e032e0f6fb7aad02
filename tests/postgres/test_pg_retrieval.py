"""Retrieval on PostgreSQL: same bundles as the embedded store, replicas stay fresh, HNSW."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from citebound.contracts.enums import RetrievalStatus
from citebound.index.pgvector import PgVectorIndex
from citebound.ingest import ingest_paths
from citebound.retrieve import Retriever
from citebound.sample_corpus import DEMO_QUESTIONS
from citebound.store.postgres import PostgresStore
from citebound.store.sqlite import SqliteStore

CORPUS = Path(__file__).resolve().parents[2] / "src" / "citebound" / "sample_corpus"


QUESTIONS = [q.text for q in DEMO_QUESTIONS] + [
    "What is the capital of France?",
    "torque for the impeller nut",
]


def _corpus(tmp_path: Path, names: list[str]) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    for n in names:
        (folder / n).write_text((CORPUS / n).read_text("utf-8"), "utf-8")
    return folder


@dataclass(frozen=True)
class Plant:
    """The whole sample corpus, ingested once per module into PostgreSQL and SQLite."""

    url: str
    ingest_root: Path  # the PostgreSQL ingesting process's own index files
    lite: SqliteStore


@pytest.fixture(scope="module")
def plant(pg_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plant]:
    # Embedding the corpus is the slow part: once here; every PostgresStore opened on this
    # database with a fresh root rebuilds its local files from the stored vectors.
    tmp = tmp_path_factory.mktemp("plant")
    docs = _corpus(tmp, sorted(p.name for p in CORPUS.glob("*.md")))
    url = str(pg_server.new_database())
    with PostgresStore(url, root=tmp / "pg", dense_in_database=False) as pg:
        ingest_paths(pg, [docs], collection="plant", progress=False)
    lite = SqliteStore(tmp / "lite")
    ingest_paths(lite, [docs], collection="plant", progress=False)
    yield Plant(url, tmp / "pg", lite)
    lite.close()


def _plan(url: str, model: str, *, approximate: bool) -> str:
    """EXPLAIN EXECUTE of the dense search statement `PostgresStore.dense_search` runs, as a
    server-side prepared statement after 6 runs: past the point where PostgreSQL may switch
    to a generic plan (which could not match the per-model partial HNSW index)."""
    settings, sql = PostgresStore.dense_search_sql(384, 50, approximate=approximate)
    numbered = sql.replace("%s", "$1", 1).replace("%s", "$2", 1).replace("%s", "$3", 1)
    args = "('[" + ",".join(["0.05"] * 384) + f"]', '{model}', 'plant')"
    with psycopg.connect(url) as conn, conn.transaction():
        for setting in settings:
            conn.execute(setting)
        conn.execute(f"PREPARE dense (text, text, text) AS {numbered}")
        for _ in range(6):
            conn.execute(f"EXECUTE dense {args}").fetchall()
        plan = conn.execute(f"EXPLAIN EXECUTE dense {args}").fetchall()
    return "\n".join(str(r[0]) for r in plan)


def _summary(retriever: Retriever, question: str) -> tuple[object, ...]:
    b = retriever.retrieve(question, collection="plant")
    return (b.retrieval_status, [(r.chunk_id, r.similarity) for r in b.results], b.error)


def test_same_bundles_as_the_embedded_store(plant: Plant) -> None:
    pg = PostgresStore(plant.url, root=plant.ingest_root, dense_in_database=False)
    assert pg.index_version("plant") == plant.lite.index_version("plant")
    r_pg, r_lite = Retriever(pg), Retriever(plant.lite)
    assert not isinstance(r_pg.load("plant").vectors, PgVectorIndex)
    for q in QUESTIONS:
        assert _summary(r_pg, q) == _summary(r_lite, q), q
    pg.close()


def test_a_replica_answers_what_another_ingested_without_restart(
    pg_url: str, tmp_path: Path
) -> None:
    writer = PostgresStore(pg_url, root=tmp_path / "writer")
    reader = PostgresStore(pg_url, root=tmp_path / "reader")  # its own, empty index cache
    ingest_paths(writer, [_corpus(tmp_path, ["gb7_specification.md"])], collection="plant",
                 progress=False)  # fmt: skip
    replica = Retriever(reader)
    first = replica.retrieve("What oil does the GB7 gearbox take?", collection="plant")
    assert first.retrieval_status != RetrievalStatus.FAILED, first.error
    # A second document arrives through the writer: the replica's next request sees it.
    ingest_paths(writer, [_corpus(tmp_path, ["hp220_seal_procedure.md"])], collection="plant",
                 progress=False)  # fmt: skip
    after = replica.retrieve("HP220 mechanical seal replacement", collection="plant")
    assert after.index_version != first.index_version
    assert any("hp220_seal" in (r.source.source_path or "") for r in after.results)
    # the reader rebuilt from stored vectors: nothing was embedded on its side
    manifest = replica.load("plant").manifest
    assert manifest.embedded_new == 0 and manifest.num_chunks == reader.chunk_count("plant")
    writer.close()
    reader.close()


def test_a_replica_keeps_serving_while_an_ingest_is_unfinished(pg_url: str, tmp_path: Path) -> None:
    writer = PostgresStore(pg_url, root=tmp_path / "writer")
    reader = PostgresStore(pg_url, root=tmp_path / "reader")
    ingest_paths(writer, [_corpus(tmp_path, ["gb7_specification.md"])], collection="plant",
                 progress=False)  # fmt: skip
    replica = Retriever(reader)
    before = replica.retrieve("GB7 oil", collection="plant")
    # chunks written, vectors not yet (update_index=False): the old version keeps serving
    ingest_paths(writer, [_corpus(tmp_path, ["vt40_operating_manual.md"])], collection="plant",
                 progress=False, update_index=False)  # fmt: skip
    during = replica.retrieve("GB7 oil", collection="plant")
    assert during.retrieval_status == before.retrieval_status
    assert during.index_version == before.index_version
    # a fresh replica has no previous version: it fails closed with the reason
    fresh = Retriever(PostgresStore(pg_url, root=tmp_path / "fresh"))
    failed = fresh.retrieve("GB7 oil", collection="plant")
    assert failed.retrieval_status == RetrievalStatus.FAILED and "stale" in (failed.error or "")
    writer.close()
    reader.close()


def test_database_dense_search_gives_the_embedded_bundles(plant: Plant, tmp_path: Path) -> None:
    pg = PostgresStore(plant.url, root=tmp_path / "pg", dense_in_database=True)
    r_pg, r_lite = Retriever(pg), Retriever(plant.lite)
    vectors = r_pg.load("plant").vectors
    assert isinstance(vectors, PgVectorIndex) and not vectors.approximate
    for q in QUESTIONS:
        assert _summary(r_pg, q) == _summary(r_lite, q), q
    assert vectors.database_searches > 0
    pg.close()


def test_hnsw_is_used_above_the_threshold_with_the_same_scores(
    plant: Plant, tmp_path: Path
) -> None:
    exact_store = PostgresStore(plant.url, root=tmp_path / "exact", dense_in_database=True)
    hnsw_store = PostgresStore(
        plant.url, root=tmp_path / "hnsw", hnsw_min_rows=10, dense_in_database=True
    )
    model = exact_store.embedding_model()
    hnsw_store.ensure_hnsw(model, 384)
    exact, approx = Retriever(exact_store), Retriever(hnsw_store)
    assert approx.load("plant").vectors.approximate  # type: ignore[attr-defined]
    assert not exact.load("plant").vectors.approximate  # type: ignore[attr-defined]
    # the plans that run: HNSW above the threshold, a full scan below it, on this tiny table too
    hnsw = PostgresStore.hnsw_name(model)
    assert hnsw in _plan(plant.url, model, approximate=True)
    assert hnsw not in _plan(plant.url, model, approximate=False)
    same = shared = 0
    for q in QUESTIONS:
        a, b = _summary(exact, q), _summary(approx, q)
        same += a == b
        # whatever HNSW finds is scored exactly: shared rows have identical similarity
        sims = dict(a[1])  # type: ignore[arg-type]
        for cid, sim in b[1]:  # type: ignore[attr-defined]
            if cid in sims:
                shared += 1
                assert sims[cid] == pytest.approx(sim, abs=0)
    assert shared > 0  # the exact scoring of shared rows was compared at least once
    assert same >= len(QUESTIONS) - 1  # a tiny corpus: HNSW finds (almost) everything
    assert approx.load("plant").vectors.database_searches > 0  # type: ignore[attr-defined]
    exact_store.close()
    hnsw_store.close()
