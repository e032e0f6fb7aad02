"""Definition promotion (retrieve/definitions.py): "What is X?" brings X's defining chunk first.

Pure rules on hand-written sentences, then the Retriever on a small real corpus (real tantivy,
real MiniLM) where the defining chunk ranks below chunks that repeat X's name more often.
"""

from __future__ import annotations

from collections.abc import Callable

from retrieve_helpers import make_docs, policy_with

from citebound.index import update_indexes
from citebound.index.embedder import OnnxEmbedder
from citebound.retrieve import Retriever
from citebound.retrieve.definitions import (
    definition_rank,
    definitions_first,
    kinds_heading,
    kinds_subject,
    named_subject,
    promote,
)
from citebound.store.memory import MemoryStore
from citebound.text.markup import question_type
from citebound.text.subject import definition_subject

Build = Callable[..., MemoryStore]


def test_named_subject_only_for_what_is_x() -> None:
    assert named_subject("What is DpWriter?", 3) == {"dpwriter"}
    assert named_subject("What does the ActiveRateGroup component do?", 3) == {
        "activerategroup",
        "component",
    }
    assert named_subject("How do I build a deployment?", 3) == frozenset()
    assert named_subject("What is the name of the river that runs through the city?", 3) == (
        frozenset()
    )
    assert named_subject("Vitamin D deficiency increases the risk of fractures.", 3) == (
        frozenset()
    )


def test_definition_rank_exact_qualified_and_not_defining() -> None:
    dp = definition_subject("What is DpWriter?")
    assert (
        definition_rank(dp, "## 1. Introduction\n\n`Svc::DpWriter` is an active component.", 2) == 0
    )
    assert definition_rank(dp, "- `dpWriter`: An instance of `Svc::DpWriter` here.", 2) == 1
    # a requirement row, a list announcement, a passing mention: not a definition
    assert (
        definition_rank(dp, "SVC-DPWRITER-001 | `Svc::DpWriter` shall write buffers | Test", 2)
        is None
    )
    assert definition_rank(dp, "`Svc::DpWriter` has the following ports:", 2) is None
    assert definition_rank(dp, "Buffers reach DpWriter through the DpManager.", 2) is None
    arg = definition_subject("What does the ActiveRateGroup component do?")
    # the kind ("component") may come as the genus after the verb
    assert (
        definition_rank(arg, "`Svc::ActiveRateGroup` is an active component that drives.", 2) == 0
    )
    assert (
        definition_rank(arg, "The `Svc::ActiveRateGroup` component has no state machines.", 2)
        is None
    )
    active = definition_subject("What is an active component?")
    assert definition_rank(active, "**Active component:** has a thread and a queue here.", 2) == 1
    assert definition_rank(active, "The active component is required to respond.", 2) is None
    assert definition_rank(active, "This active component is a test harness.", 2) is None
    params = definition_subject("What are parameters?")
    assert definition_rank(params, "Parameters are values that are stored non-volatilely.", 2) == 0
    assert definition_rank(params, "The parameters view consists of connections.", 2) == 1


def test_promote_is_a_stable_partition_best_rank_first() -> None:
    ranks = {"a": None, "b": 1, "c": 0, "d": 1, "e": 0}
    assert promote(list("abcde"), ranks.get, 2) == list("ceabd")
    assert promote(list("abcde"), ranks.get, 3) == list("cebad")
    assert promote(list("abcde"), ranks.get, 0) == list("abcde")
    assert promote(list("abcde"), lambda _: None, 2) == list("abcde")


def test_kinds_questions_promote_the_section_that_lists_them() -> None:
    assert question_type("What component kinds does F´ have?") == "list"
    assert kinds_subject("What component kinds does F´ have?") == {"component"}
    assert kinds_subject("What kinds of ports exist?") == {"port"}
    assert kinds_subject("What types are there?") == frozenset()
    assert kinds_subject("What is a port?") == frozenset()
    assert kinds_heading(frozenset({"component"}), ("Core Constructs", "Component Types"))
    assert not kinds_heading(frozenset({"component"}), ("Port Kinds Available to Each Component",))
    assert not kinds_heading(frozenset({"component"}), ("Components",))


def test_definitions_first_follows_the_policy() -> None:
    texts = {
        "1": "The Widget design uses Widget ports.",
        "2": "`Svc::Widget` is a passive component that counts ticks.",
        "3": "Widget requirements.",
    }
    on = policy_with("strict-v1", promote_definitions=2)
    off = policy_with("strict-v1", promote_definitions=0)
    ids = ["1", "2", "3"]
    assert definitions_first("What is Widget?", ids, texts.__getitem__, lambda _: (), on) == [
        "2",
        "1",
        "3",
    ]
    assert definitions_first("What is Widget?", ids, texts.__getitem__, lambda _: (), off) == ids
    assert (
        definitions_first("Why does Widget fail?", ids, texts.__getitem__, lambda _: (), on) == ids
    )


WIDGET = {
    "id": "widget-sdd",
    "title": "Svc::Widget Component",
    "equipment_id": None,
    "knowledge_type": "document",
    "event_date": None,
    "chunks": [
        "`Svc::Widget` is a passive component that counts ticks.",
        "The Widget component design: Widget ports send Widget telemetry. The Widget component "
        "Widget scheduler calls the Widget component on every Widget component cycle.",
        "Widget component requirements: the Widget component shall report Widget component "
        "counts to the Widget component telemetry channel.",
        "Widget component state: the Widget component has no Widget component state machine.",
    ],
}
OTHER = {
    "id": "pump",
    "title": "Pump manual",
    "equipment_id": None,
    "knowledge_type": "manual",
    "event_date": None,
    "chunks": ["Torque the impeller bolts to 40 Nm.", "The pump is a centrifugal pump."],
}


def test_retriever_brings_the_defining_chunk_first_and_keeps_the_gate(
    build_store: Build, embedder: OnnxEmbedder
) -> None:
    store = build_store([WIDGET, OTHER])
    update_indexes(store, "default", embedder=embedder)
    question = "What does the Widget component do?"
    defining = make_docs(WIDGET)[1][0].chunk_id
    off = Retriever(
        store, policy=policy_with("strict-v1", promote_definitions=0), embedder=embedder
    )
    on = Retriever(store, policy=policy_with("strict-v1", promote_definitions=2), embedder=embedder)
    before, after = off.retrieve(question), on.retrieve(question)
    assert before.results[0].chunk_id != defining  # the name-heavy chunks rank first by score
    assert after.results[0].chunk_id == defining
    assert [r.rank for r in after.results] == list(range(len(after.results)))
    # Only the order changes: same rows, same similarities, same gate decision.
    assert sorted((r.chunk_id, r.similarity) for r in after.results) == sorted(
        (r.chunk_id, r.similarity) for r in before.results
    )
    assert after.gate == before.gate
    # Not a definition question: untouched.
    claim = "Widget telemetry counts ticks"
    assert [r.chunk_id for r in on.retrieve(claim).results] == [
        r.chunk_id for r in off.retrieve(claim).results
    ]
