"""The source line the prompt shows above each chunk (`source=Document > Heading`) is read by
the model, so the support check knows its words: an answer naming the equipment from the
document title is not an invention, a different equipment or value still is."""

from __future__ import annotations

import dataclasses

import pytest

from citebound.contracts.assembly import AnswerBundle
from citebound.contracts.retrieval import SourceRef
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.validate import validate_text
from citebound.validate.validator import validate_view
from citebound.validate.view import EvidenceView

STRICT = load_policy("strict-v1")
QUESTION = "What torque should the HP-220 impeller bolts be tightened to?"
EVIDENCE = "Tighten the impeller bolts to 45 Nm in a cross pattern."


def _bundle() -> AnswerBundle:
    bundle = make_answer_bundle([EVIDENCE], question="Which torque for the impeller bolts?")
    source = SourceRef(document="HP-220 Centrifugal Pump Manual", heading_path=("5 Impeller",))
    ev = bundle.selected_evidence[0].model_copy(update={"source": source})
    return bundle.model_copy(update={"selected_evidence": [ev]})


def test_the_view_keeps_the_source_line_the_prompt_showed() -> None:
    view = EvidenceView.from_bundle(_bundle())
    assert view.contexts == {"C0": "HP-220 Centrifugal Pump Manual > 5 Impeller"}


@pytest.mark.parametrize(
    "answer",
    [
        "The HP-220 impeller bolts are tightened to 45 Nm [C0].",
        "On the HP-220 pump, tighten the impeller bolts to 45 Nm in a cross pattern [C0].",
    ],
)
def test_a_name_from_the_source_line_is_known(answer: str) -> None:
    bundle = _bundle()
    r = validate_text(bundle, answer, STRICT)
    assert r.validation_status == "PASSED", r.message
    # The same answer against the same text without its source line names a pump the
    # evidence never shows: the source line is what makes it supported.
    bare = dataclasses.replace(EvidenceView.from_bundle(bundle), contexts={})
    assert validate_view(bare, answer, STRICT).validation_status == "FAILED"


@pytest.mark.parametrize(
    "answer",
    [
        "The HP-330 impeller bolts are tightened to 45 Nm [C0].",  # another pump
        "The HP-220 impeller bolts are tightened to 30 Nm [C0].",  # another value
        "The HP-220 impeller bolts are tightened in a star pattern [C0].",  # another pattern
        "The HP-220 gearbox bolts are tightened to 45 Nm [C0].",  # another part
    ],
)
def test_other_facts_still_fail_with_the_source_line(answer: str) -> None:
    r = validate_text(_bundle(), answer, STRICT)
    assert r.validation_status == "FAILED", answer


def test_a_restated_question_may_use_a_modal_verb() -> None:
    """ "should be" wraps the evidence's fact; it is not a new claim."""
    bundle = make_answer_bundle(["The impeller bolts are tightened to 45 Nm."], question=QUESTION)
    answer = "The impeller bolts should be tightened to 45 Nm [C0]."
    assert validate_text(bundle, answer, STRICT).validation_status == "PASSED"
    wrong = "The impeller bolts should be loosened to 45 Nm [C0]."
    assert validate_text(bundle, wrong, STRICT).validation_status == "FAILED"
