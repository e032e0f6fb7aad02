"""Property tests: the validator never raises and never edits the text it passes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from validate_samples import EVIDENCE

from citebound.contracts.enums import ReasonCode
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.validate import validate_text

BUNDLE = make_answer_bundle(EVIDENCE)
POLICIES = [load_policy("strict-v1"), load_policy("hybridrag")]
CODES = {c.value for c in ReasonCode}
PIECES = st.sampled_from(
    [
        "[C0]", "[C1]", "[C9]", "[c0]", "(C0)", "C0", "[", "]", ". ", "? ", "!\n", "\n",
        "Torque", " the ", "M8", " bolts", " 25 Nm", " 30", " evidence", "NO_EVIDENCE: ",
        "chunk_id", " cylinder", "¹", "—", "\x00", "  ",
    ]
)  # fmt: skip
TEXTS = st.one_of(st.text(max_size=200), st.lists(PIECES, max_size=30).map("".join))


@settings(max_examples=300, deadline=None)
@given(text=TEXTS, which=st.integers(0, 1))
def test_never_raises_and_never_edits(text: str, which: int) -> None:
    r = validate_text(BUNDLE, text, POLICIES[which])
    assert r.validated_answer_text in ("", text)
    if r.validation_status == "PASSED":
        assert r.validated_answer_text == text
        assert r.failure_reason is None and r.reason_codes == []
        assert set(r.validated_citations) <= set(BUNDLE.allowed_anchors)
        assert len(set(r.validated_citations)) == len(r.validated_citations)
        assert all(f"[{a}]" in text for a in r.validated_citations)
    else:
        assert r.validated_answer_text == "" and r.validated_citations == []
        assert r.failure_reason in CODES and r.failure_reason == r.reason_codes[0]
        assert r.failure_reason != "INTERNAL_ERROR", r.message


@settings(max_examples=100, deadline=None)
@given(prefix=st.text(max_size=40), suffix=st.text(max_size=40))
def test_exact_refusal_only_when_alone(prefix: str, suffix: str) -> None:
    policy = POLICIES[0]
    text = prefix + policy.refusal.model_text + suffix
    r = validate_text(BUNDLE, text, policy)
    if text.strip() == policy.refusal.model_text:
        assert r.generation_status == "NO_EVIDENCE" and r.validation_status == "PASSED"
    else:
        assert r.validation_status == "FAILED"


PATHOLOGICAL = [
    "[" + " " * 5000 + "C",
    "[C" + " 1," * 3000,
    "(" + " 1 -" * 3000 + "x",
    "[" + "1" * 20000,
    "1." * 5000,
    "[C0 " + "| " * 3000,
    "[C0" + " " * 3000 + "\n" * 3000,
]


def test_pathological_inputs_finish_with_a_verdict() -> None:
    # Regression for catastrophic regex backtracking: these used to hang the marker scan.
    for text in PATHOLOGICAL:
        r = validate_text(BUNDLE, text, POLICIES[0])
        assert r.validation_status == "FAILED" and r.failure_reason in CODES
