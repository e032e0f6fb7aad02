"""Retrieval on PostgreSQL: same bundles as the embedded store, replicas stay fresh, HNSW."""

from __future__ import annotations

from pathlib import Path

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


def _plan(url: str, model: str, *, approximate: bool) -> str:
    """EXPLAIN of the dense search statement `PostgresStore.dense_search` runs, run 7 times
    first so psycopg has prepared it (a generic plan must still use the partial index)."""
    settings, sql = PostgresStore.dense_search_sql(384, 50, approximate=approximate)
    params = ("[" + ",".join(["0.05"] * 384) + "]", model, "plant")
    with psycopg.connect(url) as conn, conn.transaction():
        for setting in settings:
            conn.execute(setting)
        for _ in range(7):
            conn.execute(sql, params).fetchall()
        plan = conn.execute("EXPLAIN " + sql, params).fetchall()
    return "\n".join(str(r[0]) for r in plan)


def _summary(retriever: Retriever, question: str) -> tuple[object, ...]:
    b = retriever.retrieve(question, collection="plant")
    return (b.retrieval_status, [(r.chunk_id, r.similarity) for r in b.results], b.error)


def test_same_bundles_as_the_embedded_store(pg_url: str, tmp_path: Path) -> None:
    docs = _corpus(tmp_path, sorted(p.name for p in CORPUS.glob("*.md")))
    pg = PostgresStore(pg_url, root=tmp_path / "pg", dense_in_database=False)
    lite = SqliteStore(tmp_path / "lite")
    ingest_paths(pg, [docs], collection="plant", progress=False)
    ingest_paths(lite, [docs], collection="plant", progress=False)
    assert pg.index_version("plant") == lite.index_version("plant")
    r_pg, r_lite = Retriever(pg), Retriever(lite)
    assert not isinstance(r_pg.load("plant").vectors, PgVectorIndex)
    for q in QUESTIONS:
        assert _summary(r_pg, q) == _summary(r_lite, q), q
    pg.close()
    lite.close()


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


def test_database_dense_search_gives_the_embedded_bundles(pg_url: str, tmp_path: Path) -> None:
    docs = _corpus(tmp_path, sorted(p.name for p in CORPUS.glob("*.md")))
    pg = PostgresStore(pg_url, root=tmp_path / "pg", dense_in_database=True)
    lite = SqliteStore(tmp_path / "lite")
    ingest_paths(pg, [docs], collection="plant", progress=False)
    ingest_paths(lite, [docs], collection="plant", progress=False)
    r_pg, r_lite = Retriever(pg), Retriever(lite)
    assert isinstance(r_pg.load("plant").vectors, PgVectorIndex)
    for q in QUESTIONS:
        assert _summary(r_pg, q) == _summary(r_lite, q), q
    assert r_pg.load("plant").vectors.database_searches > 0  # type: ignore[attr-defined]
    pg.close()
    lite.close()


def test_hnsw_is_used_above_the_threshold_with_the_same_scores(pg_url: str, tmp_path: Path) -> None:
    docs = _corpus(tmp_path, sorted(p.name for p in CORPUS.glob("*.md")))
    exact_store = PostgresStore(pg_url, root=tmp_path / "exact", dense_in_database=True)
    ingest_paths(exact_store, [docs], collection="plant", progress=False)
    hnsw_store = PostgresStore(
        pg_url, root=tmp_path / "hnsw", hnsw_min_rows=10, dense_in_database=True
    )
    hnsw_store.ensure_hnsw(exact_store.embedding_model(), 384)
    exact, approx = Retriever(exact_store), Retriever(hnsw_store)
    assert approx.load("plant").vectors.approximate  # type: ignore[attr-defined]
    assert not exact.load("plant").vectors.approximate  # type: ignore[attr-defined]
    # the plans that run: HNSW above the threshold, a full scan below it, on this tiny table too
    model = exact_store.embedding_model()
    hnsw = PostgresStore.hnsw_name(model)
    assert hnsw in _plan(pg_url, model, approximate=True)
    assert hnsw not in _plan(pg_url, model, approximate=False)
    same = 0
    for q in QUESTIONS:
        a, b = _summary(exact, q), _summary(approx, q)
        same += a == b
        # whatever HNSW finds is scored exactly: shared rows have identical similarity
        sims = dict(a[1])  # type: ignore[arg-type]
        for cid, sim in b[1]:  # type: ignore[attr-defined]
            if cid in sims:
                assert sims[cid] == pytest.approx(sim, abs=0)
    assert same >= len(QUESTIONS) - 1  # a tiny corpus: HNSW finds (almost) everything
    exact_store.close()
    hnsw_store.close()
