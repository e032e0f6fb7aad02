"""`create_app`: the FastAPI application (REST under /v1, OpenAI-compatible chat, web page at /).

    >>> from citebound.config import load_config
    >>> app = create_app(load_config(env={}, overrides={"store": "/tmp/cb"}))  # doctest: +SKIP
    >>> # uvicorn.run(app, host="127.0.0.1", port=8000)

`citebound serve` builds the app this way and refuses to bind a non-loopback address when no
API keys are configured (see `citebound.api.security.check_bind`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from citebound._version import __version__
from citebound.api import openai_compat, openai_responses, routes, steps
from citebound.api.metrics import Metrics
from citebound.api.problems import (
    PROBLEM_JSON,
    ASGIApp,
    BodyLimitMiddleware,
    Message,
    Receive,
    Scope,
    Send,
    install_problem_handlers,
)
from citebound.api.runtime import ApiRuntime
from citebound.api.security import host_allowed
from citebound.config import Config
from citebound.contracts.api import Problem
from citebound.pipeline import PipelineContext
from citebound.store.snapshot import request_snapshot

log = logging.getLogger("citebound.api")

# The page loads only its own files: no inline script, no third-party origin.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


class ObserveMiddleware:
    """Counts every request by route template and status, and sets safety headers."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        code = 500

        async def wrapped(message: Message) -> None:
            nonlocal code
            if message["type"] == "http.response.start":
                code = int(message["status"])
                headers = list(message.get("headers", []))
                headers.append((b"x-content-type-options", b"nosniff"))
                headers.append((b"referrer-policy", b"no-referrer"))
                if not scope["path"].startswith(("/v1/", "/metrics", "/healthz", "/docs")):
                    headers.append((b"content-security-policy", CSP.encode("ascii")))
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, wrapped)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.metrics.observe_http(scope["method"], template, code)


class StoreSnapshotMiddleware:
    """One store snapshot per HTTP request (`citebound.store.snapshot`): a shared store reads
    its collections and index versions once per request instead of at every step."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with request_snapshot():
            await self.app(scope, receive, send)


class HostGuardMiddleware:
    """Serves only requests whose Host header is in `[api] allowed_hosts` (loopback names by
    default): a page on another origin that re-points its DNS name at 127.0.0.1 (DNS
    rebinding) sends its own name as Host and gets a 421, never data."""

    def __init__(self, app: ASGIApp, allowed: list[str]) -> None:
        self.app = app
        self.allowed = list(allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
        if host_allowed(host, self.allowed):
            await self.app(scope, receive, send)
            return
        body = Problem(
            title="Host not allowed",
            status=421,
            detail=f"Host {host!r} is not in api.allowed_hosts {self.allowed}: add it to "
            "[api] allowed_hosts (or $CITEBOUND_API_ALLOWED_HOSTS) if clients use that name",
        ).model_dump_json(exclude_none=True)
        await send(
            {
                "type": "http.response.start",
                "status": 421,
                "headers": [(b"content-type", PROBLEM_JSON.encode("ascii"))],
            }
        )
        await send({"type": "http.response.body", "body": body.encode("utf-8")})


def ui_dir() -> Path:
    """Folder of the web page (package data `citebound/ui/*`)."""
    return Path(str(files("citebound.ui")))


def create_app(config: Config, *, ctx: PipelineContext | None = None) -> FastAPI:
    """Build the app for `config`.

    Args:
        config: Effective configuration (store, policy, provider, `[api]` keys and limits).
        ctx: Use this pipeline context (e.g. with a provider override in tests). Without a
            sinks override it gets the server's thread-safe audit sinks; sinks you pass must
            be usable from several threads.

    Returns:
        The FastAPI application; its `state.runtime` holds the shared `ApiRuntime`.
    """
    runtime = ApiRuntime(config, ctx)
    if not runtime.keyring.enabled:
        log.warning(
            "no API keys configured: every caller is an anonymous reader of every collection "
            "(loopback only)"
        )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime.warm_up()
        yield
        runtime.close()

    app = FastAPI(
        title="citebound",
        version=__version__,
        description="Answers only from your documents: cited and validated, or an exact "
        "refusal; every answer is audited. Errors are application/problem+json.",
        lifespan=lifespan,
        # FastAPI's Swagger UI and ReDoc load their code from a CDN: blank pages offline. /docs
        # is the bundled renderer below instead (plain JS over /openapi.json, no third party).
        docs_url=None,
        redoc_url=None,
    )
    app.state.runtime = runtime
    install_problem_handlers(app)
    app.include_router(routes.router)
    app.include_router(steps.router)
    app.include_router(openai_compat.router)
    app.include_router(openai_responses.router)
    app.include_router(routes.service)

    static = ui_dir()
    index = static / "index.html"

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(index, media_type="text/html; charset=utf-8")

    @app.get("/docs", include_in_schema=False)
    def api_docs() -> FileResponse:
        return FileResponse(static / "docs.html", media_type="text/html; charset=utf-8")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(static / "favicon.svg", media_type="image/svg+xml")

    app.mount("/ui", StaticFiles(directory=static), name="ui")
    # Outermost first: the body limit applies before anything reads the body.
    app.add_middleware(StoreSnapshotMiddleware)
    app.add_middleware(BodyLimitMiddleware, limit=config.api.max_body_bytes)
    if config.api.cors_origins:  # none by default: the page is same-origin
        app.add_middleware(
            CORSMiddleware,
            allow_origins=config.api.cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "X-API-Key", "Content-Type"],
        )
    app.add_middleware(ObserveMiddleware, metrics=runtime.metrics)
    app.add_middleware(HostGuardMiddleware, allowed=config.api.allowed_hosts)
    return app
