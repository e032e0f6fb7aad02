"""Helpers for the R4 tests: contract factories, a fast policy, spies, a reference checker.

Assembly and prompt building are built elsewhere; these factories construct their output
contracts directly, keeping the one invariant R4 relies on: `prompt_text` is the system
message, a blank line, then the user message, and `prompt_sha256` is its UTF-8 sha256.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from citebound.contracts import (
    AnswerBundle,
    AssemblyMetrics,
    AssemblyStatus,
    BuildStatus,
    ChatMessage,
    CitationStyle,
    PromptBuildResult,
    SelectedEvidence,
    Thresholds,
    Trace,
    sha256_hex,
)
from citebound.contracts.provider import ProviderReply, ProviderRequest
from citebound.llm import ExtractiveProvider, OllamaProvider, OpenAIProvider, Provider
from citebound.llm.extractive import marker_pattern
from citebound.policy import LLMPolicy, Policy, load_policy
from citebound.testing import RecordedRequest, ScriptedLLMServer
from citebound.testing.bundles import anchor_label
from citebound.text import split_sentences

SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"

SYSTEM = (
    "You answer only from the evidence below. Do not use outside knowledge.\n"
    "If the evidence is insufficient, answer exactly: NO_EVIDENCE: The provided evidence does "
    "not contain sufficient information to answer this question."
)

PUMP_EVIDENCE = [
    "The pump runs at 40 bar. It is painted blue.",
    "Relief valves open at 45 bar during overpressure. Inspect the seals every 500 hours.",
    "The warranty covers two years of use.",
]
PUMP_QUESTION = "At what pressure does the pump run?"


def make_bundle(
    texts: list[str] | None = None,
    question: str = PUMP_QUESTION,
    *,
    style: CitationStyle = CitationStyle.C,
    status: AssemblyStatus = AssemblyStatus.OK,
    request_id: str = "req-1",
    policy: Policy | None = None,
) -> AnswerBundle:
    policy = policy or load_policy("strict-v1")
    texts = PUMP_EVIDENCE if texts is None else texts
    evidence = []
    if status is AssemblyStatus.OK:
        evidence = [
            SelectedEvidence(
                chunk_id=f"chunk-{i:04d}",
                knowledge_id=f"doc-{i // 2}",
                rank=i,
                similarity_score=0.9 - i * 0.01,
                citation_anchor=anchor_label(style, i),
                sanitized_text=text,
                knowledge_type_effective="manual",
                token_count=len(text.split()) + 8,
            )
            for i, text in enumerate(texts)
        ]
    block = "\n\n".join(
        f"[{e.citation_anchor} | chunk_id={e.chunk_id} | knowledge_id={e.knowledge_id} | "
        f"source={e.knowledge_id}]\n{e.sanitized_text}"
        for e in evidence
    )
    thresholds = Thresholds(
        min_top_similarity=policy.min_top_similarity,
        min_similarity_floor=policy.min_similarity_floor,
        overlap_ratio_threshold=policy.overlap_ratio_threshold,
        max_chunks=policy.max_chunks,
        max_chunks_per_knowledge_id=policy.max_chunks_per_knowledge_id,
        max_evidence_tokens=policy.max_evidence_tokens,
        max_total_prompt_tokens=policy.max_total_prompt_tokens,
        reserved_output_tokens=policy.reserved_output_tokens,
        max_chunk_token_ratio=policy.max_chunk_token_ratio,
    )
    trace = Trace(
        request_id=request_id,
        index_version="idx-1",
        embedding_model="test-embedder",
        retrieval_top_k=20,
        policy_version=policy.policy_version,
        policy_fingerprint=policy.fingerprint,
        tokenizer=policy.tokenizer,
        thresholds=thresholds,
    )
    return AnswerBundle(
        request_id=request_id,
        assembly_status=status,
        failure_reason=None if status is AssemblyStatus.OK else f"TEST_{status.value}",
        user_question=question,
        citation_style=style,
        selected_evidence=evidence,
        anchor_map={e.citation_anchor: e.chunk_id for e in evidence},
        evidence_block_text=block,
        trace=trace,
        assembly_metrics=AssemblyMetrics(retrieved_k=len(texts), selected_k=len(evidence)),
    )


def make_prompt(
    bundle: AnswerBundle,
    *,
    status: BuildStatus | None = None,
    system: str = SYSTEM,
    user_suffix: str = "",
) -> PromptBuildResult:
    """A PromptBuildResult for `bundle`; NO_EVIDENCE/FAILED ones are empty like the real one."""
    if status is None:
        status = BuildStatus(bundle.assembly_status.value)
    common = {"request_id": bundle.request_id, "template_id": "qa_v1", "tokenizer": "cl100k_base"}
    if status is not BuildStatus.OK:
        return PromptBuildResult(
            **common,
            build_status=status,
            failure_reason=f"TEST_{status.value}",
            template_sha256=sha256_hex("template"),
        )
    user = (
        "EVIDENCE:\n" + bundle.evidence_block_text + "\n\nQUESTION:\n" + bundle.user_question
    ) + user_suffix
    text = system + "\n\n" + user
    return PromptBuildResult(
        **common,
        build_status=status,
        template_sha256=sha256_hex("template"),
        prompt_text=text,
        prompt_sha256=sha256_hex(text),
        messages=[
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=user),
        ],
        allowed_anchors=bundle.allowed_anchors,
    )


def fast_policy(name: str = "strict-v1", **llm: float) -> Policy:
    """A preset with test-sized execution parameters (sleeps are faked anyway)."""
    values: dict[str, float] = {
        "max_attempts": 3,
        "backoff_base_s": 0.5,
        "backoff_max_s": 8.0,
        "timeout_s": 5.0,
        "max_output_tokens": 256,
        "temperature": 0.0,
    }
    values.update(llm)
    return load_policy(name).model_copy(update={"llm": LLMPolicy.model_validate(values)})


@dataclass
class FakeSleep:
    """Records the delays the wrapper asked for instead of waiting."""

    calls: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


class SpyProvider:
    """Wraps a provider and records every request handed to it (does not alter anything)."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.requests: list[ProviderRequest] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    def complete(self, request: ProviderRequest) -> ProviderReply:
        self.requests.append(request)
        return self.inner.complete(request)


