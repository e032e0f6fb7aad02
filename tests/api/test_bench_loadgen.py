"""`citebound.eval.loadgen`, the load generator bench_server's figures rest on: every request
answered exactly once over keep-alive connections, and an over-limit body refused from its
headers (Expect: 100-continue) reported as that 4xx, not as a reset."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from citebound.eval.loadgen import SelectorLoad, post_bytes, post_json

LIMIT = 1000


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive

    def handle_expect_100(self) -> bool:
        if int(self.headers["Content-Length"]) > LIMIT:  # refused unread, like the API
            self.send_response(413)
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            return False
        return super().handle_expect_100()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        out = json.dumps({"status": "OK", "echo": body["n"]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield int(httpd.server_address[1])
    httpd.shutdown()
    httpd.server_close()


def test_every_request_is_answered_once_and_refusals_stay_4xx(server: int) -> None:
    host, clients, per_client = "127.0.0.1", 4, 6
    sent = [0] * clients
    results: list[tuple[object, int, bytes]] = []
    failures: list[BaseException] = []

    def next_request(n: int) -> tuple[object, bytes] | None:
        if sent[n] == per_client:
            return None
        sent[n] += 1
        tag = (n, sent[n])
        if sent[n] == 3:  # over the limit: must come back as the 413, never a reset
            big = json.dumps({"n": 0, "pad": "x" * (2 * LIMIT)}).encode()
            return tag, post_bytes(host, server, "/", big, close=True)
        return tag, post_json(host, server, "/", {"n": n * 100 + sent[n]})

    SelectorLoad(host, server).run(
        clients,
        next_request,
        lambda tag, status, body, _s: results.append((tag, status, body)),
        lambda tag, err: failures.append(err),
    )
    assert failures == []
    assert sorted(t for t, _, _ in results) == [
        (n, k) for n in range(clients) for k in range(1, per_client + 1)
    ]
    for (n, k), status, body in results:
        if k == 3:
            assert status == 413
        else:
            assert status == 200 and json.loads(body)["echo"] == n * 100 + k
