"""`citebound ask` (one question or a JSONL batch) and `citebound config show`."""

from __future__ import annotations

import json
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from citebound.cli._common import (
    EXIT_FAILED,
    EXIT_NO_EVIDENCE,
    EXIT_OK,
    collection_option,
    config_option,
    database_option,
    fail,
    filter_options,
    filters_from_options,
    policy_option,
    provider_option,
    require_store,
    store_option,
    store_override,
)
from citebound.cli._exit import owns_process, pause_gc, release_at_exit, resume_gc
from citebound.cli._warm import prewarm_embedder, prewarm_tokenizer
from citebound.errors import CiteboundError, ConfigError
from citebound.presets import DEFAULT_PRESET, PRESET_SUMMARIES

if TYPE_CHECKING:
    from citebound.config import Config

# Questions of a --questions batch embedded ahead at once (bounds the memo to ~0.4 MB).
PREFETCH_CHUNK = 256

EXIT_BY_STATUS = {"OK": EXIT_OK, "NO_EVIDENCE": EXIT_NO_EVIDENCE, "FAILED": EXIT_FAILED}


def config_from_options(config_file: str | None, **overrides: Any) -> Config:
    # Lazy: the config, the contracts and the pipeline (pydantic, numpy) cost ~170-260 ms each
    # of a cold `citebound ask` (python -X importtime); they are imported inside the commands,
    # after `ask` has started loading its query embedder (in a helper process,
    # cli/_embedder_process.py, or on a thread, cli/_warm.py). The question screen
    # (citebound.text, ~6 ms) and the helper process (~4 ms) are lazy too: `ask --help` and the
    # commands that import this module pay none of them.
    from citebound.config import load_config

    try:
        return load_config(
            config_file, overrides={k: v for k, v in overrides.items() if v is not None}
        )
    except ConfigError as err:
        fail(str(err))


# Chunks listed per stage by --step (the rest is counted).
STEP_ROWS = 12
# Characters of a chunk's title (document > heading) shown by --step.
STEP_TITLE_CHARS = 72


def _chunk_labels(state: Any) -> dict[str, str]:
    """chunk_id -> `sim 0.83  Document > Heading, p. 2` from the retrieved rows."""
    from citebound.contracts.retrieval import display_path, page_label

    rows = list(state.base_context_chunks or [])
    if state.retrieval_bundle is not None:
        rows += state.retrieval_bundle.results
    labels: dict[str, str] = {}
    for row in rows:
        if row.chunk_id in labels:
            continue
        src = row.source
        if src is None:
            title = row.knowledge_id
        else:  # the document, then its last heading (the heading path repeats the title)
            path = display_path(src.document, src.heading_path)
            title = f"{src.document} > {path[-1]}" if path else src.document
        if src is not None and src.page is not None:
            title += ", " + page_label(src.source_path, src.page)
        if len(title) > STEP_TITLE_CHARS:
            title = title[: STEP_TITLE_CHARS - 1] + "…"
        labels[row.chunk_id] = f"sim {row.similarity:.3f}  {title}"
    bundle = state.answer_bundle  # later stages list anchors (C0, C1, ...)
    for ev in bundle.selected_evidence if bundle is not None else []:
        if ev.chunk_id in labels:
            labels[ev.citation_anchor] = labels[ev.chunk_id]
    return labels


def _print_steps(state: Any) -> None:
    """Each stage's note, then the chunks it kept and dropped with similarity and title."""
    from citebound.pipeline.table import stage_label

    labels = _chunk_labels(state)
    for rec in state.stage_log:
        click.echo(f"[{stage_label(rec.stage)}] {rec.note}  ({rec.latency_ms:.1f} ms)")
        for cid in rec.kept[:STEP_ROWS]:
            click.echo(f"    kept    {cid}  {labels.get(cid, '')}".rstrip())
        if len(rec.kept) > STEP_ROWS:
            click.echo(f"    … {len(rec.kept) - STEP_ROWS} more kept")
        for d in rec.dropped[:STEP_ROWS]:
            label = labels.get(d.chunk_id, "")
            click.echo(f"    dropped {d.chunk_id}  {label}  {d.reason_code} {d.detail}".rstrip())
        if len(rec.dropped) > STEP_ROWS:
            click.echo(f"    … {len(rec.dropped) - STEP_ROWS} more dropped")
    click.echo("")


