"""The public HTTP surface: OpenAPI snapshot, the page and its assets, `citebound serve`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from api_live import free_port
from click.testing import CliRunner
from fastapi.testclient import TestClient

from citebound.api import hash_key
from citebound.api.openapi import render
from citebound.cli import main

SNAPSHOT = Path(__file__).with_name("openapi.json")
SRC = Path(__file__).resolve().parents[2] / "src"


def test_openapi_matches_snapshot() -> None:
    assert SNAPSHOT.is_file(), f"missing {SNAPSHOT}"
    assert render() == SNAPSHOT.read_text(encoding="utf-8"), (
        "the HTTP API changed: review, then run "
        "`python -m citebound.api.openapi > tests/api/openapi.json`"
    )


def test_openapi_request_bodies_are_closed() -> None:
    doc = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    schemas = doc["components"]["schemas"]
    for name in ("AnswerRequest", "StepRequest", "FeedbackRequest", "ChatCompletionRequest"):
        assert schemas[name]["additionalProperties"] is False, name
    answer = doc["paths"]["/v1/answer"]["post"]
    assert answer["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/PublicResponse"
    )
    assert "application/problem+json" in answer["responses"]["422"]["content"]


def test_page_and_assets_are_served_with_a_strict_csp(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "<script" in page.text and "onclick" not in page.text  # no inline handlers
    for asset, kind in (("/ui/app.js", "javascript"), ("/ui/style.css", "css")):
        r = client.get(asset)
        assert r.status_code == 200 and kind in r.headers["content-type"]
    assert ".innerHTML =" not in client.get("/ui/app.js").text
    assert client.get("/favicon.ico").status_code == 200
    assert client.get("/ui/../store.sqlite").status_code == 404


def test_serve_refuses_a_public_bind_without_keys(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--store", str(tmp_path)])
    assert r.exit_code == 2
    assert "refusing to bind '0.0.0.0' without API keys" in r.output


def test_apikey_prints_a_key_and_only_its_hash() -> None:
    r = CliRunner().invoke(main, ["apikey", "ops", "--role", "admin", "--collections", "a,b"])
    assert r.exit_code == 0, r.output
    key = r.output.splitlines()[0]
    assert key.startswith("cb_") and len(key) > 40
    assert hash_key(key) in r.output and r.output.count(key) == 1
    assert 'collections = ["a", "b"]' in r.output and 'role = "admin"' in r.output


@pytest.mark.integration
def test_citebound_serve_answers_over_http(api_store: Path, tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "CITEBOUND_AUDIT_SQLITE_PATH": str(tmp_path / "a.sqlite"),
    }
    cmd = [
        sys.executable,
        "-m",
        "citebound",
        "serve",
        "--port",
        str(port),
        "--store",
        str(api_store),
        "--log-level",
        "warning",
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "server did not come up"
            time.sleep(0.3)
        r = httpx.post(
            f"{url}/v1/answer",
            json={"question": "What is the GB-7 gearbox oil grade?", "collection": "demo"},
            timeout=60,
        )
        assert r.status_code == 200 and r.json()["status"] == "OK", r.text
        assert "ISO VG 220" in r.json()["answer"]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "no API keys configured" in err  # the start-up warning
