"""Contracts are frozen and closed; their JSON Schemas are pinned by snapshot files."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from citebound.contracts import AssemblyMetrics, RetrievalRow, canonical_json, content_hash
from citebound.contracts.schemas import SCHEMA_DIR, SCHEMA_MODELS, render_schema


@pytest.mark.parametrize("name", sorted(SCHEMA_MODELS))
def test_schema_snapshot(name: str) -> None:
    path = SCHEMA_DIR / f"{name}.schema.json"
    assert path.exists(), f"run `make schemas` to create {path}"
    assert render_schema(name) == path.read_text(encoding="utf-8"), (
        f"{name} schema changed; if intended, run `make schemas` and note it in CHANGELOG.md"
    )


@pytest.mark.parametrize("model", list(SCHEMA_MODELS.values()))
def test_every_contract_is_frozen_and_forbids_extra(model: type) -> None:
    config = model.model_config  # type: ignore[attr-defined]
    assert config.get("frozen") is True
    assert config.get("extra") == "forbid"


def test_frozen_instance_cannot_change() -> None:
    m = AssemblyMetrics(retrieved_k=1, selected_k=1)
    with pytest.raises(ValidationError):
        m.selected_k = 2  # type: ignore[misc]


def test_every_field_has_a_description() -> None:
    for model in SCHEMA_MODELS.values():
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} needs Field(description=...)"


def test_row_serializes_with_canonical_name() -> None:
    row = RetrievalRow.model_validate(
        {
            "chunk_id": "c",
            "knowledge_id": "k",
            "rank": 0,
            "similarity_score": 0.5,
            "chunk_text": "t",
            "knowledge_type_effective": "manual",
        }
    )
    assert row.model_dump()["similarity"] == 0.5


def test_canonical_json_and_hash_are_stable() -> None:
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    assert content_hash({"a": 1}) == content_hash({"a": 1})
    assert content_hash({"a": 1}).startswith("sha256:")


def test_schema_dir_is_package_data() -> None:
    assert Path(SCHEMA_DIR).parent.name == "citebound"
