"""`citebound mcp` started as a subprocess and driven by the official MCP SDK's own client,
over stdio and over streamable HTTP: tools, a cited answer, the exact refusal, errors, keys,
and one audit record per answer."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from api_helpers import KEYS, PLANT_QUESTION, SECRET_QUESTION, UNANSWERABLE

from citebound.api import hash_key
from citebound.audit.sqlite import SQLiteAuditSink
from citebound.policy import load_policy

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")
from mcp import Client, StdioServerParameters  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _env(api_store: Path, audit: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITEBOUND_")}
    env.update(
        PYTHONPATH=SRC + os.pathsep + env.get("PYTHONPATH", ""),
        CITEBOUND_STORE=str(api_store),
        CITEBOUND_COLLECTION="demo",
        CITEBOUND_PROVIDER="extractive",
        CITEBOUND_AUDIT_SQLITE_PATH=str(audit),
        CITEBOUND_CACHE_DIR=os.environ.get("CITEBOUND_CACHE_DIR", "off"),
        **extra,
    )
    return env


def _records(audit: Path) -> dict[str, Any]:
    sink = SQLiteAuditSink(audit)
    try:
        return {r.request_id: r for r in sink.records()}
    finally:
        sink.close()


async def _tools_answer_refusal_error(client: Any) -> dict[str, Any]:
    tools = {t.name for t in (await client.list_tools()).tools}
    answered = await client.call_tool("answer", {"question": PLANT_QUESTION})
    refused = await client.call_tool("answer", {"question": UNANSWERABLE})
    bad_date = await client.call_tool(
        "answer", {"question": PLANT_QUESTION, "date_from": "2024-13-45"}
    )
    typo = await client.call_tool("answer", {"question": PLANT_QUESTION, "collection": "dmeo"})
    found = await client.call_tool("search", {"question": PLANT_QUESTION, "top_k": 3})
    ok = answered.structured_content
    source = ok["sources"][0]
    page = await client.call_tool(
        "get_source",
        {
            "knowledge_id": source["knowledge_id"],
            "chunk_id": found.structured_content["results"][0]["chunk_id"],
        },
    )
    return {
        "tools": tools,
        "answered": answered,
        "refused": refused,
        "bad_date": bad_date,
        "typo": typo,
        "found": found,
        "chunk": page,
    }


def _check(out: dict[str, Any], audit: Path, typo: str = "no collection 'dmeo'") -> None:
    assert {"answer", "search", "get_source"} <= out["tools"]
    ok = out["answered"].structured_content
    assert not out["answered"].is_error and ok["status"] == "OK"
    assert "45 Nm" in ok["answer"] and "[C0]" in ok["answer"]
    assert ok["sources"][0]["anchor"] == "C0" and ok["sources"][0]["path"]
    assert "Sources:" in ok["text"]
    refused = out["refused"].structured_content
    policy = load_policy()
    assert refused["status"] == "NO_EVIDENCE" and refused["sources"] == []
    assert refused["answer"] in {policy.refusal.no_evidence_text, policy.refusal.model_text}
    for bad, words in ((out["bad_date"], "date"), (out["typo"], typo)):
        assert bad.is_error
        (content,) = bad.content
        assert words in content.text and "\n" not in content.text
        assert not content.text.startswith("Error executing")  # our line, as the CLI says it
    rows = out["found"].structured_content["results"]
    assert len(rows) == 3 and rows[0]["rank"] == 0 and 0 <= rows[0]["similarity"] <= 1
    assert out["chunk"].structured_content["text"] == rows[0]["text"]
    records = _records(audit)
    for result in (out["answered"], out["refused"]):
        record = records[result.structured_content["request_id"]]  # one audit record each
        assert record.status.value == result.structured_content["status"]
        assert record.validation_status.value == "PASSED"  # what the tool returned was validated


def test_stdio(api_store: Path, tmp_path: Path) -> None:
    audit = tmp_path / "audit.sqlite"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "citebound", "mcp"], env=_env(api_store, audit)
    )

    async def main() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=120) as client:
            out = await _tools_answer_refusal_error(client)
            listed = await client.list_resources()
            out["resources"] = sorted(str(r.uri) for r in listed.resources)
            read = await client.read_resource("citebound://collections/secret")
            out["secret_docs"] = json.loads(read.contents[0].text)["documents"]
            return out

    out = anyio.run(main)
    _check(out, audit)
    assert out["resources"] == ["citebound://collections/demo", "citebound://collections/secret"]
    assert [d["title"] for d in out["secret_docs"]] == ["Project Zebra Launch Plan"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server(api_store: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    audit = tmp_path / "audit.sqlite"
    keys = [{"name": n, "sha256": hash_key(k), "role": r, "collections": c}
            for n, (k, r, c) in KEYS.items()]  # fmt: skip
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "citebound", "mcp", "--http", "--port", str(port)],
        env=_env(api_store, audit, CITEBOUND_API_KEYS=json.dumps(keys)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp", audit
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stderr:
            proc.stderr.close()


def _http_client(url: str, http: Any) -> Client:
    from mcp.client.streamable_http import streamable_http_client

    return Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120)


def test_streamable_http_with_keys(http_server: tuple[str, Path]) -> None:
    url, audit = http_server
    plant_key = KEYS["demo-reader"][0]

    async def main() -> dict[str, Any]:
        import httpx2

        headers = {"Authorization": f"Bearer {plant_key}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            _http_client(url, http) as client,
        ):
            out = await _tools_answer_refusal_error(client)
            secret = await client.call_tool(
                "answer", {"question": SECRET_QUESTION, "collection": "secret"}
            )
            out["secret"] = secret
            out["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
            return out

    out = anyio.run(main)
    _check(out, audit, typo="key 'demo-reader' may not read collection 'dmeo'")
    # A key that may not read `secret` gets the API's 403 line, and no text of it.
    assert out["secret"].is_error
    assert "may not read collection 'secret'" in out["secret"].content[0].text
    assert out["resources"] == []  # with keys, collections are never listed to everyone


def test_streamable_http_refuses_a_missing_or_wrong_key(http_server: tuple[str, Path]) -> None:
    import httpx

    url, _ = http_server
    for headers in ({}, {"Authorization": "Bearer not-a-key"}):
        r = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                       headers={**headers, "Accept": "application/json, text/event-stream"})  # fmt: skip
        assert r.status_code == 401
        assert "API key" in r.json()["error"]


def test_http_without_keys_binds_only_loopback(api_store: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "citebound", "mcp", "--http", "--host", "0.0.0.0"],
        env=_env(api_store, tmp_path / "audit.sqlite"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "refusing to bind '0.0.0.0' without API keys" in result.stderr
