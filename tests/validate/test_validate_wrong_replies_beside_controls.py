"""Wrong replies that r5-v5 passed, each beside a correct control (review of r5-v5, r5-v6).

Distributive quantifiers ("each", "every", "per") that turn a total into a per-item figure,
derivations that were only prefix collisions ("portion" / "port", "mission" / "miss"), a colon
relating two things the evidence keeps in different sentences (and a quotation read across an
evidence sentence boundary), and the noun "can" read as a modal. Each `fail` item passed
under r5-v5; each `pass` item is a correct reply over the same evidence and must keep passing.
"""

from __future__ import annotations

import pytest

from citebound.contracts.retrieval import SourceRef
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.validate import validate_text

STRICT = load_policy("strict-v1")

FILMS = (
    "Splash is a 1984 American fantasy romantic comedy film directed by Ron Howard. "
    "Son of Flubber is a 1963 comedy film directed by Robert Stevenson."
)
VALVES = "The inlet valve is made of bronze. The outlet valve is made of steel."
PUMPS = "The plant has two pumps and four impellers."
BOLTS = "The four bolts carry 40 kN together."

# (id, evidence, question, answer, expect); the answer is cited `[C0]` as one sentence.
CASES: list[tuple[str, str, str, str, str]] = [
    # (a) A distributive quantifier is a claim: it makes a total a per-item figure.
    ("each-count", PUMPS, "", "Each pump has four impellers.", "fail"),
    (
        "each-count-q",
        PUMPS,
        "How many impellers are there?",
        "Each pump has four impellers.",
        "fail",
    ),
    ("each-count-ok", PUMPS, "", "The plant has four impellers and two pumps.", "pass"),
    ("each-together", BOLTS, "", "Each bolt carries 40 kN.", "fail"),
    ("each-together-ok", BOLTS, "", "Together the four bolts carry 40 kN.", "pass"),
    (
        "each-combined",
        "The two pumps have four impellers combined.",
        "",
        "Each of the two pumps has four impellers.",
        "fail",
    ),
    (
        "each-combined-ok",
        "The two pumps have four impellers combined.",
        "",
        "Together the two pumps have four impellers.",
        "pass",
    ),
    (
        "every-ok",
        "Every pump has one impeller and two bearings.",
        "",
        "Each pump has two bearings.",
        "pass",
    ),
    (
        "each-unit-ok",
        "Tighten the four flange bolts to 40 Nm.",
        "What torque do the flange bolts need?",
        "Each of the four flange bolts is tightened to 40 Nm.",
        "pass",
    ),
    (
        "per-ok",
        "The kit holds 12 bolts per flange.",
        "",
        "The kit holds 12 bolts for each flange.",
        "pass",
    ),
    (
        "each-apiece-ok",
        "The two pumps have two impellers each.",
        "",
        "Each pump has two impellers.",
        "pass",
    ),
    # (b) A derivation must be one: a short base is a prefix collision ("portion" / "port").
    (
        "portion-port",
        "Plug the drain port during the pressure test.",
        "Which port is plugged during the test?",
        "The drain portion is plugged during the pressure test.",
        "fail",
    ),
    (
        "mission-miss",
        "Operators who miss the weekly test must report it to the supervisor.",
        "What must operators report to the supervisor?",
        "Operators must report the test mission to the supervisor.",
        "fail",
    ),
    (
        "mission-miss-ok",
        "Operators who miss the weekly test must report it to the supervisor.",
        "What must operators report to the supervisor?",
        "Operators must report a missed weekly test to the supervisor.",
        "pass",
    ),
    (
        "port-ok",
        "Plug the drain port during the pressure test.",
        "Which port is plugged during the test?",
        "The drain port is plugged during the pressure test.",
        "pass",
    ),
    (
        "connection-ok",
        "Connect the pressure gauge to the test port before the test.",
        "What is connected before the test?",
        "Before the test, the connection of the pressure gauge to the test port is done.",
        "pass",
    ),
    (
        "inspection-ok",
        "Inspect the impeller for cracks.",
        "What is done with the impeller?",
        "The impeller gets an inspection for cracks.",
        "pass",
    ),
    # (c) A colon relates its two sides; a quotation may not run across an evidence sentence
    # boundary the reply does not have.
    (
        "colon-name",
        FILMS,
        "Which film was directed by Ron Howard?",
        "Directed by Ron Howard: Son of Flubber.",
        "fail",
    ),
    (
        "colon-name-generic",
        FILMS,
        "Tell me about these films.",
        "Directed by Ron Howard: Son of Flubber.",
        "fail",
    ),
    (
        "colon-name-ok",
        FILMS,
        "Which film was directed by Ron Howard?",
        "Directed by Ron Howard: Splash.",
        "pass",
    ),
    (
        "colon-name-other-ok",
        FILMS,
        "Who directed Son of Flubber?",
        "Directed by Robert Stevenson: Son of Flubber.",
        "pass",
    ),
    (
        "colon-part",
        VALVES,
        "What are the valves made of?",
        "Made of bronze: the outlet valve.",
        "fail",
    ),
    (
        "colon-part-q",
        VALVES,
        "What are the valves made of?",
        "Made of steel: the inlet valve.",
        "fail",
    ),
    (
        "colon-part-ok",
        VALVES,
        "What are the valves made of?",
        "Made of steel: the outlet valve.",
        "pass",
    ),
    (
        "semicolon-quote-ok",
        "Close the suction valve; open the vent.",
        "",
        "Close the suction valve; open the vent.",
        "pass",
    ),
    # (d) "can" the noun is no modal.
    (
        "can-noun-ok",
        "Store the paint in a sealed can.",
        "Where is the paint stored?",
        "The paint must be stored in a sealed can.",
        "pass",
    ),
    (
        "oil-can-ok",
        "Fill the oil can with SAE 30 oil.",
        "What goes in the oil can?",
        "The oil can must be filled with SAE 30 oil.",
        "pass",
    ),
    (
        "can-modal",
        "The paint must be stored in a sealed can.",
        "Where is the paint stored?",
        "The paint can be stored in a sealed can.",
        "fail",
    ),
    (
        "can-modal-ok",
        "The paint must be stored in a sealed can.",
        "Where is the paint stored?",
        "The paint must be stored in a sealed can.",
        "pass",
    ),
    (
        "can-modal-must",
        "The operator can restart the pump after a trip.",
        "Can the operator restart the pump after a trip?",
        "The operator must restart the pump after a trip.",
        "fail",
    ),
    (
        "can-modal-must-ok",
        "The operator can restart the pump after a trip.",
        "Can the operator restart the pump after a trip?",
        "Yes, the operator can restart the pump after a trip.",
        "pass",
    ),
    # Final review: "have"/"be" are the bare verbs a modal takes, and a reply may end on its
    # modal; both passed the first r5-v6.
    (
        "may-have-for-must-have",
        "The seal must have a clearance of 2 mm.",
        "",
        "The seal may have a clearance of 2 mm.",
        "fail",
    ),
    (
        "must-have-ok",
        "The seal must have a clearance of 2 mm.",
        "",
        "The seal must have a clearance of 2 mm at all times.",
        "pass",
    ),
    (
        "yes-they-can-over-must-not",
        "The operator must not restart the pump after a trip.",
        "Can the operator restart the pump after a trip?",
        "Yes, they can.",
        "fail",
    ),
    (
        "must-not-ok",
        "The operator must not restart the pump after a trip.",
        "Can the operator restart the pump after a trip?",
        "No, the operator must not restart the pump after a trip.",
        "pass",
    ),
    # Final read-only review of r5-v6 (M1): a one-letter unit ("V", "l", "m") is a unit right
    # after its number; "400 V" read as "400" let "400 kW" through.
    (
        "unit-letter-swap",
        "The motor runs on 400 V and delivers 7 kW.",
        "What does the motor deliver?",
        "The motor delivers 400 kW.",
        "fail",
    ),
    (
        "unit-litre-swap",
        "The tank holds 25 l and the pump delivers 7 kW.",
        "What does the pump deliver?",
        "The pump delivers 25 kW.",
        "fail",
    ),
    (
        "unit-letter-ok",
        "The motor runs on 400 V and delivers 7 kW.",
        "What does the motor deliver?",
        "The motor delivers 7 kW and runs on 400 V.",
        "pass",
    ),
    (
        "unit-spelling-ok",
        "The tank holds 25 l and the pump delivers 7 kW.",
        "",
        "The tank holds 25 litres.",
        "pass",
    ),
    (
        "unit-in-word-ok",
        "Fit the 2 seals in the housing and tighten to 40 Nm.",
        "",
        "Fit the 2 seals in the housing.",
        "pass",
    ),
    # M4: a quantifier gives a count per item only in the evidence sentence holding the count;
    # "each" or "all" elsewhere in the window quantifies another claim.
    (
        "each-other-sentence",
        "Each pump has one impeller. The plant has two pumps and four bearings.",
        "",
        "Each pump has four bearings.",
        "fail",
    ),
    (
        "each-other-sentence-ok",
        "Each pump has one impeller. The plant has two pumps and four bearings.",
        "",
        "Each pump has one impeller.",
        "pass",
    ),
    (
        "all-other-sentence",
        "All pumps are painted grey. The plant has two pumps and four impellers.",
        "",
        "Each pump has four impellers.",
        "fail",
    ),
    (
        "all-other-sentence-ok",
        "All pumps are painted grey. The plant has two pumps and four impellers.",
        "",
        "Both pumps are painted grey.",
        "pass",
    ),
    (
        "each-same-sentence-ok",
        "The plant has two pumps. Each pump has four bearings.",
        "",
        "Each pump has four bearings.",
        "pass",
    ),
    (
        "all-digits-ok",
        "All pumps have 4 impellers. The plant has two pumps.",
        "",
        "Each pump has four impellers.",
        "pass",
    ),
    # M5: a `,` or `;` before a phrase without a verb joins one claim, as the colon does.
    (
        "comma-part",
        VALVES,
        "What are the valves made of?",
        "The outlet valve, made of bronze.",
        "fail",
    ),
    (
        "semicolon-part",
        VALVES,
        "What are the valves made of?",
        "The outlet valve; made of bronze.",
        "fail",
    ),
    (
        "comma-part-ok",
        VALVES,
        "What are the valves made of?",
        "The outlet valve, made of steel.",
        "pass",
    ),
    (
        "comma-clauses-ok",
        VALVES,
        "What are the valves made of?",
        "The inlet valve is made of bronze, and the outlet valve is made of steel.",
        "pass",
    ),
]

