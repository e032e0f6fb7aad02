"""Ingestion contracts: a loaded document and its chunks."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from citebound.contracts.base import Contract
from citebound.text.confusables import mixed_script_words


class Document(Contract):
    """A loaded source document (issue: ingestion)."""

    knowledge_id: str = Field(description="Stable id: derived from collection + source path or id.")
    source_path: str = Field(description="Path as ingested (relative to the ingest root).")
    title: str = Field(description="Title: front matter, first heading or file name.")
    text: str = Field(description="Extracted plain text (Markdown kept as source).")
    content_sha256: str = Field(description="sha256 of the raw file bytes.")
    knowledge_type: str = Field(default="document", description="Knowledge type.")
    equipment_id: str | None = Field(default=None, description="Equipment id.")
    event_date: str | None = Field(default=None, description="ISO date.")
    collection: str = Field(default="default", description="Collection name.")
    page_offsets: list[int] = Field(
        default_factory=list, description="For paged sources: char offset where each page starts."
    )


class Chunk(Contract):
    """An immutable chunk of a document; chunk_id is a content hash."""

    chunk_id: str = Field(description="Content hash of knowledge_id + text + position.")
    knowledge_id: str = Field(description="Document id.")
    collection: str = Field(default="default", description="Collection name.")
    text: str = Field(description="Chunk text.")
    chunk_index: int = Field(description="Position within the document.")
    heading_path: tuple[str, ...] = Field(default=(), description="Heading hierarchy.")
    page: int | None = Field(default=None, description="First page.")
    page_end: int | None = Field(default=None, description="Last page.")
    char_start: int = Field(description="Start offset in Document.text.")
    char_end: int = Field(description="End offset (exclusive) in Document.text.")
    token_count: int = Field(description="Tokens in text.")
    title: str = Field(default="", description="Document title.")
    source_path: str = Field(default="", description="Document path.")
    knowledge_type: str = Field(default="document", description="Knowledge type.")
    equipment_id: str | None = Field(default=None, description="Equipment id.")
    event_date: str | None = Field(default=None, description="ISO date.")
    ocr: bool = Field(
        default=False,
        description="The text was read by OCR from a page with no text layer (extra `ocr`).",
    )
    mixed_script_words: tuple[str, ...] = Field(
        default=(),
        description="Words of the text that mix letters of several scripts (a Cyrillic `о` in "
        "'Ignоre'): look-alike letters, flagged; always derived from `text`, never supplied.",
    )

    @model_validator(mode="before")
    @classmethod
    def _derive_flags(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("text"), str):
            return {**data, "mixed_script_words": mixed_script_words(data["text"])}
        return data
