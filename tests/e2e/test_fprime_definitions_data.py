"""Data regression: "What is X?" on the F´ docs gets the chunk defining X (definition promotion).

Retrieval level, strict-v1: the subject's defining chunk (its introduction / the glossary line)
is among the evidence assembly selects, where without the promotion it ranked behind chunks of the
same document and fell to the 2-per-document cap (issue #15: f03, f18, d13). The rows, their
similarities and the gate are the same with and without it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from citebound.assemble.assembler import assemble
from citebound.contracts.assembly import SelectedEvidence
from citebound.ingest import ingest_paths
from citebound.policy import load_policy
from citebound.retrieve import Retriever
from citebound.store.sqlite import SqliteStore

pytestmark = pytest.mark.data

# question -> (document path suffix, text that opens the defining sentence). Checked: with
# promote_definitions = 0 none of the three is kept (whole F´ corpus, 2026-11-26).
CASES = {
    "What does the ActiveRateGroup component do?": (
        "ActiveRateGroup/docs/sdd.md",
        "`Svc::ActiveRateGroup` is an active component",
    ),
    "What is DpWriter?": ("DpWriter/docs/sdd.md", "`Svc::DpWriter` is an active component"),
    "What is an active component?": (
        "user/port-comp-top.md",
        "**Active component:** has a thread",
    ),
}


def _defining(kept: list[SelectedEvidence], doc: str, opening: str) -> bool:
    return any(
        (e.source is not None and (e.source.source_path or "").endswith(doc))
        and opening in e.sanitized_text
        for e in kept
    )


def test_definition_questions_keep_the_defining_chunk(
    shared_dataset: Callable[[str], Path], tmp_path: Path
) -> None:
    docs = shared_dataset("fprime-docs")
    store = SqliteStore(tmp_path / "store")
    ingest_paths(
        store, [docs / "Svc", docs / "docs" / "UsersGuide"], collection="f", progress=False
    )
    strict = load_policy("strict-v1")
    off = strict.evolve(retrieval={**strict.retrieval.model_dump(), "promote_definitions": 0})
    retriever = Retriever(store, policy=strict)
    missing = []
    for question, (doc, opening) in CASES.items():
        on_b = retriever.retrieve(question, collection="f")
        off_b = retriever.retrieve(question, collection="f", policy=off)
        assert on_b.gate == off_b.gate
        assert sorted((r.chunk_id, r.similarity) for r in on_b.results) == sorted(
            (r.chunk_id, r.similarity) for r in off_b.results
        )
        kept = assemble(on_b, strict).selected_evidence  # what the answerer is shown
        if not _defining(kept, doc, opening):
            missing.append(question)
    assert missing == []