# Label lines: a short line ending in ":" is not a claim of its own (`analysis.is_factual`),
# and the lines it introduces are checked without it. Not fixed: joining the label to each item
# (`label item`) made extractive answers quoting an evidence list fail (its intro line and
# items are separate evidence sentences) and counted generic labels ("Materials:", "Steps:")
# as absent words; strict xfails until a list-aware check exists.
LABELS: list[tuple[str, str, str, str, str]] = [
    ("label-name", FILMS, "", "Directed by Ron Howard:\n- Son of Flubber [C0]", "fail"),
    ("label-name-ok", FILMS, "", "Directed by Ron Howard:\n- Splash [C0]", "pass"),
    (
        "label-list-ok",
        VALVES,
        "What are the valves made of?",
        "Materials:\n- The inlet valve is made of bronze [C0].\n- The outlet valve is made of "
        "steel [C0].",
        "pass",
    ),
    (
        "label-part",
        VALVES,
        "What are the valves made of?",
        "Made of steel:\n- the inlet valve [C0]",
        "fail",
    ),
]
LABEL_GAPS = {"label-name", "label-part"}


def _verdict(evidence: str, question: str, text: str) -> tuple[str, str]:
    bundle = make_answer_bundle([evidence], question=question, policy=STRICT)
    source = SourceRef(document="Manual", heading_path=())
    ev = [e.model_copy(update={"source": source}) for e in bundle.selected_evidence]
    result = validate_text(bundle.model_copy(update={"selected_evidence": ev}), text, STRICT)
    return ("pass" if result.validation_status == "PASSED" else "fail"), result.message


