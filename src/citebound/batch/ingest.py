"""`citebound batch ingest`: embed a corpus on Spark executors, then build the index once.

Embedding is nearly all of an ingest's time (docs/ingest.md), so that is what runs in the
executors: each Python worker loads the embedding model once and embeds a slice of the chunks
that have no vector yet. Loading and chunking run on the driver through `ingest_paths` (the
same incremental, deterministic code path as `citebound ingest`: same skips, same source
records, same chunk ids), because they write the store, which has one writer. The driver then
builds the index once with the executors' vectors (`update_indexes` with a precomputed
embedder); a chunk the executors did not return is embedded on the driver, never dropped.

Embedders return one vector per text whatever else is in the call, so the vectors and the
index version do not depend on partitioning.

Stores: the embedded store directory (`--store`). A PostgreSQL backend plugs in where
`SqliteStore` is opened below: it needs `iter_chunks`, the `IngestStore` writes and an
`index_dir` for the vector and BM25 files (see the report of issue #18).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from citebound.contracts.base import Contract
from citebound.contracts.ingest import IngestReport

_EMBEDDERS: dict[str, Any] = {}


class BatchIngestReport(Contract):
    """`batch ingest`: the ingest report plus what the executors embedded."""

    ingest: IngestReport = Field(description="What loading and chunking did (driver).")
    embedded_on_executors: int = Field(description="Chunks embedded in the executors.")
    embedded_on_driver: int = Field(description="Chunks the driver had to embed itself.")
    partitions: int = Field(description="Spark partitions of the embedding job.")
    search_index_version: str = Field(description="Index version built.")
    seconds: float = Field(description="Wall time.")


def embed_partitions(model_name: str) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """mapInPandas: (chunk_id, text) rows in, (chunk_id, vector bytes float32) rows out."""

    def run(frames: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd

        from citebound.index.embedder import load_embedder

        if model_name not in _EMBEDDERS:
            _EMBEDDERS[model_name] = load_embedder(model_name)
        emb = _EMBEDDERS[model_name]
        for frame in frames:
            texts = [str(t) for t in frame["text"]]
            vectors = emb.embed(texts) if texts else np.zeros((0, emb.dim), np.float32)
            yield pd.DataFrame(
                {
                    "chunk_id": list(frame["chunk_id"]),
                    "vector": [np.asarray(v, dtype="<f4").tobytes() for v in vectors],
                }
            )

    return run


class PrecomputedEmbedder:
    """An `Embedder` answering from vectors computed elsewhere (keyed by text), falling back
    to the real model for any text it does not hold."""

    def __init__(self, fallback: Any, vectors: dict[str, Any]) -> None:
        self.name: str = fallback.name
        self.dim: int = fallback.dim
        self._fallback = fallback
        self._vectors = vectors
        self.fallback_count = 0

    def embed(self, texts: Sequence[str]) -> Any:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing = [i for i, t in enumerate(texts) if t not in self._vectors]
        for i, t in enumerate(texts):
            if t in self._vectors:
                out[i] = self._vectors[t]
        if missing:
            self.fallback_count += len(missing)
            out[np.asarray(missing)] = self._fallback.embed([texts[i] for i in missing])
        return out


def ingest_batch(
    spark: Any,
    store_dir: Path,
    paths: Sequence[Path],
    *,
    collection: str,
    partitions: int | None = None,
) -> BatchIngestReport:
    """Ingest `paths` into `collection` of the store at `store_dir`, embedding on Spark."""
    from citebound.index.build import _cached_vectors, index_dir, index_text, update_indexes
    from citebound.index.embedder import default_embedder
    from citebound.ingest import ingest_paths
    from citebound.store.sqlite import SqliteStore

    started = time.perf_counter()
    with SqliteStore(store_dir) as store:
        report = ingest_paths(store, list(paths), collection=collection, update_index=False)
        emb = default_embedder()
        cached = _cached_vectors(index_dir(store.root, collection), emb.name)
        todo: dict[str, str] = {}
        for chunk in sorted(store.iter_chunks(collection), key=lambda c: c.chunk_id):
            if chunk.chunk_id not in cached:
                todo[chunk.chunk_id] = index_text(chunk)
        n = 1
        vectors: dict[str, Any] = {}
        if todo:
            n = max(1, min(partitions or spark.sparkContext.defaultParallelism, len(todo)))
            rows = sorted(todo.items())
            frame = spark.createDataFrame(
                spark.sparkContext.parallelize(rows, numSlices=n), "chunk_id string, text string"
            )
            out = frame.mapInPandas(embed_partitions(emb.name), "chunk_id string, vector binary")
            for row in out.toLocalIterator(prefetchPartitions=True):
                text = todo.get(row["chunk_id"])
                if text is not None:
                    vectors[text] = np.frombuffer(row["vector"], dtype="<f4")
        pre = PrecomputedEmbedder(emb, vectors)
        version = update_indexes(store, collection, embedder=pre)
        report = report.model_copy(
            update={
                "index_status": "updated",
                "search_index_version": version,
                "index_version": store.index_version(collection),
            }
        )
    return BatchIngestReport(
        ingest=report,
        embedded_on_executors=len(vectors),
        embedded_on_driver=pre.fallback_count,
        partitions=n,
        search_index_version=version,
        seconds=round(time.perf_counter() - started, 3),
    )
