"""Constants and helpers shared by the API tests (imported as a plain module)."""

from __future__ import annotations

import json
import math
from typing import Any

from fastapi.testclient import TestClient

from citebound.contracts.audit import AuditRecord

SECRET_DOC = """---
title: Project Zebra Launch Plan
knowledge_type: document
equipment_id: ZB-1
event_date: 2025-03-01
---
# Project Zebra Launch Plan

## Launch code

The launch code for the ZB-1 zebra reactor is 4471-ALPHA.

## Coolant

The ZB-1 zebra reactor coolant pressure must be kept at 12.5 bar.
"""
# "4471" alone also occurs by chance in random ids and timings (a uuid such as ...fc4471a3...).
SECRET_MARKERS = (
    "4471-ALPHA",
    "ALPHA",
    "Project Zebra",
    "12.5 bar",
    "coolant pressure",
    "Launch Plan",
)
SECRET_QUESTION = "What is the launch code for the ZB-1 zebra reactor?"
PLANT_QUESTION = "What torque should the HP-220 impeller bolts be tightened to?"
UNANSWERABLE = "What is the boiling point of the diesel fuel used by the backup generator?"

KEYS = {
    "demo-reader": ("key-demo-reader", "reader", ["demo"]),
    "secret-reader": ("key-secret-reader", "reader", ["secret"]),
    "admin": ("key-admin", "admin", ["*"]),
    "demo-admin": ("key-demo-admin", "admin", ["demo"]),
}


def auth(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[name][0]}"}


def refusals(client: TestClient) -> set[str]:
    """The policy's exact refusal strings (gate refusal and model refusal)."""
    policy = client.app.state.runtime.ctx.policy  # type: ignore[attr-defined]
    return {policy.refusal.no_evidence_text, policy.refusal.model_text}


def non_finite_copy(record: AuditRecord, request_id: str) -> AuditRecord:
    """`record` under `request_id` with NaN and ±Infinity in its number fields (a support
    score gone wrong), re-hashed: a record every sink keeps as it is."""
    evidence = [
        e.model_copy(update={"similarity_score": math.nan if i == 0 else -math.inf})
        for i, e in enumerate(record.evidence)
    ]
    odd = record.model_copy(
        update={
            "request_id": request_id,
            "min_support": math.nan,
            "attribution_coverage": math.inf,
            "llm_latency_ms": -math.inf,
            "evidence": evidence,
        }
    )
    return odd.model_copy(update={"record_hash": odd.compute_hash()})


def strict_json(text: str) -> Any:
    """Parse `text` as RFC 8259 JSON: the bare NaN / Infinity tokens Python accepts are refused,
    as JavaScript's JSON.parse refuses them."""

    def refuse(token: str) -> Any:
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)
