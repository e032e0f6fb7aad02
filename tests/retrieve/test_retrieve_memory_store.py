"""MemoryStore follows the Store protocol's orderings and neighbour rules."""

from __future__ import annotations

from collections.abc import Callable

from retrieve_helpers import CORPUS, make_docs

from citebound.store.memory import MemoryStore


def test_orderings_and_lookups(build_store: Callable[..., MemoryStore]) -> None:
    store = build_store(list(reversed(CORPUS)))
    assert [d.knowledge_id for d in store.list_documents()] == sorted(str(s["id"]) for s in CORPUS)
    keys = [(c.knowledge_id, c.chunk_index) for c in store.iter_chunks("default")]
    assert keys == sorted(keys) and len(keys) == 8
    ids = [c.chunk_id for c in store.iter_chunks()][:3]
    assert [c.chunk_id for c in store.get_chunks([ids[2], "nope", ids[0]])] == [ids[2], ids[0]]
    assert store.collections() == ["default"]
    assert store.document_hash("default", "pump-manual.md") is not None
    assert store.document_hash("default", "absent.md") is None
    assert list(store.iter_chunks("other")) == []


def test_neighbors_and_delete(build_store: Callable[..., MemoryStore]) -> None:
    store = build_store()
    first, middle, last = make_docs(CORPUS[0])[1]
    assert store.neighbors(middle.chunk_id, 1) == [first, last]
    assert store.neighbors(first.chunk_id, 5) == [middle, last]
    assert store.neighbors(first.chunk_id, 0) == [] and store.neighbors("nope", 1) == []
    before = store.index_version("default")
    store.delete_document("pump-manual")
    assert store.get_document("pump-manual") is None and store.get_chunks([first.chunk_id]) == []
    assert store.index_version("default") != before
