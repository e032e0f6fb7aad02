"""What runs inside the Spark executors (Python workers), shared by every batch command.

Each Python worker builds one `PipelineContext` per (config, command) and keeps it for every
partition it is given (Spark reuses Python workers), so the store, the index and the embedding
model load once per worker, not per partition or row. Nothing here imports pyspark: functions
take and return pandas DataFrames and are handed to `mapInPandas` by the driver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from citebound.audit.columns import COLUMNS, from_row
from citebound.audit.replay import replay, store_inputs
from citebound.batch.intents import CallJournal, interrupted_row
from citebound.batch.staging import Staging, call_file, slice_key
from citebound.config import Config
from citebound.contracts.audit import AuditRecord
from citebound.errors import AuditError

# Questions embedded ahead in one call inside a partition (same bound as `ask --questions`).
PREFETCH_CHUNK = 256

_CONTEXTS: dict[str, Any] = {}


class CollectingSink:
    """An in-memory audit sink: the executor takes each record right after its request and
    stages it (batch answer) or drops it (batch eval keeps metrics, not a second trail)."""

    def __init__(self) -> None:
        self._records: list[AuditRecord] = []

    def append(self, record: AuditRecord) -> None:
        if not record.hash_ok():
            raise AuditError(f"record {record.request_id} has a wrong record_hash; not stored")
        self._records.append(record)

    def find(self, request_id: str) -> list[AuditRecord]:
        return [r for r in self._records if r.request_id == request_id]

    def records(self) -> list[AuditRecord]:
        return list(self._records)

    def take(self) -> list[AuditRecord]:
        """The records appended since the last take (and forget them)."""
        out, self._records = self._records, []
        return out

    def close(self) -> None:
        """Nothing to release."""


def calls_remote_model(config: Config) -> bool:
    """Whether the configured provider calls a model over the network (any but the
    extractive answerer): its calls are journaled and its rows staged at once."""
    return config.provider.name != "extractive"


def worker_context(config_json: str) -> tuple[Any, CollectingSink]:
    """(Pipeline, its collecting sink) for this config, built once per Python worker. A
    provider that calls a model over the network is wrapped in a `CallJournal`
    (batch/intents.py), which `RowStager.start` binds to the run's staging area."""
    if config_json not in _CONTEXTS:
        # Lazy: the pipeline costs ~45 ms to import (pydantic contracts, stages), paid only by the
        # partitions that answer.
        from citebound.pipeline import Pipeline, PipelineContext

        config = Config.model_validate_json(config_json)
        sink = CollectingSink()
        # The journal wraps the provider the context makes, so `ctx.close()` closes both.
        wrapper = CallJournal if calls_remote_model(config) else None
        ctx = PipelineContext(config, sinks_override=[sink], provider_wrapper=wrapper)
        _CONTEXTS[config_json] = (Pipeline(ctx), sink)
    pipe, sink = _CONTEXTS[config_json]
    return pipe, sink


