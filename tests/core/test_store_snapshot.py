"""store.snapshot: one snapshot per request, shared by nested scopes, never leaking."""

from __future__ import annotations

import contextvars
import threading

from citebound.store.snapshot import current, request_snapshot


def test_scopes_nest_and_end() -> None:
    assert current() is None
    with request_snapshot() as outer:
        outer.of("postgresql://a").versions["c"] = "v1"
        assert outer.of("postgresql://b").versions == {}  # per database
        with request_snapshot() as inner:
            assert inner is outer  # Pipeline.run inside an HTTP request: one snapshot
        assert current() is outer
    assert current() is None
    with request_snapshot() as again:
        assert again is not outer and again.by_store == {}


def test_a_request_thread_sees_its_snapshot_and_other_threads_do_not() -> None:
    seen: dict[str, object] = {}
    with request_snapshot() as snap:
        ctx = contextvars.copy_context()  # what Starlette's threadpool does per handler
        handler = threading.Thread(target=ctx.run, args=(lambda: seen.update(h=current()),))
        other = threading.Thread(target=lambda: seen.update(o=current()))
        for t in (handler, other):
            t.start()
            t.join()
    assert seen == {"h": snap, "o": None}
