"""Seed 003 §4 text shape; scores only on request; low confidence header."""

from __future__ import annotations

from respond_samples import OK_TEXT, POLICY, SHOWN_TEXT, every_status

from citebound.respond import render_text
from citebound.testing.bundles import make_llm_result
from citebound.validate import validate_answer


def test_ok_text_shape() -> None:
    _, response = every_status()["ok"]
    assert render_text(response) == (
        "Answer:\n"
        f"{SHOWN_TEXT}\n"
        "\n"
        "Confidence: high (weakest sentence's support)\n"
        "\n"
        "Sources:\n"
        "- [C0] manual-2.pdf, Pump > Section 3, p. 4\n"
        "- [C1] manual-0.pdf, Pump > Section 1, p. 2\n"
    )


def test_scores_only_when_asked_and_bundle_given() -> None:
    bundle, response = every_status()["ok"]
    assert "score" not in render_text(response, bundle=bundle)
    assert "score" not in render_text(response, show_scores=True)  # no bundle, no scores
    validation = validate_answer(bundle, make_llm_result(bundle, OK_TEXT), POLICY)
    text = render_text(response, bundle=bundle, validation=validation, show_scores=True)
    # Scores follow the shown anchors (C0 is the prompt's C2).
    assert "- [C0] manual-2.pdf, Pump > Section 3, p. 4 (score: 0.70)\n" in text
    assert "- [C1] manual-0.pdf, Pump > Section 1, p. 2 (score: 0.90)\n" in text


def test_low_confidence_header() -> None:
    _, response = every_status()["ok"]
    low = response.model_copy(update={"low_confidence": True})
    assert render_text(low).startswith("Answer (LOW CONFIDENCE — limited source coverage):\n")


def test_no_evidence_and_failed() -> None:
    assert render_text(every_status()["gate"][1]) == f"Answer:\n{POLICY.refusal.no_evidence_text}\n"
    failed = render_text(every_status()["rejected"][1])
    assert failed == "Answer:\n(no validated answer: FAILED, reason INVALID_CITATION_REFERENCE)\n"
