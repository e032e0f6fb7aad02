"""`ApiRuntime`: what every request handler shares (pipeline, keys, metrics, state signer).

Request handlers run on a thread pool. The store and the audit sinks are thread-safe (the
SQLite sink serializes its calls on one connection, which also queues concurrent appends
fairly instead of leaving them to SQLite's sleeping busy handler).

At most `api.concurrency` requests run the pipeline at once (`ApiRuntime.slot`); the others
wait their turn. The pipeline is CPU-bound Python: more threads than cores only fight over
the GIL, which stretched every request (32 clients on 2 cores: 20 req/s unlimited,
50-57 req/s with 1-2 slots).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from citebound.api.limits import InputLimits, check_question, check_texts
from citebound.api.metrics import Metrics
from citebound.api.security import KeyRing, Principal, SharedKeyRing
from citebound.config import Config
from citebound.contracts.audit import AuditRecord
from citebound.contracts.enums import ReasonCode
from citebound.contracts.retrieval import FiltersApplied
from citebound.errors import (
    AccessDenied,
    AuditError,
    ConfigError,
    ContractError,
    NotFound,
    PipelineOrderError,
)
from citebound.pipeline import Pipeline, PipelineContext, RequestState

log = logging.getLogger("citebound.api")

STATE_SECRET_ENV = "CITEBOUND_API_STATE_SECRET"


class StateSigner:
    """HMAC over (caller, state JSON): a step-mode state can only be continued, unchanged,
    by the caller it was issued to. Set $CITEBOUND_API_STATE_SECRET to share states between
    replicas; otherwise a random per-process secret is used."""

    def __init__(self, secret: bytes | None = None) -> None:
        env = os.environ.get(STATE_SECRET_ENV, "")
        self._secret = secret or (env.encode("utf-8") if env else os.urandom(32))

    def sign(self, principal: Principal, state_json: str) -> str:
        # Bound to the key (its hash), not only its name: a new key reusing a revoked key's
        # name cannot continue the old key's states.
        who = f"{principal.name}\x00{principal.key_sha256}".encode()
        msg = who + b"\x00" + state_json.encode("utf-8", "surrogatepass")
        return "v2." + hmac.new(self._secret, msg, hashlib.sha256).hexdigest()

    def verify(self, principal: Principal, state_json: str, token: str) -> None:
        # Compare bytes: compare_digest raises TypeError on non-ASCII str (was a 500).
        expected = self.sign(principal, state_json).encode("ascii")
        if not hmac.compare_digest(expected, token.encode("utf-8", "surrogatepass")):
            raise AccessDenied(
                "state_token does not match this state: the state was changed, belongs to "
                "another caller, or comes from a server that has restarted. Start again.",
                status=403,
            )


class ApiRuntime:
    """Everything the handlers share. Build one per app (`create_app` does)."""

    def __init__(self, config: Config, ctx: PipelineContext | None = None) -> None:
        self.config = config
        self.owns_ctx = ctx is None
        self.ctx = ctx or PipelineContext(config)
        # The audit sinks are thread-safe (citebound.audit); open them now, once, so a bad
        # path fails at start and not on the first request.
        self.ctx.sinks  # noqa: B018
        self.pipeline = Pipeline(self.ctx)
        self.keyring = KeyRing(config.api.keys)
        load_keys = getattr(self.ctx.store, "api_keys", None) if config.database else None
        if callable(load_keys):
            # Keys stored in the database are shared by every replica (docs/postgres.md).
            self.keyring = SharedKeyRing(config.api.keys, load_keys)
        self.metrics = Metrics()
        self.signer = StateSigner()
        slots = config.api.concurrency or (os.cpu_count() or 1)
        self._slots = threading.BoundedSemaphore(slots)
        policy = self.ctx.policy
        self.limits = InputLimits(
            max_chars=config.api.max_input_chars,
            max_question_tokens=policy.max_question_tokens,
            tokenizer=policy.tokenizer,
        )
        # Request ids whose model call is under way (or ended without an audit record): a
        # second model call for one of them is refused (`model_call`).
        self._claimed: set[str] = set()
        self._claim_lock = threading.RLock()

    def check_question(self, question: str) -> str:
        """The one input size policy (citebound.api.limits); 4xx before any work."""
        return check_question(question, self.limits)

    def check_texts(self, texts: Iterable[str], what: str = "the messages") -> None:
        check_texts(texts, self.limits, what)

    @contextmanager
    def model_call(self, request_id: str, *, check_audit: bool = True) -> Iterator[None]:
        """Hold the right to call the model for `request_id`, once.

        Refused (409) while another call for the id runs, or when the id is recorded already,
        so a replayed step state can never reach the model twice. The claim is released once
        the request is recorded (the audit record then guards the id); a request that ended
        unrecorded keeps it for the life of the process. `check_audit=False` skips the audit
        lookup for a caller that has just made it (saves a query on the hot path).
        """
        with self._claim_lock:
            if request_id in self._claimed:
                raise PipelineOrderError(
                    f"request {request_id!r} already reached the model: start a new request"
                )
            if check_audit:
                self.require_new_request_id(request_id)
            self._claimed.add(request_id)
        recorded = False
        try:
            yield
            recorded = True
        finally:
            if recorded:
                with self._claim_lock:
                    self._claimed.discard(request_id)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the `api.concurrency` pipeline slots while running a request."""
        with self._slots:
            yield

    def warm_up(self) -> None:
        """Open the store, provider, reranker and every collection's index before the first
        request (and on one thread, so lazily built shared objects are built once)."""
        _ = self.ctx.sinks, self.ctx.provider, self.ctx.reranker
        for collection in self.collections():
            try:
                self.ctx.retriever.load(collection)
            except Exception as err:  # a broken collection must not stop the server
                log.warning("collection %r is not searchable yet: %s", collection, err)

    def collections(self) -> list[str]:
        return sorted(self.ctx.store.collections())

    def visible_collections(self, principal: Principal) -> list[str]:
        return principal.visible(self.collections())

    def default_collection(self, principal: Principal) -> str | None:
        """The config's collection when it exists and the caller may read it, else the
        caller's first readable collection (so `serve --store DIR` works for any name)."""
        existing = self.collections()
        visible = principal.visible(existing)
        if principal.may_read(self.config.collection) and (
            self.config.collection in existing or not visible
        ):
            return self.config.collection
        if visible:
            return visible[0]
        named = sorted(c for c in principal.collections if c != "*")
        return named[0] if named else None

    def resolve_collection(
        self, principal: Principal, requested: str | None, filters: FiltersApplied | None
    ) -> tuple[str, FiltersApplied | None]:
        """The collection to search, checked against the caller's grant before any scoring."""
        via_filter = filters.collection if filters is not None else None
        if requested and via_filter and requested != via_filter:
            raise ContractError(
                f"collection {requested!r} and filters.collection {via_filter!r} disagree"
            )
        collection = requested or via_filter or self.default_collection(principal)
        if collection is None:
            raise AccessDenied(f"key {principal.name!r} may not read any collection", status=403)
        if not principal.may_read(collection):
            raise AccessDenied(
                f"key {principal.name!r} may not read collection {collection!r}", status=403
            )
        existing = self.collections()
        if collection not in existing:
            # 404, naming the collections this caller may read (never the others): a typo in
            # `collection` or in an OpenAI `model` ("citebound:<collection>") is obvious.
            visible = principal.visible(existing)
            choices = ", ".join(visible) if visible else "none yet (ingest documents first)"
            raise NotFound(
                f"no collection {collection!r}; collections you can read: {choices} "
                f"(OpenAI model names: {', '.join('citebound:' + c for c in visible) or '-'})"
            )
        if filters is not None and filters.collection is not None:
            filters = filters.model_copy(update={"collection": None})
        return collection, filters

    @staticmethod
    def scoped_request_id(collection: str, request_id: str | None) -> str | None:
        """The id a caller's `request_id` is recorded under: `<collection>:<id>`.

        Request ids are scoped by collection, so a key can neither claim nor probe another
        collection's ids: `beta-ticket-42` posted for alpha is `alpha:beta-ticket-42`, and
        beta's own `beta-ticket-42` stays free. Collection names have no ':', so the scoped
        form is unambiguous; generated ids (uuid hex) are random and left as they are.
        The response carries the scoped id, which is what feedback and audit look up.
        """
        return None if request_id is None else f"{collection}:{request_id}"

    def require_new_request_id(self, request_id: str | None) -> None:
        """One audit record per request: refuse a request id that is already recorded."""
        if request_id and any(sink.find(request_id) for sink in self.ctx.sinks):
            raise PipelineOrderError(
                f"request_id {request_id!r} is already recorded; use a new id (or none)"
            )
        with self._claim_lock:
            if request_id and request_id in self._claimed:
                raise PipelineOrderError(
                    f"request_id {request_id!r} is being answered; use a new id (or none)"
                )

    def record_collections(self, record: AuditRecord) -> set[str] | None:
        """Collections a record belongs to: those of the documents it cites and the one its
        scoped request id names (`scoped_request_id`); None when neither says."""
        ids = sorted({e.knowledge_id for e in record.evidence})
        found = set()
        scope, sep, _ = record.request_id.partition(":")
        if sep and scope in self.collections():
            found.add(scope)
        if not ids:
            return found or None
        for kid in ids:
            doc = self.ctx.store.get_document(kid)
            found.add(doc.collection if doc is not None else "\x00deleted")
        return found

    def may_see_record(self, principal: Principal, record: AuditRecord) -> bool:
        cols = self.record_collections(record)
        if cols is None:
            return principal.all_collections
        return all(principal.may_read(c) for c in cols)

    def feedback_sink(self) -> Any:
        for sink in self.ctx.sinks:
            if hasattr(sink, "append_feedback"):
                return sink
        raise ConfigError(
            "feedback needs the sqlite audit sink: add 'sqlite' to [audit] sinks",
            field="audit.sinks",
        )

    def close(self) -> None:
        if self.owns_ctx:
            self.ctx.close()


def ensure_recorded(state: RequestState) -> RequestState:
    """Raise AuditError (503) when the request ended unrecorded: no record, no answer."""
    if state.response is not None and state.response.failure_reason == ReasonCode.AUDIT_FAILED:
        raise AuditError(str(state.extras.get("error", {}).get("message", "audit write failed")))
    return state
