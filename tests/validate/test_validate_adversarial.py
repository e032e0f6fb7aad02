"""A table of adversarial answers, each with the exact reason code it must fail with, and a
table of tricky answers that must pass (so the validator cannot pass the first table by
rejecting everything)."""

from __future__ import annotations

import pytest
from validate_samples import VALID

from citebound.contracts.assembly import AnswerBundle
from citebound.contracts.enums import ReasonCode
from citebound.policy import Policy
from citebound.validate import validate_text

R = ReasonCode
REFUSAL = "NO_EVIDENCE: The provided evidence does not contain sufficient information to answer this question."
T = "Torque the M8 cylinder head bolts to 25 Nm"

FAILING: list[tuple[str, str, ReasonCode]] = [
    # invented anchors
    ("invented_appended", VALID + " [C99]", R.INVALID_CITATION_REFERENCE),
    ("invented_next_number", f"{T} [C4].", R.INVALID_CITATION_REFERENCE),
    ("invented_leading_zero", f"{T} [C00].", R.INVALID_CITATION_REFERENCE),
    (
        "invented_only_cite_with_new_number",
        "The pump runs at 3000 rpm [C99].",
        R.INVALID_CITATION_REFERENCE,
    ),
    ("invented_beats_uncited", f"{T} [C7]. Coolant is blue.", R.INVALID_CITATION_REFERENCE),
    # malformed markers
    ("lowercase", f"{T} [c0].", R.MALFORMED_CITATION),
    ("parentheses", f"{T} (C0).", R.MALFORMED_CITATION),
    ("negative", f"{T} [C-1].", R.MALFORMED_CITATION),
    ("inner_spaces", f"{T} [ C0 ].", R.MALFORMED_CITATION),
    ("bare_label", f"{T} C0.", R.MALFORMED_CITATION),
    ("bare_lowercase_label", f"{T}, see c0.", R.MALFORMED_CITATION),
    ("list_in_one_bracket", f"{T} [C0,C1].", R.MALFORMED_CITATION),
    ("list_with_space", f"{T} [C0, C1].", R.MALFORMED_CITATION),
    ("range", f"{T} [C0-C1].", R.MALFORMED_CITATION),
    ("braces", f"{T} {{C0}}.", R.MALFORMED_CITATION),
    ("space_in_label", f"{T} [C 0].", R.MALFORMED_CITATION),
    ("other_style_s", f"{T} [S1].", R.MALFORMED_CITATION),
    ("other_style_numeric", f"{T} [1].", R.MALFORMED_CITATION),
    ("other_style_superscript", f"{T} [¹].", R.MALFORMED_CITATION),
    ("fullwidth_brackets", f"{T} 【C0】.", R.MALFORMED_CITATION),
    ("hash_label", f"{T} [C#0].", R.MALFORMED_CITATION),
    ("malformed_beats_invalid", f"{T} [c0] [C9].", R.MALFORMED_CITATION),
    # uncited factual sentences
    ("uncited_tail", VALID + " The pump is painted red.", R.UNCITED_FACTUAL_STATEMENT),
    ("uncited_head", f"{T}. Replace the hydraulic filter [C1].", R.UNCITED_FACTUAL_STATEMENT),
    ("marker_on_next_line", f"{T}.\n[C0]", R.UNCITED_FACTUAL_STATEMENT),
    ("uncited_question", VALID + " Why is this needed?", R.UNCITED_FACTUAL_STATEMENT),
    (
        "uncited_bullet",
        f"Steps:\n- {T} [C0].\n- Check the coolant level.",
        R.UNCITED_FACTUAL_STATEMENT,
    ),
    ("uncited_exclamation", f"{T} [C0]! Never skip this step!", R.UNCITED_FACTUAL_STATEMENT),
    # refusals that are not exact
    ("refusal_reworded", REFUSAL.replace("sufficient", "enough"), R.INVALID_REFUSAL_FORMAT),
    ("refusal_lowercase", REFUSAL.lower(), R.INVALID_REFUSAL_FORMAT),
    ("refusal_no_period", REFUSAL[:-1], R.INVALID_REFUSAL_FORMAT),
    ("refusal_plus_answer", VALID + " " + REFUSAL, R.INVALID_REFUSAL_FORMAT),
    ("refusal_quoted", f'"{REFUSAL}"', R.INVALID_REFUSAL_FORMAT),
    (
        "refusal_other_preset",
        "The indexed documentation does not contain this information.",
        R.INVALID_REFUSAL_FORMAT,
    ),
    ("refusal_token_only", "NO_EVIDENCE", R.INVALID_REFUSAL_FORMAT),
    ("i_dont_know", "I don't know.", R.INVALID_REFUSAL_FORMAT),
    ("refusal_with_citation", REFUSAL + " [C0]", R.INVALID_REFUSAL_FORMAT),
    # internal ids and meta commentary
    ("chunk_id_keyword", f"{T} [C0] (chunk_id=abc).", R.INTERNAL_ID_LEAK),
    ("knowledge_id_keyword", f"{T} per knowledge_id kb-0 [C0].", R.INTERNAL_ID_LEAK),
    ("evidence_header_copy", f"[C0 | source=manual] {T} [C0].", R.INTERNAL_ID_LEAK),
    ("as_an_ai", f"As an AI, I advise this: {T} [C0].", R.META_COMMENTARY),
    ("based_on_provided", f"Based on the provided documents, {T.lower()} [C0].", R.META_COMMENTARY),
    ("context_says", f"The context says to {T.lower()} [C0].", R.META_COMMENTARY),
    ("evidence_word", f"According to the Evidence, {T.lower()} [C0].", R.META_COMMENTARY),
    ("think_tags", f"<think>easy</think> {T} [C0].", R.META_COMMENTARY),
    # new numbers, dates, codes (seed 000 P2.2)
    ("new_number", "Torque the M8 cylinder head bolts to 30 Nm [C0].", R.UNSUPPORTED_NEW_FACT),
    ("new_code", "Torque the M10 cylinder head bolts to 25 Nm [C0].", R.UNSUPPORTED_NEW_FACT),
    ("new_date", "Bulletin SB-114 was issued 2020-03-01 [C1].", R.UNSUPPORTED_NEW_FACT),
    ("number_from_uncited_chunk", "Torque the M8 bolts to 500 Nm [C0].", R.UNSUPPORTED_NEW_FACT),
    (
        "prefix_of_number",
        "Replace the hydraulic filter every 50 operating hours [C1].",
        R.UNSUPPORTED_NEW_FACT,
    ),
    ("decimal_extension", "Torque the M8 bolts to 25.5 Nm [C0].", R.UNSUPPORTED_NEW_FACT),
    ("new_acronym", "Torque the M8 bolts to 25 Nm per ISO guidance [C0].", R.UNSUPPORTED_NEW_FACT),
    (
        "new_year",
        "Torque the M8 bolts to 25 Nm, as required since 1999 [C0].",
        R.UNSUPPORTED_NEW_FACT,
    ),
    # nothing to validate
    ("empty", "", R.EMPTY_ANSWER),
    ("whitespace", "  \n\t ", R.EMPTY_ANSWER),
    ("markers_only", "[C0] [C1]", R.EMPTY_ANSWER),
    ("punctuation_only", "---", R.EMPTY_ANSWER),
]


