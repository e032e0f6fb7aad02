"""`ingest_paths`: incremental, deterministic ingestion of files and folders into a store.

Which files are read and the source path of each: `ingest.discover` (a folder root `R` gives
`f"{R.name}/{relative posix path}"`). Files are processed in sorted source_path order, so
any input order gives the same store.

Incremental: a file is reloaded only when the sha256 of its bytes changed, or its sidecar,
the chunker settings or INGEST_VERSION did (`settings_fingerprint`).
Stored files under a folder root (source_path starting with `f"{R.name}/"`) that no longer
exist are deleted. Two folders with the same name share that namespace within a collection:
give them different collections.
"""

from __future__ import annotations

import hashlib
import importlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from citebound.contracts.base import canonical_json
from citebound.contracts.documents import Chunk, Document
from citebound.contracts.ingest import (
    ChunkerConfig,
    IndexStatus,
    IngestLimits,
    IngestReport,
    SkippedFile,
    SkipReason,
    SourceRecord,
)
from citebound.errors import ConfigError, StageError
from citebound.ingest.chunker import chunk_document
from citebound.ingest.discover import Candidate, discover
from citebound.ingest.limits import limit_message
from citebound.ingest.loaders import SIDECAR_SUFFIX, load_file
from citebound.ingest.metadata import parse_sidecar
from citebound.ingest.ocr import available as ocr_available
from citebound.ingest.source import SourceFile
from citebound.ingest.worker import isolated_preparer
from citebound.store.base import IngestStore
from citebound.store.sqlite import check_collection_name

# Bump when a loader or the chunker changes its output, so stores re-chunk unchanged files.
# v7: code blocks and chunks cut to the embedder's window, cut code names its first line (#31);
# v6: rows led by a code span or a link are rows, a pipe in code or braces is no border;
# v5: a code block or an introduced list stays with its intro (#15); v4: two-column rows
# without a leading pipe; v3: wrapped lines joined, metadata blocks dropped (#15)
INGEST_VERSION = "ingest-v7"


def settings_fingerprint(config: ChunkerConfig, sidecar: bytes) -> str:
    """sha256 over what shapes a file's chunks besides its bytes: ingest version, chunker
    settings and sidecar bytes. Stored as `SourceRecord.meta_sha256`."""
    head = f"{INGEST_VERSION}\n{canonical_json(config)}\n".encode()
    return hashlib.sha256(head + sidecar).hexdigest()


def _index_hook(
    store: IngestStore, collection: str, progress: Callable[[int, int], None]
) -> tuple[IndexStatus, str | None, str | None]:
    """Call `citebound.index.update_indexes(store, collection)` when that exists; returns
    (status, failure message, the search index version it built)."""
    try:
        module = importlib.import_module("citebound.index")
    except ImportError as err:
        return "unavailable", f"citebound.index cannot be imported: {err}", None
    hook: Callable[..., object] | None = getattr(module, "update_indexes", None)
    if hook is None:
        return "unavailable", None, None
    try:
        built = hook(store, collection, progress=progress)
    except Exception as err:  # the corpus is stored; the index is stale and says so
        return "failed", f"{type(err).__name__}: {err}", None
    return "updated", None, built if isinstance(built, str) else None


