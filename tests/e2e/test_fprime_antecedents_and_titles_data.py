"""Data regression for the set-6 rules (#15): F´ questions the new rules answer well.

From `benchmarks/data/fprime_questions_dev6.jsonl` (written blind and measured once before the
change; seen since) and `_dev5` (h05): a lead that points back brings its antecedent (k04
"It allows ..." without LockGuard, k16 "This only happens ..."), "What is X in Y?" defines X
(k13, the hub rather than the hub pattern), and a document's opening sentence takes its
subject from the title (h05, "Dispatches command sequences ..." under
"# components::SeqDispatcher"). End to end over the folders holding them (extractive,
strict-v1): answered well.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from e2e_helpers import fprime_misses

from citebound.eval.answers import load_questions

pytestmark = pytest.mark.data

QUESTIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
PICKED = ("k04", "k13", "k16", "h05")


def test_set6_rules_answer_well(shared_dataset: Callable[[str], Path], tmp_path: Path) -> None:
    docs = shared_dataset("fprime-docs")
    questions = {
        q.id: q
        for name in ("fprime_questions_dev5.jsonl", "fprime_questions_dev6.jsonl")
        for q in load_questions(QUESTIONS / name)
    }
    roots = [docs / "Utils", docs / "Svc", docs / "docs" / "UsersGuide"]
    assert fprime_misses(roots, tmp_path, questions, PICKED) == []
