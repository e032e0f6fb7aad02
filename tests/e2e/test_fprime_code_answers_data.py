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
from e2e_helpers import fprime_misses

from citebound.eval.answers import AnswerJudgement, AnswerQuestion, load_questions

pytestmark = pytest.mark.data

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
PICKED = ("f34", "c03", "c04")


def test_procedure_questions_get_the_command_from_the_code_block(
    shared_dataset: Callable[[str], Path], tmp_path: Path
) -> None:
    docs = shared_dataset("fprime-docs")
    guide = docs / "docs" / "UsersGuide"
    questions = {
        q.id: q
        for name in ("fprime_questions.jsonl", "fprime_questions_dev3.jsonl")
        for q in load_questions(DATA / name)
    }
    assert (
        fprime_misses([guide / "user", guide / "gds"], tmp_path, questions, PICKED, _command) == []
    )


def _command(q: AnswerQuestion, j: AnswerJudgement, answer: str) -> bool:
    """Answered well, with the command in backticks on a line of its own after the first."""
    command = q.facts[0][0]
    own_line = any(line.startswith("`") and command in line for line in answer.split("\n")[1:])
    return j.well and own_line