@pytest.mark.parametrize(
    ("text", "code"), [(t, c) for _, t, c in FAILING], ids=[n for n, _, _ in FAILING]
)
def test_adversarial_answer_fails_with_exact_code(
    bundle: AnswerBundle, strict: Policy, text: str, code: ReasonCode
) -> None:
    r = validate_text(bundle, text, strict)
    assert r.validation_status == "FAILED", r
    assert r.failure_reason == code.value, r.message
    assert r.generation_status == "FAILED"
    assert r.validated_answer_text == "" and r.validated_citations == []
    assert r.message


def test_table_is_big_enough() -> None:
    assert len(FAILING) >= 40
    assert len({n for n, _, _ in FAILING}) == len(FAILING)


PASSING: list[tuple[str, str, list[str]]] = [
    ("valid", VALID, ["C0", "C1"]),
    ("two_markers", f"{T} [C0][C1].", ["C0", "C1"]),
    ("marker_after_terminator", f"{T}. [C0]", ["C0"]),
    (
        "first_use_order",
        f"Check the coolant when the engine is cold [C2]. {T} [C0] [C2].",
        ["C2", "C0"],
    ),
    ("list_with_label", f"Steps:\n- {T} [C0].\n- Check the coolant when cold [C2].", ["C0", "C2"]),
    ("question_identifier", "For the X200, torque the M8 bolts to 25 Nm [C0].", ["C0"]),
    ("evidence_word_in_evidence", "Inspection found evidence of corrosion [C3].", ["C3"]),
    ("thousands_separator", "1000 units were recalled [C3].", ["C3"]),
    ("date_and_code", "Bulletin SB-114 was issued 2019-03-01 [C1].", ["C1"]),
    ("case_insensitive_code", "Torque the m8 bolts to 25 Nm [C0].", ["C0"]),
    ("initials_in_name", "Bulletin SB-114 was issued 2019-03-01 by J. R. Miller [C1].", ["C1"]),
    ("yes_answer", "Yes [C2].", ["C2"]),
    ("plain_english_not_meta", f"Follow the steps step by step: {T.lower()} [C0].", ["C0"]),
    ("year_of_a_date", "Bulletin SB-114 was issued in 2019 [C1].", ["C1"]),
    ("no_evidence_of_fact", "Inspection found no evidence of leaks beyond corrosion [C3].", ["C3"]),
]


@pytest.mark.parametrize(
    ("text", "cites"), [(t, c) for _, t, c in PASSING], ids=[n for n, _, _ in PASSING]
)
def test_tricky_valid_answer_passes(
    bundle: AnswerBundle, strict: Policy, text: str, cites: list[str]
) -> None:
    # This table checks the form rules (markers, identifiers, meta, refusals); some of its
    # sentences say more than the short evidence texts (`J. R. Miller`), so the support floor
    # is off here. The support check has its own tests (test_validate_support.py).
    form_only = strict.evolve(
        validation=strict.validation.model_copy(update={"min_sentence_support": 0.0})
    )
    r = validate_text(bundle, text, form_only)
    assert r.validation_status == "PASSED", r.message
    assert r.validated_citations == cites
    assert r.validated_answer_text == text
