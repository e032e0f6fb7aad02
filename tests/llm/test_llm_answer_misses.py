"""Where a gold miss comes from (`citebound.eval.answer_misses.classify`, `tune_answerer misses`).

Each case builds evidence where the answer is known and puts the gold somewhere else: the
label must name the first place it is lost, in pipeline order.
"""

from __future__ import annotations

import pytest
from llm_helpers import make_bundle

from citebound.eval.answer_misses import NOT_IN_EVIDENCE, NOT_QUOTABLE, TOO_FEW_TERMS, classify
from citebound.llm import ExtractiveProvider
from citebound.policy import load_policy

POLICY = load_policy("strict-v1")
REFUSAL = POLICY.refusal.model_text
QUESTION = "Which fleet did Richard lead to Acre in 1191?"
EVIDENCE = [
    # The lead (most question terms), then a sentence that shares none of them.
    "In April 1191 Richard left Messina with a large fleet to reach Acre. "
    "But a storm dispersed the ships near Crete.",
    # Shares question terms, fewer than the lead: qualifies, ranks below it.
    "Richard's fleet was the largest crusader fleet of its time.",
    "The harbour of Limassol was small.",
]


@pytest.fixture
def provider() -> ExtractiveProvider:
    return ExtractiveProvider(POLICY.answerer)


def _classify(provider: ExtractiveProvider, gold: str, texts: list[str] = EVIDENCE) -> str | None:
    return classify(provider, make_bundle(texts, QUESTION), [gold], REFUSAL)


def test_an_answer_holding_the_gold_is_no_miss(provider: ExtractiveProvider) -> None:
    assert _classify(provider, "Messina") is None


def test_gold_absent_from_every_evidence_text(provider: ExtractiveProvider) -> None:
    assert _classify(provider, "Cyprus") == NOT_IN_EVIDENCE


def test_gold_in_the_neighbour_sharing_no_question_term(provider: ExtractiveProvider) -> None:
    assert _classify(provider, "a storm") == f"{TOO_FEW_TERMS}/neighbour-of-lead"


def test_gold_in_a_qualifying_sentence_of_other_evidence(provider: ExtractiveProvider) -> None:
    label = _classify(provider, "largest crusader fleet")
    assert label is not None and label.startswith("ranked-")
    assert label.endswith("-other-evidence")


def test_gold_in_no_quotable_sentence(provider: ExtractiveProvider) -> None:
    # A heading is never quoted: the evidence holds the gold, no candidate does.
    texts = [EVIDENCE[0], "# Storm season\nThe harbour of Limassol was small."]
    assert _classify(provider, "Storm season", texts) == NOT_QUOTABLE


def test_a_refusal_is_no_miss(provider: ExtractiveProvider) -> None:
    bundle = make_bundle(["The warranty covers two years of use."], QUESTION)
    assert classify(provider, bundle, ["Acre"], REFUSAL) is None
