"""A lean HTTP/1.1 load generator for `benchmarks/bench_server.py`: keep-alive connections,
all clients on one thread with `selectors`, request bytes built once, responses read by
Content-Length.

Why not httpx: on the 2-core benchmark host the generator shares the cores with the server
it measures, and httpx's AsyncClient spent 1.5-1.7 ms of CPU per answered request (measured
with bench_server's CPU accounting), more than the PostgreSQL server did. Keep-alive clients
on asyncio streams spent 0.31 ms; this loop 0.16 ms (same runs, alternated). Every answered
request is still parsed as JSON and its status read by the caller, so the checks (5xx, 4xx
for faults, statuses) are the same.
"""

from __future__ import annotations

import json
import selectors
import socket
import time
from typing import Any


class ProtocolError(Exception):
    """A response this minimal client does not read (e.g. chunked), or a cut connection."""


def post_bytes(host: str, port: int, path: str, body: bytes, *, close: bool = False) -> bytes:
    """A complete `POST path` request with a JSON body. With `close`: `Connection: close` and
    `Expect: 100-continue` (what curl sends with large bodies): the body goes out only when
    the server asks for it, so a server that refuses from Content-Length alone closes a
    connection with nothing unread instead of resetting it (a reset can destroy its answer
    before the client reads it)."""
    extra = "Connection: close\r\nExpect: 100-continue\r\n" if close else ""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
    )
    return head.encode("ascii") + body


def post_json(host: str, port: int, path: str, payload: object) -> bytes:
    return post_bytes(host, port, path, json.dumps(payload).encode("utf-8"))


class _Client:
    """One connection of `SelectorLoad`: the request in flight and what has arrived."""

    __slots__ = ("expect", "inbuf", "raw", "sock", "split", "t0", "tag", "waiting_100")

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.inbuf = bytearray()
        self.raw = b""
        self.split = 0
        self.expect = False
        self.tag: object = None
        self.t0 = 0.0
        self.waiting_100 = False


class SelectorLoad:
    """All clients on one thread with `selectors` and non-blocking reads: no event-loop
    machinery per request. `next_request(n)` gives client n's next (tag, raw) or None to
    stop; `done(tag, status, body, seconds)` or `failed(tag, error)` gets every outcome. A
    request in flight when clients stop is always completed (its audit record counts)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port

    def run(self, clients: int, next_request: Any, done: Any, failed: Any) -> None:
        sel = selectors.DefaultSelector()
        conns = [_Client() for _ in range(clients)]
        active = 0
        for n, c in enumerate(conns):
            if self._start(sel, n, c, next_request, failed):
                active += 1
        while active:
            events = sel.select(timeout=120)
            if not events:
                raise TimeoutError("no response from the server in 120 s")
            for key, _ in events:
                n, c = key.data
                try:
                    chunk = c.sock.recv(262144) if c.sock is not None else b""
                    if not chunk:
                        raise ProtocolError("connection closed by the server")
                    c.inbuf += chunk
                    result = self._parse(c)
                except (OSError, ProtocolError, ValueError) as err:
                    self._close(sel, c)
                    failed(c.tag, err)
                    result = "next"
                else:
                    if result is None:
                        continue
                    if isinstance(result, tuple):
                        status, body, close = result
                        if close:
                            self._close(sel, c)
                        done(c.tag, status, body, time.perf_counter() - c.t0)
                if not self._start(sel, n, c, next_request, failed):
                    active -= 1
                    self._close(sel, c)
        sel.close()

    def _start(self, sel: selectors.BaseSelector, n: int, c: _Client, next_request: Any,
               failed: Any) -> bool:  # fmt: skip
        """Send client n's next request; False when it has none left."""
        while True:
            nxt = next_request(n)
            if nxt is None:
                return False
            c.tag, c.raw = nxt
            c.split = c.raw.index(b"\r\n\r\n") + 4
            c.expect = b"\r\nExpect: 100-continue\r\n" in c.raw[: c.split]
            c.waiting_100 = c.expect
            c.inbuf.clear()
            c.t0 = time.perf_counter()
            try:
                if c.sock is None:
                    c.sock = socket.create_connection((self.host, self.port))
                    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    sel.register(c.sock, selectors.EVENT_READ, (n, c))
                c.sock.sendall(c.raw[: c.split] if c.expect else c.raw)
                return True
            except OSError as err:
                self._close(sel, c)
                failed(c.tag, err)

    def _parse(self, c: _Client) -> tuple[int, bytes, bool] | str | None:
        """(status, body, close) once the response is complete; None: wait for more."""
        end = c.inbuf.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = bytes(c.inbuf[:end])
        if c.waiting_100 and head.startswith(b"HTTP/1.1 100"):
            del c.inbuf[: end + 4]
            c.waiting_100 = False
            assert c.sock is not None
            c.sock.sendall(c.raw[c.split :])
            return self._parse(c)
        status = int(head[9:12])
        length, close = None, b"\r\nConnection: close\r\n" in c.raw[: c.split]
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection":
                close = close or value.strip().lower() == b"close"
            elif name == b"transfer-encoding":
                raise ProtocolError(f"unsupported transfer-encoding {value.strip()!r}")
        if length is None:
            raise ProtocolError("response without Content-Length")
        if len(c.inbuf) < end + 4 + length:
            return None
        body = bytes(c.inbuf[end + 4 : end + 4 + length])
        return status, body, close

    @staticmethod
    def _close(sel: selectors.BaseSelector, c: _Client) -> None:
        if c.sock is not None:
            sel.unregister(c.sock)
            c.sock.close()
            c.sock = None
