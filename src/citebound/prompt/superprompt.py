"""Prompt contract `superprompt-v1` (docs/superprompt.md): System_MD, Prompt_MD, S_CTX_MD,
Attachments_MD and the optional Recent Conversation block, in that order, exact bytes.

- System_MD: role, audience, tone and depth (A2 shape), grounding rules, the refusal line and
  the output format rules (A5).
- Prompt_MD: the canonical fields of the request (task, purpose, context, audience, format).
- S_CTX_MD: the condensed view (A4): orientation only, never cited, no markers.
- Attachments_MD: the selected evidence verbatim, one fenced block per attachment with its
  marker, `SOURCE:` and `SPAN:` lines. Anchors and the AnswerBundle are those of V1, so the
  validator checks a superprompt answer exactly as it checks a V1 answer.
- Recent Conversation (only with history): the last ≤ N4 turn pairs, fenced, never evidence.

The system message is System_MD; the user message is the rest. Budgets work as in V1 (drop the
lowest-ranked attachment and rebuild; an LLM S_CTX is then replaced by the extractive one,
since it may describe a dropped attachment).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from citebound.contracts.assembly import (
    AnswerBundle,
    ChatMessage,
    PromptBuildResult,
    PromptTokenCounts,
    SelectedEvidence,
)
from citebound.contracts.base import sha256_hex
from citebound.contracts.enums import BuildStatus, ReasonCode
from citebound.policy import Policy
from citebound.prompt.anchors import citation_format
from citebound.prompt.builder import not_built_result
from citebound.prompt.condense import extractive_s_ctx
from citebound.prompt.format_rules import FormatSpec, format_spec, requested_format
from citebound.text.tokens import Tokenizer, get_tokenizer

TEMPLATE_ID = "superprompt_v1"
SECTION_HEADERS: tuple[str, ...] = (
    "## System_MD",
    "## Prompt_MD",
    "## S_CTX_MD",
    "## Attachments_MD",
)
RECENT_HEADER = "## Recent_Conversation"
ALL_HEADERS = frozenset((*SECTION_HEADERS, RECENT_HEADER))
USER_START = SECTION_HEADERS[1]
DEPTH_RULES = {
    "brief": "Keep the answer brief: only what the question needs.",
    "standard": "Answer completely, without repetition.",
    "detailed": "Answer in detail: include every relevant statement of the attachments.",
}
DEFAULT_ROLE = "documentation assistant"
DEFAULT_AUDIENCE = "engineer"
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_BACKTICKS = re.compile(r"`+")


@dataclass(frozen=True)
class Turn:
    """One earlier exchange (for the Recent Conversation block)."""

    user: str
    assistant: str


@dataclass(frozen=True)
class SuperPromptInputs:
    """What the pipeline knows beyond the bundle: the canonical body, the A2 shape, the A4
    S_CTX (None = extractive) and the A5 format decision, plus recent conversation."""

    task: str
    purpose: str = ""
    context: str = ""
    audience: str = DEFAULT_AUDIENCE
    system_role: str = DEFAULT_ROLE
    tone: str = "neutral"
    depth: str = "standard"
    format_field: str = ""
    s_ctx_md: str | None = None
    format: FormatSpec | None = None
    history: Sequence[Turn] = field(default_factory=tuple)


@dataclass(frozen=True)
class SuperPromptBlocks:
    """The rendered blocks (what step mode and the web page show)."""

    system_md: str
    prompt_md: str
    s_ctx_md: str
    attachments_md: str
    recent_md: str
    s_ctx_replaced: bool


@lru_cache(maxsize=2)
def load_superprompt_template() -> tuple[str, str]:
    data = resources.files("citebound.prompt").joinpath("templates", f"{TEMPLATE_ID}.txt")
    raw = data.read_bytes()
    return raw.decode("utf-8"), sha256_hex(raw)


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run in `text` (CommonMark), at least 3."""
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)
    return "`" * max(3, longest + 1)


def render_attachment(e: SelectedEvidence, marker: str) -> str:
    src = e.source
    if src is not None and src.char_start is not None and src.char_end is not None:
        span = f"{e.chunk_id} chars {src.char_start}-{src.char_end}"
    else:
        span = e.chunk_id
    fence = fence_for(e.sanitized_text)
    ref = " ".join(e.source_reference.split())
    return (
        f"{marker}\nSOURCE: {ref} (knowledge_id={e.knowledge_id})\nSPAN: {span}\n"
        f"{fence}text\n{e.sanitized_text}\n{fence}"
    )


