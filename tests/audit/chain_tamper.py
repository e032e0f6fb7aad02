"""Tampering helpers shared by the SQLite and PostgreSQL audit chain tests (issue 34 item 4):
each edits the table behind the sink's back as someone with write access to it would."""

from __future__ import annotations

from audit_samples import record_for

from citebound.audit.columns import to_row
from citebound.contracts.audit import AuditRecord


def records(n: int = 5) -> list[AuditRecord]:
    return [
        record_for(
            "ok", request_id=f"req-{i}", run_id=None, timestamp=f"2026-01-0{i + 1}T00:00:00Z"
        )
        for i in range(n)
    ]


def rehashed(record: AuditRecord, **update: object) -> AuditRecord:
    changed = record.model_copy(update=update)
    return changed.model_copy(update={"record_hash": changed.compute_hash()})


def row_of(record: AuditRecord) -> dict[str, object]:
    return to_row(record, lists_as_json=True)