class RowStager:
    """Stages one task's finished rows (answer + audit record) in the run's staging area.

    A row whose request reached a model over the network is staged at once (a crash must not
    leave that call unaudited); other rows every `stage_rows` rows and at the end (answering
    them again after a crash calls no model). `start` returns the rows an earlier attempt of
    the same task staged, so a retried task does not answer them again, and lists the calls
    journaled before they were sent (batch/intents.py), reading none: `interrupted` reads the
    intent of a request whose call was sent but whose row never was, and stages its FAILED
    record instead of asking again.
    """

    def __init__(self, staging: Staging, run_id: str, stage_rows: int, pipe: Any) -> None:
        self.staging, self.run_id, self.stage_rows = staging, run_id, stage_rows
        # A journal wraps the provider exactly when it calls a model over the network
        # (`worker_context`, `calls_remote_model`).
        provider = pipe.ctx.provider
        self.journal = provider if isinstance(provider, CallJournal) else None
        self.policy = pipe.ctx.policy
        self.key: str | None = None
        self.pending: list[tuple[str, str, str]] = []
        self.out: list[tuple[str, str]] = []
        self.staged: dict[str, tuple[str, str]] = {}  # rid -> (response, record) JSON
        # Intent files (`staging.call_file`) of calls journaled, rows not staged; read only
        # when their request comes up.
        self.journaled: set[str] = set()

    def start(self, first_request_id: str) -> dict[str, str]:
        self.key = slice_key(self.run_id, first_request_id)
        done: dict[str, str] = {}
        for part in self.staging.part_files(self.key):  # an earlier attempt of this task
            rows, _ = self.staging.read_parts([part])
            done.update((r[0], part) for r in rows)
            self.staged.update((r[0], (r[1], r[2])) for r in rows)
        if self.journal is not None:
            self.journal.bind(self.staging, self.run_id)
            self.journaled = self.staging.call_files()
            # A staged row wins over its intent (cleared after the row was written, unless
            # the task died in between): only this task's requests, never another task's.
            leftover = sorted(rid for rid in done if call_file(rid) in self.journaled)
            self.staging.clear_calls(leftover)
            self.journaled.difference_update(map(call_file, leftover))
        return done

    def interrupted(self, rid: str, question: str) -> AuditRecord | None:
        """Stage the FAILED record of `rid` when its call was journaled and its answer lost
        (returns the record), else None: the request is then answered as usual."""
        intent = self.staging.read_call(rid) if call_file(rid) in self.journaled else None
        if intent is None:
            return None

        response, record = interrupted_row(
            rid, question, intent, run_id=self.run_id, policy=self.policy
        )
        self.pending.append((rid, response.model_dump_json(), record.model_dump_json()))
        self.flush()
        return record

    def add(self, rid: str, state: Any, records: list[AuditRecord]) -> None:
        if len(records) != 1 or state.response is None:
            raise AuditError(f"request {rid}: {len(records)} audit records, expected one")
        response = state.response.model_dump_json()
        self.pending.append((rid, response, records[0].model_dump_json()))
        llm = state.llm_result
        called = self.journal is not None and (
            self.journal.sent(rid) or (llm is not None and llm.attempts > 0)
        )
        if called or len(self.pending) >= self.stage_rows:
            self.flush()

    def flush(self) -> None:
        if self.pending and self.key is not None:
            part = self.staging.write_part(self.key, self.pending)
            rids = [rid for rid, _, _ in self.pending]
            self.out.extend((rid, part) for rid in rids)
            self.pending.clear()
            # The rows are durable now: their intents are done with (a crash before this
            # leaves them, and the staged row wins, see `start`).
            sent = self.journal.forget(rids) if self.journal is not None else []
            old = [rid for rid in rids if call_file(rid) in self.journaled]
            self.journaled.difference_update(map(call_file, old))
            if sent or old:
                self.staging.clear_calls(sorted(set(sent) | set(old)))


