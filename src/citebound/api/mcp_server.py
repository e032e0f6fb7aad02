"""`citebound mcp`: the store as a Model Context Protocol server (extra `mcp`, official SDK).

Tools:

- `answer(question, collection?, equipment_id?, knowledge_type?, date_from?, date_to?)`: the
  cited answer or the policy's exact refusal, with its sources (document, section, page, path).
  It runs the same `Pipeline` as `citebound ask` and `POST /v1/answer` (gate, validator, one
  audit record per call); only a response that passed the validator is returned. A FAILED
  answer is a tool error carrying the CLI's one line (`FAILED: <reason>: <what to do>`).
- `search(question, collection?, top_k?, filters...)`: the ranked chunks (`/v1/retrieve`)
  with their anchors (chunk id, document id, heading path, page) and calibrated similarity.
- `get_source(knowledge_id, chunk_id?, page?)`: a chunk, a page or the whole document, for an
  agent that reads around a citation.

Resources: `citebound://collections/{name}` lists a collection's documents; without API
keys every collection is also listed as a resource. Errors (an unknown collection, a key that
may not read one, a bad date) are tool errors with the HTTP API's one-line messages.

Transports: stdio (default; the local user's process reads every collection) and streamable
HTTP (`--http`, path `/mcp`) under the same rules as `serve`: without `[[api.keys]]` only a
loopback bind, with keys every request needs `Authorization: Bearer <key>` and sees only the
key's collections.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context  # tool signatures name it: resolved at module level
from mcp_types import CallToolResult, TextContent

from citebound import __version__
from citebound.api.runtime import ApiRuntime, ensure_recorded
from citebound.api.security import ANONYMOUS_READER, Principal, check_bind
from citebound.config import Config
from citebound.contracts.public import PublicResponse
from citebound.contracts.retrieval import DateRange, FiltersApplied, display_path
from citebound.errors import AccessDenied, CiteboundError, NotFound
from citebound.pipeline.explain import why_not_answered
from citebound.respond import render_text

log = logging.getLogger(__name__)

MAX_SOURCE_CHARS = 20_000
INSTRUCTIONS = (
    "citebound answers only from the user's indexed documents. Call `answer` for a question: "
    "it returns a cited answer whose every sentence was checked against its sources, or the "
    "exact refusal when the documents do not hold the answer; pass both on unchanged, with "
    "their sources. `search` lists the matching passages, `get_source` reads a document, page "
    "or chunk around a citation."
)

Asgi = Callable[[Any, Any, Any], Awaitable[None]]


def _filters(
    equipment_id: str | None,
    knowledge_type: str | None,
    date_from: str | None,
    date_to: str | None,
) -> FiltersApplied | None:
    if not (equipment_id or knowledge_type or date_from or date_to):
        return None
    span = DateRange(start=date_from, end=date_to) if (date_from or date_to) else None
    return FiltersApplied(equipment_id=equipment_id, knowledge_type=knowledge_type, date_range=span)


def _bearer(headers: Mapping[str, str] | None) -> str | None:
    value = (headers or {}).get("authorization") or ""
    return value[7:].strip() if value.lower().startswith("bearer ") else None


class CiteboundMcp:
    """The tools, over one `ApiRuntime` (store, pipeline, audit sinks, keys)."""

    def __init__(self, runtime: ApiRuntime, *, http: bool) -> None:
        self.rt = runtime
        self.http = http

    def principal(self, headers: Mapping[str, str] | None) -> Principal:
        """The caller: over HTTP the key presented (keys on), else the local reader."""
        if not self.http:
            return ANONYMOUS_READER
        return self.rt.keyring.authenticate(_bearer(headers))

    def answer(
        self,
        who: Principal,
        question: str,
        collection: str | None,
        filters: FiltersApplied | None,
    ) -> dict[str, Any]:
        # Lazy: citebound.retrieve loads tantivy and the retriever, ~40-60 ms more of importing
        # this module (measured in a fresh process, as python -X importtime shows).
        from citebound.retrieve import compile_filters

        rt = self.rt
        rt.check_question(question)
        name, filters = rt.resolve_collection(who, collection, filters)
        compile_filters(filters)
        with rt.slot():
            state = rt.pipeline.start(question, collection=name, filters=filters)
            with rt.model_call(state.request_id, check_audit=False):
                state = ensure_recorded(rt.pipeline.finish(state))
        rt.metrics.observe_request(state)
        resp = state.response
        assert resp is not None
        if resp.status.value == "FAILED":
            raise _ToolFailure(f"FAILED: {why_not_answered(state)} (request {resp.request_id})")
        return {
            **_public(resp),
            "collection": name,
            "text": render_text(resp).rstrip("\n"),
        }

    def search(
        self,
        who: Principal,
        question: str,
        collection: str | None,
        filters: FiltersApplied | None,
        top_k: int,
    ) -> dict[str, Any]:
        from citebound.retrieve import compile_filters

        rt = self.rt
        rt.check_question(question)
        name, filters = rt.resolve_collection(who, collection, filters)
        compile_filters(filters)
        with rt.slot():
            bundle = rt.ctx.retriever.retrieve(
                question, collection=name, filters=filters, policy=rt.ctx.policy
            )
        rows = []
        for row in bundle.results[: max(1, top_k)]:
            src = row.source
            rows.append(
                {
                    "rank": row.rank,
                    "chunk_id": row.chunk_id,
                    "knowledge_id": row.knowledge_id,
                    "similarity": round(row.similarity, 4),
                    "document": src.document if src else None,
                    "section": display_path(src.document, src.heading_path) if src else [],
                    "page": src.page if src else None,
                    "path": src.source_path if src else None,
                    "text": row.chunk_text,
                }
            )
        gate = bundle.gate
        return {
            "collection": name,
            "gate_passed": gate.passed if gate is not None else None,
            "results": rows,
        }

    def get_source(
        self, who: Principal, knowledge_id: str, chunk_id: str | None, page: int | None
    ) -> dict[str, Any]:
        store = self.rt.ctx.store
        doc = store.get_document(knowledge_id)
        if doc is None or not who.may_read(doc.collection):  # same answer: no probing
            raise NotFound(f"no document {knowledge_id!r} in your collections")
        out: dict[str, Any] = {
            "knowledge_id": doc.knowledge_id,
            "document": doc.title,
            "path": doc.source_path,
            "collection": doc.collection,
            "pages": len(doc.page_offsets),
        }
        if chunk_id is not None:
            chunks = store.get_chunks([chunk_id])
            if not chunks or chunks[0].knowledge_id != doc.knowledge_id:
                raise NotFound(f"document {knowledge_id!r} has no chunk {chunk_id!r}")
            c = chunks[0]
            section = display_path(doc.title, c.heading_path)
            return {**out, "chunk_id": c.chunk_id, "section": section, "page": c.page,
                    "text": c.text}  # fmt: skip
        text = doc.text
        if page is not None:
            offsets = doc.page_offsets
            if not 1 <= page <= len(offsets):
                raise NotFound(
                    f"document {knowledge_id!r} has no page {page} ({len(offsets)} page(s))"
                    if offsets
                    else f"document {knowledge_id!r} has no pages"
                )
            end = offsets[page] if page < len(offsets) else len(text)
            text = text[offsets[page - 1] : end].strip()
            out["page"] = page
        out["truncated"] = len(text) > MAX_SOURCE_CHARS
        out["text"] = text[:MAX_SOURCE_CHARS]
        return out

    def collection_listing(self, who: Principal, name: str) -> str:
        if not who.may_read(name) or name not in self.rt.collections():
            visible = ", ".join(self.rt.visible_collections(who)) or "none"
            raise NotFound(f"no collection {name!r}; collections you can read: {visible}")
        docs = [
            {
                "knowledge_id": d.knowledge_id,
                "title": d.title,
                "path": d.source_path,
                "pages": len(d.page_offsets),
            }
            for d in self.rt.ctx.store.list_documents(name)
        ]
        return json.dumps({"collection": name, "documents": docs}, ensure_ascii=False, indent=1)


class _ToolFailure(CiteboundError):
    """A FAILED answer, reported as a tool error (its audit record is written)."""


def _public(resp: PublicResponse) -> dict[str, Any]:
    return {
        "request_id": resp.request_id,
        "status": resp.status.value,
        "answer": resp.answer,
        "sources": [
            {
                "anchor": c.anchor,
                "document": c.document,
                "section": display_path(c.document, c.heading_path),
                "page": c.page,
                "ocr": c.ocr,
                "path": c.source_path,
                "knowledge_id": c.knowledge_id,
                "reference": c.source_reference,
            }
            for c in resp.citations
        ],
    }


def build_server(runtime: ApiRuntime, *, http: bool) -> Any:
    """The `mcp.server.MCPServer` with citebound's tools and resources."""
    import anyio.to_thread
    from mcp.server.mcpserver.exceptions import ResourceError

    core = CiteboundMcp(runtime, http=http)
    server: MCPServer[Any] = MCPServer("citebound", version=__version__, instructions=INSTRUCTIONS)

    async def call(
        fn: Callable[..., dict[str, Any]], ctx: Context[Any], *args: Any
    ) -> CallToolResult:
        try:
            who = core.principal(ctx.headers)
            out = await anyio.to_thread.run_sync(fn, who, *args)
        except CiteboundError as err:  # the same one line as the CLI and the HTTP API
            return CallToolResult(content=[TextContent(type="text", text=str(err))], is_error=True)
        text = out.get("text") or json.dumps(out, ensure_ascii=False)
        return CallToolResult(
            content=[TextContent(type="text", text=str(text))], structured_content=out
        )

    @server.tool()
    async def answer(
        question: str,
        ctx: Context[Any],
        collection: str | None = None,
        equipment_id: str | None = None,
        knowledge_type: str | None = None,
        date_from: str | None = None,
        date_to: str | None = None,
    ) -> CallToolResult:
        """Answer a question only from the indexed documents: a cited answer whose sentences
        were each checked against their sources, or the exact refusal. Pass the answer and its
        sources on unchanged. Dates are YYYY-MM-DD (event_date range of the documents)."""
        filters = _filters(equipment_id, knowledge_type, date_from, date_to)
        return await call(core.answer, ctx, question, collection, filters)

    @server.tool()
    async def search(
        question: str,
        ctx: Context[Any],
        collection: str | None = None,
        top_k: int = 10,
        equipment_id: str | None = None,
        knowledge_type: str | None = None,
        date_from: str | None = None,
        date_to: str | None = None,
    ) -> CallToolResult:
        """Ranked passages for a question (no answer): chunk ids, document, section, page,
        path, calibrated similarity in [0, 1] and the chunk text."""
        filters = _filters(equipment_id, knowledge_type, date_from, date_to)
        return await call(core.search, ctx, question, collection, filters, top_k)

    @server.tool()
    async def get_source(
        knowledge_id: str, ctx: Context[Any], chunk_id: str | None = None, page: int | None = None
    ) -> CallToolResult:
        """A document by id (a source's `knowledge_id`): one chunk (`chunk_id` from `search`),
        one page or slide (`page`), or its whole text (first 20,000 characters)."""
        return await call(core.get_source, ctx, knowledge_id, chunk_id, page)

    @server.resource("citebound://collections/{name}", mime_type="application/json")
    async def collection(name: str, ctx: Context[Any]) -> str:
        """The documents of a collection (id, title, path, pages)."""
        try:
            who = core.principal(ctx.headers)
            return await anyio.to_thread.run_sync(core.collection_listing, who, name)
        except CiteboundError as err:
            raise ResourceError(str(err)) from None

    if not runtime.keyring.enabled:  # anonymous callers read every collection: list them
        for name in runtime.collections():

            def listing(name: str = name) -> str:
                return core.collection_listing(ANONYMOUS_READER, name)

            server.resource(
                f"citebound://collections/{name}",
                name=name,
                description=f"Documents of the collection {name!r}",
                mime_type="application/json",
            )(_static(listing))
    return server


def _static(fn: Callable[[], str]) -> Callable[[], str]:
    def read() -> str:
        return fn()

    return read


def _require_key(app: Asgi, runtime: ApiRuntime) -> Asgi:
    """Refuse an HTTP request without a valid key before the MCP layer sees it (keys on)."""

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and runtime.keyring.enabled:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                       for k, v in scope.get("headers", [])}  # fmt: skip
            try:
                runtime.keyring.authenticate(_bearer(headers))
            except AccessDenied as err:
                body = json.dumps({"error": str(err)}).encode()
                await send({"type": "http.response.start", "status": err.status,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b"Bearer")]})  # fmt: skip
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


def run(config: Config, *, http: bool, host: str, port: int) -> None:
    """Serve until stopped: stdio, or streamable HTTP on host:port (path `/mcp`)."""
    runtime = ApiRuntime(config)
    try:
        if http:
            check_bind(host, runtime.keyring)
        runtime.warm_up()
        server = build_server(runtime, http=http)
        if not http:
            server.run("stdio")
            return
        import uvicorn

        app = _require_key(server.streamable_http_app(host=host), runtime)
        if not runtime.keyring.enabled:
            log.warning("no API keys configured: every caller reads every collection (loopback)")
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        runtime.close()
