"""GET /v1/audit/{id} flags a record the audit chain check fails (issue 34 item 4)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from api_helpers import auth
from fastapi.testclient import TestClient

from citebound.api import create_app
from citebound.config import Config


def test_audit_view_flags_a_tampered_record(
    make_config: Callable[..., Config], tmp_path: Path
) -> None:
    with TestClient(create_app(make_config(keys=True)), base_url="http://localhost") as client:
        ids = []
        for q in (
            "What torque for the HP-220 impeller bolts?",
            "What is the CX-9 safety valve set pressure?",
        ):
            r = client.post("/v1/answer", json={"question": q}, headers=auth("admin"))
            assert r.status_code == 200, r.text
            ids.append(r.json()["request_id"])
        clean = client.get(f"/v1/audit/{ids[0]}", headers=auth("admin")).json()
        assert clean["integrity"] == []
        conn = sqlite3.connect(tmp_path / "audit.sqlite", isolation_level=None)
        conn.execute("DROP TRIGGER audit_records_no_update")
        conn.execute("UPDATE audit_records SET question = 'edited' WHERE request_id = ?", (ids[0],))
        conn.close()
        view = client.get(f"/v1/audit/{ids[0]}", headers=auth("admin"))
        assert view.status_code == 200
        flags = view.json()["integrity"]
        assert flags and all(f.startswith("EDITED") for f in flags), flags
        assert client.get(f"/v1/audit/{ids[1]}", headers=auth("admin")).json()["integrity"] == []
