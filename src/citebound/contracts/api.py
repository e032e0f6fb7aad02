"""HTTP API contracts (`/v1/...`): request bodies, step-mode views, document views, problems.

Every request body is closed (`extra="forbid"`), so a misspelt field is a 422 that names it,
never a silently ignored option. Views for the web page may carry retrieval scores and chunk
ids (they explain a request to the person who asked it); the `PublicResponse` inside them
never does.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from citebound.contracts.assembly import AnswerBundle, PromptBuildResult
from citebound.contracts.audit import AuditRecord, FeedbackRecord
from citebound.contracts.base import Contract, JsonBool, JsonFloat, JsonInt
from citebound.contracts.conversation import MAX_HISTORY_TURNS, ConversationTurn
from citebound.contracts.packs import PackCitationStyle, PackPromptStyle, RetrievalPack
from citebound.contracts.public import PublicResponse
from citebound.contracts.retrieval import FiltersApplied, RetrievalBundle

# A collection name becomes an index directory name (see store.sqlite_rows).
COLLECTION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"
# Request ids end up in URLs and audit keys: no slashes, no whitespace.
REQUEST_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}$"
# A recorded id: a caller's id is scoped by its collection (`<collection>:<id>`, up to 64 + 1
# + 128 characters; see ApiRuntime.scoped_request_id), a generated one is uuid hex.
RECORDED_REQUEST_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,192}$"
MAX_QUESTION_CHARS = 8000

# What JSON Schema cannot say about a question, said in its description (and excluded, with
# the reason, in schemathesis.toml's hooks): the server normalizes it and counts its tokens.
QUESTION_RULES = (
    "The question, as asked. Besides the length: a question of only whitespace or invisible "
    "characters (U+200B, U+200D, U+00AD, ...) is a 400, more than the policy's "
    "max_question_tokens a 413, and more than the server's max_input_chars (8000 by default) "
    "a 413."
)

ConfidenceLevel = Literal["high", "medium", "low", "none"]


class AnswerRequest(Contract):
    """Question and options for `POST /v1/answer` (and, without history, `/v1/retrieve`)."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description=QUESTION_RULES)
    collection: str | None = Field(
        default=None,
        pattern=COLLECTION_PATTERN,
        description="Collection to search; default: the server's, or the key's first. When "
        "`filters.collection` is given too, the two must be the same (400 otherwise).",
    )
    filters: FiltersApplied | None = Field(default=None, description="Metadata filters.")
    request_id: str | None = Field(
        default=None,
        pattern=REQUEST_ID_PATTERN,
        description="Your request id (must be new in the collection); recorded and returned "
        "as `<collection>:<id>`, so ids are scoped by collection. Generated when absent.",
    )
    history: list[ConversationTurn] = Field(
        default_factory=list,
        max_length=MAX_HISTORY_TURNS,
        description="Earlier turns, oldest first, for a follow-up question (`/v1/answer` "
        "only); the last N4 pairs are used, never as evidence.",
    )


class RetrieveRequest(AnswerRequest):
    """`POST /v1/retrieve`: the question is searched as given, so there is no history."""

    # maxItems 0 in the OpenAPI only: the route's own 400 says to use /v1/answer instead.
    history: list[ConversationTurn] = Field(
        default_factory=list,
        description="Not used here (a follow-up question is `/v1/answer`'s): absent or [] "
        "(400 otherwise).",
        json_schema_extra={"maxItems": 0},
    )


class AssembleRequest(Contract):
    """`POST /v1/assemble`: a retrieval bundle from your own retrieval."""

    bundle: RetrievalBundle = Field(description="Ranked evidence, as retrieval returns it.")
    question: str | None = Field(
        default=None,
        max_length=MAX_QUESTION_CHARS,
        description="Question to answer; default: bundle.user_question.",
    )


class AssembleResponse(Contract):
    """The assembled evidence and the exact prompt that would be sent."""

    answer_bundle: AnswerBundle = Field(description="Selection, anchors, evidence block.")
    prompt: PromptBuildResult = Field(description="Frozen prompt bytes, hash and messages.")


