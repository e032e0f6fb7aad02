"""extractive-v5: which sentence may open an answer, and what may follow it (issue #15).

Each rule is checked with its knob on and off (or against the sentence it must not pick), so
a test fails when the rule stops working.
"""

from __future__ import annotations

from llm_helpers import fast_policy, make_bundle

from citebound.contracts.retrieval import SourceRef
from citebound.llm import ExtractiveProvider
from citebound.llm.extractive.candidates import Candidate
from citebound.llm.extractive.scoring import (
    anaphoric,
    asks_manner,
    defines_subject,
    definition_subject,
    names_subject,
)

REFUSAL = fast_policy().refusal.model_text


def cand(text: str) -> Candidate:
    return Candidate(0, 0, 0, text, "C0", "prose", False, True, frozenset(), frozenset())


def test_a_definition_does_not_open_with_a_sentence_that_points_back() -> None:
    texts = [
        "This directory holds the rate group. In this case, this component provides the thread "
        "for the rate group and calls its output ports.",
        "The RateGroup component drives a set of components connected to its output ports.",
    ]
    question = "What does the RateGroup component do?"
    bundle = make_bundle(texts, question)
    assert ExtractiveProvider().answer(bundle, REFUSAL) == (
        "The RateGroup component drives a set of components connected to its output ports. [C1]"
    )
    old = ExtractiveProvider(weak_lead=False, anaphora_penalty=0.0).answer(bundle, REFUSAL)
    assert old.startswith("In this case, this component provides")


def test_anaphoric_starts() -> None:
    for text in ("In this case, this component runs.", "It does so by pinging.", "These run."):
        assert anaphoric(cand(text)), text
    # A sentence that introduces something with "There is a ..." or names its subject.
    for text in ("There is a queue per port.", "The component runs.", "Items run."):
        assert not anaphoric(cand(text)), text


def test_an_intro_does_not_answer_a_definition_when_a_statement_does() -> None:
    texts = [
        "The `Svc::Pump` component has the following ports:\n- `in`: the command port",
        "`Svc::Pump` is a passive component that moves coolant between the tanks.",
    ]
    bundle = make_bundle(texts, "What is the Pump component?")
    assert ExtractiveProvider().answer(bundle, REFUSAL) == (
        "`Svc::Pump` is a passive component that moves coolant between the tanks. [C1]"
    )
    assert (
        ExtractiveProvider(weak_lead=False, prefer_defining=False)
        .answer(bundle, REFUSAL)
        .startswith("The `Svc::Pump` component has the following ports:")
    )


def test_a_code_name_subject_defines_and_a_rule_or_a_table_cell_does_not() -> None:
    subject = definition_subject("What is ComStub?")
    assert defines_subject(subject, cand("`Svc::ComStub` is an example component."), 2)
    active = definition_subject("What is an active component?")
    assert defines_subject(active, cand("An active component has a thread and a queue."), 2)
    assert not defines_subject(active, cand("Active components must have an async port."), 2)
    assert not defines_subject(active, cand("Active Component: Yes; No"), 2)
    assert defines_subject(active, cand("Active component: has a thread and a queue"), 2)
    queued = definition_subject("What is a queued component?")
    assert not defines_subject(
        queued, cand("For queued and active components, the queue size is passed."), 2
    )


def test_a_definition_from_the_introduction_leads() -> None:
    texts = [
        "`Svc::Stub` is a basic adapter used alongside the other communication components.",
        "`Svc::Stub` is an example component implementing the communication adapter interface.",
    ]
    bundle = make_bundle(texts, "What is Stub?")
    sections = [("Svc::Stub", "4. Design"), ("Svc::Stub", "1. Introduction")]
    evidence = [
        e.model_copy(update={"source": SourceRef(document="Svc::Stub", heading_path=h)})
        for e, h in zip(bundle.selected_evidence, sections, strict=True)
    ]
    bundle = bundle.model_copy(update={"selected_evidence": evidence})
    assert ExtractiveProvider().answer(bundle, REFUSAL) == texts[1] + " [C1]"
    assert ExtractiveProvider(prefer_overview=False).answer(bundle, REFUSAL) == (texts[0] + " [C0]")


