"""Wrong replies that r5-v4 passed, each beside a correct control (review of r5-v4, r5-v5).

Words that change a claim (quantifiers, time and amount prepositions, verbs that carry the
fact, modals), antonyms the source lines name, negations merged into the wrong clause,
derivational collisions and initialisms the evidence does not define. Each `fail` item passed
under r5-v4; each `pass` item is the correct reply over the same evidence and must keep
passing.
"""

from __future__ import annotations

from typing import Any

import pytest

from citebound.contracts.retrieval import SourceRef
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.validate import validate_text

STRICT = load_policy("strict-v1")

FEW = "A few customers reported seal leakage after the update."
MAYOR = "Smith served as mayor of Springfield until 1990."
TRIP = "The pump must not be restarted after a trip."
PRIME = "Priming the pump before the first start is optional."
VENT = "The pump has a single drain plug. It has no vent valve, but the casing carries a pressure gauge."
WASHER = "Do not use a pressure washer, because the cooler fins bend easily."
FILMS = (
    "Splash is a 1984 American fantasy romantic comedy film directed by Ron Howard. "
    "Son of Flubber is a 1963 comedy film directed by Robert Stevenson."
)
SURVEY = (
    "In 2010 the survey of coastal erosion was funded by the National Security Forces and run "
    "by three universities."
)

