"""A question asking an attribute no document states, of an item the documents mention, is
refused; the same shapes asking what the documents do state are answered (llm/extractive/
asked.py, `[answerer] asked_scope`). Found on the demo corpus: "Who designed the cooling tower
fan?" was answered with "The fan is driven by a 30 kW motor ...", and on F´ "What is the
orbital period of the International Space Station?" with a table row naming the ISS."""

from __future__ import annotations

import pytest
from llm_helpers import make_bundle

from citebound.llm import ExtractiveProvider
from citebound.llm.extractive.asked import fills, related, scope
from citebound.policy import load_policy

REFUSAL = load_policy("strict-v1").refusal.model_text

# Small fixture documents: sentences about a fan, a panel, a pump and a helicopter that never
# say who designed them, their colour, their mass or when they were installed.
FAN = [
    "The fan is driven by a 30 kW motor through a GB-7 right-angle gearbox.",
    "On site it drives the VT-40 cooling tower fan of cell CT-1.",
]
PANEL = [
    "The ESD-3 emergency shutdown panel must be proof tested every 12 months.",
    "The emergency shutdown panel is powered from 24 V DC.",
]
BOLTS = [
    "The impeller bolts had been tightened to 30 Nm instead of the specified 45 Nm.",
    "Tighten the impeller bolts to 45 Nm in a cross pattern.",
]
STATION = ["ISS-RapidScat (International Space Station Rapid Scatterometer): Instrument; JPL"]
HELICOPTER = ["Mars Helicopter (Ingenuity): Airborne; JPL; Linux; Qualcomm's Snapdragon 801"]

ABSENT = [
    ("Who designed the cooling tower fan?", FAN),
    ("What colour is the emergency shutdown panel?", PANEL),
    ("Who tightened the impeller bolts to 30 Nm?", BOLTS),
    ("What is the orbital period of the International Space Station?", STATION),
    ("What is the mass of the Ingenuity helicopter?", HELICOPTER),
    ("Which country was the cooling tower fan originally built in?", FAN),
]

# The same shapes, answered by the fixture's sentence that states what is asked.
CONTROLS = [
    (
        "Who designed the cooling tower fan?",
        [*FAN, "The cooling tower fan was designed by Hanna Berg."],
        "Hanna Berg",
    ),
    (
        "What colour is the emergency shutdown panel?",
        [*PANEL, "The emergency shutdown panel is painted red."],
        "red",
    ),
    (
        "Who must sign the proof test permit?",
        ["The shift supervisor must sign the proof test permit."],
        "shift supervisor",
    ),
    (
        "Who approves a bypass of the emergency shutdown panel?",
        ["A bypass of the emergency shutdown panel needs approval by the area manager."],
        "area manager",
    ),
    (
        "When was the emergency shutdown panel installed?",
        [*PANEL, "The emergency shutdown panel was installed on 2019-04-02."],
        "2019-04-02",
    ),
    (
        "How much does the gearbox weigh?",
        ["The gearbox weighs 310 kg without oil.", "The gearbox is a right-angle gearbox."],
        "310 kg",
    ),
    (
        "Which processor does the Mars Helicopter Ingenuity use?",
        HELICOPTER,
        "Snapdragon 801",
    ),
]


@pytest.mark.parametrize(("question", "evidence"), ABSENT)
def test_an_attribute_no_sentence_states_is_refused(question: str, evidence: list[str]) -> None:
    provider = ExtractiveProvider()
    assert provider.answer(make_bundle(evidence, question), REFUSAL) == REFUSAL
    # The rule off, a sentence about the item answers: the rule is what refuses.
    off = ExtractiveProvider(asked_scope=False).answer(make_bundle(evidence, question), REFUSAL)
    assert off != REFUSAL


@pytest.mark.parametrize(("question", "evidence", "fact"), CONTROLS)
def test_the_same_shapes_are_answered_when_a_sentence_states_it(
    question: str, evidence: list[str], fact: str
) -> None:
    answer = ExtractiveProvider().answer(make_bundle(evidence, question), REFUSAL)
    assert answer != REFUSAL and fact in answer


