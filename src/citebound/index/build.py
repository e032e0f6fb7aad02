"""`update_indexes`: (re)build BM25 + vectors of one collection from its chunks in a `Store`.

Layout under `store.root / "index" / <collection>`: `manifest.json` and one folder per index
version, `<index_version>/` with `rows.json` (per-row metadata in chunk_id order),
`vectors.npy` (float32) and `lexical/` (tantivy). A build writes its folder under a temporary
name (every file flushed, `cache_dir.write_atomic`), renames it into place, then swaps
`manifest.json` (an atomic rename): a build killed at any point leaves the previous version
whole and in force (#34). The version before the one in force is kept for readers that may
still have it open; older ones are removed. An index written before versioned folders has its
files flat in the collection folder (`version_files`). Vectors are cached by chunk_id: an
update embeds only chunks it has not seen with the same model. The BM25 index is rebuilt
(cheap next to embedding). One build per collection runs at a time: concurrent
`update_indexes` calls (two `citebound ingest` runs, or threads) wait on an exclusive lock
file, `<collection>/.build.lock`, instead of overwriting each other's temporaries.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Concatenate, ParamSpec, Protocol, cast

import numpy as np

from citebound.cache_dir import fsync_path, prune, temp_prefix, write_atomic, write_atomic_with
from citebound.contracts.base import sha256_hex
from citebound.contracts.index import INDEX_FORMAT, IndexManifest, IndexRow
from citebound.errors import StoreError
from citebound.index.embedder import Embedder, Matrix, default_embedder
from citebound.index.lexical import LexicalDoc, build_lexical
from citebound.store.base import Store
from citebound.text.window import index_text as index_text  # re-exported: its home before #31

DEFAULT_ANALYZER = "en_stem"
# Texts per embedding call when building: small enough for the progress bar (and its ETA) to
# move every few seconds (about 3-4 s at the ~35 chunks/s measured on F´ docs on 2 busy cores;
# 1,024 left the bar at 0/2542 for 70 s), large enough for two full 64-text batches per call, so
# both embedding workers stay busy. Slicing changes no vector (each row is computed alone).
EMBED_SLICE = 128
P = ParamSpec("P")
EmbedProgress = Callable[[int, int], None]


def index_dir(root: Path, collection: str) -> Path:
    """Where the index files of `collection` live."""
    if not collection or "/" in collection or collection.startswith("."):
        raise StoreError(f"invalid collection name '{collection}'")
    return Path(root) / "index" / collection


def event_day(value: str | None) -> int | None:
    """YYYYMMDD of an ISO date (`2024-03-05` or a datetime starting so); None if unparseable."""
    if value is None or len(value) < 10:
        return None
    y, m, d = value[0:4], value[5:7], value[8:10]
    if not (y.isdigit() and m.isdigit() and d.isdigit() and value[4] == "-" == value[7]):
        return None
    try:  # 2024-13-45 has the shape of a date but is none: a filter on it must be refused
        datetime.date(int(y), int(m), int(d))
    except ValueError:
        return None
    return int(y + m + d)


def read_manifest(directory: Path) -> IndexManifest | None:
    path = directory / "manifest.json"
    if not path.is_file():
        return None
    try:
        return IndexManifest.model_validate_json(path.read_text("utf-8"))
    except ValueError as err:
        raise StoreError(f"corrupt index manifest {path}: {err}") from None


def version_files(directory: Path, version: str | None) -> tuple[Path, Path, Path]:
    """(vectors.npy, rows.json, lexical/) of index `version`: in its folder `<version>/`, or
    flat in `directory` for an index written before versioned folders."""
    folder = directory / version if version else directory
    base = folder if folder.is_dir() else directory
    return base / "vectors.npy", base / "rows.json", base / "lexical"


def read_rows(directory: Path, version: str | None = None) -> list[IndexRow]:
    try:
        data = json.loads(version_files(directory, version)[1].read_text("utf-8"))
        return [IndexRow.model_validate(r) for r in data]
    except (OSError, ValueError) as err:
        raise StoreError(f"cannot read index rows in {directory}: {err}") from None


@contextmanager
def build_lock(directory: Path) -> Iterator[None]:
    """Hold the exclusive build lock of one index directory (blocks until it is free)."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".build.lock", "a+b") as fh:
        try:
            import fcntl
        except ImportError:  # not POSIX: no inter-process lock
            yield
            return
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _one_build_at_a_time(
    fn: Callable[Concatenate[Store, str, P], str],
) -> Callable[Concatenate[Store, str, P], str]:
    def locked(store: Store, collection: str, /, *args: P.args, **kwargs: P.kwargs) -> str:
        with build_lock(index_dir(store.root, collection)):
            return fn(store, collection, *args, **kwargs)

    functools.update_wrapper(locked, fn)  # keeps the name and docstring for help()/docs
    return locked


