"""Follow-up questions through the whole pipeline on the real sample corpus, and the rules of
the deterministic retrieval rewrite."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest

from citebound.contracts.conversation import ConversationTurn
from citebound.pipeline import Pipeline
from citebound.policy import load_policy
from citebound.question.conversation import entities, is_entity, rewrite_query
from citebound.testing import ScriptedLLMServer

OIL = "What oil grade does the GB-7 gearbox use?"
HOLD = "How many litres of it does it hold?"
POLICY = load_policy("strict-v1")


def turn(q: str, a: str = "") -> ConversationTurn:
    return ConversationTurn(question=q, answer=a)


@pytest.mark.parametrize(
    ("word", "expected"),
    [("HP-220", True), ("GB7", True), ("TlmChan", True), ("ESD", True), ("Pump", False),
     ("pump", False), ("45", False), ("A", False)],
)  # fmt: skip
def test_entities_are_identifier_like_words(word: str, expected: bool) -> None:
    assert is_entity(word) is expected


def test_rewrite_rules() -> None:
    hist = [turn("What does TlmChan do in F Prime?"), turn("What torque for the HP-220 bolts?")]
    ref = rewrite_query(
        "How often does it send them?", "How often does it send them?", hist, POLICY
    )
    # newest question first, then the one before; order of appearance within each
    assert ref.rule == "followup:reference" and ref.carried == ["HP-220", "TlmChan"]
    assert ref.query == "How often does it send them HP-220 TlmChan?"
    alone = rewrite_query(
        "What is the GB-7 oil grade?", "What is the GB-7 oil grade?", hist, POLICY
    )
    assert (alone.rule, alone.query, alone.carried) == ("standalone", alone.original, [])
    bare = rewrite_query("What is the torque?", "What is the torque?", hist, POLICY)
    assert bare.rule == "followup:no_entity" and bare.carried[0] == "HP-220"
    none = rewrite_query("How often?", "How often?", [], POLICY)
    assert (none.rule, none.query) == ("no_history", "How often?")
    # no entity in the earlier questions: their content words are carried
    words = rewrite_query(
        "And the seal?", "And the seal?", [turn("Which pump needs grease?")], POLICY
    )
    assert words.carried == ["pump", "needs", "grease"]
    # a term the question already has is not repeated
    again = rewrite_query("Is it the HP-220?", "Is it the HP-220?", hist, POLICY)
    assert "HP-220" not in again.carried
    assert entities("HP-220 and TlmChan and HP-220") == ["HP-220", "TlmChan"]


def test_rewrite_carries_what_the_last_answer_refers_to() -> None:
    tlm = turn(
        "What does the TlmChan component do?",
        "The `Svc::TlmChan` Component is used to store telemetry values written by other "
        "components. [C0]",
    )
    # "them" is a plural reference: the answer's first plural noun phrase is carried.
    r = rewrite_query("How often does it send them?", "How often does it send them?", [tlm], POLICY)
    assert r.rule == "followup:reference"
    assert r.carried == ["TlmChan", "telemetry", "values"]
    assert r.from_answers == ["telemetry", "values"]
    # "it" alone: the answer's entities only; an entity only the answer names is carried.
    which = turn("Which component dispatches commands?", "The `CmdDispatcher` does. [C3]")
    r = rewrite_query("What ports does it have?", "What ports does it have?", [which], POLICY)
    assert r.carried == ["CmdDispatcher"] and r.from_answers == ["CmdDispatcher"]
    # Citation markers, units after numbers and refusals are never carried.
    units = turn("What drives the pump?", "A 55 kW motor at 20 mA [C0] drives P-101A. [C1]")
    r = rewrite_query("How fast does it run?", "How fast does it run?", [units], POLICY)
    assert r.carried == ["P-101A"]  # the answer named the referent
    core = turn("How often must the oil cooler core be cleaned?", "Every 1000 hours. [C0]")
    r = rewrite_query("What is it cleaned with?", "What is it cleaned with?", [core], POLICY)
    assert r.carried == [
        "cooler",
        "core",
    ]  # nothing named: the question's topic ("cleaned" is there)
    refused = turn("What does TlmChan cost?", POLICY.refusal.no_evidence_text)
    r = rewrite_query("Who sells it?", "Who sells it?", [refused], POLICY)
    assert r.carried == ["TlmChan"] and r.from_answers == []
    # A question without a reference word takes nothing from answers.
    r = rewrite_query("What is the rate?", "What is the rate?", [tlm], POLICY)
    assert (r.rule, r.carried) == ("followup:no_entity", ["TlmChan"])
    # "the component that stores ..." is a relative clause, not a reference back.
    q = "What is the component that stores parameters and loads them at boot time?"
    assert rewrite_query(q, q, [tlm], POLICY).rule == "followup:reference"  # "them"
    q = "Which component is it that dispatches commands to every other component here?"
    assert rewrite_query(q, q, [tlm], POLICY).rule == "followup:reference"  # "it"
    q = "Which component keeps the values that other components wrote most recently?"
    assert rewrite_query(q, q, [tlm], POLICY).rule == "standalone"


def test_rewrite_substitutes_a_new_entity_for_the_old_one() -> None:
    hist = [turn("What oil grade does the GB-7 gearbox use?", "ISO VG 220 mineral oil. [C0]")]
    r = rewrite_query("What about the VT-40?", "What about the VT-40?", hist, POLICY)
    assert r.rule == "followup:substitution"
    assert r.carried == ["grade", "gearbox"] and r.query == "What about the VT-40 grade gearbox?"
    # A new topic with its own entity and no continuation stays standalone.
    q = "What is the ESD-3 proof test interval?"
    assert rewrite_query(q, q, hist, POLICY).carried == []


def test_answer_terms_are_bounded_by_the_policy() -> None:
    many = turn("Which ports are there?", "Ports AaA1, BbB2, CcC3, DdD4 and EeE5 carry packets.")
    r = rewrite_query("What do they do?", "What do they do?", [many], POLICY)
    assert r.from_answers == ["ports", "AaA1", "BbB2"]  # rewrite_answer_max_terms = 3
    off = POLICY.evolve(
        conversation=POLICY.conversation.model_copy(update={"rewrite_answer_turns": 0})
    )
    assert rewrite_query("What do they do?", "What do they do?", [many], off).carried == [
        "ports"
    ]  # questions only: their content words, as before answers were read


def test_rewrite_respects_n4_and_the_term_cap() -> None:
    hist = [turn(f"What about unit X{i}?") for i in range(10)]
    off = POLICY.evolve(
        superprompt=POLICY.superprompt.model_copy(update={"n4_recent_conv_max_pairs": 0})
    )
    assert rewrite_query("And it?", "And it?", hist, off).rule == "no_history"
    capped = POLICY.evolve(
        conversation=POLICY.conversation.model_copy(
            update={"rewrite_turns": 5, "rewrite_max_terms": 2}
        )
    )
    r = rewrite_query("And it?", "And it?", hist, capped)
    assert r.carried == ["X9", "X8"]


def test_follow_up_is_answered_with_citations_and_traced(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    pipe = make_pipeline()
    first = pipe.run(OIL)
    assert first.response is not None and first.response.status.value == "OK"
    alone = pipe.run(HOLD)
    assert alone.response is not None and alone.response.status.value == "NO_EVIDENCE"
    follow = pipe.run(HOLD, history=[turn(OIL, first.response.answer)])
    r = follow.response
    assert r is not None and r.status.value == "OK", follow.stage_log[-1].note
    assert "18 litres" in r.answer and r.citations
    rewrite = follow.extras["followup_rewrite"]
    assert rewrite["rule"] == "followup:reference"
    # The question's entity first, then the entities of the first answer ("ISO VG 220").
    assert rewrite["carried"] == ["GB-7", "ISO", "VG"] and rewrite["from_answers"] == ["ISO", "VG"]
    assert follow.extras["query"] == "How many litres of it does it hold GB-7 ISO VG?"
    note = next(s.note for s in follow.stage_log if s.stage == "retrieval")
    assert "follow-up" in note
    assert follow.prompt is not None and follow.prompt.template_id == "qa_conversation_v1"
    assert "User: " + OIL in follow.prompt.prompt_text
    # No history: the request is exactly the single-shot one.
    again = pipe.run(OIL, history=[])
    assert again.prompt is not None and first.prompt is not None
    assert again.prompt.prompt_sha256 == first.prompt.prompt_sha256
    assert "followup_rewrite" not in again.extras


def test_a_carried_entity_never_answers_an_unrelated_question(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    """The rewrite carries GB-7 into a question that names no entity; GB-7's manual then
    passes the gate, but no sentence answers the question's own terms, so it is refused
    (it used to quote "Synthetic oils may only be used after written approval")."""
    pipe = make_pipeline()
    first = pipe.run(OIL)
    assert first.response is not None
    hist = [turn(OIL, first.response.answer)]
    # A long question without an entity is a new topic: nothing is carried.
    q = "What is the boiling point of the diesel fuel used by the backup generator?"
    alone = pipe.run(q, history=hist)
    assert alone.extras["followup_rewrite"]["rule"] == "standalone"
    assert alone.response is not None and alone.response.status.value == "NO_EVIDENCE"
    # With a reference back, GB-7 (and the first answer's ISO, VG) are carried, and still no
    # sentence answers the question's own terms.
    q = "What is the boiling point of the diesel fuel it uses?"
    follow = pipe.run(q, history=hist)
    assert follow.extras["followup_rewrite"]["carried"][0] == "GB-7"
    assert follow.response is not None and follow.response.status.value == "NO_EVIDENCE"


def test_follow_up_without_evidence_is_refused_before_any_model_call(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    with ScriptedLLMServer() as server:
        pipe = make_pipeline(
            **{
                "provider.name": "openai",
                "provider.model": "m",
                "provider.base_url": server.base_url,
            }
        )
        # The sample corpus has no F Prime documents: the carried entity finds nothing either.
        state = pipe.run(
            "How often does it send them?",
            history=[turn("What does the TlmChan component store?", "NO_EVIDENCE: ...")],
        )
        assert state.response is not None and state.response.status.value == "NO_EVIDENCE"
        assert state.llm_result is not None and state.llm_result.attempts == 0
        assert server.requests == []
        assert state.extras["followup_rewrite"]["carried"] == ["TlmChan"]
        assert state.retrieval_bundle is not None and not state.retrieval_bundle.gate.passed


def test_n4_keeps_only_the_last_pairs(make_pipeline: Callable[..., Pipeline]) -> None:
    pipe = make_pipeline(**{"limits.n4_recent_conv_max_pairs": 2})
    hist = [turn(f"Old question {i}?", f"Old answer {i}.") for i in range(5)] + [turn(OIL)]
    state = pipe.start(HOLD, history=hist)
    assert [t.question for t in state.history] == ["Old question 4?", OIL]
    off = make_pipeline(**{"limits.n4_recent_conv_max_pairs": 0}).run(HOLD, history=hist)
    assert off.history == [] and off.response is not None
    assert off.response.status.value == "NO_EVIDENCE"  # single-shot: nothing is carried


def test_max_output_tokens_only_lowers_the_cap(make_pipeline: Callable[..., Pipeline]) -> None:
    pipe = make_pipeline()
    full = pipe.run(OIL)
    tiny = pipe.run(OIL, max_output_tokens=5)
    high = pipe.run(OIL, max_output_tokens=10**6)
    assert full.llm_result is not None and tiny.llm_result is not None
    assert high.llm_result is not None
    assert tiny.llm_result.max_output_tokens == 5
    assert high.llm_result.max_output_tokens == full.llm_result.max_output_tokens == 800
    assert full.response is not None and high.response is not None
    assert high.response.answer == full.response.answer
    # The one answer sentence does not fit 5 tokens and is never cut: the request FAILS.
    assert tiny.response is not None and tiny.response.status.value == "FAILED"
    assert tiny.response.answer == ""


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as s:
        yield s


@pytest.mark.integration
def test_llm_rewrite_stage_is_recorded_and_exact(
    make_pipeline: Callable[..., Pipeline], llm: ScriptedLLMServer
) -> None:
    llm.reply(json.dumps({"query": "GB-7 gearbox oil capacity litres"}))
    llm.reply("The oil capacity of the GB-7 gearbox is 18 litres. [C0]")
    pipe = make_pipeline(
        **{
            "provider.name": "openai",
            "provider.model": "m",
            "provider.base_url": llm.base_url,
            "stages.llm_rewrite": True,
        }
    )
    state = pipe.run(HOLD, history=[turn(OIL, "ISO VG 220 [C0]")])
    rw = state.extras["followup_rewrite"]
    assert rw["rule"] == "llm" and rw["query"] == "GB-7 gearbox oil capacity litres"
    sent = llm.requests[0].messages()[1]["content"]
    assert "- " + OIL in sent and sent.rstrip().endswith(HOLD)
    assert "ISO VG 220" not in sent  # earlier answers never feed the rewrite
    answer = llm.requests[1].messages()[1]["content"]
    assert "=== RECENT CONVERSATION ===" in answer
    assert state.response is not None and state.response.status.value == "OK"


@pytest.mark.integration
def test_llm_rewrite_with_a_bad_reply_fails_closed(
    make_pipeline: Callable[..., Pipeline], llm: ScriptedLLMServer
) -> None:
    llm.reply('{"query": ""}')
    pipe = make_pipeline(
        **{
            "provider.name": "openai",
            "provider.model": "m",
            "provider.base_url": llm.base_url,
            "stages.llm_rewrite": True,
        }
    )
    state = pipe.run(HOLD, history=[turn(OIL)])
    assert state.response is not None and state.response.status.value == "FAILED"
    assert state.response.failure_reason == "STAGE_DISABLED"
    assert len(llm.requests) == 1
    # Without earlier turns the LLM rewrite is never called.
    llm.reply(
        "NO_EVIDENCE: The provided evidence does not contain sufficient information to answer this question."
    )
    make_pipeline(
        **{
            "provider.name": "openai",
            "provider.model": "m",
            "provider.base_url": llm.base_url,
            "stages.llm_rewrite": True,
        }
    ).run(OIL)
    assert "EARLIER QUESTIONS" not in llm.requests[-1].messages()[1]["content"]


def test_rewrite_template_hash_is_pinned() -> None:
    from importlib import resources

    from citebound.contracts.base import sha256_hex

    data = (
        resources.files("citebound.prompt")
        .joinpath("templates", "followup_rewrite_v1.txt")
        .read_bytes()
    )
    assert sha256_hex(data) == REWRITE_SHA256


REWRITE_SHA256 = "7618e69287d8ab86bac5e1340710d1f5bea55d02f121dda08eee6f74515df45a"


def test_a_huge_n4_is_still_bounded(make_pipeline: Callable[..., Pipeline]) -> None:
    pipe = make_pipeline(**{"limits.n4_recent_conv_max_pairs": 1000})
    state = pipe.start(HOLD, history=[turn(f"q{i}?") for i in range(100)])
    assert len(state.history) == 64 and state.history[-1].question == "q99?"


def test_the_audit_record_keeps_the_conversation_and_replays_it(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    """The history as received (all of it, not only the N4 used) and the rewrite are in the
    record; `request_of` asks the same request again: same query, same prompt bytes."""
    from citebound.audit import request_of

    pipe = make_pipeline(**{"limits.n4_recent_conv_max_pairs": 1})
    first = pipe.run(OIL)
    assert first.response is not None
    hist = [turn("Which gearbox drives the VT-40 fan?", "The GB-7. [C0]"),
            turn(OIL, first.response.answer)]  # fmt: skip
    follow = pipe.run(HOLD, history=hist)
    (sink,) = pipe.ctx.sinks
    (record,) = sink.find(follow.request_id)
    assert record.schema_version >= 4 and record.hash_ok()
    conv = record.conversation
    assert conv is not None and conv.turns == hist
    assert (conv.turns_received, conv.turns_used) == (2, 1)
    assert conv.rewrite is not None and conv.rewrite.query == follow.extras["query"]
    assert conv.rewrite.model_dump() == follow.extras["followup_rewrite"]
    (single,) = sink.find(first.request_id)
    assert single.conversation is None  # asked without history
    question, history = request_of(record)
    again = pipe.run(question, history=history)
    assert again.extras["query"] == follow.extras["query"]
    assert again.prompt is not None and follow.prompt is not None
    assert again.prompt.prompt_sha256 == follow.prompt.prompt_sha256 == record.prompt_sha256
