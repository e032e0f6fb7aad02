"""The retriever's row cache: rows equal a fresh hydration, never outlive a store change, and
stay within their size bound."""

from __future__ import annotations

from collections.abc import Callable

from retrieve_helpers import policy_with

from citebound.index import update_indexes
from citebound.index.embedder import OnnxEmbedder
from citebound.retrieve import Retriever, to_row
from citebound.retrieve.filters import compile_filters
from citebound.retrieve.pieces import query_pieces
from citebound.store.memory import MemoryStore

QUESTION = "What torque for the impeller bolts of the pump?"


class CountingStore(MemoryStore):
    """A MemoryStore that counts the chunk ids it is asked to hydrate."""

    hydrated: int = 0

    def get_chunks(self, chunk_ids):  # type: ignore[no-untyped-def]
        self.hydrated += len(chunk_ids)
        return super().get_chunks(chunk_ids)


def _scored(retriever: Retriever) -> list:  # type: ignore[type-arg]
    pol = retriever.policy
    return retriever.search(
        query_pieces(QUESTION, pol.retrieval.n0_query_pieces), "default", compile_filters(None), pol
    )


def _store(build_store: Callable[..., MemoryStore], embedder: OnnxEmbedder) -> CountingStore:
    plain = build_store()
    store = CountingStore(plain.root)
    for doc in plain.list_documents():
        store.upsert_document(
            doc, [c for c in plain.iter_chunks() if c.knowledge_id == doc.knowledge_id]
        )
    update_indexes(store, "default", embedder=embedder)
    return store


def test_cached_rows_equal_fresh_rows_and_skip_the_store(
    build_store: Callable[..., MemoryStore], embedder: OnnxEmbedder
) -> None:
    store = _store(build_store, embedder)
    retriever = Retriever(store, policy=policy_with(min_score=0.0), embedder=embedder)
    scored = _scored(retriever)
    first = retriever.rows_for("default", scored)
    hydrated = store.hydrated
    assert hydrated == len(scored)
    second = retriever.rows_for("default", scored)
    assert store.hydrated == hydrated  # served from the cache
    chunks = {c.chunk_id: c for c in MemoryStore.get_chunks(store, [s.chunk_id for s in scored])}
    fresh = [to_row(chunks[s.chunk_id], i, s.similarity, s.row) for i, s in enumerate(scored)]
    assert first == fresh
    assert second == fresh
    assert [r.rank for r in second] == list(range(len(scored)))


def test_a_store_change_empties_the_cache(
    build_store: Callable[..., MemoryStore], embedder: OnnxEmbedder
) -> None:
    store = _store(build_store, embedder)
    retriever = Retriever(store, policy=policy_with(min_score=0.0), embedder=embedder)
    scored = _scored(retriever)
    rows = retriever.rows_for("default", scored)
    gone = rows[0].knowledge_id
    store.delete_document(gone)  # the loaded index still names its chunks
    after = retriever.rows_for("default", scored)
    assert after and all(r.knowledge_id != gone for r in after)
    assert [r.rank for r in after] == list(range(len(after)))


def test_cache_size_bound_and_off_switch(
    build_store: Callable[..., MemoryStore], embedder: OnnxEmbedder
) -> None:
    store = _store(build_store, embedder)
    bounded = Retriever(
        store, policy=policy_with(min_score=0.0), embedder=embedder, row_cache_size=3
    )
    scored = _scored(bounded)
    assert len(scored) > 3
    bounded.rows_for("default", scored)
    assert len(bounded.load("default").cache.rows) == 3
    off = Retriever(store, policy=policy_with(min_score=0.0), embedder=embedder, row_cache_size=0)
    before = store.hydrated
    off.rows_for("default", scored)
    off.rows_for("default", scored)
    assert store.hydrated == before + 2 * len(scored)
    assert not off.load("default").cache.rows
