"""A comparison whose evidence states neither compared name in full is refused; one whose
evidence states a side is answered (llm/extractive/compared.py, `[answerer] compared_stated`).
Found on the HaluEval QA tune set: "Which tennis player won more Grand Slam titles, Henri
Leconte or Jonathan Stark?" was answered with another player's Grand Slam titles."""

from __future__ import annotations

import pytest
from llm_helpers import make_bundle

from citebound.llm import ExtractiveProvider
from citebound.llm.extractive.compared import compared_stated, comparisons
from citebound.policy import load_policy

REFUSAL = load_policy("strict-v1").refusal.model_text

TENNIS = [
    "Barbara Jordan is a former professional tennis player from the United States.",
    "During her career, she won four Grand Slam titles, one of them in women's doubles.",
]
STARK = [
    "Jonathan Stark is a former professional tennis player from the United States.",
    "During his career, he won two Grand Slam titles in doubles.",
]
SHEPHERD = ["The Shiloh Shepherd is a dog breed that was developed in the 1990s."]


def test_a_comparison_answered_about_something_else_is_refused() -> None:
    question = "Which tennis player won more Grand Slam titles, Henri Leconte or Jonathan Stark?"
    bundle = make_bundle(TENNIS, question)
    assert ExtractiveProvider().answer(bundle, REFUSAL) == REFUSAL
    # The names rule alone lets it through: "Grand Slam" is stated.
    assert ExtractiveProvider(compared_stated=False).answer(bundle, REFUSAL) != REFUSAL


def test_a_comparison_whose_side_is_stated_is_answered() -> None:
    question = "Which tennis player won more Grand Slam titles, Henri Leconte or Jonathan Stark?"
    answer = ExtractiveProvider().answer(make_bundle(STARK, question), REFUSAL)
    assert "two Grand Slam titles" in answer


def test_every_word_of_a_name_is_needed() -> None:
    # "King Shepherd" is not "The Shiloh Shepherd": a shared head noun names another breed.
    question = "Which breed was developed in the 1990s, Chippiparai or King Shepherd?"
    bundle = make_bundle(SHEPHERD, question)
    assert ExtractiveProvider().answer(bundle, REFUSAL) == REFUSAL
    stated = make_bundle(
        SHEPHERD, "Which breed was developed in the 1990s, Akita or Shiloh Shepherd?"
    )
    assert ExtractiveProvider().answer(stated, REFUSAL) != REFUSAL


def test_both_sides_of_a_yes_no_question() -> None:
    texts = ["Chelone is a genus of perennial plants native to eastern North America."]
    stated = "Are Camassia and Chelone both native to North America?"
    assert compared_stated(make_bundle(texts, stated), stated, 5)
    neither = "Are Camassia and Hakea both native to North America?"
    assert not compared_stated(make_bundle(texts, neither), neither, 5)


@pytest.mark.parametrize(
    ("question", "pairs"),
    [
        ("Which magazine is published in the United Kingdom, Bella or Al Jamila?", 1),
        ('Which movie came out first, "The Book of Masters" or "A Tiger Walks"?', 1),
        ("Did the composer Charles Gounod or Mikhail Glinka live past the year 1875?", 1),
        # "and" compares only in a yes / no question; a lone first word is no name.
        ("Who founded Bella and Al Jamila?", 0),
        ("Which is older or newer?", 0),
        ("What is the difference between a Pump and a Valve?", 0),
    ],
)
def test_what_a_comparison_is(question: str, pairs: int) -> None:
    assert len(comparisons(question)) == pairs


def test_possessives_and_accents_are_the_same_name() -> None:
    texts = ["Sébastien Lareau and Hillary Clinton met in Montreal in 1999."]
    for question in (
        "Who is older, Sebastien Lareau or Daniel Nestor?",
        "Was Hillary Clinton's or Tipper Gore's husband older?",
    ):
        assert compared_stated(make_bundle(texts, question), question, 5)