@pytest.mark.parametrize(
    ("evidence", "question", "answer", "expect"),
    [pytest.param(*c[1:], id=f"{c[0]}-{c[-1]}") for c in CASES],
)
def test_review_verdict(evidence: str, question: str, answer: str, expect: str) -> None:
    verdict, message = _verdict(evidence, question, answer.rstrip(".") + " [C0].")
    assert verdict == expect, (answer, message)


@pytest.mark.parametrize(
    ("evidence", "question", "text", "expect"),
    [
        pytest.param(
            *c[1:],
            id=f"{c[0]}-{c[-1]}",
            marks=[
                pytest.mark.xfail(reason="a label line is not checked with its items", strict=True)
            ]
            if c[0] in LABEL_GAPS
            else [],
        )
        for c in LABELS
    ],
)
def test_label_lines_carry_their_claim(
    evidence: str, question: str, text: str, expect: str
) -> None:
    verdict, message = _verdict(evidence, question, text)
    assert verdict == expect, (text, message)


# (e) A red-team pass as a held-out grader would write it: LLM-style cited hallucinations over
# passages quoted from the sample corpus (src/citebound/sample_corpus) and F' docs, each beside
# a correct reply. Written before the r5-v6 fixes and run against r5-v5 first; the ones no
# principled cheap rule catches are strict xfails with their reason (docs/validation.md).
DRAIN = (
    "1. Place the drain hose on the drain valve at the bottom of the gearbox.\n"
    "2. Remove the fill plug to let air in.\n"
    "3. Open the drain valve and let the oil drain for at least 20 minutes.\n"
    "4. Take a 100 ml sample from the middle of the drain flow for analysis."
)
MAGNET = (
    "1. Remove the magnetic drain plug GB7-MDP-03.\n"
    "2. Inspect the magnet for metal particles.\n"
    "3. Report to engineering if the magnet carries metal flakes larger than 1 mm.\n"
    "4. Clean the plug and refit it.\n"
    "5. Tighten the magnetic drain plug to 60 Nm."
)
GREASE = (
    "Regrease each bearing with 15 g of NLGI 2 lithium complex grease every 2000 operating "
    "hours.\nDo not overgrease, because excess grease raises the bearing temperature."
)
TEMPERATURE = (
    "The normal bearing temperature is between 50 °C and 70 °C.\n"
    "The bearing temperature alarm is set at 80 °C.\n"
    "The bearing temperature trip is set at 90 °C and is executed by the ESD-3 emergency "
    "shutdown panel."
)
RATED = (
    "The HP-220 delivers a rated flow of 220 m³/h at a differential head of 48 m.\n"
    "The pump runs at 2950 rpm and is driven by a 55 kW electric motor.\n"
    "The maximum allowable casing pressure is 16 bar."
)
CHECKS = (
    "1. Confirm that the suction valve is fully open.\n"
    "2. Confirm that the discharge valve is open by about 10 percent.\n"
    "3. Confirm that the seal flush line is open and that flush pressure is 1.0 bar above the "
    "seal chamber pressure.\n"
    "4. Vent the casing through the vent valve on top of the volute until only water comes out."
)
RATE_GROUP = (
    "The RateGroupDriver Component is used to take a single system tick and distribute it to "
    "multiple rate groups in a system.\nIt takes the input `Svc::Sched` port, then divides down "
    "the tick rate based on arguments to the constructor.\nTypically, the output ports would be "
    "connected to the asynchronous inputs of an `ActiveRateGroup`."
)
BUFFERS = (
    "`BufferManager` is a passive ISF component.\nIt allocates a set of fixed-sized buffers as "
    "specified by the user. The overall memory for the buffers is allocated by a memory "
    "allocator provided to the component at runtime."
)
# Recombination: every word in the evidence, two of its sentences joined into a claim neither
# makes, in a sentence that does not restate the question. The relation signals (scattered
# words, name swaps) act on replies restating the question or on multi-word names; applied to
# every sentence they cost right summaries (docs/validation.md, "r5-v6").
RECOMBINED = "sentences of the evidence recombined into a claim it does not make, no echo"
RED_TEAM: list[tuple[str, str, str, str, str]] = [
    ("order-before", DRAIN, "", "Open the drain valve before removing the fill plug.", "fail"),
    ("order-after", DRAIN, "", "The fill plug is removed after the drain valve is opened.", "fail"),
    (
        "order-steps",
        MAGNET,
        "",
        "Tighten the magnetic drain plug to 60 Nm before inspecting the magnet.",
        "fail",
    ),
    (
        "order-ok",
        DRAIN,
        "",
        "Remove the fill plug to let air in, then open the drain valve.",
        "pass",
    ),
    (
        "order-before-ok",
        MAGNET,
        "",
        "Inspect the magnet for metal particles before the plug is cleaned and refitted.",
        "pass",
    ),
    ("at-most", DRAIN, "", "Let the oil drain for at most 20 minutes.", "fail"),
    ("at-least-ok", DRAIN, "", "The oil must drain for at least 20 minutes.", "pass"),
    (
        "lowers",
        GREASE,
        "Why not overgrease?",
        "Excess grease lowers the bearing temperature.",
        "fail",
    ),
    (
        "raises-ok",
        GREASE,
        "Why not overgrease?",
        "Excess grease raises the bearing temperature.",
        "pass",
    ),
    (
        "range-above",
        TEMPERATURE,
        "What is the normal HP-220 bearing temperature?",
        "The normal bearing temperature is above 70 °C.",
        "fail",
    ),
    (
        "range-ok",
        TEMPERATURE,
        "What is the normal HP-220 bearing temperature?",
        "The bearing temperature is normally between 50 °C and 70 °C.",
        "pass",
    ),
    (
        "compare",
        TEMPERATURE,
        "",
        "The bearing temperature alarm is set higher than the trip.",
        "fail",
    ),
    (
        "compare-above-ok",
        CHECKS,
        "",
        "The flush pressure must be 1.0 bar higher than the seal chamber pressure.",
        "pass",
    ),
    (
        "compare-derived-ok",
        TEMPERATURE,
        "",
        "The bearing temperature trip is set at 90 °C, more than the alarm's 80 °C.",
        "pass",
    ),
    (
        "unit-swap",
        RATED,
        "",
        "The pump runs at 55 rpm and is driven by a 2950 kW electric motor.",
        "fail",
    ),
    ("unit-ok", RATED, "", "The pump runs at 2950 rpm and is driven by a 55 kW motor.", "pass"),
    ("multiplies", RATE_GROUP, "", "The RateGroupDriver multiplies the tick rate.", "fail"),
    ("divides-ok", RATE_GROUP, "", "The RateGroupDriver divides down the tick rate.", "pass"),
    (
        "prefix-antonym",
        RATE_GROUP,
        "",
        "The output ports are connected to the synchronous inputs of an ActiveRateGroup.",
        "fail",
    ),
    ("active", BUFFERS, "", "BufferManager is an active ISF component.", "fail"),
    ("passive-ok", BUFFERS, "", "BufferManager is a passive ISF component.", "pass"),
    (
        "attribution",
        TEMPERATURE,
        "",
        "The bearing temperature alarm is executed by the ESD-3 emergency shutdown panel.",
        "fail",
    ),
    ("part-swap", RATED, "", "The maximum allowable differential head is 16 bar.", "fail"),
    ("component", CHECKS, "", "Confirm that the discharge valve is fully open.", "fail"),
    (
        "component-step",
        CHECKS,
        "",
        "Vent the casing through the seal flush line until only water comes out.",
        "fail",
    ),
    (
        "one-word",
        BUFFERS,
        "",
        "The memory for the buffers is allocated by the user at compile time.",
        "fail",
    ),
]
RED_TEAM_GAPS = {
    "attribution": RECOMBINED,
    "part-swap": RECOMBINED,
    "component": RECOMBINED,
    "component-step": RECOMBINED,
    "compare-derived-ok": "a comparison the evidence does not state is rejected, even one "
    "its numbers imply (fail closed: the check does not do arithmetic)",
    "one-word": "one content word in ten ('compile') is the paraphrase tolerance summaries need",
}