class ValidateRequest(Contract):
    """`POST /v1/validate`: a model answer to check against its answer bundle."""

    answer_bundle: AnswerBundle = Field(description="The bundle the prompt was built from.")
    raw_text: str = Field(max_length=200_000, description="The model's answer, unedited.")


class ChunkBrief(Contract):
    """A chunk as the step view lists it (no text: the document view shows it in place)."""

    chunk_id: str = Field(description="Chunk id.")
    knowledge_id: str = Field(description="Document id.")
    document: str = Field(description="Document name.")
    heading_path: list[str] = Field(default_factory=list, description="Heading hierarchy.")
    page: JsonInt | None = Field(default=None, description="Page, for paged sources.")
    rank: JsonInt = Field(description="Retrieval rank.")
    similarity: JsonFloat = Field(description="Calibrated retrieval similarity in [0, 1].")


class DropBrief(Contract):
    """A dropped chunk with its reason code."""

    chunk_id: str = Field(description="Chunk id.")
    reason_code: str = Field(description="Why it was dropped (DROP_*, GATE_*).")
    detail: str = Field(default="", description="Short explanation.")
    chunk: ChunkBrief | None = Field(default=None, description="The chunk, when known.")


class VerdictView(Contract):
    """The validator's verdict (R5)."""

    validation_status: str = Field(description="PASSED or FAILED.")
    generation_status: str = Field(description="OK, NO_EVIDENCE or FAILED.")
    failure_reason: str | None = Field(default=None, description="First reason code.")
    reason_codes: list[str] = Field(default_factory=list, description="All reason codes.")
    message: str = Field(default="", description="Explanation.")
    attribution_coverage: JsonFloat = Field(description="Cited / factual sentences.")
    min_support: JsonFloat | None = Field(default=None, description="Lowest sentence support.")


class StageView(Contract):
    """What one stage did: the button's panel in step mode."""

    stage: str = Field(description="Stage name (RequestState.stage value).")
    label: str = Field(description="Human label, e.g. `A3 gate`.")
    index: JsonInt = Field(description="1-based position in the stage order.")
    note: str = Field(default="", description="One line about the decision.")
    latency_ms: JsonFloat = Field(default=0.0, description="Stage wall time.")
    kept: list[ChunkBrief] = Field(default_factory=list, description="Chunks kept, in order.")
    dropped: list[DropBrief] = Field(default_factory=list, description="Drops with reasons.")
    prompt_sha256: str | None = Field(default=None, description="Prompt hash, once built.")
    verdict: VerdictView | None = Field(default=None, description="Validator verdict, once run.")


class SourceView(Contract):
    """A cited source with a confidence indicator derived from validation metrics."""

    anchor: str = Field(description="Citation anchor, e.g. C0.")
    knowledge_id: str = Field(description="Document id (opens the document view).")
    chunk_id: str = Field(description="Cited chunk (its span is highlighted).")
    document: str = Field(description="Document name.")
    heading_path: list[str] = Field(default_factory=list, description="Heading hierarchy.")
    page: JsonInt | None = Field(default=None, description="Page, for paged sources.")
    source_reference: str = Field(description="Document > heading path, page.")
    support: JsonFloat = Field(description="Best lexical support of a sentence citing it, 0-1.")
    confidence: ConfidenceLevel = Field(description="high, medium or low.")


class ConfidenceView(Contract):
    """Answer-level confidence from the validator's grounding metrics."""

    level: ConfidenceLevel = Field(description="high, medium, low; none for refusals/failures.")
    attribution_coverage: JsonFloat = Field(description="Cited / factual sentences.")
    min_support: JsonFloat | None = Field(default=None, description="Lowest sentence support.")
    mean_support: JsonFloat | None = Field(default=None, description="Mean sentence support.")
    low_confidence: JsonBool = Field(default=False, description="Passed with limited support.")
    explanation: str = Field(description="One sentence a person can read.")


class AnswerView(Contract):
    """The public response plus what the page shows next to it."""

    response: PublicResponse = Field(description="The R6 public response, unchanged.")
    sources: list[SourceView] = Field(default_factory=list, description="Cited sources.")
    confidence: ConfidenceView = Field(description="Confidence indicator.")