def _read_questions(path: Path) -> list[tuple[str | None, str]]:
    from citebound.text.sanitize import storage_problem

    out: list[tuple[str | None, str]] = []
    first_line: dict[str, int] = {}
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError as err:
        fail(f"{path}: not UTF-8 text (byte {err.start}): re-encode it as UTF-8")
    except OSError as err:
        fail(f"{path}: cannot read it: {err.strerror or err}")
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            fail(f"{path}:{n}: not JSON: {err.msg}")
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            fail(f'{path}:{n}: each line needs {{"_id", "text"}}')
        qid_text = str(obj.get("_id", obj.get("id", "")))
        why = storage_problem(obj["text"]) or storage_problem(qid_text)
        if why is not None:
            fail(f"{path}:{n}: the question or its _id {why}")
        qid = obj.get("_id", obj.get("id"))
        if qid is not None:
            qid = str(qid)
            if qid in first_line:
                # The audit keeps one record per request id and run: a repeat would fail.
                fail(f"{path}:{n}: _id {qid!r} repeats line {first_line[qid]}")
            first_line[qid] = n
        out.append((qid, obj["text"]))
    return out


def new_run_id() -> str:
    """A fresh run id per batch, so a rerun of the same questions gets its own audit records."""
    return f"ask-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


@click.command("ask")
@click.argument("question", required=False)
@click.option(
    "--questions",
    "questions_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='JSONL file of {"_id", "text"}; writes one PublicResponse per line.',
)
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), help="Output file for --questions."
)
@config_option
@store_option
@database_option
@collection_option
@provider_option
@click.option("--model", default=None, help="Model name for openai/ollama.")
@click.option("--base-url", default=None, help="Server URL for openai/ollama.")
@policy_option
@click.option(
    "--reranker",
    default=None,
    help="Cross-encoder model (ONNX export dir, .onnx file or sentence-transformers dir); "
    "overrides [rerank] model_path.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the PublicResponse JSON.")
@click.option(
    "--show-scores", is_flag=True, help="Show retrieval scores next to sources (text form)."
)
@click.option(
    "--step", is_flag=True, help="Print what each stage kept and dropped, with reason codes."
)
@filter_options
@click.option(
    "--run-id",
    default=None,
    help="Run id recorded with every answer (default for --questions: a fresh one per run).",
)
def ask_cmd(
    question: str | None,
    questions_file: Path | None,
    out: Path | None,
    config_file: str | None,
    store_dir: Path | None,
    database: str | None,
    collection: str | None,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    policy: str | None,
    reranker: str | None,
    as_json: bool,
    show_scores: bool,
    step: bool,
    equipment_id: str | None,
    knowledge_type: str | None,
    date_from: str | None,
    date_to: str | None,
    run_id: str | None,
) -> None:
    """Answer QUESTION from the indexed documents: cited and validated, or refused.

    Filters keep only evidence whose metadata matches; a document without the field never
    matches. Dates are inclusive ISO dates (YYYY-MM-DD).

    Exit codes: 0 answered, 3 refused (NO_EVIDENCE), 2 failed.
    """
    if (question is None) == (questions_file is None):
        fail("give either a QUESTION or --questions FILE.jsonl")
    from citebound.text.sanitize import storage_problem

    why = storage_problem(question) if question is not None else None
    if why is not None:
        fail(f"the question {why}")
    # The query embedder loads beside this thread's imports of the config, the contracts and
    # the pipeline: in a forked helper process when the CLI owns this process (everything it
    # does runs on the second core, cli/_embedder_process.py), else on a thread (only its
    # onnxruntime session overlaps, cli/_warm.py). An error below waits for it before
    # exiting, so a --store that is no directory (the usual typo: the check below fails)
    # skips it.
    if store_dir is None or database or store_dir.is_dir():
        start_query_embedder()
    pause_gc()  # until the first answer is written (cli/_exit.py); after the fork
    config = config_from_options(
        config_file,
        store=store_override(store_dir),
        database=database,
        collection=collection,
        policy=policy,
        **{
            "provider.name": provider,
            "provider.model": model,
            "provider.base_url": base_url,
            "rerank.model_path": reranker,
        },
    )
    if not config.database:  # a served store keeps only a local index cache in the directory
        require_store(config.store_path)
    try:
        tokenizer = config.load_policy().tokenizer
    except ConfigError as err:
        fail(str(err))
    if tokenizer:
        prewarm_tokenizer(tokenizer)
    from citebound.pipeline import Pipeline, PipelineContext
    from citebound.respond import render_text

    try:
        ctx = PipelineContext(config)
        # Every request reranks, so load the model now: a broken one is a usage error (exit 2)
        # rather than one FAILED response per question of a batch.
        _ = ctx.reranker
        if config.database:
            # A served store: an unreachable database is one clear error (exit 2), not a
            # FAILED answer per question. Nothing is written before both are open.
            _ = ctx.store, ctx.sinks
    except CiteboundError as err:
        fail(str(err))
    pipe = Pipeline(ctx)
    filters = filters_from_options(equipment_id, knowledge_type, date_from, date_to)
    target = _only_collection(ctx, config.collection) if collection is None else None
    try:
        if questions_file is not None:
            batch_run = run_id or new_run_id()
            sink = out.open("w", encoding="utf-8") if out else sys.stdout
            counts = {"OK": 0, "NO_EVIDENCE": 0, "FAILED": 0}
            batch = _read_questions(questions_file)
            for start in range(0, len(batch), PREFETCH_CHUNK):
                chunk = batch[start : start + PREFETCH_CHUNK]
                # Questions embedded in bulk first: same answers, about a third faster.
                with pipe.prefetched([text for _, text in chunk], collection=target):
                    for qid, text in chunk:
                        state = pipe.run(
                            text,
                            request_id=qid,
                            run_id=batch_run,
                            filters=filters,
                            collection=target,
                        )
                        assert state.response is not None
                        counts[state.response.status.value] += 1
                        sink.write(state.response.model_dump_json() + "\n")
                        resume_gc()  # started: the rest of the batch collects as usual
            if out:
                sink.close()
            click.echo(
                f"citebound: {sum(counts.values())} questions (run {batch_run}): "
                + ", ".join(f"{k} {v}" for k, v in counts.items()),
                err=True,
            )
            release_at_exit()  # everything is written; the store closes on the way out
            sys.exit(EXIT_OK)
        assert question is not None
        state = pipe.run(question, run_id=run_id, filters=filters, collection=target)
        resp = state.response
        assert resp is not None
        if step:
            _print_steps(state)
        if as_json:
            click.echo(resp.model_dump_json(indent=2))
        elif resp.status.value != "FAILED":  # a failure is the one line on stderr below
            bundle = state.answer_bundle
            click.echo(
                render_text(
                    resp, bundle=bundle, validation=state.validation, show_scores=show_scores
                )
            )
        if resp.status.value != "OK":
            from citebound.pipeline.explain import why_not_answered

            click.echo(f"citebound: {resp.status.value}: {why_not_answered(state)}", err=True)
        release_at_exit()  # everything is written; the store closes on the way out
        sys.exit(EXIT_BY_STATUS[resp.status.value])
    finally:
        ctx.close()


