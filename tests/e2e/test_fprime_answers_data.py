"""Data regression: 10 of the F´ answer-benchmark questions, end to end (extractive, strict-v1).

The questions and their key facts come from `benchmarks/data/fprime_questions.jsonl` (written
by hand from the docs). This pins that the default install answers them well: OK, every key
fact, a sentence start, no raw markup, and that out-of-corpus questions are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from citebound.eval.answers import judge, load_questions
from citebound.eval.end_to_end import make_pipeline
from citebound.ingest import ingest_paths
from citebound.store.sqlite import SqliteStore

pytestmark = pytest.mark.data

QUESTIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "fprime_questions.jsonl"
# Spread over documents and question types; chosen before measuring, not after.
PICKED = ("f01", "f06", "f09", "f11", "f12", "f16", "f21", "f24", "f36", "f39", "x01", "x04")


def test_fprime_questions_are_answered_with_their_key_facts(
    shared_dataset: Callable[[str], Path], tmp_path: Path
) -> None:
    docs = shared_dataset("fprime-docs")
    store = SqliteStore(tmp_path / "store")
    # The folders holding the picked answers, with everything around them as distractors.
    roots = [docs / "Svc", docs / "docs" / "UsersGuide", docs / "docs" / "Design"]
    ingest_paths(store, roots, collection="fprime", progress=False)
    questions = {q.id: q for q in load_questions(QUESTIONS)}
    pipe, ctx = make_pipeline(store, tmp_path / "audit", "fprime")
    bad = []
    try:
        for qid in PICKED:
            q = questions[qid]
            resp = pipe.run(q.question, request_id=qid).response
            assert resp is not None
            j = judge(q, resp.status.value, resp.answer)
            if not j.well:
                bad.append((qid, q.question, resp.status.value, resp.answer))
    finally:
        ctx.close()
    assert bad == []
