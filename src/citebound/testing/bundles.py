"""Builders of valid AnswerBundles and LLM results for tests (yours and ours).

>>> from citebound.testing.bundles import make_answer_bundle, make_llm_result
>>> bundle = make_answer_bundle(["Torque the bolts to 40 Nm."])
>>> bundle.allowed_anchors
['C0']
>>> make_llm_result(bundle, "Torque the bolts to 40 Nm [C0].").generation_status.value
'OK'
"""

from __future__ import annotations

from collections.abc import Sequence

from citebound.assemble.assembler import thresholds_from_policy
from citebound.contracts.assembly import (
    AnswerBundle,
    AssemblyMetrics,
    SelectedEvidence,
    Trace,
)
from citebound.contracts.base import sha256_hex
from citebound.contracts.enums import AssemblyStatus, CitationStyle, GenerationStatus
from citebound.contracts.execution import LLMExecutionResult
from citebound.contracts.retrieval import SourceRef
from citebound.policy import Policy, load_policy
from citebound.prompt.anchors import citation_format


def anchor_label(style: CitationStyle, index: int) -> str:
    """The anchor label of the `index`-th selected chunk (0-based) in `style`."""
    return citation_format(style).label(index)


def make_answer_bundle(
    texts: Sequence[str],
    *,
    style: CitationStyle = CitationStyle.C,
    question: str = "How do I service the pump?",
    request_id: str = "req-1",
    status: AssemblyStatus = AssemblyStatus.OK,
    policy: Policy | None = None,
    run_id: str | None = "run-1",
) -> AnswerBundle:
    """A well-formed AnswerBundle with one selected chunk per text (scores 0.9, 0.8, ...)."""
    policy = policy or load_policy()
    evidence: list[SelectedEvidence] = []
    blocks: list[str] = []
    if status is AssemblyStatus.OK:
        for i, text in enumerate(texts):
            anchor = anchor_label(style, i)
            chunk_id = sha256_hex(text)[:16]
            source = SourceRef(
                document=f"manual-{i}.pdf", heading_path=("Pump", f"Section {i + 1}"), page=i + 2
            )
            evidence.append(
                SelectedEvidence(
                    chunk_id=chunk_id,
                    knowledge_id=f"kb-{i}",
                    rank=i,
                    similarity_score=round(0.9 - 0.1 * i, 4),
                    citation_anchor=anchor,
                    sanitized_text=text,
                    knowledge_type_effective="manual",
                    equipment_id="PUMP-7" if i == 0 else None,
                    event_date="2024-05-01" if i == 0 else None,
                    source=source,
                    token_count=len(text.split()) + 12,
                )
            )
            blocks.append(
                f"[{anchor} | chunk_id={chunk_id} | knowledge_id=kb-{i} | "
                f"source={source.reference()}]\n{text}"
            )
    trace = Trace(
        request_id=request_id,
        run_id=run_id,
        index_version="idx-1",
        embedding_model="test-embedder",
        retrieval_top_k=20,
        policy_version=policy.policy_version,
        policy_fingerprint=policy.fingerprint,
        tokenizer=policy.tokenizer,
        thresholds=thresholds_from_policy(policy),
    )
    return AnswerBundle(
        request_id=request_id,
        assembly_status=status,
        failure_reason=None if status is AssemblyStatus.OK else "RETRIEVAL_NO_EVIDENCE",
        user_question=question,
        citation_style=style,
        selected_evidence=evidence,
        anchor_map={e.citation_anchor: e.chunk_id for e in evidence},
        evidence_block_text="\n\n".join(blocks),
        trace=trace,
        assembly_metrics=AssemblyMetrics(retrieved_k=len(texts), selected_k=len(evidence)),
    )


def make_llm_result(
    bundle: AnswerBundle,
    text: str,
    *,
    status: GenerationStatus = GenerationStatus.OK,
    failure_reason: str | None = None,
    attempts: int = 1,
) -> LLMExecutionResult:
    """An LLMExecutionResult as the execution layer would return it for `bundle`."""
    return LLMExecutionResult(
        request_id=bundle.request_id,
        provider="scripted",
        model_name="test-model",
        prompt_sha256=sha256_hex(bundle.evidence_block_text + bundle.user_question),
        generation_status=status,
        failure_reason=failure_reason,
        message="provider kept failing" if failure_reason else "",
        raw_model_text=text,
        finish_reason="stop" if status is GenerationStatus.OK else None,
        attempts=attempts,
        llm_latency_ms=120.0,
        response_id="resp-1" if attempts else None,
        prompt_tokens_actual=300 if attempts else None,
        completion_tokens_actual=40 if attempts else None,
        total_tokens_actual=340 if attempts else None,
        temperature=0.0,
        max_output_tokens=800,
    )
