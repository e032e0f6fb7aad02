"""Multi-turn checks (benchmarks/data/conversation_checks.jsonl, written by hand from the
documents): follow-ups answered with citations, follow-ups without evidence refused, topic
switches searched without the old entities. Sample-corpus conversations always run; the F´
ones need ../shared/data/fprime-docs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from citebound.eval.conversations import ConversationCheck, load_checks, run_check
from citebound.eval.end_to_end import make_pipeline as make_data_pipeline
from citebound.ingest import ingest_paths
from citebound.pipeline import Pipeline
from citebound.store.sqlite import SqliteStore

CHECKS = load_checks(
    Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "conversation_checks.jsonl"
)


def _failures(pipe: Pipeline, checks: list[ConversationCheck]) -> list[tuple[str, ...]]:
    bad = []
    for check in checks:
        for o in run_check(pipe, check):
            if o.problems:
                bad.append((o.id, o.question, o.status, str(o.carried), *o.problems))
    return bad


def test_the_check_set_covers_what_it_must() -> None:
    """≥ 10 conversations over both corpora, with refusals and topic switches in each."""
    assert len(CHECKS) >= 10 and len({c.id for c in CHECKS}) == len(CHECKS)
    for corpus in ("sample", "fprime"):
        turns = [t for c in CHECKS if c.corpus == corpus for t in c.turns[1:]]
        assert any(t.status == "NO_EVIDENCE" for t in turns), corpus
        assert any(t.rule == "standalone" and t.never_carries for t in turns), corpus
        assert any(len(c.turns) >= 3 for c in CHECKS if c.corpus == corpus), corpus


def test_sample_corpus_conversations(make_pipeline: Callable[..., Pipeline]) -> None:
    assert _failures(make_pipeline(), [c for c in CHECKS if c.corpus == "sample"]) == []


@pytest.mark.data
def test_fprime_conversations(shared_dataset: Callable[[str], Path], tmp_path: Path) -> None:
    docs = shared_dataset("fprime-docs")
    store = SqliteStore(tmp_path / "store")
    # The component SDDs the conversations are about, with every other component as distractor.
    ingest_paths(store, [docs / "Svc"], collection="fprime", progress=False)
    pipe, ctx = make_data_pipeline(store, tmp_path / "audit", "fprime")
    try:
        assert _failures(pipe, [c for c in CHECKS if c.corpus == "fprime"]) == []
    finally:
        ctx.close()
