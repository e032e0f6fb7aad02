"""Factories for retrieval bundles used by the assembly and prompt tests."""

from __future__ import annotations

from typing import Any

Row = dict[str, Any]


def make_row(rank: int, text: str | None = None, **overrides: Any) -> Row:
    row: Row = {
        "chunk_id": f"chunk-{rank:03d}",
        "knowledge_id": f"doc-{rank:03d}",
        "rank": rank,
        "similarity": round(0.95 - rank * 0.001, 6),
        "chunk_text": text
        if text is not None
        else f"Unique fact number {rank} about valve V{rank}.",
        "knowledge_type_effective": "manual",
        "equipment_id": "EQ-1",
        "event_date": "2025-01-01",
        "source": {
            "document": f"Manual {rank}",
            "heading_path": ["Chapter 1", f"Section {rank}"],
            "page": rank + 1,
        },
    }
    row.update(overrides)
    return row


def make_bundle(rows: list[Row], **overrides: Any) -> dict[str, Any]:
    bundle: dict[str, Any] = {
        "request_id": "req-1",
        "user_question": "Which valve is described?",
        "retrieval_status": "SUCCESS",
        "index_version": "idx-1",
        "embedding_model": "all-MiniLM-L6-v2",
        "top_k": len(rows),
        "results": rows,
    }
    bundle.update(overrides)
    return bundle


def covered_gate(max_similarity: float, **extra: Any) -> dict[str, Any]:
    """A passed retrieval-gate trace below the 0.76 gate whose best row holds all 3 key terms."""
    return {
        "passed": True,
        "max_similarity": max_similarity,
        "min_score": 0.76,
        "min_chunks": 1,
        "chunks_above_min_score": 0,
        "coverage": 1.0,
        "key_terms": 3,
        "key_terms_held": 3,
        **extra,
    }
