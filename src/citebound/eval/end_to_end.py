"""End-to-end evaluation: run real questions through the whole `Pipeline` and record outcomes.

One `QuestionOutcome` per question keeps what the metrics need and nothing else: the status,
whether the refusal came before any LLM call, the similarities the gate saw, the selected
evidence (similarity + whether it holds the gold answer) and the timings. Gate thresholds can
then be swept offline (`citebound.eval.gate_tuning`) from one run with the gate open.

    >>> pipe, ctx = make_pipeline(store, tmp / "run", "squad")          # doctest: +SKIP
    >>> out = ask(pipe, question, answers=["France"], in_corpus=True)    # doctest: +SKIP
    >>> out.refused_before_llm, out.evidence_hit                         # doctest: +SKIP
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import Field

from citebound.config import load_config
from citebound.contracts.base import Contract
from citebound.eval.squad import contains_gold
from citebound.pipeline import Pipeline, PipelineContext, RequestState
from citebound.store.base import Store


class EvidenceItem(Contract):
    """One selected evidence chunk as the metrics see it."""

    similarity: float = Field(description="Calibrated similarity of the chunk.")
    has_gold: bool = Field(description="The chunk's sanitized text contains a gold answer.")


class QuestionOutcome(Contract):
    """What one question did end to end."""

    qid: str = Field(description="Question id (also the request id).")
    group: str = Field(description="Caller's label, e.g. `in:1` or `out:5` (corpus:article).")
    in_corpus: bool = Field(description="The question's source is in the index.")
    status: str = Field(description="PublicResponse status.")
    llm_attempts: int = Field(description="Provider calls made (0 = no LLM call).")
    refused_before_llm: bool = Field(description="NO_EVIDENCE with zero provider calls.")
    gate_passed: bool = Field(description="The A3 gate let the request through.")
    gate_similarities: list[float] = Field(
        description="Similarities of the rows the gate decided on, in rank order."
    )
    evidence: list[EvidenceItem] = Field(description="Selected evidence, in evidence order.")
    evidence_hit: bool = Field(description="A gold answer occurs in the selected evidence.")
    answer_hit: bool = Field(description="A gold answer occurs in the answer text.")
    total_ms: float = Field(description="Wall time of `Pipeline.run`.")
    llm_ms: float = Field(description="Time spent in the provider (0 when not called).")

    @property
    def overhead_ms(self) -> float:
        """Wall time of `ask` without the provider call."""
        return max(0.0, self.total_ms - self.llm_ms)


def make_pipeline(
    store: Store,
    workdir: Path,
    collection: str,
    *,
    preset: str = "strict-v1",
    policy_changes: Mapping[str, object] | None = None,
) -> tuple[Pipeline, PipelineContext]:
    """A pipeline over `store` with the extractive provider and a SQLite audit under `workdir`.

    Args:
        store: Store holding `collection` and its index.
        workdir: Where the audit database goes (created when missing).
        collection: Collection to ask.
        preset: Policy preset name or TOML path.
        policy_changes: Top-level policy fields to replace (validated by `Policy.evolve`),
            e.g. `{"gate": {"min_score": 0.0, "min_chunks": 1}}`.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    config = load_config(
        env={},
        overrides={
            "policy": preset,
            "store": str(store.root),
            "collection": collection,
            "provider.name": "extractive",
            "audit.sinks": ["sqlite"],
            "audit.sqlite_path": str(workdir / "audit.sqlite"),
        },
    )
    ctx = PipelineContext(config, store_override=store)
    if policy_changes:
        # Before anything reads ctx.policy (the retriever is built lazily from it).
        ctx.policy = ctx.policy.evolve(**policy_changes)
    return Pipeline(ctx), ctx


OPEN_GATE: dict[str, object] = {
    "gate": {"min_score": 0.0, "min_chunks": 1},
    "min_top_similarity": 0.0,
    "min_similarity_floor": 0.0,
}
"""Policy changes that let every request through the gate and the assembly thresholds, so
one run yields the raw similarities and evidence for an offline sweep."""


def gate_similarities(state: RequestState, top_k: int) -> list[float]:
    """The similarities the A3 gate decided on: the reranked view cut to `top_k`."""
    by_id = state.rows_by_id()
    return [by_id[i].similarity for i in state.views_by_stage.get("reranked", [])[:top_k]]


