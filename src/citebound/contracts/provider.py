"""What crosses the boundary between the execution wrapper (R4) and an LLM provider.

The wrapper builds one `ProviderRequest` per execution and hands the *same* object to every
attempt, which is how "identical parameters and identical prompt bytes on every retry" is
made structural rather than a convention. A provider answers with a `ProviderReply` or raises
`citebound.errors.ProviderError`.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from citebound.contracts.assembly import AnswerBundle, ChatMessage
from citebound.contracts.base import Contract, sha256_hex


class ProviderRequest(Contract):
    """One frozen call: exact messages plus the policy's execution parameters."""

    request_id: str = Field(description="Request id, for logs and provider-side tracing.")
    messages: tuple[ChatMessage, ChatMessage] = Field(
        description="Exactly (system, user), content byte-identical to the built prompt."
    )
    prompt_sha256: str = Field(description="sha256 of system + '\\n\\n' + user (UTF-8).")
    temperature: float = Field(description="Sampling temperature (policy.llm).")
    max_output_tokens: int = Field(description="Output-token cap (policy.llm).")
    timeout_s: float = Field(gt=0, description="Per-attempt timeout in seconds (policy.llm).")
    refusal_text: str = Field(
        description="The policy's exact model refusal string; offline providers emit it."
    )
    answer_bundle: AnswerBundle | None = Field(
        default=None,
        description="The evidence the prompt was built from; only offline providers read it.",
    )
    followup_terms: str = Field(
        default="",
        description="Terms a follow-up rewrite carried from earlier turns; only offline "
        "providers read them (a model reads the prompt's Recent conversation block).",
    )

    @model_validator(mode="after")
    def _messages_match_hash(self) -> ProviderRequest:
        system, user = self.messages
        if system.role != "system" or user.role != "user":
            raise ValueError("messages must be exactly (system, user)")
        if sha256_hex(self.prompt_text) != self.prompt_sha256:
            raise ValueError("prompt_sha256 does not match the messages")
        return self

    @property
    def prompt_text(self) -> str:
        """The prompt bytes as one string: system content, a blank line, user content."""
        return self.messages[0].content + "\n\n" + self.messages[1].content


class ProviderReply(Contract):
    """What a provider returned, unparsed and unedited."""

    text: str = Field(description="Model output exactly as returned.")
    finish_reason: str | None = Field(
        default=None, description="Normalized finish reason: stop, length, or the provider's own."
    )
    response_id: str | None = Field(default=None, description="Provider response id.")
    reported_model: str | None = Field(
        default=None, description="Model name the server reported (logged, never substituted)."
    )
    prompt_tokens: int | None = Field(default=None, description="Input tokens, if reported.")
    completion_tokens: int | None = Field(default=None, description="Output tokens, if reported.")
    total_tokens: int | None = Field(default=None, description="Total tokens, if reported.")
