"""The stages, in registry order. Each is memoryless: `(state, ctx) -> new state`.

Every stage copes with an upstream refusal or failure: after the gate refuses, the later
stages still run (so every request is validated, recorded and packaged the same way) but no
LLM is called.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from citebound.contracts.assembly import DropRecord
from citebound.contracts.enums import AssemblyStatus, ReasonCode, RetrievalStatus, ValidationStatus
from citebound.contracts.execution import ModelCallRecord
from citebound.contracts.retrieval import RetrievalBundle
from citebound.errors import StageError
from citebound.pipeline import superprompt_stages
from citebound.pipeline.chooser import ask_json, keep_drop_prompt, parse_keep
from citebound.pipeline.context import PipelineContext
from citebound.pipeline.conversation import FollowupRewrite
from citebound.pipeline.preprocess import preprocess, retrieval_query
from citebound.pipeline.shape import chooser_prompt, shape_deterministic, shape_from_mapping
from citebound.pipeline.state import (
    DISPLAY_ANCHORS,
    SEED_STAGE,
    PromptBody,
    RequestState,
    StageRecord,
)
from citebound.policy import Policy

Stage = Callable[[RequestState, PipelineContext], RequestState]


def _done(state: RequestState, name: str, record: StageRecord, **changes: object) -> RequestState:
    seed = SEED_STAGE[name]
    return state.evolve(
        stage=seed or state.stage,
        history_of_stages=[*state.history_of_stages, seed] if seed else state.history_of_stages,
        steps_done=[*state.steps_done, name],
        stage_log=[*state.stage_log, record],
        **changes,
    )


def a0_preprocess(state: RequestState, ctx: PipelineContext) -> RequestState:
    from citebound.pipeline import semantic_headers

    body, unknown, decisions, ready = preprocess(state.user_text)
    semantic: dict[str, object] = {"semantic_used": False, "normalized_map": {}}
    calls = state.model_calls
    if unknown and semantic_headers.enabled(ctx):
        body, unknown, more, ready, semantic, call = semantic_headers.apply_semantic(
            state.request_id, ctx, body, unknown
        )
        decisions = [*decisions, *more]
        calls = [*calls, call]
    extras = {
        **state.extras,
        "unknown_attributes": unknown,
        "decisions": [d.model_dump() for d in decisions],
        **semantic,
    }
    note = f"{len(decisions)} headers mapped" if decisions else "plain question -> task"
    return _done(
        state,
        "preprocessed",
        StageRecord(stage="preprocessed", note=note),
        body=body,
        extras=extras,
        prompt_ready=ready,
        model_calls=calls,
    )


def a2_shape(state: RequestState, ctx: PipelineContext) -> RequestState:
    assert state.body is not None
    calls = state.model_calls
    if ctx.config.stages.llm_shape:
        data, call = ask_json(
            ctx,
            state.request_id,
            chooser_prompt(state.body),
            stage="a2",
            switch="llm_shape",
            call="a2",
        )
        shape, notes = shape_from_mapping(data)
        calls = [*calls, call]
    else:
        shape, notes = shape_deterministic(state.body)
    extras = {**state.extras, "a2_decisions": notes}
    return _done(
        state,
        "a2",
        StageRecord(stage="a2", note=f"shape from {shape.source}"),
        shape=shape,
        extras=extras,
        model_calls=calls,
    )


def search_pieces(
    body: PromptBody, policy: Policy, query: str | None = None
) -> tuple[str, list[str]]:
    """(retrieval query, its ≤ N0 pieces) of a preprocessed prompt: what the retrieval stage
    searches and `Pipeline.prefetch` embeds ahead. `query` replaces the prompt's own query
    (a follow-up rewrite)."""
    from citebound.retrieve import query_pieces

    query = retrieval_query(body) if query is None else query
    return query, query_pieces(query, policy.retrieval.n0_query_pieces)


def resolve_followup(
    state: RequestState, ctx: PipelineContext
) -> tuple[FollowupRewrite, list[ModelCallRecord]]:
    """The retrieval query of this request: the deterministic follow-up rewrite, or the LLM
    rewrite when `[stages] llm_rewrite` is on and there are earlier turns; and the model
    calls it made."""
    from citebound.pipeline.conversation import (
        REWRITE_TEMPLATE,
        parse_rewrite,
        rewrite_prompt,
        rewrite_query,
    )

    assert state.body is not None
    base = retrieval_query(state.body)
    if not (ctx.config.stages.llm_rewrite and state.history):
        return rewrite_query(base, state.body.task, state.history, ctx.policy), []
    data, call = ask_json(
        ctx,
        state.request_id,
        rewrite_prompt(state.user_text, state.history),
        stage="retrieval",
        switch="llm_rewrite",
        call="rewrite",
        template_id=REWRITE_TEMPLATE.removesuffix(".txt"),
    )
    try:
        query = parse_rewrite(data)
    except ValueError as err:
        raise StageError(
            f"the follow-up rewrite reply is unusable: {err}",
            stage="retrieval",
            reason_code=ReasonCode.STAGE_DISABLED,
            model_calls=(call,),
        ) from None
    rewrite = FollowupRewrite(original=base, query=query, rule="llm", turns_used=len(state.history))
    return rewrite, [call]


def retrieval(state: RequestState, ctx: PipelineContext) -> RequestState:
    from citebound.retrieve import compile_filters

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
    return _done(
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
    from citebound.retrieve.definitions import promote_rows

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
    return _done(
        state, "reranked", record, views_by_stage={**state.views_by_stage, "reranked": list(order)}
    )


def a3_gate(state: RequestState, ctx: PipelineContext) -> RequestState:
    from citebound.retrieve import apply_gate, compile_filters
    from citebound.text.terms import top_coverage

    pol = ctx.policy
    by_id = state.rows_by_id()
    top = state.views_by_stage["reranked"][: pol.retrieval.top_k]
    rows = [by_id[i].model_copy(update={"rank": r}) for r, i in enumerate(top)]
    # Coverage is measured against what was searched, as promotion in `rerank` reads it.
    gate = apply_gate([r.similarity for r in rows], pol.gate, *top_coverage(_searched(state), rows))
    dropped = [
        DropRecord(
            chunk_id=i,
            rank=r,
            reason_code=ReasonCode.DROP_TOP_K,
            detail=f"beyond top_k {pol.retrieval.top_k}",
        )
        for r, i in enumerate(
            state.views_by_stage["reranked"][pol.retrieval.top_k :], start=len(top)
        )
    ]
    rows = ctx.retriever.expand_neighbors(
        rows, state.collection, compile_filters(state.filters), pol.retrieval.per_hit_neighbors
    )
    base = list(state.base_context_chunks)
    known = set(by_id)
    base.extend(
        r.model_copy(update={"rank": len(base) + k})
        for k, r in enumerate(x for x in rows if x.chunk_id not in known)
    )
    manifest = ctx.retriever.load(state.collection).manifest
    bundle = RetrievalBundle(
        request_id=state.request_id,
        user_question=state.user_text,
        retrieval_status=RetrievalStatus.SUCCESS if gate.passed else RetrievalStatus.NO_EVIDENCE,
        index_version=manifest.index_version,
        embedding_model=manifest.embedding_model,
        top_k=pol.retrieval.top_k,
        results=rows,
        run_id=state.run_id,
        filters_applied=(
            state.filters.model_copy(update={"collection": state.collection})
            if state.filters
            else None
        ),
        gate=gate,
        reranker=ctx.retriever.reranker.name,
    )
    kept = [r.chunk_id for r in rows] if gate.passed else []
    calls = state.model_calls
    if gate.passed and ctx.config.stages.llm_gate:
        data, call = ask_json(
            ctx,
            state.request_id,
            keep_drop_prompt(state.user_text, rows),
            stage="a3",
            switch="llm_gate",
            call="a3",
        )
        calls = [*calls, call]
        try:
            keep = parse_keep(data, len(rows))
        except ValueError as err:
            raise StageError(
                f"A3 semantic gate reply is unusable: {err}",
                stage="a3",
                reason_code=ReasonCode.STAGE_DISABLED,
                model_calls=(call,),
            ) from None
        dropped += [
            DropRecord(
                chunk_id=r.chunk_id,
                rank=r.rank,
                reason_code=ReasonCode.DROP_SEMANTIC,
                detail="the A3 semantic gate judged it unhelpful",
            )
            for i, r in enumerate(rows)
            if i not in keep
        ]
        rows = [rows[i].model_copy(update={"rank": k}) for k, i in enumerate(keep)]
        kept = [r.chunk_id for r in rows]
        bundle = bundle.model_copy(
            update={
                "results": rows,
                "retrieval_status": RetrievalStatus.SUCCESS
                if rows
                else RetrievalStatus.NO_EVIDENCE,
            }
        )
    if not gate.passed:
        dropped = [
            DropRecord(
                chunk_id=r.chunk_id,
                rank=r.rank,
                reason_code=gate.reason_code or "GATE",
                detail=f"max similarity {gate.max_similarity} vs min_score {gate.min_score}, "
                f"{gate.chunks_above_min_score}/{gate.min_chunks} chunks",
            )
            for r in rows
        ]
    note = "gate passed" if gate.passed else f"gate refused: {gate.reason_code}"
    return _done(
        state,
        "a3",
        StageRecord(stage="a3", kept=kept, dropped=dropped, note=note),
        base_context_chunks=base,
        retrieval_bundle=bundle,
        views_by_stage={**state.views_by_stage, "a3": kept},
        final_selection_ids=kept,
        model_calls=calls,
    )


def assembled(state: RequestState, ctx: PipelineContext) -> RequestState:
    from citebound.assemble import assemble

    assert state.retrieval_bundle is not None
    bundle = assemble(
        state.retrieval_bundle, ctx.policy, question=state.user_text, request_id=state.request_id
    )
    ids = [e.chunk_id for e in bundle.selected_evidence]
    note = bundle.assembly_status.value + (
        f" ({bundle.failure_reason})" if bundle.failure_reason else ""
    )
    record = StageRecord(
        stage="assembled", kept=ids, dropped=bundle.assembly_metrics.drops, note=note
    )
    return _done(
        state,
        "assembled",
        record,
        answer_bundle=bundle,
        final_selection_ids=ids,
        views_by_stage={**state.views_by_stage, "assembled": ids},
    )


def a4_condense(state: RequestState, ctx: PipelineContext) -> RequestState:
    """Extractive: evidence is never paraphrased (seed 000 P3.3). Assembly already budgeted it,
    so A4 enforces N3 by dropping whole chunks from the end (lowest rank) and exposes the
    evidence block as S_CTX_MD."""
    from citebound.prompt.builder import prefix_bundle
    from citebound.text import get_tokenizer

    bundle = state.answer_bundle
    assert bundle is not None
    n3 = ctx.policy.retrieval.n3_final_selection_max
    removed = {e.chunk_id for e in bundle.selected_evidence[n3:]}
    bundle = prefix_bundle(
        bundle,
        n3,
        reason_code=ReasonCode.DROP_MAX_CHUNKS,
        detail=f"N3 final selection cap {n3}",
        tok=get_tokenizer(ctx.policy.tokenizer),
    )
    ids = [e.chunk_id for e in bundle.selected_evidence]
    dropped = [d for d in bundle.assembly_metrics.drops if d.chunk_id in removed]
    s_ctx, extras = bundle.evidence_block_text, state.extras
    note = f"extractive; {len(ids)} chunks, N3={n3}"
    calls = state.model_calls
    if superprompt_stages.is_superprompt(ctx):
        s_ctx, ids, info, made = superprompt_stages.condense(
            state.evolve(answer_bundle=bundle), ctx
        )
        calls = [*calls, *made]
        extras = {
            **extras,
            "a4": info,
            "llm_stage_calls": info.pop("calls", None) or state.extras.get("llm_stage_calls", []),
        }
        note = f"S_CTX_MD from {info['source']}; {len(ids)} chunks, N3={n3}"
    record = StageRecord(stage="a4", kept=ids, dropped=dropped, note=note)
    return _done(
        state,
        "a4",
        record,
        answer_bundle=bundle,
        final_selection_ids=ids,
        s_ctx_md=s_ctx,
        extras=extras,
        views_by_stage={**state.views_by_stage, "a4": ids},
        model_calls=calls,
    )


def a5_format(state: RequestState, ctx: PipelineContext) -> RequestState:
    """V1: the prompt contract is frozen, so a requested format is recorded, not injected.
    superprompt-v1: the format decision changes the prompt's output rules."""
    assert state.body is not None
    if superprompt_stages.is_superprompt(ctx):
        fspec, calls, made = superprompt_stages.enforce_format(state, ctx)
        enforcer = {
            "normalized_format_spec": fspec.normalized_format_spec,
            "requested_format": fspec.requested_format,
            "applied": fspec.applied,
            "hard_rules": fspec.hard_rules,
            "example_shape": fspec.example_shape,
            "note": fspec.note,
            "spec": fspec.model_dump(),
        }
        return _done(
            state,
            "a5",
            StageRecord(stage="a5", note=f"format {fspec.normalized_format_spec} ({fspec.source})"),
            extras={**state.extras, "format_enforcer": enforcer, "llm_stage_calls": calls},
            model_calls=[*state.model_calls, *made],
        )
    asked = state.body.format
    spec = {
        "normalized_format_spec": "plain sentences, each ending with citation markers",
        "requested_format": asked,
        "applied": not asked,
        "note": "the frozen prompt template fixes the output format" if asked else "",
    }
    if ctx.config.stages.llm_format:
        raise StageError(
            "A5 with an LLM (stages.llm_format) cannot change the frozen prompt "
            "contract; turn stages.llm_format off",
            stage="a5",
            reason_code=ReasonCode.STAGE_DISABLED,
        )
    return _done(
        state,
        "a5",
        StageRecord(stage="a5", note="format fixed by the prompt contract"),
        extras={**state.extras, "format_enforcer": spec},
    )


