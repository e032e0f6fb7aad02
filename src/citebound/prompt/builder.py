"""Prompt builder (R3): frozen template + evidence -> exact bytes.

`build_prompt` never invents structure: it fills the five frozen sections, enforces the token
budgets (PB3/PB4: drop the lowest-ranked chunk, rebuild, repeat) and returns the prompt text,
its sha256 and the system/user chat messages whose concatenation is exactly the prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from citebound.contracts.assembly import (
    AnswerBundle,
    AssemblyMetrics,
    ChatMessage,
    DropRecord,
    PromptBuildResult,
    PromptTokenCounts,
    SelectedEvidence,
)
from citebound.contracts.base import sha256_hex
from citebound.contracts.conversation import ConversationTurn
from citebound.contracts.enums import AssemblyStatus, BuildStatus, ReasonCode
from citebound.policy import Policy
from citebound.prompt.anchors import citation_format
from citebound.prompt.conversation import conversation_lines, render_conversation
from citebound.prompt.evidence import render_block, render_entry, structure_conflict
from citebound.prompt.template import (
    CONVERSATION_HEADER,
    CONVERSATION_TEMPLATES,
    HEADER_LINE,
    MESSAGE_SEPARATOR,
    SECTION_HEADERS,
    USER_MESSAGE_START,
    PromptTemplate,
    check_structure,
    load_template,
)
from citebound.text.tokens import Tokenizer, get_tokenizer

if TYPE_CHECKING:
    from citebound.prompt.superprompt import SuperPromptInputs


class BuildOutcome(NamedTuple):
    """The (possibly budget-pruned) AnswerBundle and the prompt built from it."""

    bundle: AnswerBundle
    prompt: PromptBuildResult


def render_evidence(evidence: list[SelectedEvidence]) -> str:
    """Exact evidence block bytes for an ordered, anchored evidence list."""
    return render_block(
        [
            render_entry(
                e.citation_anchor, e.chunk_id, e.knowledge_id, e.source_reference, e.sanitized_text
            )
            for e in evidence
        ]
    )


def _render(
    template: PromptTemplate,
    policy: Policy,
    bundle: AnswerBundle,
    evidence: list[SelectedEvidence],
    conversation: Sequence[tuple[str, str]] = (),
) -> str:
    fmt = citation_format(bundle.citation_style)
    values = {
        "refusal": policy.refusal.model_text,
        "marker_example": fmt.marker(fmt.label(0)),
        "evidence_block": render_evidence(evidence),
        "question": bundle.user_question,
        "allowed_markers": ", ".join(fmt.marker(e.citation_anchor) for e in evidence),
    }
    if "conversation_block" in template.variables:
        values["conversation_block"] = render_conversation(conversation)
    return template.render(values)


def _section_tokens(prompt_text: str, tok: Tokenizer, sections: tuple[str, ...]) -> dict[str, int]:
    lines = prompt_text.split("\n")
    starts = [i for i, line in enumerate(lines) if line in sections]
    bounds = [*starts, len(lines)]
    return {
        lines[starts[i]]: tok.count("\n".join(lines[bounds[i] : bounds[i + 1]]).strip("\n"))
        for i in range(len(starts))
    }


def _counts(
    prompt_text: str, tok: Tokenizer, policy: Policy, sections: tuple[str, ...] = SECTION_HEADERS
) -> PromptTokenCounts:
    by_header = _section_tokens(prompt_text, tok, sections)
    system, safety, evidence, question, output = (by_header.get(h, 0) for h in SECTION_HEADERS)
    conversation = by_header.get(CONVERSATION_HEADER, 0)
    prompt_tokens = tok.count(prompt_text)
    # PB4 formula; the whole-prompt count guards against non-additive BPE merges at joins.
    total = (
        max(system + safety + evidence + question + output + conversation, prompt_tokens)
        + policy.reserved_output_tokens
    )
    return PromptTokenCounts(
        system_tokens=system,
        safety_tokens=safety,
        evidence_tokens=evidence,
        question_tokens=question,
        output_tokens=output,
        conversation_tokens=conversation,
        reserved_output_tokens=policy.reserved_output_tokens,
        prompt_tokens=prompt_tokens,
        total_prompt_tokens=total,
    )


def not_built_result(
    bundle: AnswerBundle,
    template_id: str,
    template_sha256: str,
    policy: Policy,
    status: BuildStatus,
    reason: str,
    message: str,
    dropped: list[str] | None = None,
) -> PromptBuildResult:
    """The PromptBuildResult of a prompt that was not built (any prompt contract)."""
    return PromptBuildResult(
        request_id=bundle.request_id,
        build_status=status,
        failure_reason=reason,
        message=message,
        template_id=template_id,
        template_sha256=template_sha256,
        tokenizer=policy.tokenizer,
        dropped_chunk_ids=dropped or [],
    )


def prefix_bundle(
    bundle: AnswerBundle, keep: int, *, reason_code: str, detail: str, tok: Tokenizer
) -> AnswerBundle:
    """The bundle with only its first `keep` evidence entries (lowest ranks are last).

    Anchors of the kept evidence do not change (they are a prefix); every removed entry is
    recorded as a drop with `reason_code`. With nothing kept the bundle becomes NO_EVIDENCE.
    """
    kept, dropped = list(bundle.selected_evidence[:keep]), list(bundle.selected_evidence[keep:])
    if not dropped:
        return bundle
    m = bundle.assembly_metrics
    drops = [
        *m.drops,
        *(
            DropRecord(chunk_id=e.chunk_id, rank=e.rank, reason_code=reason_code, detail=detail)
            for e in dropped
        ),
    ]
    counter = (
        "budget_dropped_count"
        if reason_code == ReasonCode.DROP_PROMPT_BUDGET
        else "max_chunks_dropped_count"
    )
    block = render_evidence(kept)
    metrics = AssemblyMetrics.model_validate(
        {
            **m.model_dump(),
            "selected_k": len(kept),
            counter: getattr(m, counter) + len(dropped),
            "evidence_token_count": tok.count(block) if kept else 0,
            "truncation_applied": any(e.truncated for e in kept),
            "drop_reason_codes": sorted({d.reason_code for d in drops}),
            "drops": drops,
        }
    )
    update: dict[str, object] = {
        "selected_evidence": kept,
        "anchor_map": {e.citation_anchor: e.chunk_id for e in kept},
        "evidence_block_text": block if kept else "",
        "assembly_metrics": metrics,
    }
    if not kept:
        update |= {
            "assembly_status": AssemblyStatus.NO_EVIDENCE,
            "failure_reason": reason_code,
            "reason_codes": [reason_code],
            "messages": [f"no evidence left: {detail}"],
        }
    return AnswerBundle.model_validate({**bundle.model_dump(), **update})


def _precheck(bundle: AnswerBundle) -> tuple[BuildStatus, str, str] | None:
    """The first reason no prompt may be built for `bundle`, in a fixed order; or None."""
    if bundle.assembly_status is AssemblyStatus.NO_EVIDENCE:
        return (
            BuildStatus.NO_EVIDENCE,
            bundle.failure_reason or ReasonCode.ASSEMBLY_NOT_OK,
            "assembly found no usable evidence; no prompt is built",
        )
    if bundle.assembly_status is AssemblyStatus.FAILED:
        return (
            BuildStatus.FAILED,
            ReasonCode.ASSEMBLY_NOT_OK,
            f"assembly failed ({bundle.failure_reason}); no prompt is built",
        )
    if not bundle.user_question:
        return BuildStatus.FAILED, ReasonCode.QUESTION_EMPTY, "the question is empty"
    if HEADER_LINE.match(bundle.user_question) or structure_conflict(bundle.user_question):
        return (
            BuildStatus.FAILED,
            ReasonCode.QUESTION_STRUCTURE_CONFLICT,
            "the question reads as a prompt section header",
        )
    if bundle.evidence_block_text != render_evidence(bundle.selected_evidence):
        return (
            BuildStatus.FAILED,
            ReasonCode.PROMPT_STRUCTURE,
            "evidence_block_text does not match the frozen evidence format",
        )
    return None


def _conversation_pairs(
    conversation: Sequence[ConversationTurn], policy: Policy, style: str, tok: Tokenizer
) -> tuple[list[tuple[str, str]], int]:
    """The turn pairs that fit `conversation.max_conversation_tokens` (newest kept; the
    oldest are left out first) and how many were left out."""
    pairs = conversation_lines(conversation, style)
    cap = policy.conversation.max_conversation_tokens
    dropped = 0
    while pairs and tok.count(render_conversation(pairs)) > cap:
        pairs.pop(0)
        dropped += 1
    return pairs, dropped


def build_prompt(
    bundle: AnswerBundle,
    policy: Policy,
    superprompt: SuperPromptInputs | None = None,
    conversation: Sequence[ConversationTurn] = (),
) -> BuildOutcome:
    """Build the exact prompt for an AnswerBundle under `policy`.

    `policy.prompt_contract` picks the contract: `v1` (the frozen five sections, below) or
    `superprompt-v1` (prompt/superprompt.py), whose extra inputs (body, shape, S_CTX, format,
    history) come from the pipeline; without them the bundle's question is the task.

    Returns NO_EVIDENCE with an empty prompt when the bundle is NO_EVIDENCE (no
    evidence, no prompt), FAILED when the bundle failed or the prompt cannot fit, OK otherwise.

    With earlier turns (`conversation`, already cut to the last N4 pairs) and a prompt style
    that has a conversation variant, the prompt uses the frozen `qa_conversation_v1`
    template: the turns go into its fenced RECENT CONVERSATION section, never into the
    evidence, so they can never be cited. Older pairs are left out first to fit
    `conversation.max_conversation_tokens`, and before any evidence is dropped for the total
    budget. Without turns the V1 template is used, byte for byte as before.

    Example:
        >>> outcome = build_prompt(answer_bundle, load_policy("strict-v1"))  # doctest: +SKIP
        >>> outcome.prompt.prompt_sha256  # doctest: +SKIP
    """
    tok = get_tokenizer(policy.tokenizer)
    pairs: list[tuple[str, str]] = []
    turns_dropped = 0
    conv_id = CONVERSATION_TEMPLATES.get(policy.prompt_style)
    if conversation and conv_id is not None:
        pairs, turns_dropped = _conversation_pairs(conversation, policy, bundle.citation_style, tok)
    template = (
        load_template(policy.prompt_style, conv_id.split("_", 1)[1])
        if pairs and conv_id is not None
        else load_template(policy.prompt_style)
    )

    def stop(
        status: BuildStatus, reason: str, message: str, dropped: list[str] | None = None
    ) -> BuildOutcome:
        return BuildOutcome(
            bundle,
            not_built_result(
                bundle,
                template.template_id,
                template.sha256,
                policy,
                status,
                reason,
                message,
                dropped,
            ),
        )

    problem = _precheck(bundle)
    if problem is not None:
        if policy.prompt_contract == "superprompt-v1":
            # Lazy: prompt.superprompt imports this module (cycle).
            from citebound.prompt.superprompt import TEMPLATE_ID, load_superprompt_template

            template = PromptTemplate(TEMPLATE_ID, "", load_superprompt_template()[1])
        return stop(*problem)
    if policy.prompt_contract == "superprompt-v1":
        return _build_superprompt(bundle, policy, superprompt, tok)

    evidence = list(bundle.selected_evidence)
    dropped: list[SelectedEvidence] = []
    while True:
        prompt_text = _render(template, policy, bundle, evidence, pairs)
        counts = _counts(prompt_text, tok, policy, template.sections)
        block_tokens = tok.count(render_evidence(evidence)) if evidence else 0
        fits = (
            counts.total_prompt_tokens <= policy.max_total_prompt_tokens
            and block_tokens <= policy.max_evidence_tokens
        )
        if fits or not evidence:
            break
        if len(pairs) > 1 and block_tokens <= policy.max_evidence_tokens:
            pairs.pop(0)  # evidence first: older conversation goes before any evidence
            turns_dropped += 1
            continue
        dropped.insert(0, evidence.pop())  # lowest ranked is last: rank_strict ordering

    if dropped:
        bundle = prefix_bundle(
            bundle,
            len(evidence),
            reason_code=ReasonCode.DROP_PROMPT_BUDGET,
            detail="dropped to fit max_total_prompt_tokens (PB4)",
            tok=tok,
        )
    dropped_ids = [e.chunk_id for e in dropped]
    if not evidence:
        return stop(
            BuildStatus.NO_EVIDENCE,
            ReasonCode.DROP_PROMPT_BUDGET,
            "no evidence fits the prompt budget",
            dropped_ids,
        )
    if not fits:
        return stop(
            BuildStatus.FAILED,
            ReasonCode.PROMPT_OVER_BUDGET,
            f"prompt needs {counts.total_prompt_tokens} tokens "
            f"> max_total_prompt_tokens {policy.max_total_prompt_tokens}",
            dropped_ids,
        )
    structure = check_structure(prompt_text, template.sections)
    if structure is not None:
        return stop(BuildStatus.FAILED, ReasonCode.PROMPT_STRUCTURE, structure, dropped_ids)
    split = prompt_text.index(MESSAGE_SEPARATOR + USER_MESSAGE_START)
    system, user = prompt_text[:split], prompt_text[split + len(MESSAGE_SEPARATOR) :]
    fmt = citation_format(bundle.citation_style)
    return BuildOutcome(
        bundle,
        PromptBuildResult(
            request_id=bundle.request_id,
            build_status=BuildStatus.OK,
            template_id=template.template_id,
            template_sha256=template.sha256,
            prompt_text=prompt_text,
            prompt_sha256=sha256_hex(prompt_text),
            messages=[
                ChatMessage(role="system", content=system),
                ChatMessage(role="user", content=user),
            ],
            token_counts=counts,
            tokenizer=policy.tokenizer,
            allowed_anchors=[fmt.marker(e.citation_anchor)[1:-1] for e in evidence],
            dropped_chunk_ids=dropped_ids,
            conversation_turns=len(pairs),
            conversation_turns_dropped=turns_dropped,
        ),
    )


def _build_superprompt(
    bundle: AnswerBundle, policy: Policy, inputs: SuperPromptInputs | None, tok: Tokenizer
) -> BuildOutcome:
    from citebound.prompt.superprompt import build_superprompt, default_inputs

    outcome = build_superprompt(bundle, policy, inputs or default_inputs(bundle))
    if outcome.dropped:
        bundle = prefix_bundle(
            bundle,
            len(outcome.evidence),
            reason_code=ReasonCode.DROP_PROMPT_BUDGET,
            detail="dropped to fit max_total_prompt_tokens (PB4)",
            tok=tok,
        )
    return BuildOutcome(bundle, outcome.result)
