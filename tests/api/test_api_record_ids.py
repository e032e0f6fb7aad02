"""Issue 34 item 3: ids are data, not syntax. No JSONL id can make a question fail, and the
citation link of every id resolves."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from api_live import LiveServer

from citebound.config import load_config
from citebound.ingest import ingest_paths
from citebound.ingest.source import record_knowledge_id
from citebound.store.sqlite import SqliteStore

ODD_IDS = ("a|b", "nul\x00id", "tab\tid", "[x]", "../../../etc/passwd", "C0]", "..", "é ü")


def _records() -> str:
    lines = [
        json.dumps(
            {
                "_id": rid,
                "title": f"Gasket note {n}",
                "text": f"The QX-{n} gasket is replaced every {n + 2} weeks on the cooling loop.",
            }
        )
        for n, rid in enumerate(ODD_IDS)
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def odd_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("odd-ids")
    docs = root / "docs"
    docs.mkdir()
    (docs / "records.jsonl").write_text(_records(), "utf-8")
    (docs / "pump.md").write_text(
        "# Pump\n\nThe cooling loop pump gasket is replaced every 6 weeks.\n", "utf-8"
    )
    with SqliteStore(root / "store") as store:
        report = ingest_paths(store, [docs], collection="c", progress=False)
    assert not report.skipped, report.skipped
    return root / "store"


def test_odd_ids_are_kept_escaped_and_reversible() -> None:
    from urllib.parse import unquote

    for rid in ODD_IDS:
        kid = record_knowledge_id(rid)
        assert not any(c in kid for c in "[]|/\\\x00\t") and ".." not in kid
        assert unquote(kid) == rid
    assert record_knowledge_id("doc-1") == "doc-1"
    assert record_knowledge_id("a%7Cb") != record_knowledge_id("a|b")
    long = record_knowledge_id("|" * 500)
    assert len(long) <= 200 and long != record_knowledge_id("|" * 499)


@pytest.mark.integration
def test_no_record_id_fails_a_question_and_every_citation_link_resolves(
    odd_store: Path, tmp_path: Path
) -> None:
    config = load_config(
        env={},
        overrides={
            "store": str(odd_store),
            "collection": "c",
            "provider.name": "extractive",
            "audit.sqlite_path": str(tmp_path / "audit.sqlite"),
        },
    )
    # A real server: the TestClient decodes a path twice (`%2500` -> NUL).
    with LiveServer(config) as server, httpx.Client(base_url=server.url) as client:
        seen: set[str] = set()
        for n in range(len(ODD_IDS)):
            r = client.post(
                "/v1/answer", json={"question": f"How often is the QX-{n} gasket replaced?"}
            )
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["status"] != "FAILED", body
            for c in body.get("citations") or []:
                seen.add(c["knowledge_id"])
        pump = client.post(
            "/v1/answer", json={"question": "How often is the cooling loop pump gasket replaced?"}
        )
        assert pump.json()["status"] != "FAILED", pump.text
        assert seen, "no citation at all"
        for kid in seen | {record_knowledge_id(rid) for rid in ODD_IDS}:
            doc = client.get(f"/v1/documents/{quote(kid, safe='')}")
            assert doc.status_code == 200, (kid, doc.text)