def test_what_is_asked_of_the_item() -> None:
    designed = scope("Who designed the cooling tower fan?")
    assert designed is not None and designed.relation == {"design"}
    assert designed.kind == "person"
    period = scope("What is the orbital period of the International Space Station?")
    assert period is not None and period.relation == {"orbital", "period"}
    # "When was X installed?": the last word; "originally built in?": past hedge and particle.
    installed = scope("When was the VT-40 cooling tower fan installed?")
    assert installed is not None and installed.relation == {"install"}
    built = scope("Which country was the compressor originally built in?")
    assert built is not None and built.relation == {"built"} and built.kind == "place"
    # The relative clause's verb: "the name of the engineer who designed X".
    engineer = scope("What is the name of the engineer who designed the GB7 gearbox?")
    assert engineer is not None and engineer.relation == {"design"}
    # No known kind, or a kind with no relation to hold (a light verb): the rule stays out.
    assert scope("What does the ActiveRateGroup component do?") is None
    assert scope("Who used the church to unify themselves?") is None
    # A capitalised last word is the object, not the verb.
    assert scope("When did the European Anti-Fraud Office investigate John Dalli?") is None


def test_forms_of_a_relation_and_strict_fillers() -> None:
    assert related(frozenset({"approv"}), frozenset({"approval"}))
    assert related(frozenset({"weigh"}), frozenset({"weight"}))
    assert not related(frozenset({"cost"}), frozenset({"helicopter"}))
    # Codes, units, code spans and titles are nobody's name; model digits count nothing.
    question = "Who designed the fan?"
    assert not fills("person", "The fan drives the GB-7 gearbox at 30 Nm.", question)
    assert not fills("person", "It takes an `Fw::Buffer` port call.", question)
    assert not fills("place", "CX-9 Compressor Quick Reference", "Which country built it?")
    assert fills("person", "The fan was designed by Hanna Berg.", question)
    assert not fills("number", "It runs on a Snapdragon 801.", "How much did it cost?")
    assert fills("number", "It cost 85 million dollars.", "How much did it cost?")
    assert fills("date", "The Duchy began in 911.", "When was the Duchy founded?")
    assert fills("colour", "The panel is painted red.", "What colour is the panel?")


def test_a_name_asked_in_so_many_words_needs_the_name() -> None:
    question = "What is the name of the operator who stopped the cooling water pump?"
    role = ["The operator stopped the cooling water pump manually."]
    assert ExtractiveProvider().answer(make_bundle(role, question), REFUSAL) == REFUSAL
    off = ExtractiveProvider(asked_scope=False).answer(make_bundle(role, question), REFUSAL)
    assert off.startswith("The operator stopped")  # the rule off, the role answered
    named = ["Operator Lena Vogt stopped the cooling water pump manually."]
    answer = ExtractiveProvider().answer(make_bundle(named, question), REFUSAL)
    assert "Lena Vogt" in answer


def test_the_sentence_after_a_prose_lead_may_say_what_is_asked() -> None:
    question = "Who forced Ethelred to flee to Normandy?"
    texts = ["Ethelred fled to Normandy in 1013. He was forced from it by Sweyn Forkbeard."]
    answer = ExtractiveProvider().answer(make_bundle(texts, question), REFUSAL)
    assert "Sweyn Forkbeard" in answer
    # A table row stands alone: the row after it holding a date does not admit it.
    rows = ["| Mission | Type |\n|---|---|\n| ISS-RapidScat | Instrument; Sep. |\n| 21 | 2014 |"]
    launched = "What is the orbital period of the ISS-RapidScat instrument?"
    assert ExtractiveProvider().answer(make_bundle(rows, launched), REFUSAL) == REFUSAL
    off = ExtractiveProvider(asked_scope=False).answer(make_bundle(rows, launched), REFUSAL)
    assert off.startswith("ISS-RapidScat")  # the rule off, the row naming the item answered
