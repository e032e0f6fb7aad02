"""Batch inputs and outputs: question sets in, Delta tables out, Delta tables read by Spark.

Questions come from JSONL (`_id`, `text`; `id` is accepted too), Parquet or a Delta table and
are checked on the driver before any executor starts: every row needs non-empty text, and ids
must be unique (the audit keeps one record per request and run). A row without an id gets
`q-<sha256(text)[:16]>`, so its request id depends only on the row.

Outputs are written with delta-rs (`deltalake`) from the driver, one commit per table, so a
failed job leaves no partial table. Spark reads Delta tables back without the Delta jars:
Spark's Parquet reader over the table's current files for a local table (append-only tables
only: no deletion vectors), else deltalake -> Arrow -> a Spark DataFrame.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from citebound.audit.location import TableLocation, table_location
from citebound.errors import ConfigError
from citebound.text.sanitize import storage_problem

QUESTION_COLUMNS = ("_id", "text")


def row_request_id(qid: object, text: str) -> str:
    """The request id of one input row: its `_id`, else a hash of its text."""
    if qid is not None and str(qid).strip():
        return str(qid)
    return "q-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _jsonl_rows(path: Path) -> Iterator[tuple[int, object, object]]:
    try:
        lines = path.read_text("utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 (byte {err.start}): re-encode it as UTF-8") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise ConfigError(f"{path}:{n}: not JSON: {err.msg}") from None
        if not isinstance(obj, dict):
            raise ConfigError(f'{path}:{n}: each line needs {{"_id", "text"}}')
        yield n, obj.get("_id", obj.get("id")), obj.get("text")


def _table_rows(table: Any, where: str) -> Iterator[tuple[int, object, object]]:
    names = set(table.column_names)
    if "text" not in names:
        raise ConfigError(f"{where}: no `text` column (columns: {sorted(names)})")
    id_col = "_id" if "_id" in names else ("id" if "id" in names else None)
    texts = table.column("text").to_pylist()
    ids = table.column(id_col).to_pylist() if id_col else [None] * len(texts)
    for n, (qid, text) in enumerate(zip(ids, texts, strict=True), start=1):
        yield n, qid, text


def read_questions(
    where: str | Path, *, config_options: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """(request_id, text) of every question, sorted by request id (the batch's row order).

    Raises ConfigError naming the row for empty text or a repeated id.
    """
    text = str(where)
    path = Path(text)
    if text.endswith((".jsonl", ".json")) and "://" not in text:
        if not path.is_file():
            raise ConfigError(f"questions file {path} does not exist")
        rows: Iterable[tuple[int, object, object]] = _jsonl_rows(path)
    elif text.endswith(".parquet") and "://" not in text:
        import pyarrow.parquet as pq

        if not path.exists():
            raise ConfigError(f"questions file {path} does not exist")
        rows = _table_rows(pq.read_table(path), text)
    else:
        rows = _table_rows(
            read_delta_arrow(table_location(text, config_options=config_options)), text
        )
    out: dict[str, tuple[int, str]] = {}
    for n, qid, qtext in rows:
        if not isinstance(qtext, str) or not qtext.strip():
            raise ConfigError(f"{text}: row {n}: `text` must be a non-empty string")
        why = storage_problem(qtext) or (storage_problem(str(qid)) if qid is not None else None)
        if why is not None:
            raise ConfigError(f"{text}: row {n}: `text` or its id {why}")
        rid = row_request_id(qid, qtext)
        if rid in out:
            raise ConfigError(f"{text}: row {n}: id {rid!r} repeats row {out[rid][0]}")
        out[rid] = (n, qtext)
    if not out:
        raise ConfigError(f"{text}: no questions")
    return sorted((rid, q) for rid, (_, q) in out.items())


def read_delta_arrow(location: TableLocation, columns: list[str] | None = None) -> Any:
    """The current version of a Delta table as an Arrow table (ConfigError when absent)."""
    from deltalake import DeltaTable

    options = location.storage_options or None
    try:
        if not DeltaTable.is_deltatable(location.uri, storage_options=options):
            raise ConfigError(f"no Delta table at {location.uri}")
        return DeltaTable(location.uri, storage_options=options).to_pyarrow_table(columns=columns)
    except ConfigError:
        raise
    except Exception as err:
        raise ConfigError(f"cannot read Delta table {location.uri}: {err}") from err


def read_delta_spark(spark: Any, location: TableLocation) -> Any:
    """A Spark DataFrame of a Delta table's current version, without the Delta jars.

    Local append-only tables: Spark's Parquet reader over the current files (distributed,
    nothing passes through the driver). Object stores (Spark here has no s3a/abfs jars) and
    tables with deletion vectors: deltalake -> Arrow on the driver -> Spark.
    """
    from deltalake import DeltaTable

    options = location.storage_options or None
    table = DeltaTable(location.uri, storage_options=options)
    features = set(table.protocol().reader_features or [])
    if location.is_local and "deletionVectors" not in features:
        files = table.file_uris()
        schema = table.schema().to_arrow()
        if files:
            return spark.read.parquet(*files)
        import pyarrow as pa

        return spark.createDataFrame(pa.Table.from_pylist([], schema=pa.schema(schema)).to_pandas())
    return spark.createDataFrame(table.to_pyarrow_table().to_pandas())


def write_table(
    location: TableLocation,
    data: Any,
    *,
    name: str,
    description: str,
    unique_run: str | None = None,
) -> None:
    """Append Arrow `data` (table or RecordBatchReader) to the Delta table at `location` in
    one commit, creating it append-only on first use. With `unique_run`, refuse when the table
    already holds rows of that run_id (a batch run writes its rows once)."""
    from deltalake import DeltaTable, write_deltalake

    options = location.storage_options or None
    schema = data.schema
    if not DeltaTable.is_deltatable(location.uri, storage_options=options):
        if location.is_local:
            location.local_path.mkdir(parents=True, exist_ok=True)
        DeltaTable.create(
            location.uri,
            schema=schema,
            name=name,
            description=description,
            configuration={"delta.appendOnly": "true"},
            storage_options=options,
        )
    elif unique_run is not None:
        check_run_absent(location, unique_run)
    write_deltalake(location.uri, data, mode="append", storage_options=options)


def check_run_absent(location: TableLocation, run_id: str) -> None:
    """ConfigError when the Delta table at `location` already holds rows of `run_id`."""
    from deltalake import DeltaTable

    options = location.storage_options or None
    if not DeltaTable.is_deltatable(location.uri, storage_options=options):
        return
    done = DeltaTable(location.uri, storage_options=options).to_pyarrow_table(
        columns=["run_id"], filters=[("run_id", "=", run_id)]
    )
    if done.num_rows:
        raise ConfigError(
            f"{location.uri} already holds {done.num_rows} rows of run {run_id!r}: a run is "
            "written once (pass another --run-id to run the batch again)"
        )


# Wall-clock fields of an answers/audit row: the only ones that may differ between two runs of
# the same batch (the record hash covers them, and the audit chain's columns follow the record
# hash and the append order). Each model call (`model_calls`, JSON) has one too.
CLOCK_FIELDS = frozenset(
    {"latency_ms", "timestamp_utc", "llm_latency_ms", "record_hash"}
    | {"chain_seq", "prev_hash", "chain_hash"}
)


def without_clock_fields(row: dict[str, Any]) -> dict[str, Any]:
    """`row` (an answers or audit table row) without its wall-clock fields, nested ones too:
    what must be identical for any partitioning and executor count."""
    out = {k: v for k, v in row.items() if k not in CLOCK_FIELDS}
    if isinstance(out.get("model_calls"), str):
        calls = json.loads(out["model_calls"])
        out["model_calls"] = [{k: v for k, v in c.items() if k not in CLOCK_FIELDS} for c in calls]
    return out
