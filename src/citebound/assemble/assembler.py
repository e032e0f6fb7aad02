"""Answer assembly (R2): retrieval bundle + question + policy -> AnswerBundle (+ prompt).

>>> from citebound.assemble import assemble_and_build
>>> from citebound.policy import load_policy
>>> outcome = assemble_and_build(bundle_json, load_policy("strict-v1"))  # doctest: +SKIP
>>> outcome.bundle.assembly_status, outcome.prompt.prompt_sha256  # doctest: +SKIP
"""

from __future__ import annotations

from collections import Counter

from citebound.assemble.selection import Selection, select
from citebound.assemble.validation import Issue, RawBundle, check_bundle, parse_bundle
from citebound.contracts.assembly import (
    AnswerBundle,
    AssemblyMetrics,
    DropRecord,
    SelectedEvidence,
    Thresholds,
    Trace,
)
from citebound.contracts.enums import AssemblyStatus, ReasonCode, RetrievalStatus
from citebound.contracts.retrieval import RetrievalBundle
from citebound.policy import Policy, load_policy
from citebound.prompt.anchors import citation_format
from citebound.prompt.builder import BuildOutcome, build_prompt, render_evidence
from citebound.text.sanitize import normalize_question
from citebound.text.tokens import get_tokenizer

UNKNOWN_REQUEST = "unknown"

_DROP_COUNTERS = {
    ReasonCode.DROP_DUP: "dedup_dropped_count",
    ReasonCode.DROP_BUDGET: "budget_dropped_count",
    ReasonCode.DROP_PROMPT_BUDGET: "budget_dropped_count",
    ReasonCode.DROP_PER_KNOWLEDGE_CAP: "per_knowledge_cap_dropped_count",
    ReasonCode.DROP_MAX_CHUNKS: "max_chunks_dropped_count",
    ReasonCode.DROP_BELOW_SIMILARITY_FLOOR: "similarity_dropped_count",
    ReasonCode.DROP_BELOW_TOP_SIMILARITY: "similarity_dropped_count",
    ReasonCode.DROP_FILTER_NULL: "filter_dropped_count",
    ReasonCode.DROP_FILTER_MISMATCH: "filter_dropped_count",
    ReasonCode.DROP_EMPTY_AFTER_SANITIZE: "empty_dropped_count",
    ReasonCode.DROP_STRUCTURE_CONFLICT: "structure_dropped_count",
}


def thresholds_from_policy(policy: Policy) -> Thresholds:
    """Every threshold assembly applies, as recorded in the trace."""
    return Thresholds.model_validate(
        {name: getattr(policy, name) for name in Thresholds.model_fields}
    )


def _trace(bundle: RetrievalBundle, policy: Policy) -> Trace:
    return Trace(
        request_id=bundle.request_id,
        run_id=bundle.run_id,
        index_version=bundle.index_version,
        embedding_model=bundle.embedding_model,
        retrieval_top_k=bundle.top_k,
        policy_version=policy.policy_version,
        policy_fingerprint=policy.fingerprint,
        tokenizer=policy.tokenizer,
        thresholds=thresholds_from_policy(policy),
        filters_applied=bundle.filters_applied,
        gate=bundle.gate,
        reranker=bundle.reranker,
    )


def _not_ok(
    request_id: str,
    status: AssemblyStatus,
    policy: Policy,
    issues: list[Issue],
    *,
    question: str = "",
    trace: Trace | None = None,
    retrieved_k: int = 0,
    metrics: AssemblyMetrics | None = None,
) -> AnswerBundle:
    return AnswerBundle(
        request_id=request_id,
        assembly_status=status,
        failure_reason=issues[0].code.value if issues else None,
        reason_codes=list(dict.fromkeys(i.code.value for i in issues)),
        messages=[i.message for i in issues],
        user_question=question,
        citation_style=policy.citation_style,
        trace=trace,
        assembly_metrics=metrics or AssemblyMetrics(retrieved_k=retrieved_k, selected_k=0),
    )


def _metrics(sel: Selection, retrieved_k: int, evidence: list[SelectedEvidence]) -> AssemblyMetrics:
    counts: Counter[str] = Counter(_DROP_COUNTERS[d.code] for d in sel.dropped)
    return AssemblyMetrics(
        retrieved_k=retrieved_k,
        selected_k=len(evidence),
        evidence_token_count=sel.evidence_tokens if evidence else 0,
        truncation_applied=any(e.truncated for e in evidence),
        drop_reason_codes=sorted({d.code.value for d in sel.dropped}),
        drops=[
            DropRecord(
                chunk_id=d.row.chunk_id, rank=d.row.rank, reason_code=d.code, detail=d.detail
            )
            for d in sel.dropped
        ],
        **counts,
    )


