"""Delta Lake audit sink (seed 001 "Persisting Validation Results"), via the `deltalake` package.

Append mode only, schema enforced (the table is created with the arrow schema of `COLUMNS` and
`delta.appendOnly=true`, so deletes and updates are refused by the table itself), one record
per (request_id, run_id): a duplicate is rejected before writing. The duplicate check reads the
table, then appends: run one writer per table (Spark jobs write one partition of requests each).
Readable by Spark (`spark.read.format("delta")`) and pandas (`DeltaTable(p).to_pandas()`).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from citebound.audit.columns import COLUMNS, from_row, to_row
from citebound.contracts.audit import AuditRecord
from citebound.errors import AuditError

try:  # optional extra: citebound[audit-delta]
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake
except ImportError:  # pragma: no cover - exercised only without the extra
    pa = None


def arrow_schema() -> Any:
    """The enforced arrow schema of the audit table (also used for parquet export)."""
    if pa is None:  # pragma: no cover
        raise AuditError("the Delta sink needs `pip install citebound[audit-delta]`")
    kinds = {
        "text": pa.string(),
        "int": pa.int64(),
        "real": pa.float64(),
        "bool": pa.bool_(),
        "text_list": pa.list_(pa.string()),
        "json": pa.string(),
    }
    return pa.schema([pa.field(c.name, kinds[c.kind], nullable=c.nullable) for c in COLUMNS])


def records_to_arrow(records: list[AuditRecord]) -> Any:
    """An arrow table of `records` in the audit schema."""
    rows = [to_row(r, lists_as_json=False) for r in records]
    return pa.Table.from_pylist(rows, schema=arrow_schema())


class DeltaAuditSink:
    """Append-only audit records in a Delta table directory.

    Thread-safe: appends take one lock, so two threads of one process cannot both pass the
    duplicate check for the same request before either writes.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        schema = arrow_schema()
        try:
            if not DeltaTable.is_deltatable(str(self.path)):
                self.path.mkdir(parents=True, exist_ok=True)
                DeltaTable.create(
                    str(self.path),
                    schema=schema,
                    name="citebound_audit",
                    description="citebound audit records (append-only)",
                    configuration={"delta.appendOnly": "true"},
                )
            existing = [f.name for f in DeltaTable(str(self.path)).schema().fields]
            wanted = [f.name for f in schema]
            if existing != wanted and existing == wanted[: len(existing)]:
                existing = self._add_columns(wanted[len(existing) :])
        except Exception as err:
            raise AuditError(f"cannot open Delta audit table {self.path}: {err}") from err
        if existing != wanted:
            raise AuditError(
                f"Delta table {self.path} has columns {existing}, not the citebound audit schema"
            )

    def _add_columns(self, names: list[str]) -> list[str]:
        """Schema evolution of a table written by an older citebound: the audit schema only
        ever appends nullable text columns (see columns.py), so old rows read them as null."""
        from deltalake.schema import Field as DeltaField
        from deltalake.schema import PrimitiveType

        kinds = {c.name: c for c in COLUMNS}
        # `json` columns are canonical JSON text too.
        if any(kinds[n].kind not in ("text", "json") or not kinds[n].nullable for n in names):
            raise AuditError(f"cannot add columns {names} to {self.path}: not nullable text")
        table = DeltaTable(str(self.path))
        table.alter.add_columns(
            [DeltaField(n, PrimitiveType("string"), nullable=True) for n in names]
        )
        return [f.name for f in DeltaTable(str(self.path)).schema().fields]

    def _table(self) -> Any:
        return DeltaTable(str(self.path)).to_pyarrow_table()

    def append(self, record: AuditRecord) -> None:
        if not record.hash_ok():
            raise AuditError(f"record {record.request_id} has a wrong record_hash; not stored")
        with self._lock:
            self._append(record)

    def _append(self, record: AuditRecord) -> None:
        try:
            keys = (
                DeltaTable(str(self.path))
                .to_pyarrow_table(
                    columns=["request_id", "run_id"],
                    filters=[("request_id", "=", record.request_id)],
                )
                .to_pylist()
            )
        except Exception as err:
            raise AuditError(f"cannot read Delta audit table {self.path}: {err}") from err
        if any(k["run_id"] == record.run_id for k in keys):
            raise AuditError(
                f"audit record for request_id={record.request_id!r} run_id={record.run_id!r} "
                "already exists (one record per request per run)"
            )
        try:
            write_deltalake(str(self.path), records_to_arrow([record]), mode="append")
        except Exception as err:
            raise AuditError(f"cannot append to Delta audit table {self.path}: {err}") from err

    def find(self, request_id: str) -> list[AuditRecord]:
        found = [r for r in self.records() if r.request_id == request_id]
        return sorted(found, key=lambda r: (r.timestamp_utc, r.run_id or ""))

    def records(self) -> list[AuditRecord]:
        try:
            rows = self._table().to_pylist()
        except Exception as err:
            raise AuditError(f"cannot read Delta audit table {self.path}: {err}") from err
        out = [from_row(row) for row in rows]
        return sorted(out, key=lambda r: (r.timestamp_utc, r.request_id, r.run_id or ""))

    def close(self) -> None:
        """Nothing to release: every operation opens the table at its latest version."""
