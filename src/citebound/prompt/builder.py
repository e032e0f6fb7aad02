"""Prompt builder (seed 000 R2.6 / seed 001 R3): frozen template + evidence -> exact bytes.

`build_prompt` never invents structure: it fills the five frozen sections, enforces the token
budgets (PB3/PB4: drop the lowest-ranked chunk, rebuild, repeat) and returns the prompt text,
its sha256 and the system/user chat messages whose concatenation is exactly the prompt.
"""

from __future__ import annotations

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
from citebound.contracts.enums import AssemblyStatus, BuildStatus, ReasonCode
from citebound.policy import Policy
from citebound.prompt.anchors import citation_format
from citebound.prompt.evidence import render_block, render_entry
from citebound.prompt.template import (
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
    template: PromptTemplate, policy: Policy, bundle: AnswerBundle, evidence: list[SelectedEvidence]
) -> str:
    fmt = citation_format(bundle.citation_style)
    return template.render(
        {
            "refusal": policy.refusal.model_text,
            "marker_example": fmt.marker(fmt.label(0)),
            "evidence_block": render_evidence(evidence),
            "question": bundle.user_question,
            "allowed_markers": ", ".join(fmt.marker(e.citation_anchor) for e in evidence),
        }
    )


def _section_tokens(prompt_text: str, tok: Tokenizer) -> list[int]:
    lines = prompt_text.split("\n")
    starts = [i for i, line in enumerate(lines) if line in SECTION_HEADERS]
    bounds = [*starts, len(lines)]
    return [
        tok.count("\n".join(lines[bounds[i] : bounds[i + 1]]).strip("\n"))
        for i in range(len(starts))
    ]


def _counts(prompt_text: str, tok: Tokenizer, policy: Policy) -> PromptTokenCounts:
    system, safety, evidence, question, output = _section_tokens(prompt_text, tok)
    prompt_tokens = tok.count(prompt_text)
    # PB4 formula; the whole-prompt count guards against non-additive BPE merges at joins.
    total = (
        max(system + safety + evidence + question + output, prompt_tokens)
        + policy.reserved_output_tokens
    )
    return PromptTokenCounts(
        system_tokens=system,
        safety_tokens=safety,
        evidence_tokens=evidence,
        question_tokens=question,
        output_tokens=output,
        reserved_output_tokens=policy.reserved_output_tokens,
        prompt_tokens=prompt_tokens,
        total_prompt_tokens=total,
    )


def _not_built(
    bundle: AnswerBundle,
    template: PromptTemplate,
    policy: Policy,
    status: BuildStatus,
    reason: str,
    message: str,
    dropped: list[str] | None = None,
) -> PromptBuildResult:
    return PromptBuildResult(
        request_id=bundle.request_id,
        build_status=status,
        failure_reason=reason,
        message=message,
        template_id=template.template_id,
        template_sha256=template.sha256,
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
    if HEADER_LINE.match(bundle.user_question):
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


def build_prompt(
    bundle: AnswerBundle, policy: Policy, superprompt: SuperPromptInputs | None = None
) -> BuildOutcome:
    """Build the exact prompt for an AnswerBundle under `policy`.

    `policy.prompt_contract` picks the contract: `v1` (the frozen five sections, below) or
    `superprompt-v1` (prompt/superprompt.py), whose extra inputs (body, shape, S_CTX, format,
    history) come from the pipeline; without them the bundle's question is the task.

    Returns NO_EVIDENCE with an empty prompt when the bundle is NO_EVIDENCE (seed 000 R2.7
    test 4), FAILED when the bundle failed or the prompt cannot fit, OK otherwise.

    Example:
        >>> outcome = build_prompt(answer_bundle, load_policy("strict-v1"))  # doctest: +SKIP
        >>> outcome.prompt.prompt_sha256  # doctest: +SKIP
    """
    template = load_template(policy.prompt_style)
    tok = get_tokenizer(policy.tokenizer)

    def stop(
        status: BuildStatus, reason: str, message: str, dropped: list[str] | None = None
    ) -> BuildOutcome:
        return BuildOutcome(
            bundle, _not_built(bundle, template, policy, status, reason, message, dropped)
        )

    problem = _precheck(bundle)
    if problem is not None:
        if policy.prompt_contract == "superprompt-v1":
            from citebound.prompt.superprompt import TEMPLATE_ID, load_superprompt_template

            template = PromptTemplate(TEMPLATE_ID, "", load_superprompt_template()[1])
        return stop(*problem)
    if policy.prompt_contract == "superprompt-v1":
        return _build_superprompt(bundle, policy, superprompt, tok)

    evidence = list(bundle.selected_evidence)
    dropped: list[SelectedEvidence] = []
    while True:
        prompt_text = _render(template, policy, bundle, evidence)
        counts = _counts(prompt_text, tok, policy)
        block_tokens = tok.count(render_evidence(evidence)) if evidence else 0
        fits = (
            counts.total_prompt_tokens <= policy.max_total_prompt_tokens
            and block_tokens <= policy.max_evidence_tokens
        )
        if fits or not evidence:
            break
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
    structure = check_structure(prompt_text)
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
