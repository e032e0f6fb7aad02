"""The one JSON text of audit records that people and programs read: `citebound audit show`,
`audit export --format jsonl` and `GET /v1/audit/{request_id}` all print it.

It is the record's canonical JSON (`contracts.base.canonical_json`: sorted keys, compact,
UTF-8 kept), the very bytes its `record_hash` covers, so what is printed verifies as printed.
Non-finite numbers (a NaN support score) appear as the tokens `NaN`, `Infinity`, `-Infinity`:
not strict JSON, but what the hash covers; pydantic's own JSON would write `null`, and the
printed record would no longer match its hash (docs/audit.md). Python's `json.loads` and
`AuditRecord.model_validate_json` read the tokens back.
"""

from __future__ import annotations

from pydantic import BaseModel

from citebound.contracts.base import canonical_json


def audit_json(value: BaseModel) -> str:
    """`value` (an AuditRecord, or a view holding records) as canonical JSON, one line."""
    return canonical_json(value)
