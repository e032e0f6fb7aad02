"""The `Provider` protocol and the HTTP plumbing shared by the HTTP providers.

Every way a call can fail is turned into one `ProviderError` with a reason code and a
`transient` flag, here and nowhere else, so the retry policy in `execute` only has to look
at that flag:

=====================================  =========================  =========
failure                                reason code                transient
=====================================  =========================  =========
timeout (connect, read, write, pool)   LLM_TIMEOUT                yes
connection refused / reset / closed    LLM_CONNECTION_ERROR       yes
HTTP 408                               LLM_TIMEOUT                yes
HTTP 429 (Retry-After honoured)        LLM_RATE_LIMITED           yes
HTTP 5xx (except 501)                  LLM_SERVER_ERROR           yes
HTTP 400, 409, 413, 422, other 4xx     LLM_BAD_REQUEST            no
HTTP 401, 403                          LLM_AUTH                   no
HTTP 404, 501                          LLM_NOT_FOUND              no
body is not the expected JSON          LLM_MALFORMED_RESPONSE     no
no choice / no output / empty text     LLM_EMPTY_RESPONSE         no
bad URL or scheme                      LLM_CONFIG                 no
=====================================  =========================  =========
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from citebound.contracts.enums import ReasonCode
from citebound.contracts.provider import ProviderReply, ProviderRequest
from citebound.errors import ProviderError

if TYPE_CHECKING:
    import httpx

__all__ = ["Provider", "parse_retry_after"]

_ERROR_SNIPPET = 300
# A JSON escape of a UTF-16 surrogate (`\ud800`-`\udfff`): a pair decodes to one character,
# a lone one to a str that is not Unicode text (RFC 8259 8.2). Only replies holding this
# pattern (or a literal backslash before it: a false alarm) get the exact check.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
# What to do when a provider's server does not answer at all (connection refused, DNS, reset).
_START_HINT = {
    "ollama": "start it with `ollama serve` (and `ollama pull MODEL`), or pass --base-url",
    "openai": "is the server running? check --base-url (it must end in /v1 for most servers)",
}


@runtime_checkable
class Provider(Protocol):
    """Anything that turns a frozen `ProviderRequest` into a `ProviderReply`.

    Implementations must send `request.messages` unchanged, use `request.temperature`,
    `request.max_output_tokens` and `request.timeout_s` as given, never switch to another
    model, and raise `ProviderError` (never anything else) when a call fails.

    Example:
        >>> from citebound.llm import ExtractiveProvider, Provider
        >>> isinstance(ExtractiveProvider(), Provider)
        True
    """

    @property
    def name(self) -> str:
        """Provider kind: openai, ollama, extractive, or your own."""
        ...

    @property
    def model(self) -> str:
        """Model identity as configured; recorded in every result."""
        ...

    def complete(self, request: ProviderRequest) -> ProviderReply:
        """Make one call (one attempt). Raise `ProviderError` on failure."""
        ...


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta-seconds or HTTP-date), or None.

    >>> parse_retry_after("2")
    2.0
    >>> parse_retry_after("soon") is None
    True
    """
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


def _status_error(provider: str, response: httpx.Response) -> ProviderError:
    status = response.status_code
    snippet = response.text[:_ERROR_SNIPPET].strip()
    detail = f"HTTP {status} from {response.request.url}: {snippet or '<empty body>'}"
    if status == 429:
        return ProviderError(
            f"rate limited ({detail})",
            reason_code=ReasonCode.LLM_RATE_LIMITED,
            provider=provider,
            status=status,
            transient=True,
            retry_after_s=parse_retry_after(response.headers.get("retry-after")),
        )
    if status == 408:
        code, transient, hint = ReasonCode.LLM_TIMEOUT, True, "server timed out"
    elif status in (401, 403):
        code, transient, hint = ReasonCode.LLM_AUTH, False, "check the API key env var"
    elif status in (404, 501):
        code, transient, hint = (
            ReasonCode.LLM_NOT_FOUND,
            False,
            "check --base-url, --model and --api (responses vs chat)",
        )
    elif status >= 500:
        code, transient, hint = ReasonCode.LLM_SERVER_ERROR, True, "server error"
    else:
        code, transient, hint = ReasonCode.LLM_BAD_REQUEST, False, "the server rejected the call"
    return ProviderError(
        f"{hint} ({detail})",
        reason_code=code,
        provider=provider,
        status=status,
        transient=transient,
        retry_after_s=parse_retry_after(response.headers.get("retry-after")),
    )


def post_json(
    client: httpx.Client, provider: str, url: str, body: bytes, timeout_s: float
) -> dict[str, Any]:
    """POST `body` (already-encoded JSON bytes) and return the decoded JSON object.

    The body is sent as `content=` so the bytes that leave the process are exactly the bytes
    the provider built; httpx does not re-encode them.
    """
    import httpx  # here, not at module level: the extractive path never imports it

    try:
        response = client.post(
            url,
            content=body,
            headers={"Content-Type": "application/json"},
            timeout=httpx.Timeout(timeout_s),
        )
    except httpx.TimeoutException as err:
        raise ProviderError(
            f"no response from {url} within {timeout_s}s ({type(err).__name__})",
            reason_code=ReasonCode.LLM_TIMEOUT,
            provider=provider,
            transient=True,
        ) from None
    except (httpx.UnsupportedProtocol, httpx.LocalProtocolError, httpx.InvalidURL) as err:
        raise ProviderError(
            f"cannot call {url}: {err}",
            reason_code=ReasonCode.LLM_CONFIG,
            provider=provider,
        ) from None
    except httpx.TransportError as err:
        raise ProviderError(
            f"cannot connect to {provider} at {url} ({type(err).__name__}: {err}); "
            + _START_HINT.get(provider, "is the server running? check --base-url"),
            reason_code=ReasonCode.LLM_CONNECTION_ERROR,
            provider=provider,
            transient=True,
        ) from None
    if not 200 <= response.status_code < 300:
        raise _status_error(provider, response)
    try:
        data = json.loads(response.content)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ProviderError(
            f"response from {url} is not JSON ({err}): {response.text[:_ERROR_SNIPPET]!r}",
            reason_code=ReasonCode.LLM_MALFORMED_RESPONSE,
            provider=provider,
            status=response.status_code,
        ) from None
    if not isinstance(data, dict):
        raise malformed(provider, f"response from {url} is JSON but not an object")
    if _SURROGATE_ESCAPE.search(response.content) and not _is_unicode(data):
        # No UTF-8 writer takes a lone surrogate: the audit hash and every sink failed on
        # it, after the request had reached the model. Not valid text, so not an answer.
        raise malformed(
            provider,
            f"response from {url} holds a lone UTF-16 surrogate escape (\\ud800-\\udfff "
            "without its pair): not Unicode text",
        )
    return data


def _is_unicode(data: Any) -> bool:
    """True when every string in `data` (keys included) can be written as UTF-8."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def encode_body(body: dict[str, Any]) -> bytes:
    """Deterministic request bytes: fixed key order as built, UTF-8 kept, no extra spaces."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def malformed(provider: str, message: str) -> ProviderError:
    """A response that parsed as JSON but does not have the documented shape."""
    return ProviderError(
        message, reason_code=ReasonCode.LLM_MALFORMED_RESPONSE, provider=provider, status=200
    )


def empty(provider: str, message: str) -> ProviderError:
    """A well-formed response that carries no answer text."""
    return ProviderError(
        message, reason_code=ReasonCode.LLM_EMPTY_RESPONSE, provider=provider, status=200
    )


def opt_int(value: object) -> int | None:
    """Token counts as int when the server reported a non-negative int, else None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value
