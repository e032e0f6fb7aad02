"""The `AuditSink` protocol every audit backend implements, and `open_sink` to pick one.

A sink is append-only: there is no update or delete method. `append` returns only after the
record is durable; if it raises `AuditError` the request must not be answered (fail closed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from citebound.audit.location import is_uri
from citebound.audit.sqlite import SQLiteAuditSink
from citebound.contracts.audit import AuditRecord

DEFAULT_AUDIT_PATH = Path(".citebound") / "audit.sqlite"


@runtime_checkable
class AuditSink(Protocol):
    """Append-only store of AuditRecords; (request_id, run_id) is unique."""

    def append(self, record: AuditRecord) -> None:
        """Durably append `record`. Raises AuditError on a duplicate (request_id, run_id),
        a record whose hash does not verify, or any storage failure."""
        ...

    def find(self, request_id: str) -> list[AuditRecord]:
        """Every record of `request_id` (one per run), oldest first."""
        ...

    def records(self) -> list[AuditRecord]:
        """All records ordered by (timestamp_utc, request_id, run_id)."""
        ...

    def close(self) -> None: ...


def open_sink(path: str | Path) -> AuditSink:
    """A Delta sink for an object-store URI (s3://, abfss://, gs://), a `file://` URI, a
    directory holding `_delta_log` or named `*.delta`; else SQLite."""
    if isinstance(path, str) and is_uri(path):
        # Lazy: audit.delta needs deltalake and pyarrow (extra delta; ImportError without), ~50 ms
        # to import.
        from citebound.audit.delta import DeltaAuditSink

        return DeltaAuditSink(path)
    p = Path(path)
    if (p / "_delta_log").is_dir() or p.suffix == ".delta":
        from citebound.audit.delta import DeltaAuditSink

        return DeltaAuditSink(p)

    return SQLiteAuditSink(p)
