"""Loopback object-store servers for tests, each in a child process.

`s3_server`: a real S3-compatible server (moto in server mode, `citebound[spark]` or the test
extra). `recording_server`: answers 404 to everything and records the request lines, to see
which container and prefix delta-rs asks for (an `abfss://` URI) without any cloud endpoint.

Child processes, not threads: delta-rs holds the GIL during some calls, which would deadlock an
in-process server thread that needs the GIL to answer.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_CHILD = """
import sys, threading
from moto.server import ThreadedMotoServer
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print(server.get_host_and_port()[1], flush=True)
sys.stdin.read()  # until the parent closes stdin
server.stop()
"""

ACCESS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


@contextmanager
def s3_server() -> Iterator[str]:
    """Yields the endpoint URL; the server stops when the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().strip())
        yield f"http://127.0.0.1:{port}"
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def storage_options(endpoint: str) -> dict[str, str]:
    """delta-rs options for the loopback server (plain HTTP, path-style, fixed region)."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        **ACCESS,
    }


def create_bucket(endpoint: str, name: str) -> None:
    import boto3

    boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", **_boto_keys()
    ).create_bucket(Bucket=name)


def _boto_keys() -> dict[str, str]:
    return {
        "aws_access_key_id": ACCESS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": ACCESS["AWS_SECRET_ACCESS_KEY"],
    }


_RECORDER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class H(BaseHTTPRequestHandler):
    def _answer(self):
        print(self.command, self.path, flush=True)
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_GET = do_PUT = do_HEAD = do_POST = do_DELETE = _answer
    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@contextmanager
def recording_server() -> Iterator[tuple[str, list[str]]]:
    """Yields (endpoint URL, request lines); the list is filled when the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _RECORDER],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: list[str] = []
    assert proc.stdout is not None
    try:
        port = int(proc.stdout.readline().strip())
        yield f"http://127.0.0.1:{port}", lines
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        lines += proc.stdout.read().splitlines()
        proc.stdout.close()
