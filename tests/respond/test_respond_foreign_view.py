"""A passed-in EvidenceView must be the bundle's own: `validate_answer(view=)` and
`package_answer(view=)` are public, and a view of other evidence would validate (or renumber)
the answer against evidence the bundle does not hold. Such a view fails closed."""

from __future__ import annotations

import dataclasses

import pytest
from respond_samples import POLICY

from citebound.contracts.enums import PublicStatus, ReasonCode, ValidationStatus
from citebound.respond import package_answer
from citebound.testing.bundles import make_answer_bundle, make_llm_result
from citebound.validate import EvidenceView, validate_answer
from citebound.validate.validator import view_mismatch

FACTS = [
    "Torque the M8 cylinder head bolts to 25 Nm in a cross pattern.",
    "Replace the hydraulic filter every 500 operating hours.",
]
OTHER = [
    "Torque the M8 cylinder head bolts to 40 Nm in a cross pattern.",
    "Replace the hydraulic filter every 500 operating hours.",
]
# Quotes OTHER's first chunk: supported by the foreign view, not by the bundle.
ANSWER = "Torque the M8 cylinder head bolts to 40 Nm in a cross pattern [C0]."


def _views() -> dict[str, EvidenceView]:
    own = EvidenceView.from_bundle(make_answer_bundle(FACTS))
    return {
        "other evidence": EvidenceView.from_bundle(make_answer_bundle(OTHER)),
        "other request": dataclasses.replace(own, request_id="req-2"),
        "fewer chunks": EvidenceView.from_bundle(make_answer_bundle(FACTS[:1])),
        "extra text": dataclasses.replace(own, texts={**own.texts, "C9": "Mars has moons."}),
    }


@pytest.mark.parametrize("case", sorted(_views()))
def test_validating_against_a_view_of_other_evidence_fails_closed(case: str) -> None:
    bundle = make_answer_bundle(FACTS)
    view = _views()[case]
    assert view_mismatch(view, bundle) is not None
    result = validate_answer(bundle, make_llm_result(bundle, ANSWER), POLICY, view=view)
    assert result.validation_status is ValidationStatus.FAILED
    assert result.failure_reason == ReasonCode.INTERNAL_ERROR.value
    assert result.request_id == bundle.request_id


def test_the_bundles_own_view_is_accepted() -> None:
    bundle = make_answer_bundle(FACTS)
    own = EvidenceView.from_bundle(bundle)
    assert view_mismatch(own, bundle) is None
    good = make_llm_result(bundle, "Replace the hydraulic filter every 500 operating hours [C1].")
    assert validate_answer(bundle, good, POLICY, view=own) == validate_answer(bundle, good, POLICY)


def test_packaging_with_a_view_of_other_evidence_fails_closed() -> None:
    other = make_answer_bundle(OTHER)
    llm = make_llm_result(other, ANSWER)
    passed = validate_answer(other, llm, POLICY)  # passes against its own evidence
    assert passed.validation_status is ValidationStatus.PASSED
    bundle = make_answer_bundle(FACTS)
    # Same request id and anchors: only the texts differ (40 Nm shown over a chunk of 25 Nm).
    out = package_answer(bundle, llm, passed, policy=POLICY, view=EvidenceView.from_bundle(other))
    assert out.response.status is PublicStatus.FAILED
    assert out.response.failure_reason == ReasonCode.INTERNAL_ERROR.value
    assert out.display_anchors is None
