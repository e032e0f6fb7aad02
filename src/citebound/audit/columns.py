"""The one flat column layout of an AuditRecord, shared by every sink.

Scalars map to typed columns. `text_list` columns are JSON arrays in SQLite and
`list<string>` in Delta. `json` columns (anchor_map, evidence, unsupported_sentences,
model_calls, conversation, display_anchors) are canonical JSON text in both, so Spark reads
them with `from_json` and pandas with `json.loads`.

Non-finite numbers (NaN, Infinity, -Infinity: a support score or a similarity gone wrong) are
data about the request and are kept, never lost, and the record's hash covers them (canonical
JSON writes them as `NaN`, `Infinity`, `-Infinity`, inside `json` columns too). SQLite stores a
NaN REAL as NULL and PostgreSQL's JSON has no NaN, so in both SQL sinks a non-finite `real` is
written as that same word (`REAL_WORDS`), which PostgreSQL's DOUBLE PRECISION parses and
SQLite keeps as text, and read back as the float: both sinks return the record they were
given, hash included. Delta's float64 columns hold them natively.

A test checks this list against the `AuditRecord` fields, so a new field cannot be silently
dropped by a sink. New columns go at the end, where SQLite's ALTER TABLE and Delta's
add_columns put them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Literal

from citebound.contracts.audit import AuditRecord
from citebound.contracts.base import canonical_json
from citebound.errors import AuditError

Kind = Literal["text", "int", "real", "bool", "text_list", "json"]


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    nullable: bool


def _c(name: str, kind: Kind, nullable: bool = False) -> Column:
    return Column(name, kind, nullable)


COLUMNS: tuple[Column, ...] = (
    _c("schema_version", "int"),
    _c("request_id", "text"),
    _c("run_id", "text", True),
    _c("timestamp_utc", "text"),
    _c("status", "text"),
    _c("assembly_status", "text", True),
    _c("generation_status", "text"),
    _c("llm_generation_status", "text", True),
    _c("validation_status", "text", True),
    _c("failure_reason", "text", True),
    _c("reason_codes", "text_list"),
    _c("llm_failure_reason", "text", True),
    _c("citation_count", "int"),
    _c("uncited_sentence_count", "int"),
    _c("invalid_anchor_count", "int"),
    _c("suspicious_new_ids", "text_list"),
    _c("refusal_detected", "bool"),
    _c("length_ratio_flag", "bool"),
    _c("attribution_coverage", "real", True),
    _c("min_support", "real", True),
    _c("low_confidence", "bool"),
    _c("validated_citations", "text_list"),
    _c("validated_answer_text", "text", True),
    _c("raw_model_text", "text", True),
    _c("model_name", "text", True),
    _c("provider", "text", True),
    _c("response_id", "text", True),
    _c("embedding_model", "text", True),
    _c("index_version", "text", True),
    _c("policy_version", "text"),
    _c("policy_fingerprint", "text"),
    _c("validator_version", "text", True),
    _c("citation_style", "text", True),
    _c("prompt_sha256", "text", True),
    _c("template_id", "text", True),
    _c("anchor_map", "json"),
    _c("evidence", "json"),
    _c("evidence_chars", "int"),
    _c("evidence_texts", "text_list", True),
    _c("attempts", "int"),
    _c("llm_latency_ms", "real", True),
    _c("latency_ms", "real"),
    _c("prompt_tokens", "int", True),
    _c("completion_tokens", "int", True),
    _c("total_tokens", "int", True),
    _c("question", "text"),
    _c("prompt_text", "text", True),
    _c("record_hash", "text"),
    # Added after schema version 1: appended, as ALTER TABLE / Delta add_columns append.
    _c("reranker", "text", True),
    _c("unsupported_sentences", "json", True),
    _c("model_calls", "json", True),  # schema v4, migration 6
    _c("conversation", "json", True),
    _c("display_anchors", "json", True),  # schema v5, migration 8
)
COLUMN_NAMES = tuple(c.name for c in COLUMNS)
# How the SQL sinks write a non-finite `real` (the words of canonical JSON and of PostgreSQL).
REAL_WORDS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _real_word(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


# jsonb stores numbers as PostgreSQL numeric, which has no negative zero: a -0.0 (a rounded
# tiny negative score) would read back as 0.0 and its record fail its hash. In jsonb data it
# is written as this string, which the contract's float fields read back as -0.0.
NEGATIVE_ZERO = "-0.0"


def json_safe(value: Any, *, negative_zero: bool = False) -> Any:
    """`value` (JSON-mode data of a contract) with every non-finite float written as its word
    (`REAL_WORDS`), so strict JSON parsers (JavaScript's, PostgreSQL's jsonb) take it. Only
    number fields of the audit contracts can hold such a float, so the string is unambiguous:
    validating with the contract turns it back into the float (docs/audit.md).
    `negative_zero` (jsonb) also writes -0.0 as the string `NEGATIVE_ZERO`."""
    if isinstance(value, float) and not math.isfinite(value):
        return _real_word(value)
    if negative_zero and isinstance(value, float) and value == 0.0 and math.copysign(1, value) < 0:
        return NEGATIVE_ZERO
    if isinstance(value, dict):
        return {k: json_safe(v, negative_zero=negative_zero) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v, negative_zero=negative_zero) for v in value]
    return value


def _real_of(column: str, word: str) -> float:
    """The float a SQL sink wrote as `word`; AuditError for any other text (a row written by
    something else): `audit show` reports it instead of a traceback."""
    value = REAL_WORDS.get(word)
    if value is None:
        raise AuditError(f"unreadable real in column {column}: {word[:40]!r}")
    return value


def to_row(
    record: AuditRecord, *, lists_as_json: bool, nested_json: bool = False
) -> dict[str, Any]:
    """Flat row of `record`. `lists_as_json` gives the SQL sinks' encodings (SQLite and
    PostgreSQL): text lists as JSON text, bools as 0/1, non-finite reals as `REAL_WORDS`.
    `nested_json` (PostgreSQL's jsonb columns) keeps `json` and `text_list` values as JSON data
    instead of text, non-finite numbers in them written as words (`json_safe`): the row is then
    encoded once, as a whole."""
    data = record.model_dump(mode="json")
    row: dict[str, Any] = {}
    for col in COLUMNS:
        value = data[col.name]
        if nested_json and (col.kind == "json" or col.kind == "text_list"):
            value = json_safe(value, negative_zero=True)
        elif col.kind == "json" or (
            col.kind == "text_list" and lists_as_json and value is not None
        ):
            value = canonical_json(value)
        elif col.kind == "bool" and lists_as_json:
            value = int(value)
        elif (
            col.kind == "real" and lists_as_json and value is not None and not math.isfinite(value)
        ):
            value = _real_word(value)
        row[col.name] = value
    return row


def from_row(row: dict[str, Any]) -> AuditRecord:
    """Rebuild an AuditRecord from a row written by `to_row` (either encoding)."""
    data: dict[str, Any] = {}
    for col in COLUMNS:
        value = row[col.name]
        if value is not None and (col.kind == "json" or col.kind == "text_list"):
            # JSON text (SQLite, and PostgreSQL rows written before its jsonb columns or by an
            # older replica after them), parsed JSON (PostgreSQL jsonb), or a list (Delta).
            if isinstance(value, str):
                value = json.loads(value)
            elif not isinstance(value, dict):
                value = list(value)
        elif value is not None and col.kind == "bool":
            value = bool(value)
        elif isinstance(value, str) and col.kind == "real":
            value = _real_of(col.name, value)
        data[col.name] = value
    return AuditRecord.model_validate(data)
