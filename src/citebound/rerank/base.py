"""Reranker protocol (seed 002 §5.4) and the passthrough default.

A reranker reorders the first N2 retrieval candidates; it never adds or drops one, and it never
changes their calibrated `similarity` (the gate and assembly thresholds keep their meaning).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Reranker(Protocol):
    """Reorders candidates for a query. `name` is recorded in traces."""

    name: str

    def rerank(self, query: str, chunk_ids: Sequence[str], texts: Sequence[str]) -> list[str]:
        """The same chunk_ids, best first; ties by chunk_id asc."""
        ...


class PassthroughReranker:
    """Keeps the fused retrieval order (the default when no cross-encoder is configured)."""

    name = "passthrough"

    def rerank(self, query: str, chunk_ids: Sequence[str], texts: Sequence[str]) -> list[str]:
        return list(chunk_ids)


def order_by_scores(chunk_ids: Sequence[str], scores: Sequence[float]) -> list[str]:
    """chunk_ids sorted by score desc, then chunk_id asc."""
    pairs = sorted(zip(scores, chunk_ids, strict=True), key=lambda p: (-p[0], p[1]))
    return [cid for _, cid in pairs]
