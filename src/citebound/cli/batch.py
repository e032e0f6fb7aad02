"""`citebound batch answer|revalidate|eval|ingest`: the pipeline at scale on Apache Spark.

PySpark is imported inside each command (never at CLI start). Outputs are Delta tables at a
directory or URI (file://, s3://, abfss://, gs://); storage options come from `[audit]
delta_storage_options` and $CITEBOUND_DELTA_STORAGE_OPTIONS. A summary JSON goes to stdout.
Exit codes: 0 done, 2 usage error or failed job (one line on stderr). See docs/batch.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from citebound.batch.session import spark_session
from citebound.cli._common import (
    collection_option,
    config_option,
    database_option,
    fail,
    policy_option,
    provider_option,
    resolve_database,
    store_option,
    store_override,
)
from citebound.cli.ask import config_from_options
from citebound.errors import CiteboundError

F = TypeVar("F", bound=Callable[..., object])


def spark_options(fn: F) -> F:
    """--master and --partitions, shared by every batch command."""
    fn = click.option(
        "--partitions",
        type=click.IntRange(min=1),
        default=None,
        help="Spark partitions (default: the session's parallelism). Results do not depend on it.",
    )(fn)
    return click.option(
        "--master",
        default=None,
        help="Spark master URL (default $CITEBOUND_SPARK_MASTER or local[*]); under "
        "spark-submit the submitted session is used.",
    )(fn)


def config_options(fn: F) -> F:
    """--config, --store, --database, --collection and --policy (the shared ones, cli/_common.py;
    --database with the batch note)."""
    for option in reversed(
        [
            config_option,
            store_option,
            click.option(
                "--database",
                default=None,
                envvar="CITEBOUND_DATABASE_URL",
                help="PostgreSQL store URL (also $CITEBOUND_DATABASE_URL); the store directory "
                "then holds each host's index files.",
            ),
            collection_option,
            policy_option,
        ]
    ):
        fn = option(fn)
    return fn


def _config(
    config_file: str | None,
    store_dir: Path | None,
    database: str | None,
    collection: str | None,
    policy: str | None,
    **extra: Any,
) -> Any:
    return config_from_options(
        config_file,
        store=store_override(store_dir),
        database=database,
        collection=collection,
        policy=policy,
        **extra,
    )


def _location(where: str, config: Any) -> Any:
    # Lazy: the batch modules need pyspark and deltalake (extra spark; ImportError without) and
    # cost ~450-680 ms to import (python -X importtime); `citebound batch --help` pays none.
    from citebound.audit.location import table_location

    return table_location(where, config_options=config.audit.delta_storage_options)


def _job(note: Callable[[Any], str] | None = None) -> Callable[[Callable[..., Any]], Any]:
    """Make a function that runs a batch job and returns its summary a command callback: a
    CiteboundError it raises ends the command with one line on stderr and exit 2; the summary
    goes to stdout as JSON, Spark stops, then `note(summary)` (if given) goes to stderr.
    The Spark session the job started stops however the job ends (a failed job too:
    `_shutdown` says why); one that was running before the command (a caller's, in-process)
    is the caller's to stop."""

    def wrap(body: Callable[..., Any]) -> Callable[..., None]:
        @functools.wraps(body)
        def command(*args: Any, **kwargs: Any) -> None:
            started = _active_spark() is None
            try:
                try:
                    summary = body(*args, **kwargs)
                except CiteboundError as err:
                    fail(str(err))
                click.echo(summary.model_dump_json(indent=2))
            finally:
                _shutdown(stop_spark=started)
            if note is not None:
                click.echo(f"citebound: {note(summary)}", err=True)

        return command

    return wrap


def _active_spark() -> Any:
    """The active SparkSession, or None (pyspark is not imported to find out)."""
    import sys

    if "pyspark" not in sys.modules:
        return None
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def _shutdown(*, stop_spark: bool = True) -> None:
    """Stop Spark and collect garbage while the libraries are still whole: Arrow's and
    delta-rs' native thread pools torn down during interpreter exit can abort the process
    (SIGABRT, "terminate called without an active exception") after the work is done."""
    import gc

    active = _active_spark() if stop_spark else None
    if active is not None:
        active.stop()
    gc.collect()


@click.group("batch")
def batch_group() -> None:
    """Run the pipeline over many rows on Apache Spark (pip install 'citebound[spark]')."""


@batch_group.command("answer")
@click.option(
    "--questions",
    "questions_src",
    required=True,
    help='Questions: JSONL ({"_id", "text"}), Parquet, or a Delta table dir/URI.',
)
@click.option("--out", required=True, help="Output dir or URI: OUT/answers and OUT/audit.")
@config_options
@provider_option
@click.option("--model", default=None, help="Model name for openai/ollama.")
@click.option("--base-url", default=None, help="Server URL for openai/ollama.")
@click.option("--run-id", default=None, help="Run id (default: a hash of questions + config).")
@spark_options
@_job(
    lambda s: (
        f"{s.answers} questions (run {s.run_id}, {s.partitions} partitions): "
        + ", ".join(f"{k} {v}" for k, v in s.statuses.items())
    )
)
def batch_answer(
    questions_src: str,
    out: str,
    config_file: str | None,
    store_dir: Path | None,
    database: str | None,
    collection: str | None,
    policy: str | None,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    run_id: str | None,
    master: str | None,
    partitions: int | None,
) -> Any:
    """Answer every question; write OUT/answers and OUT/audit (Delta, append-only)."""
    config = _config(
        config_file,
        store_dir,
        database,
        collection,
        policy,
        **{"provider.name": provider, "provider.model": model, "provider.base_url": base_url},
    )
    from citebound.batch.answer import answer_batch, executor_config
    from citebound.batch.tables import read_questions

    where = _location(out, config)
    questions = read_questions(questions_src, config_options=config.audit.delta_storage_options)
    executor_config(config)  # a missing store or unreachable database: before Spark starts
    spark = spark_session(master)
    return answer_batch(spark, questions, config, where, run_id=run_id, partitions=partitions)


@batch_group.command("revalidate")
@click.option("--audit", "audit_src", required=True, help="Audit Delta table dir or URI.")
@click.option("--out", required=True, help="Verdict table (Delta dir or URI) to append to.")
@config_options
@click.option("--run-id", "only_run", default=None, help="Only records of this run.")
@click.option(
    "--no-store-evidence",
    is_flag=True,
    help="Do not read evidence texts from the store for records stored without them.",
)
@spark_options
@_job(
    lambda s: (
        f"{s.records} records re-validated: {s.changed} verdicts changed, "
        f"{s.not_replayable} not replayable"
    )
)
def batch_revalidate(
    audit_src: str,
    out: str,
    config_file: str | None,
    store_dir: Path | None,
    database: str | None,
    collection: str | None,
    policy: str | None,
    only_run: str | None,
    no_store_evidence: bool,
    master: str | None,
    partitions: int | None,
) -> Any:
    """Re-validate every stored raw answer with today's validator and policy (`audit replay`
    at scale); append one verdict row per record to OUT with what changed."""
    config = _config(config_file, store_dir, database, collection, policy)
    from citebound.batch.revalidate import revalidate_batch

    spark = spark_session(master)
    return revalidate_batch(
        spark,
        _location(audit_src, config),
        config,
        _location(out, config),
        only_run=only_run,
        evidence_from_store=not no_store_evidence,
        partitions=partitions,
    )


@batch_group.command("eval")
@click.option(
    "--questions",
    "questions_src",
    required=True,
    help='Questions: JSONL ({"_id", "text", optional "in_corpus"}), Parquet or Delta.',
)
@click.option(
    "--qrels",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Judgments, BEIR TSV (query-id, corpus-id, score): nDCG@10 and Recall@100.",
)
@click.option("--out", required=True, help="Output dir or URI: OUT/eval (per question).")
@config_options
@click.option("--run-id", default=None, help="Run id (default: a hash of questions + config).")
@spark_options
@_job()
def batch_eval(
    questions_src: str,
    qrels: str | None,
    out: str,
    config_file: str | None,
    store_dir: Path | None,
    database: str | None,
    collection: str | None,
    policy: str | None,
    run_id: str | None,
    master: str | None,
    partitions: int | None,
) -> Any:
    """Retrieval (nDCG@10, Recall@100) and refusal metrics over a judged question set."""
    from pathlib import Path

    config = _config(config_file, store_dir, database, collection, policy)
    from citebound.batch.evaluate import eval_batch, read_in_corpus, read_qrels
    from citebound.batch.tables import read_questions

    questions = read_questions(questions_src, config_options=config.audit.delta_storage_options)
    judgments = read_qrels(Path(qrels)) if qrels else {}
    return eval_batch(
        spark_session(master),
        questions,
        config,
        _location(out, config),
        qrels=judgments,
        in_corpus=read_in_corpus(Path(questions_src)),
        run_id=run_id,
        partitions=partitions,
    )


@batch_group.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@store_option
@database_option
@collection_option
@config_option
@spark_options
@_job()
def batch_ingest(
    paths: tuple[Any, ...],
    store_dir: Path | None,
    database: str | None,
    collection: str | None,
    config_file: str | None,
    master: str | None,
    partitions: int | None,
) -> Any:
    """Ingest PATHS: files loaded, chunked and embedded on the Spark executors, written to
    the store by the driver, the index built once.

    Bounded as `citebound ingest`: a file over an [ingest] limit (bytes, PDF pages,
    characters, chunks, time, the parsing worker's memory) is skipped as OVER_LIMIT with the
    limit to raise, and the rest ingests; PDFs, Office files and large files are parsed in a
    worker process on each executor."""
    from citebound.config import load_config

    url = resolve_database(database)
    config = load_config(config_file)  # a bad config fails before Spark starts
    from citebound.batch.ingest import ingest_batch

    return ingest_batch(
        spark_session(master),
        store_dir or config.store_path,
        list(paths),
        collection=collection or config.collection,
        partitions=partitions,
        database=url or None,
        limits=config.ingest,
    )


COMMANDS = [batch_group]