def cached_vectors(directory: Path, model: str) -> dict[str, Matrix]:
    """The vectors of the index in `directory` by chunk id, when it was built with `model` (else
    empty): what a rebuild or a batch ingest does not embed again."""
    old = read_manifest(directory)
    vectors = version_files(directory, old.index_version if old else None)[0]
    if old is None or old.embedding_model != model or not vectors.is_file():
        return {}
    matrix = np.load(vectors, allow_pickle=False)
    rows = read_rows(directory, old.index_version)
    if len(rows) != len(matrix):
        return {}
    return {r.chunk_id: matrix[i] for i, r in enumerate(rows)}


def _embed_slices(emb: Embedder, texts: list[str], progress: EmbedProgress | None) -> Matrix:
    """`emb.embed(texts)` in slices of EMBED_SLICE, reporting after each. Embedders return one
    row per text whatever else is in the call, so slicing does not change a vector."""
    if not texts:
        return np.zeros((0, emb.dim), dtype=np.float32)
    if progress is not None:
        progress(0, len(texts))
    parts: list[Matrix] = []
    for start in range(0, len(texts), EMBED_SLICE):
        parts.append(emb.embed(texts[start : start + EMBED_SLICE]))
        if progress is not None:
            progress(min(start + EMBED_SLICE, len(texts)), len(texts))
    return np.concatenate(parts, axis=0)


@_one_build_at_a_time
def update_indexes(
    store: Store,
    collection: str,
    *,
    embedder: Embedder | None = None,
    analyzer: str = DEFAULT_ANALYZER,
    progress: EmbedProgress | None = None,
    embed_missing: bool = True,
) -> str:
    """(Re)build the indexes of `collection` and return its index_version.

    Args:
        store: Any `Store`; chunks are read with `store.iter_chunks(collection)`.
        collection: Collection name.
        embedder: Embedding model (default: packaged all-MiniLM-L6-v2 int8 ONNX).
        analyzer: BM25 analyzer, `en_stem` (English stemming, default) or `default`.
        progress: Called as `progress(done, total)` with the chunks embedded so far and the
            chunks this update must embed: once before the first slice (done = 0) and after
            every slice of `EMBED_SLICE` texts. Not called when nothing needs embedding.
        embed_missing: False refuses (StoreError) to embed anything: a replica rebuilding its
            local files from a shared store (`PostgresStore`) only reuses stored vectors.

    Returns:
        The new index_version (unchanged when corpus, model and analyzer are unchanged).
    """
    emb = embedder or default_embedder()
    directory = index_dir(store.root, collection)
    directory.mkdir(parents=True, exist_ok=True)
    # Temporaries of a build that was killed (the writer's pid is in the name, cache_dir):
    # removed here, under the build lock, so they do not pile up. Nothing else is touched.
    prune(directory, directory / "manifest.json", owned=lambda _: False)
    chunks = sorted(store.iter_chunks(collection), key=lambda c: c.chunk_id)
    ids = [c.chunk_id for c in chunks]
    if len(set(ids)) != len(ids):
        raise StoreError(f"collection '{collection}' has duplicate chunk ids")
    # Stores that version their corpus by embedding model (SqliteStore) learn it first, so the
    # store_version recorded here is the one the Retriever will see.
    set_model = getattr(store, "set_embedding_model", None)
    if callable(set_model):
        set_model(emb.name)
    store_version = store.index_version(collection)
    version = (
        "idx-"
        + sha256_hex(
            json.dumps(
                [INDEX_FORMAT, emb.name, analyzer, sha256_hex("\n".join(ids)), store_version]
            )
        )[:16]
    )
    old = read_manifest(directory)
    shared = shared_vectors(store)
    published = shared.published_manifest(collection) if shared is not None else None
    if (
        old is not None
        and old.index_version == version
        and version_files(directory, old.index_version)[2].is_dir()
        and (shared is None or not embed_missing or _same_version(published, version))
    ):
        return version

    cache = cached_vectors(directory, emb.name)
    if shared is not None:
        # The database is the vector cache every replica shares. Vectors only the local file
        # holds (same model, content-addressed ids) are uploaded, so other replicas get them.
        stored = shared.get_vectors(emb.name, ids)
        upload = [c for c in ids if c not in stored and c in cache]
        if upload and embed_missing:
            shared.put_vectors(emb.name, upload, np.stack([cache[c] for c in upload]))
        cache.update(stored)
    missing = [i for i, c in enumerate(chunks) if c.chunk_id not in cache]
    if missing and not embed_missing:
        raise StoreError(
            f"collection '{collection}': {len(missing)} chunks have no stored vectors yet "
            "(an ingest is still embedding them); retry when it has finished"
        )
    fresh = _embed_slices(emb, [index_text(chunks[i]) for i in missing], progress)
    if shared is not None and missing:
        shared.put_vectors(emb.name, [ids[i] for i in missing], fresh)
    matrix = np.zeros((len(chunks), emb.dim), dtype=np.float32)
    for i, c in enumerate(chunks):
        if c.chunk_id in cache:
            matrix[i] = cache[c.chunk_id]
    if missing:
        matrix[np.asarray(missing)] = fresh

    rows = [
        IndexRow(
            chunk_id=c.chunk_id,
            knowledge_id=c.knowledge_id,
            knowledge_type=c.knowledge_type,
            equipment_id=c.equipment_id,
            event_date=c.event_date,
        )
        for c in chunks
    ]
    lexical_docs = [
        LexicalDoc(i, index_text(c), c.equipment_id, c.knowledge_type, event_day(c.event_date))
        for i, c in enumerate(chunks)
    ]
    # The new version is built under a temporary name (removed by `prune` if this process is
    # killed), every file fsynced (cache_dir's atomic writes), then renamed into place: the
    # folder of the version in force is never written.
    staging = Path(tempfile.mkdtemp(prefix=temp_prefix(), dir=directory))
    build_lexical(staging / "lexical", lexical_docs, analyzer)
    write_atomic_with(staging / "vectors.npy", lambda fh: np.save(fh, matrix, allow_pickle=False))
    write_atomic(
        staging / "rows.json",
        json.dumps([r.model_dump(mode="json") for r in rows], ensure_ascii=False).encode("utf-8"),
    )
    manifest = IndexManifest(
        collection=collection,
        index_version=version,
        store_version=store_version,
        embedding_model=emb.name,
        embedding_dim=emb.dim,
        lexical_analyzer=analyzer,
        num_chunks=len(chunks),
        embedded_new=len(missing),
        embedded_reused=len(chunks) - len(missing),
    )
    target = directory / version
    if target.exists():  # a folder of this version no complete manifest serves (see above)
        shutil.rmtree(target)
    os.replace(staging, target)
    fsync_path(directory)
    # The swap: the manifest is written last, atomically; a crash before it leaves the old
    # version in force, whole.
    write_atomic(directory / "manifest.json", manifest.model_dump_json(indent=2).encode("utf-8"))
    _drop_old_versions(directory, version, old.index_version if old else None)
    if shared is not None and embed_missing:
        shared.publish_manifest(manifest)  # last: other replicas rebuild from it
    return version