def test_how_does_x_work_keeps_the_sentence_that_says_how() -> None:
    texts = [
        "The Health component monitors the execution health of the software. It does so by "
        "pinging active tasks and checking for a response. It also has commands."
    ]
    question = "How does the Health component monitor the software?"
    bundle = make_bundle(texts, question)
    assert ExtractiveProvider().answer(bundle, REFUSAL) == (
        "The Health component monitors the execution health of the software. [C0] It does so "
        "by pinging active tasks and checking for a response. [C0]"
    )
    assert ExtractiveProvider(manner_follower=False).answer(bundle, REFUSAL) == (
        "The Health component monitors the execution health of the software. [C0]"
    )
    assert asks_manner(question)
    assert not asks_manner("How do I build it?") and not asks_manner("How many ports?")


def test_an_intro_on_the_next_line_brings_its_table() -> None:
    texts = [
        "The send port call will return a status of that send.\n"
        "These responses are an enumeration whose values are described in the following table:"
        "\n\n| Value | Description |\n|---|---|\n| SEND_OK | Send functioned normally. |\n"
        "| SEND_ERROR | Send produced an error. |"
    ]
    answer = ExtractiveProvider().answer(
        make_bundle(texts, "What statuses can the send port call return?"), REFUSAL
    )
    assert "SEND_OK: Send functioned normally. [C0]" in answer
    assert "SEND_ERROR: Send produced an error. [C0]" in answer


def test_a_loose_list_with_continuation_lines_gives_every_item() -> None:
    texts = [
        "Deframer supports two configurations for streaming data:\n\n"
        "1. **Poll:** This configuration works with a passive byte stream driver.\n"
        "In this configuration, `Deframer` polls the driver on its cycle.\n"
        "No buffer allocation occurs when polling.\n\n"
        "2. **Push:** This configuration works with an active byte stream driver.\n"
        "Deframing occurs on the thread of the driver."
    ]
    answer = ExtractiveProvider().answer(
        make_bundle(texts, "What configurations does the Deframer support for streaming data?"),
        REFUSAL,
    )
    assert "Poll: This configuration works with a passive byte stream driver. [C0]" in answer
    assert "Push: This configuration works with an active byte stream driver. [C0]" in answer
    assert "polls the driver" not in answer  # a continuation line, not an item


def test_the_following_diagram_shows_is_filler() -> None:
    texts = ["The following diagram shows what happens when a buffer is written to disk."]
    bundle = make_bundle(texts, "What happens when a buffer is written to disk?")
    assert ExtractiveProvider().answer(bundle, REFUSAL) == REFUSAL


def test_the_anaphora_rules_are_for_a_named_subject_only() -> None:
    # A question in definition form about a long description is not "What is X?": the
    # sentence after the one naming the place may hold the answer, "It ..." included.
    assert names_subject("definition", "What is ComStub?", 3)
    assert names_subject("definition", "What does the ActiveRateGroup component do?", 3)
    long_q = "What is the name of the river that flows through the old capital city?"
    assert not names_subject("definition", long_q, 3)
    texts = ["It is named the Vltava river and flows through the old capital city."]
    bundle = make_bundle(texts, long_q)
    assert ExtractiveProvider().answer(bundle, REFUSAL).startswith("It is named the Vltava")
    # ... while the same sentence loses the lead to one that names its subject for "What is X?"
    texts = [
        "In this case, the Vltava river flows through the old capital city.",
        "The Vltava river flows north through the old capital city into the Elbe.",
    ]
    bundle = make_bundle(texts, "What is the Vltava river?")
    assert ExtractiveProvider().answer(bundle, REFUSAL).startswith("The Vltava river flows")
    assert (
        ExtractiveProvider(max_subject_terms=0)
        .answer(bundle, REFUSAL)
        .startswith("In this case, the Vltava")
    )
