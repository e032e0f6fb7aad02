"""A real model answer that names the equipment from the document title ("The HP-220 impeller
bolts ...", over a chunk that says only "the impeller bolts") passes, and replay judges it
the same way: the source lines come from the stored prompt, or from the store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from citebound.audit import SQLiteAuditSink, replay
from citebound.pipeline import Pipeline
from citebound.policy import load_policy
from citebound.retrieve.rows import source_of
from citebound.store.sqlite import SqliteStore
from citebound.testing import ScriptedLLMServer
from citebound.text.sanitize import safe_normalize_v1

QUESTION = "What torque should the HP-220 impeller bolts be tightened to?"


def _answer(pipe: Pipeline, server: ScriptedLLMServer, request_id: str) -> str:
    """Answer with the chunk that states 45 Nm without naming the pump (C0 or later)."""
    server.reply("x")  # a probe: find which anchor holds the fact
    probe = pipe.run(QUESTION, request_id=f"probe-{request_id}")
    assert probe.answer_bundle is not None
    anchor = next(
        e.citation_anchor
        for e in probe.answer_bundle.selected_evidence
        if "45 Nm" in e.sanitized_text and "HP-220" not in e.sanitized_text
    )
    text = f"The HP-220 impeller bolts should be tightened to 45 Nm [{anchor}]."
    server.reply(text)
    state = pipe.run(QUESTION, request_id=request_id)
    assert state.response is not None and state.validation is not None
    assert state.response.status.value == "OK", state.validation.message
    return text


def test_replay_of_an_answer_using_the_source_line(
    make_pipeline: Callable[..., Pipeline], demo_store: SqliteStore
) -> None:
    policy = load_policy("strict-v1")
    with ScriptedLLMServer() as server:
        llm = {
            "provider.name": "openai",
            "provider.model": "m",
            "provider.base_url": server.base_url,
        }
        with_prompt = make_pipeline(**llm, **{"audit.store_prompt_text": True})
        _answer(with_prompt, server, "kept")
        bare = make_pipeline(**llm)
        _answer(bare, server, "bare")
    with SQLiteAuditSink(Path(with_prompt.ctx.config.audit_sqlite_path)) as sink:
        (kept,) = sink.find("kept")
    with SQLiteAuditSink(Path(bare.ctx.config.audit_sqlite_path)) as sink:
        (record,) = sink.find("bare")
    assert kept.prompt_text is not None and record.prompt_text is None
    # The stored prompt holds the source lines.
    assert not replay(kept, policy).verdict_changed
    # Without it the store supplies them ...
    chunks = demo_store.get_chunks([e.chunk_id for e in record.evidence])
    texts = {c.chunk_id: safe_normalize_v1(c.text) for c in chunks}
    sources = {c.chunk_id: source_of(c).reference() for c in chunks}
    again = replay(record, policy, chunk_texts=texts, chunk_sources=sources)
    assert again.replayable and not again.verdict_changed, again.reason
    # ... and with neither, the pump's name is unknown to the check (why replay wants them).
    blind = replay(record, policy, chunk_texts=texts)
    assert blind.replayable and blind.verdict_changed
