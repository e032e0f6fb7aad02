"""A lean HTTP/1.1 load generator for bench_server: keep-alive connections on asyncio streams,
request bytes built once, responses read by Content-Length.

Why not httpx: on the 2-core benchmark host the generator shares the cores with the server
it measures, and httpx's AsyncClient spent about 1.6 ms of CPU per answered request (measured
with bench_server's CPU accounting), more than the PostgreSQL server did; this spends a
fraction of that. Every answered request is still parsed as JSON and its status read, so
the checks (5xx, 4xx for faults, statuses) are the same.
"""

from __future__ import annotations

import asyncio
import json


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


class Connection:
    """One keep-alive connection; reconnects lazily after a close or an error."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def request(self, raw: bytes) -> tuple[int, bytes]:
        """Send `raw` (a whole request) and return (status, body). Raises OSError,
        asyncio.IncompleteReadError or ProtocolError; the connection is then closed."""
        try:
            return await self._request(raw)
        except BaseException:
            self.close()
            raise

    async def _request(self, raw: bytes) -> tuple[int, bytes]:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        split = raw.index(b"\r\n\r\n") + 4
        close = b"\r\nConnection: close\r\n" in raw[:split]
        if b"\r\nExpect: 100-continue\r\n" in raw[:split]:
            self._writer.write(raw[:split])
            head = await self._reader.readuntil(b"\r\n\r\n")
            if head.startswith(b"HTTP/1.1 100"):
                self._writer.write(raw[split:])
                head = await self._reader.readuntil(b"\r\n\r\n")
        else:
            self._writer.write(raw)
            head = await self._reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = None
        for line in head[:-4].split(b"\r\n")[1:]:
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
        body = await self._reader.readexactly(length)
        if close:
            self.close()
        return status, body

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
