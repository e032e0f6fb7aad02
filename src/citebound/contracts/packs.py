"""Pack contracts (docs/assemble_prompt.md): retrieval packs and the assembled prompt.

Python names are snake_case; JSON uses camelCase through aliases
(`model_dump(by_alias=True)`, and every API response). Both spellings are accepted as input.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictInt, field_validator, model_validator

from citebound.contracts.base import Contract, JsonBool, JsonFloat

PackCitationStyle = Literal["numeric", "footnote"]
PackPromptStyle = Literal["qa", "summarize"]
PackRank = Literal["hybrid", "bm25", "dense"]


class PackSpan(Contract):
    """One contiguous excerpt of a document inside a pack (the hit or one of its neighbours)."""

    chunk_id: str = Field(alias="chunkId", min_length=1, description="Chunk the text is from.")
    text: str = Field(description="Chunk text exactly as stored (Unicode kept as ingested).")
    start: StrictInt = Field(ge=0, description="Start offset of the chunk in its document text.")
    end: StrictInt = Field(ge=0, description="End offset (exclusive) in the document text.")
    hit: JsonBool = Field(
        default=True, description="True for the retrieved hit, False for an added neighbour."
    )

    @model_validator(mode="after")
    def _ordered(self) -> PackSpan:
        if self.end < self.start:
            raise ValueError(f"span end {self.end} is before its start {self.start}")
        return self


class RetrievalPack(Contract):
    """A retrieved hit with its neighbours from the same document (a `RetrievalPack`)."""

    id: str = Field(min_length=1, description="Pack id (the chunk id of the hit).")
    doc_id: str = Field(alias="docId", min_length=1, description="Document (knowledge) id.")
    heading_path: list[str] = Field(
        alias="headingPath",
        default_factory=list,
        description="Section path of the hit; null is read as [].",
        json_schema_extra={"type": ["array", "null"]},  # what _no_path accepts, said
    )
    spans: list[PackSpan] = Field(
        min_length=1, description="Excerpts in document order; neighbours are extra spans."
    )
    score: JsonFloat = Field(description="Retrieval score of the hit (calibrated similarity).")
    order: StrictInt = Field(
        default=0, ge=0, description="Retrieval order (0 = first); ties on score keep it."
    )

    @field_validator("heading_path", mode="before")
    @classmethod
    def _no_path(cls, value: object) -> object:
        return [] if value is None else value  # a missing heading path is allowed


class PromptMessages(Contract):
    """The two messages of an assembled prompt."""

    system: str = Field(description="System instructions for the model.")
    user: str = Field(description="User message: question, context blocks, marker line.")


class PackCitation(Contract):
    """What a marker in the prompt refers to."""

    marker: str = Field(description="Marker as written in the prompt, e.g. `[¹]` or `[^1]`.")
    pack_id: str = Field(alias="packId", description="Pack this marker refers to.")
    doc_id: str = Field(alias="docId", description="Document id of the pack.")
    heading_path: list[str] = Field(alias="headingPath", description="Section path of the pack.")
    span_offsets: list[tuple[int, int]] = Field(
        alias="spanOffsets", description="(start, end) document offsets of the pack's spans."
    )


class AssembledPrompt(Contract):
    """`AssembledPrompt`: exact keys `prompt`, `citations`, `tokensEstimated`."""

    prompt: PromptMessages = Field(description="System and user messages.")
    citations: list[PackCitation] = Field(description="One per context block, in prompt order.")
    tokens_estimated: StrictInt = Field(
        alias="tokensEstimated", ge=0, description="Estimated tokens of system + user."
    )
