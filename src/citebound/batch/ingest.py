"""`citebound batch ingest`: load, chunk and embed on Spark executors, then build the index once.

Two Spark jobs. (1) Load and chunk: the driver lists the files (the same listing as `citebound
ingest`: sorted source paths; hidden files, sidecars, the store directory and links leaving a
folder left out) and reads what the store holds for each; the executors get contiguous slices
of that list and, per file, read it (only if it still resolves inside the folder it was listed
in), skip it when its hash and settings are unchanged, else load and chunk it with the code of
`citebound ingest` (`citebound.ingest.pipeline.prepare_file`). Prepared files stream back in
listing order and the driver writes them (the store has one writer: ownership checks and
`replace_source` as in `ingest_paths`). (2) Embed: the chunks without a vector, cut into
partitions by count (one large file, e.g. a JSONL corpus, still spreads over every executor);
each Python worker loads the embedding model once. The driver then builds the index once with
those vectors (`update_indexes` with a precomputed embedder; a chunk the executors did not
return is embedded on the driver, never dropped).

So the store holds exactly what `citebound ingest` writes, whatever the partitioning: the same
rows, chunk ids and index version, byte-identical vectors (embedders return one vector per text
whatever else is in the call). Stores: the embedded directory (`--store`) or PostgreSQL
(`--database`; the directory then holds this host's index files).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from citebound.contracts.base import Contract
from citebound.contracts.ingest import ChunkerConfig, IngestLimits, IngestReport
from citebound.store.open import open_store

_EMBEDDERS: dict[str, Any] = {}


class BatchIngestReport(Contract):
    """`batch ingest`: the ingest report plus what the executors embedded."""

    ingest: IngestReport = Field(description="What loading, chunking and storing did.")
    embedded_on_executors: int = Field(
        description="Chunks of new or changed files embedded in the executors."
    )
    embedded_on_driver: int = Field(description="Chunks the driver had to embed itself.")
    partitions: int = Field(description="Spark partitions of the load/chunk/embed job.")
    search_index_version: str = Field(description="Index version built.")
    seconds: float = Field(description="Wall time.")


def prepare_partitions(
    collection: str, config_json: str, limits_json: str = ""
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """RDD mapPartitions: (candidate, stored record) in, `Prepared` or outcome out, in order.

    Each partition goes through the bounded path of `citebound ingest`
    (`citebound.ingest.worker.isolated_preparer` with the `[ingest]` limits): PDFs, Office
    files and large files are parsed in a worker process with a time and a memory limit, so
    a PDF bomb costs its own file (`OVER_LIMIT`, with the limit to raise), never the
    executor or the rest of its partition."""

    def run(items: Iterator[Any]) -> Iterator[Any]:
        # Lazy: each Spark Python worker imports this module for one job; the loaders
        # (ingest.worker, ~75 ms) and the embedder and index (numpy, ~35 ms) load only where they
        # run.
        from citebound.ingest.worker import isolated_preparer

        config = ChunkerConfig.model_validate_json(config_json)
        limits = IngestLimits.model_validate_json(limits_json) if limits_json else IngestLimits()
        yield from isolated_preparer(limits)(list(items), collection, config)

    return run


def embed_partitions(model_name: str) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """mapInPandas: (chunk_id, text) rows in, (chunk_id, vector bytes float32) rows out."""

    def run(frames: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd

        if model_name not in _EMBEDDERS:  # once per Python worker (Spark reuses workers)
            from citebound.index.embedder import load_embedder

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
    database: str | None = None,
    limits: IngestLimits | None = None,
) -> BatchIngestReport:
    """Ingest `paths` into `collection` of the store at `store_dir` (or of the PostgreSQL
    store `database`): files loaded and chunked on Spark, chunks embedded on Spark.
    `limits` are the `[ingest]` bounds (default `IngestLimits()`), applied on the executors
    as `citebound ingest` applies them (`prepare_partitions`)."""
    from citebound.index.build import update_indexes
    from citebound.index.embedder import default_embedder
    from citebound.ingest import ingest_paths
    from citebound.ingest.pipeline import Candidates

    started = time.perf_counter()
    parts = {"files": 1, "chunks": 1}
    limits = limits or IngestLimits()
    limits_json = limits.model_dump_json()

    def slices(rows: int) -> int:
        return max(1, min(partitions or spark.sparkContext.defaultParallelism, rows))

    def load_on_spark(pairs: Candidates, coll: str, config: ChunkerConfig) -> Iterator[Any]:
        if not pairs:
            return
        parts["files"] = slices(len(pairs))
        job = spark.sparkContext.parallelize(list(pairs), numSlices=parts["files"])
        prepared = _computed(
            job.mapPartitions(prepare_partitions(coll, config.model_dump_json(), limits_json))
        )
        try:
            # Partition after partition, each in order: listing order.
            yield from prepared.toLocalIterator()
        finally:
            prepared.unpersist()

    store = open_store(store_dir, database=database)
    try:
        report = ingest_paths(
            store,
            list(paths),
            collection=collection,
            progress=False,
            update_index=False,
            preparer=load_on_spark,
            limits=limits,
        )
        emb = default_embedder()
        todo = _unembedded(store, collection, emb.name)
        vectors: dict[str, Any] = {}
        if todo:
            parts["chunks"] = slices(len(todo))
            rows = sorted(todo.items())
            frame = spark.createDataFrame(
                spark.sparkContext.parallelize(rows, numSlices=parts["chunks"]),
                "chunk_id string, text string",
            )
            out = _computed(
                frame.mapInPandas(embed_partitions(emb.name), "chunk_id string, vector binary")
            )
            for row in out.toLocalIterator():
                text = todo.get(row["chunk_id"])
                if text is not None:
                    vectors[text] = np.frombuffer(row["vector"], dtype="<f4")
            out.unpersist()
        pre = PrecomputedEmbedder(emb, vectors)
        version = update_indexes(store, collection, embedder=pre)
        report = report.model_copy(
            update={
                "index_status": "updated",
                "search_index_version": version,
                "index_version": store.index_version(collection),
                "seconds": round(time.perf_counter() - started, 3),
            }
        )
    finally:
        store.close()
    return BatchIngestReport(
        ingest=report,
        embedded_on_executors=len(vectors),
        embedded_on_driver=pre.fallback_count,
        partitions=max(parts.values()),
        search_index_version=version,
        seconds=round(time.perf_counter() - started, 3),
    )


def _computed(data: Any) -> Any:
    """`data` (RDD or DataFrame) computed by one job over all partitions at once and kept
    (memory, else disk), so the driver can then stream it with toLocalIterator without
    holding it whole; toLocalIterator alone would compute one partition at a time."""
    from pyspark import StorageLevel

    data = data.persist(StorageLevel.MEMORY_AND_DISK)
    data.count()
    return data


def _unembedded(store: Any, collection: str, model: str) -> dict[str, str]:
    """chunk_id -> index text of the chunks with no vector in the local index files or, for a
    shared store (PostgreSQL), in the database."""
    from citebound.index.build import cached_vectors, index_dir, index_text, shared_vectors

    chunks = sorted(store.iter_chunks(collection), key=lambda c: c.chunk_id)
    have = set(cached_vectors(index_dir(store.root, collection), model))
    shared = shared_vectors(store)
    if shared is not None:
        have |= set(shared.get_vectors(model, [c.chunk_id for c in chunks]))
    return {c.chunk_id: index_text(c) for c in chunks if c.chunk_id not in have}
