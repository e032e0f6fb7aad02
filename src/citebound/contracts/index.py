"""Index manifest: what `update_indexes` built for one collection (`manifest.json`)."""

from __future__ import annotations

from pydantic import Field

from citebound.contracts.base import Contract

INDEX_FORMAT = "citebound-index-v1"


class IndexRow(Contract):
    """Per-row metadata kept next to the vectors so filters apply before scoring."""

    chunk_id: str = Field(description="Chunk id; rows are sorted by it.")
    knowledge_id: str = Field(description="Document id.")
    knowledge_type: str = Field(description="Knowledge type of the chunk.")
    equipment_id: str | None = Field(default=None, description="Equipment id, if any.")
    event_date: str | None = Field(default=None, description="ISO date, if any.")


class IndexManifest(Contract):
    """Identity of a built index; `index_version` is recorded in every RetrievalBundle."""

    format: str = Field(default=INDEX_FORMAT, description="On-disk layout version.")
    collection: str = Field(description="Collection indexed.")
    index_version: str = Field(description="Hash of format, corpus, embedding model, analyzer.")
    store_version: str = Field(description="store.index_version(collection) at build time.")
    embedding_model: str = Field(description="Embedding model name.")
    embedding_dim: int = Field(ge=0, description="Vector dimension.")
    lexical_analyzer: str = Field(description="tantivy analyzer: en_stem or default.")
    num_chunks: int = Field(ge=0, description="Rows in both indexes.")
    embedded_new: int = Field(ge=0, description="Vectors computed in the last update.")
    embedded_reused: int = Field(ge=0, description="Vectors reused from the cache.")