def ask(
    pipe: Pipeline,
    question: str,
    *,
    qid: str,
    answers: Sequence[str],
    in_corpus: bool,
    group: str = "",
    collection: str | None = None,
    on_state: Callable[[RequestState], None] | None = None,
) -> QuestionOutcome:
    """Run one question through the whole pipeline and summarize it.

    `on_state`, when given, also receives the finished state (a benchmark keeping whole
    responses).

    `qid` becomes the request id, so it must be new to the pipeline's audit database (the
    append-only audit refuses a second record with the same id, and the request ends FAILED).
    """
    kwargs: dict[str, object] = {"request_id": qid}
    if collection is not None:
        kwargs["collection"] = collection
    t0 = time.perf_counter_ns()
    state = pipe.run(question, **kwargs)
    total_ms = (time.perf_counter_ns() - t0) / 1e6
    if on_state is not None:
        on_state(state)
    resp, llm, bundle = state.response, state.llm_result, state.answer_bundle
    status = resp.status.value if resp is not None else "FAILED"
    attempts = llm.attempts if llm is not None else 0
    selected = bundle.selected_evidence if bundle is not None else []
    evidence = [
        EvidenceItem(
            similarity=e.similarity_score, has_gold=contains_gold(answers, [e.sanitized_text])
        )
        for e in selected
    ]
    gate = state.retrieval_bundle.gate if state.retrieval_bundle is not None else None
    return QuestionOutcome(
        qid=qid,
        group=group,
        in_corpus=in_corpus,
        status=status,
        llm_attempts=attempts,
        refused_before_llm=status == "NO_EVIDENCE" and attempts == 0,
        gate_passed=bool(gate is not None and gate.passed),
        gate_similarities=gate_similarities(state, pipe.ctx.policy.retrieval.top_k),
        evidence=evidence,
        evidence_hit=any(e.has_gold for e in evidence),
        answer_hit=status == "OK" and contains_gold(answers, [resp.answer if resp else ""]),
        total_ms=total_ms,
        llm_ms=llm.llm_latency_ms if llm is not None else 0.0,
    )


class RateSummary(Contract):
    """Headline rates over a set of outcomes (each rate is None when its denominator is 0)."""

    n_out: int = Field(description="Out-of-corpus questions.")
    n_in: int = Field(description="In-corpus answerable questions.")
    refusal_rate: float | None = Field(description="Out-of-corpus refused before any LLM call.")
    out_llm_calls: int = Field(description="Out-of-corpus questions that reached the LLM.")
    evidence_hit_rate: float | None = Field(description="In-corpus with gold in the evidence.")
    answered_rate: float | None = Field(description="In-corpus answered (status OK).")
    answer_hit_rate: float | None = Field(description="In-corpus whose answer holds the gold.")
    false_refusal_rate: float | None = Field(description="In-corpus refused before the LLM.")
    failed: int = Field(description="Questions (either kind) that ended FAILED.")


def _rate(hits: int, n: int) -> float | None:
    return hits / n if n else None


def summarize(outcomes: Iterable[QuestionOutcome]) -> RateSummary:
    """Rates over `outcomes`: out-of-corpus ones count for refusal, in-corpus for the rest."""
    items = list(outcomes)
    out = [o for o in items if not o.in_corpus]
    inn = [o for o in items if o.in_corpus]
    return RateSummary(
        n_out=len(out),
        n_in=len(inn),
        refusal_rate=_rate(sum(o.refused_before_llm for o in out), len(out)),
        out_llm_calls=sum(o.llm_attempts > 0 for o in out),
        evidence_hit_rate=_rate(sum(o.evidence_hit for o in inn), len(inn)),
        answered_rate=_rate(sum(o.status == "OK" for o in inn), len(inn)),
        answer_hit_rate=_rate(sum(o.answer_hit for o in inn), len(inn)),
        false_refusal_rate=_rate(sum(o.refused_before_llm for o in inn), len(inn)),
        failed=sum(o.status == "FAILED" for o in items),
    )


class LatencySummary(Contract):
    """Median and p99 (nearest rank) of per-question times, in milliseconds."""

    n: int = Field(description="Questions timed.")
    median_ms: float = Field(description="Median.")
    p99_ms: float = Field(description="99th percentile, nearest rank.")


def latency(samples_ms: Sequence[float]) -> LatencySummary:
    """Median and nearest-rank p99 of `samples_ms` (ValueError when empty)."""
    if not samples_ms:
        raise ValueError("no latency samples")
    ordered = sorted(samples_ms)
    p99 = ordered[min(len(ordered) - 1, max(0, -(-99 * len(ordered) // 100) - 1))]
    return LatencySummary(n=len(ordered), median_ms=statistics.median(ordered), p99_ms=p99)
