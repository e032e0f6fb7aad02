"""JSON Schema snapshots of the contracts this area owns. After an intended change run
`python -m citebound.contracts.schemas --write` and commit the files you changed."""

from __future__ import annotations

import pytest

from citebound.contracts.schemas import SCHEMA_DIR, render_schema


@pytest.mark.parametrize("name", ["PublicResponse", "ValidationResult", "AuditRecord"])
def test_schema_matches_snapshot(name: str) -> None:
    path = SCHEMA_DIR / f"{name}.schema.json"
    assert path.is_file(), f"missing snapshot {path}"
    assert render_schema(name) == path.read_text(encoding="utf-8"), (
        f"{name} schema changed: review, then regenerate the snapshot"
    )


def test_public_response_schema_is_closed() -> None:
    import json

    schema = json.loads(render_schema("PublicResponse"))
    assert schema["additionalProperties"] is False
    objects = [d for d in schema["$defs"].values() if d.get("type") == "object"]
    assert len(objects) == 2  # PublicCitation, TokenUsage
    assert all(d["additionalProperties"] is False for d in objects)
