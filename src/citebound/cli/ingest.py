"""`citebound ingest PATH...` and `citebound documents list`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click
from pydantic import ValidationError

from citebound.cli._common import (
    EXIT_FAILED,
    collection_option,
    config_option,
    database_option,
    fail,
    resolve_database,
    resolve_store,
    store_option,
    to_json,
)
from citebound.contracts.ingest import ChunkerConfig, IngestReport
from citebound.errors import CiteboundError
from citebound.store.open import open_store

if TYPE_CHECKING:
    from citebound.store.open import ClosableStore


def _open_store(store_dir: Path, database: str = "") -> ClosableStore:
    try:
        return open_store(store_dir, database=database)
    except CiteboundError as err:
        fail(str(err))


def render_report(report: IngestReport) -> str:
    """The human summary printed by `citebound ingest`."""
    lines = [
        f"collection {report.collection}: {report.files_seen} files "
        f"({report.files_added} added, {report.files_updated} updated, "
        f"{report.files_unchanged} unchanged, {report.files_deleted} deleted, "
        f"{report.files_skipped} skipped, {report.files_ignored} ignored)",
        f"chunks: {report.chunks_written} written, {report.chunks_total} in collection; "
        f"{report.documents_written} documents written in {report.seconds:.1f}s",
        f"index_version {report.index_version}; index {report.index_status}",
    ]
    if report.index_message:
        lines[-1] += f": {report.index_message}"
    if report.search_index_version:
        lines[-1] += f" (search index {report.search_index_version}, recorded in every answer)"
    if report.skipped:
        lines.append("skipped:")
        for s in report.skipped:
            where = f"{s.source_path}:{s.line}" if s.line is not None else s.source_path
            lines.append(f"  {where}  {s.reason.value}  {s.message}")
    return "\n".join(lines)


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@collection_option
@store_option
@click.option("--chunk-tokens", type=int, default=200, show_default=True,
              help="Target chunk size in cl100k_base tokens.")  # fmt: skip
@click.option("--overlap", type=int, default=30, show_default=True,
              help="Tokens of whole sentences repeated between consecutive chunks.")  # fmt: skip
@click.option("--include", multiple=True, metavar="GLOB",
              help="Only read files matching GLOB (repeatable; e.g. '*.md').")  # fmt: skip
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="Leave out files or folders matching GLOB (repeatable), after the "
                   "folder's .citeboundignore.")  # fmt: skip
@click.option("--no-progress", is_flag=True, help="Never show the progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print the IngestReport as JSON.")
@config_option
@database_option
def ingest_command(
    paths: tuple[Path, ...],
    collection: str | None,
    store_dir: Path | None,
    database: str | None,
    chunk_tokens: int,
    overlap: int,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    no_progress: bool,
    as_json: bool,
    config_file: str | None,
) -> None:
    """Ingest files and folders (Markdown, text, HTML, PDF, JSONL; Word, Excel and
    PowerPoint with the office extra) into the store.

    --include / --exclude take .gitignore-style globs; a .citeboundignore file at the top of
    a folder is read the same way.

    Incremental: unchanged files are skipped, changed files re-chunked, files deleted under a
    given folder are removed. Exit 0 on success (skipped files are listed, not fatal), 2 on a
    usage error or when the index could not be updated.

    A file over an [ingest] limit of the config (bytes, PDF pages, characters, chunks, time)
    is skipped as OVER_LIMIT with the limit to raise; the rest ingests. The store and the
    collection default to the config's, as for `ask`.
    """
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise click.UsageError(f"path does not exist: {', '.join(missing)}")
    try:
        config = ChunkerConfig(chunk_tokens=chunk_tokens, overlap_tokens=overlap)
    except ValidationError as err:
        problems = "; ".join(e["msg"] for e in err.errors())
        raise click.UsageError(f"bad chunk settings: {problems}") from None
    # Lazy: the config and the loaders (markdown-it, multiprocessing) cost ~60-85 ms each (python
    # -X importtime), not paid by `citebound ingest --help`.
    from citebound.config import load_config
    from citebound.ingest.pipeline import ingest_paths

    try:
        settings = load_config(config_file)
    except CiteboundError as err:
        fail(str(err))
    store = _open_store(store_dir or settings.store_path, resolve_database(database))
    try:
        report = ingest_paths(
            store,
            list(paths),
            collection=collection or settings.collection,
            config=config,
            progress=False if no_progress or as_json else None,
            include=include,
            exclude=exclude,
            limits=settings.ingest,
        )
    except CiteboundError as err:
        fail(str(err))
    finally:
        store.close()
    click.echo(to_json(report) if as_json else render_report(report))
    if report.index_status == "failed":
        raise SystemExit(EXIT_FAILED)
    if report.files_seen == 0 and report.files_deleted == 0 and not report.skipped:
        fail(_nothing_found(paths, report.files_ignored))


def _nothing_found(paths: tuple[Path, ...], ignored: int) -> str:
    """One line for an ingest that found no document to read (exit 2, not a silent success)."""
    from citebound.ingest.loaders import JSONL_SUFFIXES, LOADERS

    where = ", ".join(str(p) for p in paths)
    supported = " ".join(sorted([*LOADERS, *JSONL_SUFFIXES]))
    if ignored:
        kinds = sorted(
            {f.suffix.lower() or f.name for p in paths if p.is_dir() for f in p.rglob("*")
             if f.is_file() and not f.name.startswith(".")}
            | {p.suffix.lower() or p.name for p in paths if p.is_file()}
        )  # fmt: skip
        return (
            f"no supported document in {where}: {ignored} file(s) of unsupported type "
            f"({' '.join(kinds[:8])}) ignored; supported: {supported}"
        )
    return f"no files in {where}: nothing to ingest (supported: {supported})"


@click.group("documents")
def documents_group() -> None:
    """Inspect stored documents."""


@documents_group.command("list")
@store_option
# Not the shared --collection: a filter, and without it every collection is listed.
@click.option("--collection", default=None, help="Only this collection (default: all).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@database_option
def list_documents(
    store_dir: Path | None, collection: str | None, as_json: bool, database: str | None
) -> None:
    """List documents (tab-separated): knowledge_id, collection, source path, title."""
    url = resolve_database(database)
    store_dir = resolve_store(store_dir)
    if not url and not (store_dir / "store.sqlite").is_file():
        fail(f"no store at {store_dir} (run `citebound ingest` first)")
    store = _open_store(store_dir, url)
    try:
        names = [collection] if collection else store.collections()
        for name in names:
            for doc in store.list_documents(name):
                row = {
                    "knowledge_id": doc.knowledge_id,
                    "collection": doc.collection,
                    "source_path": doc.source_path,
                    "title": doc.title,
                    "pages": len(doc.page_offsets),
                }
                if as_json:
                    click.echo(json.dumps(row, ensure_ascii=False, sort_keys=True))
                else:
                    click.echo(
                        f"{doc.knowledge_id}\t{doc.collection}\t{doc.source_path}\t{doc.title}"
                    )
    finally:
        store.close()


COMMANDS = [ingest_command, documents_group]
