"""The sentence support check (issue #14): cited hallucinations fail, quotations pass."""

from __future__ import annotations

import pytest

from citebound.contracts.enums import ReasonCode
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.validate import validate_text
from citebound.validate.analysis import support_params
from citebound.validate.support import sentence_support

MANUAL = (
    "The chiller uses R-134a refrigerant. Inspect the relief valve every 6 months. "
    "The condenser fan must not be started before the oil heater has run for 12 hours. "
    "Pressure rises above 45 bar only when the inlet is blocked."
)
TABLE_ROW = (
    "| SVC-COMQUEUE-008 | `Svc::ComQueue` shall implement a **retry** mechanism for failed "
    "buffers. | Unit test |"
)
STRICT = load_policy("strict-v1")
PARAMS = support_params(STRICT)


def _validate(text: str, evidence: str = MANUAL, question: str = "What does the manual say?"):
    bundle = make_answer_bundle([evidence], question=question)
    return validate_text(bundle, text, STRICT)


@pytest.mark.parametrize(
    "text",
    [
        "Mars has two moons [C0].",
        "The relief valve never needs inspection [C0].",
        "The condenser fan must be started before the oil heater has run for 12 hours [C0].",
        "Pressure falls below 45 bar only when the inlet is blocked [C0].",
        "The chiller uses R-134a refrigerant supplied by Honeywell [C0].",
        "The chiller uses R-134a refrigerant. [C0] The pump never needs maintenance [C0].",
    ],
)
def test_cited_hallucinations_fail(text: str) -> None:
    r = _validate(text)
    assert r.validation_status == "FAILED", text
    assert ReasonCode.LOW_SUPPORT.value in r.reason_codes, r.message


@pytest.mark.parametrize(
    ("text", "evidence"),
    [
        ("Inspect the relief valve every 6 months. [C0]", MANUAL),
        ("The chiller uses R-134a refrigerant [C0].", MANUAL),
        ("Inspect the relief valves every 6 months [C0].", MANUAL),
        (
            "The condenser fan must not be started before the oil heater has run for 12 "
            "hours [C0].",
            MANUAL,
        ),
        # A table row rendered as text, markup stripped (issue #15's extractive answers).
        (
            "SVC-COMQUEUE-008: Svc::ComQueue shall implement a retry mechanism for failed "
            "buffers [C0].",
            TABLE_ROW,
        ),
        (
            "SVC-COMQUEUE-008: `Svc::ComQueue` shall implement a **retry** mechanism [C0].",
            TABLE_ROW,
        ),
        ("1000 units were recalled [C0].", "In total 1,000 units were recalled."),
        ("No [C0].", "The pump has a single stage."),
    ],
)
def test_quotations_and_close_paraphrases_pass(text: str, evidence: str) -> None:
    r = _validate(text, evidence)
    assert r.validation_status == "PASSED", r.message
    assert r.grounding_metrics.unsupported_sentences == []


def test_failing_sentence_index_and_best_span_are_in_the_metrics_not_the_message() -> None:
    text = "The chiller uses R-134a refrigerant [C0]. The relief valve never needs inspection [C0]."
    r = _validate(text)
    assert r.failure_reason == ReasonCode.LOW_SUPPORT.value
    [u] = r.grounding_metrics.unsupported_sentences
    assert u.index == 1
    assert u.score < 0.001  # a polarity flip outweighs everything else
    assert "negation" in u.reason
    # The best window: the two consecutive evidence sentences covering most of its words.
    assert u.best_evidence_span == (
        "The chiller uses R-134a refrigerant. Inspect the relief valve every 6 months."
    )
    assert "Inspect the relief valve" not in r.message  # evidence text stays out of messages
    assert r.grounding_metrics.min_support == u.score


def test_signals() -> None:
    s = sentence_support("The refrigerant is supplied by Honeywell.", MANUAL, PARAMS)
    assert s.missing_names == ("Honeywell",)
    assert s.score < PARAMS.min_sentence_support
    flip = sentence_support("Pressure rises below 45 bar.", MANUAL, PARAMS)
    assert "antonym" in flip.polarity_flip
    plain = sentence_support("The chiller uses R-134a refrigerant.", MANUAL, PARAMS)
    assert (plain.score, plain.coverage, plain.polarity_flip) == (1.0, 1.0, "")
    assert plain.best_span == ""  # reported for unsupported sentences only
    weak = sentence_support(
        "The chiller uses ammonia refrigerant from a leaking drum daily.", MANUAL, PARAMS
    )
    assert weak.best_span.startswith("The chiller uses R-134a refrigerant.")


