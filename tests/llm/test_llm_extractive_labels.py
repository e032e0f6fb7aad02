"""An answer made only of labels ("Returns:", "Run some commands:") whose items cannot be quoted
states nothing: the answerer refuses instead of giving an answer the validator would fail as
EMPTY_ANSWER (found on F´ reference pages: 12 of 4,547 extractive answers, extractive-v9)."""

from __future__ import annotations

from llm_helpers import fast_policy, make_bundle

from citebound.llm import ExtractiveProvider
from citebound.testing.bundles import make_answer_bundle
from citebound.validate import validate_text

POLICY = fast_policy()
REFUSAL = POLICY.refusal.model_text

# An F´ reference entry (fprime-docs, integration test API): the value under "Returns:" is
# indented code, which is never quoted.
REFERENCE = (
    "#### get_latest_time()\n"
    "Finds the latest flight software time received by either history.\n\n"
    "Returns:\n\n"
    "    a flight software timestamp (TimeType)"
)


def test_a_label_without_its_items_is_refused() -> None:
    # (Not "get_latest_time(): Returns?": identifiers count as their words since #31, and
    # "Finds the latest ... time" then shares two of them.)
    question = "What about the history lookup: Returns?"
    assert ExtractiveProvider().answer(make_bundle([REFERENCE], question), REFUSAL) == REFUSAL


def test_a_label_with_a_statement_still_answers() -> None:
    question = "What does get_latest_time() find?"
    answer = ExtractiveProvider().answer(make_bundle([REFERENCE], question), REFUSAL)
    assert answer.startswith("Finds the latest flight software time")
    bundle = make_answer_bundle([REFERENCE], question=question, policy=POLICY)
    assert validate_text(bundle, answer, POLICY).validation_status.value == "PASSED"
