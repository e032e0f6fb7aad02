"""What every loader shares: the file being loaded, stable ids, and block helpers.

Stable ids (a contract; changing them re-ids every stored document):

- file documents: ``knowledge_id = sha256(f"{collection}\\x00{source_path}").hexdigest()[:16]``
- JSONL records: ``knowledge_id`` is the record's ``_id`` (or ``id``) verbatim when it is a
  plain id (`record_knowledge_id`: letters, digits and ``_ . : @ + = , ~ -``, starting with a
  letter or digit, no ``..``, at most 128 characters), so evaluation labels (BEIR qrels) refer
  to the same ids. Any other id is data, not syntax: it is accepted and kept in an escaped form
  (``%XX`` per UTF-8 byte of every other character: ``a|b`` -> ``a%7Cb``,
  ``../etc`` -> ``%2E%2E%2Fetc``), which no bundle check, citation marker or URL path can
  misread; past 200 characters the form is cut and ends in ``~`` + 16 hex of its sha256.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from citebound.contracts.base import sha256_hex
from citebound.contracts.documents import Document
from citebound.contracts.ingest import Block, BlockKind, IngestLimits, SkipReason
from citebound.errors import StageError


@dataclass(frozen=True)
class SourceFile:
    """One file handed to a loader (internal to the ingest stage)."""

    path: Path
    source_path: str
    collection: str
    raw: bytes
    content_sha256: str
    metadata: dict[str, str] = field(default_factory=dict)
    limits: IngestLimits = field(default_factory=IngestLimits)


def skip(reason: SkipReason, message: str) -> StageError:
    """The error a loader raises to have its file skipped with `reason`."""
    return StageError(message, stage="ingest", reason_code=reason)


def file_knowledge_id(collection: str, source_path: str) -> str:
    """Stable id of a file document (see the module docstring)."""
    return sha256_hex(f"{collection}\x00{source_path}")[:16]


_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+=,~-]{0,127}")
_KEPT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_MAX_ESCAPED = 200


def record_knowledge_id(record_id: str) -> str:
    """The knowledge_id of a JSONL record whose id is `record_id` (see the module docstring).

    >>> [record_knowledge_id(i) for i in ("doc-1", "a|b", "../../etc/passwd", "x y")]
    ['doc-1', 'a%7Cb', '%2E%2E%2F%2E%2E%2Fetc%2Fpasswd', 'x%20y']
    """
    if _PLAIN_ID.fullmatch(record_id) and ".." not in record_id:
        return record_id
    escaped = "".join(
        ch if ch in _KEPT else "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        for ch in record_id
    )
    if len(escaped) <= _MAX_ESCAPED:
        return escaped
    return f"{escaped[:160]}~{sha256_hex(record_id.encode('utf-8', 'surrogatepass'))[:16]}"


def decode_text(raw: bytes) -> str:
    """Strict UTF-8 (BOM dropped), newlines normalised to `\\n`; binary content is CORRUPT."""
    if b"\x00" in raw:
        raise skip(SkipReason.CORRUPT, "file contains NUL bytes: binary data, not text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise skip(
            SkipReason.UNREADABLE,
            f"not valid UTF-8 at byte {err.start}; convert the file to UTF-8",
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def make_document(
    src: SourceFile,
    text: str,
    *,
    title: str,
    metadata: dict[str, str],
    knowledge_id: str | None = None,
    page_offsets: list[int] | None = None,
) -> Document:
    """Build the Document; sidecar metadata (src.metadata) overrides in-file metadata."""
    merged = {**metadata, **src.metadata}
    return Document(
        knowledge_id=knowledge_id or file_knowledge_id(src.collection, src.source_path),
        source_path=src.source_path,
        title=merged.get("title") or title or src.path.stem,
        text=text,
        content_sha256=src.content_sha256,
        knowledge_type=merged.get("knowledge_type", "document"),
        equipment_id=merged.get("equipment_id"),
        event_date=merged.get("event_date"),
        collection=src.collection,
        page_offsets=page_offsets or [],
    )


def trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink [start, end) to exclude surrounding whitespace; empty spans give start == end."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def block(
    text: str,
    kind: BlockKind,
    start: int,
    end: int,
    heading_path: tuple[str, ...] = (),
    page: int | None = None,
) -> Block | None:
    """A trimmed Block over text[start:end], or None when the span is only whitespace."""
    s, e = trimmed(text, start, end)
    if s == e:
        return None
    return Block(kind=kind, start=s, end=e, heading_path=heading_path, page=page)


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def paragraph_blocks(
    text: str,
    start: int = 0,
    end: int | None = None,
    heading_path: tuple[str, ...] = (),
    page: int | None = None,
) -> list[Block]:
    """Text blocks for the blank-line separated paragraphs of text[start:end]."""
    end = len(text) if end is None else end
    out: list[Block] = []
    pos = start
    for m in _PARAGRAPH_BREAK.finditer(text, start, end):
        b = block(text, "text", pos, m.start(), heading_path, page)
        if b is not None:
            out.append(b)
        pos = m.end()
    b = block(text, "text", pos, end, heading_path, page)
    if b is not None:
        out.append(b)
    return out
