"""The question-aware and word-level signals of the support check (issue #14, second pass).

Each test pins what one signal measures on a small hand-made case, then what the shipped rule
decides: a reply that restates the question must take every word it adds from the evidence,
a summary sentence that does not restate it keeps the paraphrase tolerance.
"""

from __future__ import annotations

import pytest

from citebound.contracts.enums import ReasonCode
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.text.identifiers import present_in
from citebound.validate import validate_text
from citebound.validate.analysis import support_params
from citebound.validate.support import SupportFeatures, support_features

STRICT = load_policy("strict-v1")
PARAMS = support_params(STRICT)

MAGAZINES = (
    "Arthur's Magazine (1844-1846) was an American literary periodical published in "
    "Philadelphia in the 19th century. First for Women is a woman's magazine published by "
    "Bauer Media Group in the USA."
)
MAGAZINE_QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"
DIRECTORS = (
    "Clarence Leon Brown was an American film director. Peter Glenville was an English film "
    "and stage actor and director."
)
DIRECTORS_QUESTION = "Are Clarence Brown and Peter Glenville of the same nationality?"


def _features(sentence: str, evidence: str, question: str = "") -> SupportFeatures:
    return support_features(sentence, evidence, PARAMS, question)


def test_missing_tokens_count_function_words_absent_from_evidence_and_question() -> None:
    f = _features("Yes, both were American directors.", DIRECTORS, DIRECTORS_QUESTION)
    # "Yes," answers the question; "both" is in neither text and changes the claim; "were" is
    # a function word (how a reply is phrased, evidence.FUNCTION_WORDS), and "directors" is in
    # the evidence (a content word counts by its lemma, "director").
    assert f.missing_tokens == 1
    assert f.absent_tokens == 1
    assert f.coverage == 1.0  # every content lemma is there: only the words show the claim
    asked = _features("Brown and Glenville were of the same nationality.", DIRECTORS, "")
    in_question = _features(
        "Brown and Glenville were of the same nationality.", DIRECTORS, DIRECTORS_QUESTION
    )
    assert asked.missing_tokens > in_question.missing_tokens  # question words are not new


def test_echo_is_the_share_of_content_lemmas_the_question_has() -> None:
    restating = _features("First for Women was started first.", MAGAZINES, MAGAZINE_QUESTION)
    assert restating.echo == 1.0
    assert restating.absent_tokens == 1  # "started": the question's word, not the evidence's
    assert restating.missing_tokens == 0
    summary = _features("Bauer Media Group publishes First for Women.", MAGAZINES, "")
    assert summary.echo == 0.0


def test_a_reply_restating_the_question_with_words_the_evidence_lacks_fails() -> None:
    bundle = make_answer_bundle([MAGAZINES], question=MAGAZINE_QUESTION)
    wrong = validate_text(bundle, "First for Women was started first [C0].", STRICT)
    assert wrong.validation_status == "FAILED"
    assert ReasonCode.LOW_SUPPORT.value in wrong.reason_codes
    [u] = wrong.grounding_metrics.unsupported_sentences
    assert "restates the question" in u.reason
    right = validate_text(bundle, "Arthur's Magazine [C0].", STRICT)
    assert right.validation_status == "PASSED", right.message


def test_a_restated_question_the_evidence_does_not_answer_fails() -> None:
    bundle = make_answer_bundle([DIRECTORS], question=DIRECTORS_QUESTION)
    text = "Clarence Brown and Peter Glenville were of the same nationality [C0]."
    r = validate_text(bundle, text, STRICT)
    assert r.validation_status == "FAILED", r.message
    no = validate_text(
        bundle, "No [C0]. Peter Glenville was an English film director [C0].", STRICT
    )
    assert no.validation_status == "PASSED", no.message
    # The same sentence without the question is not a restatement: `echo` is 0, and its
    # absent words ("same", "nationality") weigh only as missing words do; "were", "of" and
    # "the" are function words and never count.
    alone = support_features(text.replace(" [C0]", ""), DIRECTORS, PARAMS, "")
    assert alone.echo == 0.0 and alone.absent_tokens == 2  # same, nationality


def test_a_summary_sentence_keeps_the_paraphrase_tolerance() -> None:
    """No question words: a few connecting words of a summary are not an invention."""
    evidence = (
        "The plant closed in March, officials said. Investigators found a cracked weld in the "
        "main boiler. Repairs are expected to take six weeks."
    )
    bundle = make_answer_bundle([evidence], question="Summarize the report.")
    text = "Officials say the plant shut in March after investigators found a cracked weld [C0]."
    r = validate_text(bundle, text, STRICT)
    assert r.validation_status == "PASSED", r.message


@pytest.mark.parametrize(
    ("identifier", "text", "found"),
    [
        ("5", "Five women were held.", True),
        ("5", "Fifty-five women were held.", False),
        ("3rd", "the third film", True),
        ("22-year-old", "Cobain, now 22, produced it.", True),
        ("22-year-old", "Cobain, now 23, produced it.", False),
        ("magnitude-7.8", "a 7.8 magnitude quake", True),
        ("XJ-220", "the XJ and the 220", False),  # a code stays one token
        ("2019-03-01", "in 2019, on 03 and 01", False),  # so does a date
        ("1500-note", "a 1,500-note collection", True),
    ],
)
def test_spelled_numbers_and_number_word_compounds(identifier: str, text: str, found: bool) -> None:
    assert present_in(identifier, text) is found


@pytest.mark.parametrize(
    ("sentence", "evidence", "missing"),
    [
        ("Gunmen attacked a Kenyan college.", "Gunmen attacked a college in Kenya.", ()),
        ("Some Indians questioned the police.", "Some in India questioned the police.", ()),
        ("The final seven episodes air in April.", "The final 7 episodes air in April.", ()),
        # A short name is not a stem ("Ann" + "an" is not "Annan"), nor is a name the start of
        # another ("Mars" in "Marshall").
        ("The award went to Ann.", "The award went to Annan.", ("Ann",)),
        ("The probe reached Mars.", "The probe reached Marshall.", ("Mars",)),
        (
            "The final eight episodes air in April.",
            "The final 7 episodes air in April.",
            ("eight",),
        ),
    ],
)
def test_a_name_matches_its_demonym_plural_or_digits_only(
    sentence: str, evidence: str, missing: tuple[str, ...]
) -> None:
    assert _features(sentence, evidence).missing_names == missing
