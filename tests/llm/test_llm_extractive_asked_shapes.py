"""Question shapes the relation parser of llm/extractive/asked.py misread (adversarial review of
extractive-v12): each absent-attribute question below was answered with a sentence about the
item that says nothing of what is asked, because `scope` read no relation (the rule stayed out)
or read the item's own words as the relation (every sentence about the item "held" it).

Each test has its control: the rule off answers (so the rule is what refuses), and the same
shape is answered when a sentence states what is asked.
"""

from __future__ import annotations

import pytest
from llm_helpers import check_answer, make_bundle

from citebound.llm import ExtractiveProvider
from citebound.llm.extractive.asked import fills, related, scope
from citebound.policy import load_policy

REFUSAL = load_policy("strict-v1").refusal.model_text

# A fan the documents describe without saying who designed it, when, where or what it weighs.
FAN = [
    "The VT-40 cooling tower fan has six blades and is driven by a 30 kW motor. The VT-40 "
    "cooling tower fan was installed on the roof of building 4.",
    "Inspect the VT-40 cooling tower fan gearbox oil level weekly. The VT-40 fan blades are made "
    "of fibreglass.",
]
STATED = "The VT-40 cooling tower fan was designed by Hanna Berg at Vantor in 2016."


def _answer(question: str, texts: list[str], **overrides: object) -> str:
    bundle = make_bundle(texts, question)
    answer = ExtractiveProvider(**overrides).answer(bundle, REFUSAL)
    assert check_answer(answer, bundle, REFUSAL) == []
    return answer


def _refused_by_the_rule(question: str, texts: list[str] = FAN) -> None:
    assert _answer(question, texts) == REFUSAL
    assert _answer(question, texts, asked_scope=False) != REFUSAL  # the rule is what refuses


# "Who was X designed by?", "Who is X's designer?": the item's words are not the relation.
ITEM_SHAPES = [
    ("Who was the VT-40 cooling tower fan designed by?", "Hanna Berg"),
    ("Who is the VT-40 cooling tower fan's designer?", "Hanna Berg"),
]


@pytest.mark.parametrize(("question", "fact"), ITEM_SHAPES)
def test_the_item_is_not_the_relation(question: str, fact: str) -> None:
    relation = scope(question)
    assert relation is not None and not relation.relation & {"fan", "cool", "tower"}
    _refused_by_the_rule(question)
    assert fact in _answer(question, [*FAN, STATED])


# A preposition before the wh-word ("In what year ...", "By whom ..."): the rule stayed out.
FRONTED = [
    ("By whom was the VT-40 cooling tower fan designed?", "Hanna Berg"),
    ("In which country was the VT-40 cooling tower fan designed?", "Vantor"),
]


@pytest.mark.parametrize(("question", "fact"), FRONTED)
def test_a_preposition_before_the_wh_word(question: str, fact: str) -> None:
    relation = scope(question)
    assert relation is not None and relation.relation == {"design"}
    _refused_by_the_rule(question)
    assert fact in _answer(question, [*FAN, STATED])
    in_year = scope("In what year was the VT-40 cooling tower fan designed?")
    assert in_year is not None and in_year.relation == {"design"} and in_year.kind == "date"


# A question in title case or capitals: its last word's capital is no object's name.
CASED = [
    "When Was The VT-40 Cooling Tower Fan Designed?",
    "WHEN WAS THE VT-40 COOLING TOWER FAN DESIGNED?",
    "Where Was The VT-40 Cooling Tower Fan Designed?",
]


@pytest.mark.parametrize("question", CASED)
def test_a_question_in_title_case_or_capitals(question: str) -> None:
    relation = scope(question)
    assert relation is not None and relation.relation == {"design"}
    # No sentence of the fan's says where or when it was designed, none holds "design".
    assert _answer(question, FAN[1:]) == REFUSAL
    assert _answer(question, FAN[1:], asked_scope=False) != REFUSAL


def test_a_capitalised_object_still_ends_a_cased_question() -> None:
    # Mixed case: the capitalised last word is the object, as before.
    assert scope("When did the European Anti-Fraud Office investigate John Dalli?") is None


# "When did they install X?": the last word is the object (the item), the verb comes before it.
DO_SHAPES = [
    ("Where did they design the VT-40 cooling tower fan?", "Vantor"),
    ("Who did the plant hire to design the VT-40 cooling tower fan?", "Hanna Berg"),
    ("Where did the vendor design the VT-40 cooling tower fan?", "Vantor"),
]


@pytest.mark.parametrize(("question", "fact"), DO_SHAPES)
def test_the_verb_of_a_do_question_is_not_its_object(question: str, fact: str) -> None:
    relation = scope(question)
    assert relation is not None and not relation.relation & {"fan", "cool", "tower"}
    _refused_by_the_rule(question)
    assert fact in _answer(question, [*FAN, STATED])


def test_a_do_question_ending_on_its_verb_is_read_as_before() -> None:
    cost = scope("How much did the Mars Helicopter Ingenuity cost?")
    assert cost is not None and cost.relation == {"cost"}
    ended = scope("When did the war end in the northern region?")
    assert ended is not None and ended.relation == {"region"}  # unchanged: not a verb slot


