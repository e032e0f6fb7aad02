"""Index stage: BM25 (tantivy), dense vectors (MiniLM on onnxruntime) and calibrated fusion.

The public names load on first use: `citebound ask` imports `citebound.index.embedder` on a
background thread to start its onnxruntime session early (cli/_warm.py), and an eager package
would first import the index builder, the store and their contracts on that thread.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citebound.contracts.index import IndexManifest, IndexRow
    from citebound.index.build import index_dir, index_text, update_indexes
    from citebound.index.embedder import (
        DEFAULT_MODEL_NAME,
        Embedder,
        OnnxEmbedder,
        SentenceTransformerEmbedder,
        default_embedder,
        load_embedder,
    )
    from citebound.index.fusion import dense_similarity, fuse, lexical_similarity
    from citebound.index.lexical import LexicalIndex
    from citebound.index.vectors import VectorIndex

_LAZY = {
    "IndexManifest": "citebound.contracts.index",
    "IndexRow": "citebound.contracts.index",
    **dict.fromkeys(["index_dir", "index_text", "update_indexes"], "citebound.index.build"),
    **dict.fromkeys(
        [
            "DEFAULT_MODEL_NAME",
            "Embedder",
            "OnnxEmbedder",
            "SentenceTransformerEmbedder",
            "default_embedder",
            "load_embedder",
        ],
        "citebound.index.embedder",
    ),
    **dict.fromkeys(["dense_similarity", "fuse", "lexical_similarity"], "citebound.index.fusion"),
    "LexicalIndex": "citebound.index.lexical",
    "VectorIndex": "citebound.index.vectors",
}

__all__ = [
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
]


# Names resolved once: one deleted afterwards (`del citebound.index.update_indexes`, as a test
# simulating an install without the index does) stays absent, as in an eagerly imported package.
_resolved: set[str] = set()


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None or name in _resolved:
        raise AttributeError(f"module 'citebound.index' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    _resolved.add(name)
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
