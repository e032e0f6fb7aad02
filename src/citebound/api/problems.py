"""One mapping from the exception tree to HTTP statuses, and problem+json bodies for all errors.

    CiteboundError ............ 500  (anything not listed below)
    ├── ConfigError ........... 500  the server is misconfigured (the detail says which field)
    ├── ContractError ......... 400  a request value breaks a contract (e.g. a bad filter date)
    │   └── InputTooLarge ..... 413  caller text over api.max_input_chars / max_question_tokens
    ├── PipelineOrderError .... 409  a step was posted out of order or already recorded
    ├── StageError ............ 502  (ProviderError: 503 when transient, else 502)
    ├── StoreError ............ 503  the store or an index cannot be read
    ├── AuditError ............ 503  the audit record could not be written: no answer is given
    ├── AccessDenied .......... 401 / 403 (carried by the error)
    └── NotFound .............. 404  (also for objects of collections the caller cannot read)

Request validation errors are 422 (400 when the body is not JSON at all), an oversized body is
413, and an unexpected exception is a 500 problem whose detail never includes a traceback.

On the OpenAI-compatible routes (`OPENAI_PATHS`) the same errors, with the same statuses, use
OpenAI's body `{"error": {"message", "type", "param", "code"}}` instead, so OpenAI SDKs show
the message (they do not read problem+json).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from citebound.api.limits import InputTooLarge
from citebound.contracts.api import Problem, ProblemItem
from citebound.errors import (
    AccessDenied,
    AuditError,
    CiteboundError,
    ConfigError,
    ContractError,
    NotFound,
    PipelineOrderError,
    ProviderError,
    StageError,
    StoreError,
)

log = logging.getLogger("citebound.api")

PROBLEM_JSON = "application/problem+json"
OPENAI_PATHS = ("/v1/chat/completions", "/v1/responses", "/v1/models")
_OPENAI_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def openai_error_type(status: int) -> str:
    """OpenAI's `error.type` for an HTTP status."""
    return _OPENAI_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")


# Most specific class first; the first isinstance match wins.
STATUS_BY_ERROR: tuple[tuple[type[CiteboundError], int, str], ...] = (
    (NotFound, 404, "Not found"),
    (AccessDenied, 403, "Forbidden"),
    (InputTooLarge, 413, "Input too large"),
    (ContractError, 400, "Bad request"),
    (PipelineOrderError, 409, "Conflict"),
    (ProviderError, 502, "LLM provider failed"),
    (StageError, 502, "Pipeline stage failed"),
    (StoreError, 503, "Store unavailable"),
    (AuditError, 503, "Audit store unavailable"),
    (ConfigError, 500, "Server misconfigured"),
    (CiteboundError, 500, "Internal error"),
)


class BodyTooLarge(StarletteHTTPException):
    """Raised by the body-limit middleware's receive wrapper. An HTTPException, because
    FastAPI re-raises those from body parsing (anything else would become a generic 400)."""

    def __init__(self, detail: str) -> None:
        super().__init__(status_code=413, detail=detail)


def status_for(err: CiteboundError) -> tuple[int, str]:
    """HTTP status and title for `err` (the single mapping)."""
    for cls, status, title in STATUS_BY_ERROR:
        if isinstance(err, cls):
            if isinstance(err, AccessDenied):
                return err.status, "Unauthorized" if err.status == 401 else title
            if isinstance(err, ProviderError) and err.transient:
                return 503, title
            return status, title
    return 500, "Internal error"  # pragma: no cover - CiteboundError is last


def problem(
    status: int,
    title: str,
    detail: str,
    *,
    instance: str | None = None,
    errors: list[ProblemItem] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    if instance is not None and instance.rstrip("/") in OPENAI_PATHS:
        param = errors[0].loc.removeprefix("body.") if errors else None
        error = {
            "message": detail,
            "type": openai_error_type(status),
            "param": param,
            "code": "model_not_found" if status == 404 and "model" in detail else None,
        }
        return JSONResponse({"error": error}, status_code=status, headers=headers)
    body = Problem(
        title=title, status=status, detail=detail, instance=instance, errors=errors or []
    )
    return JSONResponse(
        body.model_dump(mode="json"), status_code=status, media_type=PROBLEM_JSON, headers=headers
    )


def _loc(loc: tuple[Any, ...] | list[Any]) -> str:
    return ".".join(str(p) for p in loc)


async def _citebound_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, CiteboundError)
    status, title = status_for(exc)
    if status >= 500:
        log.error("%s %s: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return problem(status, title, str(exc), instance=request.url.path, headers=headers)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    if any(e.get("type") == "json_invalid" for e in errors):
        first = next(e for e in errors if e.get("type") == "json_invalid")
        why = first.get("ctx", {}).get("error", "") or first.get("msg", "")
        return problem(
            400,
            "Malformed JSON",
            f"the request body is not valid JSON: {why}",
            instance=request.url.path,
        )
    long_question = [
        e
        for e in errors
        if e.get("type") == "string_too_long" and e.get("loc", ())[-1:] == ("question",)
    ]
    if long_question and len(long_question) == len(errors):
        # Size is 413 on every route (docs/api.md "Input limits"), whether the contract's
        # max_length or `api/limits.py` finds it first.
        most = long_question[0].get("ctx", {}).get("max_length", "")
        return problem(
            413,
            "Input too large",
            f"the question exceeds {most} characters: shorten it",
            instance=request.url.path,
        )
    items = []
    for e in errors[:20]:
        msg = str(e.get("msg", "invalid"))
        if e.get("type") == "extra_forbidden":
            msg = "unknown field (not part of this endpoint's schema)"
        items.append(ProblemItem(loc=_loc(e.get("loc", ())), msg=msg))
    detail = "; ".join(f"{i.loc}: {i.msg}" for i in items)
    return problem(
        422, "Invalid request", detail or "invalid request", instance=request.url.path, errors=items
    )


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    detail = exc.detail if isinstance(exc.detail, str) else "error"
    if exc.status_code == 404 and detail == "Not Found":
        detail = f"no such endpoint: {request.method} {request.url.path}"
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        detail = f"method {request.method} is not allowed on {request.url.path}"
        # RFC 9110 15.5.6: a 405 names the methods the path has, from every route on it (the
        # router's own Allow lists only the first route that matched the path).
        headers["Allow"] = _allowed_methods(request) or headers.get("Allow", "")
    title = {
        404: "Not found",
        405: "Method not allowed",
        413: "Request body too large",
    }.get(exc.status_code, "HTTP error")
    return problem(
        exc.status_code, title, detail, instance=request.url.path, headers=headers or None
    )


def _allowed_methods(request: Request) -> str:
    """`GET, HEAD, POST`: the methods of every route whose path matches the request's."""
    from starlette.routing import Match

    methods: set[str] = set()
    for route in getattr(request.app, "routes", ()):
        match, _ = route.matches(request.scope)
        if match is not Match.NONE:
            methods.update(getattr(route, "methods", None) or ())
    return ", ".join(sorted(methods))


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return problem(
        500,
        "Internal error",
        f"unexpected {type(exc).__name__}; the server log has the details",
        instance=request.url.path,
    )


def install_problem_handlers(app: FastAPI) -> None:
    app.add_exception_handler(CiteboundError, _citebound_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimitMiddleware:
    """Refuse bodies over `limit` bytes: at once from Content-Length, else while reading."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        message = f"the request body exceeds the limit of {self.limit} bytes (api.max_body_bytes)"
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            response = problem(413, "Request body too large", message, instance=scope["path"])
            await response(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge(message)
            return msg

        await self.app(scope, limited, send)
