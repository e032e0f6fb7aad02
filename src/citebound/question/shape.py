"""A2 prompt shaper (docs/superprompt.md): closed-enum classification of the request.

Deterministic by default: user-given values that name an allowed enum are used, the rest take
defaults, and the decision is recorded. When `stages.llm_shape` is on, the configured provider
is asked for a JSON object; values outside the enums are clamped to defaults, and a
provider that cannot classify (the extractive answerer, an error, bad JSON) blocks the request
with a clear error instead of producing a half-configured shape.
"""

from __future__ import annotations

from citebound.contracts.question import PromptBody, Shape

ENUMS: dict[str, tuple[str, ...]] = {
    "system": ("documentation assistant", "maintenance advisor", "incident analyst"),
    "audience": ("engineer", "technician", "operator", "manager"),
    "tone": ("neutral", "formal", "concise"),
    "depth": ("brief", "standard", "detailed"),
    "confidence": ("low", "medium", "high"),
}
DEFAULT_SHAPE = {
    "system": "documentation assistant",
    "audience": "engineer",
    "tone": "neutral",
    "depth": "standard",
    "confidence": "high",
}


def _pick(field: str, value: str) -> str | None:
    v = " ".join(value.lower().split())
    return v if v in ENUMS[field] else None


def shape_deterministic(body: PromptBody) -> tuple[Shape, list[str]]:
    """Shape from the user's own fields, else defaults; returns the shape and notes."""
    chosen: dict[str, str] = {}
    notes: list[str] = []
    for field in ("system", "audience", "tone", "depth"):
        given = getattr(body, field)
        picked = _pick(field, given) if given else None
        if given and picked is None:
            notes.append(f"{field}={given!r} is not one of {ENUMS[field]}; default used")
        chosen[field] = picked or DEFAULT_SHAPE[field]
    source = (
        "user"
        if any(getattr(body, f) for f in ("system", "audience", "tone", "depth"))
        else "defaults"
    )
    return Shape(**chosen, confidence="high", source=source), notes


def shape_from_mapping(data: dict[str, object]) -> tuple[Shape, list[str]]:
    """Shape from an LLM chooser reply; values outside the enums are clamped to defaults."""
    chosen: dict[str, str] = {}
    notes: list[str] = []
    for field in ENUMS:
        value = data.get(field)
        picked = _pick(field, value) if isinstance(value, str) else None
        if picked is None:
            notes.append(f"{field}={value!r} clamped to {DEFAULT_SHAPE[field]!r}")
        chosen[field] = picked or DEFAULT_SHAPE[field]
    return Shape(**chosen, source="llm"), notes


def chooser_prompt(body: PromptBody) -> str:
    """The A2 chooser instruction sent to an LLM (closed enums, JSON only)."""
    options = "\n".join(f"- {k}: one of {', '.join(v)}" for k, v in ENUMS.items())
    return (
        "Classify the request below. Reply with one JSON object and nothing else, with keys:\n"
        f"{options}\n\nTASK: {body.task}\nCONTEXT: {body.context}\nPURPOSE: {body.purpose}\n"
    )
