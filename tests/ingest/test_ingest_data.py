"""Ingest the real F´ documentation (../shared/data/fprime-docs) and SciFact's corpus."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from citebound.ingest import ingest_paths
from citebound.store import SqliteStore


@pytest.mark.data
def test_fprime_docs_pages_and_headings(
    tmp_path: Path, shared_dataset: Callable[[str], Path]
) -> None:
    root = shared_dataset("fprime-docs")
    store = SqliteStore(tmp_path / "store")
    try:
        report = ingest_paths(
            store, [root], collection="fprime", progress=False, update_index=False
        )
        assert report.files_added >= 190 and report.chunks_total > 1000
        assert {s.reason.value for s in report.skipped} <= {"EMPTY"}
        chunks = list(store.iter_chunks("fprime"))
        pdf = [c for c in chunks if c.source_path.endswith(".pdf")]
        md = [c for c in chunks if c.source_path.endswith(".md")]
        assert {c.source_path for c in pdf} >= {
            "fprime-docs/docs/Architecture/FPrimeArchitectureShort.pdf"
        }
        assert all(
            c.page is not None and c.page_end is not None and c.page <= c.page_end for c in pdf
        )
        assert max(c.page_end or 0 for c in pdf) >= 30  # the 35-page PDF keeps its pages
        with_headings = sum(1 for c in md if c.heading_path)
        assert with_headings / len(md) > 0.9
        sdd = [c for c in md if c.source_path == "fprime-docs/Ref/SignalGen/docs/sdd.md"]
        assert ("Ref::SignalGen Component", "1. Introduction") in {c.heading_path for c in sdd}
        docs = {d.knowledge_id: d for d in store.list_documents("fprime")}
        for c in chunks[::50]:
            assert docs[c.knowledge_id].text[c.char_start : c.char_end] == c.text
        again = ingest_paths(store, [root], collection="fprime", progress=False, update_index=False)
        assert again.files_unchanged == report.files_added and again.chunks_written == 0
    finally:
        store.close()


@pytest.mark.data
@pytest.mark.slow
def test_scifact_corpus_ids_are_the_beir_ids(
    tmp_path: Path, shared_dataset: Callable[[str], Path]
) -> None:
    corpus = shared_dataset("scifact") / "corpus.jsonl"
    store = SqliteStore(tmp_path / "store")
    try:
        report = ingest_paths(
            store, [corpus], collection="scifact", progress=False, update_index=False
        )
        assert report.documents_written == 5183 and report.skipped == []
        assert store.get_document("4983") is not None
    finally:
        store.close()
