"""`citebound retrieve`: one question (table or --json) or a JSONL file of queries (--queries).

Exit codes (cli/_common.py): 0 evidence found, 3 NO_EVIDENCE (the gate refused), 2 FAILED or
usage error. With --queries the exit code is 0 once every line was answered with a bundle.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from citebound.cli._common import (
    EXIT_FAILED,
    EXIT_NO_EVIDENCE,
    EXIT_OK,
    collection_option,
    config_option,
    fail,
    filter_options,
    filters_from_options,
    policy_option,
    store_option,
    store_override,
    to_json,
)
from citebound.cli.ask import config_from_options
from citebound.contracts.retrieval import RetrievalBundle
from citebound.errors import CiteboundError
from citebound.rerank.base import load_reranker
from citebound.retrieve.retriever import Retriever
from citebound.store.base import Store

_STATUS_EXIT = {"SUCCESS": EXIT_OK, "NO_EVIDENCE": EXIT_NO_EVIDENCE, "FAILED": EXIT_FAILED}


def open_store(path: Path) -> Store:
    """The embedded SQLite store in `path` (from the ingest package)."""
    if not path.is_dir():
        fail(f"no store at {path}: run `citebound ingest PATH --store {path}` first")
    try:  # provided by the ingest package; imported by name so this module stands alone
        cls: Any = importlib.import_module("citebound.store.sqlite").SqliteStore
    except (ImportError, AttributeError):
        fail("the SQLite store is not available in this installation")
    try:
        store: Store = cls(path)
    except CiteboundError as err:
        fail(f"cannot open the store at {path}: {err}")
    return store


def _read_queries(path: Path) -> list[tuple[str, str]]:
    """(id, text) per line; any malformed line stops the run before anything is retrieved."""
    out: list[tuple[str, str]] = []
    for n, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            qid, text = rec["_id"], rec["text"]
        except (ValueError, KeyError, TypeError):
            fail(f'{path}:{n}: expected a JSON object with "_id" and "text"')
        if not isinstance(text, str) or not str(qid):
            fail(f'{path}:{n}: "_id" must be non-empty and "text" a string')
        out.append((str(qid), text))
    return out


def _print_table(bundle: RetrievalBundle) -> None:
    console = Console()
    gate = bundle.gate
    console.print(
        f"[bold]{bundle.retrieval_status.value}[/bold]  index {bundle.index_version}  "
        f"model {bundle.embedding_model}  {bundle.retrieval_latency_ms or 0:.1f} ms"
    )
    if bundle.error:
        console.print(f"error: {bundle.error}")
    if gate is not None:
        console.print(
            f"gate: {'passed' if gate.passed else gate.reason_code}  top={gate.max_similarity}  "
            f"min_score={gate.min_score}  rows>=min_score={gate.chunks_above_min_score}"
            f"/{gate.min_chunks}"
            + ("" if gate.coverage is None else f"  coverage={gate.coverage:.2f}")
        )
    table = Table(show_lines=False)
    for col in ("rank", "similarity", "source", "text"):
        table.add_column(col)
    for row in bundle.results:
        ref = row.source.reference() if row.source else row.knowledge_id
        text = " ".join(row.chunk_text.split())
        table.add_row(str(row.rank), f"{row.similarity:.3f}", ref, text[:90])
    console.print(table)


@click.command("retrieve")
@click.argument("question", required=False)
@collection_option
@config_option
@store_option
@policy_option
@click.option("--json", "as_json", is_flag=True, help="Print the RetrievalBundle as JSON.")
@click.option(
    "--queries",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help='JSONL file of {"_id", "text"}: one bundle per line (request_id = _id).',
)
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), help="JSONL output file.")
@filter_options
@click.option(
    "--reranker",
    "reranker_path",
    type=click.Path(path_type=Path),
    help="Local cross-encoder (ONNX export dir, .onnx file or sentence-transformers dir); "
    "overrides [rerank] model_path (default: config, no reranking).",
)
@click.pass_context
def retrieve_command(
    ctx: click.Context,
    question: str | None,
    collection: str | None,
    config_file: str | None,
    store_dir: Path | None,
    policy: str | None,
    as_json: bool,
    queries: Path | None,
    out: Path | None,
    equipment_id: str | None,
    knowledge_type: str | None,
    date_from: str | None,
    date_to: str | None,
    reranker_path: Path | None,
) -> None:
    """Retrieve ranked evidence for QUESTION (or for every line of --queries)."""
    if (question is None) == (queries is None):
        fail("give either a QUESTION or --queries FILE.jsonl")
    obj = ctx.find_object(dict) or {}
    # The same precedence as `ask`: defaults < citebound.toml < CITEBOUND_* < these options,
    # so [limits] (N1, N2) and [rerank] apply here too.
    config = config_from_options(
        config_file,
        store=store_override(store_dir),
        collection=collection,
        policy=policy,
        **{"rerank.model_path": None if reranker_path is None else str(reranker_path)},
    )
    try:
        loaded = config.load_policy()
        r = config.rerank
        reranker = load_reranker(r.model_path, batch_size=r.batch_size, max_length=r.max_length)
    except CiteboundError as err:
        fail(str(err))
    store: Store = obj.get("store") or open_store(config.store_path)
    collection = config.collection
    retriever = Retriever(store, policy=loaded, reranker=reranker)
    filters = filters_from_options(equipment_id, knowledge_type, date_from, date_to)
    if queries is not None:
        items = _read_queries(queries)
        lines = [
            retriever.retrieve(
                text, collection=collection, filters=filters, request_id=qid
            ).model_dump_json()
            for qid, text in items
        ]
        payload = "".join(line + "\n" for line in lines)
        if out is not None:
            out.write_text(payload, "utf-8")
            click.echo(f"wrote {len(lines)} bundles to {out}", err=True)
        else:
            click.echo(payload, nl=False)
        ctx.exit(EXIT_OK)
    bundle = retriever.retrieve(str(question), collection=collection, filters=filters)
    if as_json:
        click.echo(to_json(bundle))
    else:
        _print_table(bundle)
    if bundle.error:
        click.echo(f"citebound: {bundle.error}", err=True)
    ctx.exit(_STATUS_EXIT[bundle.retrieval_status.value])


COMMANDS = [retrieve_command]
