"""A question naming an item by its code ("the HP-220 pump") is answered only by a sentence
about that item that says what is asked (text/codes.py, `[answerer] code_scope`). Found by
the review of #15 on the demo corpus: "Which country typically manufactures the HP-220 pump?"
was answered with the HP-220's vibration incident, and a GB7 question with the CX9's oil."""

from __future__ import annotations

from llm_helpers import make_bundle

from citebound.llm import ExtractiveProvider
from citebound.policy import load_policy
from citebound.text.codes import forms, scope

REFUSAL = load_policy("strict-v1").refusal.model_text
HP220 = "Nordpump manufactures the HP-220 pump in Sweden."
INCIDENT = "On 2024-03-14 the HP-220 pump showed high vibration after start."
CX9_OIL = "Use only CX9-OIL-46 synthetic oil in the compressor."


def test_codes_and_what_is_asked_of_them() -> None:
    s = scope("Which country typically manufactures the HP-220 pump?")
    assert s is not None and s.codes == ("hp220",) and s.asked == {"manufactur"}
    # "aarch64 machine": the noun after the code is the item's kind, not what is asked.
    arm = scope("Which pip version should I have on an aarch64 machine?")
    assert arm is not None and arm.asked == {"pip", "version"}
    # Ordinals, decades and measures start with their digit: no code.
    for question in (
        "What did the 18th century Huguenot group call themselves?",
        "What percentage of electricity was made by steam turbine in the 1990s?",
        "In a 4-cylinder compound engine, what degree were the pistons balanced at?",
    ):
        assert scope(question) is None, question
    # A code is found however it is written: "GB-7", "GB7-GK-02".
    assert "gb7" in forms("GB-7 Gearbox Oil Change") and "gb7" in forms("gasket GB7-GK-02")
    assert "gb7" not in forms("gasket GB70-GK-02")


def test_a_sentence_about_the_item_that_says_something_else_does_not_answer() -> None:
    provider = ExtractiveProvider()
    question = "Which country typically manufactures the HP-220 pump?"
    assert provider.answer(make_bundle([INCIDENT], question), REFUSAL) == REFUSAL
    # Control: a sentence about the HP-220 that says who manufactures it answers.
    assert provider.answer(make_bundle([HP220], question), REFUSAL) == f"{HP220} [C0]"
    # Control: the rule off, the incident answers as before.
    off = ExtractiveProvider(code_scope=False).answer(make_bundle([INCIDENT], question), REFUSAL)
    assert off.startswith("On 2024-03-14")


def test_another_items_sentence_does_not_answer() -> None:
    provider = ExtractiveProvider()
    question = "Which synthetic oil does the GB7 compressor use?"
    evidence = [CX9_OIL, "The GB7 compressor stands in hall 2."]
    assert provider.answer(make_bundle(evidence, question), REFUSAL) == REFUSAL
    off = ExtractiveProvider(code_scope=False).answer(make_bundle(evidence, question), REFUSAL)
    assert off == f"{CX9_OIL} [C0]"  # the rule off: the CX9's oil answered the GB7 question
    # Control: the same sentence answers for its own item.
    own = "Which synthetic oil does the CX9 compressor use?"
    assert provider.answer(make_bundle([CX9_OIL], own), REFUSAL) == f"{CX9_OIL} [C0]"


def test_a_question_asking_only_what_the_item_is_needs_the_item() -> None:
    provider = ExtractiveProvider()
    answer = provider.answer(make_bundle([HP220], "What is the HP-220 pump?"), REFUSAL)
    assert answer == f"{HP220} [C0]"
