"""An item of a list whose intro negates ("It does not:") is quoted only under that intro.

Alone, "Sort the data products" answers "Does the prototype sort data products?" with the
opposite of what the document says (blind F´ set 7, m15). Each test has a control: the same
list under an intro that does not negate is quoted as before.
"""

from __future__ import annotations

from llm_helpers import check_answer, fast_policy, make_bundle

from citebound.llm import ExtractiveProvider

REFUSAL = fast_policy().refusal.model_text

DOC = (
    "`DpCatalog` is an active component that manages the downlink of data products.\n\n"
    "This release has an early prototype that will do the following:\n\n"
    "1. Reads the data product files from the specified directory.\n"
    "2. Puts them in an unsorted list.\n\n"
    "{intro}\n\n"
    "1. Sort the data products\n"
    "2. Mark them as complete\n\n"
    "Features will be added over time."
)
QUESTION = "Does the current DpCatalog prototype sort the data products?"


def _answer(intro: str) -> tuple[str, list[str]]:
    bundle = make_bundle([DOC.format(intro=intro)], QUESTION)
    answer = ExtractiveProvider().answer(bundle, REFUSAL)
    return answer, check_answer(answer, bundle, REFUSAL)


def test_an_item_under_a_negating_intro_comes_with_it() -> None:
    answer, problems = _answer("It does not:")
    assert problems == []
    assert "Sort the data products" in answer
    # The intro is quoted right before the item, so the answer says what the document says.
    assert answer.index("It does not:") < answer.index("Sort the data products")


def test_control_an_item_under_a_plain_intro_is_quoted_as_before() -> None:
    answer, problems = _answer("It also does:")
    assert problems == []
    assert "Sort the data products" in answer
    assert "It also does:" not in answer


def test_other_negating_intros() -> None:
    for intro in ("The following are not supported:", "Never do the following:"):
        answer, problems = _answer(intro)
        assert problems == [], intro
        assert "Sort the data products" in answer, intro
        assert answer.index(intro) < answer.index("Sort the data products"), intro


def test_a_heading_ends_the_negated_list() -> None:
    text = (
        "It does not:\n\n1. Mark them as complete\n\n## Requirements\n\n"
        "1. Sort the data products by priority before the downlink starts.\n"
    )
    bundle = make_bundle([text], "Does it sort the data products by priority before the downlink?")
    answer = ExtractiveProvider().answer(bundle, REFUSAL)
    assert "Sort the data products by priority" in answer
    assert "It does not:" not in answer


def test_intros_that_negate_in_other_words() -> None:
    # A typographic apostrophe, "none", "lacks", "removed", "no", "disabled", "missing",
    # "planned": each was missed, and "Sort the data products" was quoted alone.
    for intro in (
        "It doesn’t:",
        "None of the following is done yet:",
        "It lacks the following:",
        "These were removed:",
        "There is no support for:",
        "The following are disabled:",
        "Missing features:",
        "Planned for a later release:",
    ):
        answer, problems = _answer(intro)
        assert problems == [], intro
        assert "Sort the data products" in answer, intro
        assert answer.index(intro) < answer.index("Sort the data products"), intro
