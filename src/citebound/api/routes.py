"""REST endpoints under `/v1` (answer, retrieve, assemble, validate, documents, feedback, audit)
plus `/healthz` and `/metrics`. Step mode and the OpenAI-compatible endpoint have their own
modules.

Handlers are plain `def`: FastAPI runs them on its thread pool, so a slow request does not
block the event loop.
"""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Path, Query, status
from fastapi.responses import PlainTextResponse, Response

from citebound._version import __version__
from citebound.api.deps import Admin, Caller, Runtime, problems
from citebound.api.metrics import CONTENT_TYPE
from citebound.api.runtime import ApiRuntime, ensure_recorded
from citebound.assemble import assemble_and_build
from citebound.audit import audit_api_json, utc_now
from citebound.contracts.api import (
    AnswerRequest,
    AssemblePromptRequest,
    AssembleRequest,
    AssembleResponse,
    AuditView,
    CollectionsView,
    DocumentView,
    FeedbackRequest,
    Health,
    Highlight,
    RetrieveRequest,
    ValidateRequest,
)
from citebound.contracts.audit import AuditRecord, FeedbackRecord
from citebound.contracts.execution import ValidationResult
from citebound.contracts.packs import AssembledPrompt
from citebound.contracts.public import PublicResponse
from citebound.contracts.retrieval import RetrievalBundle, display_path
from citebound.errors import ContractError, NotFound
from citebound.packs import retrieve_packs
from citebound.validate import validate_text

router = APIRouter(prefix="/v1")
service = APIRouter()

# Ids come from the store, but a path segment is caller input: no separators, no dot-dot, no
# control characters, so an id can never be read as a path (documents are only ever looked
# up by id in the store, never on disk).
_SAFE_ID = re.compile(r"^[^/\\\x00-\x1f\x7f]{1,256}$")


# The same rule as a JSON Schema pattern, for the OpenAPI only (check_id stays the check, so a
# bad id is still the documented 400): characters but '/', '\\' and controls, a dot never
# followed by a dot, and at least one character that is neither a space nor a dot.
_ID_CHAR = r"[^/\\\x00-\x1f\x7f.]"
_ID_VISIBLE = r"[^/\\\x00-\x1f\x7f. ]"
SAFE_ID_PATTERN = rf"^(?:\.?{_ID_CHAR})*\.?{_ID_VISIBLE}(?:\.?{_ID_CHAR})*\.?$"


def _id_param(what: str) -> object:
    return Path(
        description=f"{what} (no '/', '\\', '..' or control character; 400 otherwise).",
        json_schema_extra={"pattern": SAFE_ID_PATTERN, "minLength": 1, "maxLength": 256},
    )


def check_id(value: str, what: str) -> str:
    if not _SAFE_ID.fullmatch(value) or ".." in value or value.strip(" .") == "":
        raise ContractError(f"{what} {value!r} is not a valid id (no '/', '\\\\' or '..')")
    return value


@router.post(
    "/answer",
    response_model=PublicResponse,
    responses=problems(400, 401, 403, 404, 409, 413, 422),
)
def answer(
    body: AnswerRequest,
    rt: Runtime,
    who: Caller,
) -> PublicResponse:
    """Answer a question from the caller's collection: cited and validated, or refused.
    With `history` (earlier turns, oldest first) the question is a follow-up."""
    # Lazy: citebound.retrieve loads tantivy and the retriever, ~40-60 ms more of importing this
    # module (measured in a fresh process, as python -X importtime shows).
    from citebound.retrieve import compile_filters

    rt.check_question(body.question)
    rt.check_texts(
        [body.question, *(t for turn in body.history for t in (turn.question, turn.answer))],
        "the question and its history",
    )
    collection, filters = rt.resolve_collection(who, body.collection, body.filters)
    compile_filters(filters)  # a bad date is the caller's 400, not a FAILED answer
    request_id = rt.scoped_request_id(collection, body.request_id)
    rt.require_new_request_id(request_id)
    with rt.slot():
        state = rt.pipeline.start(
            body.question,
            collection=collection,
            filters=filters,
            request_id=request_id,
            history=body.history,
        )
        # Claim the id so two concurrent posts of one request_id make one model call.
        with rt.model_call(state.request_id, check_audit=False):
            state = ensure_recorded(rt.pipeline.finish(state))
    rt.metrics.observe_request(state)
    assert state.response is not None
    return state.response


