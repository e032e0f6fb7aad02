"""Replay: re-run the current validator on a stored raw answer and report verdict changes.

Replay needs the evidence texts the model saw. The record always keeps each chunk's id and the
sha256 of its sanitized text; the texts themselves come from, in order:

1. `evidence_texts` in the record (stored only when the operator opted in), or
2. a `chunk_id -> text` mapping the caller provides (e.g. read from the document store).

Every text is checked against the recorded sha256, so replay never validates against evidence
that changed since the request. When text or evidence is missing, the report says why and
`replayable` is False.

A schema v4 record lists its model calls; every judged one (the answer and, with
`regenerate_on_failure`, the regeneration) is validated again and reported in `calls`. The
record's own verdict is its last judged call's, so that call's output must be the record's
`raw_model_text`, else the record is not replayable.
A schema v5 record keeps the anchors the reader saw (`display_anchors`); replay derives them
again from the fresh verdict and reports `display_changed` when they differ.
A follow-up is re-asked, rather than re-validated, with `request_of(record)`: the question and
the earlier turns exactly as the request received them (schema v4 `conversation`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from citebound.contracts.audit import AuditRecord, CallReplay, ReplayReport
from citebound.contracts.base import sha256_hex
from citebound.contracts.conversation import ConversationTurn
from citebound.contracts.documents import Chunk
from citebound.contracts.enums import (
    AssemblyStatus,
    CitationStyle,
    GenerationStatus,
    ReasonCode,
)
from citebound.contracts.execution import ValidationResult
from citebound.policy import Policy
from citebound.prompt.evidence import safe_meta
from citebound.respond.renumber import RenumberError, renumber
from citebound.text.sanitize import safe_normalize_v1
from citebound.validate.validator import validate_view
from citebound.validate.view import EvidenceView


def _report(record: AuditRecord, policy: Policy, **kw: object) -> ReplayReport:
    return ReplayReport.model_validate(
        {
            "request_id": record.request_id,
            "stored_validation_status": record.validation_status,
            "stored_failure_reason": record.failure_reason,
            "stored_validator_version": record.validator_version,
            "policy_fingerprint_matches": policy.fingerprint == record.policy_fingerprint,
            **kw,
        }
    )


def _evidence_texts(
    record: AuditRecord, chunk_texts: Mapping[str, str] | None
) -> tuple[dict[str, str] | None, str]:
    """anchor -> text, verified against the recorded hashes; or (None, why not)."""
    texts: dict[str, str] = {}
    stored = record.evidence_texts
    if stored is not None and len(stored) != len(record.evidence):
        return None, "stored evidence_texts do not match the evidence list"
    for i, ev in enumerate(record.evidence):
        text = stored[i] if stored is not None else (chunk_texts or {}).get(ev.chunk_id)
        if text is None:
            return None, (
                f"evidence text of {ev.anchor} (chunk {ev.chunk_id}) is not available: the record "
                "was written without evidence texts (store_evidence_text) and none was provided"
            )
        if sha256_hex(text) != ev.text_sha256:
            return None, f"evidence text of {ev.anchor} (chunk {ev.chunk_id}) changed since then"
        texts[ev.anchor] = text
    return texts, ""


def request_of(record: AuditRecord) -> tuple[str, list[ConversationTurn]]:
    """(question, history) to ask `record`'s request again, e.g. `Pipeline.run(q, history=h)`:
    the same policy then rewrites the same retrieval query and builds the same prompt (when
    the store still holds the same evidence). Records older than schema v4 kept no history:
    ([] for them, as for a question asked without one)."""
    turns = list(record.conversation.turns) if record.conversation is not None else []
    return record.question, turns


# An evidence header of a stored prompt (prompt/evidence.py render_entry): the source line the
# model read above each chunk.
_HEADER = re.compile(
    r"^\[[^\s|\]]+ \| chunk_id=(?P<chunk>[^\s|]+) \| knowledge_id=[^|\n]* \| "
    r"source=(?P<src>[^\n]*)\]$",
    re.MULTILINE,
)


def _contexts(record: AuditRecord, chunk_sources: Mapping[str, str] | None) -> dict[str, str]:
    """anchor -> the source line shown above its evidence (the support check reads its words):
    from `chunk_sources` (chunk_id -> `SourceRef.reference()`, from the store), else from the
    record's stored prompt; {} when neither has it (a sentence naming its heading's equipment
    may then be judged differently: `audit replay --store` supplies the lines)."""
    by_chunk: dict[str, str] = {}
    if chunk_sources:
        by_chunk = {cid: safe_meta(src) for cid, src in chunk_sources.items()}
    elif record.prompt_text:
        by_chunk = {m["chunk"]: m["src"] for m in _HEADER.finditer(record.prompt_text)}
    return {ev.anchor: by_chunk[ev.chunk_id] for ev in record.evidence if ev.chunk_id in by_chunk}


def store_inputs(
    record: AuditRecord,
    get_chunks: Callable[[list[str]], Sequence[Chunk]],
    *,
    texts_needed: bool = True,
) -> tuple[dict[str, str] | None, dict[str, str] | None]:
    """(`chunk_texts`, `chunk_sources`) for `replay` of `record` from a document store:
    the texts when `texts_needed` and the record kept none, the source lines when it kept no
    prompt; `get_chunks` (e.g. `store.get_chunks`) is called only when either is needed."""
    # Lazy: citebound.retrieve.rows loads tantivy and the retriever, ~60 ms of importing the audit
    # package.
    from citebound.retrieve.rows import source_of

    need_texts = texts_needed and record.evidence_texts is None
    need_sources = record.prompt_text is None
    if not record.evidence or not (need_texts or need_sources):
        return None, None
    chunks = get_chunks([ev.chunk_id for ev in record.evidence])
    texts = {c.chunk_id: safe_normalize_v1(c.text) for c in chunks} if need_texts else None
    sources = {c.chunk_id: source_of(c).reference() for c in chunks} if need_sources else None
    return texts, sources


def replay(
    record: AuditRecord,
    policy: Policy,
    *,
    chunk_texts: Mapping[str, str] | None = None,
    chunk_sources: Mapping[str, str] | None = None,
) -> ReplayReport:
    """Validate `record.raw_model_text` again with the current validator and `policy`.

    `chunk_sources` (chunk_id -> source reference) restores the source lines the prompt showed
    above the evidence; without it they come from the record's stored prompt, when kept."""
    if not record.hash_ok():
        return _report(record, policy, replayable=False, reason="record hash does not verify")
    if record.raw_model_text is None or record.llm_generation_status is None:
        return _report(
            record, policy, replayable=False, reason="the model was not called: nothing to replay"
        )
    judged = [c for c in record.model_calls or [] if c.validation_status is not None]
    if judged and judged[-1].raw_output != record.raw_model_text:
        why = "the last judged model call's output is not the record's raw_model_text"
        return _report(record, policy, replayable=False, reason=why)
    texts, why = _evidence_texts(record, chunk_texts)
    if texts is None:
        return _report(record, policy, replayable=False, reason=why)
    view = EvidenceView(
        request_id=record.request_id,
        assembly_status=record.assembly_status or AssemblyStatus.FAILED,
        citation_style=record.citation_style or CitationStyle.C,
        anchors=tuple(ev.anchor for ev in record.evidence),
        texts=texts,
        chunk_ids=tuple(ev.chunk_id for ev in record.evidence),
        question=record.question,
        evidence_chars=record.evidence_chars,
        contexts=_contexts(record, chunk_sources),
    )
    result = validate_view(
        view,
        record.raw_model_text,
        policy,
        generation_status=record.llm_generation_status or GenerationStatus.OK,
        llm_reason=record.llm_failure_reason,
    )
    failure_reason, shown = _shown(view, result, policy)
    changed = (result.validation_status, failure_reason) != (
        record.validation_status,
        record.failure_reason,
    )
    display_changed = record.schema_version >= 5 and shown != record.display_anchors
    calls = []
    for call in judged:
        again = validate_view(
            view, call.raw_output, policy, generation_status=call.generation_status
        )
        calls.append(
            CallReplay(
                stage=call.stage,
                prompt_sha256=call.prompt_sha256,
                stored_validation_status=call.validation_status,
                stored_failure_reason=call.validation_failure_reason,
                new_validation_status=again.validation_status,
                new_failure_reason=again.failure_reason,
                verdict_changed=(again.validation_status, again.failure_reason)
                != (call.validation_status, call.validation_failure_reason),
            )
        )
    return _report(
        record,
        policy,
        replayable=True,
        new_result=result,
        verdict_changed=changed,
        calls=calls,
        display_anchors=shown,
        display_changed=display_changed,
    )


def _shown(
    view: EvidenceView, result: ValidationResult, policy: Policy
) -> tuple[str | None, dict[str, str] | None]:
    """(the request's failure reason, its shown anchors) as packaging derives them from
    `result`: a passed answer whose renumbered text does not validate the same is refused
    with INTERNAL_ERROR, as `package_response` refuses it."""
    if result.generation_status is not GenerationStatus.OK:
        return result.failure_reason, None
    try:
        shown = renumber(view, result, policy)
    except RenumberError:
        return ReasonCode.INTERNAL_ERROR.value, None
    return result.failure_reason, dict(shown.shown)
