"""Slot swaps (validate/swap.py): a sentence that put another word in place of a specific
evidence token fails, whatever else it covers; paraphrases in place still pass."""

from __future__ import annotations

import pytest

from citebound.contracts.enums import ReasonCode
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.validate import validate_text
from citebound.validate.analysis import support_params
from citebound.validate.evidence import index_evidence, lemmas
from citebound.validate.support import sentence_support
from citebound.validate.swap import slot_swaps

CHILLER = (
    "The chiller uses R-134a refrigerant. Inspect the relief valve every 6 months. "
    "The fan runs at full speed during defrost. Only a qualified technician may open the "
    "control panel. Pressure rises above 45 bar only when the inlet is blocked."
)
TRIP = "After a trip, the Shift Supervisor resets the compressor. Then restart the pump."
GREASE = "Lubricate the drive-end bearing with Mobil SHC 460 grease every 2,000 hours."
SEAL = "Replace the Viton O-ring on the suction flange. Torque the flange bolts to 25 Nm."
VALVE = "Before servicing, close the HV-101 isolation valve and vent the line."
RELIEF = "The relief valve lifts at 45 bar. The safety valve lifts at 50 bar."
PROPANE = "The chiller uses propane refrigerant. Check the charge every 6 months."
DRAIN = (
    "Close the ball valve before draining the line. Drain the coolant into an approved "
    "container. Turn the handle clockwise to open the valve."
)
FILTER = "Install the filter before starting the pump."
STRICT = load_policy("strict-v1")


