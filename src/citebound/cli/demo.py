"""`citebound demo`: ingest the bundled sample corpus into a temporary store and ask it questions.

Offline: the extractive provider answers, so no key and no network are needed.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from citebound.cli._common import EXIT_FAILED, EXIT_OK
from citebound.cli.ask import _print_steps
from citebound.text import split_sentences

if TYPE_CHECKING:
    from citebound.contracts.ingest import IngestReport
    from citebound.pipeline.state import RequestState
    from citebound.store.sqlite import SqliteStore

PDF_METADATA = {
    "title": "CX-9 Compressor Quick Reference",
    "knowledge_type": "specification",
    "equipment_id": "CX-9",
    "event_date": "2025-01-01",
}


def padded_sentences(question: str, answer: str) -> list[str]:
    """Sentences of `answer` that do not help answer `question`.

    A sentence helps when it shares a content term with the question, or when it is a step or
    item of a list that a cited sentence ending in ":" introduced (same citation, in a row).
    """
    # Lazy: the pipeline, the ingest and the answerer cost ~0.2-0.6 s each (python -X importtime),
    # not paid by `citebound demo --help`.
    from citebound.llm.extractive import terms

    wanted = terms(question)
    marker = re.compile(r"\s*\[([^\]\s]{1,6})\]")
    out: list[str] = []
    list_anchor: str | None = None
    for sentence in split_sentences(answer, marker=marker.pattern):
        anchors = marker.findall(sentence)
        body = marker.sub("", sentence).strip()
        anchor = anchors[-1] if anchors else None
        helps = bool(wanted & terms(body)) or (list_anchor is not None and anchor == list_anchor)
        if not helps:
            out.append(sentence)
        if body.endswith(":"):
            list_anchor = anchor
        elif anchor != list_anchor:
            list_anchor = None
    return out


def _expectation_met(kind: str, expect: str | None, state: RequestState) -> bool:
    from citebound.respond.renumber import numbering_problem

    resp = state.response
    bundle = state.answer_bundle
    assert resp is not None
    if kind == "answerable":
        # Public citations carry the shown anchors: join them to the evidence the same way.
        shown = state.shown_sources()
        texts = [shown[c.anchor].sanitized_text for c in resp.citations if c.anchor in shown]
        want = (expect or "").lower()
        question = bundle.user_question if bundle else ""
        if resp.status.value != "OK" or bundle is None:
            return False
        if padded_sentences(question, resp.answer):
            return False  # an answer padded with sentences that do not help is not as expected
        anchors = [c.anchor for c in resp.citations]
        if numbering_problem(resp.answer, anchors, bundle.citation_style) is not None:
            return False  # anchors must read C0, C1, ... in citation order, sources likewise
        return any(want in t.lower() for t in texts)
    return bool(resp.status.value == "NO_EVIDENCE")


def build_demo_store(root: Path) -> tuple[SqliteStore, IngestReport]:
    """Copy the sample corpus (+ its generated PDF) under `root` and ingest it as `demo`."""
    from citebound.ingest import ingest_paths
    from citebound.sample_corpus import copy_sample_corpus
    from citebound.store.sqlite import SqliteStore

    docs = root / "docs"
    shutil.rmtree(docs, ignore_errors=True)
    copy_sample_corpus(docs)
    # The generated PDF has no front matter: its metadata comes from a sidecar file.
    for pdf in docs.glob("*.pdf"):
        pdf.with_name(pdf.name + ".meta.json").write_text(
            json.dumps(PDF_METADATA), encoding="utf-8"
        )
    store = SqliteStore(root / "store")
    report = ingest_paths(store, [docs], collection="demo", progress=False)
    return store, report


@click.command("demo")
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the demo store in this directory instead of a temporary one.",
)
@click.option("--step", is_flag=True, help="Also print each stage's decisions for every question.")
def demo_cmd(keep: Path | None, step: bool) -> None:
    """Ingest the sample corpus, answer fixed questions (answerable, unanswerable, injection)."""
    from citebound.config import load_config
    from citebound.pipeline import Pipeline, PipelineContext
    from citebound.respond import render_text
    from citebound.sample_corpus import DEMO_QUESTIONS

    root = keep or Path(tempfile.mkdtemp(prefix="citebound-demo-"))
    try:
        store, report = build_demo_store(root)
        store_dir = root / "store"
        click.echo(
            f"Ingested {report.files_seen} files into {report.chunks_written} chunks "
            f"({len(report.skipped)} skipped)"
            + (f" at {store_dir}\n" if keep is not None else " in a temporary store\n")
        )
        config = load_config(
            env={},
            overrides={
                "store": str(store_dir),
                "collection": "demo",
                "provider.name": "extractive",
            },
        )
        ctx = PipelineContext(config, store_override=store)
        pipe = Pipeline(ctx)
        met = 0
        for q in DEMO_QUESTIONS:
            state = pipe.run(q.text, request_id=f"demo-{q.id}")
            assert state.response is not None
            ok = _expectation_met(q.kind, q.expect, state)
            met += ok
            click.echo(f"Q [{q.kind}] {q.text}")
            if step:
                _print_steps(state)
            click.echo(render_text(state.response, bundle=state.answer_bundle).rstrip())
            click.echo(
                f"-> {state.response.status.value} {'(as expected)' if ok else '(UNEXPECTED)'}\n"
            )
        audit = sum(len(s.records()) for s in ctx.sinks)
        ctx.close()
        # The temporary store (and its audit) is deleted on exit: never print a path that
        # will not exist when the user reads it.
        where = (
            f"written to {config.audit_sqlite_path}"
            if keep is not None
            else "written to the temporary store, now deleted (keep it with `citebound demo "
            "--keep DIR`, then `citebound audit list --store DIR/store`)"
        )
        click.echo(
            f"{met}/{len(DEMO_QUESTIONS)} questions behaved as expected; "
            f"{audit} audit records {where}"
        )
        sys.exit(EXIT_OK if met == len(DEMO_QUESTIONS) else EXIT_FAILED)
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)


COMMANDS = [demo_cmd]