def _only_collection(ctx: Any, configured: str) -> str | None:
    """The store's one collection when `--collection` is not given and the configured one
    (`default` unless citebound.toml or CITEBOUND_COLLECTION names another) does not exist,
    as `serve` does; None keeps the configured one (and its error when it is missing)."""
    try:
        names = ctx.store.collections()
    except CiteboundError:
        return None  # the pipeline reports the store's problem as it always has
    return names[0] if len(names) == 1 and configured not in names else None


def start_query_embedder() -> None:
    """Start loading the default query embedder: a helper process, else a thread."""
    import atexit

    from citebound.cli import _embedder_process

    helper = _embedder_process.start() if owns_process() else None
    if helper is not None:
        from citebound.index.embedder import use_query_embedder

        use_query_embedder(helper)
        atexit.register(helper.close)  # run by the fast exit too
    else:
        prewarm_embedder()


@click.group("config")
def config_group() -> None:
    """Inspect the effective configuration."""


@config_group.command("show")
@config_option
def config_show(config_file: str | None) -> None:
    """Print the effective config (file + CITEBOUND_* env), its fingerprint, the policy's, and
    what each shipped preset is (which is the default, and why)."""
    from citebound.store.pg_connect import redact

    config = config_from_options(config_file)
    policy = config.load_policy()
    shown = config.model_dump(mode="json")
    if config.database:
        shown["database"] = redact(config.database)  # never print a password
    click.echo(
        json.dumps(
            {
                "config": shown,
                "config_fingerprint": config.fingerprint,
                "policy_name": policy.name,
                "policy_version": policy.policy_version,
                "policy_fingerprint": policy.fingerprint,
                "default_policy": DEFAULT_PRESET,
                "presets": PRESET_SUMMARIES,
            },
            indent=2,
        )
    )


COMMANDS = [ask_cmd, config_group]