@router.post(
    "/retrieve",
    response_model=RetrievalBundle,
    responses=problems(400, 401, 403, 404, 413, 422),
)
def retrieve(
    body: RetrieveRequest,
    rt: Runtime,
    who: Caller,
) -> RetrievalBundle:
    """Ranked evidence for a question (retrieval, rerank, gate and neighbours)."""
    from citebound.retrieve import compile_filters

    rt.check_question(body.question)
    if body.history:
        raise ContractError(
            "history is for /v1/answer: /v1/retrieve searches the question as given"
        )
    collection, filters = rt.resolve_collection(who, body.collection, body.filters)
    compile_filters(filters)
    with rt.slot():
        return rt.ctx.retriever.retrieve(
            body.question,
            collection=collection,
            filters=filters,
            policy=rt.ctx.policy,
            request_id=rt.scoped_request_id(collection, body.request_id),
        )


@router.post("/assemble", response_model=AssembleResponse, responses=problems(400, 401, 413, 422))
def assemble(
    body: AssembleRequest,
    rt: Runtime,
    who: Caller,
) -> AssembleResponse:
    """Assemble your own retrieval bundle and build the exact prompt (no model call)."""
    from citebound.retrieve import compile_filters

    rt.check_texts([body.question or "", body.bundle.user_question], what="the question")
    compile_filters(body.bundle.filters_applied)  # a bad date is a 400, as on every route
    with rt.slot():
        outcome = assemble_and_build(body.bundle, rt.ctx.policy, question=body.question)
    return AssembleResponse(answer_bundle=outcome.bundle, prompt=outcome.prompt)


@router.post(
    "/assemble-prompt",
    response_model=AssembledPrompt,
    responses=problems(400, 401, 403, 404, 413, 422),
)
def assemble_prompt(
    body: AssemblePromptRequest,
    rt: Runtime,
    who: Caller,
) -> AssembledPrompt:
    """Packs (yours, or retrieved from your collection) -> system + user prompt with
    citation markers. No model call; JSON in camelCase."""
    # Here rather than at the top: this module's route function of the same name would hide it.
    from citebound.packs import assemble_prompt as assemble
    from citebound.retrieve import compile_filters

    rt.check_question(body.question)  # the one input policy (api/limits.py), before any work
    compile_filters(body.filters)  # a bad date is a 400 even when your packs need no retrieval
    with rt.slot():
        packs = body.packs
        if packs is None:
            collection, filters = rt.resolve_collection(who, body.collection, body.filters)
            compile_filters(filters)
            packs = retrieve_packs(
                body.question,
                limit=body.limit,
                per_hit_neighbors=body.per_hit_neighbors,
                expand=body.expand,
                rank=body.rank,
                retriever=rt.ctx.retriever,
                collection=collection,
                filters=filters,
                policy=rt.ctx.policy,
            )
        return assemble(
            body.question,
            packs,
            headroom_tokens=body.headroom_tokens,
            style=body.style,
            citation_style=body.citation_style,
        )


@router.post("/validate", response_model=ValidationResult, responses=problems(400, 401, 413, 422))
def validate(
    body: ValidateRequest,
    rt: Runtime,
    who: Caller,
) -> ValidationResult:
    """Validate a model answer against its answer bundle (R5); never edits the answer."""
    with rt.slot():
        return validate_text(body.answer_bundle, body.raw_text, rt.ctx.policy)


@router.get(
    "/documents/{knowledge_id}",
    response_model=DocumentView,
    responses=problems(400, 401, 404),
)
def document(
    knowledge_id: Annotated[str, _id_param("The document id")],
    rt: Runtime,
    who: Caller,
    chunk_id: Annotated[
        str | None,
        Query(
            description="Chunk whose span to highlight (an id as in the path; 400 otherwise).",
            json_schema_extra={"pattern": SAFE_ID_PATTERN, "minLength": 1, "maxLength": 256},
        ),
    ] = None,
) -> DocumentView:
    """A source document, with the cited chunk's span when `chunk_id` is given."""
    check_id(knowledge_id, "document id")
    doc = rt.ctx.store.get_document(knowledge_id)
    # Same 404 for "absent" and "not yours": a caller cannot probe other collections.
    if doc is None or not who.may_read(doc.collection):
        raise NotFound(f"no document {knowledge_id!r} in your collections")
    highlight = None
    if chunk_id is not None:
        check_id(chunk_id, "chunk id")
        chunks = rt.ctx.store.get_chunks([chunk_id])
        if not chunks or chunks[0].knowledge_id != doc.knowledge_id:
            raise NotFound(f"document {knowledge_id!r} has no chunk {chunk_id!r}")
        c = chunks[0]
        highlight = Highlight(
            chunk_id=c.chunk_id,
            char_start=c.char_start,
            char_end=c.char_end,
            heading_path=display_path(doc.title, c.heading_path),
            page=c.page,
        )
    return DocumentView(
        knowledge_id=doc.knowledge_id,
        title=doc.title,
        collection=doc.collection,
        source_path=doc.source_path,
        knowledge_type=doc.knowledge_type,
        equipment_id=doc.equipment_id,
        event_date=doc.event_date,
        text=doc.text,
        page_offsets=doc.page_offsets,
        highlight=highlight,
    )


