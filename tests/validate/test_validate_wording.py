"""What the support check counts as invented (validate/wording.py, r5-v4; claim words r5-v5): function words and
derivational variants a reply adds are phrasing; claim words, invented content words, flips
and words the evidence keeps apart are not."""

from __future__ import annotations

import pytest

from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.text.identifiers import present_in
from citebound.validate import validate_text
from citebound.validate.analysis import support_params
from citebound.validate.evidence import FUNCTION_WORDS, derived_base, index_evidence, lemma
from citebound.validate.support import support_features
from citebound.validate.wording import scattered

STRICT = load_policy("strict-v1")
PARAMS = support_params(STRICT)
TORQUE_Q = "What torque should the HP-220 impeller bolts be tightened to?"
TORQUE = "The HP-220 impeller bolts are tightened to 45 Nm in a cross pattern."


def test_function_words_are_phrasing_claim_words_are_not() -> None:
    assert {"of", "the", "has", "was", "its", "which", "because"} <= FUNCTION_WORDS
    assert not {"both", "only", "all", "than", "not", "before", "after"} & FUNCTION_WORDS
    f = support_features(
        "The impeller bolts of the HP-220 must be tightened to 45 Nm.", TORQUE, PARAMS, TORQUE_Q
    )
    assert f.absent_tokens == 0
    g = support_features(
        "Only the impeller bolts of the HP-220 are tightened to 45 Nm.", TORQUE, PARAMS, TORQUE_Q
    )
    assert g.absent_tokens == 1  # "only" changes the claim


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        ("The impeller bolts of the HP-220 must be tightened to 45 Nm [C0].", "PASSED"),
        ("The impeller bolts of the HP-220 must be tightened to 54 Nm [C0].", "FAILED"),
        ("The casing bolts of the HP-220 must be tightened to 45 Nm [C0].", "FAILED"),
        ("The impeller bolts of the HP-220 must never be tightened to 45 Nm [C0].", "FAILED"),
        ("The impeller bolts of the HP-220 are oiled and tightened to 45 Nm [C0].", "FAILED"),
    ],
)
def test_the_issue_example_passes_and_its_wrong_variants_fail(answer: str, status: str) -> None:
    bundle = make_answer_bundle([TORQUE], question=TORQUE_Q)
    assert validate_text(bundle, answer, STRICT).validation_status == status, answer


def test_inflection_and_derivation_variants_are_the_evidence_words() -> None:
    assert lemma("fitted") == lemma("fit") and lemma("used") == lemma("use")
    assert derived_base("afterwards") == "after" and derived_base("replacement") == "replace"
    assert derived_base("pump") == ""
    evidence = "Measure the angle again after tightening. Replace the seal if it leaks."
    f = support_features("Afterwards, measure the angle again.", evidence, PARAMS, "angle?")
    assert f.absent_tokens == 0


def test_source_line_words_count_by_prefix() -> None:
    evidence = "Slide the impeller onto the shaft key."
    question = "What is done when the impeller is reassembled?"
    sentence = "The impeller slides onto the shaft key when reassembling."
    bare = support_features(sentence, evidence, PARAMS, question)
    shown = support_features(sentence, evidence, PARAMS, question, context="Pump > Reassembly")
    assert bare.absent_tokens == 1 and shown.absent_tokens == 0


FILMS = (
    "Splash is a 1984 American fantasy romantic comedy film directed by Ron Howard. "
    "Son of Flubber is a 1963 comedy film directed by Robert Stevenson."
)


def test_scattered_counts_words_the_evidence_keeps_in_other_sentences() -> None:
    index = index_evidence(FILMS, PARAMS.prefix)
    assert scattered("Son of Flubber was directed by Ron Howard", index, 6, frozenset()) >= 2
    assert scattered("Splash was directed by Ron Howard", index, 6, frozenset()) == 0
    # Two clauses, each stated by one evidence sentence: nothing is scattered.
    merged = "Splash was directed by Ron Howard, and Son of Flubber by Robert Stevenson"
    assert scattered(merged, index, 6, frozenset()) == 0


def test_a_reply_relating_the_questions_words_itself_fails() -> None:
    question = "In between Splash and Son of Flubber, which one was directed by Ron Howard?"
    bundle = make_answer_bundle([FILMS], question=question)
    wrong = validate_text(bundle, "Son of Flubber was directed by Ron Howard [C0].", STRICT)
    assert wrong.validation_status == "FAILED"
    assert "other sentences" in wrong.grounding_metrics.unsupported_sentences[0].reason
    right = validate_text(bundle, "Splash was directed by Ron Howard [C0].", STRICT)
    assert right.validation_status == "PASSED", right.message


def test_initialisms_the_evidence_defines_are_not_new_identifiers() -> None:
    assert present_in("NYC", "He moved to New York City (NYC) in 2010.")
    assert present_in("FBI", "the Federal Bureau of Investigation (FBI) said")
    assert not present_in("NYC", "He moved to New Jersey (NJ) in 2010.")
    # r5-v5: matching initials alone do not make the same entity (the review's reproducer).
    assert not present_in("NSF", "The survey was funded by the National Security Forces.")
    assert not present_in("TPS", "The Pump Station was shut.")  # sentence-initial "The"
    assert not present_in("PM", "Peter Miller said")  # two letters: as written only


SEAL = "A small visible leakage at the seal is normal during operation."
WASHER = "Do not use a pressure washer on the cooler fins, because the fins bend easily."
PORTS = "It has a single port. It has no data types, commands, events, nor algorithms."


@pytest.mark.parametrize(
    ("sentence", "evidence", "question", "flipped"),
    [
        ("No, the seal leakage is normal during operation.", SEAL, "Is leakage normal?", False),
        ("No visible leakage at the seal is normal during operation.", SEAL, "", True),
        ("A pressure washer can be used on the cooler fins.", WASHER, "", True),
        ("The component has a single port and no commands or events.", PORTS, "", False),
        ("The component has no single port.", PORTS, "", True),
    ],
)
def test_negations(sentence: str, evidence: str, question: str, flipped: bool) -> None:
    f = support_features(sentence, evidence, PARAMS, question)
    assert bool(f.polarity_flip) is flipped, f.polarity_flip


def test_an_antonym_the_question_uses_is_not_a_flip() -> None:
    evidence = "The impeller bolts had been tightened to 30 Nm instead of 45 Nm."
    sentence = "The impeller loosening came from bolts tightened to 30 Nm instead of 45 Nm."
    asked = support_features(sentence, evidence, PARAMS, "Why did the impeller loosening happen?")
    assert asked.polarity_flip == ""
    assert support_features(sentence, evidence, PARAMS, "").polarity_flip.startswith("antonym")


def test_a_number_moved_into_another_chunks_slot_fails() -> None:
    oil = "Change the compressor oil every 4000 operating hours."
    cooler = "Clean the oil cooler core every 1000 operating hours."
    bundle = make_answer_bundle([oil, cooler], question="What are the CX-9 service intervals?")
    right = (
        "The compressor oil is changed every 4000 operating hours [C0], and the oil cooler "
        "core is cleaned every 1000 operating hours [C1]."
    )
    assert validate_text(bundle, right, STRICT).validation_status == "PASSED"
    wrong = right.replace("every 1000", "every 4000")
    r = validate_text(bundle, wrong, STRICT)
    assert r.validation_status == "FAILED"
    assert "in place of another" in r.grounding_metrics.unsupported_sentences[0].reason
