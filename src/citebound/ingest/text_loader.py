"""Plain-text and JSONL loaders.

JSONL (the BEIR corpus format and the usual export of other stores): one JSON object per
line with `_id` or `id`, `text`, optional `title` and optional `metadata` (an object). Only
`knowledge_type`, `equipment_id` and `event_date` are read from `metadata` (or the top level);
other metadata keys are ignored. A bad line is skipped with its line number and the rest of
the file is still ingested.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from citebound.contracts.ingest import ParsedDocument, SkippedFile, SkipReason
from citebound.errors import StageError
from citebound.ingest.limits import over_limit
from citebound.ingest.metadata import validate_metadata
from citebound.ingest.source import (
    SourceFile,
    decode_text,
    make_document,
    paragraph_blocks,
    record_knowledge_id,
    skip,
)

_RECORD_KEYS = ("knowledge_type", "equipment_id", "event_date")


def load_text(src: SourceFile) -> list[ParsedDocument]:
    """Load one plain-text file: blank-line separated paragraphs, no headings."""
    text = decode_text(src.raw)
    if not text.strip():
        raise skip(SkipReason.EMPTY, "file has no text")
    doc = make_document(src, text, title=src.path.stem, metadata={})
    return [ParsedDocument(document=doc, blocks=tuple(paragraph_blocks(text)))]


def _record(src: SourceFile, line: str) -> ParsedDocument:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as err:
        raise skip(SkipReason.BAD_RECORD, f"not valid JSON: {err.msg}") from None
    if not isinstance(obj, dict):
        raise skip(SkipReason.BAD_RECORD, "a line must be a JSON object")
    rid = obj.get("_id", obj.get("id"))
    if isinstance(rid, bool) or not isinstance(rid, str | int) or not str(rid).strip():
        raise skip(SkipReason.BAD_RECORD, "record has no `_id` or `id` (string or integer)")
    text, title = obj.get("text"), obj.get("title", "")
    if not isinstance(text, str) or not isinstance(title, str | None):
        raise skip(SkipReason.BAD_RECORD, "`text` and `title` must be strings")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise skip(SkipReason.EMPTY, f"record {rid} has empty text")
    nested = obj.get("metadata") or {}
    if not isinstance(nested, dict):
        raise skip(SkipReason.BAD_RECORD, "`metadata` must be an object")
    found: dict[str, str | None] = {}
    for key in _RECORD_KEYS:
        value = nested.get(key, obj.get(key))
        if value is not None and not isinstance(value, str):
            raise skip(SkipReason.BAD_RECORD, f"`{key}` must be a string")
        found[key] = value
    try:
        meta = validate_metadata(found, where=f"record {rid}")
    except StageError as err:
        raise skip(SkipReason.BAD_RECORD, str(err)) from None
    kid = record_knowledge_id(str(rid))  # ids are data: an odd one is escaped, never refused
    doc = make_document(src, text, title=title or str(rid), metadata=meta, knowledge_id=kid)
    return ParsedDocument(document=doc, blocks=tuple(paragraph_blocks(text)))


def iter_jsonl(src: SourceFile, on_skip: Callable[[SkippedFile], None]) -> list[ParsedDocument]:
    """Load every record; bad lines go to `on_skip` (with their 1-based line) and are left out.

    Duplicate ids inside the file keep the first record and skip the later ones.
    """
    text = decode_text(src.raw)
    if not text.strip():
        raise skip(SkipReason.EMPTY, "file has no records")
    out: list[ParsedDocument] = []
    seen: set[str] = set()
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            if len(line) > src.limits.max_record_chars:
                # Never parsed: one huge line is refused, the other records still ingest.
                raise over_limit(
                    "max_record_chars", f"the record is {len(line):,} characters",
                    src.limits.max_record_chars,
                )  # fmt: skip
            parsed = _record(src, line)
        except StageError as err:
            on_skip(
                SkippedFile(
                    source_path=src.source_path,
                    line=n,
                    reason=SkipReason(err.reason_code),
                    message=str(err),
                )
            )
            continue
        kid = parsed.document.knowledge_id
        if kid in seen:
            on_skip(
                SkippedFile(
                    source_path=src.source_path,
                    line=n,
                    reason=SkipReason.DUPLICATE_ID,
                    message=f"id {kid} already appears earlier in this file",
                )
            )
            continue
        seen.add(kid)
        out.append(parsed)
    if not out:
        raise skip(SkipReason.EMPTY, "no valid records in the file")
    return out