def check_answer(text: str, bundle: AnswerBundle, refusal: str) -> list[str]:
    """Reference check of the post-generation validator's rules; returns the problems found.

    A stand-in for `citebound.validate` (written in parallel): every sentence with letters
    carries a marker, only allowed anchors, no internal ids, numbers come from the cited
    evidence, and a refusal is the exact string alone.
    """
    if text == refusal:
        return []
    problems: list[str] = []
    if refusal in text:
        problems.append("refusal mixed with an answer")
    pattern = marker_pattern(bundle.citation_style)
    by_anchor = {e.citation_anchor: e for e in bundle.selected_evidence}
    for e in bundle.selected_evidence:
        if e.chunk_id in text or e.knowledge_id in text:
            problems.append(f"internal id leaked: {e.chunk_id}/{e.knowledge_id}")
    for sentence in split_sentences(text, marker=pattern):
        markers = [m[1:-1] for m in re.findall(pattern, sentence)]
        if re.search(r"[^\W\d_]", sentence) and not markers:
            problems.append(f"uncited: {sentence!r}")
        bad = [m for m in markers if m not in by_anchor]
        if bad:
            problems.append(f"invalid anchors {bad}")
            continue
        cited = " ".join(by_anchor[m].sanitized_text for m in markers)
        bare = re.sub(pattern, " ", sentence)
        for number in re.findall(r"\d+(?:[.,:/-]\d+)*", bare):
            if number not in cited:
                problems.append(f"number {number} not in cited evidence")
    return problems


# -- providers under test ------------------------------------------------------------------

HTTP_KINDS = ("openai-chat", "openai-responses", "ollama")


def http_provider(kind: str, server: ScriptedLLMServer, model: str = "test-model") -> Provider:
    if kind == "openai-chat":
        return OpenAIProvider(model, base_url=server.base_url, api="chat")
    if kind == "openai-responses":
        return OpenAIProvider(model, base_url=server.base_url, api="responses")
    if kind == "ollama":
        return OllamaProvider(model, base_url=server.root_url)
    raise AssertionError(kind)


def received_prompts(requests: list[RecordedRequest]) -> list[str]:
    return [r.prompt_text() for r in requests]


def extractive_answer(bundle: AnswerBundle, policy: Policy) -> str:
    return ExtractiveProvider().answer(bundle, policy.refusal.model_text)


Factory = Callable[..., AnswerBundle]
