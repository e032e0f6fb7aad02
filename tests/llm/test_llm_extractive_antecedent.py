"""A lead that points back brings the sentence it points at; "What is X in Y?" defines X.

Issue #15, F´ set 6 (blind): "It allows ... early returns should be guaranteed to release the
lock." answered without naming LockGuard; "The Hub pattern is a way to ..." answered "What is a
hub in the hub pattern?". Each rule is checked against the sentence it must (not) pick.
"""

from __future__ import annotations

import pytest
from llm_helpers import fast_policy, make_bundle

from citebound.contracts.retrieval import SourceRef
from citebound.llm import ExtractiveProvider
from citebound.llm.extractive.candidates import Candidate
from citebound.llm.extractive.following import antecedent
from citebound.text.subject import defines, subject_in_setting

REFUSAL = fast_policy().refusal.model_text


def cand(pos: int, text: str, shared: frozenset[str], *, line: int = 0) -> Candidate:
    return Candidate(0, line, pos, text, "C0", "prose", False, pos == 0, shared, frozenset())


def test_a_lead_that_points_back_brings_its_antecedent() -> None:
    text = (
        "LockGuard keeps a mutex locked for the whole scope. It makes early returns release "
        "the mutex without an explicit unlock call."
    )
    answer = ExtractiveProvider().answer(
        make_bundle([text], "How do I make sure early returns release the mutex?"), REFUSAL
    )
    assert answer.startswith("LockGuard keeps a mutex locked for the whole scope. [C0]")
    assert "It makes early returns release the mutex" in answer


def test_antecedent_rules() -> None:
    first = cand(0, "LockGuard keeps a mutex locked.", frozenset({"mutex"}))
    lead = cand(1, "It releases the mutex on return.", frozenset({"mutex", "return"}))
    assert antecedent(lead, [first, lead]) == first
    # Control: a lead naming its own subject needs nothing before it.
    named = cand(1, "LockGuard releases the mutex on return.", frozenset({"mutex"}))
    assert antecedent(named, [first, named]) is None
    # Control: a sentence before it that speaks of nothing asked would pad the answer.
    unrelated = cand(0, "The class was added in 2019.", frozenset())
    assert antecedent(lead, [unrelated, lead]) is None
    # Control: the first sentence of a paragraph points past what a quote can bring along.
    opening = cand(0, "It releases the mutex on return.", frozenset({"mutex"}), line=2)
    assert antecedent(opening, [first, opening]) is None


def test_the_subject_of_what_is_x_in_y_is_x() -> None:
    subject, setting = subject_in_setting("What is a hub in the hub pattern?")
    assert (sorted(subject), sorted(setting)) == (["hub"], ["pattern"])
    # Control: no setting, the subject is the whole X; "in F´" adds no term (one letter).
    queued, none = subject_in_setting("What is a queued component?")
    assert len(queued) == 2 and not none
    assert subject_in_setting("What is a topology in F´?") == (frozenset({"topology"}), frozenset())
    assert subject_in_setting("How do I add a hub?") == (frozenset(), frozenset())
    assert defines(subject, "A hub is a component with serialization ports.", 2, setting)
    assert not defines(subject, "The Hub pattern is a way to distribute apps.", 2, setting)
    # Control: without the setting, the pattern's sentence counts as defining the hub.
    assert defines(subject, "The Hub pattern is a way to distribute apps.", 2)


def test_what_is_x_in_y_is_answered_by_the_definition_of_x() -> None:
    text = (
        "The Hub pattern is a way to distribute applications across barriers.\n\n"
        "A hub is a component with multiple serialization input and output ports."
    )
    answer = ExtractiveProvider().answer(
        make_bundle([text], "What is a hub in the hub pattern?"), REFUSAL
    )
    assert "A hub is a component with multiple serialization input and output ports." in answer
    # Control: asked about the pattern, the pattern's definition leads.
    pattern = ExtractiveProvider().answer(make_bundle([text], "What is the hub pattern?"), REFUSAL)
    assert pattern.startswith("The Hub pattern is a way to distribute")


@pytest.mark.parametrize(
    ("question", "texts"),
    [
        (
            "What is the drop in pressure across the filter?",
            [
                "The drop in pressure across the filter is 0.3 bar when clean.",
                "A drop is shown on the panel after the filter alarm.",
            ],
        ),
        (
            "What is the change in torque after the service?",
            [
                "The change in torque after the service is below 5 Nm.",
                "A change is logged after the service by the technician.",
            ],
        ),
    ],
)
def test_in_after_a_bare_noun_joins_one_noun_phrase(question: str, texts: list[str]) -> None:
    """Review of #15: "the drop in pressure" is one subject, not X="drop" in the setting
    "pressure", so the sentence about the whole phrase leads."""
    assert subject_in_setting(question)[1] == frozenset()
    answer = ExtractiveProvider().answer(make_bundle(texts, question), REFUSAL)
    assert answer.startswith(texts[0])


def test_a_setting_opens_with_a_determiner_or_a_name() -> None:
    for question in (
        "What is a port in FPP?",
        "What is a component in `Svc::ComStub`?",
        "What is a hub in this pattern?",
    ):
        subject, setting = subject_in_setting(question)
        assert subject and setting, question
    # Control: a bare lower-case noun after "in" is no setting.
    assert subject_in_setting("What is the increase in speed?")[1] == frozenset()


def _titled(texts: list[str], question: str, paths: list[tuple[str, ...]]) -> str:
    bundle = make_bundle(texts, question)
    evidence = [
        e.model_copy(update={"source": SourceRef(document=h[0], heading_path=h)})
        for e, h in zip(bundle.selected_evidence, paths, strict=True)
    ]
    bundle = bundle.model_copy(update={"selected_evidence": evidence})
    return ExtractiveProvider().answer(bundle, REFUSAL)


def test_a_documents_opening_sentence_takes_its_subject_from_the_title() -> None:
    texts = [
        "# components::Relay\n\nDispatches valve commands to available actuators.",
        "| Name | Meaning |\n|---|---|\n| RelayPorts | Number of ports the Relay component uses |",
    ]
    paths = [("components::Relay",), ("Config",)]
    answer = _titled(texts, "What does the Relay component do?", paths)
    assert answer.startswith("Dispatches valve commands to available actuators. [C0]")
    # Control: the same sentence under a section heading (not the document's opening) has no
    # subject, shares no question term and is never quoted.
    texts[0] = "## Usage\n\nDispatches valve commands to available actuators."
    other = _titled(texts, "What does the Relay component do?", [("Relay", "Usage"), ("Config",)])
    assert "Dispatches valve commands" not in other
