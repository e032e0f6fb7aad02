"""Row mapping, naming rules and the index_version formula of the SQL stores (SQLite and
PostgreSQL write the same rows, so both hash them the same way; see sqlite.py)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from citebound.contracts.base import canonical_json, sha256_hex
from citebound.contracts.documents import Chunk, Document
from citebound.errors import ConfigError, ContractError

DEFAULT_ROOT = Path(".citebound")
ALL_SCOPE = "*"
_COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_collection_name(name: str) -> str:
    """Return `name` if it is a valid collection name (it names a directory), else raise.

    Raises:
        ConfigError: not 1-64 characters of letters, digits, `_`, `.`, `-` starting with a
            letter or digit.
    """
    if not _COLLECTION_NAME.fullmatch(name):
        raise ConfigError(
            f"invalid collection name {name!r}: use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit",
            field="collection",
        )
    return name


CHUNK_COLUMNS = (
    "c.chunk_id, c.knowledge_id, c.collection, c.text, c.chunk_index, c.heading_path, c.page, "
    "c.page_end, c.char_start, c.char_end, c.token_count, d.title, d.source_path, "
    "d.knowledge_type, d.equipment_id, d.event_date, c.ocr"
)
CHUNK_SELECT = f"SELECT {CHUNK_COLUMNS} FROM chunks c JOIN documents d USING (knowledge_id)"
DOC_SELECT = (
    "SELECT knowledge_id, source_path, title, text, content_sha256, knowledge_type, "
    "equipment_id, event_date, collection, page_offsets FROM documents"
)


def chunk_from_row(row: Sequence[Any]) -> Chunk:
    return Chunk(
        chunk_id=row[0],
        knowledge_id=row[1],
        collection=row[2],
        text=row[3],
        chunk_index=row[4],
        heading_path=tuple(json.loads(row[5])),
        page=row[6],
        page_end=row[7],
        char_start=row[8],
        char_end=row[9],
        token_count=row[10],
        title=row[11],
        source_path=row[12],
        knowledge_type=row[13],
        equipment_id=row[14],
        event_date=row[15],
        ocr=bool(row[16]),
    )


def document_from_row(row: Sequence[Any]) -> Document:
    return Document(
        knowledge_id=row[0],
        source_path=row[1],
        title=row[2],
        text=row[3],
        content_sha256=row[4],
        knowledge_type=row[5],
        equipment_id=row[6],
        event_date=row[7],
        collection=row[8],
        page_offsets=json.loads(row[9]),
    )


def chunk_rows(d: Document, chunks: Sequence[Chunk]) -> list[tuple[Any, ...]]:
    """The `chunks` table rows of `d`'s chunks (column order of the table), shared by every
    SQL store so row_sha256, and with it index_version, is the same on each.

    Raises:
        ContractError: a chunk belongs to another document or collection.
    """
    rows = []
    for c in chunks:
        if c.knowledge_id != d.knowledge_id or c.collection != d.collection:
            raise ContractError(
                f"chunk {c.chunk_id} belongs to {c.collection}/{c.knowledge_id}, "
                f"not {d.collection}/{d.knowledge_id}"
            )
        # What the store returns carries the document's metadata; hash exactly that.
        stored = c.model_copy(
            update={
                "title": d.title,
                "source_path": d.source_path,
                "knowledge_type": d.knowledge_type,
                "equipment_id": d.equipment_id,
                "event_date": d.event_date,
            }
        )
        rows.append(
            (
                c.chunk_id, c.knowledge_id, c.collection, c.chunk_index, c.text,
                json.dumps(list(c.heading_path), ensure_ascii=False), c.page, c.page_end,
                c.char_start, c.char_end, c.token_count, _row_sha256(stored),
                c.ocr,
            )
        )  # fmt: skip
    return rows


def _row_sha256(c: Chunk) -> str:
    # `mixed_script_words` is derived from the text, which is hashed already; `ocr` joined the
    # chunk in store migration 2 and is left out while false. Both keep row_sha256 (and
    # index_version) of stores written before they existed.
    exclude = {"mixed_script_words"} if c.ocr else {"mixed_script_words", "ocr"}
    return sha256_hex(canonical_json(c.model_dump(mode="json", exclude=exclude)))


def document_row(d: Document) -> tuple[Any, ...]:
    """The `documents` table row of `d` (column order of the table)."""
    return (
        d.knowledge_id, d.collection, d.source_path, d.title, d.text, d.content_sha256,
        d.knowledge_type, d.equipment_id, d.event_date, json.dumps(d.page_offsets),
    )  # fmt: skip


def index_version_of(model: str, scope: str, rows: Iterable[Sequence[Any]]) -> tuple[str, int]:
    """(index_version, chunk count) of `scope` from its (chunk_id, row_sha256) rows ordered
    by chunk_id: the formula in sqlite.py's module docstring, shared by both SQL stores."""
    h = hashlib.sha256(f"citebound-index-v1\n{model}\n{scope}\n".encode())
    count = 0
    for cid, row_sha in rows:
        h.update(f"{cid} {row_sha}\n".encode())
        count += 1
    return h.hexdigest()[:24], count
