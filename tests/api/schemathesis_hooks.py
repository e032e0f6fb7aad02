"""Schemathesis hooks (loaded by schemathesis.toml): the request rules JSON Schema cannot say.

Each rule below is documented in the OpenAPI description of its field and enforced by the
server with a 400/422; schemathesis's `positive_data_acceptance` would call each such
schema-valid request a failure. Only *positive* cases that break one of these rules are
skipped, each for its reason; every other case, and every negative case, is sent.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from pydantic import ValidationError

from citebound.api.limits import InputLimits, check_question, check_texts
from citebound.contracts.api import MAX_QUESTION_CHARS
from citebound.errors import ContractError
from citebound.policy.model import load_policy


def _has_integral_float(value: Any) -> bool:
    # JSON Schema's `integer` includes 5.0; the contracts take a JSON integer only (seed 001:
    # a rank of 0.0 is V1_SCHEMA), a distinction no JSON Schema keyword can draw.
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(_has_integral_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_integral_float(v) for v in value)
    return False


def _question_refused(body: dict[str, Any]) -> bool:
    # A question within maxLength can still be empty after the prompt builder's normalization
    # (whitespace, ZWJ, soft hyphen ...: 400) or over the policy's max_question_tokens (413):
    # the server's own check_question, with the limits of `serve --demo` (strict-v1, 8000).
    question = body.get("question")
    if not isinstance(question, str):
        return False
    policy = load_policy()
    limits = InputLimits(
        max_chars=MAX_QUESTION_CHARS,
        max_question_tokens=policy.max_question_tokens,
        tokenizer=policy.tokenizer,
    )
    turns = body.get("history") if isinstance(body.get("history"), list) else []
    texts = [question] + [
        str(t.get(k) or "") for t in turns if isinstance(t, dict) for k in ("question", "answer")
    ]
    try:
        check_question(question, limits)
        # the question and its history together are bounded by max_input_chars too (413)
        check_texts(texts, limits, what="the question and its history")
    except ContractError:
        return True
    return False


def _collections_disagree(body: dict[str, Any]) -> bool:
    filters = body.get("filters")
    via_filter = filters.get("collection") if isinstance(filters, dict) else None
    return bool(body.get("collection") and via_filter and body["collection"] != via_filter)


def _fails_cross_field_rule(path: str, body: dict[str, Any]) -> bool:
    # Model validators that tie fields together (an OK answer bundle needs its trace, evidence
    # text and a complete anchor map; a span ends after it starts ...): value_error only.
    from citebound.contracts.api import AssemblePromptRequest, AssembleRequest, ValidateRequest

    model = {
        "/v1/validate": ValidateRequest,
        "/v1/assemble": AssembleRequest,
        "/v1/assemble-prompt": AssemblePromptRequest,
    }.get(path)
    if model is None:
        return False
    try:
        model.model_validate(body)
    except ValidationError as err:
        return any(e["type"] == "value_error" for e in err.errors())
    return False


def _breaks_conversation(path: str, body: dict[str, Any]) -> bool:
    # docs/api.md's conversation rules (the last message is a non-empty user question, no tool
    # messages, system messages only with system_message "ignore", the model and
    # citebound.collection agree), checked with the server's own functions. JSON Schema can
    # constrain one message, not the order and roles of the list.
    from citebound.api.openai_common import conversation_of
    from citebound.api.openai_compat import message_text
    from citebound.contracts.chat import ChatCompletionRequest
    from citebound.contracts.responses import ResponsesRequest

    try:
        if path == "/v1/responses":
            request = ResponsesRequest.model_validate(body)
            if request.previous_response_id is not None:
                return True  # documented 400: no conversation is kept on the server
            messages = request.messages()
        else:
            chat = ChatCompletionRequest.model_validate(body)
            messages = [(m.role, message_text(m)) for m in chat.messages]
        options = body.get("citebound") or {}
        conv = conversation_of(messages, options.get("system_message") or "reject")
        return _question_refused({"question": conv.question}) or _model_disagrees(body)
    except (ValueError, ContractError):
        return True


def _model_disagrees(body: dict[str, Any]) -> bool:
    model = body.get("model")
    options = body.get("citebound") or {}
    wanted = options.get("collection")
    if not isinstance(model, str) or not wanted:
        return False
    return model.startswith("citebound:") and model != f"citebound:{wanted}"


@schemathesis.hook
def filter_case(ctx: Any, case: Any) -> bool:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return True
    body = case.body if isinstance(case.body, dict) else None
    if body is None:
        return True
    path = case.operation.path
    if _has_integral_float(body):
        return False
    question_routes = ("/v1/answer", "/v1/retrieve", "/v1/steps", "/v1/assemble-prompt")
    if path in (*question_routes, "/v1/assemble") and (
        _question_refused(body) or _collections_disagree(body)
    ):
        return False
    if path == "/v1/steps" and body.get("state") is not None:
        return False  # a state is signed by the server: a generator cannot make a valid one
    if path in ("/v1/chat/completions", "/v1/responses") and _breaks_conversation(path, body):
        return False
    return not _fails_cross_field_rule(path, body)
