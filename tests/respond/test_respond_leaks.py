"""No internal field can leak: walk every field of every status, and the schema itself."""

from __future__ import annotations

from typing import Any

import pytest
from respond_samples import EVIDENCE, every_status

from citebound.contracts.public import PublicResponse

INTERNAL_KEYS = {
    "chunk_id",
    "chunk_text",
    "sanitized_text",
    "similarity",
    "similarity_score",
    "score",
    "rank",
    "faiss_id",
    "prompt",
    "prompt_text",
    "prompt_sha256",
    "evidence_block_text",
    "raw_model_text",
    "anchor_map",
    "selected_evidence",
    "messages",
    "response_id",
    "grounding_metrics",
    "reason_codes",
    "message",
}
PUBLIC_KEYS = {
    "request_id",
    "status",
    "answer",
    "citations",
    "token_usage",
    "latency_ms",
    "low_confidence",
    "confidence",  # a level (high/medium/low), never a score
    "failure_reason",
    "anchor",
    "knowledge_id",
    "source_reference",
    "document",
    "source_path",  # the file as ingested, relative to the folder given to ingest (issue #20)
    "heading_path",
    "page",
    "ocr",  # a boolean: the cited text was read by OCR (issue #33)
    "event_date",
    "equipment_id",
    "prompt",  # TokenUsage.prompt: a token count (checked to be an int below)
    "completion",
    "total",
}


def _walk(value: Any, path: str = "$", key: str = "") -> list[tuple[str, str, Any]]:
    """(path, key, value) for every field and every leaf of a JSON value, depth first."""
    out: list[tuple[str, str, Any]] = [(path, key, value)]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _walk(v, f"{path}.{k}", k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _walk(v, f"{path}[{i}]", key)
    return out


def _schema_property_names(schema: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for node in [schema, *schema.get("$defs", {}).values()]:
        names |= set(node.get("properties", {}))
    return names


def test_schema_has_only_public_fields() -> None:
    names = _schema_property_names(PublicResponse.model_json_schema())
    assert names <= PUBLIC_KEYS, names - PUBLIC_KEYS
    # TokenUsage.prompt is a token count, not a prompt: checked by type below.
    token_schema = PublicResponse.model_json_schema()["$defs"]["TokenUsage"]["properties"]
    assert {t["type"] for t in token_schema["prompt"]["anyOf"]} == {"integer", "null"}
    assert not (names - {"prompt"}) & INTERNAL_KEYS


@pytest.mark.parametrize("status_name", list(every_status()))
def test_no_internal_value_in_any_field(status_name: str) -> None:
    bundle, response = every_status()[status_name]
    data = response.model_dump(mode="json")
    chunk_ids = {e.chunk_id for e in bundle.selected_evidence}
    scores = {e.similarity_score for e in bundle.selected_evidence}
    leaves = _walk(data)
    assert leaves, "walk found no fields"
    for path, key, leaf in leaves:
        where = f"{status_name}: {path}"
        assert key in PUBLIC_KEYS or path == "$", where
        if key == "prompt":
            assert path.endswith("token_usage.prompt") and (leaf is None or isinstance(leaf, int))
        if isinstance(leaf, str):
            assert not any(cid in leaf for cid in chunk_ids), where
            assert "chunk_id=" not in leaf and "| knowledge_id=" not in leaf, where
            if key != "answer":  # the answer may quote evidence; nothing else may
                assert not any(text in leaf for text in EVIDENCE), where
        if isinstance(leaf, float) and not isinstance(leaf, bool):
            assert key == "latency_ms" and leaf not in scores, where
    json_text = response.model_dump_json()
    assert "similarity" not in json_text and "score" not in json_text
