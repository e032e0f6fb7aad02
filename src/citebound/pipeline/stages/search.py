"""The search stages: retrieval (with the follow-up rewrite), rerank and the A3 gate (its
decision is `citebound.gate.decide`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from citebound.contracts.enums import ReasonCode, RetrievalStatus
from citebound.contracts.execution import ModelCallRecord
from citebound.contracts.question import PromptBody
from citebound.contracts.retrieval import RetrievalBundle, RetrievalRow
from citebound.errors import StageError
from citebound.gate.decide import decide
from citebound.pipeline.context import PipelineContext
from citebound.pipeline.stages.chooser import call_json, keep_drop_prompt, parse_keep
from citebound.pipeline.stages.step import done
from citebound.pipeline.state import RequestState, StageRecord
from citebound.policy import Policy
from citebound.question.conversation import (
    REWRITE_TEMPLATE,
    FollowupRewrite,
    parse_rewrite,
    rewrite_prompt,
    rewrite_query,
)
from citebound.question.preprocess import retrieval_query
from citebound.retrieve import compile_filters, query_pieces
from citebound.retrieve.definitions import promote_rows

T = TypeVar("T")


def _parsed(parse: Callable[[], T], call: ModelCallRecord, what: str, stage: str) -> T:
    """`parse()` of a chooser reply; a reply it rejects fails the stage closed, naming `what`
    replied and carrying the call that produced it."""
    try:
        return parse()
    except ValueError as err:
        raise StageError(
            f"{what} reply is unusable: {err}",
            stage=stage,
            reason_code=ReasonCode.STAGE_DISABLED,
            model_calls=(call,),
        ) from None


def search_pieces(
    body: PromptBody, policy: Policy, query: str | None = None
) -> tuple[str, list[str]]:
    """(retrieval query, its ≤ N0 pieces) of a preprocessed prompt: what the retrieval stage
    searches and `Pipeline.prefetch` embeds ahead. `query` replaces the prompt's own query
    (a follow-up rewrite)."""
    query = retrieval_query(body) if query is None else query
    return query, query_pieces(query, policy.retrieval.n0_query_pieces)


def resolve_followup(
    state: RequestState, ctx: PipelineContext
) -> tuple[FollowupRewrite, list[ModelCallRecord]]:
    """The retrieval query of this request: the deterministic follow-up rewrite, or the LLM
    rewrite when `[stages] llm_rewrite` is on and there are earlier turns; and the model
    calls it made."""
    assert state.body is not None
    base = retrieval_query(state.body)
    if not (ctx.config.stages.llm_rewrite and state.history):
        return rewrite_query(base, state.body.task, state.history, ctx.policy), []
    data, call = call_json(
        ctx,
        state.request_id,
        rewrite_prompt(state.user_text, state.history),
        stage="retrieval",
        switch="llm_rewrite",
        call="rewrite",
        template_id=REWRITE_TEMPLATE.removesuffix(".txt"),
    )
    query = _parsed(lambda: parse_rewrite(data), call, "the follow-up rewrite", "retrieval")
    rewrite = FollowupRewrite(original=base, query=query, rule="llm", turns_used=len(state.history))
    return rewrite, [call]


def retrieval(state: RequestState, ctx: PipelineContext) -> RequestState:
    assert state.body is not None
    started = time.perf_counter()
    pol = ctx.policy
    rewrite, calls = resolve_followup(state, ctx)
    query, pieces = search_pieces(state.body, pol, rewrite.query)
    scored = ctx.retriever.search(pieces, state.collection, compile_filters(state.filters), pol)
    rows = ctx.retriever.rows_for(state.collection, scored[: pol.retrieval.n1_retr_max_candidates])
    ids = [r.chunk_id for r in rows]
    record = StageRecord(
        stage="retrieval",
        kept=ids,
        note=f"{len(pieces)} query pieces, {len(ids)} candidates"
        + (
            f"; follow-up ({rewrite.rule}) searched as {query!r}"
            if query != rewrite.original
            else ""
        ),
        latency_ms=(time.perf_counter() - started) * 1000,
    )
    extras = {**state.extras, "query": query, "query_pieces": pieces}
    if state.history:
        extras["followup_rewrite"] = rewrite.model_dump()
    return done(
        state,
        "retrieval",
        record,
        base_context_chunks=rows,
        views_by_stage={**state.views_by_stage, "retrieval": ids},
        extras=extras,
        model_calls=[*state.model_calls, *calls],
    )


def _searched(state: RequestState) -> str:
    """What retrieval searched: a follow-up's rewrite (it carries the topic), else the text."""
    return str(state.extras.get("query") or state.user_text)


