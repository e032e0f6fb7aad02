"""Delta Lake audit sink (docs/audit.md), via the `deltalake` package.

Append mode only, schema enforced (the table is created with the arrow schema of `COLUMNS` and
`delta.appendOnly=true`, so deletes and updates are refused by the table itself), one record
per (request_id, run_id): a duplicate is rejected before writing. The duplicate check reads the
table, then appends: run one writer per table (Spark jobs write one partition of requests each).
Readable by Spark (`spark.read.format("delta")`) and pandas (`DeltaTable(p).to_pandas()`).

Chained as the SQL sinks are (audit/chain.py): each row carries `chain_seq` (its place in
append order), `prev_hash` and `chain_hash`, computed from the table's head under the writer's
lock, so `citebound audit verify --audit TABLE` names an edit, a deletion, a reorder or a forged
append. Rows written before the chain (null chain columns) are chained from the first record
in their (timestamp, request id, run id) order: the first chained row's `prev_hash` covers them
all, so deleting or adding one of them breaks it. A delete or overwrite commit is refused by
`delta.appendOnly`; a truncated tail is caught by an anchor (`verify --anchor`). Two processes
appending to one table at once would fork the chain (`verify` reports it): one writer per table.

The table may live anywhere delta-rs can write: a directory, `file://`, `s3://`, `abfss://` or
`gs://` (see `citebound.audit.location` for the forms and where storage options come from).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from citebound.audit.chain import GENESIS, ChainReport, ChainRow, link, verify
from citebound.audit.columns import COLUMNS, from_row, to_row
from citebound.audit.location import TableLocation, table_location
from citebound.contracts.audit import AuditRecord
from citebound.errors import AuditError

try:  # optional extra: citebound[audit-delta]
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake
except ImportError:  # pragma: no cover - exercised only without the extra
    pa = None


# The chain columns of the Delta table (after the record's columns; not in parquet exports).
CHAIN_COLUMNS = ("chain_seq", "prev_hash", "chain_hash")
# What the head of a table is computed from (the chained rows, or the rows before the chain).
_HEAD_COLUMNS = [*CHAIN_COLUMNS, "record_hash", "timestamp_utc", "request_id", "run_id"]


def arrow_schema(*, chain: bool = False) -> Any:
    """The enforced arrow schema of the audit table (without `chain`: the parquet export's)."""
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
    fields = [pa.field(c.name, kinds[c.kind], nullable=c.nullable) for c in COLUMNS]
    if chain:
        fields += [pa.field("chain_seq", pa.int64(), nullable=True)]
        fields += [pa.field(n, pa.string(), nullable=True) for n in CHAIN_COLUMNS[1:]]
    return pa.schema(fields)


def records_to_arrow(records: list[AuditRecord], chain_from: tuple[int, str] | None = None) -> Any:
    """An arrow table of `records` in the audit schema; with `chain_from` = (seq, chain hash)
    of the table's head, chained after it in list order (the Delta table's schema)."""
    rows = [to_row(r, lists_as_json=False) for r in records]
    if chain_from is None:
        return pa.Table.from_pylist(rows, schema=arrow_schema())
    seq, prev = chain_from
    for row, record in zip(rows, records, strict=True):
        seq += 1
        chained = link(prev, record.record_hash)
        row |= {"chain_seq": seq, "prev_hash": prev, "chain_hash": chained}
        prev = chained
    return pa.Table.from_pylist(rows, schema=arrow_schema(chain=True))


def _legacy_key(row: dict[str, Any]) -> tuple[str, str, str]:
    return (str(row["timestamp_utc"]), str(row["request_id"]), str(row["run_id"] or ""))


def _split(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows written before the chain, in record order; chained rows, in chain order)."""
    legacy = sorted((r for r in rows if r.get("chain_seq") is None), key=_legacy_key)
    chained = sorted((r for r in rows if r.get("chain_seq") is not None),
                     key=lambda r: (int(r["chain_seq"]), str(r["chain_hash"])))  # fmt: skip
    return legacy, chained


def chain_head(rows: list[dict[str, Any]]) -> tuple[int, str]:
    """(seq, chain hash) a new row is chained after, from `_HEAD_COLUMNS` of every row."""
    legacy, chained = _split(rows)
    if chained:
        return int(chained[-1]["chain_seq"]), str(chained[-1]["chain_hash"])
    head = GENESIS
    for row in legacy:  # rows of an older citebound: chained from the first record
        head = link(head, str(row["record_hash"]))
    return len(legacy), head


class DeltaAuditSink:
    """Append-only audit records in a Delta table directory.

    Thread-safe: appends take one lock, so two threads of one process cannot both pass the
    duplicate check for the same request before either writes.
    """

    def __init__(
        self,
        path: str | Path | TableLocation,
        storage_options: Mapping[str, str] | None = None,
    ):
        self.location = table_location(path, storage_options)
        self.uri = self.location.uri
        self.path = self.location.uri  # kept for messages and older callers
        self._options = self.location.storage_options or None
        self._lock = threading.Lock()
        try:
            if not DeltaTable.is_deltatable(self.uri, storage_options=self._options):
                if self.location.is_local:
                    self.location.local_path.mkdir(parents=True, exist_ok=True)
                DeltaTable.create(
                    self.uri,
                    schema=arrow_schema(chain=True),
                    name="citebound_audit",
                    description="citebound audit records (append-only)",
                    configuration={"delta.appendOnly": "true"},
                    storage_options=self._options,
                )
            existing = [f.name for f in self._delta().schema().fields]
            wanted = [f.name for f in arrow_schema(chain=True)]
            if existing != wanted and existing == wanted[: len(existing)]:
                existing = self._add_columns(wanted[len(existing) :])
        except AuditError:
            raise
        except Exception as err:
            raise AuditError(f"cannot open Delta audit table {self.uri}: {err}") from err
        if existing != wanted:
            raise AuditError(
                f"Delta table {self.uri} has columns {existing}, not the citebound audit schema"
            )

    def _delta(self) -> Any:
        return DeltaTable(self.uri, storage_options=self._options)

    def _add_columns(self, names: list[str]) -> list[str]:
        """Schema evolution of a table written by an older citebound: the audit schema only
        ever appends nullable text columns (see columns.py), then the chain columns, so old
        rows read them as null (rows before the chain: see the module docstring)."""
        from deltalake.schema import Field as DeltaField
        from deltalake.schema import PrimitiveType

        kinds = {c.name: c.kind if c.nullable else "required" for c in COLUMNS}
        kinds |= {"chain_seq": "long", "prev_hash": "text", "chain_hash": "text"}
        # `json` columns are canonical JSON text too.
        if any(kinds[n] not in ("text", "json", "long") for n in names):
            raise AuditError(f"cannot add columns {names} to {self.path}: not nullable text")
        table = self._delta()
        table.alter.add_columns(
            [
                DeltaField(
                    n, PrimitiveType("long" if kinds[n] == "long" else "string"), nullable=True
                )
                for n in names
            ]
        )
        return [f.name for f in self._delta().schema().fields]

    def _head(self) -> tuple[int, str]:
        try:
            rows = self._delta().to_pyarrow_table(columns=_HEAD_COLUMNS).to_pylist()
        except Exception as err:
            raise AuditError(f"cannot read Delta audit table {self.uri}: {err}") from err
        return chain_head(rows)

    def chain_rows(self) -> list[ChainRow]:
        """Every record with its chain columns, in chain order (module docstring); rows
        written before the chain get the links they would have had."""
        try:
            legacy, chained = _split(self._table().to_pylist())
        except Exception as err:
            raise AuditError(f"cannot read Delta audit table {self.uri}: {err}") from err
        # The first chained row's seq says how many rows preceded the chain; rows without
        # chain columns beyond those were added by hand later (a forged append): UNCHAINED.
        before = int(chained[0]["chain_seq"]) - 1 if chained else len(legacy)
        out: list[ChainRow] = []
        head = GENESIS
        for n, row in enumerate(legacy[:before], start=1):
            record = from_row(row)
            out.append(ChainRow(n, record, head, link(head, record.record_hash)))
            head = out[-1].chain_hash or head
        for row in chained:
            out.append(
                ChainRow(int(row["chain_seq"]), from_row(row), row["prev_hash"], row["chain_hash"])
            )
        last = out[-1].seq if out else 0
        for n, row in enumerate(legacy[before:], start=last + 1):
            out.append(ChainRow(n, from_row(row), None, None))
        return out

    def verify_chain(self, anchor: str | None = None) -> ChainReport:
        """Walk the chain (audit/chain.py). A tail deleted by rewriting the table's files
        (`delta.appendOnly` refuses a delete commit) shows against an anchor."""
        return verify(self.chain_rows(), anchor=anchor)

    def _table(self) -> Any:
        return self._delta().to_pyarrow_table()

    def append_many(self, records: list[AuditRecord]) -> None:
        """Append `records` in one Delta commit (all or nothing): the batch writer's path.
        Duplicates within `records` or against the table are refused before writing."""
        keys = [(r.request_id, r.run_id) for r in records]
        if len(set(keys)) != len(keys):
            raise AuditError("the records repeat a (request_id, run_id) pair; nothing stored")
        bad = [r.request_id for r in records if not r.hash_ok()]
        if bad:
            raise AuditError(f"records {bad[:5]} have a wrong record_hash; nothing stored")
        with self._lock:
            try:
                runs = sorted({r.run_id for r in records if r.run_id is not None})
                old = self._delta().to_pyarrow_table(columns=["request_id", "run_id"])
                seen = {(k["request_id"], k["run_id"]) for k in old.to_pylist()}
            except Exception as err:
                raise AuditError(f"cannot read Delta audit table {self.uri}: {err}") from err
            dup = [k for k in keys if k in seen]
            if dup:
                raise AuditError(
                    f"{len(dup)} audit record(s) of run(s) {runs} already exist, e.g. "
                    f"request_id={dup[0][0]!r}: one record per request per run; nothing stored"
                )
            if not records:
                return
            try:
                write_deltalake(
                    self.uri,
                    records_to_arrow(records, chain_from=self._head()),
                    mode="append",
                    storage_options=self._options,
                )
            except Exception as err:
                raise AuditError(f"cannot append to Delta audit table {self.uri}: {err}") from err

    def append(self, record: AuditRecord) -> None:
        if not record.hash_ok():
            raise AuditError(f"record {record.request_id} has a wrong record_hash; not stored")
        with self._lock:
            self._append(record)

    def _append(self, record: AuditRecord) -> None:
        try:
            keys = (
                self._delta()
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
        head = self._head()
        try:
            write_deltalake(
                self.uri,
                records_to_arrow([record], chain_from=head),
                mode="append",
                storage_options=self._options,
            )
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
