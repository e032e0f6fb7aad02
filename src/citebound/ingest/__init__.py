"""Ingestion: loaders (Markdown, text, HTML, PDF, JSONL) → Document; heading-aware chunker → Chunk.

Example:
    >>> from citebound.ingest import ingest_paths
    >>> from citebound.store import SqliteStore
    >>> report = ingest_paths(SqliteStore(Path(".citebound")), [Path("docs")], collection="docs")
"""

from citebound.contracts.ingest import (
    Block,
    ChunkerConfig,
    IngestReport,
    ParsedDocument,
    SkippedFile,
    SkipReason,
    SourceRecord,
)
from citebound.ingest.chunker import chunk_document, chunk_id
from citebound.ingest.loaders import LOADERS, is_supported, load_file
from citebound.ingest.pipeline import ingest_paths
from citebound.ingest.source import SourceFile, file_knowledge_id

__all__ = [
    "LOADERS",
    "Block",
    "ChunkerConfig",
    "IngestReport",
    "ParsedDocument",
    "SkipReason",
    "SkippedFile",
    "SourceFile",
    "SourceRecord",
    "chunk_document",
    "chunk_id",
    "file_knowledge_id",
    "ingest_paths",
    "is_supported",
    "load_file",
]
