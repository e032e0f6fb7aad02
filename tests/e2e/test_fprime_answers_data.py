"""Data regression: 10 of the F´ answer-benchmark questions, end to end (extractive, strict-v1).

The questions and their key facts come from `benchmarks/data/fprime_questions.jsonl` (written
by hand from the docs). This pins that the default install answers them well: OK, every key
fact, a sentence start, no raw markup, and that out-of-corpus questions are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from e2e_helpers import fprime_misses

from citebound.eval.answers import load_questions

pytestmark = pytest.mark.data

QUESTIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "fprime_questions.jsonl"
# Spread over documents and question types; chosen before measuring, not after.
PICKED = ("f01", "f06", "f09", "f11", "f12", "f16", "f21", "f24", "f36", "f39", "x01", "x04")


def test_fprime_questions_are_answered_with_their_key_facts(
    shared_dataset: Callable[[str], Path], tmp_path: Path
) -> None:
    docs = shared_dataset("fprime-docs")
    # The folders holding the picked answers, with everything around them as distractors.
    roots = [docs / "Svc", docs / "docs" / "UsersGuide", docs / "docs" / "Design"]
    questions = {q.id: q for q in load_questions(QUESTIONS)}
    assert fprime_misses(roots, tmp_path, questions, PICKED) == []
