"""Helpers for the end-to-end tests: a tiny synthetic SQuAD 2.0 file and recorded outcomes."""

from __future__ import annotations

from citebound.eval.end_to_end import EvidenceItem, QuestionOutcome

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