def prompt_built(state: RequestState, ctx: PipelineContext) -> RequestState:
    from citebound.prompt import build_prompt

    assert state.answer_bundle is not None
    if superprompt_stages.is_superprompt(ctx):
        return superprompt_stages.build(state, ctx, _done)
    outcome = build_prompt(state.answer_bundle, ctx.policy, conversation=state.history)
    ids = [e.chunk_id for e in outcome.bundle.selected_evidence]
    msgs = outcome.prompt.messages
    attachments = "\n\n".join(
        f"SOURCE: {e.source_reference}\nSPAN: {e.citation_anchor} chunk {e.chunk_id}\n"
        f"```\n{e.sanitized_text}\n```"
        for e in outcome.bundle.selected_evidence
    )
    note = f"{outcome.prompt.build_status.value} sha256={outcome.prompt.prompt_sha256[:12]}"
    dropped = [
        d
        for d in outcome.bundle.assembly_metrics.drops
        if d.chunk_id in outcome.prompt.dropped_chunk_ids
    ]
    return _done(
        state,
        "prompt_built",
        StageRecord(stage="prompt_built", kept=ids, dropped=dropped, note=note),
        answer_bundle=outcome.bundle,
        prompt=outcome.prompt,
        final_selection_ids=ids,
        system_md=msgs[0].content if msgs else "",
        prompt_md=state.prompt_ready,
        attachments_md=attachments,
    )