def test_question_identifiers_count_as_known() -> None:
    evidence = "Torque the M8 bolts to 25 Nm."
    text = "The X200: torque the M8 bolts to 25 Nm [C0]."
    assert _validate(text, evidence, question="How do I torque the X200?").validation_status == (
        "PASSED"
    )
    assert _validate(text, evidence, question="How do I torque it?").validation_status == "FAILED"


def test_hybridrag_marks_unsupported_answers_low_confidence() -> None:
    bundle = make_answer_bundle([MANUAL])
    r = validate_text(bundle, "Mars has two moons [C0].", load_policy("hybridrag"))
    assert r.validation_status == "PASSED"
    assert r.grounding_metrics.low_confidence
    assert r.grounding_metrics.unsupported_sentences[0].index == 0


def test_confidence_comes_from_the_weakest_sentence() -> None:
    quote = _validate("Inspect the relief valve every 6 months [C0].")
    assert quote.grounding_metrics.confidence == "high"
    # All content words but "chokes" are in the evidence: above the floor, below "high".
    text = (
        "The chiller uses R-134a refrigerant [C0]. Pressure rises above 45 bar only when the "
        "blocked inlet also chokes the condenser fan [C0]."
    )
    medium = _validate(text)
    assert medium.validation_status == "PASSED", medium.message
    assert medium.grounding_metrics.confidence == "medium"
    low = validate_text(
        make_answer_bundle([MANUAL]), "Mars has two moons [C0].", load_policy("hybridrag")
    )
    assert low.grounding_metrics.confidence == "low"
    assert _validate("Mars has two moons [C0].").grounding_metrics.confidence is None  # FAILED


def test_a_quote_of_a_linked_table_row_is_a_quotation() -> None:
    """Quoted text keeps a link's text and drops its target (`[x](../a.md)` reads `x`)."""
    from citebound.validate.support import is_quotation

    evidence = "`bufferSendIn` | [`Fw::BufferSend`](../../Fw/Buffer/docs/sdd.md) | guarded input"
    assert is_quotation("`bufferSendIn` | `Fw::BufferSend` | guarded input", evidence)
    assert not is_quotation("`bufferSendIn` | `Fw::BufferGet` | guarded input", evidence)


def test_paraphrase_signals_survive_inflection_and_attribution() -> None:
    evidence = "The plant closed in March, officials said. Investigators found a cracked weld."
    for text in (
        "Officials say the plant closed in March [C0].",
        "The investigation found cracked welds [C0].",
    ):
        r = _validate(text, evidence)
        assert r.validation_status == "PASSED", (text, r.message)


def test_number_abbreviation_is_not_a_negation() -> None:
    evidence = "Uptown Funk reached No. 1 on the chart in 2015 and stayed there for 14 weeks."
    r = _validate("Uptown Funk was No. 1 on the chart in 2015 [C0].", evidence)
    assert r.validation_status == "PASSED", r.message
    negated = _validate("Uptown Funk never reached the chart in 2015 [C0].", evidence)
    assert negated.failure_reason == ReasonCode.LOW_SUPPORT.value


def test_a_name_from_another_passage_is_reported() -> None:
    evidence = (
        "David Lee Roth was inducted into the Rock and Roll Hall of Fame in 2007. "
        "He toured widely. The band recorded five albums. "
        "Cia Berg is a Swedish television presenter."
    )
    s = sentence_support(
        "Cia Berg was inducted into the Rock and Roll Hall of Fame.", evidence, PARAMS
    )
    assert s.features is not None
    assert s.features.names_outside_window == ("Berg",)  # "Cia" opens the sentence
    right = sentence_support(
        "Roth was inducted into the Rock and Roll Hall of Fame.", evidence, PARAMS
    )
    assert right.features is not None and right.features.names_outside_window == ()
    assert right.score > s.score


def test_weights_come_from_the_policy() -> None:
    """No number of the rule is in code: zero weights and intercept give 0.5 everywhere."""
    from dataclasses import replace

    from citebound.policy import SupportWeights

    flat = replace(
        PARAMS,
        weights=SupportWeights(
            intercept=0.0,
            coverage=0.0,
            window_coverage=0.0,
            missing_words=0.0,
            missing_names=0.0,
            names_outside_window=0.0,
            missing_numbers=0.0,
            polarity_flip=0.0,
        ),
    )
    assert sentence_support("Mars has two moons.", MANUAL, flat).score == 0.5
    assert sentence_support("Mars has two moons.", MANUAL, PARAMS).score < 0.5