def assemble(
    raw: RawBundle,
    policy: Policy | None = None,
    *,
    question: str | None = None,
    request_id: str | None = None,
) -> AnswerBundle:
    """Validate, select and anchor evidence. Never raises for bad input: returns FAILED.

    Args:
        raw: a RetrievalBundle, its JSON text, or a parsed JSON mapping.
        policy: the policy (default: the default preset, strict-v1).
        question: overrides `user_question` of the bundle when given.
        request_id: used only when the bundle has no readable request_id.
    """
    policy = policy or load_policy()
    bundle, parsed_id, issues = parse_bundle(raw)
    rid = parsed_id or request_id or UNKNOWN_REQUEST
    if bundle is None:
        return _not_ok(rid, AssemblyStatus.FAILED, policy, issues)
    trace = _trace(bundle, policy)
    q = normalize_question(question if question is not None else bundle.user_question)
    n = len(bundle.results)

    issues = check_bundle(bundle, policy)
    if bundle.retrieval_status is RetrievalStatus.FAILED:
        issues.insert(0, Issue(ReasonCode.RETRIEVAL_FAILED, "retrieval reported FAILED"))
    elif bundle.retrieval_status is RetrievalStatus.SUCCESS and not bundle.results:
        issues.append(
            Issue(
                ReasonCode.EMPTY_BUNDLE,
                "retrieval_status is SUCCESS but results is empty; an empty bundle is "
                "NO_EVIDENCE only when retrieval_status says NO_EVIDENCE",
            )
        )
    if not q:
        issues.append(
            Issue(ReasonCode.QUESTION_EMPTY, "the question is empty after whitespace normalization")
        )
    elif (qt := get_tokenizer(policy.tokenizer).count(q)) > policy.max_question_tokens:
        issues.append(
            Issue(
                ReasonCode.QUESTION_TOO_LONG,
                f"the question has {qt} tokens; the policy allows {policy.max_question_tokens} "
                f"({policy.tokenizer} tokens, about {4 * policy.max_question_tokens:,} characters "
                "of English): shorten the question or raise max_question_tokens in a policy file",
            )
        )
    if issues:
        return _not_ok(
            rid, AssemblyStatus.FAILED, policy, issues, question=q, trace=trace, retrieved_k=n
        )
    if bundle.retrieval_status is RetrievalStatus.NO_EVIDENCE:
        why = (
            bundle.gate.reason_code
            if bundle.gate and bundle.gate.reason_code
            else "retrieval found no evidence"
        )
        return _not_ok(
            rid,
            AssemblyStatus.NO_EVIDENCE,
            policy,
            [Issue(ReasonCode.RETRIEVAL_NO_EVIDENCE, f"retrieval_status is NO_EVIDENCE ({why})")],
            question=q,
            trace=trace,
            retrieved_k=n,
        )

    tok = get_tokenizer(policy.tokenizer)
    measured = bundle.gate.measures if bundle.gate is not None else None
    sel = select(list(bundle.results), bundle.filters_applied, policy, tok, q, measured)
    fmt = citation_format(policy.citation_style)
    evidence = [
        SelectedEvidence(
            chunk_id=k.row.chunk_id,
            knowledge_id=k.row.knowledge_id,
            rank=k.row.rank,
            similarity_score=k.row.similarity,
            citation_anchor=fmt.label(i),
            sanitized_text=k.text,
            knowledge_type_effective=k.row.knowledge_type_effective,
            equipment_id=k.row.equipment_id,
            event_date=k.row.event_date,
            source=k.row.source,
            token_count=k.entry_tokens,
            truncated=k.truncated,
        )
        for i, k in enumerate(sel.kept)
    ]
    metrics = _metrics(sel, n, evidence)
    if not evidence:
        first = sel.dropped[0]
        return _not_ok(
            rid,
            AssemblyStatus.NO_EVIDENCE,
            policy,
            [Issue(first.code, f"no evidence left after selection; best row: {first.detail}")],
            question=q,
            trace=trace,
            metrics=metrics,
        )
    block = render_evidence(evidence)
    metrics = metrics.model_copy(update={"evidence_token_count": tok.count(block)})
    return AnswerBundle(
        request_id=rid,
        assembly_status=AssemblyStatus.OK,
        user_question=q,
        citation_style=policy.citation_style,
        selected_evidence=evidence,
        anchor_map={e.citation_anchor: e.chunk_id for e in evidence},
        evidence_block_text=block,
        trace=trace,
        assembly_metrics=metrics,
    )


def assemble_and_build(
    raw: RawBundle,
    policy: Policy | None = None,
    *,
    question: str | None = None,
    request_id: str | None = None,
) -> BuildOutcome:
    """`assemble` then `build_prompt`; the returned bundle is the final (PB4-pruned) one."""
    policy = policy or load_policy()
    return build_prompt(assemble(raw, policy, question=question, request_id=request_id), policy)