@router.post(
    "/feedback",
    response_model=FeedbackRecord,
    status_code=status.HTTP_201_CREATED,
    responses=problems(400, 401, 404, 413, 422),
)
def feedback(
    body: FeedbackRequest,
    rt: Runtime,
    who: Caller,
) -> FeedbackRecord:
    """Store a verdict (correct / incorrect) on an answered request, append-only."""
    sink = rt.feedback_sink()
    records = sink.find(body.request_id)
    # Same rule as /v1/audit: a request is the caller's to judge only when every collection
    # it cites is readable; one that cites nothing (a refusal, an early failure) only for keys
    # on every collection, since the record does not say which collection it searched. The
    # same 404 for "absent" and "not yours", so ids of other collections cannot be probed.
    if not records or not all(rt.may_see_record(who, r) for r in records):
        raise NotFound(f"no answered request {body.request_id!r} visible to you")
    record = FeedbackRecord(
        request_id=body.request_id,
        verdict=body.verdict,
        comment=body.comment,
        timestamp_utc=utc_now(),
    )
    sink.append_feedback(record)
    return record


def _integrity(rt: ApiRuntime, records: list[AuditRecord]) -> list[str]:
    """What the chain check (audit/chain.py) says of `records`, in every sink that has one."""
    out = [f"EDITED: record {r.request_id} does not match its record_hash" for r in records
           if not r.hash_ok()]  # fmt: skip
    for sink in rt.ctx.sinks:
        verify_chain = getattr(sink, "verify_chain", None)
        if verify_chain is not None:
            report = verify_chain()
            out += [flag for r in records if (flag := report.flag(r)) and flag not in out]
    return out


@router.get("/audit/{request_id}", response_model=AuditView, responses=problems(400, 401, 403, 404))
def audit(
    request_id: Annotated[str, _id_param("The request id")],
    rt: Runtime,
    who: Admin,
) -> Response:
    """Every audit record and feedback of a request (admin keys only).

    Strict JSON: a non-finite number (a NaN support score) is the string "NaN", "Infinity" or
    "-Infinity" in its number field; parsed with the schema, every record verifies against its
    `record_hash` (docs/audit.md)."""
    check_id(request_id, "request id")
    records = [r for s in rt.ctx.sinks for r in s.find(request_id)]
    # Sinks may hold the same record (sqlite + delta): keep one per record hash.
    unique = list({r.record_hash: r for r in records}.values())
    if not unique or not all(rt.may_see_record(who, r) for r in unique):
        raise NotFound(f"no audit record {request_id!r} visible to key {who.name!r}")
    sink = next((s for s in rt.ctx.sinks if hasattr(s, "feedback")), None)
    notes = sink.feedback(request_id) if sink is not None else []
    view = AuditView(
        request_id=request_id, records=unique, feedback=notes, integrity=_integrity(rt, unique)
    )
    # Strict JSON that browsers parse (audit/text.py): a record with a NaN score keeps it as
    # the string "NaN" (FastAPI's encoder refuses NaN; bare NaN breaks JSON.parse) and reads
    # back with its hash.
    return Response(audit_api_json(view), media_type="application/json")


@router.get("/collections", response_model=CollectionsView, responses=problems(401))
def collections(
    rt: Runtime,
    who: Caller,
) -> CollectionsView:
    """Collections the caller may read, and the one used when a request names none."""
    return CollectionsView(
        collections=rt.visible_collections(who),
        default=rt.default_collection(who),
        role=who.role,
        principal=who.name,
    )


@service.get("/healthz", response_model=Health)
def healthz(rt: Runtime) -> Health:
    """Liveness: no authentication, no document data."""
    return Health(
        status="ok",
        version=__version__,
        policy_version=rt.ctx.policy.policy_version,
        auth_required=rt.keyring.enabled,
    )


@service.get("/metrics", response_class=PlainTextResponse)
def metrics(rt: Runtime) -> PlainTextResponse:
    """Prometheus text exposition: counts and latencies only, no document data."""
    return PlainTextResponse(rt.metrics.render(), media_type=CONTENT_TYPE)
