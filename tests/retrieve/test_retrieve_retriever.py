"""End-to-end retrieval on a small real corpus: real tantivy, real MiniLM, MemoryStore."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from retrieve_helpers import CORPUS, make_docs, policy_with

from citebound.contracts.enums import ReasonCode, RetrievalStatus
from citebound.contracts.retrieval import DateRange, FiltersApplied, RetrievalBundle
from citebound.index import update_indexes
from citebound.index.embedder import OnnxEmbedder
from citebound.retrieve import Retriever
from citebound.store.memory import MemoryStore

Build = Callable[..., MemoryStore]
QUESTION = "What torque for the impeller bolts of the pump?"


def _retriever(store: MemoryStore, embedder: OnnxEmbedder, **kw: object) -> Retriever:
    update_indexes(store, "default", embedder=embedder)
    return Retriever(store, policy=policy_with(**kw), embedder=embedder)  # type: ignore[arg-type]


def _ranking(bundle: RetrievalBundle) -> list[tuple[str, float]]:
    return [(r.chunk_id, r.similarity) for r in bundle.results]


def test_bundle_rows_are_complete_and_calibrated(
    build_store: Build, embedder: OnnxEmbedder
) -> None:
    store = build_store()
    bundle = _retriever(store, embedder, per_hit_neighbors=0).retrieve(QUESTION, request_id="r1")
    assert bundle.retrieval_status is RetrievalStatus.SUCCESS
    assert bundle.request_id == "r1" and bundle.embedding_model == embedder.name
    assert bundle.index_version.startswith("idx-") and bundle.top_k == 20
    top = bundle.results[0]
    assert top.chunk_text.startswith("Torque the impeller bolts")
    assert [r.rank for r in bundle.results] == list(range(len(bundle.results)))
    assert all(0.0 <= r.similarity <= 1.0 for r in bundle.results)
    sims = [r.similarity for r in bundle.results]
    assert sims == sorted(sims, reverse=True)
    assert top.source is not None and top.source.document == "Pump P-100 manual"
    assert top.source.heading_path == ("Section 2",) and top.source.chunk_index == 1
    assert top.source.source_path == "pump-manual.md"
    assert (top.equipment_id, top.event_date, top.knowledge_type_effective) == (
        "P-100",
        "2023-05-01",
        "manual",
    )
    assert top.faiss_id is not None
    assert bundle.gate is not None and bundle.gate.passed


def test_same_corpus_any_insertion_order_same_ranking(
    build_store: Build, embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    a = _retriever(build_store(CORPUS, tmp_path / "a"), embedder)
    b = _retriever(build_store(list(reversed(CORPUS)), tmp_path / "b"), embedder)
    for q in (QUESTION, "valve leak", "safety rules on site. Jupiter moons."):
        ra, rb = a.retrieve(q), b.retrieve(q)
        assert _ranking(ra) == _ranking(rb) and ra.index_version == rb.index_version
        assert _ranking(ra) == _ranking(a.retrieve(q))


def test_identical_texts_tie_break_by_chunk_id(build_store: Build, embedder: OnnxEmbedder) -> None:
    same = "Replace the air filter every 500 operating hours."
    specs = [
        {
            "id": f"dup-{i}",
            "title": "",
            "equipment_id": None,
            "knowledge_type": "manual",
            "event_date": None,
            "chunks": [same],
        }
        for i in range(4)
    ]
    bundle = _retriever(build_store(specs), embedder, min_chunks=1).retrieve("air filter hours")
    ids = [r.chunk_id for r in bundle.results]
    assert len(set(r.similarity for r in bundle.results)) == 1
    assert ids == sorted(ids) and len(ids) == 4


def test_filters_with_null_semantics(build_store: Build, embedder: OnnxEmbedder) -> None:
    r = _retriever(build_store(), embedder, min_score=0.0, min_chunks=1, per_hit_neighbors=0)
    by_eq = r.retrieve("bolts torque", filters=FiltersApplied(equipment_id="P-100"))
    assert by_eq.results and {x.equipment_id for x in by_eq.results} == {"P-100"}
    assert by_eq.filters_applied is not None
    assert by_eq.filters_applied.equipment_id == "P-100"
    assert by_eq.filters_applied.collection == "default"
    # FAQ chunks (equipment_id null) mention bolts too, and still never pass the filter
    everything = r.retrieve("bolts torque")
    assert any(x.equipment_id is None for x in everything.results)
    by_type = r.retrieve("leak", filters=FiltersApplied(knowledge_type="maintenance_report"))
    assert {x.knowledge_id for x in by_type.results} == {"valve-report"}
    dated = r.retrieve(
        "planet", filters=FiltersApplied(date_range=DateRange(start="2021-01-01", end=None))
    )
    assert {x.knowledge_id for x in dated.results} == {"pump-manual", "valve-report"}
    none = r.retrieve("pump", filters=FiltersApplied(equipment_id="NOPE"))
    assert none.results == [] and none.retrieval_status is RetrievalStatus.NO_EVIDENCE
    bad = r.retrieve("pump", filters=FiltersApplied(date_range=DateRange(start="May 2024")))
    assert bad.retrieval_status is RetrievalStatus.FAILED and "YYYY-MM-DD" in (bad.error or "")
    for impossible in ("2024-13-45", "2023-02-29", "2024-00-10"):
        out = r.retrieve("pump", filters=FiltersApplied(date_range=DateRange(end=impossible)))
        assert out.retrieval_status is RetrievalStatus.FAILED, impossible
        assert impossible in (out.error or "")
    leap = r.retrieve("pump", filters=FiltersApplied(date_range=DateRange(end="2024-02-29")))
    assert leap.retrieval_status is not RetrievalStatus.FAILED


def test_gate_at_its_boundaries(build_store: Build, embedder: OnnxEmbedder) -> None:
    store = build_store()
    base = _retriever(store, embedder, min_score=0.0, min_chunks=1)
    top = base.retrieve(QUESTION).results[0].similarity
    second = base.retrieve(QUESTION).results[1].similarity

    at = Retriever(store, policy=policy_with(min_score=top, min_chunks=1), embedder=embedder)
    bundle = at.retrieve(QUESTION)
    assert bundle.retrieval_status is RetrievalStatus.SUCCESS and bundle.gate is not None
    assert bundle.gate.max_similarity == top and bundle.gate.chunks_above_min_score == 1

    above = float(np.nextafter(top, 1.0))
    over = Retriever(store, policy=policy_with(min_score=above, min_chunks=1), embedder=embedder)
    refused = over.retrieve(QUESTION)
    assert refused.retrieval_status is RetrievalStatus.NO_EVIDENCE and refused.gate is not None
    assert refused.gate.reason_code == ReasonCode.GATE_BELOW_MIN_SCORE.value
    assert _ranking(refused)[:3] == _ranking(bundle)[:3]  # refused bundles keep their rows

    two = Retriever(
        store, policy=policy_with(min_score=second, min_chunks=2), embedder=embedder
    ).retrieve(QUESTION)
    assert two.retrieval_status is RetrievalStatus.SUCCESS
    three = Retriever(
        store, policy=policy_with(min_score=second, min_chunks=3), embedder=embedder
    ).retrieve(QUESTION)
    assert three.gate is not None
    assert three.gate.reason_code == ReasonCode.GATE_TOO_FEW_CHUNKS.value


def test_caps_come_from_policy(build_store: Build, embedder: OnnxEmbedder) -> None:
    store = build_store()
    r = _retriever(store, embedder, top_k=3, per_hit_neighbors=0, min_score=0.0, min_chunks=1)
    assert len(r.retrieve(QUESTION).results) == 3
    r1 = Retriever(
        store, policy=policy_with(n1_retr_max_candidates=2, per_hit_neighbors=0), embedder=embedder
    )
    assert len(r1.retrieve(QUESTION).results) <= 2


def test_neighbour_expansion(build_store: Build, embedder: OnnxEmbedder) -> None:
    store = build_store()
    r = _retriever(store, embedder, top_k=1, per_hit_neighbors=1, min_score=0.0, min_chunks=1)
    bundle = r.retrieve(QUESTION)
    texts = [x.chunk_text for x in bundle.results]
    manual = [c.text for c in make_docs(CORPUS[0])[1]]
    assert texts == [manual[1], manual[0], manual[2]]  # hit, then its neighbours in order
    assert [x.rank for x in bundle.results] == [0, 1, 2]
    assert len({x.similarity for x in bundle.results}) == 1
    assert bundle.gate is not None and bundle.gate.chunks_above_min_score == 1
    filtered = r.retrieve(QUESTION, filters=FiltersApplied(equipment_id="V-7"))
    assert {x.knowledge_id for x in filtered.results} == {"valve-report"}


def test_query_pieces_are_aggregated(build_store: Build, embedder: OnnxEmbedder) -> None:
    r = _retriever(build_store(), embedder, min_score=0.0, min_chunks=1, per_hit_neighbors=0)
    two = r.retrieve("Which planet is the largest? How do I torque the pump impeller bolts?")
    top2 = {x.knowledge_id for x in two.results[:2]}
    assert top2 == {"astronomy", "pump-manual"}
    one = Retriever(
        r.store, policy=policy_with(n0_query_pieces=1, min_score=0.0), embedder=embedder
    ).retrieve("Which planet is the largest? How do I torque the pump impeller bolts?")
    assert _ranking(one) != _ranking(two)


def test_failures_are_bundles_not_exceptions(build_store: Build, embedder: OnnxEmbedder) -> None:
    store = build_store()
    r = _retriever(store, embedder)
    missing = r.retrieve("pump", collection="other")
    assert missing.retrieval_status is RetrievalStatus.FAILED
    assert "ingest" in (missing.error or "") and missing.index_version == "none"
    empty = r.retrieve("   ")
    assert empty.retrieval_status is RetrievalStatus.FAILED and "empty" in (empty.error or "")
    before = r.retrieve("pump").index_version
    store.upsert_document(*make_docs({**CORPUS[3], "chunks": ["Saturn has rings."]}))
    # The store moved on without a new index (an ingest killed or still embedding): the last
    # complete index serves, named in the bundle (#34), instead of no index at all.
    stale = Retriever(store, embedder=embedder).retrieve("pump")
    assert stale.retrieval_status is RetrievalStatus.SUCCESS and stale.index_version == before


def test_update_is_incremental(build_store: Build, embedder: OnnxEmbedder) -> None:
    from citebound.index.build import index_dir, read_manifest

    store = build_store(CORPUS[:2])
    v1 = update_indexes(store, "default", embedder=embedder)
    assert update_indexes(store, "default", embedder=embedder) == v1
    store.upsert_document(*make_docs(CORPUS[2]))
    v2 = update_indexes(store, "default", embedder=embedder)
    manifest = read_manifest(index_dir(store.root, "default"))
    assert v2 != v1 and manifest is not None
    assert (manifest.embedded_new, manifest.embedded_reused, manifest.num_chunks) == (2, 5, 7)
    store.delete_document("general-faq")
    assert update_indexes(store, "default", embedder=embedder) == v1
    bundle = Retriever(store, embedder=embedder).retrieve("hard hat visitors")
    assert "general-faq" not in {x.knowledge_id for x in bundle.results}


def test_invalidate_picks_up_a_new_index(build_store: Build, embedder: OnnxEmbedder) -> None:
    store = build_store(CORPUS[:1])
    r = _retriever(store, embedder, min_score=0.0, min_chunks=1)
    assert r.retrieve("planet moons").results[0].knowledge_id == "pump-manual"
    store.upsert_document(*make_docs(CORPUS[3]))
    update_indexes(store, "default", embedder=embedder)
    # The store's index_version moved: the next search opens the new index by itself (#21,
    # a running server serves a new ingest without a restart).
    assert r.retrieve("planet moons").results[0].knowledge_id == "astronomy"
    r.invalidate("default")
    assert r.retrieve("planet moons").results[0].knowledge_id == "astronomy"


class _Broken:
    name = "broken"

    def rerank(self, query: str, chunk_ids: object, texts: object) -> list[str]:
        raise RuntimeError("model exploded")


def test_unexpected_errors_become_failed_bundles(
    build_store: Build, embedder: OnnxEmbedder
) -> None:
    store = build_store()
    update_indexes(store, "default", embedder=embedder)
    bundle = Retriever(store, embedder=embedder, reranker=_Broken()).retrieve("pump")
    assert bundle.retrieval_status is RetrievalStatus.FAILED
    assert bundle.error == "internal error during retrieval (RuntimeError: model exploded)"
    assert bundle.index_version.startswith("idx-")


class _ModelAwareStore(MemoryStore):
    """Like SqliteStore: the embedding model is part of the store's index_version."""

    model = "unset"

    def set_embedding_model(self, name: str) -> None:
        self.model = name

    def index_version(self, collection: str | None = None) -> str:
        return f"{self.model}:{super().index_version(collection)}"


def test_stores_learn_the_embedding_model_first(tmp_path: Path, embedder: OnnxEmbedder) -> None:
    store = _ModelAwareStore(tmp_path)
    store.upsert_document(*make_docs(CORPUS[0]))
    update_indexes(store, "default", embedder=embedder)
    assert store.model == embedder.name
    bundle = Retriever(store, embedder=embedder).retrieve("impeller torque")
    assert bundle.retrieval_status is not RetrievalStatus.FAILED, bundle.error


def test_index_builds_of_one_collection_wait_for_each_other(
    build_store: Build, embedder: OnnxEmbedder
) -> None:
    import threading

    from citebound.index.build import build_lock, index_dir

    store = build_store()
    done: list[str] = []
    with build_lock(index_dir(store.root, "default")):  # another build holds the lock
        worker = threading.Thread(
            target=lambda: done.append(update_indexes(store, "default", embedder=embedder))
        )
        worker.start()
        worker.join(timeout=1.0)
        assert worker.is_alive() and not done  # it waits instead of writing alongside
    worker.join(timeout=120)
    assert len(done) == 1 and done[0].startswith("idx-")
    assert Retriever(store, embedder=embedder).retrieve(QUESTION).results
