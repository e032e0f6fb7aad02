"""OpenAI Responses API contracts (`POST /v1/responses`), the subset citebound serves.

`input` is a string (the question) or a list of messages, oldest first; `instructions` is a
system message (rejected unless `citebound.system_message = "ignore"`). The response is a normal
`response` object whose one `message` output holds an `output_text` part (the validated answer
or the exact refusal, with `url_citation` annotations) and, for a refusal, a `refusal` part.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from citebound.contracts.base import Contract, JsonBool, JsonFloat, JsonInt
from citebound.contracts.chat import MAX_MESSAGES, CiteboundChatOptions, CiteboundResult


class ResponseInputPart(Contract):
    type: Literal["input_text", "output_text", "text", "refusal"] = Field(
        description="Text parts only (earlier outputs may be sent back as they came)."
    )
    text: str | None = Field(default=None, description="The text.")
    refusal: str | None = Field(default=None, description="A refusal part's text.")
    annotations: list[dict[str, Any]] | None = Field(default=None, description="Ignored.")
    logprobs: list[dict[str, Any]] | None = Field(default=None, description="Ignored.")


class ResponseInputMessage(Contract):
    type: Literal["message"] | None = Field(default=None, description="Item type.")
    role: Literal["user", "assistant", "system", "developer"] = Field(description="Role.")
    content: str | list[ResponseInputPart] = Field(description="Text or text parts.")
    id: str | None = Field(default=None, description="Ignored (an earlier output's id).")
    status: str | None = Field(default=None, description="Ignored.")


class ResponsesRequest(Contract):
    model: str = Field(min_length=1, max_length=200, description="`citebound[:<collection>]`.")
    input: str | list[ResponseInputMessage] = Field(
        description="The question, or the conversation ending with the question."
    )
    instructions: str | None = Field(default=None, description="A system message (see above).")
    stream: JsonBool = Field(default=False, description="Server-sent events.")
    max_output_tokens: JsonInt | None = Field(
        default=None, ge=1, description="Lowers the policy's output cap (never raises it)."
    )
    temperature: JsonFloat | None = Field(default=None, description="Ignored: the policy fixes it.")
    top_p: JsonFloat | None = Field(default=None, description="Ignored.")
    metadata: dict[str, str] | None = Field(default=None, description="Ignored.")
    store: JsonBool | None = Field(default=None, description="Ignored (every request is audited).")
    user: str | None = Field(default=None, max_length=200, description="Ignored.")
    previous_response_id: str | None = Field(
        default=None, description="Not supported: send the conversation in `input`."
    )
    citebound: CiteboundChatOptions | None = Field(default=None, description="Collection etc.")

    def messages(self) -> list[tuple[str, str]]:
        """(role, text) in order, `instructions` first; ValueError past MAX_MESSAGES items."""
        if not isinstance(self.input, str) and len(self.input) > MAX_MESSAGES:
            raise ValueError(f"input has {len(self.input)} messages; at most {MAX_MESSAGES}")
        out = [("system", self.instructions)] if self.instructions is not None else []
        if isinstance(self.input, str):
            return [*out, ("user", self.input)]
        for m in self.input:
            if isinstance(m.content, str):
                text = m.content
            else:
                text = "\n".join(p.text or p.refusal or "" for p in m.content)
            out.append((m.role, text))
        return out


class OutputAnnotation(Contract):
    type: Literal["url_citation"] = Field(default="url_citation", description="Type.")
    start_index: JsonInt = Field(description="First character of the marker.")
    end_index: JsonInt = Field(description="One past its last character.")
    title: str = Field(description="Source reference.")
    url: str = Field(description="/v1/documents/{id}?chunk_id=...")


class OutputText(Contract):
    type: Literal["output_text"] = Field(default="output_text", description="Type.")
    text: str = Field(description="Validated answer, exact refusal, or empty when FAILED.")
    annotations: list[OutputAnnotation] = Field(default_factory=list, description="Citations.")
    logprobs: list[dict[str, Any]] = Field(default_factory=list, description="Not available.")


class OutputRefusal(Contract):
    type: Literal["refusal"] = Field(default="refusal", description="Type.")
    refusal: str = Field(description="The exact refusal text.")


class OutputMessage(Contract):
    type: Literal["message"] = Field(default="message", description="Type.")
    id: str = Field(description="msg_<request_id>.")
    status: Literal["in_progress", "completed", "incomplete"] = Field(description="Status.")
    role: Literal["assistant"] = Field(default="assistant", description="Role.")
    content: list[OutputText | OutputRefusal] = Field(description="Parts.")


class InputTokensDetails(Contract):
    cached_tokens: JsonInt = Field(default=0, description="Always 0.")


class OutputTokensDetails(Contract):
    reasoning_tokens: JsonInt = Field(default=0, description="Always 0.")


class ResponseUsage(Contract):
    input_tokens: JsonInt = Field(description="Prompt tokens.")
    input_tokens_details: InputTokensDetails = Field(default_factory=InputTokensDetails)
    output_tokens: JsonInt = Field(description="Output tokens.")
    output_tokens_details: OutputTokensDetails = Field(default_factory=OutputTokensDetails)
    total_tokens: JsonInt = Field(description="Sum.")


class ResponseObject(Contract):
    id: str = Field(description="resp_<request_id>.")
    object: Literal["response"] = Field(default="response", description="Type.")
    created_at: JsonInt = Field(description="Unix time.")
    status: Literal["in_progress", "completed", "incomplete"] = Field(description="Status.")
    model: str = Field(description="Model as requested.")
    output: list[OutputMessage] = Field(description="One assistant message.")
    usage: ResponseUsage | None = Field(default=None, description="Token usage.")
    error: None = Field(default=None, description="Errors are HTTP errors.")
    incomplete_details: dict[str, str] | None = Field(default=None, description="Why incomplete.")
    instructions: str | None = Field(default=None, description="As sent (ignored).")
    max_output_tokens: JsonInt | None = Field(default=None, description="As sent.")
    metadata: dict[str, str] = Field(default_factory=dict, description="As sent.")
    parallel_tool_calls: JsonBool = Field(default=False, description="No tools.")
    temperature: JsonFloat | None = Field(default=None, description="As sent (ignored).")
    top_p: JsonFloat | None = Field(default=None, description="As sent (ignored).")
    tool_choice: Literal["none"] = Field(default="none", description="No tools.")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="No tools.")
    citebound: CiteboundResult | None = Field(default=None, description="Status and citations.")