def answer_partitions(
    config_json: str, run_id: str, staging: Staging, stage_rows: int
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The mapInPandas function of `batch answer`: rows (request_id, text) in, rows
    (request_id, part) out, where `part` is the staged file holding the row's answer and audit
    record (see `RowStager` and `citebound.batch.staging`). When a request raises, the rows
    finished before it are staged before the task fails."""

    def run(frames: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd

        pipe, sink = worker_context(config_json)
        stager = RowStager(staging, run_id, stage_rows, pipe)
        done: dict[str, str] = {}
        for frame in frames:
            if stager.key is None and len(frame):
                done = stager.start(str(frame["request_id"].iloc[0]))
            ids = [str(x) for x in frame["request_id"]]
            texts = [str(x) for x in frame["text"]]
            todo = [(rid, t) for rid, t in zip(ids, texts, strict=True) if rid not in done]
            stager.out.extend((rid, done[rid]) for rid in ids if rid in done)
            try:
                for start in range(0, len(todo), PREFETCH_CHUNK):
                    chunk = todo[start : start + PREFETCH_CHUNK]
                    with pipe.prefetched([t for _, t in chunk]):
                        for rid, text in chunk:
                            if stager.interrupted(rid, text) is not None:
                                continue  # its call was sent before a crash: not again
                            state = pipe.run(text, request_id=rid, run_id=run_id)
                            stager.add(rid, state, sink.take())
            finally:
                stager.flush()
            yield pd.DataFrame(stager.out, columns=["request_id", "part"])
            stager.out.clear()

    return run


def revalidate_partitions(
    config_json: str, evidence_from_store: bool
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The mapInPandas function of `batch revalidate`: audit rows in, one verdict row out
    per record (see `citebound.batch.revalidate.VERDICT_COLUMNS`)."""

    def run(frames: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd

        pipe, _ = worker_context(config_json)
        policy = pipe.ctx.policy
        for frame in frames:
            out: list[dict[str, Any]] = []
            for row in frame.to_dict("records"):
                record = from_row(audit_row(row))
                texts, sources = (
                    store_inputs(record, pipe.ctx.store.get_chunks)
                    if evidence_from_store
                    else (None, None)
                )
                report = replay(record, policy, chunk_texts=texts, chunk_sources=sources)
                new = report.new_result
                out.append(
                    {
                        "request_id": record.request_id,
                        "run_id": record.run_id,
                        "replayable": report.replayable,
                        "reason": report.reason,
                        "stored_validation_status": _enum(report.stored_validation_status),
                        "stored_failure_reason": report.stored_failure_reason,
                        "new_validation_status": _enum(new.validation_status) if new else None,
                        "new_failure_reason": new.failure_reason if new else None,
                        "verdict_changed": report.verdict_changed,
                        "stored_policy_fingerprint": record.policy_fingerprint,
                        "policy_fingerprint": policy.fingerprint,
                        "policy_fingerprint_matches": report.policy_fingerprint_matches,
                        "stored_validator_version": report.stored_validator_version,
                        "validator_version": new.validator_version if new else None,
                    }
                )
            yield pd.DataFrame(out, columns=list(VERDICT_FIELDS))

    return run


VERDICT_FIELDS: dict[str, str] = {
    "request_id": "string",
    "run_id": "string",
    "replayable": "boolean",
    "reason": "string",
    "stored_validation_status": "string",
    "stored_failure_reason": "string",
    "new_validation_status": "string",
    "new_failure_reason": "string",
    "verdict_changed": "boolean",
    "stored_policy_fingerprint": "string",
    "policy_fingerprint": "string",
    "policy_fingerprint_matches": "boolean",
    "stored_validator_version": "string",
    "validator_version": "string",
}


def _enum(value: Any) -> str | None:
    return None if value is None else str(getattr(value, "value", value))


def audit_row(row: dict[str, Any]) -> dict[str, Any]:
    """A pandas row of the audit table -> the plain values `from_row` takes. Arrow->pandas
    turns a nullable int column into float64 with NaN and list columns into numpy arrays."""
    out: dict[str, Any] = {}
    for col in COLUMNS:
        value: Any = row.get(col.name)
        if value is not None and hasattr(value, "tolist") and not isinstance(value, str):
            value = value.tolist()
        if _is_null(value):
            value = None
        elif col.kind == "int":
            value = int(value)
        elif col.kind == "real":
            value = float(value)
        elif col.kind == "bool":
            value = bool(value)
        elif col.kind == "text_list" and not isinstance(value, str):
            value = [str(v) for v in value]
        out[col.name] = value
    return out


def _is_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return value != value  # NaN
    try:
        import pandas as pd

        return value is pd.NA or value is pd.NaT
    except ImportError:  # pragma: no cover
        return False
