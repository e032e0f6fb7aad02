"""`citebound batch eval`: retrieval and refusal metrics over a judged question set, on Spark.

Definitions are the benchmarks' (benchmarks/bench_retrieval.py, citebound.eval.end_to_end):

* nDCG@10 and Recall@100 (BEIR/trec_eval conventions, `citebound.eval.metrics`) of the
  retriever's ranking of document ids, over the questions that have judgments (qrels);
* refusal_rate: out-of-corpus questions refused before any LLM call;
* false_refusal_rate and answered_rate: in-corpus questions refused before the LLM, answered OK.

A question is in-corpus when its JSONL row says `"in_corpus": true`, or, without that field,
when it has a judgment with relevance > 0. Each question runs through the whole pipeline in the
executors (one pipeline per Python worker); per-question rows go to OUT/eval (Delta) and the
driver averages them in request-id order, so the figures do not depend on partitioning.

Every pipeline run is audited like a `batch answer` row (a model may be called): answers and
audit records are staged as the job goes and committed to OUT/answers and OUT/audit under the
eval run id. A re-run after a crash commits what was staged and does not ask those questions
again (their status and LLM attempts come from the tables; retrieval metrics are recomputed).
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import Field

from citebound.audit.location import TableLocation
from citebound.batch.answer import STAGE_ROWS, default_run_id, executor_config
from citebound.batch.commit import commit_staged, run_request_ids
from citebound.batch.run_lock import run_lock
from citebound.batch.staging import Staging
from citebound.batch.tables import check_run_absent, write_table
from citebound.batch.worker import RowStager, worker_context
from citebound.config import Config
from citebound.contracts.audit import AuditRecord
from citebound.contracts.base import Contract
from citebound.contracts.public import PublicResponse
from citebound.errors import AuditError, ConfigError
from citebound.eval.metrics import ndcg_at_k, recall_at_k

# Ranking depth kept per question: Recall@100 needs the first 100 distinct documents.
RANKING_DEPTH = 100
NDCG_K = 10

EVAL_FIELDS: dict[str, str] = {
    "request_id": "string",
    "in_corpus": "boolean",
    "judged": "boolean",
    "status": "string",
    "refused_before_llm": "boolean",
    "ndcg_at_10": "double",
    "recall_at_100": "double",
    "ranking": "array<string>",
}


class EvalSummary(Contract):
    """Metrics of `batch eval` (printed as JSON); a rate is None when its set is empty."""

    questions: int = Field(description="Questions evaluated.")
    judged: int = Field(description="Questions with judgments (retrieval metrics).")
    ndcg_at_10: float | None = Field(description="Mean nDCG@10 over judged questions.")
    recall_at_100: float | None = Field(description="Mean Recall@100 over judged questions.")
    n_in: int = Field(description="In-corpus questions.")
    n_out: int = Field(description="Out-of-corpus questions.")
    refusal_rate: float | None = Field(description="Out-of-corpus refused before the LLM.")
    false_refusal_rate: float | None = Field(description="In-corpus refused before the LLM.")
    answered_rate: float | None = Field(description="In-corpus answered (status OK).")
    failed: int = Field(description="Questions that ended FAILED.")
    run_id: str = Field(description="Run id of the pipeline requests.")
    out_uri: str = Field(description="Per-question Delta table.")
    audit_uri: str = Field(description="Audit Delta table (one record per question).")
    audit_records: int = Field(description="Audit records of this run.")
    seconds: float = Field(description="Wall time.")


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """BEIR qrels TSV (`query-id<TAB>corpus-id<TAB>score`, header optional)."""
    if not path.is_file():
        raise ConfigError(f"qrels file {path} does not exist")
    out: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for n, row in enumerate(csv.reader(fh, delimiter="\t"), start=1):
            if not row or (n == 1 and row[0] == "query-id"):
                continue
            if len(row) < 3:
                raise ConfigError(f"{path}:{n}: need query-id, corpus-id, score")
            try:
                out.setdefault(row[0], {})[row[1]] = int(row[2])
            except ValueError:
                raise ConfigError(f"{path}:{n}: score {row[2]!r} is not an integer") from None
    return out


def read_in_corpus(path: Path) -> dict[str, bool]:
    """`in_corpus` flags of a JSONL question file (only rows that carry the field)."""
    flags: dict[str, bool] = {}
    if path.suffix not in (".jsonl", ".json"):
        return flags
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                obj = json.loads(line)
                if isinstance(obj, dict) and isinstance(obj.get("in_corpus"), bool):
                    flags[str(obj.get("_id", obj.get("id")))] = obj["in_corpus"]
    return flags


def eval_partitions(
    config_json: str,
    run_id: str,
    qrels: dict[str, dict[str, int]],
    flags: dict[str, bool],
    staging: Staging,
    known: dict[str, tuple[str, int]],
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """mapInPandas function: (request_id, text) rows in, EVAL_FIELDS rows out. Each pipeline
    run's answer and audit record are staged like `batch answer`'s; a question `known` to be
    audited already in this run ((status, LLM attempts) from an earlier attempt) is not asked
    again, only retrieved."""

    def run(frames: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd

        pipe, sink = worker_context(config_json)
        ctx = pipe.ctx
        stager = RowStager(staging, run_id, STAGE_ROWS, pipe)
        seen = dict(known)
        for frame in frames:
            if stager.key is None and len(frame):
                stager.start(str(frame["request_id"].iloc[0]))
                for rid, (resp_json, rec_json) in stager.staged.items():
                    status = PublicResponse.model_validate_json(resp_json).status.value
                    seen[rid] = (status, AuditRecord.model_validate_json(rec_json).attempts)
            rows: list[dict[str, Any]] = []
            try:
                for rid, text in zip(frame["request_id"], frame["text"], strict=True):
                    rid, text = str(rid), str(text)
                    bundle = ctx.retriever.retrieve(
                        text, collection=ctx.config.collection, policy=ctx.policy, request_id=rid
                    )
                    ranking = list(dict.fromkeys(r.knowledge_id for r in bundle.results))
                    if rid in seen:
                        status, attempts = seen[rid]
                    elif (lost := stager.interrupted(rid, text)) is not None:
                        status, attempts = lost.status.value, lost.attempts
                    else:
                        state = pipe.run(text, request_id=rid, run_id=run_id)
                        stager.add(rid, state, sink.take())
                        resp, llm = state.response, state.llm_result
                        status = resp.status.value if resp is not None else "FAILED"
                        attempts = llm.attempts if llm is not None else 0
                    judged = rid in qrels
                    rel = qrels.get(rid, {})
                    rows.append(
                        {
                            "request_id": rid,
                            "in_corpus": flags.get(rid, any(g > 0 for g in rel.values())),
                            "judged": judged,
                            "status": status,
                            "refused_before_llm": status == "NO_EVIDENCE" and attempts == 0,
                            "ndcg_at_10": ndcg_at_k(ranking, rel, NDCG_K) if judged else None,
                            "recall_at_100": recall_at_k(ranking, rel, RANKING_DEPTH)
                            if judged
                            else None,
                            "ranking": ranking[:RANKING_DEPTH],
                        }
                    )
            finally:
                stager.flush()
            yield pd.DataFrame(rows, columns=list(EVAL_FIELDS))

    return run


def known_results(audit_at: TableLocation, answers_at: TableLocation, run: str) -> dict[str, Any]:
    """request_id -> (public status, LLM attempts) of the questions this run already audited."""
    from deltalake import DeltaTable

    def read(at: TableLocation, column: str) -> dict[str, Any]:
        options = at.storage_options or None
        if not DeltaTable.is_deltatable(at.uri, storage_options=options):
            return {}
        table = DeltaTable(at.uri, storage_options=options).to_pyarrow_table(
            columns=["request_id", column], filters=[("run_id", "=", run)]
        )
        return dict(
            zip(*(table.column(c).to_pylist() for c in ("request_id", column)), strict=True)
        )

    statuses, attempts = read(answers_at, "status"), read(audit_at, "attempts")
    return {rid: (statuses[rid], int(attempts[rid])) for rid in statuses if rid in attempts}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _rate(hits: int, n: int) -> float | None:
    return hits / n if n else None


def eval_batch(
    spark: Any,
    questions: list[tuple[str, str]],
    config: Config,
    out: TableLocation,
    *,
    qrels: dict[str, dict[str, int]],
    in_corpus: dict[str, bool] | None = None,
    run_id: str | None = None,
    partitions: int | None = None,
) -> EvalSummary:
    """Evaluate `questions`; append per-question rows to OUT/eval; return the averages."""
    import pyarrow as pa

    # Lazy: audit.delta needs deltalake and pyarrow (extra delta; ImportError without), ~50 ms to
    # import.
    from citebound.audit.delta import DeltaAuditSink

    started = time.perf_counter()
    questions = sorted(questions)
    run = run_id or "eval-" + default_run_id(questions, config).removeprefix("batch-")
    conf = executor_config(config)
    eval_at, audit_at, answers_at = out.child("eval"), out.child("audit"), out.child("answers")
    check_run_absent(eval_at, run)  # before any model call, not after
    DeltaAuditSink(audit_at)
    staging = Staging(out, run)
    # One driver per run id (batch/run_lock.py); a PostgreSQL store holds the lease of a run
    # whose output is in an object store.
    with run_lock(staging, database=config.database or None) as lock:
        expected = {rid for rid, _ in questions}
        lock.check()
        # What an attempt that died staged.
        commit_staged(staging, expected, audit_at, answers_at, check=lock.check)
        known = known_results(audit_at, answers_at, run)
        n = max(1, min(partitions or spark.sparkContext.defaultParallelism, len(questions)))
        frame = spark.createDataFrame(
            spark.sparkContext.parallelize(questions, numSlices=n), "request_id string, text string"
        )
        schema = ", ".join(f"{k} {v}" for k, v in EVAL_FIELDS.items())
        result = frame.mapInPandas(
            eval_partitions(conf.model_dump_json(), run, qrels, in_corpus or {}, staging, known),
            schema,
        )
        rows = sorted((r.asDict() for r in result.collect()), key=lambda r: r["request_id"])
        if len(rows) != len(questions):
            raise ConfigError(f"{len(questions) - len(rows)} questions came back without a result")
        lock.check()
        commit_staged(staging, expected, audit_at, answers_at, check=lock.check)
        audited = run_request_ids(audit_at, run)
        if audited != expected:
            raise AuditError(
                f"run {run}: {len(expected - audited)} questions without an audit record"
            )
        judged = [r for r in rows if r["judged"]]
        inn = [r for r in rows if r["in_corpus"]]
        outside = [r for r in rows if not r["in_corpus"]]
        arrow_schema = pa.schema(
            [
                (
                    k,
                    {"string": pa.string(), "boolean": pa.bool_(), "double": pa.float64()}.get(
                        v, pa.list_(pa.string())
                    ),
                )
                for k, v in EVAL_FIELDS.items()
            ]
            + [("run_id", pa.string())]
        )
        write_table(
            eval_at,
            pa.Table.from_pylist([{**r, "run_id": run} for r in rows], schema=arrow_schema),
            name="citebound_eval",
            description="citebound batch eval: one row per question",
            unique_run=run,
        )
    return EvalSummary(
        questions=len(rows),
        judged=len(judged),
        ndcg_at_10=_mean([r["ndcg_at_10"] for r in judged]),
        recall_at_100=_mean([r["recall_at_100"] for r in judged]),
        n_in=len(inn),
        n_out=len(outside),
        refusal_rate=_rate(sum(r["refused_before_llm"] for r in outside), len(outside)),
        false_refusal_rate=_rate(sum(r["refused_before_llm"] for r in inn), len(inn)),
        answered_rate=_rate(sum(r["status"] == "OK" for r in inn), len(inn)),
        failed=sum(r["status"] == "FAILED" for r in rows),
        run_id=run,
        out_uri=eval_at.uri,
        audit_uri=audit_at.uri,
        audit_records=len(audited),
        seconds=round(time.perf_counter() - started, 3),
    )
