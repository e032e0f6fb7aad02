"""The JSON texts of audit records that people and programs read.

`audit_json`: the record's canonical JSON (`contracts.base.canonical_json`: sorted keys,
compact, UTF-8 kept), the very bytes its `record_hash` covers, so what is printed verifies as
printed. `citebound audit show` and `audit export --format jsonl` print it. Non-finite numbers
(a NaN support score) appear as the tokens `NaN`, `Infinity`, `-Infinity`: not strict JSON,
but what the hash covers; pydantic's own JSON would write `null`, and the printed record would
no longer match its hash (docs/audit.md). Python's `json.loads` and
`AuditRecord.model_validate_json` read the tokens back.

`audit_api_json`: what `GET /v1/audit/{request_id}` returns, strict JSON (RFC 8259) that any
client parses, JavaScript's `JSON.parse` included. It is `audit_json` with each non-finite
number written as the JSON string `"NaN"`, `"Infinity"` or `"-Infinity"`. Every field that can
hold one is a number field of the schema, so the string is unambiguous: the record's canonical
text is recovered by writing those strings in number fields back as the bare tokens, and
`AuditView.model_validate_json` / `AuditRecord.model_validate_json` read them back as the
floats, so the parsed record's `hash_ok()` holds (tests/api/test_api_endpoints.py).
"""

from __future__ import annotations

from pydantic import BaseModel

from citebound.audit.columns import json_safe
from citebound.contracts.base import canonical_json


def audit_json(value: BaseModel) -> str:
    """`value` (an AuditRecord, or a view holding records) as canonical JSON, one line."""
    return canonical_json(value)


def audit_api_json(value: BaseModel) -> str:
    """`audit_json(value)` as strict JSON: non-finite numbers as the strings `"NaN"`,
    `"Infinity"`, `"-Infinity"` (`columns.json_safe`), then the canonical encoder itself, so
    the bytes match `audit_json` wherever no number is non-finite)."""
    return canonical_json(json_safe(value.model_dump(mode="json")))
