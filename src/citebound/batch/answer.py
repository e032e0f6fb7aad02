"""`citebound batch answer`: answer a question set on Spark; write answers and audit as Delta.

Determinism: the driver sorts the questions by request id and cuts them into N contiguous
partitions; each executor answers its rows with the same store, policy and config, and every
request's answer depends only on its own row (prefetching embeds in bulk but gives the same
vectors). So the answers and audit rows are the same for any N and any executor count, apart
from wall-clock fields (`latency_ms`, `timestamp_utc`, `llm_latency_ms` and the record hash
over them). The run id is one per run: `--run-id`, or by default a hash of the question set,
the config and the policy, so resubmitting the same job cannot write a run twice.

Durability: the executors stage every finished row (answer + audit record) in OUT/_staging/
<run> as they go (`citebound.batch.staging`); the driver commits staged rows idempotently, audit
table first (`citebound.batch.commit`). A job that died is resumed by running it again: what it
staged is committed first and only the questions without an audit record are answered.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from pydantic import Field

from citebound.audit.location import TableLocation
from citebound.batch.commit import commit_staged, run_request_ids
from citebound.batch.run_lock import run_lock
from citebound.batch.staging import Staging, questions_digest
from citebound.batch.worker import answer_partitions
from citebound.config import Config
from citebound.contracts.base import Contract
from citebound.errors import AuditError, ConfigError
from citebound.store.open import open_store

# Rows an executor stages per file when no request reached a model over the network (those
# are staged one by one): small enough that a crash re-answers little, large enough that a
# 2,000-question extractive run writes tens of files, not thousands.
STAGE_ROWS = 64


class AnswerSummary(Contract):
    """What `batch answer` did (printed as JSON)."""

    run_id: str = Field(description="Run id of every row written.")
    questions: int = Field(description="Questions read.")
    answers: int = Field(description="Rows of this run in OUT/answers.")
    audit_records: int = Field(description="Rows of this run in OUT/audit.")
    resumed: int = Field(
        description="Questions an earlier attempt of this run had already answered and staged "
        "or committed (not asked again)."
    )
    unreadable_staged_files: int = Field(
        description="Staged files that could not be read (left in place; their rows were "
        "answered again)."
    )
    statuses: dict[str, int] = Field(description="Answers by public status.")
    partitions: int = Field(description="Spark partitions the questions were cut into.")
    answers_uri: str = Field(description="Answers Delta table.")
    audit_uri: str = Field(description="Audit Delta table.")
    seconds: float = Field(description="Wall time of the Spark job and the writes.")
    phase_seconds: dict[str, float] = Field(
        description="Wall time by phase: setup (checks, resume commit), spark_job (answering, "
        "staging), commit (staged rows to Delta, checks)."
    )


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
    may differ). With `database` set the store is PostgreSQL (checked reachable here, so a bad
    URL fails before the job); the store directory then only holds each host's index files."""
    store = Path(config.store)
    if config.database:
        open_store(store, database=config.database).close()
    elif not (store / "store.sqlite").is_file():
        raise ConfigError(f"no citebound store at {store} (run `citebound ingest` first)")
    policy = config.policy
    if Path(policy).suffix == ".toml" and Path(policy).exists():
        policy = str(Path(policy).absolute())
    return config.model_copy(update={"store": str(store.absolute()), "policy": policy})


def run_manifest(questions: list[tuple[str, str]], config: Config, run: str) -> dict[str, Any]:
    """What a run is: a re-run resumes it only when all of this is unchanged."""
    return {
        "run_id": run,
        "questions": len(questions),
        "questions_sha256": questions_digest(questions),
        "config_fingerprint": config.fingerprint,
        "policy_fingerprint": config.load_policy().fingerprint,
    }


def _start_or_resume(
    staging: Staging, manifest: dict[str, Any], audit_at: TableLocation, answers_at: TableLocation
) -> None:
    """Write the run manifest for a new run, or check that a re-run is the same run."""
    run = staging.run_id
    held = len(run_request_ids(audit_at, run) | run_request_ids(answers_at, run))
    earlier = staging.read_manifest()
    again = "pass another --run-id to run the batch again"
    if earlier is None:
        if held:
            raise ConfigError(
                f"{audit_at.uri} already holds {held} rows of run {staging.run_id!r}: a run is "
                f"written once ({again})"
            )
        staging.write_manifest({**manifest, "complete": False})
        return
    same = {k: earlier.get(k) for k in manifest} == manifest
    if not same:
        raise ConfigError(
            f"run {staging.run_id!r} was started with other questions, config or policy "
            f"({staging.location.uri}/run.json); {again}"
        )
    if earlier.get("complete"):
        raise ConfigError(
            f"{audit_at.uri} already holds {held} rows of run {staging.run_id!r}: a run is "
            f"written once ({again})"
        )