class StepRequest(Contract):
    """`POST /v1/steps`: start a request (`question`) or run the next stage of `state`."""

    # The xor of _start_or_continue, in the OpenAPI: either a question and no state, or a
    # state with its non-empty token and no question.
    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {
                    "required": ["question"],
                    "properties": {"question": {"type": "string"}, "state": {"type": "null"}},
                },
                {
                    "required": ["state", "state_token"],
                    "properties": {
                        "question": {"type": "null"},
                        "state": {"type": "string"},
                        "state_token": {"type": "string", "minLength": 1},
                    },
                },
            ]
        }
    )

    question: str | None = Field(
        default=None, min_length=1, max_length=MAX_QUESTION_CHARS, description="Start: question."
    )
    collection: str | None = Field(
        default=None, pattern=COLLECTION_PATTERN, description="Start: collection."
    )
    filters: FiltersApplied | None = Field(default=None, description="Start: filters.")
    request_id: str | None = Field(
        default=None,
        pattern=REQUEST_ID_PATTERN,
        description="Start: request id, recorded as `<collection>:<id>` (see /v1/answer).",
    )
    history: list[ConversationTurn] = Field(
        default_factory=list,
        max_length=MAX_HISTORY_TURNS,
        description="Start: earlier turns, oldest first (a follow-up question).",
    )
    state: str | None = Field(
        default=None,
        description="Continue: the `state` string of the previous step response, as the server "
        "issued it (its `state_token` signs it: any other state is refused with a 4xx).",
    )
    state_token: str | None = Field(
        default=None, max_length=200, description="Continue: the previous `state_token`."
    )
    stage: str | None = Field(
        default=None, max_length=40, description="Continue: the stage to run (must be next)."
    )
    to_end: JsonBool = Field(default=False, description="Run every remaining stage (auto mode).")

    @model_validator(mode="after")
    def _start_or_continue(self) -> StepRequest:
        if (self.question is None) == (self.state is None):
            raise ValueError("give either `question` (start) or `state` + `state_token`")
        if self.state is not None and not self.state_token:
            raise ValueError("`state` needs the `state_token` it came with")
        return self


class StepButton(Contract):
    """One of the 8 manual-mode buttons (docs/api.md) and the registry stages it runs, in order."""

    name: str = Field(description="Stage display name, e.g. A4_Condenser.")
    stages: list[str] = Field(description="Registry stages this button runs (stage_order names).")


class StepResponse(Contract):
    """The new state (opaque to clients: post it back unchanged) and what the stage did."""

    state: str = Field(description="RequestState as JSON text; post it back byte for byte.")
    state_token: str = Field(description="HMAC binding the state to this server and caller.")
    stage: str = Field(
        description="Last completed request stage (`raw` before any; stays `a5` after it)."
    )
    next_stage: str | None = Field(description="Stage the next call runs; null when done.")
    stage_order: list[str] = Field(description="Every registry stage, in order.")
    buttons: list[StepButton] = Field(
        default_factory=list,
        description="The 8 step-mode buttons, in order, grouping stage_order.",
    )
    labels: dict[str, str] = Field(description="Human label per stage.")
    views: list[StageView] = Field(default_factory=list, description="Stages run in this call.")
    result: AnswerView | None = Field(default=None, description="When the request is complete.")


class Highlight(Contract):
    """The cited chunk's span in `DocumentView.text`."""

    chunk_id: str = Field(description="Chunk id.")
    char_start: JsonInt = Field(description="Start offset in the document text.")
    char_end: JsonInt = Field(description="End offset (exclusive).")
    heading_path: list[str] = Field(default_factory=list, description="Heading hierarchy.")
    page: JsonInt | None = Field(default=None, description="Page, for paged sources.")


class DocumentView(Contract):
    """`GET /v1/documents/{id}`: the source text, with the cited span when asked."""

    knowledge_id: str = Field(description="Document id.")
    title: str = Field(description="Title.")
    collection: str = Field(description="Collection.")
    source_path: str = Field(description="Path as ingested (relative to the ingest root).")
    knowledge_type: str = Field(description="Knowledge type.")
    equipment_id: str | None = Field(default=None, description="Equipment id.")
    event_date: str | None = Field(default=None, description="Event date.")
    text: str = Field(description="Extracted text.")
    page_offsets: list[int] = Field(default_factory=list, description="Page start offsets.")
    highlight: Highlight | None = Field(default=None, description="Span of `chunk_id`.")


