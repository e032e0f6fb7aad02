"""Ingestion contracts: chunker settings, parsed blocks, and the report of one ingest run."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field, model_validator

from citebound.contracts.base import Contract
from citebound.contracts.documents import Document


class SkipReason(StrEnum):
    """Why a file (or one JSONL record) was not ingested. Values are the serialized names."""

    EMPTY = "EMPTY"
    ENCRYPTED = "ENCRYPTED"
    CORRUPT = "CORRUPT"
    UNREADABLE = "UNREADABLE"
    UNSUPPORTED_TYPE = "UNSUPPORTED_TYPE"
    BAD_METADATA = "BAD_METADATA"
    BAD_RECORD = "BAD_RECORD"
    DUPLICATE_ID = "DUPLICATE_ID"
    OUTSIDE_ROOT = "OUTSIDE_ROOT"  # a symlink that leaves the ingested folder (not followed)
    NO_TEXT = "NO_TEXT"  # PDF pages without a text layer, not indexed (the rest of it is)
    OVER_LIMIT = "OVER_LIMIT"  # over an `[ingest]` limit (size, pages, time, memory)
    HIDDEN = "HIDDEN"  # a document whose name starts with '.', never read (listed, #34)


BlockKind = Literal["heading", "text", "code", "table_row"]


class Block(Contract):
    """A span of `Document.text` a loader recognised; the chunker's input unit.

    `code` and `table_row` blocks are atomic: the chunker never splits inside them.
    """

    kind: BlockKind = Field(description="heading, text, code (fenced/pre) or table_row.")
    start: int = Field(ge=0, description="Start offset in Document.text.")
    end: int = Field(ge=0, description="End offset (exclusive) in Document.text.")
    heading_path: tuple[str, ...] = Field(
        default=(), description="Heading hierarchy in force at this block (includes itself)."
    )
    page: int | None = Field(default=None, description="1-based page of paged sources.")


class ParsedDocument(Contract):
    """What a loader returns: the document and its blocks in reading order."""

    document: Document = Field(description="The loaded document.")
    blocks: tuple[Block, ...] = Field(description="Blocks ordered by start offset.")
    ocr_pages: tuple[int, ...] = Field(
        default=(), description="1-based pages whose text OCR read (scanned PDF pages)."
    )


class ChunkerConfig(Contract):
    """Chunk sizing. Sizes are tokens of `tokenizer` (a `citebound.text.get_tokenizer` name)."""

    chunk_tokens: int = Field(default=200, ge=16, le=8192, description="Target chunk size.")
    overlap_tokens: int = Field(
        default=30, ge=0, description="Tokens of whole sentences/rows repeated between chunks."
    )
    tokenizer: str = Field(default="cl100k_base", description="Tokenizer used to count tokens.")

    @model_validator(mode="after")
    def _overlap_below_half(self) -> ChunkerConfig:
        if self.overlap_tokens * 2 > self.chunk_tokens:
            raise ValueError(
                f"overlap_tokens ({self.overlap_tokens}) must be at most half of "
                f"chunk_tokens ({self.chunk_tokens})"
            )
        return self


WorkerMode = Literal["auto", "always", "never"]


class IngestLimits(Contract):
    """`[ingest]` of citebound.toml: per-file bounds, checked before and during the work.

    A file over one is refused (`OVER_LIMIT`, one line naming the limit and how to raise it)
    and the rest of the folder ingests. The defaults are far above any real manual.
    """

    max_file_bytes: int = Field(
        default=268_435_456, ge=1, description="Bytes of one file (checked before reading it)."
    )
    max_pdf_pages: int = Field(
        default=10_000, ge=1, description="Pages of one PDF (checked before extracting text)."
    )
    max_pdf_decompressed_bytes: int = Field(
        default=268_435_456,
        ge=1,
        description="Decompressed content-stream bytes one PDF's pages may hold in all (a "
        "stream shared by N pages counts N times: text extraction reads it N times).",
    )
    max_record_chars: int = Field(
        default=1_000_000, ge=1, description="Characters of one JSONL line (before parsing it)."
    )
    max_document_chars: int = Field(
        default=50_000_000, ge=1, description="Characters of one document's text."
    )
    max_chunks_per_document: int = Field(
        default=100_000, ge=1, description="Chunks one document may make."
    )
    max_seconds_per_file: float = Field(
        default=300.0, gt=0, description="Wall time to load and chunk one file in the worker."
    )
    max_worker_memory_mb: int = Field(
        default=4096,
        ge=0,
        description="Address space of the parsing worker process (RLIMIT_AS); 0 = no limit.",
    )
    worker: WorkerMode = Field(
        default="auto",
        description="Where files are parsed: auto = PDFs, Office files and files over 32 KiB "
        "in a worker process that is killed past the time or memory limit, small text files "
        "in-process; always = every file in the worker; never = in-process (no time or "
        "memory bound).",
    )


class SkippedFile(Contract):
    """A file or record that was not ingested, and why."""

    source_path: str = Field(description="Source path of the file.")
    line: int | None = Field(default=None, description="1-based line of a JSONL record.")
    reason: SkipReason = Field(description="Reason code.")
    message: str = Field(description="What went wrong, in words a person can act on.")


IndexStatus = Literal["updated", "unavailable", "failed"]


class IngestReport(Contract):
    """Outcome of `ingest_paths`: counts, skipped files with reasons, and the index version."""

    collection: str = Field(description="Collection ingested into.")
    roots: list[str] = Field(description="Paths given, resolved, in sorted order.")
    files_seen: int = Field(description="Supported files found under the roots.")
    files_added: int = Field(description="Files new to the store.")
    files_updated: int = Field(description="Files whose content or metadata changed.")
    files_unchanged: int = Field(description="Files skipped because nothing changed.")
    files_deleted: int = Field(description="Stored files no longer present under a root.")
    files_ignored: int = Field(default=0, description="Files with unsupported extensions.")
    skipped: list[SkippedFile] = Field(default_factory=list, description="Skipped, with reasons.")
    documents_written: int = Field(description="Documents inserted or replaced.")
    chunks_written: int = Field(description="Chunks inserted or replaced.")
    chunks_total: int = Field(description="Chunks in the collection after the run.")
    index_version: str = Field(description="Store index_version of the collection after the run.")
    index_status: IndexStatus = Field(
        description="updated: index hook ran; unavailable: no index module; failed: it raised."
    )
    index_message: str | None = Field(default=None, description="Why the index hook failed.")
    search_index_version: str | None = Field(
        default=None,
        description="index_version of the search indexes the hook built (`idx-...`, what every "
        "RetrievalBundle records); None when the hook did not run or failed.",
    )
    seconds: float = Field(description="Wall time of the run.")

    @property
    def files_skipped(self) -> int:
        """Number of distinct files with at least one skip entry."""
        return len({s.source_path for s in self.skipped})


class SourceRecord(Contract):
    """One ingested file as the store tracks it for incremental ingest."""

    collection: str = Field(description="Collection name.")
    source_path: str = Field(description="Path as ingested (see Document.source_path).")
    content_sha256: str = Field(description="sha256 of the file bytes.")
    meta_sha256: str = Field(
        default="", description="sha256 of ingest version + chunker settings + sidecar bytes."
    )
    documents: int = Field(default=0, description="Documents stored from this file.")
    chunks: int = Field(default=0, description="Chunks stored from this file.")