def executed(state: RequestState, ctx: PipelineContext) -> RequestState:
    from citebound.llm import execute

    assert state.prompt is not None and state.answer_bundle is not None
    carried = state.extras.get("followup_rewrite", {}).get("carried", [])
    result = execute(
        state.prompt,
        state.answer_bundle,
        ctx.provider,
        ctx.policy,
        max_output_tokens=state.max_output_tokens,
        followup_terms=" ".join(carried),
    )
    note = f"{result.generation_status.value} after {result.attempts} attempt(s)"
    if result.failure_reason:
        note += f" ({result.failure_reason})"
    calls = state.model_calls
    if result.attempts:
        calls = [*calls, ModelCallRecord.of("answer", result, state.prompt.template_id)]
    return _done(
        state,
        "executed",
        StageRecord(stage="executed", note=note, latency_ms=result.llm_latency_ms),
        llm_result=result,
        model_calls=calls,
    )


def validated(state: RequestState, ctx: PipelineContext) -> RequestState:
    """R5 on the answer; with `[validation] regenerate_on_failure`, at most one regeneration
    of a rejected answer (pipeline/regenerate.py)."""
    from citebound.pipeline import regenerate as regen
    from citebound.validate import validate_answer

    bundle, llm, prompt = state.answer_bundle, state.llm_result, state.prompt
    assert llm is not None and bundle is not None and prompt is not None
    # One projection of the bundle for the whole request: both answers of a regeneration,
    # their located failures, and packaging's check of the renumbered answer (`recorded`).
    view = state.evidence_view()
    state = state.keeping_view(view)
    v = validate_answer(bundle, llm, ctx.policy, view=view)
    note = v.validation_status.value + (f" ({v.failure_reason})" if v.failure_reason else "")
    calls = list(state.model_calls)
    judged = llm.attempts > 0 and bool(calls) and calls[-1].stage == "answer"
    failures = (
        regen.located_failures(view, llm.raw_model_text, v, ctx.policy)
        if judged and v.validation_status is ValidationStatus.FAILED
        else []
    )
    if judged:
        calls[-1] = calls[-1].judged(v, failures)
    changes: dict[str, object] = {"validation": v, "model_calls": calls}
    if judged and regen.should_regenerate(ctx.policy, prompt, llm, v):
        carried = state.extras.get("followup_rewrite", {}).get("carried", [])
        out = regen.regenerate(
            ctx,
            bundle,
            prompt,
            llm,
            v,
            failures,
            calls,
            view=view,
            max_output_tokens=state.max_output_tokens,
            followup_terms=" ".join(carried),
        )
        v, note = out.validation, out.note
        changes = {
            "validation": v,
            "model_calls": out.calls,
            "llm_result": out.llm,
            "prompt": out.prompt,
        }
    return _done(
        state,
        "validated",
        StageRecord(stage="validated", kept=v.validated_citations, note=note),
        **changes,
    )


