"""Located failures (validate/failures.py): what a regeneration prompt may name."""

from __future__ import annotations

import pytest

from citebound.policy import load_policy
from citebound.validate import EvidenceView, validate_view
from citebound.validate.failures import failed_sentences

POLICY = load_policy("strict-v1")
VIEW = EvidenceView.single("C0", "Torque the impeller bolts to 45 Nm in a cross pattern.")


def _located(text: str) -> list[tuple[int | None, str]]:
    result = validate_view(VIEW, text, POLICY)
    return [(f.index, f.reason_code) for f in failed_sentences(VIEW, text, result, POLICY)]


def test_a_passing_answer_names_nothing() -> None:
    assert _located("Torque the impeller bolts to 45 Nm in a cross pattern [C0].") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Torque the impeller bolts to 45 Nm [C0]. Mars has two moons.",
            [(1, "UNCITED_FACTUAL_STATEMENT")],
        ),
        (
            "Mars has two moons [C0]. Torque the impeller bolts to 45 Nm [C0].",
            [(0, "LOW_SUPPORT")],
        ),
        (
            "Torque the impeller bolts to 45 Nm [C0]. Torque them to 45 Nm [C3].",
            # [C3] names no evidence, so nothing supports the sentence either.
            [
                (1, "INVALID_CITATION_REFERENCE"),
                (1, "UNSUPPORTED_NEW_FACT"),
                (1, "LOW_SUPPORT"),
            ],
        ),
        (
            "Torque the impeller bolts to 95 Nm in a cross pattern [C0].",
            # the number the evidence lacks also lowers the fitted support score
            [(0, "UNSUPPORTED_NEW_FACT"), (0, "LOW_SUPPORT")],
        ),
    ],
)
def test_sentences_are_named_by_index_and_code(
    text: str, expected: list[tuple[int | None, str]]
) -> None:
    assert _located(text) == expected


def test_whole_answer_rules_have_no_index() -> None:
    located = _located(
        "According to the evidence, torque the impeller bolts to 45 Nm [C0]. Mars has two moons."
    )
    assert located == [
        (1, "UNCITED_FACTUAL_STATEMENT"),
        (None, "META_COMMENTARY"),
    ]  # sentences first


def test_tolerated_rules_are_not_named() -> None:
    lenient = POLICY.evolve(
        validation={**POLICY.validation.model_dump(), "min_attribution_coverage": 0.5}
    )
    text = "Torque the impeller bolts to 45 Nm [C0]. Mars has two moons."
    result = validate_view(VIEW, text, lenient)
    assert result.validation_status == "PASSED"
    assert failed_sentences(VIEW, text, result, lenient) == []
