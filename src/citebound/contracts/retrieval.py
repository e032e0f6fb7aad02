"""Retrieval bundle: the input contract of answer assembly (R2 input)."""

from __future__ import annotations

from pydantic import AliasChoices, Field, StrictInt, model_validator

from citebound.contracts.base import Contract, JsonBool, JsonFloat, JsonInt
from citebound.contracts.enums import RetrievalStatus


def display_path(document: str | None, heading_path: tuple[str, ...] | list[str]) -> list[str]:
    """Heading path for display: a first heading that repeats the document title is dropped
    (Markdown files usually open with `# <title>`)."""
    path = list(heading_path)
    if path and document and path[0].strip() == document.strip():
        path = path[1:]
    return path


def page_label(source_path: str | None, page: int, page_end: int | None = None) -> str:
    """`p. 4` / `pp. 4-5`; a PowerPoint file's pages are its slides: `slide 4` / `slides 4-5`."""
    slides = (source_path or "").lower().endswith(".pptx")
    if page_end is not None and page_end != page:
        return f"{'slides' if slides else 'pp.'} {page}-{page_end}"
    return f"{'slide' if slides else 'p.'} {page}"


class SourceRef(Contract):
    """Where a chunk comes from; what citations show (docs/validation.md#public-response)."""

    document: str = Field(description="Document name shown to people, e.g. the file name or title.")
    source_path: str | None = Field(
        default=None, description="Path of the source file as ingested."
    )
    heading_path: tuple[str, ...] = Field(
        default=(), description="Heading hierarchy from the document root down to the chunk."
    )
    page: JsonInt | None = Field(
        default=None, description="First page (1-based) for paged sources."
    )
    page_end: JsonInt | None = Field(
        default=None, description="Last page when a chunk spans pages."
    )
    chunk_index: JsonInt | None = Field(
        default=None, description="Position of the chunk in its document."
    )
    char_start: JsonInt | None = Field(
        default=None, description="Start offset in the extracted text."
    )
    char_end: JsonInt | None = Field(
        default=None, description="End offset (exclusive) in the extracted text."
    )
    ocr: JsonBool = Field(
        default=False, description="The chunk's text was read by OCR from a scanned page."
    )

    def reference(self) -> str:
        """Human reference `Document > Heading > Sub, p. 4` used in prompts and citations."""
        parts = [self.document, *display_path(self.document, self.heading_path)]
        ref = " > ".join(p for p in parts if p)
        if self.page is not None:
            ref += ", " + page_label(self.source_path, self.page, self.page_end)
        if self.ocr:
            ref += " (OCR)"
        return ref


class DateRange(Contract):
    # `format: date` (RFC 3339 full-date, YYYY-MM-DD) is what compile_filters accepts: the
    # OpenAPI says so; the check itself stays in compile_filters (a 400 that names the filter).
    start: str | None = Field(
        default=None,
        description="Inclusive ISO date (YYYY-MM-DD).",
        json_schema_extra={"format": "date"},
    )
    end: str | None = Field(
        default=None,
        description="Inclusive ISO date (YYYY-MM-DD).",
        json_schema_extra={"format": "date"},
    )


class FiltersApplied(Contract):
    """Filters retrieval applied; assembly re-checks rows against them."""

    equipment_id: str | None = Field(default=None, description="Only rows of this equipment.")
    knowledge_type: str | None = Field(default=None, description="Only rows of this type.")
    date_range: DateRange | None = Field(default=None, description="event_date range.")
    collection: str | None = Field(default=None, description="Collection searched.")


def _check_held(*counts: tuple[int | None, int | None]) -> None:
    """One rule for `GateMeasures` and `GateTrace`: a row holds no more terms (each pair's
    first) than the question has (its second); an unmeasured count (None) is not checked."""
    for held, total in counts:
        if held is not None and total is not None and held > total:
            raise ValueError("a row cannot hold more terms than the question has")


class GateMeasures(Contract):
    """What the gate weighs besides the similarities (`citebound.gate.measures.top_coverage`),
    counted, never rebuilt from a ratio: the question's key terms and its framing terms ("In
    which *year*", "*typically*": they count when held, never required), how many of each the
    top-similarity row holds, and how many of its names no ranked row holds."""

    key_terms: JsonInt = Field(ge=0, description="How many key terms the question has.")
    key_terms_held: JsonInt = Field(
        ge=0, description="How many of them the top-similarity row holds (headings included)."
    )
    framing_terms: JsonInt = Field(
        default=0, ge=0, description="How many framing terms the question has besides them."
    )
    framing_held: JsonInt = Field(
        default=0, ge=0, description="How many of those the top-similarity row holds."
    )
    names_unfound: JsonInt = Field(
        ge=0, description="How many of the question's names and numbers no ranked row holds."
    )
    rarity_held: JsonFloat | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Share of the question's key terms, each weighted by its idf in the "
        "collection, that the top-similarity row holds (None: not measured).",
    )

    @property
    def held(self) -> int:
        """Terms the best row holds, framing ones included."""
        return self.key_terms_held + self.framing_held

    @property
    def asked(self) -> int:
        """Terms the question asks with, framing ones included (what `covered_min_terms`
        counts: "In which year did the pump fail?" has three, as before framing was known)."""
        return self.key_terms + self.framing_terms

    @property
    def counted(self) -> int:
        """Terms the coverage counts: the key terms and the framing terms the row holds."""
        return self.key_terms + self.framing_held

    @property
    def coverage(self) -> float | None:
        """Share of the question's terms the best row holds, a framing term counted only when
        held; None when the question has no key term."""
        if not self.key_terms:
            return None
        return self.held / self.counted

    @property
    def full_coverage(self) -> float | None:
        """Share of all the question's terms the best row holds, framing ones counted whether
        held or not (the share before framing words were known); None without key terms."""
        if not self.key_terms:
            return None
        return self.held / self.asked

    @model_validator(mode="after")
    def _held_within(self) -> GateMeasures:
        _check_held((self.key_terms_held, self.key_terms), (self.framing_held, self.framing_terms))
        return self


