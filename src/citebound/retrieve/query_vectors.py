"""Question vectors embedded ahead of time, for batches (`citebound ask --questions`).

One question at a time, the embedder runs one short forward pass per question (about 6 ms on
2 cores); a batch embeds 64 at once for about a third of that per question. A batch runner
calls `Retriever.prefetch` with its questions' query pieces, and each search then takes its
vectors from here instead of embedding them.

The memo only ever holds what a caller prefetched, and a search removes what it uses, so a
process that never prefetches never caches (its latency is what a user sees), and a batch
does not grow it past one chunk of questions. Vectors are keyed by (embedder name, text) and
are bit-identical to embedding the text alone (the embedder's vectors do not depend on the
batch plan), so answers are the same with or without prefetching.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from citebound.index.embedder import Embedder, Matrix


class QueryVectorMemo:
    """Prefetched question vectors, each used once."""

    def __init__(self) -> None:
        self._vectors: dict[tuple[str, str], Matrix] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._vectors)

    def fill(self, embedder: Embedder, texts: Sequence[str]) -> int:
        """Embed the distinct `texts` not held yet in one bulk call; return how many."""
        with self._lock:
            todo = sorted({t for t in texts if (embedder.name, t) not in self._vectors})
        if not todo:
            return 0
        vectors = embedder.embed(todo)
        with self._lock:
            for text, vector in zip(todo, vectors, strict=True):
                self._vectors[(embedder.name, text)] = vector
        return len(todo)

    def embed(self, embedder: Embedder, pieces: Sequence[str]) -> Matrix:
        """Vectors of `pieces`: prefetched ones (removed from the memo), the rest embedded."""
        with self._lock:
            held = {
                p: v
                for p in pieces
                if (v := self._vectors.pop((embedder.name, p), None)) is not None
            }
        if not held:
            return embedder.embed(list(pieces))
        missing = sorted({p for p in pieces if p not in held})
        if missing:
            held.update(zip(missing, embedder.embed(missing), strict=True))
        return np.vstack([held[p] for p in pieces]).astype(np.float32, copy=False)

    def clear(self) -> None:
        """Drop every prefetched vector (a batch calls this after each chunk)."""
        with self._lock:
            self._vectors.clear()
