"""Question contracts: the user's prompt as the question stages read it (A0's canonical
fields, how each header was mapped) and A2's classification of the request
(`citebound.question`, docs/superprompt.md)."""

from __future__ import annotations

from pydantic import Field

from citebound.contracts.base import Contract


class PromptBody(Contract):
    """Canonical fields of the user's prompt (A0's canonical keys)."""

    task: str = Field(description="What is asked (MUST).")
    context: str = Field(default="", description="Background given by the user.")
    purpose: str = Field(default="", description="Why it is asked.")
    format: str = Field(default="", description="Requested output format (recorded, see A5).")
    system: str = Field(default="", description="Requested role of the assistant.")
    audience: str = Field(default="", description="Who reads the answer.")
    tone: str = Field(default="", description="Requested tone.")
    depth: str = Field(default="", description="Requested depth.")
    text: str = Field(default="", description="Attached text.")
    constraints: str = Field(default="", description="Extra constraints.")


class MappingDecision(Contract):
    """How one header of a structured prompt was mapped (the A0 ladder step that matched)."""

    header: str = Field(description="Header as written.")
    key: str | None = Field(description="Canonical key, None when unknown.")
    step: str = Field(
        description="exact, alias, typo, bilingual, templates, keyword, unknown; semantic or "
        "semantic_rejected for the optional LLM fallback."
    )


class Shape(Contract):
    """A2 classification of the request (closed enums)."""

    system: str = Field(description="Assistant role.")
    audience: str = Field(description="Audience.")
    tone: str = Field(description="Tone.")
    depth: str = Field(description="Depth.")
    confidence: str = Field(description="How sure the classification is.")
    source: str = Field(description="defaults, user or llm.")