def _progress(enabled: bool | None) -> Progress:
    console = Console(stderr=True)
    show = console.is_terminal if enabled is None else enabled
    return Progress(
        TextColumn("[bold]ingest[/bold]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("{task.description}"),
        console=console,
        disable=not show,
        transient=True,
    )


def ingest_paths(
    store: IngestStore,
    paths: Sequence[Path],
    *,
    collection: str = "default",
    config: ChunkerConfig | None = None,
    progress: bool | None = None,
    update_index: bool = True,
    preparer: Preparer | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    limits: IngestLimits | None = None,
) -> IngestReport:
    """Ingest files and folders into `collection` of `store`; see the module docstring.

    Args:
        store: where documents and chunks go.
        paths: files and/or folders; each must exist.
        collection: collection name.
        config: chunk sizes (default ChunkerConfig()).
        progress: True/False forces the progress bar; None shows it only on a terminal.
        update_index: call `citebound.index.update_indexes` afterwards when available.
        preparer: loads and chunks the files elsewhere (`citebound batch ingest` on Spark
            executors); yields one `Prepared` or outcome per (candidate, stored record), in
            order. Default: here, one file at a time. The store is written here either way.
        include: globs; when given, only files under a folder root matching one are read.
        exclude: globs of files and folders to leave out, after each folder's
            `.citeboundignore` (`ingest.globs`). A stored file now left out is deleted.
        limits: per-file bounds (`[ingest]`, default `IngestLimits()`); a file over one is
            skipped as `OVER_LIMIT` and the others ingest. PDFs, Office files and large files
            are parsed in a worker process with a time and memory limit (`ingest.worker`).

    Raises:
        ConfigError: a path does not exist or the collection name is invalid.

    Example:
        >>> report = ingest_paths(SqliteStore(Path(".citebound")), [Path("docs")])
        >>> report.chunks_written
    """
    started = time.perf_counter()
    config = config or ChunkerConfig()
    check_collection_name(collection)
    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:
        raise ConfigError(f"path does not exist: {', '.join(missing)}", field="paths")
    roots = sorted({Path(p).resolve() for p in paths})
    candidates, prefixes, ignored, skipped = discover(roots, store.root.resolve(), include, exclude)
    stored = {s.source_path: s for s in store.list_sources(collection)}
    present = {c.source_path for c in candidates}

    deleted = 0
    for source_path in sorted(stored):
        if source_path not in present and any(source_path.startswith(p) for p in prefixes):
            store.delete_source(collection, source_path)
            deleted += 1

    added = updated = unchanged = docs_written = chunks_written = 0
    pairs = [(cand, stored.get(cand.source_path)) for cand in candidates]
    prepared = (preparer or isolated_preparer(limits or IngestLimits()))(pairs, collection, config)
    with _progress(progress) as bar:
        task = bar.add_task("", total=len(candidates))
        for (cand, previous), ready in zip(pairs, prepared, strict=True):
            bar.update(task, description=cand.source_path[-60:])
            if ready.source_path != cand.source_path:
                raise ConfigError(f"preparer returned {ready.source_path} out of order")
            outcome = ready if isinstance(ready, _Outcome) else _store_prepared(store, ready)
            if outcome.status == "skipped" and previous is not None:
                # Never keep answering from a version of a file that is now unreadable.
                store.delete_source(collection, cand.source_path)
                deleted += 1
                last = outcome.skipped[-1]
                note = last.message + " (its previous version was removed from the store)"
                outcome.skipped = (*outcome.skipped[:-1], last.model_copy(update={"message": note}))
            skipped.extend(outcome.skipped)
            if outcome.status == "unchanged":
                unchanged += 1
            elif outcome.status in ("added", "updated"):
                added += outcome.status == "added"
                updated += outcome.status == "updated"
                docs_written += outcome.documents
                chunks_written += outcome.chunks
            bar.advance(task)

        status: IndexStatus = "unavailable"
        message: str | None = None
        built: str | None = None
        if update_index:
            # Embedding is most of an ingest's time: it gets its own bar, shown only once
            # something needs embedding.
            embed_task = bar.add_task("embedding chunks", total=None, visible=False)

            def embedded(done: int, total: int) -> None:
                bar.update(embed_task, total=total, completed=done, visible=True)

            status, message, built = _index_hook(store, collection, embedded)
    return IngestReport(
        collection=collection,
        roots=[str(r) for r in roots],
        files_seen=len(candidates),
        files_added=added,
        files_updated=updated,
        files_unchanged=unchanged,
        files_deleted=deleted,
        files_ignored=ignored,
        skipped=skipped,
        documents_written=docs_written,
        chunks_written=chunks_written,
        chunks_total=store.chunk_count(collection),
        index_version=store.index_version(collection),
        index_status=status,
        index_message=message,
        search_index_version=built,
        seconds=round(time.perf_counter() - started, 3),
    )


@dataclass
class _Outcome:
    status: str
    documents: int = 0
    chunks: int = 0
    skipped: tuple[SkippedFile, ...] = ()
    source_path: str = ""


@dataclass
class Prepared:
    """One file loaded and chunked, not stored yet: what can run away from the store."""

    source_path: str
    record: SourceRecord
    previous: bool
    documents: list[tuple[Document, list[Chunk]]]
    skipped: tuple[SkippedFile, ...] = ()


Candidates = Sequence[tuple[Candidate, SourceRecord | None]]
Preparer = Callable[[Candidates, str, ChunkerConfig], Iterator[Prepared | _Outcome]]


def prepare_file(
    cand: Candidate,
    collection: str,
    config: ChunkerConfig,
    previous: SourceRecord | None,
    limits: IngestLimits | None = None,
) -> Prepared | _Outcome:
    """Read, load and chunk one file (no store access); every failure becomes a skip entry.

    `limits` (default `IngestLimits()`) are checked before reading (bytes), while loading
    (characters, PDF pages and content bytes) and after chunking (chunks per document); the
    time and memory limits are the worker's (`ingest.worker`)."""
    limits = limits or IngestLimits()
    record_skips: list[SkippedFile] = []

    def skip(reason: str, message: str) -> _Outcome:
        entry = SkippedFile(
            source_path=cand.source_path, reason=SkipReason(reason), message=message
        )
        return _Outcome("skipped", skipped=(*record_skips, entry), source_path=cand.source_path)

    try:
        # Listed inside the folder, and still inside it now (a link swapped in since the
        # listing, or a candidate built elsewhere, is never followed out of the folder).
        if not cand.path.resolve(strict=True).is_relative_to(cand.root):
            return skip(SkipReason.OUTSIDE_ROOT, f"{cand.path} resolves outside {cand.root}")
        size = cand.path.stat().st_size
        if size > limits.max_file_bytes:
            why = limit_message(
                "max_file_bytes", f"the file is {size:,} bytes", limits.max_file_bytes
            )
            return skip(SkipReason.OVER_LIMIT, why)
        raw = cand.path.read_bytes()
        sidecar_path = cand.path.with_name(cand.path.name + SIDECAR_SUFFIX)
        sidecar = sidecar_path.read_bytes() if sidecar_path.is_file() else b""
    except OSError as err:
        return skip(SkipReason.UNREADABLE, f"cannot read the file: {err.strerror or err}")
    sha = hashlib.sha256(raw).hexdigest()
    # A PDF is read again once OCR is installed: its pages without text are then indexed.
    with_ocr = cand.path.suffix.lower() == ".pdf" and ocr_available()
    meta_sha = settings_fingerprint(config, sidecar + (b"\x00ocr" if with_ocr else b""))
    if previous and (previous.content_sha256, previous.meta_sha256) == (sha, meta_sha):
        return _Outcome("unchanged", source_path=cand.source_path)
    try:
        metadata = parse_sidecar(sidecar) if sidecar else {}
        src = SourceFile(cand.path, cand.source_path, collection, raw, sha, metadata, limits)
        parsed = load_file(src, record_skips.append)
        documents = [(p.document, list(chunk_document(p, config))) for p in parsed]
    except StageError as err:
        return skip(err.reason_code, str(err))
    most = limits.max_chunks_per_document
    for document, chunks in documents:
        if len(chunks) > most:
            where = f" ({document.title})" if len(documents) > 1 else ""
            why = limit_message("max_chunks_per_document", f"a document{where} makes "
                                f"{len(chunks):,} chunks", most)  # fmt: skip
            return skip(SkipReason.OVER_LIMIT, why)
    record = SourceRecord(
        collection=collection, source_path=cand.source_path, content_sha256=sha,
        meta_sha256=meta_sha,
    )  # fmt: skip
    return Prepared(
        source_path=cand.source_path,
        record=record,
        previous=previous is not None,
        documents=documents,
        skipped=tuple(record_skips),
    )


def _store_prepared(store: IngestStore, prep: Prepared) -> _Outcome:
    """Write one prepared file, never taking a document id another file owns."""
    collection, source_path = prep.record.collection, prep.source_path
    record_skips = list(prep.skipped)
    owners = store.document_sources([d.knowledge_id for d, _ in prep.documents])
    documents: list[tuple[Document, Sequence[Chunk]]] = []
    for document, chunks in prep.documents:
        owner = owners.get(document.knowledge_id)
        if owner is not None and owner != (collection, source_path):
            record_skips.append(
                SkippedFile(
                    source_path=source_path,
                    reason=SkipReason.DUPLICATE_ID,
                    message=f"id {document.knowledge_id} already belongs to "
                    f"{owner[1]} in collection {owner[0]}",
                )
            )
            continue
        documents.append((document, chunks))
    if not documents:
        why = "every document id in the file is already taken"
        entry = SkippedFile(source_path=source_path, reason=SkipReason.DUPLICATE_ID, message=why)
        return _Outcome("skipped", skipped=(*record_skips, entry), source_path=source_path)
    written = store.replace_source(prep.record, documents)
    return _Outcome(
        "updated" if prep.previous else "added",
        documents=len(documents),
        chunks=written,
        skipped=tuple(record_skips),
        source_path=source_path,
    )
