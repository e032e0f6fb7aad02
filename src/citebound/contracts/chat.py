"""OpenAI-compatible Chat Completions contracts (`POST /v1/chat/completions`).

The request accepts the parameters OpenAI clients commonly send; sampling parameters are
accepted and ignored (the policy fixes them), and anything else is refused with a 422 that
names the field. The response is a normal `chat.completion` (or `chat.completion.chunk`
stream) plus one extra top-level field, `citebound`, with the status and citations.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from citebound.contracts.api import COLLECTION_PATTERN, AnswerView, StageView
from citebound.contracts.base import Contract, JsonBool, JsonFloat, JsonInt
from citebound.contracts.conversation import MAX_HISTORY_TURNS
from citebound.contracts.enums import PublicStatus
from citebound.contracts.public import PublicCitation
from citebound.contracts.retrieval import FiltersApplied


class ChatContentPart(Contract):
    """A text part of a multi-part message (images are not evidence and are refused)."""

    type: Literal["text"] = Field(description="Only `text` parts are accepted.")
    text: str = Field(description="The text.")


# Most messages one request may carry: every turn pair of the history plus system messages.
# Only the last N4 pairs are used; this bounds parsing, the input-size policy bounds the text.
MAX_MESSAGES = 2 * MAX_HISTORY_TURNS + 16


class ChatInMessage(Contract):
    role: Literal["system", "developer", "user", "assistant", "tool"] = Field(
        description="Message role. The last message must be `user` (the question); earlier "
        "user/assistant pairs are the conversation; system messages: see `citebound`."
    )
    content: str | list[ChatContentPart] | None = Field(default=None, description="Content.")
    name: str | None = Field(default=None, description="Participant name (ignored).")


class ChatStreamOptions(Contract):
    include_usage: JsonBool | None = Field(
        default=None, description="Send a usage chunk at the end."
    )


class CiteboundChatOptions(Contract):
    """Extra request field (`extra_body={"citebound": {...}}` in the openai package)."""

    collection: str | None = Field(
        default=None, pattern=COLLECTION_PATTERN, description="Collection to search."
    )
    filters: FiltersApplied | None = Field(default=None, description="Metadata filters.")
    system_message: Literal["reject", "ignore"] = Field(
        default="reject",
        description="A system/developer message cannot change citebound's frozen prompt: "
        "`reject` (default) answers 400; `ignore` answers without it and records that it "
        "was ignored.",
    )
    view: JsonBool = Field(
        default=False,
        description="Add the web page's answer view (sources with support) to the result.",
    )


class ChatCompletionRequest(Contract):
    model: str = Field(
        min_length=1,
        max_length=200,
        description="Any name; `citebound:<collection>` selects a collection.",
    )
    messages: list[ChatInMessage] = Field(
        min_length=1, max_length=MAX_MESSAGES, description="The conversation."
    )
    stream: JsonBool = Field(default=False, description="Send the answer as server-sent events.")
    stream_options: ChatStreamOptions | None = Field(default=None, description="Streaming.")
    temperature: JsonFloat | None = Field(default=None, description="Ignored: the policy fixes it.")
    top_p: JsonFloat | None = Field(default=None, description="Ignored.")
    max_tokens: JsonInt | None = Field(
        default=None, ge=1, description="Lowers the policy's output cap (never raises it)."
    )
    max_completion_tokens: JsonInt | None = Field(
        default=None, ge=1, description="Same as max_tokens (the lower of the two applies)."
    )
    n: JsonInt | None = Field(default=None, ge=1, le=1, description="Only 1 choice.")
    seed: JsonInt | None = Field(default=None, description="Ignored (answers are deterministic).")
    stop: str | list[str] | None = Field(default=None, description="Ignored.")
    presence_penalty: JsonFloat | None = Field(default=None, description="Ignored.")
    frequency_penalty: JsonFloat | None = Field(default=None, description="Ignored.")
    user: str | None = Field(default=None, max_length=200, description="End-user id (ignored).")
    metadata: dict[str, str] | None = Field(default=None, description="Ignored.")
    store: JsonBool | None = Field(default=None, description="Ignored (every request is audited).")
    citebound: CiteboundChatOptions | None = Field(default=None, description="Collection etc.")


class UrlCitation(Contract):
    start_index: JsonInt = Field(description="First character of the citation marker in content.")
    end_index: JsonInt = Field(description="One past its last character.")
    title: str = Field(description="Source: document > heading path, page.")
    url: str = Field(description="The cited document: /v1/documents/{id}?chunk_id=...")


class ChatAnnotation(Contract):
    type: Literal["url_citation"] = Field(default="url_citation", description="Type.")
    url_citation: UrlCitation = Field(description="Where a citation marker points.")


class ChatOutMessage(Contract):
    role: Literal["assistant"] = Field(default="assistant", description="Always assistant.")
    content: str = Field(description="Validated answer, exact refusal, or empty when FAILED.")
    refusal: str | None = Field(
        default=None, description="The exact refusal text when citebound refused (also content)."
    )
    annotations: list[ChatAnnotation] = Field(
        default_factory=list, description="One url_citation per citation marker in content."
    )


class ChatChoice(Contract):
    index: JsonInt = Field(default=0, description="Always 0.")
    message: ChatOutMessage = Field(description="The answer.")
    finish_reason: Literal["stop", "content_filter"] = Field(
        description="stop; content_filter when validation failed (status FAILED)."
    )
    logprobs: None = Field(default=None, description="Not available.")


class ChatUsage(Contract):
    prompt_tokens: JsonInt = Field(description="Prompt tokens (0 when no model was called).")
    completion_tokens: JsonInt = Field(description="Completion tokens.")
    total_tokens: JsonInt = Field(description="Total tokens.")


class CiteboundResult(Contract):
    """The extra top-level field: what a citebound-aware client needs."""

    request_id: str = Field(description="Request id (audit key).")
    status: PublicStatus = Field(description="OK, NO_EVIDENCE or FAILED.")
    citations: list[PublicCitation] = Field(default_factory=list, description="Cited sources.")
    failure_reason: str | None = Field(default=None, description="Reason code when FAILED.")
    low_confidence: JsonBool = Field(default=False, description="Limited support.")
    view: AnswerView | None = Field(
        default=None, description="The web page's answer view, when `citebound.view` asked."
    )
    stages: list[StageView] | None = Field(
        default=None, description="What each stage did, when `citebound.view` asked."
    )


class ChatCompletion(Contract):
    id: str = Field(description="chatcmpl-<request_id>.")
    object: Literal["chat.completion"] = Field(default="chat.completion", description="Type.")
    created: JsonInt = Field(description="Unix time.")
    model: str = Field(description="Model name as requested.")
    choices: list[ChatChoice] = Field(description="One choice.")
    usage: ChatUsage = Field(description="Token usage.")
    citebound: CiteboundResult = Field(description="Status and citations.")


class ChatDelta(Contract):
    role: Literal["assistant"] | None = Field(default=None, description="First chunk only.")
    content: str | None = Field(default=None, description="Next piece of the answer.")
    refusal: str | None = Field(default=None, description="The refusal, on the last chunk.")
    annotations: list[ChatAnnotation] | None = Field(
        default=None, description="Citations of the whole content, on the last chunk."
    )


class ChatChunkChoice(Contract):
    index: JsonInt = Field(default=0, description="Always 0.")
    delta: ChatDelta = Field(description="Increment.")
    finish_reason: Literal["stop", "content_filter"] | None = Field(
        default=None, description="Set on the last content chunk."
    )
    logprobs: None = Field(default=None, description="Not available.")


class ChatCompletionChunk(Contract):
    id: str = Field(description="Same id on every chunk.")
    object: Literal["chat.completion.chunk"] = Field(
        default="chat.completion.chunk", description="Type."
    )
    created: JsonInt = Field(description="Unix time.")
    model: str = Field(description="Model name as requested.")
    choices: list[ChatChunkChoice] = Field(description="Zero or one choice.")
    usage: ChatUsage | None = Field(default=None, description="Last chunk, when asked.")
    citebound: CiteboundResult | None = Field(default=None, description="On the last chunk.")


class ModelCard(Contract):
    id: str = Field(description="`citebound:<collection>`.")
    object: Literal["model"] = Field(default="model", description="Type.")
    created: JsonInt = Field(default=0, description="Unix time (0: not tracked).")
    owned_by: str = Field(default="citebound", description="Owner.")


class ModelList(Contract):
    object: Literal["list"] = Field(default="list", description="Type.")
    data: list[ModelCard] = Field(description="One model per readable collection.")


class OpenAIErrorDetail(Contract):
    """OpenAI's error object, so SDKs show the message (`openai.NotFoundError: ...`)."""

    message: str = Field(description="What went wrong and what to do.")
    type: str = Field(description="OpenAI's error type, e.g. invalid_request_error.")
    param: str | None = Field(default=None, description="The request field at fault, if any.")
    code: str | None = Field(default=None, description="e.g. model_not_found.")


class OpenAIError(Contract):
    """The error body of the OpenAI-compatible routes (`/v1/chat/completions`,
    `/v1/responses`, `/v1/models`); every other route answers problem+json."""

    error: OpenAIErrorDetail = Field(description="The error.")
