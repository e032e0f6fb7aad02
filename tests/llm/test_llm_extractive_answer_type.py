"""extractive-v10 answer types: what a who / when / where / how-many question expects, whether
a sentence carries it (not already in the question), and how the answerer uses it: a score
signal, a date / number follower and an antecedent for a lead that points back. Each rule has
a control where it must not fire."""

from __future__ import annotations

import pytest
from llm_helpers import fast_policy, make_bundle

from citebound.cli.demo import padded_sentences
from citebound.llm import ExtractiveProvider
from citebound.llm.extractive.answer_type import asked, carries, completion, expected
from citebound.llm.extractive.candidates import Candidate
from citebound.text.terms import terms

REFUSAL = fast_policy().refusal.model_text
POLICY = fast_policy().answerer
# asked_scope (asked.py) off too: it drops a sentence that says nothing of who ruled.
OFF = {"answer_types": (), "answer_type_firm": (), "asked_scope": False}


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Who ruled Cyprus in 1191?", "person"),
        ("The freedom to provide services applies to who?", "person"),
        ("Which president ended the speed limit?", "person"),
        ("When did Dyrrachium fall to the Normans?", "date"),
        ("In what year was the Maastricht treaty signed?", "date"),
        ("How many judges sit on the court?", "number"),
        ("How many years did the siege last?", "number"),  # a count of years, not a date
        ("What percentage of stations ran dry?", "number"),
        ("Where did Harold II die?", "place"),
        ("Which country rationed gasoline?", "place"),
        ("What treaty took the place of the constitutional treaty?", "name"),
        ("What is the name of the alphabet used?", "name"),
        # Controls: no wh-word or head noun that names a kind of answer.
        ("What ruined Richard's plans to reach Acre?", "none"),
        ("What is a queued component?", "none"),
        ("How do I reset the pump?", "none"),
        # "When" opening a clause, not asking for a time.
        ("When American car companies rolled out new cars, which policy ended?", "none"),
    ],
)
def test_expected_kind_from_wh_word_and_head_noun(question: str, kind: str) -> None:
    assert expected(question) == kind


def test_a_name_carries_only_when_the_question_does_not_hold_it() -> None:
    q = "Who ruled Cyprus in 1191?"
    assert carries("person", "He was taken by the island's despot Isaac Komnenos.", q)
    # Control: the only names are the question's own.
    assert not carries("person", "The fleet reached Cyprus in 1191.", q)
    # Control: a capital that only starts the sentence is no name.
    assert not carries("person", "However, the island was ruled by a despot.", q)
    # A name sharing one word with the question is new when most of its words are.
    assert carries("name", "Instead, the Lisbon Treaty was enacted.", "What treaty replaced it?")


def test_a_date_or_number_carries_only_when_the_question_does_not_write_it() -> None:
    q = "When did Richard reach Cyprus in 1191?"
    assert carries("date", "The fleet arrived on 1 May 1191.", q)  # the month is new
    assert not carries("date", "The fleet arrived in 1191.", q)  # control: the question's year
    assert carries("number", "There is one judge from each state, 28 at present.", "How many?")
    assert not carries("number", "The 28 judges sit together.", "Do the 28 judges sit?")
    assert carries("number", "There were twelve of them.", "How many were there?")


def test_a_sentence_with_the_expected_kind_ranks_first() -> None:
    # Same question terms in both; only the second names the ruler.
    text = "Cyprus was ruled harshly in 1191. In 1191 Cyprus was ruled by Isaac Komnenos."
    question = "Who ruled Cyprus in 1191?"
    bundle = make_bundle([text], question)
    assert ExtractiveProvider().choose(bundle, REFUSAL)[0].text.endswith("Isaac Komnenos.")
    # Control: the rule off, the earlier sentence leads (ties go to reading order).
    off = ExtractiveProvider(**OFF).choose(bundle, REFUSAL)
    assert off[0].text == "Cyprus was ruled harshly in 1191."


FLEET = (
    "Richard's fleet left Messina to reach Acre after the winter storms. "
    "Richard's fleet finally arrived there in June 1191. "
    "Acre was a port on the coast."
)


def test_a_lead_without_the_date_takes_the_next_sentence_that_has_it() -> None:
    question = "When did Richard's fleet leave Messina to reach Acre?"
    answer = ExtractiveProvider().answer(make_bundle([FLEET], question), REFUSAL)
    assert "June 1191" in answer
    assert padded_sentences(question, answer) == []  # it shares "fleet": no padding
    # Control: the rule off, the lead stands alone (the follower adds no new question term).
    off = ExtractiveProvider(**OFF).answer(make_bundle([FLEET], question), REFUSAL)
    assert "June 1191" not in off


def test_no_follower_without_the_expected_kind() -> None:
    # Control: a question expecting no kind ("What ...?") and a follower without a date.
    question = "What did Richard's fleet leave Messina to reach?"
    answer = ExtractiveProvider().answer(make_bundle([FLEET], question), REFUSAL)
    assert "June 1191" not in answer
    plain = FLEET.replace(" in June 1191", "")
    dated = ExtractiveProvider().answer(
        make_bundle([plain], "When did Richard's fleet leave Messina to reach Acre?"), REFUSAL
    )
    assert "finally arrived" not in dated