@pytest.mark.parametrize(
    ("evidence", "question", "answer", "expect"),
    [
        pytest.param(
            *c[1:],
            id=f"{c[0]}-{c[-1]}",
            marks=[pytest.mark.xfail(reason=RED_TEAM_GAPS[c[0]], strict=True)]
            if c[0] in RED_TEAM_GAPS
            else [],
        )
        for c in RED_TEAM
    ],
)
def test_red_team_verdict(evidence: str, question: str, answer: str, expect: str) -> None:
    verdict, message = _verdict(evidence, question, answer.rstrip(".") + " [C0].")
    assert verdict == expect, (answer, message)


def test_latinate_derivations_need_a_stem_of_their_own() -> None:
    from citebound.validate.evidence import derived_base

    assert [derived_base(w) for w in ("inspection", "connection", "replacement")] == [
        "inspect",
        "connect",
        "replace",
    ]
    assert [derived_base(w) for w in ("portion", "mission", "station", "tension")] == [""] * 4


def test_modals_leave_the_noun_can_aside() -> None:
    from citebound.validate.polarity import modals

    assert modals("The paint can be stored in a sealed can.") == {"can"}
    assert modals("Store the paint in a sealed can.") == frozenset()
    assert modals("The oil can must be refilled.") == {"must"}
    assert modals("The operator may restart the pump in May.") == {"may"}


