"""A bundle, model answers and validations for every public status."""

from __future__ import annotations

from citebound.contracts.assembly import AnswerBundle
from citebound.contracts.enums import AssemblyStatus, GenerationStatus
from citebound.contracts.public import PublicResponse
from citebound.policy import load_policy
from citebound.respond import package_response, package_without_generation
from citebound.testing.bundles import make_answer_bundle, make_llm_result
from citebound.validate import validate_answer

EVIDENCE = [
    "Torque the M8 cylinder head bolts to 25 Nm in a cross pattern.",
    "Replace the hydraulic filter every 500 operating hours.",
    "Check the coolant level only when the engine is cold.",
]
OK_TEXT = (
    "Check the coolant level only when the engine is cold [C2]. "
    "Torque the M8 cylinder head bolts to 25 Nm [C0]."
)
# What the reader sees: anchors numbered in the order the answer cites them.
SHOWN_TEXT = (
    "Check the coolant level only when the engine is cold [C0]. "
    "Torque the M8 cylinder head bolts to 25 Nm [C1]."
)
POLICY = load_policy("strict-v1")


def bundle() -> AnswerBundle:
    return make_answer_bundle(EVIDENCE)


def every_status() -> dict[str, tuple[AnswerBundle, PublicResponse]]:
    """One PublicResponse per path: OK, model refusal, gate refusal, rejected, LLM failed,
    assembly failed."""
    b = bundle()
    out: dict[str, tuple[AnswerBundle, PublicResponse]] = {}
    for name, text, status in [
        ("ok", OK_TEXT, GenerationStatus.OK),
        ("model_refusal", POLICY.refusal.model_text, GenerationStatus.OK),
        ("rejected", OK_TEXT + " [C9]", GenerationStatus.OK),
        ("llm_failed", "", GenerationStatus.FAILED),
    ]:
        reason = "LLM_RETRIES_EXHAUSTED" if status is GenerationStatus.FAILED else None
        llm = make_llm_result(b, text, status=status, failure_reason=reason)
        out[name] = (
            b,
            package_response(
                b, llm, validate_answer(b, llm, POLICY), policy=POLICY, latency_ms=42.0
            ),
        )
    for name, st in [("gate", AssemblyStatus.NO_EVIDENCE), ("assembly", AssemblyStatus.FAILED)]:
        nb = make_answer_bundle([], status=st)
        out[name] = (b, package_without_generation(nb, POLICY, latency_ms=3.0))
    return out