def test_a_lead_with_the_date_takes_no_follower() -> None:
    # Control: the lead already has a year the question lacks: answered, nothing joins.
    text = FLEET.replace("after the winter storms", "in April 1191")
    question = "When did Richard's fleet leave Messina to reach Acre?"
    answer = ExtractiveProvider().answer(make_bundle([text], question), REFUSAL)
    assert "April 1191" in answer and "June 1191" not in answer


COUNCIL = (
    "The European Council is the body of the heads of government of the member states. "
    "It appoints the Commissioners and the board of the central bank."
)


def test_the_answer_type_rules_are_deterministic() -> None:
    question = "When did Richard's fleet leave Messina to reach Acre?"
    bundle = make_bundle([FLEET, COUNCIL], question)
    first = ExtractiveProvider().answer(bundle, REFUSAL)
    assert all(ExtractiveProvider().answer(bundle, REFUSAL) == first for _ in range(3))


def test_a_lead_with_a_firm_kind_takes_no_near_tie() -> None:
    # "In which century ...?" is no quantity question, so the number rule of near-ties does
    # not apply; the lead holds a century the question does not write: it answers.
    question = "In which century did the Normans reach southern Italy?"
    texts = [
        "The Normans first reached southern Italy in the 11th century.",
        "Norman knights reached southern Italy as mercenaries during the 12th century, serving "
        "Lombard princes.",
    ]
    answer = ExtractiveProvider().answer(make_bundle(texts, question), REFUSAL)
    assert answer == "The Normans first reached southern Italy in the 11th century. [C0]"
    # Control: with no firm kinds the near-tie joins (the lexical score cannot separate them).
    loose = ExtractiveProvider(answer_type_firm=()).answer(make_bundle(texts, question), REFUSAL)
    assert "Norman knights" in loose


@pytest.mark.parametrize(
    ("question", "lead", "after"),
    [
        (
            "How long does the self test take?",
            "The self test checks each sensor in turn.",
            "The self test is described in Section 4.2.",
        ),
        (
            "When was the command buffer resized?",
            "The command buffer was resized after the queue overflow incident.",
            "The command buffer now holds 1024 bytes.",
        ),
        (
            "How many sequences can the sequencer hold?",
            "The sequencer loads sequences from files.",
            "Sequences are described in SDD-0012.",
        ),
    ],
)
def test_a_reference_identifier_or_measure_completes_nothing(
    question: str, lead: str, after: str
) -> None:
    """Review of #15: digits that name (a section, a document code) or measure ("1024 bytes")
    are no number or date, so they no longer complete a lead that lacks one."""
    kind = asked(question, POLICY)
    assert (
        completion(kind, _cand(lead, question, 0), _cand(after, question, 1), question, POLICY)
        is None
    )
    # Control: a sentence with a count or a year does complete the lead.
    real = after.rstrip(".") + (" in 2019." if kind == "date" else " and takes 4 minutes.")
    found = completion(kind, _cand(lead, question, 0), _cand(real, question, 1), question, POLICY)
    assert found is not None and found.text == real


def _cand(text: str, question: str, pos: int) -> Candidate:
    return Candidate(
        ev=0,
        line=0,
        pos=pos,
        text=text,
        anchor="C0",
        kind="prose",
        intro=False,
        first=pos == 0,
        shared=terms(text) & terms(question),
        context=frozenset(),
    )


@pytest.mark.parametrize(
    ("kind", "text", "carried"),
    [
        ("number", "It is described in Section 4.2, Figure 3 and Table 2.", False),
        ("number", "Use the x86_64 build of the CD4017 per SDD-0012.", False),
        ("date", "The buffer now holds 1024 bytes.", False),
        ("date", "The seal is replaced every 2000 h.", False),
        # Controls: a count, a year and a decade still carry.
        ("number", "The self test takes 4 minutes.", True),
        ("date", "The buffer was resized in 2019.", True),
        ("date", "It was built in the 1990s in Paris.", True),
        ("date", "It was founded in 1947 in Paris.", True),
        ("date", "Prices rose in the mid-1990s.", True),
    ],
)
def test_digits_that_name_or_measure_carry_no_number_or_date(
    kind: str, text: str, carried: bool
) -> None:
    assert carries(kind, text, "How long or when?") is carried  # type: ignore[arg-type]


def test_port_and_state_ask_for_no_place() -> None:
    assert expected("Which port does the dispatcher use for command responses?") == "none"
    assert expected("Which state is the component in after reset?") == "none"
    assert expected("Which city hosts the agency?") == "place"  # control


def test_a_reference_is_no_number_for_a_quantity_question() -> None:
    """The quantity cue (scoring.py `type_bonus`) counts numbers, not section numbers: the
    reference no longer outranks the sentence before it."""
    question = "How long does the self test take?"
    text = "The self test checks each sensor in turn. The self test is described in Section 4.2."
    answer = ExtractiveProvider().answer(make_bundle([text], question), REFUSAL)
    assert answer.startswith("The self test checks each sensor")
    # Control: a sentence with a real number does lead.
    timed = text.replace("is described in Section 4.2", "takes four minutes")
    answer = ExtractiveProvider().answer(make_bundle([timed], question), REFUSAL)
    assert answer.startswith("The self test takes four minutes.")