def _latency_ms(state: RequestState) -> float:
    return (time.perf_counter_ns() - state.started_ns) / 1e6 if state.started_ns else 0.0


def recorded(state: RequestState, ctx: PipelineContext) -> RequestState:
    from citebound.audit import build_audit_record
    from citebound.pipeline.conversation import audit_conversation
    from citebound.respond import Packaged, package_answer, package_without_generation

    bundle, llm, v = state.answer_bundle, state.llm_result, state.validation
    assert bundle is not None
    latency = _latency_ms(state)
    if (
        bundle.assembly_status is not AssemblyStatus.OK
        or llm is None
        or v is None
        or state.prompt is None
        or state.prompt.build_status.value != "OK"
    ):
        packaged = Packaged(package_without_generation(bundle, ctx.policy, latency_ms=latency))
    else:
        packaged = package_answer(
            bundle, llm, v, policy=ctx.policy, latency_ms=latency, view=state.evidence_view()
        )
    response = packaged.response
    # The shown anchors are derived once, by packaging; the record and `extras` keep them.
    record = build_audit_record(
        policy=ctx.policy,
        response=response,
        question=state.user_text,
        bundle=bundle,
        prompt=state.prompt,
        llm=llm,
        validation=v,
        run_id=state.run_id,
        conversation=audit_conversation(state),
        store_prompt_text=ctx.config.audit.store_prompt_text,
        store_evidence_text=ctx.config.audit.store_prompt_text,
        model_calls=state.model_calls,
        display_anchors=packaged.display_anchors,
    )
    for sink in ctx.sinks:
        sink.append(record)
    return _done(
        state,
        "recorded",
        StageRecord(stage="recorded", note=f"{len(ctx.sinks)} sink(s)"),
        response=response,
        audit_record_hash=record.record_hash,
        extras={**state.extras, DISPLAY_ANCHORS: record.display_anchors or {}},
    )


def packaged(state: RequestState, ctx: PipelineContext) -> RequestState:
    assert state.response is not None
    r = state.response
    return _done(
        state,
        "packaged",
        StageRecord(stage="packaged", note=f"{r.status.value}, {len(r.citations)} citation(s)"),
    )


REGISTRY: dict[str, Stage] = {
    "preprocessed": a0_preprocess,
    "a2": a2_shape,
    "retrieval": retrieval,
    "reranked": rerank,
    "a3": a3_gate,
    "assembled": assembled,
    "a4": a4_condense,
    "a5": a5_format,
    "prompt_built": prompt_built,
    "executed": executed,
    "validated": validated,
    "recorded": recorded,
    "packaged": packaged,
}
STAGE_LABELS = {
    "preprocessed": "A0 preprocess",
    "a2": "A2 shape",
    "retrieval": "retrieve",
    "reranked": "rerank",
    "a3": "A3 gate",
    "assembled": "assemble",
    "a4": "A4 condense",
    "a5": "A5 format",
    "prompt_built": "build prompt",
    "executed": "execute",
    "validated": "validate",
    "recorded": "record",
    "packaged": "package",
}
