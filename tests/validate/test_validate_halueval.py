"""On real HaluEval items the support check beats chance and keeps false flags rare."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from citebound.eval.grounding import (
    baseline_flags,
    cited,
    load_halueval,
    score,
    support_policy,
    validator_flags,
)


@pytest.mark.data
def test_support_check_beats_chance(shared_dataset: Callable[[str], Path]) -> None:
    items = load_halueval(shared_dataset("halueval-dev"), limit=150)
    policy = support_policy(1.0)
    s = score(items, lambda item, answer: validator_flags(item, answer, policy))
    assert s.tp + s.fn == 150
    assert s.accuracy > 0.75, s
    assert s.precision > 0.9, s
    assert score(items, baseline_flags).accuracy > 0.5


def test_cited_form() -> None:
    assert cited("Delhi") == "Delhi [C0]."
    assert cited(" It was Mumbai. ") == "It was Mumbai [C0]."
