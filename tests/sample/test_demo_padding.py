"""The demo's padding check: an answer sentence must help answer the question."""

from __future__ import annotations

from citebound.cli.demo import padded_sentences


def test_a_loosely_related_sentence_is_padding() -> None:
    question = "What is the vibration trip limit for the VT-40 cooling tower fan?"
    tight = "The vibration trip limit for the VT-40 cooling tower fan is 7.1 mm/s. [C0]"
    assert padded_sentences(question, tight) == []
    padded = tight + " The work order template now has a mandatory witness signature. [C4]"
    assert padded_sentences(question, padded) == [
        "The work order template now has a mandatory witness signature. [C4]"
    ]


def test_steps_after_a_cited_intro_are_not_padding() -> None:
    question = "How do I replace the pump seal?"
    answer = (
        "To replace the pump seal: [C1]\nDrain the casing. [C1]\nFit the new part. [C1]\n"
        "Unrelated remark here. [C2]"
    )
    assert padded_sentences(question, answer) == ["Unrelated remark here. [C2]"]