# (id, evidence, question, answer, heading, expect)
CASES: list[tuple[str, str, str, str, tuple[str, ...], str]] = [
    # Quantifiers
    (
        "some-all",
        "Replace all impeller bolts at every overhaul.",
        "Which impeller bolts are replaced at an overhaul?",
        "Some impeller bolts are replaced at every overhaul.",
        (),
        "fail",
    ),
    (
        "some-all-ok",
        "Replace all impeller bolts at every overhaul.",
        "Which impeller bolts are replaced at an overhaul?",
        "All impeller bolts are replaced at every overhaul.",
        (),
        "pass",
    ),
    (
        "many-few",
        FEW,
        "Did customers report seal leakage after the update?",
        "Many customers reported seal leakage after the update.",
        (),
        "fail",
    ),
    (
        "few-ok",
        FEW,
        "Did customers report seal leakage after the update?",
        "A few customers reported seal leakage after the update.",
        (),
        "pass",
    ),
    (
        "several-one",
        "One customer reported seal leakage after the update.",
        "Did customers report seal leakage after the update?",
        "Several customers reported seal leakage after the update.",
        (),
        "fail",
    ),
    (
        "each-total",
        "The four bolts carry 40 kN in total.",
        "What load do the bolts carry?",
        "Each of the four bolts carries 40 kN.",
        (),
        "fail",
    ),
    (
        "total-ok",
        "The four bolts carry 40 kN in total.",
        "What load do the bolts carry?",
        "The four bolts carry a total of 40 kN.",
        (),
        "pass",
    ),
    # Time and amount prepositions
    (
        "since-until",
        MAYOR,
        "When did Smith serve as mayor of Springfield?",
        "Smith has served as mayor of Springfield since 1990.",
        (),
        "fail",
    ),
    (
        "from-until",
        MAYOR,
        "When did Smith serve as mayor of Springfield?",
        "Smith served as mayor of Springfield from 1990.",
        (),
        "fail",
    ),
    (
        "until-ok",
        MAYOR,
        "When did Smith serve as mayor of Springfield?",
        "Smith was mayor of Springfield until 1990.",
        (),
        "pass",
    ),
    (
        "within-after",
        "Restart the pump after 10 minutes.",
        "When is the pump restarted?",
        "Restart the pump within 10 minutes.",
        (),
        "fail",
    ),
    (
        "after-ok",
        "Restart the pump after 10 minutes.",
        "When is the pump restarted?",
        "The pump is restarted after 10 minutes.",
        (),
        "pass",
    ),
    (
        "during-before",
        "Check the oil level before starting the engine.",
        "When is the oil level checked?",
        "Check the oil level during starting of the engine.",
        (),
        "fail",
    ),
    (
        "before-ok",
        "Check the oil level before starting the engine.",
        "When is the oil level checked?",
        "The oil level is checked before starting the engine.",
        (),
        "pass",
    ),
    # Verbs that carry the fact, modals
    (
        "neednot-mustnot",
        TRIP,
        "Is the pump restarted after a trip?",
        "The pump need not be restarted after a trip.",
        (),
        "fail",
    ),
    (
        "mustnot-ok",
        TRIP,
        "Is the pump restarted after a trip?",
        "No, the pump must not be restarted after a trip.",
        (),
        "pass",
    ),
    (
        "needed-optional",
        PRIME,
        "Is priming needed before the first start?",
        "Priming the pump is needed before the first start.",
        (),
        "fail",
    ),
    (
        "optional-ok",
        PRIME,
        "Is priming needed before the first start?",
        "No, priming the pump before the first start is optional.",
        (),
        "pass",
    ),
    (
        "made-designed",
        "The HP-220 pump was designed in Germany.",
        "Where was the HP-220 pump designed?",
        "The HP-220 pump was made in Germany.",
        (),
        "fail",
    ),
    (
        "designed-ok",
        "The HP-220 pump was designed in Germany.",
        "Where was the HP-220 pump designed?",
        "The HP-220 pump was designed in Germany.",
        (),
        "pass",
    ),
    (
        "gave-received",
        "Smith received the award from Jones in 1990.",
        "Who received the award in 1990?",
        "Smith gave the award to Jones in 1990.",
        (),
        "fail",
    ),
    (
        "received-ok",
        "Smith received the award from Jones in 1990.",
        "Who received the award in 1990?",
        "Smith received the award in 1990.",
        (),
        "pass",
    ),
    (
        "must-may",
        "The operator may restart the pump after a trip.",
        "Can the operator restart the pump after a trip?",
        "The operator must restart the pump after a trip.",
        (),
        "fail",
    ),
    (
        "may-ok",
        "The operator may restart the pump after a trip.",
        "Can the operator restart the pump after a trip?",
        "Yes, the operator can restart the pump after a trip.",
        (),
        "pass",
    ),
    (
        "must-imperative-ok",
        "Tighten the impeller bolts to 45 Nm.",
        "What are the impeller bolts tightened to?",
        "The impeller bolts must be tightened to 45 Nm.",
        (),
        "pass",
    ),
    # Antonyms named by the source lines
    (
        "heading-open",
        "Close the discharge valve before starting the pump.",
        "What is done with the discharge valve at start-up?",
        "Open the discharge valve before starting the pump.",
        ("3 Start-up", "3.1 Opening and closing the valves"),
        "fail",
    ),
    (
        "heading-close-ok",
        "Close the discharge valve before starting the pump.",
        "What is done with the discharge valve at start-up?",
        "Close the discharge valve before starting the pump.",
        ("3 Start-up", "3.1 Opening and closing the valves"),
        "pass",
    ),
    (
        "heading-before",
        "Replace the seal after the pressure test.",
        "When is the seal replaced?",
        "Replace the seal before the pressure test.",
        ("Checks before and after the pressure test",),
        "fail",
    ),
    (
        "heading-loosen",
        "Tighten the gland nuts to 25 Nm.",
        "What is done with the gland nuts?",
        "Loosen the gland nuts to 25 Nm.",
        ("4 Gland nuts: loosening and tightening",),
        "fail",
    ),
    (
        "heading-tighten-ok",
        "Tighten the gland nuts to 25 Nm.",
        "What is done with the gland nuts?",
        "The gland nuts are tightened to 25 Nm.",
        ("4 Gland nuts: loosening and tightening",),
        "pass",
    ),
    # A negation merged into the wrong clause
    (
        "merged-negation",
        VENT,
        "",
        "The pump has a single drain plug and no pressure gauge.",
        (),
        "fail",
    ),
    (
        "merged-negation-ok",
        VENT,
        "",
        "The pump has a single drain plug and no vent valve.",
        (),
        "pass",
    ),
    (
        "negation-other-clause",
        "The pump has no drain plug, but the housing has a vent valve.",
        "",
        "The housing has no vent valve.",
        (),
        "fail",
    ),
    ("negation-because", WASHER, "", "The cooler fins do not bend easily.", (), "fail"),
    ("negation-because-ok", WASHER, "", "A pressure washer must not be used.", (), "pass"),
    # Derivational collisions
    (
        "tension-ten",
        "Check the belt after ten operating hours.",
        "What is checked after ten operating hours?",
        "Check the belt tension after ten operating hours.",
        (),
        "fail",
    ),
    (
        "department-depart",
        "Trains depart from platform 4 every hour.",
        "Where do trains depart from?",
        "Trains depart from the platform 4 department every hour.",
        (),
        "fail",
    ),
    (
        "inspection-ok",
        "Inspect the impeller for cracks after removal.",
        "When is the impeller inspected?",
        "After removal the impeller gets an inspection for cracks.",
        (),
        "pass",
    ),
    # A name put in another's place, whatever the question
    (
        "name-generic-q",
        FILMS,
        "Tell me about these films.",
        "Son of Flubber was directed by Ron Howard.",
        (),
        "fail",
    ),
    (
        "name-cleft",
        FILMS,
        "In between Splash and Son of Flubber, which one was directed by Ron Howard?",
        "It was Son of Flubber that Ron Howard directed.",
        (),
        "fail",
    ),
    (
        "name-generic-q-ok",
        FILMS,
        "Tell me about these films.",
        "Son of Flubber was directed by Robert Stevenson, and Splash by Ron Howard.",
        (),
        "pass",
    ),
    (
        "name-cleft-ok",
        FILMS,
        "In between Splash and Son of Flubber, which one was directed by Ron Howard?",
        "It was Splash that Ron Howard directed.",
        (),
        "pass",
    ),
    # Initialisms
    (
        "initialism-undefined",
        SURVEY,
        "Summarise the survey.",
        "In 2010 the NSF funded the survey of coastal erosion, which three universities ran.",
        (),
        "fail",
    ),
    (
        "initialism-defined-ok",
        SURVEY.replace("Forces", "Forces (NSF)"),
        "Summarise the survey.",
        "In 2010 the NSF funded the survey of coastal erosion, which three universities ran.",
        (),
        "pass",
    ),
]


def _validate(evidence: str, question: str, answer: str, heading: tuple[str, ...]) -> Any:
    bundle = make_answer_bundle([evidence], question=question, policy=STRICT)
    if heading:
        source = SourceRef(document="Manual", heading_path=heading)
        ev = [e.model_copy(update={"source": source}) for e in bundle.selected_evidence]
        bundle = bundle.model_copy(update={"selected_evidence": ev})
    return validate_text(bundle, answer.rstrip(".") + " [C0].", STRICT)


@pytest.mark.parametrize(
    ("evidence", "question", "answer", "heading", "expect"),
    [pytest.param(*c[1:], id=f"{c[0]}-{c[-1]}") for c in CASES],
)
def test_claim_word_verdict(
    evidence: str, question: str, answer: str, heading: tuple[str, ...], expect: str
) -> None:
    result = _validate(evidence, question, answer, heading)
    verdict = "pass" if result.validation_status == "PASSED" else "fail"
    assert verdict == expect, (answer, result.message)


def test_every_wrong_reply_has_a_control() -> None:
    fails = sum(c[-1] == "fail" for c in CASES)
    assert fails >= 20 and sum(c[-1] == "pass" for c in CASES) >= fails // 2
