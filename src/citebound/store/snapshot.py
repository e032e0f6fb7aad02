"""One freshness read per request for a store shared by several processes.

A served question asks the store for its collections and for `index_version(collection)`
several times (resolving the collection, loading the index, hydrating rows): on PostgreSQL
each ask was a round trip, five to seven per question. Inside `request_snapshot()` a shared
store (`PostgresStore`) answers them from one read made at the first ask, so a request costs
one query for its freshness and sees one consistent version from start to end.

Freshness is unchanged: every request still reads the database once, so an ingest made
through any other replica is seen by the next request that starts after it committed. The
snapshot lives in a context variable, so it follows one request (asyncio task, and the
worker thread Starlette runs its handler in: `anyio.to_thread.run_sync` copies the context)
and never leaks into another. Nested `request_snapshot()` calls share the outer snapshot.
An embedded store keeps its own in-process cache and ignores it.

    >>> with request_snapshot():
    ...     current() is not None
    True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["SharedStoreState", "StoreSnapshot", "current", "request_snapshot"]


@dataclass
class SharedStoreState:
    """What one shared store (one database URL) read once for this request: its collection
    names and the current index_version per scope (a collection of `collections` missing from
    `versions` had none computed yet: the store computes it without asking again)."""

    collections: list[str] | None = None
    versions: dict[str, str] = field(default_factory=dict)


@dataclass
class StoreSnapshot:
    """The reads of one request, per store (keyed by database URL, so two databases used in
    one request never mix)."""

    by_store: dict[str, SharedStoreState] = field(default_factory=dict)

    def of(self, key: str) -> SharedStoreState:
        return self.by_store.setdefault(key, SharedStoreState())

    def forget(self) -> None:
        """After a write: every later ask in this request reads the database again."""
        self.by_store.clear()


_SNAPSHOT: ContextVar[StoreSnapshot | None] = ContextVar("citebound_store_snapshot", default=None)


def current() -> StoreSnapshot | None:
    """The snapshot of the request in progress, or None outside `request_snapshot()`."""
    return _SNAPSHOT.get()


@contextmanager
def request_snapshot() -> Iterator[StoreSnapshot]:
    """Scope one request: shared-store reads of collections and index versions inside it are
    made once (see the module docstring). Re-entrant: an inner scope reuses the outer one."""
    outer = _SNAPSHOT.get()
    if outer is not None:
        yield outer
        return
    snap = StoreSnapshot()
    token = _SNAPSHOT.set(snap)
    try:
        yield snap
    finally:
        _SNAPSHOT.reset(token)
