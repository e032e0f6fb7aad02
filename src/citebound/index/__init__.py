"""Index stage: BM25 (tantivy), dense vectors (MiniLM on onnxruntime) and calibrated fusion."""

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