def render_prompt_md(inputs: SuperPromptInputs, spec: FormatSpec) -> str:
    lines = [f"Task: {inputs.task}"]
    if inputs.purpose:
        lines.append(f"Purpose: {inputs.purpose}")
    if inputs.context:
        lines.append(f"Context: {inputs.context}")
    lines.append(f"Audience: {inputs.audience}")
    lines.append(f"Format: {spec.normalized_format_spec}")
    return "\n".join(lines)


def render_recent(history: Sequence[Turn], max_pairs: int) -> str:
    kept = list(history)[-max_pairs:] if max_pairs else []
    if not kept:
        return ""
    body = "\n".join(f"User: {t.user}\nAssistant: {t.assistant}" for t in kept)
    fence = fence_for(body)
    return (
        f"\n\n{RECENT_HEADER}\nEarlier turns, for reference only (not evidence, never cite):\n"
        f"{fence}text\n{body}\n{fence}"
    )


def structure_problem(*texts: str) -> str | None:
    """A line of user-controlled text that would read as a section header, or None."""
    for text in texts:
        for line in text.split("\n"):
            if line.strip() in ALL_HEADERS:
                return line.strip()
    return None


def default_inputs(bundle: AnswerBundle) -> SuperPromptInputs:
    """Inputs for a bundle built outside the pipeline (`citebound assemble`, `/v1/assemble`)."""
    return SuperPromptInputs(task=bundle.user_question)


def _spec(inputs: SuperPromptInputs, marker: str) -> FormatSpec:
    if inputs.format is not None:
        return inputs.format
    return format_spec(requested_format(inputs.format_field, inputs.task), marker)


def render_blocks(
    bundle: AnswerBundle,
    evidence: list[SelectedEvidence],
    policy: Policy,
    inputs: SuperPromptInputs,
    s_ctx: str,
    replaced: bool,
) -> tuple[str, SuperPromptBlocks]:
    template, _ = load_superprompt_template()
    fmt = citation_format(bundle.citation_style)
    marker = fmt.marker(fmt.label(0))
    spec = _spec(inputs, marker)
    attachments = "\n\n".join(render_attachment(e, fmt.marker(e.citation_anchor)) for e in evidence)
    values = {
        "system_role": inputs.system_role,
        "audience": inputs.audience,
        "refusal": policy.refusal.model_text,
        "marker_example": marker,
        "allowed_markers": ", ".join(fmt.marker(e.citation_anchor) for e in evidence),
        "tone": inputs.tone,
        "depth_rule": DEPTH_RULES.get(inputs.depth, DEPTH_RULES["standard"]),
        "format_name": spec.normalized_format_spec,
        "format_rules": "\n".join(f"- {rule}" for rule in spec.hard_rules),
        "prompt_md": render_prompt_md(inputs, spec),
        "s_ctx_md": s_ctx,
        "attachments_md": attachments,
        "recent_conversation": render_recent(
            inputs.history, policy.superprompt.n4_recent_conv_max_pairs
        ),
    }
    text = _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
    system = text.split("\n\n" + USER_START, 1)[0]
    blocks = SuperPromptBlocks(
        system_md=system,
        prompt_md=values["prompt_md"],
        s_ctx_md=s_ctx,
        attachments_md=attachments,
        recent_md=values["recent_conversation"].strip("\n"),
        s_ctx_replaced=replaced,
    )
    return text, blocks


def _counts(
    blocks: SuperPromptBlocks, text: str, tok: Tokenizer, policy: Policy
) -> PromptTokenCounts:
    # superprompt-v1 maps its blocks onto the V1 counters: system = System_MD, safety = 0 (the
    # rules are part of System_MD), evidence = S_CTX_MD + Attachments_MD, question = Prompt_MD,
    # output = Recent Conversation.
    system = tok.count(blocks.system_md)
    evidence = tok.count(blocks.s_ctx_md) + tok.count(blocks.attachments_md)
    question = tok.count(blocks.prompt_md)
    recent = tok.count(blocks.recent_md) if blocks.recent_md else 0
    prompt_tokens = tok.count(text)
    total = (
        max(system + evidence + question + recent, prompt_tokens) + policy.reserved_output_tokens
    )
    return PromptTokenCounts(
        system_tokens=system,
        safety_tokens=0,
        evidence_tokens=evidence,
        question_tokens=question,
        output_tokens=recent,
        reserved_output_tokens=policy.reserved_output_tokens,
        prompt_tokens=prompt_tokens,
        total_prompt_tokens=total,
    )


