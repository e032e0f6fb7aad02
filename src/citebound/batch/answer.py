"""`citebound batch answer`: answer a question set on Spark; write answers and audit as Delta.

Determinism: the driver sorts the questions by request id and cuts them into N contiguous
partitions; each executor answers its rows with the same store, policy and config, and every
request's answer depends only on its own row (prefetching embeds in bulk but gives the same
vectors). So the answers and audit rows are the same for any N and any executor count, apart
from wall-clock fields (`latency_ms`, `timestamp_utc`, `llm_latency_ms` and the record hash
over them). The run id is one per run: `--run-id`, or by default a hash of the question set,
the config and the policy, so resubmitting the same job cannot write a run twice.

Write order: the audit table first (every request that reached a model is recorded), then the
answers; each is one Delta commit, so a failed job leaves neither half-written.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import Field

from citebound.audit.location import TableLocation
from citebound.config import Config
from citebound.contracts.audit import AuditRecord
from citebound.contracts.base import Contract
from citebound.contracts.public import PublicResponse
from citebound.errors import AuditError, ConfigError

# Rows per Arrow batch when the driver streams executor output to its staging files.
STAGE_BATCH_ROWS = 1024


class AnswerSummary(Contract):
    """What `batch answer` did (printed as JSON)."""

    run_id: str = Field(description="Run id of every row written.")
    questions: int = Field(description="Questions read.")
    answers: int = Field(description="Rows appended to OUT/answers.")
    audit_records: int = Field(description="Rows appended to OUT/audit.")
    statuses: dict[str, int] = Field(description="Answers by public status.")
    partitions: int = Field(description="Spark partitions the questions were cut into.")
    answers_uri: str = Field(description="Answers Delta table.")
    audit_uri: str = Field(description="Audit Delta table.")
    seconds: float = Field(description="Wall time of the Spark job and the writes.")


def answers_arrow_schema() -> Any:
    """The answers table: PublicResponse fields plus run_id (nested as in the JSON)."""
    import pyarrow as pa

    citation = pa.struct(
        [
            ("anchor", pa.string()),
            ("knowledge_id", pa.string()),
            ("source_reference", pa.string()),
            ("document", pa.string()),
            ("heading_path", pa.list_(pa.string())),
            ("page", pa.int64()),
            ("event_date", pa.string()),
            ("equipment_id", pa.string()),
        ]
    )
    usage = pa.struct([("prompt", pa.int64()), ("completion", pa.int64()), ("total", pa.int64())])
    return pa.schema(
        [
            pa.field("request_id", pa.string(), nullable=False),
            pa.field("run_id", pa.string(), nullable=False),
            pa.field("status", pa.string(), nullable=False),
            pa.field("answer", pa.string(), nullable=False),
            pa.field("citations", pa.list_(citation)),
            pa.field("token_usage", usage),
            pa.field("latency_ms", pa.float64(), nullable=False),
            pa.field("low_confidence", pa.bool_(), nullable=False),
            pa.field("failure_reason", pa.string()),
        ]
    )


def default_run_id(questions: list[tuple[str, str]], config: Config) -> str:
    """`batch-<16 hex>` from the question set, the config and the policy fingerprints."""
    h = hashlib.sha256()
    h.update(config.fingerprint.encode())
    h.update(config.load_policy().fingerprint.encode())
    for rid, text in questions:
        h.update(json.dumps([rid, text]).encode("utf-8") + b"\n")
    return "batch-" + h.hexdigest()[:16]


def executor_config(config: Config) -> Config:
    """The config the executors get: absolute store and policy paths (their working directory
    may differ), and no audit sinks of their own (records come back to the driver)."""
    store = Path(config.store)
    if not (store / "store.sqlite").is_file():
        raise ConfigError(f"no citebound store at {store} (run `citebound ingest` first)")
    policy = config.policy
    if Path(policy).suffix == ".toml" and Path(policy).exists():
        policy = str(Path(policy).absolute())
    return config.model_copy(update={"store": str(store.absolute()), "policy": policy})


def answer_batch(
    spark: Any,
    questions: list[tuple[str, str]],
    config: Config,
    out: TableLocation,
    *,
    run_id: str | None = None,
    partitions: int | None = None,
) -> AnswerSummary:
    """Answer `questions` ((request_id, text), unique ids) and append both tables under `out`."""
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from citebound.audit.delta import DeltaAuditSink, records_to_arrow
    from citebound.batch.tables import check_run_absent, write_table
    from citebound.batch.worker import answer_partitions

    started = time.perf_counter()
    questions = sorted(questions)
    run = run_id or default_run_id(questions, config)
    conf = executor_config(config)
    n = max(1, min(partitions or spark.sparkContext.defaultParallelism, len(questions)))
    answers_at, audit_at = out.child("answers"), out.child("audit")
    audit_sink = DeltaAuditSink(audit_at)  # creates or checks the audit schema up front
    for table in (audit_sink.location, answers_at):  # fail before hours of work, not after
        check_run_absent(table, run)
    rdd = spark.sparkContext.parallelize(questions, numSlices=n)
    frame = spark.createDataFrame(rdd, "request_id string, text string")
    result = frame.mapInPandas(
        answer_partitions(conf.model_dump_json(), run),
        "request_id string, response_json string, audit_json string",
    )
    expected = {rid for rid, _ in questions}
    seen: set[str] = set()
    statuses: dict[str, int] = {}
    answer_schema = answers_arrow_schema()
    with tempfile.TemporaryDirectory(prefix="citebound-batch-") as tmp:
        a_path, r_path = Path(tmp) / "answers.parquet", Path(tmp) / "audit.parquet"
        a_rows: list[dict[str, Any]] = []
        r_rows: list[AuditRecord] = []
        a_writer = pq.ParquetWriter(a_path, answer_schema)
        r_writer = pq.ParquetWriter(r_path, records_to_arrow([]).schema)

        def flush() -> None:
            a_writer.write_table(pa.Table.from_pylist(a_rows, schema=answer_schema))
            r_writer.write_table(records_to_arrow(r_rows))
            a_rows.clear()
            r_rows.clear()

        try:
            for row in result.toLocalIterator(prefetchPartitions=True):
                resp = PublicResponse.model_validate_json(row["response_json"])
                record = AuditRecord.model_validate_json(row["audit_json"])
                rid = row["request_id"]
                if rid not in expected or rid in seen:
                    raise AuditError(f"executor returned request {rid!r} unexpectedly")
                if resp.request_id != rid or record.request_id != rid or record.run_id != run:
                    raise AuditError(f"request {rid}: response and audit record disagree")
                if not record.hash_ok():
                    raise AuditError(f"request {rid}: audit record hash does not verify")
                seen.add(rid)
                statuses[resp.status.value] = statuses.get(resp.status.value, 0) + 1
                a_rows.append({**resp.model_dump(mode="json"), "run_id": run})
                r_rows.append(record)
                if len(a_rows) >= STAGE_BATCH_ROWS:
                    flush()
            flush()
        finally:
            a_writer.close()
            r_writer.close()
        if seen != expected:
            raise AuditError(f"{len(expected - seen)} questions came back without an answer")
        write_table(
            audit_sink.location,
            ds.dataset(r_path).scanner().to_reader(),
            name="citebound_audit",
            description="citebound audit records (append-only)",
            unique_run=run,
        )
        write_table(
            answers_at,
            ds.dataset(a_path).scanner().to_reader(),
            name="citebound_answers",
            description="citebound batch answers: PublicResponse per request (append-only)",
            unique_run=run,
        )
    return AnswerSummary(
        run_id=run,
        questions=len(questions),
        answers=len(seen),
        audit_records=len(seen),
        statuses=dict(sorted(statuses.items())),
        partitions=n,
        answers_uri=answers_at.uri,
        audit_uri=audit_at.uri,
        seconds=round(time.perf_counter() - started, 3),
    )