def test_a_contracted_wh_word() -> None:
    question = "Who's the designer of the VT-40 cooling tower fan?"
    relation = scope(question)
    assert relation is not None and relation.relation == {"designer"}
    _refused_by_the_rule(question)
    assert "Hanna Berg" in _answer(question, [*FAN, STATED])


# "How heavy / old / tall is X?" asks a number and names its measure: the rule stayed out.
def test_how_and_a_measure() -> None:
    question = "How heavy is the VT-40 cooling tower fan?"
    relation = scope(question)
    assert relation is not None and relation.kind == "number"
    assert _answer(question, FAN[1:]) == REFUSAL
    assert _answer(question, FAN[1:], asked_scope=False) != REFUSAL
    weighed = [*FAN[1:], "The VT-40 cooling tower fan weighs 820 kg."]
    assert "820 kg" in _answer(question, weighed)


def test_the_colour_of() -> None:
    question = "What is the colour of the VT-40 fan blades?"
    relation = scope(question)
    assert relation is not None and relation.kind == "colour"
    _refused_by_the_rule(question)
    painted = [*FAN, "The VT-40 fan blades are painted safety yellow."]
    assert "safety yellow" in _answer(question, painted)


# "Which vendor / supplier / manufacturer ...?" asks for a name the kinds did not list.
SUPPLIED = [
    "Which vendor designed the VT-40 cooling tower fan?",
    "Which manufacturer designed the VT-40 cooling tower fan?",
]


@pytest.mark.parametrize("question", SUPPLIED)
def test_which_vendor(question: str) -> None:
    relation = scope(question)
    assert relation is not None and relation.kind == "name"
    _refused_by_the_rule(question)
    assert "Vantor" in _answer(question, [*FAN, STATED])


def test_a_latinate_form_of_the_relation() -> None:
    # "maintain" ~ "maintenance": neither spelling starts the other, yet the sentence says who.
    question = "Who maintains the VT-40 cooling tower fan?"
    texts = [
        *FAN,
        "The utilities team is responsible for maintenance of the VT-40 cooling tower fan.",
    ]
    assert "utilities team" in _answer(question, texts)
    assert related(frozenset({"decid"}), frozenset({"decision"}))
    assert related(frozenset({"receiv"}), frozenset({"reception"}))
    assert not related(frozenset({"install"}), frozenset({"instanc"}))
    assert not related(frozenset({"send"}), frozenset({"sensor"}))


def test_who_is_responsible_for() -> None:
    question = "Who is responsible for the VT-40 cooling tower fan?"
    relation = scope(question)
    assert relation is not None and relation.relation == {"responsibl"}
    _refused_by_the_rule(question)
    duty = [*FAN, "The utilities team is responsible for the VT-40 cooling tower fan."]
    assert "utilities team" in _answer(question, duty)
    maintaining = scope("Who is responsible for maintaining the VT-40 cooling tower fan?")
    assert maintaining is not None and maintaining.relation == {"responsibl", "maintain"}


def test_a_measure_is_no_date() -> None:
    # "30 kW", "six blades", "500 hours" measure or count: none says when ("began in 911" does).
    question = "When was the VT-40 cooling tower fan designed?"
    assert not fills("date", FAN[0].split(". ")[0] + ".", question)
    assert fills("date", "The Duchy began in 911.", "When was the Duchy founded?")
    assert fills("date", "It was designed in 2016.", question)
    measured = [
        "The VT-40 cooling tower fan has six blades and is driven by a 30 kW motor.",
        "Inspect the VT-40 cooling tower fan every 500 hours.",
    ]
    assert _answer(question, measured) == REFUSAL
    assert _answer(question, measured, asked_scope=False) != REFUSAL


def test_a_passive_verb_before_its_complement() -> None:
    # "By whom were the bolts tightened to 30 Nm?": the last word is the complement's.
    question = "By whom were the VT-40 fan blades tightened to 45 Nm?"
    relation = scope(question)
    assert relation is not None and relation.relation == {"tighten"}
    texts = [
        "The VT-40 fan blades had been tightened to 45 Nm before the trial run.",
        "The VT-40 fan blades were checked by Hanna Berg.",
    ]
    assert "tightened" not in _answer(question, texts)
    assert "tightened" in _answer(question, texts, asked_scope=False)
    assert scope("Where is the VT-40 fan blade pitch gauge?") is None  # no verb: the item


def test_a_grade_code_counts_nothing() -> None:
    # "ISO VG 220" names an oil grade, as "Snapdragon 801" names a processor: no price.
    question = "What is the price of the GB-7 gearbox?"
    assert not fills("number", "The GB-7 gearbox uses ISO VG 220 mineral gear oil.", question)
    assert fills("number", "The GB-7 gearbox costs 4,200 EUR.", question)


def test_a_condition_asked_with_when_reads_no_passive() -> None:
    # F´ set 6 k11: a condition, not a date; requiring "considered" or a number would refuse
    # "A buffer is valid if its pointer is set." (the rule stays out, as in v12).
    assert scope("When is an Fw::Buffer considered valid?") is None