class GateTrace(Contract):
    """The retrieval gate's decision and the numbers behind it (docs/gate.md)."""

    passed: JsonBool = Field(description="True when the evidence is sufficient to call an LLM.")
    reason_code: str | None = Field(default=None, description="Why the gate refused, if it did.")
    max_similarity: JsonFloat | None = Field(default=None, description="Top calibrated similarity.")
    min_score: JsonFloat = Field(description="Threshold the top similarity had to reach.")
    min_chunks: JsonInt = Field(description="How many rows had to reach min_score.")
    chunks_above_min_score: JsonInt = Field(description="How many rows reached min_score.")
    coverage: JsonFloat | None = Field(
        default=None,
        description="Share of the question's key terms in the top-similarity row (None: not "
        "measured, or the question has no key terms).",
    )
    key_terms: JsonInt | None = Field(
        default=None, ge=0, description="How many key terms the question has (None: not measured)."
    )
    names_unfound: JsonInt | None = Field(
        default=None,
        ge=0,
        description="How many of the question's names and numbers no ranked row holds "
        "(None: not measured).",
    )
    key_terms_held: JsonInt | None = Field(
        default=None,
        ge=0,
        description="How many of the key terms the top-similarity row holds (None: not measured).",
    )
    framing_terms: JsonInt | None = Field(
        default=None,
        ge=0,
        description="How many framing terms ('In which year', 'typically') the question has "
        "besides its key terms (None: not measured).",
    )
    framing_held: JsonInt | None = Field(
        default=None,
        ge=0,
        description="How many of them the top-similarity row holds (None: not measured).",
    )
    rarity_held: JsonFloat | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Share of the question's key terms, each weighted by its idf in the "
        "collection, that the top-similarity row holds (None: not measured).",
    )

    @model_validator(mode="after")
    def _held_within(self) -> GateTrace:
        _check_held((self.key_terms_held, self.key_terms), (self.framing_held, self.framing_terms))
        return self

    @property
    def measures(self) -> GateMeasures | None:
        """The term measures the decision weighed, for assembly to apply the same passes; None
        when not measured, the question has no key terms, or the trace predates the held count
        (assembly then measures again)."""
        if self.coverage is None or self.key_terms is None or self.key_terms_held is None:
            return None
        return GateMeasures(
            key_terms=self.key_terms,
            key_terms_held=self.key_terms_held,
            framing_terms=self.framing_terms or 0,
            framing_held=self.framing_held or 0,
            names_unfound=self.names_unfound or 0,
            rarity_held=self.rarity_held,
        )


class RetrievalRow(Contract):
    """One ranked retrieval result. `similarity` also accepts the older name `similarity_score`."""

    chunk_id: str = Field(description="Stable id of the chunk (content hash).")
    knowledge_id: str = Field(description="Id of the document (knowledge item) the chunk is from.")
    rank: StrictInt = Field(description="0-based rank; unique, first rank 0.")
    similarity: JsonFloat = Field(
        strict=True,
        validation_alias=AliasChoices("similarity", "similarity_score"),
        description="Calibrated similarity in [0, 1]. Also accepted as `similarity_score`.",
    )
    chunk_text: str = Field(description="Chunk text as stored; sanitized by assembly.")
    knowledge_type_effective: str = Field(description="Knowledge type after defaults.")
    equipment_id: str | None = Field(default=None, description="Equipment the chunk is about.")
    event_date: str | None = Field(default=None, description="ISO date of the event/revision.")
    faiss_id: JsonInt | None = Field(default=None, description="Vector index row id, if any.")
    source: SourceRef | None = Field(default=None, description="Citation metadata.")


class RetrievalBundle(Contract):
    """What retrieval hands to assembly (the R2 input schema)."""

    request_id: str = Field(min_length=1, description="Request id, propagated to every record.")
    user_question: str = Field(description="The raw user question.")
    retrieval_status: RetrievalStatus = Field(description="SUCCESS, NO_EVIDENCE or FAILED.")
    index_version: str = Field(min_length=1, description="Version of the index searched.")
    embedding_model: str = Field(min_length=1, description="Embedding model name.")
    top_k: StrictInt = Field(ge=0, description="How many rows retrieval was asked for.")
    results: list[RetrievalRow] = Field(description="Ranked rows.")
    run_id: str | None = Field(default=None, description="Batch/run id, recommended.")
    retrieval_latency_ms: JsonFloat | None = Field(default=None, description="Retrieval time.")
    filters_applied: FiltersApplied | None = Field(default=None, description="Filters applied.")
    gate: GateTrace | None = Field(default=None, description="Retrieval gate decision, if run.")
    error: str | None = Field(default=None, description="FAILED only: what went wrong, what to do.")
    reranker: str | None = Field(
        default=None,
        description="Reranker that ordered the first N2 candidates (`passthrough` = none); "
        "None when the producer did not say.",
    )
