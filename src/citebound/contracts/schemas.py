"""JSON Schemas of the public contracts, exported to `src/citebound/schemas/` and pinned by tests.

Run `python -m citebound.contracts.schemas --write` after an intended contract change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from citebound.contracts.assembly import AnswerBundle, PromptBuildResult
from citebound.contracts.audit import AuditRecord
from citebound.contracts.documents import Chunk, Document
from citebound.contracts.execution import LLMExecutionResult, ValidationResult
from citebound.contracts.public import PublicResponse
from citebound.contracts.retrieval import RetrievalBundle

SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "RetrievalBundle": RetrievalBundle,
    "AnswerBundle": AnswerBundle,
    "PromptBuildResult": PromptBuildResult,
    "LLMExecutionResult": LLMExecutionResult,
    "ValidationResult": ValidationResult,
    "PublicResponse": PublicResponse,
    "AuditRecord": AuditRecord,
    "Document": Document,
    "Chunk": Chunk,
}

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


def render_schema(name: str) -> str:
    """Deterministic JSON text of one contract's JSON Schema."""
    schema = SCHEMA_MODELS[name].model_json_schema(mode="validation")
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_all(directory: Path = SCHEMA_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name in SCHEMA_MODELS:
        path = directory / f"{name}.schema.json"
        path.write_text(render_schema(name), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    if "--write" in sys.argv:
        for p in write_all():
            print(p)
