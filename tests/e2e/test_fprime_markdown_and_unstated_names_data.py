"""Data regression for extractive-v9 (#15): F´ questions whose answers v9's rules made right.

From `benchmarks/data/fprime_questions_dev4.jsonl` (written blind, before the change, and
measured once before it; seen since): a numbered procedure written with escaped stops (g13,
`1\\. Instantiate ...`), a two-column table without leading pipes (g15), single-mark emphasis
at a sentence start (g18), a reference list whose next entries are not steps (g05), and an
out-of-corpus question whose name (PostgreSQL) no evidence states (z02). End to end over the
F´ framework (`Fw`) and user guide folders (extractive, strict-v1): answered well, or refused.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from e2e_helpers import fprime_misses

from citebound.eval.answers import load_questions

pytestmark = pytest.mark.data

QUESTIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
PICKED = ("g05", "g13", "g15", "g18", "z02")


def test_v9_questions_are_answered_well_or_refused(
    shared_dataset: Callable[[str], Path], tmp_path: Path
) -> None:
    docs = shared_dataset("fprime-docs")
    questions = {q.id: q for q in load_questions(QUESTIONS / "fprime_questions_dev4.jsonl")}
    roots = [docs / "Fw", docs / "docs" / "UsersGuide"]
    assert fprime_misses(roots, tmp_path, questions, PICKED) == []
