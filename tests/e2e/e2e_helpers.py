"""Helpers for the end-to-end tests: a tiny synthetic SQuAD 2.0 file, recorded outcomes, and
the F´ answer data tests' ask-and-judge loop."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from citebound.eval.answers import AnswerJudgement, AnswerQuestion, judge
from citebound.eval.end_to_end import EvidenceItem, QuestionOutcome, make_pipeline
from citebound.ingest import ingest_paths
from citebound.store.sqlite import SqliteStore

TINY_SQUAD = {
    "version": "v2.0",
    "data": [
        {
            "title": "Pumps",
            "paragraphs": [
                {
                    "context": "The HP-220 pump impeller bolts are tightened to 45 Nm.",
                    "qas": [
                        {
                            "id": "q1",
                            "question": "What torque for the impeller bolts?",
                            "answers": [
                                {"text": "45 Nm", "answer_start": 47},
                                {"text": "45 Nm", "answer_start": 47},
                            ],
                            "is_impossible": False,
                        },
                        {
                            "id": "q2",
                            "question": "What colour is the pump?",
                            "answers": [],
                            "is_impossible": True,
                        },
                    ],
                },
                {"context": "Seals are inspected every 2000 hours.", "qas": []},
            ],
        },
        {
            "title": "Volcanoes",
            "paragraphs": [
                {
                    "context": "Mount Etna is an active stratovolcano in Sicily.",
                    "qas": [
                        {
                            "id": "q3",
                            "question": "Where is Mount Etna?",
                            "answers": [{"text": "Sicily", "answer_start": 41}],
                            "is_impossible": False,
                        }
                    ],
                }
            ],
        },
    ],
}


def outcome(
    qid: str,
    *,
    in_corpus: bool,
    sims: list[float],
    evidence: list[tuple[float, bool]] | None = None,
) -> QuestionOutcome:
    """A recorded outcome as an open-gate run would produce it."""
    items = [EvidenceItem(similarity=s, has_gold=g) for s, g in (evidence or [])]
    return QuestionOutcome(
        qid=qid,
        group="in" if in_corpus else "out",
        in_corpus=in_corpus,
        status="OK",
        llm_attempts=1,
        refused_before_llm=False,
        gate_passed=True,
        gate_similarities=sims,
        evidence=items,
        evidence_hit=any(g for _, g in (evidence or [])),
        answer_hit=False,
        total_ms=10.0,
        llm_ms=1.0,
    )


def fprime_misses(
    roots: list[Path],
    tmp_path: Path,
    questions: dict[str, AnswerQuestion],
    picked: tuple[str, ...],
    accept: Callable[[AnswerQuestion, AnswerJudgement, str], bool] = lambda _q, j, _a: j.well,
) -> list[tuple[str, str, str, str]]:
    """Ingest `roots` into a fresh store, ask the `picked` questions with the default preset
    (extractive, strict-v1) and return `(id, question, status, answer)` for each answer that
    `accept` (default: judged answered well) turns down."""
    store = SqliteStore(tmp_path / "store")
    ingest_paths(store, roots, collection="fprime", progress=False)
    pipe, ctx = make_pipeline(store, tmp_path / "audit", "fprime")
    bad = []
    try:
        for qid in picked:
            q = questions[qid]
            resp = pipe.run(q.question, request_id=qid).response
            assert resp is not None
            answer = resp.answer or ""
            if not accept(q, judge(q, resp.status.value, answer), answer):
                bad.append((qid, q.question, resp.status.value, answer))
    finally:
        ctx.close()
    return bad
