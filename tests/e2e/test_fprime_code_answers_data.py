"""Data regression: "How do I ...?" answered with the command from a code block (#15, v6).

Questions from `benchmarks/data/fprime_questions.jsonl` (f34) and `fprime_questions_dev3.jsonl`
(c03, c04: written before code blocks were quotable), end to end over the F´ user guide's
`user` and `gds` folders (extractive, strict-v1). Each answer must be OK, hold the command,
start at a sentence start and quote no raw markup; the command sits on its own line, in
backticks, right after the sentence that introduces it.
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

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
PICKED = ("f34", "c03", "c04")


def test_procedure_questions_get_the_command_from_the_code_block(
    shared_dataset: Callable[[str], Path], tmp_path: Path
) -> None:
    docs = shared_dataset("fprime-docs")
    store = SqliteStore(tmp_path / "store")
    guide = docs / "docs" / "UsersGuide"
    ingest_paths(store, [guide / "user", guide / "gds"], collection="fprime", progress=False)
    questions = {
        q.id: q
        for name in ("fprime_questions.jsonl", "fprime_questions_dev3.jsonl")
        for q in load_questions(DATA / name)
    }
    pipe, ctx = make_pipeline(store, tmp_path / "audit", "fprime")
    bad = []
    try:
        for qid in PICKED:
            q = questions[qid]
            resp = pipe.run(q.question, request_id=qid).response
            assert resp is not None
            answer = resp.answer or ""
            j = judge(q, resp.status.value, answer)
            command = q.facts[0][0]
            on_own_line = any(
                line.startswith("`") and command in line for line in answer.split("\n")[1:]
            )
            if not (j.well and on_own_line):
                bad.append((qid, q.question, resp.status.value, answer))
    finally:
        ctx.close()
    assert bad == []
