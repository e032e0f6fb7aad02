"""Bundle rows: a stored chunk as a `RetrievalRow` with its citation metadata, the filter
re-check of a chunk, and the per-collection cache of hydrated rows."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from citebound.contracts.documents import Chunk
from citebound.contracts.retrieval import RetrievalRow, SourceRef
from citebound.retrieve.filters import RowFilter, row_passes

# Rows kept hydrated per collection. A row holds the chunk text plus citation metadata (about
# 2-3 KB in memory), so 20k rows cost ~50 MB and hold N1=200 candidates of ~100 distinct
# questions; a corpus that small is served without touching SQLite at all.
ROW_CACHE_SIZE = 20_000


@dataclass
class RowCache:
    """Hydrated rows (rank 0, similarity 0) by chunk_id, for one store version.

    Chunks are immutable, but a document can be deleted or re-ingested while an index stays
    loaded; the cache is therefore tied to the store's `index_version` and emptied when it
    moves, so it never serves a row the store would no longer return."""

    size: int
    version: str = ""
    rows: OrderedDict[str, RetrievalRow] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def chunk_passes(chunk: Chunk, flt: RowFilter) -> bool:
    """`chunk` passes the compiled filters (`row_passes` on its columns)."""
    return row_passes(chunk.equipment_id, chunk.knowledge_type, chunk.event_date, flt)


def source_of(chunk: Chunk) -> SourceRef:
    """The citation metadata of `chunk`: its `reference()` is the prompt's `source=` line."""
    return SourceRef(
        document=chunk.title or Path(chunk.source_path).name or chunk.knowledge_id,
        source_path=chunk.source_path or None,
        heading_path=chunk.heading_path,
        page=chunk.page,
        page_end=chunk.page_end,
        chunk_index=chunk.chunk_index,
        char_start=chunk.char_start,
        char_end=chunk.char_end,
        ocr=chunk.ocr,
    )


def to_row(chunk: Chunk, rank: int, similarity: float, faiss_id: int | None) -> RetrievalRow:
    """A bundle row with its citation metadata."""
    return RetrievalRow(
        chunk_id=chunk.chunk_id,
        knowledge_id=chunk.knowledge_id,
        rank=rank,
        similarity=similarity,
        chunk_text=chunk.text,
        knowledge_type_effective=chunk.knowledge_type or "document",
        equipment_id=chunk.equipment_id,
        event_date=chunk.event_date,
        faiss_id=faiss_id,
        source=source_of(chunk),
    )