def _drop_old_versions(directory: Path, current: str, previous: str | None) -> None:
    """Remove version folders but `current` and `previous` (a reader may still have that one
    open), and the flat files of a pre-versioned index once no version kept is flat."""
    for child in directory.iterdir():
        if child.is_dir() and child.name.startswith("idx-") and child.name not in (
            current, previous
        ):  # fmt: skip
            shutil.rmtree(child, ignore_errors=True)
    if previous is not None and not (directory / previous).is_dir():
        return  # the previous version is the flat one: keep its files
    for name in ("vectors.npy", "rows.json"):
        with contextlib.suppress(OSError):
            (directory / name).unlink()
    if (directory / "lexical").is_dir():
        shutil.rmtree(directory / "lexical", ignore_errors=True)


class SharedVectors(Protocol):
    """A store that keeps embeddings and index manifests for several processes
    (`PostgresStore`)."""

    def get_vectors(self, model: str, chunk_ids: Sequence[str]) -> dict[str, Matrix]: ...

    def put_vectors(self, model: str, chunk_ids: Sequence[str], matrix: Matrix) -> None: ...

    def publish_manifest(self, manifest: IndexManifest) -> None: ...

    def published_manifest(self, collection: str) -> IndexManifest | None: ...


def _same_version(manifest: IndexManifest | None, version: str) -> bool:
    return manifest is not None and manifest.index_version == version


def shared_vectors(store: Store) -> SharedVectors | None:
    """`store` as `SharedVectors` when it has all four methods (`PostgresStore`), else None."""
    names = ("get_vectors", "put_vectors", "publish_manifest", "published_manifest")
    if all(callable(getattr(store, n, None)) for n in names):
        return cast(SharedVectors, store)
    return None
