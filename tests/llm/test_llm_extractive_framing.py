"""Issue #15 part 3 refusal rules: words that frame a question ("In what country", "typically",
"kicked ... out") count when a sentence holds them but are never required, and a name written
with two neighbouring letters swapped ("Gutneberg", 5+ letters, no digit) is stated by the
evidence that spells it right.
Each rule with its control: the words that carry the question are still required."""

from __future__ import annotations

from llm_helpers import make_bundle

from citebound.llm import ExtractiveProvider
from citebound.llm.extractive.names import stated
from citebound.policy import load_policy

MIN_SWAP = load_policy("strict-v1").answerer.transposed_min_letters
REFUSAL = load_policy("strict-v1").refusal.model_text
NORMANDY = ["Normandy lies in the north of France, on the English Channel."]


def test_the_kind_of_answer_asked_for_is_not_required() -> None:
    provider = ExtractiveProvider()
    # "country" says what kind of answer is wanted; the evidence names the place, not the word:
    # the question needs one shared word, as "Where is Normandy located?" does.
    question = "In what country is Normandy located?"
    assert provider.answer(make_bundle(NORMANDY, question), REFUSAL) != REFUSAL
    # Control: a question with more words of its own still needs two of them.
    other = "In what country was the abbey of Normandy founded?"
    assert provider.answer(make_bundle(NORMANDY, other), REFUSAL) == REFUSAL
    # Control: a framing word alone never answers ("country" shared, nothing else; no name in
    # the question, so the names rule does not decide).
    elsewhere = ["Each country sends one minister to the council."]
    unnamed = "In what country is the abbey located?"
    assert provider.answer(make_bundle(elsewhere, unnamed), REFUSAL) == REFUSAL


def test_a_framing_word_the_sentence_holds_still_counts() -> None:
    provider = ExtractiveProvider()
    texts = [
        "Many-one reductions are the most frequently employed type of reduction.",
        "Reductions can be computed in polynomial time.",
    ]
    question = "What is the most frequently employed type of reduction?"
    answer = provider.answer(make_bundle(texts, question), REFUSAL)
    assert answer.startswith("Many-one reductions")


def test_a_verb_particle_is_not_required() -> None:
    provider = ExtractiveProvider()
    texts = ["Ethelred fled to Normandy when he was forced from his kingdom by Sweyn Forkbeard."]
    assert provider.answer(make_bundle(texts, "Who kicked Ethelred out?"), REFUSAL) != REFUSAL
    # Control: the particle alone never answers ("out" shared, the question's words not).
    unrelated = ["The lights went out at noon."]
    assert provider.answer(make_bundle(unrelated, "Who kicked the king out?"), REFUSAL) == REFUSAL


def test_a_name_with_two_letters_swapped_is_stated() -> None:
    texts = ["Johannes Gutenberg founded the guild of printers in 1440 after the flood."]
    question = "When did Gutneberg found the guild of printers?"
    bundle = make_bundle(texts, question)
    assert stated(bundle, question, MIN_SWAP)
    assert ExtractiveProvider().answer(bundle, REFUSAL) != REFUSAL
    # Controls: another acronym is not a typo of it, nor is a three-letter swap ("TEU"/"TUE").
    assert not stated(bundle, "Which TEUF article limits trade?", MIN_SWAP)
    assert not stated(
        make_bundle(["The TEU applies."], "What does the TUE say?"),
        "What does the TUE say?",
        MIN_SWAP,
    )


def test_a_framing_word_is_waived_only_for_a_sentence_holding_what_it_asks_for() -> None:
    # Review of #15: with the framing words waived for every sentence, one shared content word
    # answered ("Inspect the pump seals ..." for which country makes the pump). A sentence that
    # lacks the kind of answer asked for needs as many matches as before framing was known.
    provider = ExtractiveProvider()
    cases = [
        ("Which country typically manufactures the pump?", "Inspect the pump seals every week."),
        ("In which year was the reactor commonly named?", "The reactor was shut down for repair."),
        ("How long is the valve typically open?", "The valve must be closed before the start."),
    ]
    for question, text in cases:
        assert provider.answer(make_bundle([text], question), REFUSAL) == REFUSAL, question
    # Controls: the sentence holds the place / duration asked for: answered.
    country = "In what country is Normandy located?"
    assert provider.answer(make_bundle(NORMANDY, country), REFUSAL).startswith("Normandy lies")
    held = "The valve stays open for 30 seconds."
    answer = provider.answer(make_bundle([held], "How long is the valve typically open?"), REFUSAL)
    assert answer == f"{held} [C0]"


def test_a_swapped_code_or_short_name_is_another_thing() -> None:
    """A swap inside a part number or a 4-letter name names something else (review of #15):
    these were stated with the former 4-letter, digits-allowed rule."""
    cases = [
        (
            "What is the supply voltage range of the CD4071?",
            "The CD4017 is a decade counter; supply voltage range 3 V to 15 V.",
        ),
        ("What year was the ATmega238 released?", "The ATmega328 was released in 2009."),
        ("When did Saab build its first car?", "Saba is an island; its first car arrived in 1947."),
        (
            "Which TEFU article states that no quantitative restrictions can be placed on trade?",
            "Article 30 TFEU prohibits quantitative restrictions on trade between states.",
        ),
    ]
    for question, text in cases:
        bundle = make_bundle([text], question)
        assert not stated(bundle, question, MIN_SWAP), question
        assert ExtractiveProvider().answer(bundle, REFUSAL) == REFUSAL, question
    # Control: the same code written the same way is stated.
    same = make_bundle(["The CD4071 is a quad OR gate."], "What is the CD4071?")
    assert stated(same, "What is the CD4071?", MIN_SWAP)
