"""`assemble_prompt`: retrieval packs -> system + user prompt with citation markers.

The user message is the question, then one context block per kept pack, then the marker line:

    <question>

    [¹]
    Doc: <docId>
    Path: A > B            (omitted when the pack has no heading path)
    ---
    <span text>

    <next span text>       (multi-span packs: neighbours of the hit)

    [²]
    ...

    You may reference [¹]…[²].

With no pack (none given, or none fits the budget) the user message is the question alone and
there are no citations. Budget (docs/assemble_prompt.md): packs are
added in order while everything they add to the user message is at most `headroom_tokens`
estimated tokens; the first pack that would exceed it stops the loop, so the dropped packs are
always the lowest-ranked ones. A lower headroom drops more packs; 100000 is effectively no
budget. Tokens are estimated as characters (one token each) unless another tokenizer is
named.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import ValidationError

from citebound.contracts.base import sha256_hex
from citebound.contracts.enums import CitationStyle
from citebound.contracts.packs import (
    AssembledPrompt,
    PackCitation,
    PromptMessages,
    RetrievalPack,
)
from citebound.errors import ContractError
from citebound.policy import load_policy
from citebound.prompt.anchors import CitationFormat, citation_format
from citebound.text.tokens import get_tokenizer

# Pack citation styles -> the project's marker formats ([¹] and [^1]).
PACK_CITATION_FORMATS: dict[str, CitationStyle] = {
    "numeric": CitationStyle.SUPERSCRIPT,
    "footnote": CitationStyle.FOOTNOTE,
}
PACK_STYLES = ("qa", "summarize")
TEMPLATE_VERSION = "v1"
REFERENCE_LINE = "You may reference {markers}."
RANGE_SEPARATOR = "…"  # the range form: "You may reference [¹]…[³]."
BLOCK_SEPARATOR = "\n\n"
SPAN_SEPARATOR = "\n\n"
PATH_SEPARATOR = " > "
DEFAULT_HEADROOM_TOKENS = 300  # tokens kept free for the answer
CHARS = "chars"


def char_estimate(text: str) -> int:
    """The packs' token estimator: one token per character (code point)."""
    return len(text)


@lru_cache(maxsize=4)
def load_system_template(style: str) -> tuple[str, str]:
    """(text, sha256) of the frozen system template of a style; pinned by a test."""
    name = f"assemble_{style}_{TEMPLATE_VERSION}.txt"
    data = resources.files("citebound.packs").joinpath("templates", name).read_bytes()
    return data.decode("utf-8"), sha256_hex(data)


@lru_cache(maxsize=1)
def _refusal() -> str:
    return load_policy().refusal.model_text


def _estimator(name: str | Callable[[str], int]) -> Callable[[str], int]:
    if callable(name):
        return name
    if name == CHARS:
        return char_estimate

    return get_tokenizer(name).count


def _coerce_packs(packs: Sequence[RetrievalPack | dict[str, Any]]) -> list[RetrievalPack]:
    out: list[RetrievalPack] = []
    for i, pack in enumerate(packs):
        if isinstance(pack, RetrievalPack):
            out.append(pack)
            continue
        try:
            out.append(RetrievalPack.model_validate(pack))
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ContractError(f"packs[{i}].{where}: {first['msg']}") from None
    return out


def order_packs(packs: Sequence[RetrievalPack]) -> list[RetrievalPack]:
    """Score descending, then retrieval order, then input position; the first of equal ids wins."""
    ranked = sorted(enumerate(packs), key=lambda ip: (-ip[1].score, ip[1].order, ip[0]))
    seen: set[str] = set()
    out: list[RetrievalPack] = []
    for _, pack in ranked:
        if pack.id not in seen:
            seen.add(pack.id)
            out.append(pack)
    return out


def render_block(pack: RetrievalPack, marker: str) -> str:
    """One context block: marker, Doc, optional Path, `---`, the spans' text."""
    lines = [marker, f"Doc: {pack.doc_id}"]
    path = [part for part in pack.heading_path if part.strip()]
    if path:
        lines.append("Path: " + PATH_SEPARATOR.join(path))
    lines.append("---")
    lines.append(SPAN_SEPARATOR.join(span.text for span in pack.spans))
    return "\n".join(lines)


