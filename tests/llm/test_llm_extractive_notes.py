"""Editorial notes glued to the evidence ("1978.[citation needed] On ...") are markup.

Before they were cut out, such a note hid the sentence boundary and its brackets made both
sentences look like citations, so neither could be quoted (SQuAD tune: 4 of 68 gold misses).
"""

from __future__ import annotations

import pytest
from llm_helpers import check_answer, make_bundle

from citebound.llm import ExtractiveProvider
from citebound.llm.extractive.candidates import without_editorial_notes
from citebound.policy import load_policy
from citebound.testing.bundles import make_llm_result
from citebound.validate import validate_answer

POLICY = load_policy("strict-v1")
REFUSAL = POLICY.refusal.model_text
EVIDENCE = (
    "Development of the Strategic Petroleum Reserve began in 1975, and in 1977 the "
    "cabinet-level Department of Energy was created, followed by the National Energy Act of "
    "1978.[citation needed] On November 28, 1995, Bill Clinton signed the National Highway "
    "Designation Act, ending the federal 55 mph (89 km/h) speed limit."
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Act of 1978.[citation needed] On May 2", "Act of 1978. On May 2"),
        ("settled in 1685.[12] The edict", "settled in 1685. The edict"),
        ("(currently Mogherini).[citation needed]", "(currently Mogherini)."),
        ("the rate fell sharply.[vague] Then", "the rate fell sharply. Then"),
        ("the reform[when?] began", "the reform began"),
        ("He said.[note 3] No.", "He said. No."),
        ("is [$2.2 billion] a year", "is [$2.2 billion] a year"),  # a quoted insertion: text
        ("read `buf[0]` first", "read `buf[0]` first"),  # code: no stop before the bracket
        ("Cite it as [C0] here.", "Cite it as [C0] here."),
        ("See [1] for details", "See [1] for details"),  # not glued to a stop
        ("1685.[12][13] The edict", "1685. The edict"),  # a run of reference numbers
        ("sharply.[dubious – discuss] Then", "sharply. Then"),
        # Code and other bracketed text is kept (the review's cases: cutting it made a quote
        # that still passed validation but no longer said what the evidence says).
        ("call os.path.splitext(name)[0] on it", "call os.path.splitext(name)[0] on it"),
        ("os.path.splitext(name)[1].", "os.path.splitext(name)[1]."),
        ("(see f(x)[0])", "(see f(x)[0])"),
        ("set cfg[update_rate] here", "set cfg[update_rate] here"),
        ("opts[where_clause] is read", "opts[where_clause] is read"),
        ("from table[whole] rows", "from table[whole] rows"),
        ("cfg[who_can_edit] = 1", "cfg[who_can_edit] = 1"),
        ("x.[0]y", "x.[0]y"),  # not followed by a space, the end or a stop
        ("a[when]b", "a[when]b"),
        ("in 2020.[2020] Then", "in 2020.[2020] Then"),  # four digits: a year, not a note
    ],
)
def test_only_glued_notes_and_reference_marks_are_removed(text: str, expected: str) -> None:
    assert without_editorial_notes(text) == expected


def test_a_sentence_after_a_glued_note_is_quoted_and_passes_the_validator() -> None:
    bundle = make_bundle([EVIDENCE], "Who signed the National Highway Designation Act?")
    text = ExtractiveProvider(POLICY.answerer).answer(bundle, REFUSAL)
    assert text.startswith("On November 28, 1995, Bill Clinton signed")
    assert "[citation needed]" not in text
    assert check_answer(text, bundle, REFUSAL) == []
    verdict = validate_answer(bundle, make_llm_result(bundle, text), POLICY)
    assert verdict.validation_status.value == "PASSED"


def test_the_sentence_before_the_note_is_quoted_without_it() -> None:
    bundle = make_bundle([EVIDENCE], "When was the cabinet-level Department of Energy created?")
    text = ExtractiveProvider(POLICY.answerer).answer(bundle, REFUSAL)
    assert "in 1977 the cabinet-level Department of Energy was created" in text
    assert "[citation needed]" not in text


def test_an_index_in_code_is_never_cut_from_a_quote() -> None:
    # Before the fix "[0]" was cut after ")" and the published quote said "call
    # os.path.splitext(name) on the name" (wrong, and it passed validation). Kept, "[0]" reads
    # as a bracket the validator would reject, so that sentence is not quoted at all.
    evidence = (
        "To get the file stem, call os.path.splitext(name)[0] on the name. The extension is "
        "returned by os.path.splitext(name)[1] instead."
    )
    bundle = make_bundle([evidence], "How do I get the file stem?")
    text = ExtractiveProvider(POLICY.answerer).answer(bundle, REFUSAL)
    assert "splitext(name) on" not in text