class FeedbackRequest(Contract):
    """`POST /v1/feedback`: a person's verdict on an answer."""

    request_id: str = Field(
        pattern=RECORDED_REQUEST_ID_PATTERN,
        description="Request it is about: the `request_id` its response carried.",
    )
    verdict: Literal["correct", "incorrect"] = Field(description="correct or incorrect.")
    comment: str = Field(default="", max_length=4000, description="Free text.")


class AuditView(Contract):
    """`GET /v1/audit/{request_id}` (admin): every record and feedback of a request."""

    request_id: str = Field(description="Request id.")
    records: list[AuditRecord] = Field(description="Audit records, oldest first.")
    feedback: list[FeedbackRecord] = Field(default_factory=list, description="Feedback.")
    integrity: list[str] = Field(
        default_factory=list,
        description="Problems found with these records by the audit chain check (an edit, a "
        "record missing or moved around them: `citebound audit verify`); empty when every "
        "record verifies.",
    )


class Health(Contract):
    status: Literal["ok"] = Field(description="Always ok when the process answers.")
    version: str = Field(description="citebound version.")
    policy_version: str = Field(description="Policy in force.")
    auth_required: JsonBool = Field(description="True when API keys are configured.")


class CollectionsView(Contract):
    collections: list[str] = Field(description="Collections the caller may read.")
    default: str | None = Field(description="Used when a request names none.")
    role: str = Field(description="Caller's role: reader or admin.")
    principal: str = Field(description="Key name, or `anonymous`.")


class ProblemItem(Contract):
    loc: str = Field(description="Where in the request, e.g. body.question.")
    msg: str = Field(description="What is wrong.")


class Problem(Contract):
    """RFC 9457 problem details (`application/problem+json`)."""

    type: str = Field(default="about:blank", description="Problem type URI.")
    title: str = Field(description="Short summary of the problem type.")
    status: JsonInt = Field(description="HTTP status code.")
    detail: str = Field(description="What went wrong and what to do.")
    instance: str | None = Field(default=None, description="Request path.")
    errors: list[ProblemItem] = Field(default_factory=list, description="Field errors.")


MAX_PACKS = 500  # bounded before work: one request cannot ask for an unbounded prompt


class AssemblePromptRequest(Contract):
    """`POST /v1/assemble-prompt`: your packs, or packs retrieved from a collection.

    JSON uses camelCase (`headroomTokens`, `citationStyle`, `perHitNeighbors`);
    snake_case is accepted too (docs/assemble_prompt.md).
    """

    question: str = Field(
        min_length=1, max_length=MAX_QUESTION_CHARS, description="Question or instruction."
    )
    packs: list[RetrievalPack] | None = Field(
        default=None,
        max_length=MAX_PACKS,
        description="Packs to assemble; when absent, they are retrieved for `question`.",
    )
    collection: str | None = Field(
        default=None, pattern=COLLECTION_PATTERN, description="Collection to retrieve from."
    )
    filters: FiltersApplied | None = Field(default=None, description="Retrieval filters.")
    limit: JsonInt = Field(default=5, ge=1, le=100, description="Packs to retrieve.")
    per_hit_neighbors: JsonInt = Field(
        default=0, ge=0, le=10, alias="perHitNeighbors", description="Neighbours per hit."
    )
    expand: Literal["neighbors"] | None = Field(default=None, description="Neighbour expansion.")
    rank: Literal["hybrid", "bm25", "tfidf", "dense"] = Field(
        default="hybrid", description="Ranking for retrieval (`tfidf` = `bm25`)."
    )
    headroom_tokens: JsonInt = Field(
        default=300, ge=0, alias="headroomTokens", description="Context budget (estimated)."
    )
    style: PackPromptStyle = Field(default="qa", description="qa or summarize.")
    citation_style: PackCitationStyle = Field(
        default="numeric", alias="citationStyle", description="numeric [¹] or footnote [^1]."
    )
