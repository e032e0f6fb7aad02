"""Opening the indexes of one collection: the `LoadedIndex` a `Retriever` searches, read from
the index directory (for a store shared by several processes, first rebuilt there from the
stored vectors the database publishes)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from citebound.contracts.index import IndexManifest
from citebound.errors import StoreError
from citebound.index.build import index_dir, read_manifest, read_rows, update_indexes, version_files
from citebound.index.embedder import Embedder, Matrix, load_embedder
from citebound.index.lexical import LexicalIndex
from citebound.index.pgvector import PgVectorIndex
from citebound.index.vectors import VectorIndex
from citebound.retrieve.filters import FilterColumns
from citebound.retrieve.rows import RowCache
from citebound.store.base import Store


@dataclass
class LoadedIndex:
    """The indexes of one collection, opened for one store version."""

    manifest: IndexManifest
    chunk_ids: list[str]
    columns: FilterColumns
    lexical: LexicalIndex
    vectors: VectorIndex
    embedder: Embedder
    cache: RowCache


@runtime_checkable
class PostgresStoreLike(Protocol):
    """A store whose dense search runs in the database (`PostgresStore`)."""

    hnsw_min_rows: int
    dense_in_database: bool

    def dense_search(
        self, model: str, collection: str, query: Matrix, k: int, *, approximate: bool
    ) -> list[tuple[str, float]]: ...


def open_index(
    store: Store,
    collection: str,
    current: str,
    *,
    embedder: Embedder | None,
    row_cache_size: int,
    last_complete: bool = False,
) -> LoadedIndex:
    """The indexes of `collection` at store version `current`, opened from the index
    directory; StoreError saying what to do when missing, stale or inconsistent.

    `last_complete` (an embedded store): an index built for an older store version is opened
    anyway, the last complete index, instead of none: an ingest that was killed, failed or is
    still running has changed the store but not swapped a new index in. Rows are hydrated from
    the store, so a chunk deleted since is never returned; chunks added since are not found
    until the next complete build, and every bundle names the index version it used."""
    directory = index_dir(Path(store.root), collection)
    manifest = read_manifest(directory)
    if manifest is None or manifest.store_version != current:
        manifest = rebuild_from_shared(store, collection, current, embedder=embedder) or manifest
    if manifest is None:
        existing = sorted(store.collections())
        if collection in existing:  # documents stored, but no index written yet
            raise StoreError(
                f"collection '{collection}' has no index in {directory.parent}: "
                f"re-run `citebound ingest PATH --collection {collection}`"
            )
        choices = ", ".join(existing) if existing else "none yet"
        raise StoreError(
            f"no collection '{collection}' in {Path(store.root)} (existing: {choices}): "
            f"pass --collection NAME, or ingest documents first (citebound ingest PATH "
            f"--collection {collection})"
        )
    if manifest.store_version != current and not (last_complete and manifest.num_chunks):
        raise StoreError(
            f"index of collection '{collection}' is stale (built for store version "
            f"{manifest.store_version}, store is at {current}): re-run ingest "
            "or citebound.index.update_indexes"
        )
    embedder = embedder or load_embedder(manifest.embedding_model)
    if embedder.name != manifest.embedding_model:
        raise StoreError(
            f"index was built with '{manifest.embedding_model}', not '{embedder.name}'"
        )
    vectors_file, _, lexical_dir = version_files(directory, manifest.index_version)
    rows = read_rows(directory, manifest.index_version)
    chunk_ids = [r.chunk_id for r in rows]
    vectors = VectorIndex.load(vectors_file)
    if isinstance(store, PostgresStoreLike) and store.dense_in_database:
        vectors = PgVectorIndex(
            vectors.matrix,
            store=store,  # type: ignore[arg-type]
            collection=collection,
            model=manifest.embedding_model,
            chunk_ids=chunk_ids,
        )
    loaded = LoadedIndex(
        manifest=manifest,
        chunk_ids=chunk_ids,
        columns=FilterColumns(rows),
        lexical=LexicalIndex(lexical_dir, manifest.lexical_analyzer),
        vectors=vectors,
        embedder=embedder,
        cache=RowCache(row_cache_size, version=current),
    )
    if len(loaded.vectors) != len(rows) or loaded.lexical.num_docs != len(rows):
        raise StoreError(f"index files of '{collection}' disagree: rebuild them")
    return loaded


def rebuild_from_shared(
    store: Store, collection: str, current: str, *, embedder: Embedder | None
) -> IndexManifest | None:
    """For a store shared by several processes: rebuild the local index files of the
    version the database publishes, from stored vectors (never embedding). None when the
    store is not shared or publishes nothing; the published (stale) manifest, unbuilt,
    when it is not the current version."""
    published_manifest = getattr(store, "published_manifest", None)
    if not callable(published_manifest):
        return None
    published: IndexManifest | None = published_manifest(collection)
    if published is None or published.store_version != current:
        return published  # None, or a stale version: open_index says which
    embedder = embedder or load_embedder(published.embedding_model)
    update_indexes(
        store,
        collection,
        embedder=embedder,
        analyzer=published.lexical_analyzer,
        embed_missing=False,
    )
    return read_manifest(index_dir(Path(store.root), collection))
