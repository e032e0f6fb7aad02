"""The end-to-end harness on a tiny real store: real ingest, real index, real pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_helpers import TINY_SQUAD

from citebound.eval.end_to_end import OPEN_GATE, ask, make_pipeline, summarize
from citebound.eval.squad import load_squad, questions_of, write_paragraphs_jsonl
from citebound.ingest import ingest_paths
from citebound.store.sqlite import SqliteStore


@pytest.fixture(scope="module")
def pump_store(tmp_path_factory: pytest.TempPathFactory) -> SqliteStore:
    """Article 1 of the tiny SQuAD file indexed, article 2 (volcanoes) left out."""
    root = tmp_path_factory.mktemp("e2e")
    src = root / "squad2-dev"
    src.mkdir()
    (src / "dev-v2.0-part1.json").write_text(json.dumps(TINY_SQUAD), encoding="utf-8")
    docs = root / "docs" / "pumps.jsonl"
    write_paragraphs_jsonl(load_squad(src), {1}, docs)
    store = SqliteStore(root / "store")
    report = ingest_paths(store, [docs], collection="tiny", progress=False)
    assert report.chunks_total == 2 and not report.skipped
    return store


def test_out_of_corpus_is_refused_before_the_llm(pump_store: SqliteStore, tmp_path: Path) -> None:
    pipe, ctx = make_pipeline(pump_store, tmp_path, "tiny")
    try:
        out = ask(
            pipe,
            "Where is the active stratovolcano Mount Etna located?",
            qid="q3",
            answers=["Sicily"],
            in_corpus=False,
        )
    finally:
        ctx.close()
    assert out.status == "NO_EVIDENCE" and out.llm_attempts == 0 and out.refused_before_llm
    assert not out.gate_passed and out.gate_similarities  # refused on the numbers, not empty
    assert max(out.gate_similarities) < ctx.policy.gate.min_score
    assert (tmp_path / "audit.sqlite").is_file()  # the refusal was recorded


def test_in_corpus_gold_is_in_the_evidence_and_the_answer(
    pump_store: SqliteStore, tmp_path: Path
) -> None:
    pipe, ctx = make_pipeline(pump_store, tmp_path, "tiny")
    try:
        out = ask(
            pipe,
            "What torque are the HP-220 pump impeller bolts tightened to?",
            qid="q1",
            answers=["45 Nm"],
            in_corpus=True,
            group="in:1",
        )
    finally:
        ctx.close()
    assert out.gate_passed and out.llm_attempts >= 1
    assert out.evidence_hit and out.evidence[0].has_gold
    assert out.status == "OK" and out.answer_hit
    assert out.total_ms >= out.overhead_ms >= 0
    s = summarize([out])
    assert (s.n_in, s.evidence_hit_rate, s.answered_rate) == (1, 1.0, 1.0)


def test_open_gate_lets_everything_reach_the_llm(pump_store: SqliteStore, tmp_path: Path) -> None:
    pipe, ctx = make_pipeline(pump_store, tmp_path, "tiny", policy_changes=OPEN_GATE)
    try:
        assert ctx.policy.gate.min_score == 0.0 and ctx.policy.min_similarity_floor == 0.0
        out = ask(pipe, "Where is Mount Etna?", qid="q3", answers=["Sicily"], in_corpus=False)
    finally:
        ctx.close()
    assert out.gate_passed and out.llm_attempts >= 1 and not out.refused_before_llm
    # Similarities the gate saw are in rank order (non-increasing).
    assert out.gate_similarities == sorted(out.gate_similarities, reverse=True)


def test_questions_of_tiny_file_feed_the_harness(tiny_squad: Path) -> None:
    arts = load_squad(tiny_squad)
    assert [q.qid for q in questions_of(arts, {2})] == ["q3"]