@dataclass(frozen=True)
class SuperPromptOutcome:
    evidence: list[SelectedEvidence]
    dropped: list[SelectedEvidence]
    result: PromptBuildResult
    blocks: SuperPromptBlocks | None


def build_superprompt(
    bundle: AnswerBundle, policy: Policy, inputs: SuperPromptInputs
) -> SuperPromptOutcome:
    """Render superprompt-v1 for an OK bundle (the caller did V1's prechecks), within budget."""
    _, sha = load_superprompt_template()
    tok = get_tokenizer(policy.tokenizer)
    max_items = policy.superprompt.s_ctx_max_items

    def not_built(
        status: BuildStatus, reason: str, message: str, dropped: list[str]
    ) -> PromptBuildResult:
        return not_built_result(bundle, TEMPLATE_ID, sha, policy, status, reason, message, dropped)

    conflict = structure_problem(
        inputs.task,
        inputs.purpose,
        inputs.context,
        inputs.audience,
        *(t.user + "\n" + t.assistant for t in inputs.history),
    )
    if conflict is not None:
        result = not_built(
            BuildStatus.FAILED,
            ReasonCode.QUESTION_STRUCTURE_CONFLICT,
            f"the request contains a line that reads as a prompt section header: {conflict!r}",
            [],
        )
        return SuperPromptOutcome(list(bundle.selected_evidence), [], result, None)

    evidence = list(bundle.selected_evidence)
    dropped: list[SelectedEvidence] = []
    asked = requested_format(inputs.format_field, inputs.task)
    given = inputs.s_ctx_md
    if given is not None and structure_problem(given) is not None:
        given = None  # a condensed text may not forge a section: the extractive one is used
    while True:
        texts = [e.sanitized_text for e in evidence]
        if given is not None and not dropped:
            s_ctx, replaced = given, False
        else:
            s_ctx = extractive_s_ctx(inputs.task, texts, max_items, ignore=asked)
            replaced = inputs.s_ctx_md is not None
        text, blocks = render_blocks(bundle, evidence, policy, inputs, s_ctx, replaced)
        counts = _counts(blocks, text, tok, policy)
        fits = (
            counts.total_prompt_tokens <= policy.max_total_prompt_tokens
            and (tok.count(blocks.attachments_md) if evidence else 0) <= policy.max_evidence_tokens
        )
        if fits or not evidence:
            break
        dropped.insert(0, evidence.pop())
    dropped_ids = [e.chunk_id for e in dropped]
    if not evidence:
        result = not_built(
            BuildStatus.NO_EVIDENCE,
            ReasonCode.DROP_PROMPT_BUDGET,
            "no evidence fits the prompt budget",
            dropped_ids,
        )
        return SuperPromptOutcome(evidence, dropped, result, None)
    if not fits:
        result = not_built(
            BuildStatus.FAILED,
            ReasonCode.PROMPT_OVER_BUDGET,
            f"prompt needs {counts.total_prompt_tokens} tokens "
            f"> max_total_prompt_tokens {policy.max_total_prompt_tokens}",
            dropped_ids,
        )
        return SuperPromptOutcome(evidence, dropped, result, None)
    fmt = citation_format(bundle.citation_style)
    user = text[len(blocks.system_md) + 2 :]
    result = PromptBuildResult(
        request_id=bundle.request_id,
        build_status=BuildStatus.OK,
        template_id=TEMPLATE_ID,
        template_sha256=sha,
        prompt_text=text,
        prompt_sha256=sha256_hex(text),
        messages=[
            ChatMessage(role="system", content=blocks.system_md),
            ChatMessage(role="user", content=user),
        ],
        token_counts=counts,
        tokenizer=policy.tokenizer,
        allowed_anchors=[fmt.marker(e.citation_anchor)[1:-1] for e in evidence],
        dropped_chunk_ids=dropped_ids,
    )
    return SuperPromptOutcome(evidence, dropped, result, blocks)
