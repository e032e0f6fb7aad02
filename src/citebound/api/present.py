"""Views for step mode and the web page, derived from a `RequestState` (pure functions).

Confidence indicators come from the validator's grounding metrics: for each cited source, the
best lexical support (share of a sentence's content words found in the evidence it cites)
among the answer sentences that cite it (levels: high ≥ 0.75, medium ≥ 0.5, else low); for the
answer, the validator's level from the support score of the weakest sentence
(`PublicResponse.confidence`) and the attribution coverage; a `low_confidence` flag from the
validator always means low.

The public response carries the anchors the reader sees (numbered in first-citation order,
respond/renumber.py); sources join them to the bundle through the same renumbering. Stage
panels list the prompt's anchors, as the prompt and the validator used them.
"""

from __future__ import annotations

import re

from citebound.contracts.api import (
    AnswerView,
    ChunkBrief,
    ConfidenceLevel,
    ConfidenceView,
    DropBrief,
    SourceView,
    StageView,
    VerdictView,
)
from citebound.contracts.assembly import SelectedEvidence
from citebound.contracts.enums import PublicStatus, ValidationStatus
from citebound.contracts.retrieval import RetrievalRow, display_path
from citebound.pipeline.state import RequestState, StageRecord
from citebound.pipeline.table import STAGE_NAMES, stage_label
from citebound.text import split_sentences
from citebound.validate import lexical_support, marker_pattern
from citebound.validate.markers import strip_markers

# What the validator quotes from a rejected answer ('...' or "..." fragments): withheld from
# step views, since readers never see unvalidated model text (admins: /v1/audit/<id>).
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
WITHHELD = "<model text withheld>"

HIGH = 0.75
MEDIUM = 0.5
_PROMPT_STAGES = {"prompt_built", "executed"}


def level(support: float | None) -> ConfidenceLevel:
    if support is None:
        return "none"
    return "high" if support >= HIGH else "medium" if support >= MEDIUM else "low"


def chunk_brief(row: RetrievalRow) -> ChunkBrief:
    src = row.source
    document = src.document if src is not None else row.knowledge_id
    return ChunkBrief(
        chunk_id=row.chunk_id,
        knowledge_id=row.knowledge_id,
        document=document,
        heading_path=display_path(document, src.heading_path) if src is not None else [],
        page=src.page if src is not None else None,
        rank=row.rank,
        similarity=row.similarity,
    )


def stage_view(state: RequestState, record: StageRecord) -> StageView:
    """The panel of one stage: kept and dropped chunks, prompt hash, validator verdict."""
    rows = state.rows_by_id()
    anchors = state.answer_bundle.anchor_map if state.answer_bundle is not None else {}
    kept: list[ChunkBrief] = []
    for ident in record.kept:
        # The validate stage lists anchors (C0, ...), the others list chunk ids.
        row = rows.get(ident) or rows.get(anchors.get(ident, ""))
        if row is not None:
            kept.append(chunk_brief(row))
    dropped = [
        DropBrief(
            chunk_id=d.chunk_id,
            reason_code=d.reason_code,
            detail=d.detail,
            chunk=chunk_brief(rows[d.chunk_id]) if d.chunk_id in rows else None,
        )
        for d in record.dropped
    ]
    verdict = None
    v = state.validation
    if record.stage == "validated" and v is not None:
        m = v.grounding_metrics
        verdict = VerdictView(
            validation_status=v.validation_status.value,
            generation_status=v.generation_status.value,
            failure_reason=v.failure_reason,
            reason_codes=v.reason_codes,
            message=v.message
            if v.validation_status is ValidationStatus.PASSED
            else _QUOTED.sub(WITHHELD, v.message),
            attribution_coverage=m.attribution_coverage,
            min_support=m.min_support,
        )
    prompt_hash = None
    if record.stage in _PROMPT_STAGES and state.prompt is not None:
        prompt_hash = state.prompt.prompt_sha256 or None
    index = STAGE_NAMES.index(record.stage) + 1 if record.stage in STAGE_NAMES else 0
    return StageView(
        stage=record.stage,
        label=stage_label(record.stage),
        index=index,
        note=record.note,
        latency_ms=record.latency_ms,
        kept=kept,
        dropped=dropped,
        prompt_sha256=prompt_hash,
        verdict=verdict,
    )


def _support_by_anchor(state: RequestState, shown: dict[str, SelectedEvidence]) -> dict[str, float]:
    """Best lexical support of any answer sentence citing each anchor (`shown`: the shown
    anchors' evidence, `state.shown_sources()`)."""
    bundle, response = state.answer_bundle, state.response
    if bundle is None or response is None or response.status is not PublicStatus.OK:
        return {}
    style = bundle.citation_style
    marker = marker_pattern(style)
    # The answer carries the shown anchors (first-citation order), not the prompt's.
    texts = {a: e.sanitized_text for a, e in shown.items()}
    best: dict[str, float] = {}
    for sentence in split_sentences(response.answer, marker=marker):
        body = strip_markers(sentence, style)
        for token in re.findall(marker, sentence):
            anchor = token[1:-1]
            if anchor in texts:
                best[anchor] = max(best.get(anchor, 0.0), lexical_support(body, texts[anchor]))
    return best


def answer_view(state: RequestState) -> AnswerView:
    """The public response with sources and confidence (call on a packaged state)."""
    response = state.response
    assert response is not None, "answer_view needs a packaged state"
    shown = state.shown_sources()
    support = _support_by_anchor(state, shown)
    anchors = {a: e.chunk_id for a, e in shown.items()}
    sources = [
        SourceView(
            anchor=c.anchor,
            knowledge_id=c.knowledge_id,
            chunk_id=anchors.get(c.anchor, ""),
            document=c.document or c.knowledge_id,
            heading_path=display_path(c.document, c.heading_path),
            page=c.page,
            source_reference=c.source_reference,
            support=round(support.get(c.anchor, 0.0), 3),
            confidence=level(support.get(c.anchor, 0.0)),
        )
        for c in response.citations
    ]
    return AnswerView(response=response, sources=sources, confidence=confidence(state))


def confidence(state: RequestState) -> ConfidenceView:
    response = state.response
    v = state.validation
    if response is None or response.status is not PublicStatus.OK or v is None:
        why = (
            "refused: the indexed documents do not support an answer"
            if response is not None and response.status is PublicStatus.NO_EVIDENCE
            else "no answer was given"
        )
        return ConfidenceView(level="none", attribution_coverage=0.0, explanation=why)
    m = v.grounding_metrics
    lowest = m.min_support
    # The validator's level (support score of the weakest sentence) when it set one.
    lvl: ConfidenceLevel = response.confidence or level(lowest if lowest is not None else 1.0)
    if m.attribution_coverage < 1.0 and lvl == "high":
        lvl = "medium"
    if m.low_confidence or response.low_confidence:
        lvl = "low"
    explanation = f"{m.attribution_coverage:.0%} of factual sentences cite a source"
    if lowest is not None:
        explanation += f"; the weakest sentence's support score is {lowest:.2f}"
    return ConfidenceView(
        level=lvl,
        attribution_coverage=m.attribution_coverage,
        min_support=m.min_support,
        mean_support=m.mean_support,
        low_confidence=m.low_confidence or response.low_confidence,
        explanation=explanation + ".",
    )