def test_a_count_per_item_needs_a_distributive_word() -> None:
    from citebound.validate.polarity import item_counts

    assert item_counts("Each pump has four impellers.") == {"4"}
    assert item_counts("The kit holds 12 bolts for each flange.") == {"12"}
    assert item_counts("Each of the four bolts is tightened to 40 Nm.") == frozenset()
    assert item_counts("Change the oil every 500 hours.") == frozenset()
    assert item_counts("The plant has two pumps.") == frozenset()


def test_unit_swaps_trade_units_between_numbers() -> None:
    from citebound.validate.evidence import index_evidence
    from citebound.validate.swap import span_tokens, unit_swaps

    index = index_evidence("The pump runs at 2950 rpm and is driven by a 55 kW motor.", 6)
    assert unit_swaps("It runs at 55 rpm.", index) == ("55 rpm>55 kw",)
    assert unit_swaps("It runs at 2950 rpm with a 55 kW motor.", index) == ()
    litres = index_evidence("Fill 18 litres of oil.", 6)
    assert unit_swaps("Fill 18 l of oil.", litres) == ()
    assert unit_swaps("Fill 18 kg of oil.", litres) != ()
    # A stopword unit is one right after its number only; hours and volts are two classes.
    volts = index_evidence("The motor runs on 400 V for 2 h.", 6)
    assert unit_swaps("It runs on 400 kW.", volts) == ("400 kw>400 v",)
    assert unit_swaps("It runs on 400 volts for 2 hours.", volts) == ()
    assert unit_swaps("It runs on 2 volts.", volts) == ("2 v>2 h",)
    assert ("in", "unit") not in span_tokens("Put it in the tank.")
    assert ("in", "unit") in span_tokens("The pipe is 12 in long.")


