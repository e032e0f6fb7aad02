"""Two `citebound serve --database URL` processes behave as one service (issue 17, done-when).

Real processes, real HTTP on loopback, one real PostgreSQL: a document ingested through one
replica's host is answered by the other without restart; each sees the other's audit records;
`kill -9` of one replica under bounded load loses no acknowledged record; every answered
request has exactly one audit record. Replica B runs with `--workers 2`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from citebound.api import hash_key
from citebound.audit.postgres import PostgresAuditSink

SRC = Path(__file__).resolve().parents[2] / "src"
CORPUS = SRC / "citebound" / "sample_corpus"
QUESTION = "What is the GB-7 gearbox oil grade?"
pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


KEY = "cb-test-admin-key-for-two-replicas"
AUTH = {"Authorization": f"Bearer {KEY}"}


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITEBOUND_")}
    env["PYTHONPATH"] = str(SRC)
    # one admin key, so the audit endpoint may be read (it is admin-only)
    entry = {"name": "ops", "sha256": hash_key(KEY), "role": "admin", "collections": ["*"]}
    env["CITEBOUND_API_KEYS"] = json.dumps([entry])
    return env


def _serve(url: str, store: Path, port: int, tmp_path: Path, workers: int) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "citebound", "serve", "--database", url, "--store", str(store),
           "--port", str(port), "--workers", str(workers), "--log-level", "warning"]  # fmt: skip
    return subprocess.Popen(
        cmd,
        env=_env(tmp_path),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # kill -9 reaches uvicorn's worker processes too
    )


def _wait_up(base: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "server did not come up"
        time.sleep(0.3)


def _answer(base: str, request_id: str) -> httpx.Response:
    return httpx.post(
        f"{base}/v1/answer",
        json={"question": QUESTION, "collection": "plant", "request_id": request_id},
        headers=AUTH,
        timeout=60,
    )


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    if proc.stderr is not None:
        proc.stderr.close()


def test_two_replicas_one_database(pg_url: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gb7.md").write_text((CORPUS / "gb7_specification.md").read_text("utf-8"), "utf-8")
    port_a, port_b = _free_port(), _free_port()
    a_base, b_base = f"http://127.0.0.1:{port_a}", f"http://127.0.0.1:{port_b}"
    a = _serve(pg_url, tmp_path / "host-a", port_a, tmp_path, workers=1)
    b = _serve(pg_url, tmp_path / "host-b", port_b, tmp_path, workers=2)
    try:
        _wait_up(a_base, a)
        _wait_up(b_base, b)
        # Ingest on replica A's host (its store directory); B has never seen the document.
        ingest = subprocess.run(
            [sys.executable, "-m", "citebound", "ingest", str(docs), "--collection", "plant",
             "--database", pg_url, "--store", str(tmp_path / "host-a"), "--no-progress"],
            env=_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert ingest.returncode == 0, ingest.stderr
        r = _answer(b_base, "first-on-b")
        assert r.status_code == 200 and r.json()["status"] == "OK", r.text
        assert "ISO VG 220" in r.json()["answer"]
        r = _answer(a_base, "first-on-a")
        assert r.status_code == 200 and r.json()["status"] == "OK", r.text
        # Each replica sees the other's audit record.
        # (A caller's request id is recorded scoped by its collection: `plant:<id>`.)
        for base, rid in ((b_base, "plant:first-on-a"), (a_base, "plant:first-on-b")):
            assert httpx.get(f"{base}/v1/audit/{rid}", headers=AUTH, timeout=10).status_code == 200
        # A request id already used on one replica is refused on the other (one record each).
        assert _answer(a_base, "first-on-b").status_code == 409

        # Bounded load on both replicas; kill -9 replica A in the middle.
        acked: dict[str, list[str]] = {"a": [], "b": []}
        sent: dict[str, list[str]] = {"a": [], "b": []}
        errors: list[str] = []
        lock = threading.Lock()

        def client(name: str, base: str, worker: int) -> None:
            for i in range(25):
                rid = f"load-{name}-{worker}-{i}"
                with lock:
                    sent[name].append(rid)
                try:
                    resp = _answer(base, rid)
                except httpx.TransportError:
                    if name == "a":
                        return  # A was killed: the connection drops, nothing was acknowledged
                    raise
                if resp.status_code == 200:
                    with lock:
                        acked[name].append(rid)
                else:
                    errors.append(f"{name} {resp.status_code} {resp.text[:200]}")

        threads = [
            threading.Thread(target=client, args=(n, base, w))
            for n, base in (("a", a_base), ("b", b_base))
            for w in range(2)
        ]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 120
        while len(acked["a"]) < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(a.pid, signal.SIGKILL)
        for t in threads:
            t.join(timeout=300)
        assert not errors, errors  # no 5xx (or any error) from the surviving replica
        assert len(acked["a"]) >= 10 and len(acked["b"]) == 50

        sink = PostgresAuditSink(pg_url)
        try:
            recorded = {r.request_id.removeprefix("plant:") for r in sink.records()}
            assert sink.count() == len(recorded)  # exactly one record per request id
            # Nothing acknowledged is lost; nothing is recorded that was never sent.
            assert set(acked["a"]) | set(acked["b"]) <= recorded
            every = {"first-on-a", "first-on-b", *sent["a"], *sent["b"]}
            assert recorded <= every
            # The surviving replica: audit count = answered requests, exactly.
            assert {r for r in recorded if r.startswith("load-b-")} == set(acked["b"])
            # The killed one may have recorded the few requests in flight when it died.
            in_flight = {r for r in recorded if r.startswith("load-a-")} - set(acked["a"])
            assert len(in_flight) <= 2
        finally:
            sink.close()
    finally:
        _stop(a)
        _stop(b)
