"""FastAPI dependencies: the runtime, the authenticated caller, shared error responses."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from citebound.api.runtime import ApiRuntime
from citebound.api.security import Principal
from citebound.contracts.api import Problem
from citebound.contracts.chat import OpenAIError
from citebound.errors import AccessDenied

_bearer = HTTPBearer(auto_error=False, description="`Authorization: Bearer <API key>`")
_api_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="API key")


def get_runtime(request: Request) -> ApiRuntime:
    runtime: ApiRuntime = request.app.state.runtime
    return runtime


def get_principal(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    api_key: Annotated[str | None, Depends(_api_key)],
) -> Principal:
    """The caller; 401 when keys are configured and none (or a wrong one) is sent."""
    runtime = get_runtime(request)
    presented = api_key or (bearer.credentials if bearer is not None else None)
    return runtime.keyring.authenticate(presented)


def require_admin(principal: Annotated[Principal, Depends(get_principal)]) -> Principal:
    if not principal.is_admin:
        raise AccessDenied(f"key {principal.name!r} is not an admin key", status=403)
    return principal


Runtime = Annotated[ApiRuntime, Depends(get_runtime)]
Caller = Annotated[Principal, Depends(get_principal)]
Admin = Annotated[Principal, Depends(require_admin)]


def problems(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries for problem+json errors."""
    return {code: {"model": Problem, "content": {"application/problem+json": {}}} for code in codes}


def openai_errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries for the OpenAI routes' error body (`{"error": {...}}`)."""
    return {code: {"model": OpenAIError} for code in codes}
