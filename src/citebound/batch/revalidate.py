"""`citebound batch revalidate`: `audit replay` over a whole audit table, on Spark.

Every stored raw model answer is validated again with today's validator and the configured
policy, inside the executors (each loads the store once, for the evidence texts of records
stored without them; every text is checked against its recorded sha256, so changed evidence
makes a record "not replayable", never a silent re-judgement). One verdict row per record is
appended to the output Delta table; the summary counts changed verdicts.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import Field

from citebound.audit.location import TableLocation
from citebound.batch.answer import executor_config
from citebound.batch.tables import read_delta_spark, write_table
from citebound.batch.worker import VERDICT_FIELDS, revalidate_partitions
from citebound.config import Config
from citebound.contracts.base import Contract
from citebound.errors import ConfigError


class RevalidateSummary(Contract):
    """What `batch revalidate` did (printed as JSON)."""

    records: int = Field(description="Audit records read.")
    replayable: int = Field(description="Records re-validated.")
    not_replayable: int = Field(description="Records without model text or evidence.")
    changed: int = Field(description="Records whose (status, reason) changed.")
    changes: dict[str, int] = Field(
        description="'OLD_STATUS/OLD_REASON -> NEW_STATUS/NEW_REASON' counts of changed verdicts."
    )
    policy_fingerprint: str = Field(description="Policy the records were judged with now.")
    out_uri: str = Field(description="Verdict Delta table.")
    seconds: float = Field(description="Wall time.")


def verdict_arrow_schema() -> Any:
    import pyarrow as pa

    kinds = {"string": pa.string(), "boolean": pa.bool_()}
    return pa.schema([pa.field(k, kinds[v]) for k, v in VERDICT_FIELDS.items()])


def _spark_schema() -> str:
    return ", ".join(f"{k} {v}" for k, v in VERDICT_FIELDS.items())


def revalidate_batch(
    spark: Any,
    audit: TableLocation,
    config: Config,
    out: TableLocation,
    *,
    only_run: str | None = None,
    evidence_from_store: bool = True,
    partitions: int | None = None,
) -> RevalidateSummary:
    """Re-validate the records of `audit` (optionally one run) and append verdicts to `out`."""
    import pyarrow as pa

    # Lazy: audit.delta needs deltalake and pyarrow (extra delta; ImportError without), ~50 ms to
    # import.
    from citebound.audit.delta import DeltaAuditSink

    started = time.perf_counter()
    DeltaAuditSink(audit)  # refuses a table that is not a citebound audit table
    conf = executor_config(config) if evidence_from_store else config
    frame = read_delta_spark(spark, audit)
    if only_run is not None:
        frame = frame.where(frame["run_id"] == only_run)
    if partitions:
        frame = frame.repartition(partitions, "request_id")
    verdicts = frame.mapInPandas(
        revalidate_partitions(conf.model_dump_json(), evidence_from_store), _spark_schema()
    )
    rows = [r.asDict() for r in verdicts.collect()]
    if not rows:
        raise ConfigError(
            f"no audit records in {audit.uri}" + (f" for run {only_run!r}" if only_run else "")
        )
    rows.sort(key=lambda r: (r["request_id"], r["run_id"] or ""))
    changes: dict[str, int] = {}
    for r in rows:
        if r["verdict_changed"]:
            key = (
                f"{r['stored_validation_status']}/{r['stored_failure_reason'] or '-'} -> "
                f"{r['new_validation_status']}/{r['new_failure_reason'] or '-'}"
            )
            changes[key] = changes.get(key, 0) + 1
    write_table(
        out,
        pa.Table.from_pylist(rows, schema=verdict_arrow_schema()),
        name="citebound_revalidation",
        description="citebound batch revalidate: one verdict row per audit record",
    )
    replayable = sum(1 for r in rows if r["replayable"])
    return RevalidateSummary(
        records=len(rows),
        replayable=replayable,
        not_replayable=len(rows) - replayable,
        changed=sum(changes.values()),
        changes=dict(sorted(changes.items())),
        policy_fingerprint=rows[0]["policy_fingerprint"],
        out_uri=out.uri,
        seconds=round(time.perf_counter() - started, 3),
    )