def rerank(state: RequestState, ctx: PipelineContext) -> RequestState:
    head = state.views_by_stage["retrieval"][: ctx.policy.retrieval.n2_rerank_top_k]
    by_id = state.rows_by_id()
    order = ctx.retriever.reranker.rerank(
        state.extras.get("query", ""), head, [by_id[i].chunk_text for i in head]
    )
    if sorted(order) != sorted(head):
        raise StageError(
            "the reranker changed the candidate set",
            stage="reranked",
            reason_code=ReasonCode.INTERNAL_ERROR,
        )
    # "What is X?" / "What N kinds ...?": the rows defining X (titled "N Types") first among
    # the top_k; the same helper as the Retriever's, and no gate input changes
    # (retrieve/definitions.py).
    promoted, moved = promote_rows(_searched(state), [by_id[i] for i in order], ctx.policy)
    order = [r.chunk_id for r in promoted]
    record = StageRecord(
        stage="reranked",
        kept=list(order),
        note=f"reranker {ctx.retriever.reranker.name}"
        + (f"; definitions of the subject first ({moved} promoted)" if moved else ""),
    )
    return done(
        state, "reranked", record, views_by_stage={**state.views_by_stage, "reranked": list(order)}
    )


def a3_gate(state: RequestState, ctx: PipelineContext) -> RequestState:
    pol = ctx.policy
    by_id = state.rows_by_id()
    filters = compile_filters(state.filters)
    calls = list(state.model_calls)

    def expand(rows: list[RetrievalRow]) -> list[RetrievalRow]:
        return ctx.retriever.expand_neighbors(
            rows, state.collection, filters, pol.retrieval.per_hit_neighbors
        )

    def judge(rows: list[RetrievalRow]) -> list[int]:
        data, call = call_json(
            ctx,
            state.request_id,
            keep_drop_prompt(state.user_text, rows),
            stage="a3",
            switch="llm_gate",
            call="a3",
        )
        calls.append(call)
        return _parsed(lambda: parse_keep(data, len(rows)), call, "A3 semantic gate", "a3")

    decision = decide(
        _searched(state),
        [by_id[i] for i in state.views_by_stage["reranked"]],
        pol,
        lambda: ctx.retriever.load(state.collection).lexical.idf,
        expand,
        judge if ctx.config.stages.llm_gate else None,
    )
    base = list(state.base_context_chunks)
    base.extend(
        r.model_copy(update={"rank": len(base) + k})
        for k, r in enumerate(x for x in decision.expanded if x.chunk_id not in by_id)
    )
    manifest = ctx.retriever.load(state.collection).manifest
    gate = decision.trace
    bundle = RetrievalBundle(
        request_id=state.request_id,
        user_question=state.user_text,
        retrieval_status=RetrievalStatus.SUCCESS if gate.passed else RetrievalStatus.NO_EVIDENCE,
        index_version=manifest.index_version,
        embedding_model=manifest.embedding_model,
        top_k=pol.retrieval.top_k,
        results=decision.expanded,
        run_id=state.run_id,
        filters_applied=(
            state.filters.model_copy(update={"collection": state.collection})
            if state.filters
            else None
        ),
        gate=gate,
        reranker=ctx.retriever.reranker.name,
    )
    if decision.judged:
        bundle = bundle.model_copy(
            update={"results": decision.rows, "retrieval_status": decision.status}
        )
    kept = decision.kept
    return done(
        state,
        "a3",
        StageRecord(stage="a3", kept=kept, dropped=decision.dropped, note=decision.note),
        base_context_chunks=base,
        retrieval_bundle=bundle,
        views_by_stage={**state.views_by_stage, "a3": kept},
        final_selection_ids=kept,
        model_calls=calls,
    )