def _swaps(sentence: str, evidence: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    params = support_params(STRICT)
    index = index_evidence(evidence, params.prefix)
    start, _ = index.best_window(frozenset(lemmas(sentence)), params.window, params.prefix)
    return slot_swaps(sentence, index, start, params.window, params.prefix)


def _validate(text: str, evidence: str, preset: str = "strict-v1"):
    bundle = make_answer_bundle([evidence], question="What does the manual say?")
    return validate_text(bundle, text, load_policy(preset))


@pytest.mark.parametrize(
    ("sentence", "evidence"),
    [
        # The regression of the refit (#14): every other word is in the evidence.
        ("The chiller uses ammonia refrigerant [C0].", CHILLER),
        ("The chiller uses ammonia [C0].", CHILLER),  # one side, the other the sentence's end
        ("The chiller uses liquid ammonia refrigerant [C0].", CHILLER),  # a phrase in the slot
        ("After a trip, the operator resets the compressor [C0].", TRIP),  # a role by name
        ("Lubricate the drive-end bearing with lithium grease every 2,000 hours [C0].", GREASE),
        ("Replace the rubber O-ring on the suction flange [C0].", SEAL),  # a part's material
        ("Torque the flange bolts to 25 lbf [C0].", SEAL),  # another unit by the number
        ("Before servicing, close the bypass isolation valve and vent the line [C0].", VALVE),
        ("The relief valve lifts at forty bar [C0].", RELIEF),  # a pressure in words
        ("The relief valve lifts at forty-six bar [C0].", RELIEF),
        ("Pressure rises above 45 psi only when the inlet is blocked [C0].", CHILLER),
        # Another noun in the evidence noun's place (word_swap).
        ("The chiller uses ammonia refrigerant [C0].", PROPANE),
        ("Only a qualified operator may open the control panel [C0].", CHILLER),
        ("Close the gate valve before draining the line [C0].", DRAIN),
        ("Drain the oil into an approved container [C0].", DRAIN),
        # Reversals a manual turns on (antonym pairs of validate/support.py).
        ("Turn the handle counterclockwise to open the valve [C0].", DRAIN),
        ("Remove the filter before starting the pump [C0].", FILTER),
    ],
)
def test_swapped_or_reversed_manual_facts_fail(sentence: str, evidence: str) -> None:
    for preset in ("strict-v1", "superprompt-v1"):
        r = _validate(sentence, evidence, preset)
        assert r.validation_status == "FAILED", (preset, sentence, r.grounding_metrics)
        assert ReasonCode.LOW_SUPPORT.value in r.reason_codes, r.message
    hybrid = _validate(sentence, evidence, "hybridrag")
    assert hybrid.grounding_metrics.low_confidence, sentence


@pytest.mark.parametrize(
    ("sentence", "evidence"),
    [
        ("The chiller uses R-134a refrigerant [C0].", CHILLER),
        ("The fan runs at high speed during defrost [C0].", CHILLER),  # a plain adjective
        ("The fan runs at maximum speed during defrost [C0].", CHILLER),
        ("Inspect the relief valve every six months [C0].", CHILLER),  # the number in words
        ("Only a trained technician may open the control panel [C0].", CHILLER),
        ("After a trip, the supervisor resets the compressor [C0].", TRIP),  # part of the name
        ("Grease the drive-end bearing with Mobil SHC 460 every 2,000 hours [C0].", GREASE),
        ("Replace the O-ring on the suction flange [C0].", SEAL),  # a word left out
        ("The relief valve lifts at 45 bar [C0].", RELIEF),
        ("The safety valve opens at 50 bar [C0].", RELIEF),
        ("The relief valve lifts at forty-five bar [C0].", RELIEF),  # a compound in words
        ("The safety valve lifts at fifty bar [C0].", RELIEF),
        # General verbs traded for synonyms are paraphrases.
        ("The chiller relies on R-134a refrigerant [C0].", CHILLER),
        ("Shut the ball valve before draining the line [C0].", DRAIN),
        ("Turn the handle clockwise to open the valve [C0].", DRAIN),
        ("Install the filter before starting the pump [C0].", FILTER),
    ],
)
def test_paraphrases_in_place_pass(sentence: str, evidence: str) -> None:
    r = _validate(sentence, evidence)
    assert r.validation_status == "PASSED", (sentence, r.message)


def test_the_swap_names_the_sentence_word_and_the_evidence_token() -> None:
    assert _swaps("The chiller uses ammonia refrigerant.", CHILLER) == (("ammonia>r-134a",), ())
    # A run of names and codes is one slot.
    assert _swaps("After a trip, the operator resets the compressor.", TRIP) == (
        ("operator>shift supervisor",),
        (),
    )
    assert _swaps("Lubricate the drive-end bearing with lithium grease.", GREASE)[0] == (
        "lithium>mobil shc 460",
    )
    # Another content word in the slot is a plain swap (its own weight), an adjective none.
    assert _swaps("Only a qualified operator may open the control panel.", CHILLER) == (
        (),
        ("operator>technician",),
    )
    assert _swaps("The fan runs at high speed during defrost.", CHILLER) == ((), ())
    # One side is not enough for a plain name or word, nor when the other side is a word the
    # evidence has in another place.
    assert _swaps("The relief valve lifts at 45 psi.", RELIEF)[0] == ("psi>bar",)
    assert _swaps("The relief valve lifts hard at 45 bar.", RELIEF) == ((), ())


def test_the_audit_reason_names_the_sentence_word_not_the_evidence_token() -> None:
    r = _validate("The chiller uses ammonia refrigerant [C0].", CHILLER)
    [u] = r.grounding_metrics.unsupported_sentences
    assert "ammonia" in u.reason and "134" not in u.reason
    assert u.best_evidence_span.startswith("The chiller uses R-134a refrigerant.")


def test_a_typo_or_spelling_variant_is_not_a_swap() -> None:
    evidence = "The instrument air dryer must be drained weekly."
    assert _swaps("The instument air dryer must be drained weekly.", evidence) == ((), ())


def test_swap_weights_come_from_the_policy() -> None:
    params = support_params(STRICT)
    off = params.__class__(
        **{**params.__dict__, "weights": params.weights.model_copy(update={"slot_swap": 0.0})}
    )
    sentence = "The chiller uses ammonia refrigerant."
    assert sentence_support(sentence, CHILLER, params).score < params.min_sentence_support
    assert sentence_support(sentence, CHILLER, off).score >= params.min_sentence_support
