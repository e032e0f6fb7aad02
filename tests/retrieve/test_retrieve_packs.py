"""Seed 004 `retrieve_packs` on real retrieval (MemoryStore, real tantivy, real MiniLM), and the
seed's Quick Start / Integration examples end to end with `assemble_prompt`."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from retrieve_helpers import policy_with

from citebound import RetrievalPack, assemble_prompt, retrieve_packs
from citebound.errors import CiteboundError, ContractError
from citebound.index import update_indexes
from citebound.index.embedder import OnnxEmbedder
from citebound.retrieve import Retriever
from citebound.store.memory import MemoryStore

Build = Callable[..., MemoryStore]
QUESTION = "What torque for the impeller bolts of the pump?"


@pytest.fixture
def retriever(build_store: Build, embedder: OnnxEmbedder) -> Retriever:
    store = build_store()
    update_indexes(store, "default", embedder=embedder)
    return Retriever(store, policy=policy_with(min_score=0.0, min_chunks=1), embedder=embedder)


def _chunk_ids(packs: list[RetrievalPack]) -> list[str]:
    return [s.chunk_id for p in packs for s in p.spans]


def test_packs_without_neighbours_are_single_span_hits(retriever: Retriever) -> None:
    packs = retrieve_packs(QUESTION, limit=3, retriever=retriever)
    bundle = retriever.retrieve(
        QUESTION, policy=policy_with(top_k=3, per_hit_neighbors=0, min_score=0.0)
    )
    assert [p.id for p in packs] == [r.chunk_id for r in bundle.results]
    assert [p.score for p in packs] == [r.similarity for r in bundle.results]
    assert [p.order for p in packs] == [0, 1, 2]
    top = packs[0]
    assert top.doc_id == "pump-manual" and top.heading_path == ["Section 2"]
    assert [(s.chunk_id, s.hit) for s in top.spans] == [(top.id, True)]
    assert top.spans[0].text.startswith("Torque the impeller bolts")
    row = bundle.results[0].source
    assert row is not None
    assert (top.spans[0].start, top.spans[0].end) == (row.char_start, row.char_end)


def test_neighbours_are_extra_spans_of_the_same_pack(retriever: Retriever) -> None:
    packs = retrieve_packs(QUESTION, limit=1, per_hit_neighbors=1, retriever=retriever)
    assert len(packs) == 1  # neighbours never become packs of their own
    spans = packs[0].spans
    assert [s.hit for s in spans] == [False, True, False]
    assert [s.text.split()[0] for s in spans] == ["Safety:", "Torque", "Check"]
    assert [s.start for s in spans] == sorted(s.start for s in spans)  # document order
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))


def test_expand_neighbors_and_no_chunk_in_two_packs(retriever: Retriever) -> None:
    packs = retrieve_packs(
        QUESTION, limit=5, per_hit_neighbors=2, expand="neighbors", retriever=retriever
    )
    ids = _chunk_ids(packs)
    assert len(ids) == len(set(ids))
    for p in packs:
        assert sum(s.hit for s in p.spans) == 1 and p.id in {s.chunk_id for s in p.spans}
    default = retrieve_packs(QUESTION, limit=1, expand="neighbors", retriever=retriever)
    assert len(default[0].spans) == 3  # expand="neighbors" alone: one on each side


@pytest.mark.parametrize("rank", ["hybrid", "bm25", "tfidf", "dense"])
def test_rank_modes(retriever: Retriever, rank: str) -> None:
    packs = retrieve_packs(QUESTION, limit=2, rank=rank, retriever=retriever)
    assert len(packs) == 2 and packs[0].doc_id == "pump-manual"
    assert [p.score for p in packs] == sorted((p.score for p in packs), reverse=True)


def test_bm25_only_finds_lexical_matches(retriever: Retriever) -> None:
    lexical = retrieve_packs("Jupiter moons", limit=5, rank="bm25", retriever=retriever)
    dense = retrieve_packs("Jupiter moons", limit=5, rank="dense", retriever=retriever)
    assert [p.doc_id for p in lexical] == ["astronomy"]  # no other chunk shares a term
    assert len(dense) == 5


def test_quick_start_example(retriever: Retriever) -> None:
    packs = retrieve_packs(
        "impeller bolts", limit=5, per_hit_neighbors=1, rank="tfidf", retriever=retriever
    )
    out = assemble_prompt("What torque for the impeller bolts?", packs)
    assert out.prompt.system and out.prompt.user.startswith("What torque for the impeller bolts?")
    for c in out.citations:
        assert f"{c.marker}\nDoc: {c.doc_id}\n" in out.prompt.user


def test_integration_example(retriever: Retriever) -> None:
    packs = retrieve_packs(
        "pump maintenance", limit=5, per_hit_neighbors=2, expand="neighbors", retriever=retriever
    )
    out = assemble_prompt("Explain pump maintenance", packs, headroom_tokens=200)
    wide = assemble_prompt("Explain pump maintenance", packs, headroom_tokens=100000)
    assert len(out.citations) <= len(wide.citations) == len(packs)
    by_id = {p.id: p for p in packs}
    for c in wide.citations:
        assert c.span_offsets == [(s.start, s.end) for s in by_id[c.pack_id].spans]
        assert f"Path: {' > '.join(c.heading_path)}\n" in wide.prompt.user


def test_same_query_same_packs(retriever: Retriever) -> None:
    a = retrieve_packs(QUESTION, limit=4, per_hit_neighbors=1, retriever=retriever)
    b = retrieve_packs(QUESTION, limit=4, per_hit_neighbors=1, retriever=retriever)
    assert a == b


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"limit": 0}, "limit"),
        ({"per_hit_neighbors": -1}, "per_hit_neighbors"),
        ({"expand": "siblings"}, "expand"),
        ({"rank": "pagerank"}, "rank"),
        ({"query": ""}, "query"),
    ],
)
def test_bad_arguments(retriever: Retriever, kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"query": QUESTION, "retriever": retriever, **kwargs}
    with pytest.raises(ContractError, match=message):
        retrieve_packs(**args)  # type: ignore[arg-type]


def test_missing_store_and_missing_index_are_clear_errors(
    tmp_path: Path, build_store: Build
) -> None:
    with pytest.raises(CiteboundError, match="no store at"):
        retrieve_packs(QUESTION, store=tmp_path / "nowhere")
    with pytest.raises(CiteboundError, match="has no index"):
        retrieve_packs(QUESTION, store=build_store(root=tmp_path / "unindexed"))
