"""Anchors numbered in the order the answer cites them (#15), end to end on the sample corpus:
CLI text, `--json`, the audit record (raw text + shown anchors) and replay."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from citebound.audit import SQLiteAuditSink, replay
from citebound.cli import main
from citebound.contracts import PublicResponse
from citebound.pipeline import Pipeline
from citebound.policy import load_policy
from citebound.respond.renumber import numbering_problem, relabel_text
from citebound.store.sqlite import SqliteStore

# Questions whose extractive answers cite the evidence out of rank order or with gaps (the
# prompt's anchors were e.g. C1, C3, C4 or C0, C5 when this was written). A test below checks
# that at least one still does, so the no-gap checks cannot pass vacuously.
QUESTIONS = [
    "How do I replace the HP-220 mechanical seal?",
    "How do I change the GB-7 gearbox oil?",
    "What does the ESD-3 panel do when a cause is activated?",
    "What safety precautions apply to the HP-220 seal replacement?",
    "What are the VT-40 fan alarm and trip vibration levels?",
    "What torque should the HP-220 impeller bolts be tightened to?",
]
_SOURCE = re.compile(r"^- \[([^\]]+)\] ", re.MULTILINE)


def _ask(store: SqliteStore, tmp_path: Path, *args: str) -> str:
    env = {"CITEBOUND_AUDIT_SQLITE_PATH": str(tmp_path / "audit.sqlite")}
    result = CliRunner().invoke(
        main, ["ask", *args, "--store", str(store.root), "--collection", "demo"], env=env
    )
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("question", QUESTIONS[:3])
def test_cli_text_and_json_show_anchors_in_citation_order(
    question: str, demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    resp = PublicResponse.model_validate_json(_ask(demo_store, tmp_path, question, "--json"))
    anchors = [c.anchor for c in resp.citations]
    assert resp.status.value == "OK" and anchors
    assert numbering_problem(resp.answer, anchors, "C") is None
    text = _ask(demo_store, tmp_path, question, "--show-scores")
    answer = text.split("\n\n", 1)[0]
    assert numbering_problem(answer, _SOURCE.findall(text), "C") is None
    assert _SOURCE.findall(text) == anchors and text.count("(score: ") == len(anchors)


def test_the_audit_keeps_the_raw_answer_and_the_shown_anchors(
    make_pipeline: Callable[..., Pipeline], tmp_path: Path
) -> None:
    pipe = make_pipeline(**{"audit.store_prompt_text": True})
    policy = load_policy("strict-v1")
    renumbered = 0
    for n, question in enumerate(QUESTIONS):
        state = pipe.run(question, request_id=f"q{n}")
        resp, bundle, v = state.response, state.answer_bundle, state.validation
        assert resp is not None and bundle is not None and v is not None
        assert resp.status.value == "OK"
        shown = [c.anchor for c in resp.citations]
        assert numbering_problem(resp.answer, shown, "C") is None
        # Each shown source is the evidence the model cited at that place.
        by_anchor = {e.citation_anchor: e for e in bundle.selected_evidence}
        assert [c.knowledge_id for c in resp.citations] == [
            by_anchor[a].knowledge_id for a in v.validated_citations
        ]
        renumbered += v.validated_citations != shown
    assert renumbered, "no question cited out of order any more: pick new QUESTIONS"
    with SQLiteAuditSink(tmp_path / "audit0.sqlite") as sink:
        records = {r.request_id: r for r in sink.records()}
    for n, question in enumerate(QUESTIONS):
        record = records[f"q{n}"]
        assert record.schema_version == 5 and record.hash_ok()
        assert record.display_anchors is not None
        assert list(record.display_anchors) == record.validated_citations
        # The raw model text keeps the prompt's anchors; the mapping gives what was shown.
        raw = record.raw_model_text or ""
        assert record.validated_answer_text == raw
        shown_text = relabel_text(raw, record.display_anchors, "C")
        state_answer = pipe.run(question, request_id=f"again-{n}").response
        assert state_answer is not None and shown_text == state_answer.answer
        report = replay(record, policy)
        assert report.replayable, report.reason
        assert not report.verdict_changed and not report.display_changed
        assert report.display_anchors == record.display_anchors


def test_replay_notices_shown_anchors_that_differ(make_pipeline: Callable[..., Pipeline]) -> None:
    pipe = make_pipeline(**{"audit.store_prompt_text": True})
    state = pipe.run(QUESTIONS[0], request_id="tampered")
    assert state.response is not None and state.response.status.value == "OK"
    with SQLiteAuditSink(Path(pipe.ctx.config.audit_sqlite_path)) as sink:
        (record,) = [r for r in sink.records() if r.request_id == "tampered"]
    assert record.display_anchors
    wrong = {**record.display_anchors, "C99": "C9"}  # one more shown anchor than cited
    forged = record.model_copy(update={"display_anchors": wrong})
    forged = forged.model_copy(update={"record_hash": forged.compute_hash()})
    report = replay(forged, load_policy("strict-v1"))
    assert report.display_changed and not report.verdict_changed


def test_the_demo_fails_an_answer_whose_anchors_skip(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    """`citebound demo` counts an answer as expected only when its anchors have no gap."""
    from citebound.cli.demo import _expectation_met
    from citebound.pipeline.state import DISPLAY_ANCHORS
    from citebound.sample_corpus import DEMO_QUESTIONS

    q = DEMO_QUESTIONS[0]
    state = make_pipeline().run(q.text)
    r = state.response
    assert r is not None and r.citations
    assert _expectation_met(q.kind, q.expect, state)
    # The same answer and sources shown one number up (C0 -> C1, ...): the evidence still
    # resolves, the gap at C0 fails it.
    up = {f"C{i}": f"C{i + 1}" for i in range(len(r.citations))}
    shown = state.extras[DISPLAY_ANCHORS]
    skipped = state.evolve(
        response=r.model_copy(
            update={
                "answer": relabel_text(r.answer, up, "C"),
                "citations": [c.model_copy(update={"anchor": up[c.anchor]}) for c in r.citations],
            }
        ),
        extras={**state.extras, DISPLAY_ANCHORS: {a: up[s] for a, s in shown.items()}},
    )
    assert len(skipped.shown_sources()) == len(r.citations)
    assert not _expectation_met(q.kind, q.expect, skipped)


def test_the_s_style_of_hybridrag_is_renumbered_too(make_pipeline: Callable[..., Pipeline]) -> None:
    pipe = make_pipeline(policy="hybridrag")
    renumbered = 0
    for question in QUESTIONS[:4]:
        state = pipe.run(question)
        r, v, b = state.response, state.validation, state.answer_bundle
        assert r is not None and v is not None and b is not None
        assert b.citation_style == "S" and r.status.value == "OK"
        shown = [c.anchor for c in r.citations]
        assert shown[0] == "S1" and numbering_problem(r.answer, shown, "S") is None
        renumbered += v.validated_citations != shown
    assert renumbered, "no question cited out of order any more: pick new QUESTIONS"
