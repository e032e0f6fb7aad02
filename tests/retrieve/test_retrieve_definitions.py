"""Definition promotion (retrieve/definitions.py): "What is X?" brings X's defining chunk first.

Pure rules on hand-written sentences, then the Retriever on a small real corpus (real tantivy,
real MiniLM) where the defining chunk ranks below chunks that repeat X's name more often.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from retrieve_helpers import make_docs, policy_with, row

from citebound.config import load_config
from citebound.contracts.retrieval import RetrievalRow
from citebound.gate.measures import top_coverage
from citebound.index import update_indexes
from citebound.index.embedder import OnnxEmbedder
from citebound.pipeline import Pipeline, PipelineContext
from citebound.retrieve import Retriever
from citebound.retrieve.definitions import (
    definition_rank,
    kinds_heading,
    kinds_subject,
    promote,
    promote_rows,
)
from citebound.store.memory import MemoryStore
from citebound.text.markup import question_type
from citebound.text.subject import definition_subject, named_subject

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
    assert not kinds_heading(frozenset(), ("Types",))  # a bare "Types" is about no N


def test_singular_nouns_ending_in_s_do_not_make_a_list_question() -> None:
    for question in (
        "What gas does the boiler plant emit?",
        "What lens does the camera use?",
        "What axis does the arm rotate on?",
        "What analysis does the team run?",
        "What series does the pump belong to?",
        "What species does the park protect?",
        "What news does the feed carry?",
        "What alias does the host have?",
    ):
        assert question_type(question) == "other", question
    for question in (
        "Which events does the component emit?",
        "What areas does the plan cover?",
        "What dependencies does the build have?",
        "What keys does the table hold?",
    ):
        assert question_type(question) == "list", question


def test_definition_promotion_follows_the_policy() -> None:
    rows = [
        row(0, 0.9, "The Widget design uses Widget ports."),
        row(1, 0.8, "`Svc::Widget` is a passive component that counts ticks."),
        row(2, 0.7, "Widget requirements."),
    ]
    on = policy_with("strict-v1", promote_definitions=2)
    off = policy_with("strict-v1", promote_definitions=0)
    out, moved = promote_rows("What is Widget?", rows, on)
    assert [r.chunk_id for r in out] == ["c1", "c0", "c2"] and moved == 1
    assert [r.rank for r in out] == [0, 1, 2]
    assert promote_rows("What is Widget?", rows, off) == (rows, 0)
    assert promote_rows("Why does Widget fail?", rows, on) == (rows, 0)


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

WIDGET_QUESTION = "What does the Widget component do?"
WIDGET_DEFINING = make_docs(WIDGET)[1][0].chunk_id  # "`Svc::Widget` is a passive component ..."


@pytest.fixture
def widget_store(build_store: Build, embedder: OnnxEmbedder) -> MemoryStore:
    """WIDGET and OTHER, indexed: the defining chunk ranks below the name-heavy ones."""
    store = build_store([WIDGET, OTHER])
    update_indexes(store, "default", embedder=embedder)
    return store


def test_retriever_brings_the_defining_chunk_first_and_keeps_the_gate(
    widget_store: MemoryStore, embedder: OnnxEmbedder
) -> None:
    store = widget_store
    question = WIDGET_QUESTION
    defining = WIDGET_DEFINING
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


DEFINES = "`Svc::Widget` is a passive component that counts ticks."
MENTIONS = "The Widget component design uses Widget ports."


def _gate_inputs(question: str, rows: list[RetrievalRow]) -> tuple[object, ...]:
    """What the gate and assembly's top-similarity check weigh: the similarities, the top
    similarity and the coverage of the top row (ties by rank)."""
    return (sorted(r.similarity for r in rows), top_coverage(question, rows))


def test_promote_rows_never_changes_what_the_gate_sees() -> None:
    question = "What is Widget?"
    policy = policy_with("strict-v1", promote_definitions=2, top_k=3)
    # The defining chunk beyond top_k (rank 4) is not pulled in: no row is pushed out.
    rows = [row(i, 0.9 - 0.01 * i, MENTIONS) for i in range(4)] + [row(4, 0.5, DEFINES)]
    assert promote_rows(question, rows, policy) == (rows, 0)
    # Within top_k it moves up; rows beyond top_k keep their place; ranks are renumbered.
    rows = [row(0, 0.9, MENTIONS), row(1, 0.8, MENTIONS), row(2, 0.7, DEFINES)]
    rows.append(row(3, 0.6, DEFINES))
    out, moved = promote_rows(question, rows, policy)
    assert [r.chunk_id for r in out] == ["c2", "c0", "c1", "c3"] and moved == 1
    assert [r.rank for r in out] == [0, 1, 2, 3]
    # top_k = 1: the top-similarity row is the only one selected; nothing moves.
    one = policy_with("strict-v1", promote_definitions=2, top_k=1)
    assert promote_rows(question, rows, one) == (rows, 0)
    # A defining row tied with the top row never passes it (the top row's coverage is what
    # the gate weighs, ties broken by rank); a lower tie keeps its order too.
    tied = [row(0, 0.9, "Widget x."), row(1, 0.9, DEFINES), row(2, 0.8, MENTIONS)]
    out, moved = promote_rows(question, tied, policy)
    assert [r.chunk_id for r in out] == ["c0", "c1", "c2"] and moved == 0
    for rows in (tied, [row(0, 0.9, "Widget x."), row(1, 0.7, "Other."), row(2, 0.7, DEFINES)]):
        out, _ = promote_rows(question, rows, policy)
        # Any subset (assembly drops rows by filter / floor): the same gate inputs.
        for drop in range(len(rows)):
            keep = [r for r in rows if r.rank != drop]
            kept = [r for r in out if r.chunk_id in {k.chunk_id for k in keep}]
            assert _gate_inputs(question, kept) == _gate_inputs(question, keep)


def test_retriever_promotion_keeps_the_selected_rows_beyond_and_at_top_k_one(
    widget_store: MemoryStore, embedder: OnnxEmbedder
) -> None:
    store = widget_store
    question = WIDGET_QUESTION
    defining = WIDGET_DEFINING
    full = Retriever(
        store, policy=policy_with("strict-v1", promote_definitions=0), embedder=embedder
    ).retrieve(question)
    at = [r.chunk_id for r in full.results].index(defining)
    assert at >= 1
    for top_k in (1, at):  # the defining chunk just beyond top_k; top_k = 1
        args = {"top_k": top_k}
        off = Retriever(
            store, policy=policy_with("strict-v1", promote_definitions=0, **args), embedder=embedder
        ).retrieve(question)
        on = Retriever(
            store, policy=policy_with("strict-v1", promote_definitions=2, **args), embedder=embedder
        ).retrieve(question)
        assert [r.chunk_id for r in on.results] == [r.chunk_id for r in off.results]
        assert on.gate == off.gate and on.retrieval_status == off.retrieval_status


def test_the_pipeline_reranked_stage_promotes_like_the_retriever(
    widget_store: MemoryStore, embedder: OnnxEmbedder
) -> None:
    store = widget_store
    question = WIDGET_QUESTION
    defining = WIDGET_DEFINING
    policy = policy_with("strict-v1", promote_definitions=2)
    ctx = PipelineContext(load_config(None, env={}), store_override=store)
    ctx.policy = policy
    try:
        state = Pipeline(ctx).run(question)
    finally:
        ctx.close()
    expected = Retriever(store, policy=policy, embedder=embedder).retrieve(question)
    reranked = state.views_by_stage["reranked"]
    assert reranked[0] == defining
    assert reranked[: len(expected.results)] == [r.chunk_id for r in expected.results]
    note = next(r.note for r in state.stage_log if r.stage == "reranked")
    assert note.endswith("; definitions of the subject first (1 promoted)")
