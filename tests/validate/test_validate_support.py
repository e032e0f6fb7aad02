"""The support check (issue #14, #30): the verifier model scores each cited sentence.

What every machine can test runs with the suite's stand-in verifier (tests/conftest.py) or the
tiny NLI export whose score is worked out by hand (P = e^overlap / (e^overlap + 2) over its 12
content words); what only a trained model can decide (a cited hallucination fails, a close
paraphrase passes) runs with `shipped_verifier` / `verdict` and skips when no model is
installed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from citebound.contracts.enums import ReasonCode
from citebound.models import VERIFIER_DIR_ENV
from citebound.policy import Policy, load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.testing.tiny_cross_encoder import write_stand_in_verifier
from citebound.validate import validate_text
from citebound.validate.quote import is_quotation

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
Verdict = Callable[[Callable[[], Any], str], tuple[str, str]]


def _with(policy: Policy, **update: object) -> Policy:
    return policy.evolve(validation=policy.validation.model_copy(update=update))


def _validate(
    text: str,
    evidence: str = MANUAL,
    question: str = "What does the manual say?",
    policy: Policy = STRICT,
) -> Any:
    bundle = make_answer_bundle([evidence], question=question)
    return validate_text(bundle, text, policy)


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
def test_cited_hallucinations_fail(text: str, shipped_verifier: Path) -> None:
    r = _validate(text)
    assert r.validation_status == "FAILED", text
    assert ReasonCode.UNSUPPORTED_CLAIM.value in r.reason_codes, r.message


@pytest.mark.parametrize(
    ("text", "evidence"),
    [
        ("Inspect the relief valve every 6 months. [C0]", MANUAL),
        ("The chiller uses R-134a refrigerant [C0].", MANUAL),
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
    ],
)
def test_quotations_pass_without_asking_the_model(text: str, evidence: str, tmp_path: Path) -> None:
    """A verifier that rejects everything: a quotation of the cited evidence still passes."""
    never = write_stand_in_verifier(tmp_path / "never", score=0.001)
    r = _validate(text, evidence, policy=_with(STRICT, nli_model_path=str(never)))
    assert r.validation_status == "PASSED", r.message
    assert r.grounding_metrics.unsupported_sentences == []
    assert r.grounding_metrics.verifier is None  # no sentence was put to the model


@pytest.mark.parametrize(
    ("text", "evidence"),
    [
        ("Inspect the relief valves every 6 months [C0].", MANUAL),
        (
            "SVC-COMQUEUE-008: `Svc::ComQueue` shall implement a **retry** mechanism [C0].",
            TABLE_ROW,
        ),
        ("No [C0].", "The pump has a single stage."),
        ("1000 units were recalled [C0].", "In total 1,000 units were recalled."),
        ("Officials say the plant closed in March [C0].", "The plant closed in March, officials "
         "said. Investigators found a cracked weld."),
        ("Uptown Funk was No. 1 on the chart in 2015 [C0].", "Uptown Funk reached No. 1 on the "
         "chart in 2015 and stayed there for 14 weeks."),
    ],
)  # fmt: skip
def test_close_paraphrases_pass(text: str, evidence: str, verdict: Verdict) -> None:
    got, message = verdict(lambda: _validate(text, evidence), "pass")
    assert got == "pass", (text, message)


def test_the_rejected_sentence_its_score_and_window_are_in_the_metrics(tiny_nli: Path) -> None:
    policy = _with(STRICT, nli_model_path=str(tiny_nli))
    evidence = "Torque the pump bolts to 40 Nm. Inspect the seal."
    text = "Torque the pump bolts to 40 Nm [C0]. The planet Mars has two moons [C0]."
    r = _validate(text, evidence, policy=policy)
    assert r.failure_reason == ReasonCode.UNSUPPORTED_CLAIM.value
    [u] = r.grounding_metrics.unsupported_sentences
    assert u.index == 1
    assert u.score == pytest.approx(1 / 3, abs=1e-6)  # no content word shared
    assert u.best_evidence_span == evidence  # the window: the whole evidence fits
    assert u.reason == "verifier score 0.333 < 0.500"
    assert "Inspect the seal" not in r.message  # evidence text stays out of messages
    assert r.grounding_metrics.min_support == u.score
    assert r.grounding_metrics.verifier is not None
    assert r.grounding_metrics.verifier.startswith("onnx-nli:nli@sha256:")


def test_question_identifiers_count_as_known() -> None:
    evidence = "Torque the M8 bolts to 25 Nm."
    text = "The X200: torque the M8 bolts to 25 Nm [C0]."
    assert _validate(text, evidence, question="How do I torque the X200?").validation_status == (
        "PASSED"
    )
    assert _validate(text, evidence, question="How do I torque it?").validation_status == "FAILED"


def test_hybridrag_marks_unsupported_answers_low_confidence(tiny_nli: Path) -> None:
    policy = _with(load_policy("hybridrag"), nli_model_path=str(tiny_nli))
    r = _validate("Mars has two moons [C0].", policy=policy)
    assert r.validation_status == "PASSED"
    assert r.grounding_metrics.low_confidence
    assert r.grounding_metrics.unsupported_sentences[0].index == 0


def test_confidence_comes_from_the_weakest_sentence(tiny_nli: Path) -> None:
    tiny = _with(STRICT, nli_model_path=str(tiny_nli))
    quote = _validate("Inspect the relief valve every 6 months [C0].", policy=tiny)
    assert quote.grounding_metrics.confidence == "high"
    # One word shared ("valve"): P = e / (e + 2) = 0.576, above 0.5, below high (0.9).
    medium = _validate("The valve is checked twice a year [C0].", policy=tiny)
    assert medium.validation_status == "PASSED", medium.message
    assert medium.grounding_metrics.confidence == "medium"
    low = _validate(
        "Mars has two moons [C0].", policy=_with(load_policy("hybridrag"), nli_model_path=str(
            tiny_nli))
    )  # fmt: skip
    assert low.grounding_metrics.confidence == "low"
    assert _validate("Mars has two moons [C0].", policy=tiny).grounding_metrics.confidence is None


def test_a_quote_of_a_linked_table_row_is_a_quotation() -> None:
    """Quoted text keeps a link's text and drops its target (`[x](../a.md)` reads `x`)."""
    evidence = "`bufferSendIn` | [`Fw::BufferSend`](../../Fw/Buffer/docs/sdd.md) | guarded input"
    assert is_quotation("`bufferSendIn` | `Fw::BufferSend` | guarded input", evidence)
    assert not is_quotation("`bufferSendIn` | `Fw::BufferGet` | guarded input", evidence)


def test_the_built_in_model_comes_from_its_folder_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "The relief valve is checked twice a year [C0]."
    monkeypatch.setenv(VERIFIER_DIR_ENV, str(write_stand_in_verifier(tmp_path / "draft-f4")))
    r = _validate(text)
    assert r.validation_status == "PASSED", r.message
    assert r.grounding_metrics.verifier is not None
    assert r.grounding_metrics.verifier.startswith("onnx-nli:draft-f4@sha256:")
    monkeypatch.setenv(VERIFIER_DIR_ENV, str(tmp_path / "empty"))
    missing = _validate(text)
    assert missing.failure_reason == "INTERNAL_ERROR"  # fails closed, never passes unchecked
    assert VERIFIER_DIR_ENV in missing.message
    # Off: only the hard checks decide, and no model is loaded.
    off = _validate(text, policy=_with(STRICT, verifier="none"))
    assert off.validation_status == "PASSED" and off.grounding_metrics.verifier is None
