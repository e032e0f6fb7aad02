"""Append-only audit store: one record per request, SQLite (default) and Delta Lake sinks.

>>> from citebound.audit import build_audit_record, open_sink, replay
"""

from citebound.audit.columns import COLUMN_NAMES, COLUMNS, from_row, to_row
from citebound.audit.record import build_audit_record, utc_now
from citebound.audit.replay import replay, request_of
from citebound.audit.sink import DEFAULT_AUDIT_PATH, AuditSink, open_sink
from citebound.audit.sqlite import SQLiteAuditSink
from citebound.audit.text import audit_api_json, audit_json
from citebound.contracts.audit import (
    AUDIT_SCHEMA_VERSION,
    AuditConversation,
    AuditEvidence,
    AuditRecord,
    CallReplay,
    FeedbackRecord,
    ReplayReport,
)
from citebound.contracts.execution import ModelCallRecord, SentenceFailure

__all__ = [
    "AUDIT_SCHEMA_VERSION",
    "COLUMNS",
    "COLUMN_NAMES",
    "DEFAULT_AUDIT_PATH",
    "AuditConversation",
    "AuditEvidence",
    "AuditRecord",
    "AuditSink",
    "CallReplay",
    "FeedbackRecord",
    "ModelCallRecord",
    "ReplayReport",
    "SQLiteAuditSink",
    "SentenceFailure",
    "audit_api_json",
    "audit_json",
    "build_audit_record",
    "from_row",
    "open_sink",
    "replay",
    "request_of",
    "to_row",
    "utc_now",
]