def test_item_counts_skip_code_digits() -> None:
    from citebound.validate.polarity import item_counts

    assert item_counts("Each pump has four impellers.") == {"4"}
    assert item_counts("Replace filter CX9-OF-150 at each oil change.") == frozenset()


def test_quotations_stop_at_evidence_sentence_ends() -> None:
    from citebound.validate.support import is_quotation

    assert not is_quotation("Directed by Ron Howard: Son of Flubber", FILMS)
    assert is_quotation("directed by Ron Howard", FILMS)
    assert is_quotation("Close the valve; open the vent.", "Close the valve; open the vent.")
    assert is_quotation("Pump: on; off", "| Pump | on | off |")


def test_plural_gerund_nouns_meet_their_singular() -> None:
    from citebound.validate.evidence import lemma

    for singular in ("bearing", "shooting", "spring", "ceiling", "thing", "ring"):
        assert lemma(singular + "s") == lemma(singular), singular


def test_a_decade_matches_its_other_spelling_not_a_year_of_it() -> None:
    from citebound.text.identifiers import present_in

    assert present_in("40s", "a dancer in the 1930s and 1940s")
    assert present_in("1950s", "the suburban boom of the '50s")
    assert not present_in("1970s", "In 1970, he began broadcasting")
    assert not present_in("50s", "the 1960s")


def test_commas_split_clauses_only_before_a_clause() -> None:
    from citebound.validate.wording import clauses

    assert len(clauses("The outlet valve, made of bronze.")) == 1
    assert len(clauses("The outlet valve; made of bronze.")) == 1
    assert "the ring is replaced." in [
        c.strip() for c in clauses("The seal is worn, and the ring is replaced.")
    ]
    assert len(clauses("After sliding the impeller on, tighten the bolts.")) == 2
    # Quoted table cells: a ';' after a sentence end starts another cell.
    assert len(clauses("KEY: The size of the array.; 500; Positive integer")) == 2


GAPS = LABEL_GAPS | set(RED_TEAM_GAPS)
WRONG = [c for c in CASES + LABELS + RED_TEAM if c[-1] == "fail"]


@pytest.mark.parametrize("case", WRONG, ids=[c[0] for c in WRONG])
def test_every_wrong_reply_has_a_control(case: tuple[str, str, str, str, str]) -> None:
    """Beside each wrong reply, a correct one over the same evidence that passes (no known gap):
    the rule that rejects the wrong reply is shown not to reject its evidence."""
    controls = [
        c[0]
        for c in CASES + LABELS + RED_TEAM
        if c[-1] == "pass" and c[1] == case[1] and c[0] not in GAPS
    ]
    assert controls, f"{case[0]}: no correct reply over the same evidence"
