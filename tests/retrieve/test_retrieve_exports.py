"""The public surface of the index, retrieve, gate and rerank packages is pinned."""

from __future__ import annotations

import importlib

import pytest

EXPECTED = {
    "citebound.index": {
        "DEFAULT_MODEL_NAME",
        "Embedder",
        "IndexManifest",
        "IndexRow",
        "LexicalIndex",
        "OnnxEmbedder",
        "SentenceTransformerEmbedder",
        "VectorIndex",
        "default_embedder",
        "dense_similarity",
        "fuse",
        "index_dir",
        "index_text",
        "lexical_similarity",
        "load_embedder",
        "update_indexes",
    },
    "citebound.retrieve": {
        "Retriever",
        "RowFilter",
        "compile_filters",
        "logavgexp",
        "query_pieces",
        "row_passes",
        "to_row",
    },
    "citebound.gate": {
        "Decision",
        "apply_gate",
        "decide",
        "lowest_score",
        "refusal",
        "similarity_suffices",
        "top_coverage",
    },
    "citebound.rerank": {
        "CrossEncoderReranker",
        "OnnxCrossEncoderReranker",
        "PassthroughReranker",
        "Reranker",
        "load_reranker",
        "order_by_scores",
        "reranker_backend",
    },
}


@pytest.mark.parametrize("module", sorted(EXPECTED))
def test_all_is_pinned_and_importable(module: str) -> None:
    mod = importlib.import_module(module)
    assert set(mod.__all__) == EXPECTED[module]
    assert all(getattr(mod, name, None) is not None for name in mod.__all__)


def test_memory_store_satisfies_the_protocol(tmp_path: object) -> None:
    from citebound.store.base import Store
    from citebound.store.memory import MemoryStore

    assert isinstance(MemoryStore(tmp_path), Store)  # type: ignore[arg-type]