def reference_line(fmt: CitationFormat, count: int) -> str:
    first = fmt.marker(fmt.label(0))
    if count == 1:
        return REFERENCE_LINE.format(markers=first)
    return REFERENCE_LINE.format(markers=first + RANGE_SEPARATOR + fmt.marker(fmt.label(count - 1)))


def render_user(question: str, blocks: Sequence[str], fmt: CitationFormat) -> str:
    if not blocks:
        return question
    return BLOCK_SEPARATOR.join([question, *blocks, reference_line(fmt, len(blocks))])


def assemble_prompt(
    question: str,
    packs: Sequence[RetrievalPack | dict[str, Any]],
    headroom_tokens: int = DEFAULT_HEADROOM_TOKENS,
    style: str = "qa",
    citation_style: str = "numeric",
    *,
    estimator: str | Callable[[str], int] = CHARS,
) -> AssembledPrompt:
    """Turn retrieval packs into a system + user prompt with citation markers.

    Args:
        question: The user's question or instruction (non-empty).
        packs: `RetrievalPack`s (or their JSON, camelCase or snake_case), any order.
        headroom_tokens: Most estimated tokens the context may add to the user message;
            lower drops more packs, 100000 is effectively no budget.
        style: `qa` or `summarize` (system instructions).
        citation_style: `numeric` -> `[¹]`, `[²]`; `footnote` -> `[^1]`, `[^2]`.
        estimator: `chars` (default) or a tokenizer name (`cl100k_base`, ...) or
            a function from text to token count.

    Raises:
        ContractError: empty question, unknown style, negative headroom, malformed pack.

    >>> from citebound.contracts.packs import PackSpan
    >>> pack = RetrievalPack(id="p1", doc_id="corpus:abc", heading_path=["Ch 3"], score=0.9,
    ...     spans=[PackSpan(chunk_id="p1", text="Torque is 40 Nm.", start=0, end=16)])
    >>> print(assemble_prompt("What torque?", [pack]).prompt.user)
    What torque?
    <BLANKLINE>
    [¹]
    Doc: corpus:abc
    Path: Ch 3
    ---
    Torque is 40 Nm.
    <BLANKLINE>
    You may reference [¹].
    """
    if not isinstance(question, str) or not question.strip():
        raise ContractError("question must be a non-empty string")
    if style not in PACK_STYLES:
        raise ContractError(f"style must be one of {list(PACK_STYLES)}, not {style!r}")
    if citation_style not in PACK_CITATION_FORMATS:
        raise ContractError(
            f"citation_style must be one of {list(PACK_CITATION_FORMATS)}, not {citation_style!r}"
        )
    if isinstance(headroom_tokens, bool) or not isinstance(headroom_tokens, int):
        raise ContractError("headroom_tokens must be an integer")
    if headroom_tokens < 0:
        raise ContractError(f"headroom_tokens must be >= 0, not {headroom_tokens}")
    count = _estimator(estimator)
    fmt = citation_format(PACK_CITATION_FORMATS[citation_style])
    template, _ = load_system_template(style)
    system = (
        template.rstrip("\n")
        .replace("{marker_example}", fmt.marker(fmt.label(0)))
        .replace("{refusal}", _refusal())
    )

    base = count(question)
    kept: list[RetrievalPack] = []
    blocks: list[str] = []
    for pack in order_packs(_coerce_packs(packs)):
        block = render_block(pack, fmt.marker(fmt.label(len(blocks))))
        if count(render_user(question, [*blocks, block], fmt)) - base > headroom_tokens:
            break  # stop before exceeding: every later pack ranks lower
        kept.append(pack)
        blocks.append(block)

    user = render_user(question, blocks, fmt)
    citations = [
        PackCitation(
            marker=fmt.marker(fmt.label(i)),
            pack_id=pack.id,
            doc_id=pack.doc_id,
            heading_path=list(pack.heading_path),
            span_offsets=[(span.start, span.end) for span in pack.spans],
        )
        for i, pack in enumerate(kept)
    ]
    return AssembledPrompt(
        prompt=PromptMessages(system=system, user=user),
        citations=citations,
        tokens_estimated=count(system) + count(user),
    )
