"""Idempotent commits of staged `batch answer` rows to the Delta tables.

The driver commits what the executors staged (`citebound.batch.staging`): it reads the staged
files, checks every row (an expected request id, response and record agree, the record hash
verifies, the run id is this run's), drops rows the tables already hold for this run, appends
the audit records first and the answers second (one Delta commit each per group of files), and
only then deletes the staged files. Any crash leaves a state the next commit completes: a row
is in the audit table once, whatever failed where, and no staged row is lost.

Rows staged twice for one request id (only a bug or two drivers on one run could do that) keep
the first in file-name order, so the choice does not depend on timing; the count is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from citebound.audit.location import TableLocation
from citebound.batch.staging import Staging, call_file
from citebound.batch.tables import write_table
from citebound.contracts.audit import AuditRecord
from citebound.contracts.public import PublicResponse
from citebound.errors import AuditError

# Staged rows committed per Delta commit: bounds the driver's memory on large runs (a row is a
# few kB of JSON), while a 2,000-question run still commits once.
COMMIT_ROWS = 20_000


@dataclass
class CommitResult:
    """What one `commit_staged` call did."""

    files: int = 0
    staged_rows: int = 0
    audit_appended: int = 0
    answers_appended: int = 0
    duplicates: int = 0
    unreadable_files: int = 0


def run_request_ids(location: TableLocation, run_id: str) -> set[str]:
    """Request ids the Delta table at `location` holds for `run_id` (empty when absent)."""
    from deltalake import DeltaTable

    options = location.storage_options or None
    if not DeltaTable.is_deltatable(location.uri, storage_options=options):
        return set()
    table = DeltaTable(location.uri, storage_options=options).to_pyarrow_table(
        columns=["request_id"], filters=[("run_id", "=", run_id)]
    )
    return {str(x) for x in table.column("request_id").to_pylist()}


def commit_staged(
    staging: Staging,
    expected: set[str],
    audit_at: TableLocation,
    answers_at: TableLocation,
    *,
    check: Callable[[], None] | None = None,
) -> CommitResult:
    """Append every staged row not yet in the tables; delete the staged files afterwards.
    `check` (the driver's `RunLock.check`) runs before each group's Delta commits: a large
    commit outlasting the driver's lock stops at the next group instead of appending, blind,
    what the driver now holding the run appends too."""
    names = staging.part_files()
    result = CommitResult(files=len(names))
    if not names:
        _clear_audited_calls(staging, audit_at)
        return result
    audited = run_request_ids(audit_at, staging.run_id)
    answered = run_request_ids(answers_at, staging.run_id)
    seen: set[str] = set()
    group: list[str] = []
    records: list[AuditRecord] = []
    answers: list[dict[str, Any]] = []

    def flush() -> None:
        if check is not None and (records or answers):
            check()
        _append(audit_at, answers_at, records, answers, staging.run_id)
        result.audit_appended += len(records)
        result.answers_appended += len(answers)
        staging.delete_parts(group)  # both tables hold every row of these files now
        group.clear()
        records.clear()
        answers.clear()

    for name in names:
        rows, bad = staging.read_parts([name])
        result.unreadable_files += bad
        if bad:  # kept, never deleted: a transient read error must not lose a record
            continue
        group.append(name)
        for rid, response_json, audit_json in rows:
            result.staged_rows += 1
            if rid in seen:
                result.duplicates += 1
                continue
            seen.add(rid)
            resp, record = _checked(rid, response_json, audit_json, expected, staging.run_id)
            if rid not in audited:
                records.append(record)
                audited.add(rid)
            if rid not in answered:
                answers.append({**resp.model_dump(mode="json"), "run_id": staging.run_id})
                answered.add(rid)
        if len(records) + len(answers) >= 2 * COMMIT_ROWS:
            flush()
    flush()
    _clear_audited_calls(staging, audit_at, audited)
    return result


def _clear_audited_calls(
    staging: Staging, audit_at: TableLocation, audited: set[str] | None = None
) -> None:
    """Remove call intents (batch/intents.py) of requests the audit table now holds: left
    when an executor died between staging a row and clearing its intent."""
    files = staging.call_files()
    if not files:
        return
    held = audited if audited is not None else run_request_ids(audit_at, staging.run_id)
    staging.clear_calls(sorted(rid for rid in held if call_file(rid) in files))


def _checked(
    rid: str, response_json: str, audit_json: str, expected: set[str], run_id: str
) -> tuple[PublicResponse, AuditRecord]:
    if rid not in expected:
        raise AuditError(f"staged request {rid!r} is not a question of run {run_id!r}")
    resp = PublicResponse.model_validate_json(response_json)
    record = AuditRecord.model_validate_json(audit_json)
    if resp.request_id != rid or record.request_id != rid or record.run_id != run_id:
        raise AuditError(f"staged request {rid}: response and audit record disagree")
    if not record.hash_ok():
        raise AuditError(f"staged request {rid}: audit record hash does not verify")
    return resp, record


def _append(
    audit_at: TableLocation,
    answers_at: TableLocation,
    records: list[AuditRecord],
    answers: list[dict[str, Any]],
    run_id: str,
) -> None:
    import pyarrow as pa

    # Lazy: audit.delta needs deltalake and pyarrow (extra delta; ImportError without), ~50 ms to
    # import; batch.answer imports this module.
    from citebound.audit.delta import DeltaAuditSink
    from citebound.batch.answer import answers_arrow_schema

    # Audit first: a request that reached a model is recorded before its answer is published.
    # Through the sink: one Delta commit, chained after the table's head (audit/delta.py).
    if records:
        records.sort(key=lambda r: r.request_id)
        DeltaAuditSink(audit_at).append_many(records)
    if answers:
        answers.sort(key=lambda r: str(r["request_id"]))
        write_table(
            answers_at,
            pa.Table.from_pylist(answers, schema=answers_arrow_schema()),
            name="citebound_answers",
            description="citebound batch answers: PublicResponse per request (append-only)",
        )