def answer_batch(
    spark: Any,
    questions: list[tuple[str, str]],
    config: Config,
    out: TableLocation,
    *,
    run_id: str | None = None,
    partitions: int | None = None,
    stage_rows: int = STAGE_ROWS,
) -> AnswerSummary:
    """Answer `questions` ((request_id, text), unique ids) and append both tables under `out`.

    A run that died part-way is resumed by calling this again with the same run id (the
    default run id is the same for the same questions and config): rows it staged are committed
    first and only the others are answered.
    """
    # Lazy: audit.delta needs deltalake and pyarrow (extra delta; ImportError without), ~50 ms to
    # import.
    from citebound.audit.delta import DeltaAuditSink

    started = time.perf_counter()
    questions = sorted(questions)
    run = run_id or default_run_id(questions, config)
    conf = executor_config(config)
    answers_at, audit_at = out.child("answers"), out.child("audit")
    DeltaAuditSink(audit_at)  # creates or checks the audit schema up front
    staging = Staging(out, run)
    # One driver per run id (batch/run_lock.py); a PostgreSQL store holds the lease of a run
    # whose output is in an object store.
    with run_lock(staging, database=config.database or None) as lock:
        _start_or_resume(staging, run_manifest(questions, config, run), audit_at, answers_at)
        expected = {rid for rid, _ in questions}
        lock.check()
        resumed = commit_staged(staging, expected, audit_at, answers_at, check=lock.check)
        audited = run_request_ids(audit_at, run)
        todo = [q for q in questions if q[0] not in audited]
        job_started = time.perf_counter()
        n = max(1, min(partitions or spark.sparkContext.defaultParallelism, max(1, len(todo))))
        if todo:
            frame = spark.createDataFrame(
                spark.sparkContext.parallelize(todo, numSlices=n), "request_id string, text string"
            )
            result = frame.mapInPandas(
                answer_partitions(conf.model_dump_json(), run, staging, stage_rows),
                "request_id string, part string",
            )
            wanted = {rid for rid, _ in todo}
            seen: set[str] = set()
            # collect(): one job over every partition at once (toLocalIterator would run them one
            # or two at a time); the rows are small, the answers themselves are in the staging area.
            for row in result.collect():
                rid = row["request_id"]
                if rid not in wanted or rid in seen:
                    raise AuditError(f"executor returned request {rid!r} unexpectedly")
                seen.add(rid)
            if seen != wanted:
                raise AuditError(f"{len(wanted - seen)} questions came back without an answer")
        commit_started = time.perf_counter()
        lock.check()
        now = commit_staged(staging, expected, audit_at, answers_at, check=lock.check)
        audited = run_request_ids(audit_at, run)
        answered = run_request_ids(answers_at, run)
        if audited != expected or answered != expected:
            raise AuditError(
                f"run {run}: {len(expected - audited)} questions without an audit record, "
                f"{len(expected - answered)} without an answer after the commit"
            )
        staging.write_manifest({**run_manifest(questions, config, run), "complete": True})
        statuses = _statuses(answers_at, run)
        done = time.perf_counter()
        return AnswerSummary(
            run_id=run,
            questions=len(questions),
            answers=len(answered),
            audit_records=len(audited),
            resumed=len(questions) - len(todo),
            statuses=statuses,
            partitions=n,
            answers_uri=answers_at.uri,
            audit_uri=audit_at.uri,
            unreadable_staged_files=resumed.unreadable_files + now.unreadable_files,
            seconds=round(done - started, 3),
            phase_seconds={
                "setup": round(job_started - started, 3),
                "spark_job": round(commit_started - job_started, 3),
                "commit": round(done - commit_started, 3),
            },
        )


def _statuses(answers_at: TableLocation, run: str) -> dict[str, int]:
    from deltalake import DeltaTable

    options = answers_at.storage_options or None
    table = DeltaTable(answers_at.uri, storage_options=options).to_pyarrow_table(
        columns=["status"], filters=[("run_id", "=", run)]
    )
    counts: dict[str, int] = {}
    for status in table.column("status").to_pylist():
        counts[str(status)] = counts.get(str(status), 0) + 1
    return dict(sorted(counts.items()))
